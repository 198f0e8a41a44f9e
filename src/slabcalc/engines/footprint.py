"""What chance in a sample's keys' bytes does to its hits and evictions (issue 39: an error that holds).

:func:`footprint` is one term of the intervals :func:`slabcalc.engines.sample.errors` states.
"""

from __future__ import annotations

import math


def footprint(reads: dict, rate: float, hits: int) -> tuple[float, float]:
    """How the sample's hits move with its memory, and how much chance moves that memory: ``(dH/dlnC,
    v)``, ``H`` the sampled hits, ``C`` the bytes its keys hold, ``v`` the variance of ``ln C`` that the
    choice of keys gives.

    A sample's memory is RATE of the node's, but its keys' bytes are RATE of the node's only on
    average: a 5 % sample of keys of log-normal sizes holds a few more or fewer large ones, and a
    memory that evicts then fits a few per cent fewer or more of them -- its hits and evictions move
    together, one way (issue 39's study: the cases outside the key-chance interval are those).  By
    Che's approximation of an LRU (Che et al., IEEE JSAC 2002; Fricker et al., ITC 2012) a key read
    ``g_k`` times is held with ``p_k = 1 - exp(-g_k T)`` for the one characteristic time ``T`` that
    gives the hits the sample had (``sum (g_k - 1) p_k = H``, its first read a miss), the bytes held
    are ``C = sum b_k p_k`` (``b_k`` the key's item bytes), and ``dH/dlnC = C (dH/dT) / (dC/dT)``;
    the keys' share of ``C`` is chance: ``v = (1 - R) sum (b_k p_k)^2 / C^2``.  The hit ratio's
    variance gains ``(dH/dlnC / G)^2 v``, the evictions' (each hit more an allocation and an eviction
    less) ``(dH/dlnC / R)^2 v``."""
    try:
        import numpy as np
    except ImportError:         # pragma: no cover - numpy is a dependency
        return 0.0, 0.0
    table = np.array([(r[0], r[5]) for r in reads.values() if r[0] and len(r) > 5], dtype=float)
    if not len(table) or not hits:
        return 0.0, 0.0
    gets, size = table[:, 0], table[:, 1]
    again = np.maximum(gets - 1, 0)
    if hits >= again.sum():
        return 0.0, 0.0             # every read but the first hits: the memory holds them all
    low, high = -30.0, 30.0         # ln T, bisected
    for _ in range(80):
        middle = (low + high) / 2
        if (again * -np.expm1(-gets * math.exp(middle))).sum() < hits:
            low = middle
        else:
            high = middle
    t = math.exp((low + high) / 2)
    held = -np.expm1(-gets * t)
    rate_of = gets * np.exp(-gets * t)
    occupied = (size * held).sum()
    change = (size * rate_of).sum()
    if occupied <= 0 or change <= 0:
        return 0.0, 0.0
    slope = occupied * (again * rate_of).sum() / change
    return float(slope), float((1 - rate) * ((size * held) ** 2).sum() / occupied ** 2)


__all__ = ["footprint"]
