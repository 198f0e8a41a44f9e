"""Replay every real extstore fill under ``tests/data/extstore-fill/`` (``v18-*``, ``v45-*``) and check that
each run's first eviction lies in the capacity range ``report`` gives (issue 41), as
``tests/analysis/test_extstore_range.py`` checks the few the suite replays (its ``FAST``): the whole set
costs about two minutes of a core (1.6.45's write thread is replayed a pass at a time), so CI keeps a
stratified part and this script the rest.  Prints one line a capture; exits 1 when one misses.

Run: python scripts/check_extstore_range.py [NAME ...]
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "analysis")]

import test_extstore_range as captures  # noqa: E402


def _one(name: str) -> str:
    try:
        captures._check(name)
    except AssertionError as exc:
        if name in captures.KNOWN_MISSES:
            return f"known miss {name}: {captures.KNOWN_MISSES[name]}"
        return f"MISS {name}: {exc}"
    if name in captures.KNOWN_MISSES:
        return f"MISS {name}: listed as a known miss (test_extstore_range.KNOWN_MISSES), but in its range now"
    f = captures._replayed(name)
    firsts = [r["stats"]["curr_items"] for r in captures._runs(name)]
    return f"ok   {name}: range {f.low}..{f.items}, real runs at {firsts}"


def main(names: list[str]) -> int:
    names = names or captures.FAST + captures.SLOW
    with ProcessPoolExecutor() as pool:
        lines = list(pool.map(_one, names))
    print("\n".join(lines))
    return 1 if any(line.startswith("MISS") for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
