"""The terms of the intervals a sampled replay states (:func:`slabcalc.engines.sample.errors`, issue 39: an
error that holds): the hit ratio over the gets read or the operations read, the evictions' spread over
each key's allocations and the resident items, what chance in the sampled keys' bytes does to hits
and evictions (:func:`footprint`), and the widening for the pages in coarse classes
(:func:`coarse_widening`)."""

from __future__ import annotations

import math

from slabcalc.engines.results import Simulation

Z95 = 1.96      # a normal 95 % interval's half-width in standard deviations
COARSE_ITEMS = 100      # a class with fewer sampled items than this is named as coarse
# A memory that evicts widens both intervals by 1 + COARSE_WIDENING * q, q the share of its pages in
# coarse classes (:func:`coarse_widening`): set on issue 39's studies, checked on seeds it was not set
# on (docs/speed.md, "The memory's own error").
COARSE_WIDENING = 1.5


def of_gets(reads: dict, rate: float, misses: int, gets: int) -> tuple[float, float]:
    """The hit ratio when every get read is counted (:func:`~slabcalc.engines.sample.errors`): ``1 - (A / R) / G``, the misses'
    Horvitz-Thompson variance ``(1 - R) sum m_k^2 / R^2``; and its half-width."""
    theta = min(1.0, misses / (rate * gets))
    if not misses:
        return 1.0, 0.0
    spread = sum((r[0] - r[1]) ** 2 for r in reads.values())
    return 1 - theta, Z95 * math.sqrt((1 - rate) * spread) / (rate * gets)


def adjusted(reads: dict, rate: float, gets: int, misses: int, ops: int) -> tuple[float, float]:
    """The hit ratio estimated from the sampled keys' ``reads`` and the operations read (:func:`~slabcalc.engines.sample.errors`),
    and its half-width."""
    drawn = sum(r[2] for r in reads.values())
    if not drawn:
        return 1 - misses / gets, 0.0
    theta = min(1.0, misses / gets * drawn / (rate * ops))
    if not misses:
        return 1.0, 0.0
    spread = sum(((r[0] - r[1]) / misses + r[2] / drawn - r[0] / gets) ** 2 for r in reads.values())
    return 1 - theta, Z95 * theta * math.sqrt((1 - rate) * spread)


def evicted_error(reads: dict, rate: float, evicted: int, resident: float = 0.0) -> float:
    """The 95 % half-width of the evictions scaled by ``1 / rate`` (:func:`~slabcalc.engines.sample.errors`); ``resident`` the
    variance the resident items add (:func:`resident_spread`).  Not rounded: the caller widens it, then rounds once."""
    allocations = [r[3] + (r[0] - r[1] if r[4] else 0) for r in reads.values() if len(r) > 4]
    total = sum(allocations)
    if not total:       # allocations not counted: each eviction its own (Poisson)
        return Z95 * math.sqrt(evicted + resident) / rate
    p = min(1.0, evicted / total)
    square = p * (1 - p) * total + p * p * sum(a * a for a in allocations) + resident
    return Z95 * math.sqrt((1 - rate) * square) / rate


def resident_spread(sim: Simulation) -> float:
    """What the resident items add to the sampled evictions' variance: a full memory holds as many items
    as their mean chunk size lets it, and the sampled ones' mean is a mean over few: ``I * CV^2`` for
    ``I`` resident items and ``CV`` their chunk sizes' coefficient of variation (each allocation that
    does not find a free chunk evicts: one resident item more is one eviction less)."""
    items = [(r.items, r.slab_class.chunk_size) for r in sim.classes if r.items]
    count = sum(n for n, _ in items)
    if not count:
        return 0.0
    mean = sum(n * size for n, size in items) / count
    square = sum(n * size * size for n, size in items) / count
    return count * max(0.0, square / (mean * mean) - 1)


def coarse(row) -> bool:
    """Whether a sampled replay's class row holds too few sampled items for its figures to be more than
    chance (named as coarse, and widening the intervals by its pages: :func:`coarse_widening`)."""
    return row.items < COARSE_ITEMS


def coarse_widening(sim: Simulation) -> float:
    """What a sampled memory that evicts adds to its intervals, as a factor: ``1 + COARSE_WIDENING * q``,
    ``q`` the share of its pages (the node's) in classes of fewer than :data:`COARSE_ITEMS` sampled items.

    The intervals above count the chance in the keys drawn.  A memory that evicts also has its own
    dynamics at the sampled scale, which no term above counts: a class of few sampled items gets its
    pages in the fill from few arrivals (a 1 % sample of issue 39's trace at -m 2048 gave the class of
    129 KB chunks 44 pages where the node gave it 102, no page moved), and the automover compares
    COLD tail ages read over few items (relative error about 1/sqrt(n)), so it takes pages from the
    noisiest classes (engines/automove.py).  Both err one way -- memory moves from the coarse classes,
    of large items, to the small ones, which hit more: the hit ratio reads high, the evictions low, by
    up to 1.4 of the keys' standard errors on average at 1 %, 1.1 on the look-aside shape at 5 % and
    1 GB.  Its size follows the memory held in coarse classes (issue 39's studies: 8-62 % of the pages
    at 5 %, 58-85 % at 1 %), and the factor is set on those studies (issue 39's trace, 10 M requests,
    seeds 20-33 at 1 % and 5 %; the look-aside shape, seeds 0-19 at 5 %): the full replay's hit ratio
    inside the widened interval in 28 of 28 cases at 1 % (21 before), 42 of 42 and 60 of 60 at 5 % (42
    and 55 before), its evictions in 27 of 28 at 1 % (15 before); the factor 1.9-2.3 at 1 %, 1.1-1.9
    at 5 %.  Measured on seeds it was not set on: docs/speed.md."""
    pages = [(r.pages, coarse(r)) for r in sim.classes if r.pages]
    total = sum(n for n, _ in pages)
    return 1.0 + COARSE_WIDENING * sum(n for n, coarse in pages if coarse) / total if total else 1.0


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


__all__ = ["COARSE_ITEMS", "COARSE_WIDENING", "Z95", "adjusted", "coarse", "coarse_widening", "evicted_error", "footprint",
           "of_gets", "resident_spread"]
