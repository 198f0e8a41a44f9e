"""Measure what a memcached process holds besides what the model derives from its source.

    python scripts/measure_process.py [--memcached PATH]          # the profile's measured constants
    python scripts/measure_process.py --live [--memcached PATH]   # a live server, part by part

Prints the constants of the ``process:`` section of a profile, read off the real server's
``/proc/PID/status``: the program resident at start-up (binary, shared libraries, start-up heap,
one listener), each worker thread (``-t``), each connection structure.  The profile for Debian's
1.6.18 package holds the figures this printed on Debian 12 (glibc 2.36, x86_64).

How: idle servers at -t 1, 2, 4, 8 and 16 (one client connection each) give the program and the
per-thread cost by a least-squares line through VmRSS; 800 idle connections on -t 1 give the
per-connection cost.  The parts the model derives (the client connection's read buffer and response
bundle, its structure) are taken off the program figure.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from memcached_server import MemcachedServer  # noqa: E402

READ_BUFFER = 16384


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def idle(memcached: str | None, threads: int, repeat: int = 3) -> tuple[int, dict]:
    samples = []
    for _ in range(repeat):
        with MemcachedServer(["-m", "64", "-t", str(threads)], memcached=memcached) as srv:
            time.sleep(0.5)
            stats = srv.stats()
            samples.append(rss(srv.pid))
    return min(samples), stats


def live(memcached: str | None) -> None:
    """Start ``-m 512 -t 8 -c 4096``, open 500 connections, store 2 M items of 300 bytes, and print
    VmRSS, the server's own counters and the model's parts side by side."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from memcached_server import server_version

    from slabcalc import configure, load_profile
    from slabcalc.analysis.process import process_memory
    from slabcalc.analysis.report import build_report
    from slabcalc.model.distribution import Item

    flags = ["-m", "512", "-t", "8", "-c", "4096"]
    profile = load_profile(server_version(memcached))
    with MemcachedServer(flags, memcached=memcached) as srv:
        socks = []
        for _ in range(500):
            sock = socket.create_connection(("127.0.0.1", srv.port))
            sock.sendall(b"get nothing\r\n")
            sock.recv(64)
            socks.append(sock)
        with socket.create_connection(("127.0.0.1", srv.port)) as sock:
            payload = b"v" * 300
            for start in range(0, 2_000_000, 5000):
                sock.sendall(b"".join(b"set k%07d 0 0 300 noreply\r\n%s\r\n" % (i, payload)
                                      for i in range(start, start + 5000)))
            sock.sendall(b"mn\r\n")
            reply = b""
            while not reply.endswith(b"MN\r\n"):
                reply += sock.recv(4096)
        time.sleep(6)                      # hash table doublings, once a second each
        stats, slabs = srv.stats(), srv.slab_stats()
        resident = rss(srv.pid)
    settings = configure(profile, flags)      # a full cache: the items -m holds of this mix
    report = build_report(settings, {Item(8, 300, 0, None): 2_000_000}, capacity=True)
    memory = process_memory(report, connections=502)
    print(f"memcached {profile.release} {' '.join(flags)}, 500 idle connections + 1 loader, 2 M items of 300 bytes")
    print(f"{'part':24} {'model':>12} {'server says':>28}")
    said = {"slab pages": f"total_malloced {slabs.totals['total_malloced']}",
            "hash table": f"hash_bytes {stats['hash_bytes']}",
            "connection_structures": f"connection_structures {stats['connection_structures']}",
            "read_buffers": f"read_buf_bytes {stats['read_buf_bytes']}"}
    rows = [("slab pages", memory.slab_bytes), ("hash table", memory.hash_bytes), *memory.runtime]
    for name, size in rows:
        print(f"{name:24} {size:>12} {said.get(name, ''):>28}")
    print(f"{'total':24} {memory.total:>12} {'VmRSS ' + str(resident):>28}")
    print(f"model - VmRSS: {memory.total - resident} bytes ({100 * (memory.total - resident) / resident:+.2f}%); "
          f"-m is {512 * MIB}, the process {resident} ({resident / (512 * MIB):.3f} x -m)")


MIB = 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memcached", default=None)
    parser.add_argument("--live", action="store_true", help="a live server's parts against the model's")
    args = parser.parse_args()
    if args.live:
        live(args.memcached)
        return
    points = []
    for threads in (1, 2, 4, 8, 16):
        value, stats = idle(args.memcached, threads)
        points.append((threads, value))
        print(f"-t {threads:2d}: VmRSS {value} bytes")
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_r = sum(r for _, r in points) / n
    slope = sum((t - mean_t) * (r - mean_r) for t, r in points) / sum((t - mean_t) ** 2 for t, _ in points)
    intercept = mean_r - slope * mean_t
    with MemcachedServer(["-m", "64", "-t", "1", "-c", "4096"], memcached=args.memcached) as srv:
        time.sleep(0.5)
        before = rss(srv.pid)
        socks = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(800)]
        time.sleep(1.0)
        after = rss(srv.pid)
        for sock in socks:
            sock.close()
    conn = round((after - before) / 800)
    program = round(intercept) - 2 * READ_BUFFER - conn
    print(f"thread_bytes: {round(slope)}")
    print(f"conn_bytes: {conn}")
    print(f"program_bytes: {program}   (idle line at -t 0, less one connection and its two buffers)")


if __name__ == "__main__":
    main()
