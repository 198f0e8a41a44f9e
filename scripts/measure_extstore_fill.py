#!/usr/bin/env python3
"""Measure how many items a real memcached with extstore holds when it first evicts (issue 28 item 2).

    python scripts/measure_extstore_fill.py                  # 40 000 items at 2 000 sets a second
    python scripts/measure_extstore_fill.py 20000 0          # 20 000 items as fast as replies come
    python scripts/measure_extstore_fill.py 30000 2000 64 11000   # place's case: one value size
    python scripts/measure_extstore_fill.py 40000 2000 16 --runs 5 --json tests/data/extstore-fill/m16.json
    python scripts/measure_extstore_fill.py 40000 2000 16 --burst --runs 3 \
        --json tests/data/extstore-fill/m16-burst.json
    SLABCALC_MEMCACHED=/path/1.6.45/memcached python scripts/measure_extstore_fill.py 80000 2000 64 \
        --mix exp:1000:30000:7000 --seed 41 --key-length 13 --flash 512m --after 2000 \
        --json tests/data/extstore-fill/v45-m64-exp.json.gz     # issue 41's mix

A second after the server starts (SETTLE), items of 2-20 KB (``random.Random(2820)``, the sizes
of ``tests/paced.py`` ``ext_issue_case``; or VALUE bytes each; or ``--mix`` and ``--seed``:
``tests/extstore_mixes.py``; keys ``x00000``..., 6 bytes or ``--key-length``) are
set one per round trip into ``memcached -m M -o ext_path=FILE:1g`` (``--flash``; ``$SLABCALC_MEMCACHED`` or
the one on PATH), in order, at RATE sets a second (0: as fast as the replies come).  ``stats`` is
read before every 50th set (``--poll``; 0: only at the end, so that an unpaced client is not slowed
by the reads); the first read with ``evictions`` (or ``extstore_page_evictions``: ``ran_out``)
above 0 brackets the first eviction and ends the run (``--after N``: N sets more, ``evictions``
read at each poll, to show whether they go on).  Prints that, and ``stats`` and ``stats slabs``'s
pages then: the figures
``tests/analysis/test_extstore_capacity.py`` holds ``report``'s and ``place``'s replayed capacity to.
``--json`` writes every run (figures at the first eviction, the load average beside) to a file.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import extstore_mixes  # noqa: E402
from memcached_server import MemcachedServer  # noqa: E402

# seconds between the server's start and the first set: sets sent the instant it listens left the
# header class one page (first eviction at set 4 900, 13 315 held of 40 000), after a second two
# pages (first eviction at 24 150-24 200) -- report's replay models the settled server
SETTLE = 1.0
BURST_POLL = 5
FIELDS = ("hash_power_level", "curr_items", "evictions", "extstore_objects_written", "total_items",
          "slab_global_page_pool", "extstore_page_evictions")


def sizes(count: int, value: int | None = None, mix: str | None = None, seed: int | None = None) -> list[int]:
    if value is not None:       # place's case: one value size
        return [value] * count
    if mix is not None:
        return extstore_mixes.sizes(count, mix, extstore_mixes.DEFAULT_SEED if seed is None else seed)
    rng = random.Random(2820)
    return [rng.randint(2000, 20000) for _ in range(count)]


def _pages(server) -> dict[int, int]:
    return {cls: row["total_pages"] for cls, row in server.slab_stats().per_class.items() if row.get("total_pages")}


def run(count: int, rate: float, memory: str, value: int | None, poll: int, burst: bool = False,
        burst_poll: int = BURST_POLL, mix: str | None = None, seed: int | None = None, key_length: int = 6,
        flash: str = "1g", after: int = 0) -> dict:
    """One server, one fill: the first eviction's bracket and the server's figures then.  ``burst``:
    once a read finds the global page pool at the write thread's floor (1 or 2 pages: the extstore
    automover's watermark is at least 2, slab_automove_extstore.c 128-130), the sets go as fast as the
    replies come, ``stats`` read every ``burst_poll`` of them, until the pool is empty; then the pace again
    -- a client outrunning the write thread once as the pool runs dry, what report's capacity range
    calls falling behind (analysis/extstore_fill.py ``_replay``)."""
    path = f"/tmp/slabcalc-extstore-fill-{os.getpid()}"
    first = burst_at = None
    bursting = False
    at_first = kind = None
    series: list[list[int]] = []        # [set, evictions, curr_items] at each poll from the first eviction
    try:
        with MemcachedServer(["-m", memory, "-o", f"ext_path={path}:{flash}"], timeout=30.0) as server:
            version = server.stats().get("version")
            time.sleep(SETTLE)
            start = time.monotonic()
            sent = count
            for i, size in enumerate(sizes(count, value, mix, seed)):
                if rate and not bursting:
                    time.sleep(max(0.0, start + i / rate - time.monotonic()))
                every = burst_poll if bursting else poll
                if every and i % every == 0:
                    stats = server.stats()
                    if first is not None:
                        series.append([i, int(stats["evictions"]), int(stats["curr_items"])])
                        if i >= first[1] + after:
                            sent = i
                            break
                    elif int(stats["evictions"]) or int(stats.get("extstore_page_evictions", 0)):
                        first, sent = (i - every, i), i
                        kind = "RAM" if int(stats["evictions"]) else "flash"
                        at_first = stats, _pages(server)
                        series.append([i, int(stats["evictions"]), int(stats["curr_items"])])
                        if not after:
                            break
                    pool = int(stats["slab_global_page_pool"])
                    if burst and burst_at is None and 0 < pool <= 2:
                        bursting, burst_at = True, [i, None]
                    elif bursting and pool == 0:
                        bursting, burst_at[1] = False, i
                        start = time.monotonic() - i / rate if rate else start
                server.set(extstore_mixes.key(i, key_length), b"v" * size)
            took = time.monotonic() - start
            stats, pages = at_first or (server.stats(), _pages(server))
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return {"version": version, "count": count, "rate": rate, "memory": int(memory), "value": value,
            "mix": mix, "seed": seed, "key_length": key_length, "flash": flash, "poll": poll, "sent": sent,
            "burst_between": burst_at, "burst_poll": burst_poll if burst else None,
            "seconds": round(took, 3), "first_eviction_between": first, "ran_out": kind,
            "stats": {name: int(stats[name]) for name in FIELDS if name in stats},
            "total_pages": {str(cls): n for cls, n in sorted(pages.items())},
            "evictions_after": series,
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
    parser.add_argument("--mix", help="value sizes: tests/extstore_mixes.py (uniform:LOW:HIGH, exp:LOW:HIGH:MEAN)")
    parser.add_argument("--seed", type=int, default=None, help="the mix's random seed")
    parser.add_argument("--key-length", type=int, default=6)
    parser.add_argument("--flash", default="1g", help="ext_path's size")
    parser.add_argument("--after", type=int, default=0, help="sets to go on after the first eviction")
    parser.add_argument("--json", help="write the runs to this file (.gz: compressed)")
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        r = run(args.count, args.rate, args.memory, args.value, args.poll, args.burst, args.burst_poll,
                args.mix, args.seed, args.key_length, args.flash, args.after)
        runs.append(r)
        print(f"{r['sent']} sets in {r['seconds']} s; first eviction between sets {r['first_eviction_between']}; "
              f"burst {r['burst_between']}; "
              f"load {r['loadavg']:.1f}; {r['stats']}; total_pages {r['total_pages']}", flush=True)
    if args.json:
        text = json.dumps({"script": "scripts/measure_extstore_fill.py", "argv": sys.argv[1:], "runs": runs},
                          indent=1) + "\n"
        if args.json.endswith(".gz"):
            Path(args.json).write_bytes(gzip.compress(text.encode(), mtime=0))
        else:
            Path(args.json).write_text(text)


if __name__ == "__main__":
    main()
