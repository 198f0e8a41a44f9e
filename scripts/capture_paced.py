#!/usr/bin/env python3
"""Capture paced runs of a real memcached into tests/data/paced/ (see tests/paced.py).

    python scripts/capture_paced.py                 # every scenario, three at a time
    python scripts/capture_paced.py automove-2      # one
    SLABCALC_MEMCACHED=/path/to/memcached-1.6.45 python scripts/capture_paced.py
    python scripts/capture_paced.py --again 2 reclaim-m64   # and twice more, unsaved: the server against itself

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


COUNTERS = ("curr_items", "evictions", "get_hits", "slabs_moved", "reclaimed", "crawler_reclaimed")


def disagreement(a: "paced.Capture", b: "paced.Capture") -> str:
    """The worst difference between two runs of a scenario, per counter, and per class in pages."""
    worst: dict[str, tuple] = {}
    for sa, sb in zip(a.snapshots, b.snapshots):
        for name in COUNTERS:
            if name not in sa["stats"]:
                continue
            x, y = int(sa["stats"][name]), int(sb["stats"][name])
            if abs(x - y) > worst.get(name, (0,))[0]:
                worst[name] = (abs(x - y), sa["time"], x, y)
        pages = [abs(int(sa["slabs"].get(k, 0)) - int(sb["slabs"].get(k, 0)))
                 for k in set(sa["slabs"]) | set(sb["slabs"]) if k.endswith(":total_pages")]
        if max(pages, default=0) > worst.get("pages", (0,))[0]:
            worst["pages"] = (max(pages), sa["time"])
    return "; ".join(f"{k} {v[0]} at {v[1]} s" + (f" ({v[2]} vs {v[3]})" if len(v) > 2 else "")
                     for k, v in worst.items()) or "the same at every snapshot"


def again(name: str, times: int) -> str:
    """Capture ``name`` ``times`` more times, unsaved: how far each run is from the stored one."""
    lines = []
    for k in range(times):
        result = paced.capture(paced.SCENARIOS[name])
        stored = paced.load(f"{name}-{result.version}")
        lines.append(f"{name} again ({k + 1}): {disagreement(stored, result)}")
    return "\n".join(lines)


def main(names: list[str]) -> int:
    times = 0
    if names[:1] == ["--again"]:
        if len(names) < 2 or not names[1].isdigit():
            print("usage: capture_paced.py [--again N] [scenario ...]", file=sys.stderr)
            return 2
        times, names = int(names[1]), names[2:]
    names = names or [n for n in paced.SCENARIOS if not n.startswith("live-")]
    unknown = [n for n in names if n not in paced.SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(paced.SCENARIOS)}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(3) as pool:
        for line in pool.map(one, names):
            print(line, flush=True)
        if times:
            for line in pool.map(lambda name: again(name, times), names):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
