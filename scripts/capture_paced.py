#!/usr/bin/env python3
"""Capture paced runs of a real memcached into tests/data/paced/ (see tests/paced.py).

    python scripts/capture_paced.py                 # every scenario, three at a time
    python scripts/capture_paced.py automove-2      # one
    SLABCALC_MEMCACHED=/path/to/memcached-1.6.45 python scripts/capture_paced.py

Each scenario starts a fresh memcached (``$SLABCALC_MEMCACHED`` or the one on
PATH), replays its workload on the workload's own clock and snapshots
``stats``, ``stats slabs`` and ``stats items`` every 10 s, into
``tests/data/paced/<scenario>-<version>.json.gz``.  A snapshot taken more than
50 ms late (a loaded machine) fails the capture; run it again.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import paced  # noqa: E402

LATE = 0.05


def one(name: str) -> str:
    scenario = paced.SCENARIOS[name]
    result = paced.capture(scenario)
    if scenario.releases and result.version not in scenario.releases:
        return f"{name}: made for {', '.join(scenario.releases)}, not {result.version}; not saved"
    late = max(s["late"] for s in result.snapshots)
    if late > LATE:
        return f"{name}: a snapshot was {late:.3f} s late; not saved"
    path = paced.save(result)
    last = result.snapshots[-1]["stats"]
    return (f"{name}: {len(result.workload)} operations, {len(result.snapshots)} snapshots -> {path} "
            f"(evictions {last['evictions']}, curr_items {last['curr_items']}, slabs_moved {last['slabs_moved']})")


def main(names: list[str]) -> int:
    names = names or [n for n in paced.SCENARIOS if not n.startswith("live-")]
    unknown = [n for n in names if n not in paced.SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(paced.SCENARIOS)}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(3) as pool:
        for line in pool.map(one, names):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
