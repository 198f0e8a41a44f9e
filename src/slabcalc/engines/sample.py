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
the whole error against full replays, and ``tests/engines/test_sample.py`` bounds it.

A class's holding in a sample moves in whole sampled chunks, and one chunk of class ``c``
stands for ``1 / (R * perslab)`` of the node's pages: at 1 % a chunk of the 512 KB class
(2 a page) is 50 pages.  The carry keeps a class within one chunk of its pages' share, and a
class takes pages until one holds a chunk, so the error of each class's memory is one sampled
chunk.  That is small only against a holding of many chunks: a sample is made only when ``-m``
could hold :data:`ROOM_CHUNKS` sampled chunks of every class the workload stores in, all at
once (:class:`Room`) -- one chunk is then at most a twentieth of such a holding, inside the 5 %
the tests hold a sample to.  Below that (``sum(N * page_length_c / (R * perslab_c)) > -m``) the
chunks, not the keys, decide the figures, and the rate is refused (:class:`TooCoarse`) with the
smallest that has room, ``N * sum(page_length_c / perslab_c) / -m``.  It is refused, not
raised to that rate: the rate sets the replay's time and memory, and a correction could
multiply both by a hundred, or make the sample the whole replay, without being asked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from typing import Callable, Iterable, Iterator

from slabcalc.engines.results import Simulation
from slabcalc.errors import SlabcalcError
from slabcalc.model.classes import class_for, slab_classes
from slabcalc.model.item import ntotal_function
from slabcalc.model.ops import FILL, SET
from slabcalc.model.placement import TOO_LARGE, place
from slabcalc.model.sampling import HASH_SPACE, key_hash, threshold
from slabcalc.model.settings import Settings

COARSE_ITEMS = 100      # a class with fewer sampled items than this is named as coarse
ROOM_CHUNKS = 20        # sampled chunks of each class the workload uses that -m must be able to hold


class SampleError(SlabcalcError, ValueError):
    """A sample rate that cannot give a sample (a usage error)."""


class TooCoarse(SampleError):
    """A rate at which -m cannot hold :data:`ROOM_CHUNKS` sampled chunks of each class the workload
    uses; ``smallest`` is the smallest rate that can (1: none below the whole replay)."""

    def __init__(self, message: str, smallest: float):
        super().__init__(message)
        self.smallest = smallest


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
    drawn: bool = False     # the operations were sampled already (``--sampled``: a warehouse's export)
    left_out: Callable[[], int] | None = None   # drawn by the reader as it read: the operations it left out

    def count_reads(self, engine) -> None:
        """Count each key's gets and hits as ``engine`` answers them (its ``on_get``)."""
        reads = self.reads

        def counted(key, found):
            seen = reads.get(key)
            if seen is None:
                reads[key] = seen = [0, 0]
            seen[0] += 1
            seen[1] += found
        engine.on_get = counted

    def filter(self, operations: Iterable[tuple], room: "Room | None" = None) -> Iterator[tuple]:
        """The operations (``(time, op, key, ...)``) of the keys whose hash is under the rate.

        With ``room``, every operation's item (sampled or not) is placed as it is read; once the
        workload's classes leave no room at the rate, the rest is read without replaying it (the
        smallest rate that has room needs every class) and :class:`TooCoarse` is raised."""
        limit = HASH_SPACE + 1 if self.drawn else threshold(self.rate)   # drawn: every one is kept
        ops = kept = 0
        if room is not None:        # every set is placed: what room.add does for a size it knows, here
            ntotal, class_at, used = room._ntotal, room._class_at, room.classes
        try:
            for op in operations:
                ops += 1
                if (room is not None and (op[1] == SET or op[1] == FILL)
                        and class_at.get(ntotal(op[3], op[4], op[6])) not in used and room.add(op[3], op[4], op[6])):
                    for op in operations:
                        ops += 1
                        if op[1] == SET or op[1] == FILL:
                            room.add(op[3], op[4], op[6])
                    room.check()
                if limit > HASH_SPACE or key_hash(op[2]) < limit:
                    kept += 1
                    yield op
        finally:
            self.ops, self.kept = ops + (self.left_out() if self.left_out is not None else 0), kept


class Room:
    """The classes a workload stores in, found as its items are placed, and the smallest sample rate
    at which ``settings``' ``-m`` holds :data:`ROOM_CHUNKS` sampled chunks of each at once.

    ``N`` chunks of class ``c`` take ``N / (R * perslab_c)`` of its pages at rate ``R``, each page
    ``page_length_c`` bytes of ``-m`` (``do_slabs_newslab``, 1.6.18 slabs.c:369): the smallest
    rate is ``N * sum(page_length_c / perslab_c) / -m`` over the classes used, an item of several
    chunks (1.6.18 items.c do_item_alloc_chunk) using each class it has a chunk in."""

    def __init__(self, settings: Settings, rate: float = 1.0):
        self.settings, self.limit, self.rate = settings, settings.maxbytes, rate
        self._table = slab_classes(settings)
        self._by_id = {c.id: c for c in self._table}
        self._ntotal = ntotal_function(settings)
        self._max_single = min(self._table[-1].chunk_size, settings.item_size_max)
        self._class_at: dict[int, int] = {}      # ntotal -> class, as the items are met
        self._large: dict[tuple, tuple] = {}      # (key, value, flags) -> the classes of its chunks
        self.classes: set[int] = set()
        self.need = Fraction(0)          # sum of page_length_c / perslab_c over self.classes

    def add(self, key_size: int, value_size: int, flags: int) -> bool:
        """Place one item (every set of a workload: kept cheap); True if it used a new class and
        the classes so far leave no room at ``self.rate``."""
        size = self._ntotal(key_size, value_size, flags)
        if size <= self._max_single:
            cls = self._class_at.get(size)
            if cls is None:
                cls = self._class_at[size] = class_for(self._table, size).id
            return cls not in self.classes and self._grew((cls,))
        spec = (key_size, value_size, flags)
        used = self._large.get(spec)
        if used is None:            # an item of several chunks, or too large for memcached (no class)
            placement = place(self.settings, key_size, value_size, flags, self._table)
            used = self._large[spec] = (() if placement.status == TOO_LARGE
                                        else tuple(c.class_id for c in placement.chunks))
        return not self.classes.issuperset(used) and self._grew(used)

    def _grew(self, used: Iterable[int]) -> bool:
        for cls in set(used) - self.classes:
            self.classes.add(cls)
            c = self._by_id[cls]
            self.need += Fraction(self.settings.page_length(c.chunk_size, c.perslab), c.perslab)
        return not self.fits(self.rate)

    def smallest(self) -> Fraction:
        """The smallest rate with room (may be over 1: no sample has room)."""
        if not self.limit:
            return Fraction(0)
        return ROOM_CHUNKS * self.need / self.limit

    def fits(self, rate: float) -> bool:
        # a rate printed to three figures (rounded up) must pass: a float's own error is forgiven
        return rate >= 1 or rate >= float(self.smallest()) * (1 - 1e-9)

    def check(self) -> None:
        """Raise :class:`TooCoarse` if ``self.rate`` leaves no room, naming the smallest that does."""
        rate = self.rate
        if self.fits(rate):
            return
        smallest = _rounded_up(self.smallest())
        mb = self.limit / (1 << 20)
        if smallest >= 1:
            advice = "no sample has room: replay it whole (no --sample)"
        else:
            advice = f"the smallest rate that can is --sample {smallest:g}"
        raise TooCoarse(f"--sample {rate:g} is too coarse for -m {mb:g}: a sample holds whole chunks, and "
                        f"-m {mb:g} cannot hold {ROOM_CHUNKS} sampled chunks of each of the {len(self.classes)} "
                        f"classes the workload uses; {advice}", min(smallest, 1.0))


def _rounded_up(rate: Fraction) -> float:
    """``rate`` rounded up to three significant figures."""
    if rate <= 0:
        return 0.0
    exponent = math.floor(math.log10(rate)) - 2
    step = Fraction(10) ** exponent
    return float(math.ceil(rate / step) * step)


def room_for(settings: Settings, operations: Iterable[tuple], rate: float = 1.0) -> Room:
    """The :class:`Room` of a workload held in memory (a curve's): every item it stores placed."""
    room = Room(settings, rate)
    for op in operations:
        if op[1] == SET or op[1] == FILL:
            room.add(op[3], op[4], op[6])
    return room


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
    drawn: bool = False      # sampled before it was read (``--sampled``): ``ops`` are the sample's

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
    info = Sample(rate, sampled.ops, sampled.kept, **errors(sim, rate, sampled.reads),
                  drawn=sampled.drawn and sampled.left_out is None)
    if rate == 1:
        return replace(sim, sample=info)
    finding = sim.finding
    return replace(sim, classes=tuple(_scaled_copy(r, rate) for r in sim.classes),
                   totals=replace(_scaled_copy(sim.totals, rate), ops=sampled.ops),
                   finding=None if finding is None else _scaled_copy(finding, rate),
                   timeline=tuple(_scaled_copy(row, rate) for row in sim.timeline), sample=info, snapshots=())


__all__ = ["HASH_SPACE", "COARSE_ITEMS", "ROOM_CHUNKS", "Room", "Sample", "SampleError", "Sampled", "TooCoarse",
           "key_hash", "check_rate", "room_for",
           "scale_back", "errors"]
