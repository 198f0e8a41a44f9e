"""Sampled replays: a node too big to replay whole, replayed on a spatial sample of its keys.

SHARDS (Waldspurger et al., FAST '15) estimates a cache's behaviour from the
requests of the keys whose hash falls under a threshold: every request of a
sampled key is replayed, no request of another.  A sample of rate ``R``
replays about ``R`` of the keys with all their history, so each class's
items, evictions, hits and misses are about ``R`` times the whole node's when
the memory is scaled by ``R`` as well -- here ``-m`` (``maxbytes``, which
memcached compares page by page in ``do_slabs_newslab``); the slab classes,
the page size and the clock stay the server's.  Figures are scaled back by
``1 / R``.

Two things keep a sample from being the node in small: page granularity (a
class holding 3.4 pages of a scaled ``-m`` holds 3 or 4, and a class's first
page is granted past the limit) and chance (which keys fall under the
threshold).  :data:`MIN_PAGES` refuses samples whose scaled ``-m`` holds too
few pages for the first; :func:`errors` states both: each class's pages
within one sampled page (``1 / R`` pages of the node), and 95 % intervals for
the hit ratio and the evictions from the sampled counts.
``benchmarks/sample_bench.py`` measures the error against full replays.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, fields, replace
from typing import Iterable, Iterator

from slabcalc.engines.results import Simulation
from slabcalc.errors import SlabcalcError
from slabcalc.model.settings import Settings

HASH_SPACE = 1 << 32
MIN_PAGES = 64          # pages of scaled -m a sample must keep (see sample_settings)


class SampleError(SlabcalcError, ValueError):
    """A sample rate or memory limit that cannot give a sample worth reporting (a usage error)."""


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
    if not (isinstance(rate, (int, float)) and 0 < rate <= 1):
        raise SampleError(f"--sample must be above 0 and at most 1, not {rate!r}")
    return float(rate)


@dataclass
class Sampled:
    """The operations a sample kept, as they are read: ``ops`` counts all, ``kept`` the sampled."""

    rate: float
    ops: int = 0
    kept: int = 0

    def filter(self, operations: Iterable[tuple]) -> Iterator[tuple]:
        """The operations (``(time, op, key, ...)``) of the keys whose hash is under the rate."""
        threshold = int(self.rate * HASH_SPACE)
        crc = zlib.crc32
        ops = kept = 0
        try:
            for op in operations:
                ops += 1
                key = op[2]
                h = crc(key.encode() if isinstance(key, str) else str(key).encode())
                h ^= h >> 16
                h = (h * 0x85EBCA6B) & 0xFFFFFFFF       # key_hash, written out: this loop sees every op
                h ^= h >> 13
                h = (h * 0xC2B2AE35) & 0xFFFFFFFF
                if h ^ (h >> 16) < threshold:
                    kept += 1
                    yield op
        finally:
            self.ops, self.kept = ops, kept


def sample_settings(settings: Settings, rate: float) -> Settings:
    """``settings`` with ``-m`` scaled by ``rate``, refused when that leaves fewer than :data:`MIN_PAGES`.

    memcached grants each class its first page past the limit, and a class's
    share of the memory is a whole number of pages: with a few dozen pages
    those two decide the evictions more than the workload does (a 1 % sample
    of ``-m 64`` is less than one page).
    """
    rate = check_rate(rate)
    if rate == 1 or not settings.maxbytes:
        return settings
    scaled = int(settings.maxbytes * rate)
    page = settings.slab_page_size
    if scaled < MIN_PAGES * page:
        need = math.ceil(MIN_PAGES * page / settings.maxbytes * 1000) / 1000
        raise SampleError(
            f"a {rate:.4g} sample of -m {settings.maxbytes >> 20} leaves {scaled / page:.1f} pages of "
            f"{page} bytes; at least {MIN_PAGES} are needed for pages per class to follow the node's: "
            f"sample at least {min(need, 1):g}, or replay it whole")
    return replace(settings, maxbytes=scaled)


@dataclass(frozen=True)
class Sample:
    """How a sampled replay was made, and the error its scaled figures carry."""

    rate: float
    ops: int                 # operations read
    sampled_ops: int         # operations of sampled keys, replayed
    maxbytes: int            # the node's -m
    sampled_maxbytes: int    # -m of the replay
    hit_ratio: float | None  # the sample's
    hit_ratio_error: float | None     # chance: 95 % half-width, from the sampled gets (binomial)
    evicted_error: int       # chance: 95 % half-width of the scaled evictions (Poisson on the sampled count)
    pages_error: int         # granularity: pages of the node one sampled page stands for (1 / rate, rounded up)
    coarse_classes: tuple[int, ...] = ()     # classes of at most COARSE_PAGES sampled pages

    @property
    def scale(self) -> float:
        return 1 / self.rate


COARSE_PAGES = 2


def errors(sim: Simulation, rate: float) -> dict:
    """The error of a sampled replay's scaled figures, from the sample (``sim``, not yet scaled):
    chance (95 % intervals of the hit ratio and the evictions) and page granularity."""
    t = sim.totals
    ratio = t.hits / t.gets if t.gets else None
    if rate == 1:           # the whole workload: no chance, no coarser pages
        return dict(hit_ratio=ratio, hit_ratio_error=0.0 if t.gets else None, evicted_error=0, pages_error=0)
    return dict(hit_ratio=ratio,
                hit_ratio_error=1.96 * math.sqrt(ratio * (1 - ratio) / t.gets) if t.gets else None,
                evicted_error=round(1.96 * math.sqrt(t.evicted) / rate),
                pages_error=math.ceil(1 / rate - 1e-9),
                coarse_classes=tuple(r.slab_class.id for r in sim.classes if 0 < r.pages <= COARSE_PAGES))


def _scaled(value, rate: float):
    return round(value / rate) if isinstance(value, int) and not isinstance(value, bool) else value


def _scaled_copy(record, rate: float, keep: tuple[str, ...] = ()):
    return replace(record, **{f.name: _scaled(getattr(record, f.name), rate)
                              for f in fields(record) if f.name not in keep})


def scale_back(sim: Simulation, sampled: Sampled, node: Settings) -> Simulation:
    """The sampled replay's counts scaled by ``1 / rate`` into the node's figures, with its :class:`Sample`."""
    rate = sampled.rate
    info = Sample(rate, sampled.ops, sampled.kept, node.maxbytes, sim.settings.maxbytes, **errors(sim, rate))
    if rate == 1:
        return replace(sim, sample=info)
    classes = tuple(_scaled_copy(r, rate, keep=("page_length",)) for r in sim.classes)
    totals = replace(_scaled_copy(sim.totals, rate), ops=sampled.ops)
    finding = sim.finding
    if finding is not None:
        finding = _scaled_copy(finding, rate, keep=("peak_time", "peak_class"))
    timeline = tuple(_scaled_copy(row, rate, keep=("class_id",)) for row in sim.timeline)
    return replace(sim, settings=node, classes=classes, totals=totals, finding=finding, timeline=timeline,
                   sample=info, snapshots=())


__all__ = ["HASH_SPACE", "MIN_PAGES", "Sample", "SampleError", "Sampled", "key_hash", "check_rate",
           "sample_settings", "scale_back", "errors"]
