"""Error, speed and memory of sampled replays (``simulate --sample``) against full replays.

Part 1, the error.  A workload small enough to replay whole: ``--ops``
operations (5 M by default) over ``--keys`` keys drawn with a Zipf-like skew,
60 % gets and 40 % sets, values log-normal around 8 KB (1 KB to 200 KB, so
many classes), a third of the sets with a TTL of 60 s or 300 s, spread over
``--seconds`` of workload time, under 1.6's defaults (segmented LRU,
maintainer, crawler, ``slab_automove=1``).  It is replayed whole and at each
``--rates`` sample; for each sample the benchmark prints the error of the
scaled evictions and hit ratio against the full replay, the error of the
pages per class (the largest difference, in pages of the node), the time and
the peak RSS of each replay, and the sample's own stated error.

Part 2, ``--node``: a synthetic node of ``--node-items`` resident items
(200 M by default: small items, ``-m`` sized to hold them all plus a tenth),
written by one set each and then read by a tenth as many gets, replayed at a
1 % sample; prints the time and peak RSS (the target: at most 4 GB).  The
operations are generated and filtered on the fly, never held.

Part 3, ``--speed``: what a sample costs against the full replay, through the command line
(``slabcalc simulate FILE -m M [--sample R]``, each run a child process: its CPU time is the
child's user + system time), on files written first: an oracleGeneral trace of issue 39's recipe
(``--requests``, 10 M by default: Zipf 0.9 over ``--objects`` 2 M objects, log-normal sizes
50 B-200 KB, 20 000 requests a second; ids a random permutation) and the same requests as a workload
CSV (each request a ``get``, the first of each object a ``set`` before it).  Targets (issue 39): a 5 %
sample at most a quarter of the full replay's CPU, 1 % at most a fifteenth.

Each replay runs in a child process of its own so its peak RSS is its own.

Run: python benchmarks/sample_bench.py [--ops 5000000] [--rates 0.1,0.01] [--node] [--node-items 200000000]
     python benchmarks/sample_bench.py --speed [--requests 10000000] [--speed-m 2048] [--rates 0.05,0.01]
                                           [--files DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from slabcalc import configure, load_profile
from slabcalc.engines.simulate import GET, SET, simulate

RELEASE = "1.6.18"


def operations(n: int, keys: int, seconds: float, seed: int = 18):
    """``n`` operations of a mixed workload (see the module's text), in time order."""
    rng = random.Random(seed)
    rand, lognorm = rng.random, rng.lognormvariate
    step = seconds / n
    for i in range(n):
        t = round(i * step, 3)
        key = f"user:{int(keys * rand() ** 2.5)}"      # a heavy head, a long tail
        if rand() < 0.6:
            yield (t, GET, key, 0, 0, 0, 0)
        else:
            value = max(1000, min(int(lognorm(9.0, 0.9)), 200_000))
            r = rand()
            yield (t, SET, key, len(key), value, 60 if r < 0.17 else 300 if r < 0.33 else 0, 0)


def node_operations(items: int):
    """``items`` sets of distinct keys over an hour, then ``items // 10`` gets of them."""
    step = 3600 / items
    for i in range(items):
        yield (i * step, SET, f"n{i}", 11, 40, 0, 0)
    rng = random.Random(5)
    for i in range(items // 10):
        yield (3600 + i * 0.001, GET, f"n{rng.randrange(items)}", 11, 0, 0, 0)


def _replay(args: tuple, out) -> None:
    kind, megabytes, rate, params, flags = args
    settings = configure(load_profile(RELEASE), ["-m", str(megabytes), *flags])
    ops = operations(*params) if kind == "mixed" else node_operations(*params)
    start = time.perf_counter()
    sim = simulate(settings, ops, sample=rate)
    seconds = time.perf_counter() - start
    t = sim.totals
    s = sim.sample
    out.send({"seconds": seconds, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
              "evicted": t.evicted, "hits": t.hits, "slabs_moved": t.pages_moved, "reclaimed": t.reclaimed,
              "crawler_reclaimed": t.crawler_reclaimed, "gets": t.gets, "curr_items": t.curr_items,
              "pages": {r.slab_class.id: r.pages for r in sim.classes}, "ops": t.ops,
              "sampled_ops": s.sampled_ops if s else t.ops,
              "stated": None if s is None else [s.hit_ratio_error, s.evicted_error, len(s.coarse_classes)]})


def replay(kind: str, megabytes: int, rate: float | None, params: tuple, flags: tuple = ()) -> dict:
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    child = ctx.Process(target=_replay, args=((kind, megabytes, rate, params, flags), there))
    child.start()
    there.close()
    try:
        result = here.recv()
    except EOFError:
        sys.exit(f"the {kind} replay at {rate} failed (its traceback is above)")
    child.join()
    return result


def recipe(requests: int, objects: int, seed: int = 39, alpha: float = 0.9):
    """Issue 39's trace as numpy arrays: clocks (20 000 requests a second), ids (Zipf ``alpha`` over
    ``objects``, ranks mapped to random 63-bit ids) and sizes (log-normal, 50 B-200 KB, one per object)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / np.arange(1, objects + 1) ** alpha)
    ranks = np.searchsorted(cdf, rng.random(requests) * cdf[-1])
    ids = rng.integers(1, 1 << 63, size=objects, dtype=np.uint64)
    sizes = np.clip(rng.lognormal(7.5, 1.8, size=objects), 50, 200_000).astype(np.uint32)
    clocks = (np.arange(requests, dtype=np.uint64) // 20_000).astype(np.uint32)
    return clocks, ids[ranks], sizes[ranks]


def write_files(directory: str, requests: int, objects: int) -> tuple[str, str]:
    """The recipe as an oracleGeneral file and as a workload CSV (gets; a set before an object's first)."""
    import numpy as np

    from slabcalc.inputs.traces import RECORDS

    clocks, ids, sizes = recipe(requests, objects)
    trace = os.path.join(directory, "recipe.oracleGeneral")
    records = np.zeros(requests, dtype=RECORDS)
    records["clock"], records["obj"], records["size"], records["next"] = clocks, ids, sizes, -1
    records.tofile(trace)
    path = os.path.join(directory, "recipe.csv")
    seen = set()
    with open(path, "w") as f:
        f.write("time,op,key,value_size,ttl\n")
        for start in range(0, requests, 1 << 16):
            lines = []
            for t, obj, size in zip(clocks[start:start + (1 << 16)].tolist(), ids[start:start + (1 << 16)].tolist(),
                                    sizes[start:start + (1 << 16)].tolist()):
                if obj not in seen:
                    seen.add(obj)
                    lines.append(f"{t},set,o{obj},{max(size - 16, 0)},0\n")
                lines.append(f"{t},get,o{obj},0,0\n")
            f.write("".join(lines))
    return trace, path


def cli_run(*args: str) -> dict:
    """``slabcalc simulate ARGS --format json`` in a child: its CPU seconds, wall seconds and document."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "slabcalc", "simulate", *args, "--format", "json"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode == 2:        # refused: a rate too coarse for -m
        return {"refused": done.stderr.strip()}
    if done.returncode:
        sys.exit(f"simulate {' '.join(args)} failed: {done.stderr.strip()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"cpu": cpu, "wall": wall, "rss": after.ru_maxrss * 1024, "doc": json.loads(done.stdout)}


def speed(args) -> dict:
    """Part 3: each file's full replay and samples, ``--repeat`` rounds of paired runs (the full replay,
    then each rate, one after the other), each rate's CPU over its round's full replay; the median of the
    rounds' ratios is the figure (a shared machine's speed drifts between runs: a pair shares its drift)."""
    from slabcalc.engines.simulate import engine_build

    figures = {"build": engine_build()}
    print(f"engine build: {figures['build']}; {args.requests:,} requests, {args.objects:,} objects, "
          f"-m {args.speed_m}, {args.repeat} round(s)", flush=True)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        files = _files(args.files or tmp, args.requests, args.objects)
        for path in files:
            name = "oracleGeneral" if path.endswith("General") else "csv"
            figures[name] = _rounds(path, name, args)
    return figures


def _files(directory: str, requests: int, objects: int) -> tuple[str, str]:
    """The recipe's two files in ``directory``: those written there before (``--files``) or new ones."""
    found = (os.path.join(directory, "recipe.oracleGeneral"), os.path.join(directory, "recipe.csv"))
    if all(os.path.exists(path) for path in found):
        print(f"the files written before in {directory}", flush=True)
        return found
    return write_files(directory, requests, objects)


def _rounds(path: str, name: str, args) -> dict:
    """``args.repeat`` rounds of the full replay and each rate of ``path``; the median ratio of each rate."""
    rates = list(map(float, args.rates.split(",")))
    ratios: dict[str, list[float]] = {str(rate): [] for rate in rates}
    fulls = []
    for _ in range(args.repeat):
        full = cli_run(path, "-m", str(args.speed_m))
        fulls.append(full["cpu"])
        ratio = full["doc"]["totals"]["get_hits"] / max(1, full["doc"]["totals"]["cmd_get"])
        print(f"{name}: full replay {full['cpu']:.1f} s CPU ({full['wall']:.1f} s wall), hit ratio {ratio:.4f}",
              flush=True)
        for rate in rates:
            s = cli_run(path, "-m", str(args.speed_m), "--sample", f"{rate:g}")
            if "refused" in s:
                print(f"  --sample {rate:g}: {s['refused']}", flush=True)
                continue
            sample = s["doc"]["sample"]
            ratios[str(rate)].append(s["cpu"] / full["cpu"])
            print(f"  --sample {rate:g}: {s['cpu']:.2f} s CPU = {s['cpu'] / full['cpu']:.3f} of the full replay "
                  f"(target {'0.25' if rate >= 0.05 else '0.067'}); hit ratio {sample['hit_ratio']:.4f} +/- "
                  f"{sample['hit_ratio_error']:.4f}", flush=True)
    figures: dict = {"full": statistics.median(fulls)}
    for rate, each in ratios.items():
        if each:
            figures[rate] = statistics.median(each)
            print(f"{name} --sample {rate}: median {figures[rate]:.3f} of the full replay over {len(each)} round(s) "
                  f"({min(each):.3f}-{max(each):.3f})", flush=True)
    return figures


def relative(a: float, b: float) -> str:
    return "n/a" if not b else f"{(a - b) / b * 100:+.2f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=5_000_000)
    parser.add_argument("--keys", type=int, default=1_500_000)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("-m", type=int, default=8192, help="the node's -m in megabytes")
    parser.add_argument("--rates", default="0.1,0.01")
    parser.add_argument("--flags", default="", help="more memcached flags, e.g. '-o slab_automove=0'")
    parser.add_argument("--node", action="store_true", help="also replay the synthetic large node (part 2)")
    parser.add_argument("--node-items", type=int, default=200_000_000)
    parser.add_argument("--node-rate", type=float, default=0.01)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object too")
    parser.add_argument("--speed", action="store_true", help="part 3 only: a sample's CPU against the full replay's")
    parser.add_argument("--requests", type=int, default=10_000_000)
    parser.add_argument("--objects", type=int, default=2_000_000)
    parser.add_argument("--speed-m", type=int, default=2048)
    parser.add_argument("--tmp", default=None, help="where part 3 writes its files")
    parser.add_argument("--files", default=None, help="part 3: a folder to keep its files in, or to read them "
                        "from where they were written before")
    parser.add_argument("--repeat", type=int, default=1, help="part 3: rounds of paired runs (the median ratio)")
    args = parser.parse_args()
    if args.speed:
        figures = speed(args)
        if args.json:
            print(json.dumps(figures))
        return
    params = (args.ops, args.keys, args.seconds)
    print(f"memcached {RELEASE} defaults, -m {args.m} {args.flags}; {args.ops} operations over {args.keys} keys, "
          f"{args.seconds:g} s", flush=True)
    flags = tuple(args.flags.split())
    full = replay("mixed", args.m, None, params, flags)
    ratio = full["hits"] / full["gets"]
    print(f"full replay: {full['seconds']:.1f} s ({args.ops / full['seconds']:,.0f} ops/s), peak RSS "
          f"{full['rss'] / 2**20:.0f} MiB; evicted {full['evicted']}, hit ratio {ratio:.4f}, "
          f"{sum(full['pages'].values())} pages, {full['curr_items']} items, {full['slabs_moved']} pages moved, "
          f"reclaimed {full['reclaimed']} + {full['crawler_reclaimed']} by the crawler", flush=True)
    figures = {"full": full}
    for rate in map(float, args.rates.split(",")):
        s = replay("mixed", args.m, rate, params, flags)
        s_ratio = s["hits"] / s["gets"]
        classes = set(full["pages"]) | set(s["pages"])
        worst = max(abs(s["pages"].get(c, 0) - full["pages"].get(c, 0)) for c in classes)
        stated = s["stated"]
        print(f"sample {rate:g}: {s['seconds']:.1f} s, peak RSS {s['rss'] / 2**20:.0f} MiB, "
              f"{s['sampled_ops']} of {s['ops']} ops replayed", flush=True)
        print(f"  evicted {s['evicted']} ({relative(s['evicted'], full['evicted'])}; stated +/- {stated[1]}), "
              f"hit ratio {s_ratio:.4f} ({relative(s_ratio, ratio)}; stated +/- {stated[0]:.4f})")
        print(f"  pages {sum(s['pages'].values())} ({relative(sum(s['pages'].values()), sum(full['pages'].values()))}"
              f"), worst class off by {worst} pages ({stated[2]} classes named coarse), items {s['curr_items']} "
              f"({relative(s['curr_items'], full['curr_items'])}), {s['slabs_moved']} pages moved, reclaimed "
              f"{s['reclaimed']} + {s['crawler_reclaimed']} by the crawler", flush=True)
        figures[str(rate)] = s
    if args.node:
        items = args.node_items
        megabytes = items * 128 * 11 // 10 >> 20     # 40-byte values, 11-byte keys: 96-byte chunks
        print(f"node: {items} items of 40 bytes, -m {megabytes}, at {args.node_rate:g}", flush=True)
        s = replay("node", megabytes, args.node_rate, (items,))
        print(f"  {s['seconds']:.0f} s for {s['ops']} ops ({s['ops'] / s['seconds']:,.0f} ops/s read, "
              f"{s['sampled_ops']} replayed), peak RSS {s['rss'] / 2**30:.2f} GiB; scaled: {s['curr_items']} items, "
              f"evicted {s['evicted']}, hit ratio {s['hits'] / max(1, s['gets']):.4f}", flush=True)
        figures["node"] = s
    if args.json:
        json.dump(figures, sys.stdout, default=str)
        print()


if __name__ == "__main__":
    main()
