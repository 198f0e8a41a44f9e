"""Sampled replays: a node too big to replay whole, replayed on a spatial sample of its keys.

SHARDS (Waldspurger et al., FAST '15) estimates a cache's behaviour from the
requests of the keys whose hash falls under a threshold: every request of a
sampled key is replayed, no request of another.  A sample of rate ``R``
replays about ``R`` of the keys with all their history, so it needs ``R`` of
the node's memory -- and memcached's memory comes in pages.  Scaling ``-m``
alone leaves ``R`` times fewer pages: a class that holds 3.4 pages of the
node holds 0 or 1 of a 10 % sample, and each class's first page (granted past
the limit) and every page move weigh ten times what they weigh in the node.
So the pages are scaled instead (:class:`~slabcalc.engines.slabs.Slabs`'
``share``): ``-m``, the page size and the number of pages stay the node's,
and each page holds ``R`` of its chunks -- the k-th page a class gets holds
the whole chunks its pages' shares add up to, so a class of 2 chunks a page
(512 KB) at 1 % gets one chunk every 50 pages.  Pages per class, page moves,
the global pool and ``total_malloced`` are then counted in the node's pages
and need no scaling; items, evictions, hits, misses and chunks are scaled
back by ``1 / R``.

What is left is chance (which keys fall under the threshold): :func:`errors`
states 95 % intervals for the hit ratio and the evictions from the sampled
counts, and names the classes that hold so few sampled items that their
figures are mostly chance.  The automover compares the ages of COLD tails,
which are noisier over fewer items; ``benchmarks/sample_bench.py`` measures
the whole error against full replays, and ``tests/test_sample.py`` bounds it.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, fields, replace
from typing import Iterable, Iterator

from slabcalc.engines.results import Simulation
from slabcalc.errors import SlabcalcError
from slabcalc.model.ops import GET

HASH_SPACE = 1 << 32
COARSE_ITEMS = 100      # a class with fewer sampled items than this is named as coarse


class SampleError(SlabcalcError, ValueError):
    """A sample rate that cannot give a sample (a usage error)."""


def key_hash(key) -> int:
    """A key's 32-bit sampling hash: CRC-32 of its UTF-8 bytes (an int key: of its decimal digits),
    then murmur3's 32-bit finaliser so that neighbouring keys land far apart.  Stable across runs
    and machines (Python's own ``hash`` of a string is not)."""
    h = zlib.crc32(key.encode() if isinstance(key, str) else str(key).encode())
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def check_rate(rate: float) -> float:
    if isinstance(rate, bool) or not (isinstance(rate, (int, float)) and 0 < rate <= 1):
        raise SampleError(f"--sample must be above 0 and at most 1, not {rate!r}")
    return float(rate)


@dataclass
class Sampled:
    """The operations a sample kept, as they are read: ``ops`` counts all, ``kept`` the sampled;
    ``reads`` each sampled key's gets and hits (:meth:`count_reads`), for the error of the hit ratio."""

    rate: float
    ops: int = 0
    kept: int = 0
    reads: dict = field(default_factory=dict)

    def count_reads(self, engine) -> None:
        """Count each key's gets and hits as ``engine`` answers them (its ``fetch``, wrapped)."""
        fetch, reads = engine.fetch, self.reads

        def counted(key, op, ttl):
            found = fetch(key, op, ttl)
            if op == GET:
                seen = reads.get(key)
                if seen is None:
                    reads[key] = seen = [0, 0]
                seen[0] += 1
                seen[1] += found
            return found
        engine.fetch = counted

    def filter(self, operations: Iterable[tuple]) -> Iterator[tuple]:
        """The operations (``(time, op, key, ...)``) of the keys whose hash is under the rate."""
        threshold = int(self.rate * HASH_SPACE)
        ops = kept = 0
        try:
            for op in operations:
                ops += 1
                if key_hash(op[2]) < threshold:
                    kept += 1
                    yield op
        finally:
            self.ops, self.kept = ops, kept


@dataclass(frozen=True)
class Sample:
    """How a sampled replay was made, and the error its scaled figures carry."""

    rate: float
    ops: int                 # operations read
    sampled_ops: int         # operations of sampled keys, replayed
    hit_ratio: float | None  # the sample's
    hit_ratio_error: float | None     # chance: 95 % half-width, from the sampled gets (binomial)
    evicted_error: int       # chance: 95 % half-width of the scaled evictions (Poisson on the sampled count)
    coarse_classes: tuple[int, ...] = ()     # classes holding fewer than COARSE_ITEMS sampled items

    @property
    def scale(self) -> float:
        return 1 / self.rate


def errors(sim: Simulation, rate: float, reads: dict | None = None) -> dict:
    """The chance error of a sampled replay's scaled figures, from the sample (``sim``, not yet
    scaled): 95 % intervals of the hit ratio and the evictions, and the classes of few items.

    The sample draws keys, not requests: a hot key is in it with all its gets or not at all, so
    the hit ratio's variance is that of a ratio over sampled clusters (Cochran, *Sampling
    Techniques*, 6.11, with Poisson sampling of keys at ``rate``): ``(1 - rate) * sum((h_k - r
    g_k)^2) / G^2`` over each sampled key's gets ``g_k`` and hits ``h_k`` (``reads``), ``G``
    their sum and ``r`` the sample's ratio. Without ``reads``, gets are taken as independent
    (binomial), which understates it for skewed keys."""
    t = sim.totals
    ratio = t.hits / t.gets if t.gets else None
    if rate == 1:           # the whole workload: no chance
        return dict(hit_ratio=ratio, hit_ratio_error=0.0 if t.gets else None, evicted_error=0)
    if not t.gets:
        ratio_error = None
    elif reads:
        spread = sum((hits - ratio * gets) ** 2 for gets, hits in reads.values())
        ratio_error = 1.96 * math.sqrt((1 - rate) * spread) / t.gets
    else:
        ratio_error = 1.96 * math.sqrt(ratio * (1 - ratio) / t.gets)
    return dict(hit_ratio=ratio, hit_ratio_error=ratio_error,
                evicted_error=round(1.96 * math.sqrt(t.evicted) / rate),
                coarse_classes=tuple(r.slab_class.id for r in sim.classes if r.items < COARSE_ITEMS))


# counted in the node's pages (a sampled replay's pages are the node's): never scaled
PAGE_FIELDS = ("page_length", "pages", "moved_in", "moved_out", "total_malloced", "global_page_pool",
               "pages_moved", "pool_pages", "class_id", "peak_time", "peak_class")


def _scaled(value, rate: float):
    return round(value / rate) if isinstance(value, int) and not isinstance(value, bool) else value


def _scaled_copy(record, rate: float):
    return replace(record, **{f.name: _scaled(getattr(record, f.name), rate)
                              for f in fields(record) if f.name not in PAGE_FIELDS})


def scale_back(sim: Simulation, sampled: Sampled) -> Simulation:
    """The sampled replay's counts scaled by ``1 / rate`` into the node's figures, with its :class:`Sample`."""
    rate = sampled.rate
    info = Sample(rate, sampled.ops, sampled.kept, **errors(sim, rate, sampled.reads))
    if rate == 1:
        return replace(sim, sample=info)
    finding = sim.finding
    return replace(sim, classes=tuple(_scaled_copy(r, rate) for r in sim.classes),
                   totals=replace(_scaled_copy(sim.totals, rate), ops=sampled.ops),
                   finding=None if finding is None else _scaled_copy(finding, rate),
                   timeline=tuple(_scaled_copy(row, rate) for row in sim.timeline), sample=info, snapshots=())


__all__ = ["HASH_SPACE", "COARSE_ITEMS", "Sample", "SampleError", "Sampled", "key_hash", "check_rate",
           "scale_back", "errors"]
