"""Speed and memory of ``slabcalc simulate`` against a real memcached fed the same operations.

Builds 1 M operations (90 % sets, 10 % gets; keys drawn from 300 000; values
log-normal around 500 bytes with a tail to 100 KB; a third of the sets with a
TTL) and prints:

* the engine's time on them (``simulate()`` on a list of operations) and its
  operations per second;
* the same workload end to end from a CSV file (reading included);
* the time a real memcached (same flags, same ``-m``) takes to take the same
  operations over loopback, pipelined, sets with ``noreply``, ending on a
  ``mn`` no-op, and the ratio of the two;
* peak RSS of a process that only builds the operations and simulates them,
  less the same process before it simulates, per item resident at the end;
* the counts of both.

Two modes.  ``--background`` (the default): 1.6's defaults -- segmented LRU,
LRU maintainer, crawler, ``slab_automove=1`` -- with the operations spread
over ``--seconds`` of workload time (5 000 a second by default) and one TTL in
three of 30 s, so the threads have work: the maintainer wakes, the crawler
crawls, items expire.  The real server takes them pipelined, as fast as it
can, so its counts differ (its clock does not follow the workload's); they
are printed, not compared.  ``--compat``: ``-o no_modern`` and friends, every
operation at time 0 and one-hour TTLs: nothing runs in the background, the
engine claims exactness, and the counts must be identical.

Run: python benchmarks/simulate_bench.py [--ops 1000000] [-m 64] [--compat]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from memcached_server import MemcachedServer, find_memcached, server_version  # noqa: E402

from slabcalc import configure, load_profile  # noqa: E402
from slabcalc.engines.simulate import GET, SET, simulate  # noqa: E402
from slabcalc.inputs.workload import read_workload  # noqa: E402
from slabcalc.records.simulate import model_text  # noqa: E402

COMPAT = "no_modern,no_lru_crawler,no_lru_maintainer,no_slab_reassign,slab_automove=0"


def operations(n: int, seconds: float = 0.0, ttl: int = 3600, seed: int = 6):
    """``n`` operations spread evenly over ``seconds`` of workload time (all at 0 when 0)."""
    rng = random.Random(seed)
    rand, randrange, lognorm = rng.random, rng.randrange, rng.lognormvariate
    step = seconds / n
    for i in range(n):
        t = round(i * step, 4)
        key = f"key:{randrange(300_000):06d}"
        if rand() < 0.1:
            yield (t, GET, key, 10, 0, 0, 0)
            continue
        value = min(int(lognorm(6.2, 1.0)), 100_000)
        yield (t, SET, key, 10, value, ttl if rand() < 0.33 else 0, 0)


def workload(n: int, seconds: float = 0.0, ttl: int = 3600, seed: int = 6) -> list[tuple]:
    return list(operations(n, seconds, ttl, seed))


def write_csv(ops: list[tuple], path: str) -> None:
    names = {SET: "set", GET: "get"}
    with open(path, "w") as f:
        f.write("time,op,key,value_size,ttl\n")
        f.writelines(f"{t},{names[op]},{key},{value},{ttl}\n" for t, op, key, _, value, ttl, _ in ops)


def rss_child(argv: list[str], ops_count: int, seconds: float, ttl: int) -> None:
    """In a child process: peak RSS growth of simulate() over the built operations, per resident item."""
    settings = configure(load_profile(argv[0]), argv[1:])
    before = _status("VmRSS")
    sim = simulate(settings, operations(ops_count, seconds, ttl))     # streamed: no list of operations
    print(before, _status("VmHWM"), sim.totals.curr_items)


def _status(field: str) -> int:
    """A /proc/self/status size in bytes (ru_maxrss would carry the parent's peak across exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def replay(server: MemcachedServer, ops: list[tuple]) -> float:
    """Seconds to stream ``ops`` into ``server`` and have it answer the closing no-op."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    done = threading.Event()

    def drain():
        tail = b""
        while True:
            data = sock.recv(1 << 20)
            if not data:
                break
            tail = (tail + data)[-8:]
            if tail.endswith(b"MN\r\n"):
                break
        done.set()

    values: dict[int, bytes] = {}
    batches = []
    batch = []
    for _, op, key, _, size, ttl, _ in ops:
        if op == SET:
            value = values.get(size)
            if value is None:
                value = values[size] = b"v" * size
            batch.append(b"set %s 0 %d %d noreply\r\n%s\r\n" % (key.encode(), ttl, size, value))
        else:
            batch.append(b"get %s\r\n" % key.encode())
        if len(batch) == 2000:
            batches.append(b"".join(batch))
            batch = []
    batches.append(b"".join(batch) + b"mn\r\n")
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    start = time.perf_counter()
    for data in batches:
        sock.sendall(data)
    done.wait()
    elapsed = time.perf_counter() - start
    sock.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("-m", type=int, default=64)
    parser.add_argument("--compat", action="store_true", help="nothing in the background: exact counts")
    parser.add_argument("--seconds", type=float, default=200.0, help="workload time the operations span")
    parser.add_argument("--rss-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seconds, ttl = (0.0, 3600) if args.compat else (args.seconds, 30)
    if args.rss_child:
        rss_child(args.rss_child.split("\t"), args.ops, seconds, ttl)
        return
    memcached = find_memcached()
    release = server_version(memcached) if memcached else "1.6.18"
    argv = ["-m", str(args.m)] + (["-o", COMPAT] if args.compat else [])
    settings = configure(load_profile(release), argv)
    ops = workload(args.ops, seconds, ttl)
    print(f"workload: {len(ops):,} operations over {seconds:g} s of workload time, "
          f"memcached {release} {' '.join(argv)}")

    start, cpu = time.perf_counter(), time.process_time()
    sim = simulate(settings, ops)
    engine, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"simulate (engine):     {engine:6.2f} s  {len(ops) / engine:10,.0f} ops/s"
          f"   (CPU {cpu:.2f} s, {len(ops) / cpu:,.0f} ops/s: other load on the machine slows the wall clock)")
    print(f"  model: {model_text(sim.model)}")
    print(f"  evictions {sim.totals.evicted:,}, reclaimed {sim.totals.reclaimed:,}, crawler_reclaimed "
          f"{sim.totals.crawler_reclaimed:,}, slabs_moved {sim.totals.pages_moved}, items {sim.totals.curr_items:,}")
    child = subprocess.run([sys.executable, __file__, "--ops", str(args.ops), "--seconds", str(args.seconds)]
                           + (["--compat"] if args.compat else []) + ["--rss-child", "\t".join([release, *argv])],
                           capture_output=True, text=True, check=True)
    before, peak, items = map(int, child.stdout.split())
    print(f"peak RSS: {before / 2**20:.0f} MB before, {peak / 2**20:.0f} MB after simulate (operations streamed): "
          f"{(peak - before) / max(items, 1):.0f} bytes per resident item ({items:,} items)")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ops.csv")
        write_csv(ops, path)
        start = time.perf_counter()
        with open(path, newline="") as f:
            rows, _ = read_workload(f, path)
            simulate(settings, rows)
        whole = time.perf_counter() - start
    print(f"simulate (from CSV):   {whole:6.2f} s  {len(ops) / whole:10,.0f} ops/s")

    if memcached is None:
        print("memcached not found: no comparison")
        return
    with MemcachedServer(argv, memcached=memcached) as server:
        real = replay(server, ops)
        stats = server.stats()
        slabs = server.slab_stats().per_class
    print(f"memcached (loopback):  {real:6.2f} s  {len(ops) / real:10,.0f} ops/s")
    print(f"ratio simulate/memcached: {engine / real:.2f} (engine), {whole / real:.2f} (from CSV)")

    mine = {r.slab_class.id: r.pages for r in sim.classes}
    theirs = {cls: row["total_pages"] for cls, row in slabs.items()}
    pairs = [("evictions", sim.totals.evicted, int(stats["evictions"])),
             ("reclaimed", sim.totals.reclaimed, int(stats["reclaimed"])),
             ("curr_items", sim.totals.curr_items, int(stats["curr_items"])),
             ("get_hits", sim.totals.hits, int(stats["get_hits"]))]
    for name, a, b in pairs:
        print(f"  {name:15} simulate {a:>10,}  memcached {b:>10,}")
    print(f"  pages per class identical: {'yes' if mine == theirs else 'NO'} ({sum(mine.values())} pages)")
    if args.compat:
        same = all(a == b for _, a, b in pairs) and mine == theirs
        print(f"identical counts: {'yes' if same else 'NO'}")
    else:
        print("(background mode: the server took the operations pipelined, not on the workload's clock; "
              "its counts are shown, not compared)")


if __name__ == "__main__":
    main()
