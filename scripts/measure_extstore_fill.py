#!/usr/bin/env python3
"""Measure how many items a real memcached with extstore holds when it first evicts (issue 28 item 2).

    python scripts/measure_extstore_fill.py                  # 40 000 items at 2 000 sets a second
    python scripts/measure_extstore_fill.py 20000 0          # 20 000 items as fast as replies come
    python scripts/measure_extstore_fill.py 30000 2000 64 11000   # place's case: one value size
    python scripts/measure_extstore_fill.py 40000 2000 16 --runs 5 --json tests/data/extstore-fill/m16.json
    python scripts/measure_extstore_fill.py 40000 2000 16 --burst --runs 3 \
        --json tests/data/extstore-fill/m16-burst.json

A second after the server starts (SETTLE), items of 2-20 KB (``random.Random(2820)``, the sizes
of ``tests/paced.py`` ``ext_issue_case``; or VALUE bytes each; keys ``x00000``..., 6 bytes) are
set one per round trip into ``memcached -m M -o ext_path=FILE:1g`` (``$SLABCALC_MEMCACHED`` or
the one on PATH), in order, at RATE sets a second (0: as fast as the replies come).  ``stats`` is
read before every 50th set (``--poll``; 0: only at the end, so that an unpaced client is not slowed
by the reads); the first read with ``evictions`` above 0 brackets the first eviction and ends the
run.  Prints that, and ``stats`` and ``stats slabs``'s pages then: the figures
``tests/analysis/test_extstore_capacity.py`` holds ``report``'s and ``place``'s replayed capacity to.
``--json`` writes every run (figures at the first eviction, the load average beside) to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from memcached_server import MemcachedServer  # noqa: E402

# seconds between the server's start and the first set: sets sent the instant it listens left the
# header class one page (first eviction at set 4 900, 13 315 held of 40 000), after a second two
# pages (first eviction at 24 150-24 200) -- report's replay models the settled server
SETTLE = 1.0
BURST_POLL = 5
FIELDS = ("hash_power_level", "curr_items", "evictions", "extstore_objects_written", "total_items",
          "slab_global_page_pool")


def sizes(count: int, value: int | None = None) -> list[int]:
    if value is not None:       # place's case: one value size
        return [value] * count
    rng = random.Random(2820)
    return [rng.randint(2000, 20000) for _ in range(count)]


def _pages(server) -> dict[int, int]:
    return {cls: row["total_pages"] for cls, row in server.slab_stats().per_class.items() if row.get("total_pages")}


def run(count: int, rate: float, memory: str, value: int | None, poll: int, burst: bool = False,
        burst_poll: int = BURST_POLL) -> dict:
    """One server, one fill: the first eviction's bracket and the server's figures then.  ``burst``:
    once a read finds the global page pool at the write thread's floor (1 or 2 pages: the extstore
    automover's watermark is at least 2, slab_automove_extstore.c 128-130), the sets go as fast as the
    replies come, ``stats`` read every ``burst_poll`` of them, until the pool is empty; then the pace again
    -- a client outrunning the write thread once as the pool runs dry, what report's capacity range
    calls falling behind (analysis/extstore_fill.py ``_replay``)."""
    path = f"/tmp/slabcalc-extstore-fill-{os.getpid()}"
    first = burst_at = None
    bursting = False
    try:
        with MemcachedServer(["-m", memory, "-o", f"ext_path={path}:1g"], timeout=30.0) as server:
            time.sleep(SETTLE)
            start = time.monotonic()
            sent = count
            for i, size in enumerate(sizes(count, value)):
                if rate and not bursting:
                    time.sleep(max(0.0, start + i / rate - time.monotonic()))
                every = burst_poll if bursting else poll
                if every and i % every == 0:
                    stats = server.stats()
                    if int(stats["evictions"]):
                        first, sent = (i - every, i), i
                        break
                    pool = int(stats["slab_global_page_pool"])
                    if burst and burst_at is None and 0 < pool <= 2:
                        bursting, burst_at = True, [i, None]
                    elif bursting and pool == 0:
                        bursting, burst_at[1] = False, i
                        start = time.monotonic() - i / rate if rate else start
                server.set(f"x{i:05d}", b"v" * size)
            took = time.monotonic() - start
            stats = server.stats()
            pages = _pages(server)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return {"count": count, "rate": rate, "memory": int(memory), "value": value, "poll": poll, "sent": sent,
            "burst_between": burst_at, "burst_poll": burst_poll if burst else None,
            "seconds": round(took, 3), "first_eviction_between": first,
            "stats": {name: int(stats[name]) for name in FIELDS if name in stats},
            "total_pages": {str(cls): n for cls, n in sorted(pages.items())},
            "loadavg": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("count", type=int, nargs="?", default=40000)
    parser.add_argument("rate", type=float, nargs="?", default=2000.0)
    parser.add_argument("memory", nargs="?", default="64")
    parser.add_argument("value", type=int, nargs="?", default=None)
    parser.add_argument("--poll", type=int, default=50, help="sets between stats reads (0: at the end only)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--burst", action="store_true",
                        help="outrun the write thread once, as the page pool reaches its floor")
    parser.add_argument("--burst-poll", type=int, default=BURST_POLL, help="sets between stats reads in a burst")
    parser.add_argument("--json", help="write the runs to this file")
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        r = run(args.count, args.rate, args.memory, args.value, args.poll, args.burst, args.burst_poll)
        runs.append(r)
        print(f"{r['sent']} sets in {r['seconds']} s; first eviction between sets {r['first_eviction_between']}; "
              f"burst {r['burst_between']}; "
              f"load {r['loadavg']:.1f}; {r['stats']}; total_pages {r['total_pages']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"script": "scripts/measure_extstore_fill.py", "argv": sys.argv[1:],
                                               "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
