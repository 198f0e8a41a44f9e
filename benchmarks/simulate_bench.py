"""Speed of ``slabcalc simulate`` against a real memcached fed the same operations.

Builds 1 M operations (90 % sets, 10 % gets; keys drawn from 300 000; values
log-normal around 500 bytes with a tail to 100 KB; a third of the sets with a
one-hour TTL, which nothing reaches during the run) and prints:

* the engine's time on them (``simulate()`` on a list of operations) and its
  operations per second -- the target of issue 6 is >= 250 000 on one core;
* the same workload end to end from a CSV file (reading included);
* the time a real memcached (``-o no_modern``, same ``-m``) takes to take the
  same operations over loopback, pipelined, sets with ``noreply``, ending on a
  ``mn`` no-op, and the ratio of the two;
* the counts of both -- evictions, items, pages per class -- and whether they
  are identical (the engine claims exactness for this model).

Every operation is at workload time 0 and no TTL expires, so the server's own
clock, which moves on while the operations stream in, changes no count.

Run: python benchmarks/simulate_bench.py [--ops 1000000] [-m 64]
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from memcached_server import MemcachedServer, find_memcached, server_version  # noqa: E402

from slabcalc import configure, load_profile  # noqa: E402
from slabcalc.simulate import GET, SET, lru_mode, simulate  # noqa: E402
from slabcalc.workload import read_workload  # noqa: E402

COMPAT = "no_modern,no_lru_crawler,no_lru_maintainer,no_slab_reassign,slab_automove=0"


def workload(n: int, seed: int = 6) -> list[tuple]:
    rng = random.Random(seed)
    rand, randrange, lognorm = rng.random, rng.randrange, rng.lognormvariate
    ops = []
    append = ops.append
    for _ in range(n):
        key = f"key:{randrange(300_000):06d}"
        if rand() < 0.1:
            append((0.0, GET, key, 10, 0, 0, 0))
            continue
        value = min(int(lognorm(6.2, 1.0)), 100_000)
        append((0.0, SET, key, 10, value, 3600 if rand() < 0.33 else 0, 0))
    return ops


def write_csv(ops: list[tuple], path: str) -> None:
    names = {SET: "set", GET: "get"}
    with open(path, "w") as f:
        f.write("time,op,key,value_size,ttl\n")
        f.writelines(f"0,{names[op]},{key},{value},{ttl}\n" for _, op, key, _, value, ttl, _ in ops)


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
    args = parser.parse_args()
    memcached = find_memcached()
    release = server_version(memcached) if memcached else "1.6.18"
    argv = ["-m", str(args.m), "-o", COMPAT]
    settings = configure(load_profile(release), argv)
    lru = lru_mode(settings, COMPAT.split(","))
    ops = workload(args.ops)
    print(f"workload: {len(ops):,} operations, memcached {release} {' '.join(argv)}")

    start, cpu = time.perf_counter(), time.process_time()
    sim = simulate(settings, ops, lru=lru)
    engine, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"simulate (engine):     {engine:6.2f} s  {len(ops) / engine:10,.0f} ops/s"
          f"   (CPU {cpu:.2f} s, {len(ops) / cpu:,.0f} ops/s: other load on the machine slows the wall clock)")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ops.csv")
        write_csv(ops, path)
        start = time.perf_counter()
        with open(path, newline="") as f:
            rows, _ = read_workload(f, path)
            simulate(settings, rows, lru=lru)
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
    same = all(a == b for _, a, b in pairs) and mine == theirs
    print(f"identical counts: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
