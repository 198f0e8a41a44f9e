#!/usr/bin/env python3
"""Save readings of a real memcached before, inside and after its automover's window
(tests/data/stats/automover-<version>.json.gz), for tests/analysis/test_automover.py.

    python scripts/capture_automover.py
    SLABCALC_MEMCACHED=/path/to/memcached python scripts/capture_automover.py

The scenario of issue 31: ``-m 16``; 16 000 items of 1 000 bytes fill the node
(class 12); 8 s later ("the shift", t=0) 200-byte items arrive at 2 000 a second,
each key drawn evenly from a set of 60 000 (seeded; 18 pages of class 6 would hold them all).

* ``off``: ``-o slab_automove=0``: readings at t=7 and t=12 (class 6 evicts, class
  12 keeps its pages).
* ``on``: 1.6's defaults (``slab_automove=1``, window 30, ratio 0.8): readings at
  t=-2, 3, 15 and 20 (inside the automover's window: the server is up less than 31 s,
  1.6.18 slab_automove.c:162) and t=25 (has the first page moved
  when the finding at t=20 said?), then, once ``slabs_moved`` has stopped growing for
  20 s (class 12 down to the 2 pages the automover keeps, slab_automove.c:140), two
  readings 5 s apart: the healed node, still evicting, ``-m`` too small.

Each reading is the text ``printf 'version\\nstats\\n...' | nc`` would save (see
tests/calcify.py), keyed ``<scenario>/<seconds after the shift>``; ``times`` gives the
seconds after the shift each was taken at.  It takes about three minutes.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import calcify  # noqa: E402
from memcached_server import MemcachedServer, server_version  # noqa: E402

BIG, BIG_VALUE = 16_000, 1_000
SMALL_KEYS, SMALL_VALUE, RATE = 60_000, 200, 2_000
SETTLE = 8          # seconds between the big items and the shift


class Writer:
    """200-byte sets of keys drawn from SMALL_KEYS at RATE a second, 20 every 10 ms, on their own connection."""

    def __init__(self, port: int):
        self.port, self.stop, self.sent = port, threading.Event(), 0
        self.keys = random.Random(31)
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port)) as conn:
            replies = conn.makefile("rb")
            start = time.monotonic()
            while not self.stop.is_set():
                batch = b"".join(f"set s{self.keys.randrange(SMALL_KEYS):06d} 0 0 {SMALL_VALUE}\r\n".encode()
                                 + b"x" * SMALL_VALUE + b"\r\n" for k in range(20))
                conn.sendall(batch)
                for _ in range(20):
                    assert replies.readline() == b"STORED\r\n"
                self.sent += 20
                ahead = start + self.sent / RATE - time.monotonic()
                if ahead > 0:
                    time.sleep(ahead)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(5)


def loaded(flags: list[str], memcached: str | None) -> MemcachedServer:
    server = MemcachedServer(flags, memcached=memcached)
    server.start()
    server.set_many((f"big{i:06d}" for i in range(BIG)), b"v" * BIG_VALUE)
    server.version()       # the pipelined sets are done once this answers
    return server


def run(flags: list[str], at: list[int], memcached: str | None, heal: bool) -> tuple[dict, dict]:
    texts, times = {}, {}
    server = loaded(flags, memcached)
    try:
        shift = time.monotonic() + SETTLE
        for moment in (m for m in at if m < 0):          # before the shift: no writer yet
            time.sleep(max(0.0, shift + moment - time.monotonic()))
            texts[str(moment)] = calcify.reading(server)
            times[str(moment)] = round(time.monotonic() - shift, 2)
        time.sleep(max(0.0, shift - time.monotonic()))
        with Writer(server.port):
            for moment in (m for m in at if m >= 0):
                time.sleep(max(0.0, shift + moment - time.monotonic()))
                texts[str(moment)] = calcify.reading(server)
                times[str(moment)] = round(time.monotonic() - shift, 2)
            if heal:
                # settled: class 12 down to the 2 pages the automover keeps, and no move for 20 s
                # (a page given to class 6 takes ~10 s to fill: its sets mostly replace held keys)
                last, still = int(server.stats()["slabs_moved"]), time.monotonic()
                deadline = shift + 300
                while time.monotonic() < deadline:
                    time.sleep(1)
                    moved = int(server.stats()["slabs_moved"])
                    if moved != last:
                        last, still = moved, time.monotonic()
                    elif time.monotonic() - still >= 20 and server.slab_stats().per_class[12]["total_pages"] <= 2:
                        break
                else:
                    raise SystemExit("the automover did not settle in 300 s")
                for name, pause in (("healed", 0), ("healed+5", 5)):
                    time.sleep(pause)
                    texts[name] = calcify.reading(server)
                    times[name] = round(time.monotonic() - shift, 2)
    finally:
        server.stop()
    return texts, times


def main() -> int:
    memcached = os.environ.get("SLABCALC_MEMCACHED")
    version = server_version(memcached)
    readings, times = {}, {}
    for scenario, flags, at, heal in (("off", ["-m", "16", "-o", "slab_automove=0"], [7, 12], False),
                                      ("on", ["-m", "16"], [-2, 3, 15, 20, 25], True)):
        texts, when = run(flags, at, memcached, heal)
        for name, text in texts.items():
            readings[f"{scenario}/{name}"] = text
            times[f"{scenario}/{name}"] = when[name]
            print(f"{scenario}/{name} at {when[name]} s", file=sys.stderr)
    out = ROOT / "tests" / "data" / "stats" / f"automover-{version}.json.gz"
    document = {"memcached": version, "big": [BIG, BIG_VALUE], "small": [SMALL_KEYS, SMALL_VALUE, RATE],
                "settle": SETTLE, "times": times, "readings": readings}
    with gzip.open(out, "wt") as f:
        json.dump(document, f, indent=1, sort_keys=True)
    print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
