"""The compiled engine (setup.py: mypyc) against the plain one, the real server and libCacheSim (issue 29).

Prints, for the build this process loads and for the plain source (a child with ``SLABCALC_PURE=1``):

* 500 000 operations at one instant (simulate_bench's mix: 90 % sets, keys from 300 000, values
  log-normal around 500 bytes) from a CSV: the reader alone, and read + simulate (1.6.18 defaults);
  and the same operations into a real memcached over loopback, pipelined: the ratio to it;
* RSS per resident item: a child replays 1 000 000 distinct keys (streamed, -m 1024) and reports its
  peak RSS growth divided by the items resident at the end, beside where an item's bytes go (its
  record, its key, its chunk address when boxed, its share of the hash table; pymalloc rounds each
  object up to 16 bytes);
* one oracleGeneral trace of 500 000 requests (100 000 objects, Zipf 0.8, 100..5000 bytes) replayed by
  libCacheSim's LRU (C, object sizes only, no slab classes) and by ``simulate`` under -m 64: the
  ratio of their times.

CPU seconds (``time.process_time``) are printed beside wall seconds: the machines this runs on are
shared and their wall clock says more about the neighbours than about the code.

Run: python benchmarks/compiled_bench.py [--ops 500000] [--items 1000000] [--requests 500000] [--only rss]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from simulate_bench import replay, workload, write_csv  # noqa: E402

from slabcalc import configure, load_profile  # noqa: E402
from slabcalc.engines.background import background_for  # noqa: E402
from slabcalc.engines.table import START  # noqa: E402
from slabcalc.engines.engine import Engine  # noqa: E402
from slabcalc.engines.keys import key_digest  # noqa: E402
from slabcalc.engines.simulate import SET, engine_build, simulate  # noqa: E402
from slabcalc.inputs.traces import RECORD, read_oracle_general  # noqa: E402
from slabcalc.inputs.workload import read_workload  # noqa: E402


def clocks(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def csv_figures(path: str) -> dict:
    settings = configure(load_profile("1.6.18"), ["-m", "64"])

    def read():
        with open(path, newline="") as f:
            rows, _ = read_workload(f, path)
            return sum(1 for _ in rows)

    def whole():
        with open(path, newline="") as f:
            rows, _ = read_workload(f, path)
            return simulate(settings, rows).totals.evicted

    read_wall, read_cpu, _ = clocks(read)
    wall, cpu, evicted = clocks(whole)
    return {"build": engine_build(), "read": [read_wall, read_cpu], "whole": [wall, cpu], "evicted": evicted}


def rss_figures(items: int, hash_keys: bool = False) -> dict:
    """Peak RSS growth of a replay of ``items`` distinct keys, per item resident at the end (``hash_keys``:
    simulate's, string keys kept as 60-bit hashes)."""
    settings = configure(load_profile("1.6.18"), ["-m", "1024"])
    rng = random.Random(7)
    before = _status("VmRSS")
    ops = ((0.0, SET, f"key:{i:09d}", 13, rng.randrange(50, 300), 0, 0) for i in range(items))
    sim = simulate(settings, ops, hash_keys=hash_keys)
    return {"build": engine_build(), "per_item": (_status("VmHWM") - before) / max(sim.totals.curr_items, 1),
            "items": sim.totals.curr_items, "parts": item_parts(settings, sim.totals.curr_items, hash_keys)}


def item_parts(settings, items: int, hash_keys: bool = False) -> dict:
    """Bytes one resident item costs, by part: its record (``engines.lru.Item``, with the collector's
    header in the plain build), its key when the record holds it (text; an int key is its own hash and
    costs nothing more), its chunk address as an int object (the plain build boxes every field, the
    compiled one holds ints in the record), and its share of the hash table's buckets at ``items``."""
    engine = Engine(settings, background_for(settings))
    key = key_digest("key:000000001") if hash_keys else "key:000000001"
    engine.run([(0.0, SET, key, 13, 100, 0, 0)])
    item = engine.index[key]
    boxed = engine_build() == "plain Python"
    return {"record": _alloc(sys.getsizeof(item)), "key": _alloc(sys.getsizeof(key)) if item.hv < 0 else 0,
            "addr": _alloc(sys.getsizeof(item.addr)) if boxed else 0,
            "index": _buckets(items) * 8 / items, "hashed": hash_keys}


def _buckets(items: int) -> int:
    """The hash table's buckets holding ``items`` (engines/table.py: doubled past 1.5 items a bucket)."""
    size = 1 << START
    while items > size * 3 // 2:
        size *= 2
    return size


def _alloc(size: int) -> int:
    """pymalloc's block for an object of ``size`` bytes (16-byte steps on 64-bit)."""
    return -(-size // 16) * 16


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def oracle_trace(path: str, requests: int, objects: int = 100_000, seed: int = 29) -> None:
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** 0.8 for i in range(objects)]
    ids = rng.choices(range(objects), weights, k=requests)
    sizes = [rng.randrange(100, 5000) for _ in range(objects)]
    with open(path, "wb") as f:
        f.write(b"".join(RECORD.pack(i // 1000, obj + 1, sizes[obj], -1) for i, obj in enumerate(ids)))


def trace_figures(path: str) -> dict:
    settings = configure(load_profile("1.6.18"), ["-m", "64"])

    def run():
        with open(path, "rb") as f:
            ops, _ = read_oracle_general(f, path)
            sim = simulate(settings, ops)
        return sim.totals.hits / max(sim.totals.gets, 1)

    wall, cpu, ratio = clocks(run)
    return {"build": engine_build(), "time": [wall, cpu], "hit_ratio": ratio}


def libcachesim_figures(path: str) -> dict | None:
    try:
        import libcachesim as lcs
    except ImportError:
        return None

    def run():
        reader = lcs.TraceReader(path, trace_type=lcs.TraceType.ORACLE_GENERAL_TRACE)
        return 1 - lcs.LRU(64 << 20).process_trace(reader)[0]

    wall, cpu, ratio = clocks(run)
    return {"time": [wall, cpu], "hit_ratio": ratio}


def both(task: str, *args, fresh: bool = False) -> list[dict]:
    """``task`` here (``fresh``: in a child of the same build, whose peak RSS is its own), then in a child
    running the plain source."""
    mine = _child(task, args, {}) if fresh else json.loads(json.dumps(globals()[task](*args)))
    if mine["build"] == "plain Python":
        return [mine]
    return [mine, _child(task, args, {"SLABCALC_PURE": "1"})]


def _child(task: str, args: tuple, env: dict) -> dict:
    child = subprocess.run([sys.executable, __file__, "--child", json.dumps([task, *args])],
                           env=dict(os.environ, **env), capture_output=True, text=True, check=True)
    return json.loads(child.stdout)


def print_rss(items: int) -> None:
    print(f"RSS per resident item, {items:,} distinct keys of 13 characters, -m 1024 (target: at most 100 B):")
    for r in both("rss_figures", items, fresh=True) + both("rss_figures", items, True, fresh=True):
        p = r["parts"]
        keys = "keys hashed" if p["hashed"] else "keys as text"
        print(f"  {r['build']:17} {keys:12} {r['per_item']:.0f} B per item ({r['items']:,} resident); record "
              f"{p['record']} + key {p['key']} + address {p['addr']} + hash table {p['index']:.0f} = "
              f"{p['record'] + p['key'] + p['addr'] + p['index']:.0f} B")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=500_000)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=500_000)
    parser.add_argument("--only", choices=["rss"], help="only the RSS per resident item")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        task, *rest = json.loads(args.child)
        print(json.dumps(globals()[task](*rest)))
        return
    if args.only == "rss":
        print_rss(args.items)
        return
    from memcached_server import MemcachedServer, find_memcached

    ops = workload(args.ops, 0.0, 3600)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ops.csv")
        write_csv(ops, path)
        runs = both("csv_figures", path)
        memcached = find_memcached()
        real = None
        if memcached:
            with MemcachedServer(["-m", "64"], memcached=memcached) as server:
                real = replay(server, ops)
        print(f"{args.ops:,} operations at one instant, from CSV (wall s / CPU s):")
        for r in runs:
            ratio = f"; memcached pipelined {real:.2f} s: {real / r['whole'][0]:.2f}x its rate" if real else ""
            print(f"  {r['build']:17} read {r['read'][0]:5.2f} / {r['read'][1]:5.2f}   read + simulate "
                  f"{r['whole'][0]:5.2f} / {r['whole'][1]:5.2f}{ratio}  (evicted {r['evicted']:,})")

        print_rss(args.items)

        trace = os.path.join(tmp, "trace.oracleGeneral")
        oracle_trace(trace, args.requests)
        theirs = libcachesim_figures(trace)
        print(f"oracleGeneral, {args.requests:,} requests, -m 64 (wall s / CPU s):")
        if theirs:
            print(f"  libCacheSim LRU   {theirs['time'][0]:5.2f} / {theirs['time'][1]:5.2f}  "
                  f"hit ratio {theirs['hit_ratio']:.4f} (sizes only, no slab classes)")
        for r in both("trace_figures", trace):
            versus = f"  {r['time'][1] / theirs['time'][1]:.1f}x libCacheSim's CPU time" if theirs else ""
            print(f"  {r['build']:17} {r['time'][0]:5.2f} / {r['time'][1]:5.2f}  hit ratio "
                  f"{r['hit_ratio']:.4f}{versus}")


if __name__ == "__main__":
    main()
