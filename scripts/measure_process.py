"""Measure what a memcached process holds besides what the model derives from its source.

    python scripts/measure_process.py [--memcached PATH]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memcached", default=None)
    args = parser.parse_args()
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
