#!/usr/bin/env python3
"""Save pairs of readings of a real memcached into tests/data/stats/pairs/ (see tests/calcify.py).

    python scripts/capture_stats_pairs.py
    SLABCALC_MEMCACHED=/path/to/memcached-1.6.45 python scripts/capture_stats_pairs.py

One node is driven into calcification and healed by its automover; four readings
are saved, as ``<version>-calcified-{before,after}.txt`` (3 s apart while it
evicts and nothing moves) and ``<version>-healed-{before,after}.txt`` (4 s apart
once evictions have stopped), plus ``<version>-other-node.txt``, a reading of
another server, for the "two different servers" refusal.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import calcify  # noqa: E402
from memcached_server import MemcachedServer, server_version  # noqa: E402

OUT = ROOT / "tests" / "data" / "stats" / "pairs"


def evictions(server) -> int:
    return int(server.stats()["evictions"])


def main() -> int:
    memcached = os.environ.get("SLABCALC_MEMCACHED")
    version = server_version(memcached)
    OUT.mkdir(parents=True, exist_ok=True)
    server = calcify.loaded(memcached)
    saved = {}
    try:
        with calcify.writing(server):
            time.sleep(1)
            saved["calcified-before"] = calcify.reading(server)
            time.sleep(3)
            saved["calcified-after"] = calcify.reading(server)
            if int(server.stats()["slabs_moved"]):
                print("the automover moved a page too soon: run again", file=sys.stderr)
                return 1
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                before, text = evictions(server), calcify.reading(server)
                time.sleep(4)
                if evictions(server) == before:
                    saved["healed-before"], saved["healed-after"] = text, calcify.reading(server)
                    break
            else:
                print("the node did not heal in 90 s", file=sys.stderr)
                return 1
        with MemcachedServer(calcify.FLAGS, memcached=memcached) as other:
            saved["other-node"] = calcify.reading(other)
    finally:
        server.stop()
    for name, text in saved.items():
        path = OUT / f"{version}-{name}.txt"
        path.write_text(text)
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
