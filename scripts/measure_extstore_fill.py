#!/usr/bin/env python3
"""Measure how many items a real memcached with extstore holds when it first evicts (issue 28 item 2).

    python scripts/measure_extstore_fill.py                  # 40 000 items at 2 000 sets a second
    python scripts/measure_extstore_fill.py 20000 0          # 20 000 items as fast as replies come
    python scripts/measure_extstore_fill.py 30000 2000 64 11000   # place's case: one value size

A second after the server starts (SETTLE), items of 2-20 KB (``random.Random(2820)``, the sizes
of ``tests/paced.py`` ``ext_issue_case``; or VALUE bytes each; keys ``x00000``..., 6 bytes) are
set one per round trip into ``memcached -m M -o ext_path=FILE:1g`` (``$SLABCALC_MEMCACHED`` or
the one on PATH), in order, at RATE sets a second (0: as fast as the replies come).  ``stats`` is
read before every 50th set; the first read with ``evictions`` above 0 brackets the first
eviction.  Prints that, and ``stats`` and ``stats slabs``'s pages at the end: the figures
``tests/test_extstore_capacity.py`` holds ``report``'s and ``place``'s replayed capacity to.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from memcached_server import MemcachedServer  # noqa: E402

POLL = 50
# seconds between the server's start and the first set: sets sent the instant it listens left the
# header class one page (first eviction at set 4 900, 13 315 held of 40 000), after a second two
# pages (first eviction at 24 150-24 200) -- report's replay models the settled server
SETTLE = 1.0


def sizes(count: int, value: int | None = None) -> list[int]:
    if value is not None:       # place's case: one value size
        return [value] * count
    rng = random.Random(2820)
    return [rng.randint(2000, 20000) for _ in range(count)]


def main(count: int = 40000, rate: float = 2000.0, memory: str = "64", value: int | None = None) -> None:
    path = f"/tmp/slabcalc-extstore-fill-{os.getpid()}"
    try:
        with MemcachedServer(["-m", memory, "-o", f"ext_path={path}:1g"], timeout=30.0) as server:
            time.sleep(SETTLE)
            first = None
            start = time.monotonic()
            for i, size in enumerate(sizes(count, value)):
                if rate:
                    time.sleep(max(0.0, start + i / rate - time.monotonic()))
                if first is None and i % POLL == 0:
                    stats = server.stats()
                    if int(stats["evictions"]):
                        first = (i, int(stats["curr_items"]), int(stats["evictions"]))
                server.set(f"x{i:05d}", b"v" * size)
            took = time.monotonic() - start
            stats = server.stats()
            pages = {cls: row["total_pages"] for cls, row in server.slab_stats().per_class.items()
                     if row.get("total_pages")}
    finally:
        if os.path.exists(path):
            os.unlink(path)
    print(f"{count} sets in {took:.3f} s; first seen evicting before set {first[0] if first else None} "
          f"(curr_items {first[1] if first else None}, evictions {first[2] if first else None}; "
          f"no eviction {POLL} sets earlier)")
    for name in ("hash_power_level", "curr_items", "evictions", "extstore_objects_written", "total_items",
                 "slab_global_page_pool"):
        print(name, stats.get(name))
    print("total_pages", pages)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 40000, float(args[1]) if len(args) > 1 else 2000.0,
         args[2] if len(args) > 2 else "64", int(args[3]) if len(args) > 3 else None)
