"""The item mixes of the real extstore fills (scripts/measure_extstore_fill.py, tests/data/extstore-fill/), in
one place: the script sets them into a real memcached, tests/analysis/test_extstore_capacity.py gives the same items
to ``report``.

A mix is ``KIND:LOW:HIGH[:MEAN]`` value bytes, from ``random.Random(seed)``:

* ``uniform:2000:20000`` -- ``randint(LOW, HIGH)`` (issue 28's items: the default, seed 2820);
* ``exp:1000:30000:7000`` -- ``LOW + expovariate(1 / MEAN)``, cut at HIGH (issue 41's 1-30 KB items, mean
  near 7.9 KB);
* ``fixed:11000:11000`` -- one size (``place``'s case).

Keys are ``x`` and the set's number, zero-padded to ``key_length`` bytes.
"""

from __future__ import annotations

import random

DEFAULT_MIX = "uniform:2000:20000"
DEFAULT_SEED = 2820


def sizes(count: int, mix: str = DEFAULT_MIX, seed: int = DEFAULT_SEED) -> list[int]:
    """``count`` value sizes of ``mix``."""
    kind, *numbers = mix.split(":")
    low, high, *mean = (int(n) for n in numbers)
    rng = random.Random(seed)
    if kind == "uniform":
        return [rng.randint(low, high) for _ in range(count)]
    if kind == "fixed":
        return [low] * count
    if kind == "exp":
        return [min(high, low + int(rng.expovariate(1 / mean[0]))) for _ in range(count)]
    raise ValueError(f"mix {mix!r}: uniform, exp or fixed")


def key(i: int, key_length: int = 6) -> str:
    """The key of set ``i``: ``x00042`` at 6 bytes."""
    return "x" + str(i).zfill(key_length - 1)


def csv_text(count: int, mix: str = DEFAULT_MIX, seed: int = DEFAULT_SEED, key_length: int = 6) -> str:
    """The items as ``report`` reads them (key length, value size)."""
    return "key,value\n" + "".join(f"{key_length},{v}\n" for v in sizes(count, mix, seed))
