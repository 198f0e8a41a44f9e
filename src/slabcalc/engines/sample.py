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
and each page holds ``R`` of its chunks -- a class's k pages hold the sum of
their shares rounded to the nearest whole chunk, so a class of 2 chunks a page
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
(2 a page) is 50 pages.  The carry keeps a class within half a chunk of its pages' share, either
way (rounded, not cut: cut, every class held half a chunk less on average, and a 5 % sample of
``-m 1024`` 2.4 % less memory than it stands for), and a class takes pages until one holds a
chunk, so the error of each class's memory is at most one sampled chunk.  That is small only
against a holding of many chunks: a sample is made only when ``-m`` could hold
:data:`ROOM_CHUNKS` sampled chunks of every class the workload stores in, all at once
(:class:`Room`) -- one chunk is then at most a twentieth of such a holding, inside the 5 %
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

from slabcalc.engines.sample_error import (COARSE_ITEMS, Z95, adjusted, coarse, coarse_widening, evicted_error,
                                          footprint, of_gets, resident_spread)
from slabcalc.engines.results import Simulation
from slabcalc.engines.sample_pass import GETS, KEPT, OPS, counted, counting_gets, passed
from slabcalc.errors import SlabcalcError
from slabcalc.model.classes import class_for, slab_classes
from slabcalc.model.item import ntotal_function
from slabcalc.model.ops import FILL, SET
from slabcalc.model.placement import TOO_LARGE, place
from slabcalc.model.sampling import HASH_SPACE, key_hash, threshold
from slabcalc.model.settings import Settings

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
    ``reads`` each sampled key's ``[gets, hits, operations, sets, fills, bytes]`` (:meth:`count_reads`,
    :meth:`counted`), for the errors of the hit ratio and the evictions."""

    rate: float
    ops: int = 0
    kept: int = 0
    reads: dict = field(default_factory=dict)
    drawn: bool = False     # the operations were sampled already (``--sampled``: a warehouse's export)
    left_out: Callable[[], int] | None = None   # drawn by the reader as it read: the operations it left out
    left_out_gets: Callable[[], int] | None = None   # and the gets (and fills) among them, when it counts them
    # drawn before: given the file's own operations and gets, once read, its whole log's (None: not stated)
    log: Callable[[int, int], tuple[int, int] | None] | None = None
    gets: int | None = None     # the gets (and fills) read, sampled or not, when they are known
    logged: bool = False        # ``ops`` and ``gets`` are the counts ``log`` gave

    @property
    def whole(self) -> bool:
        """Every operation read, sampled or not, is known (and the gets too, but for a library caller's
        reader that does not count them): the hit ratio is adjusted to them (:func:`errors`)."""
        return not self.drawn or self.left_out is not None or self.logged

    def count_reads(self, engine) -> None:
        """Count each key's gets and hits as ``engine`` answers them (its ``on_get``)."""
        engine.on_get = counting_gets(self.reads)

    def counted(self, operations: Iterable[tuple]) -> Iterator[tuple]:
        """``operations`` (the sample's, keyed as the engine keys them), each key's operations, sets and
        fills counted as they pass, and the key and value bytes of its last set or fill."""
        return counted(self.reads, operations)

    def filter(self, operations: Iterable[tuple], room: "Room | None" = None) -> Iterator[tuple]:
        """The operations (``(time, op, key, ...)``) of the keys whose hash is under the rate.

        With ``room``, every operation's item (sampled or not) is placed as it is read; once the
        workload's classes leave no room at the rate, the rest is read without replaying it (the
        smallest rate that has room needs every class) and :class:`TooCoarse` is raised.  Once the
        operations are read (or reading stops), ``ops``, ``kept`` and ``gets`` say what was read."""
        limit = HASH_SPACE + 1 if self.drawn else threshold(self.rate)   # drawn: every one is kept
        counts = [0, 0, 0]
        return passed(operations, limit, room, counts, lambda finished: self._read(counts, finished))

    def _read(self, counts: list[int], finished: bool) -> None:
        """What :meth:`filter` read (``counts``: operations, kept, gets), once it stops; ``finished``:
        every operation read (then a drawn sample's log gives its whole log's counts)."""
        ops, kept, gets = counts[OPS], counts[KEPT], counts[GETS]
        logged = self.log(ops, gets) if finished and self.log is not None else None
        self.ops, self.kept = ops + (self.left_out() if self.left_out is not None else 0), kept
        if not self.drawn:
            self.gets = gets                 # every operation passed here
        elif self.left_out_gets is not None:
            self.gets = gets + self.left_out_gets()
        if logged is not None:
            (self.ops, self.gets), self.logged = logged, True


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
    hit_ratio: float | None  # the estimate of the node's: the sample's, adjusted to ``ops`` when they are known
    hit_ratio_error: float | None     # 95 % half-width of ``hit_ratio`` (:func:`errors`)
    evicted_error: int       # 95 % half-width of the scaled evictions (:func:`errors`)
    coarse_classes: tuple[int, ...] = ()     # classes holding fewer than COARSE_ITEMS sampled items
    drawn: bool = False      # sampled before it was read (``--sampled``)
    sampled_hit_ratio: float | None = None   # the sample's own hits / gets, unadjusted
    sampled_hit_ratio_error: float | None = None    # its 95 % half-width (sampled keys as clusters)
    adjusted: bool = False   # ``ops`` are every operation read, sampled or not, and ``hit_ratio`` adjusted to
    #                          them; False: drawn before without its log's counts (``ops`` are the sample's)
    widened: float = 1.0     # both half-widths' factor for the pages in coarse classes (:func:`coarse_widening`)

    @property
    def scale(self) -> float:
        return 1 / self.rate



def errors(sim: Simulation, rate: float, reads: dict | None = None, ops: int | None = None,
           gets: int | None = None) -> dict:
    """The estimate of the node's hit ratio from a sampled replay (``sim``, not yet scaled) and the 95 %
    intervals of it and of the scaled evictions, and the classes of few items.

    The sample draws keys, not requests: a hot key is in it with all its gets or not at all.  With
    Zipf-like keys a few hottest keys make a tenth or more of the gets, nearly all hits, and a 5 %
    sample mostly misses them: the sample's own ratio of hits to gets is then low, and the spread of
    its keys, which lack them, says nothing of it (issue 39: the full figure outside the stated error,
    always below).  What a missing hot key does not move is the misses (a hot key misses once), so
    when ``gets`` (every get read, sampled or not: the reader counts those it leaves out) is known
    the miss ratio is the sampled misses over ``R * gets``, with the misses' variance over sampled
    keys, ``(1 - R) sum m_k^2 / (R gets)^2`` (SHARDS_adj's correction for a trace of reads).  Else,
    when ``ops`` (every operation read, sampled or not) is known, the estimate of the miss ratio is
    the sampled misses ``A`` over the gets ``C`` corrected by how many operations the sample drew
    against how many it was expected to draw, ``R * ops``: ``theta = A / C * B / (R * ops)``, ``B``
    the sampled operations -- the misses scaled by ``1 / R`` over the gets estimated as ``ops`` times
    the sample's gets per operation (the adjustment of SHARDS_adj, Waldspurger et al., FAST '15, made for a
    cache's misses).  Its variance is that of a product of ratios over sampled clusters (Cochran,
    *Sampling Techniques*, 6.11, Poisson sampling of keys at ``rate``), linearised: ``theta^2 (1 - R)
    sum_k (m_k / A + n_k / B - g_k / C)^2`` over the sampled keys' misses, operations and gets
    (``reads``).  Without ``ops`` (a sample drawn before: ``--sampled``) the estimate is the sample's
    ratio ``A / C`` and the ``n_k`` term drops; without ``reads``, gets are taken as independent
    (binomial), which understates it for skewed keys.

    The evictions ``E`` scaled by ``1 / R`` have the variance ``(1 - R) / R^2 sum_k e_k^2``; a key's
    evictions are not counted, but its allocations ``a_k`` (sets, and a fill's misses) are, and an
    allocation evicts with ``p = E / sum a_k``: ``sum e_k^2`` is taken as ``p (1 - p) sum a_k +
    p^2 sum a_k^2`` (binomial evictions of each key's allocations; ``E`` when each key allocates once).
    A memory that evicts holds as many items as their chunk sizes let it, and the sample's resident
    items' mean size is chance too: :func:`~slabcalc.engines.sample_error.resident_spread` adds its variance.  Both intervals also
    carry the chance in the sampled keys' bytes, which moves hits and evictions together
    (:func:`footprint`).
    """
    t = sim.totals
    own = t.hits / t.gets if t.gets else None
    if rate == 1:           # the whole workload: no chance
        return dict(hit_ratio=own, hit_ratio_error=0.0 if t.gets else None, evicted_error=0,
                    sampled_hit_ratio=own, sampled_hit_ratio_error=0.0 if t.gets else None)
    reads = reads or {}
    if not t.gets:
        ratio = own_error = ratio_error = None
    elif reads:
        own_error = Z95 * math.sqrt((1 - rate) * sum((h - own * g) ** 2 for g, h, *_ in reads.values())) / t.gets
        ratio, ratio_error = own, own_error
        if gets:
            ratio, ratio_error = of_gets(reads, rate, t.gets - t.hits, gets)
        elif ops:
            ratio, ratio_error = adjusted(reads, rate, t.gets, t.gets - t.hits, ops)
    else:
        own_error = ratio_error = Z95 * math.sqrt(own * (1 - own) / t.gets)
        ratio = own
    slope, spread = footprint(reads, rate, t.hits) if t.evicted and reads else (0.0, 0.0)
    if ratio_error is not None and slope:
        ratio_error = math.hypot(ratio_error, Z95 * slope / t.gets * math.sqrt(spread))
    # fewer bytes in the sample mean both more hits (fewer allocations) and more items held: both lower
    # the evictions, so the two terms' deviations add, not their variances
    resident = (math.sqrt(resident_spread(sim)) + slope * math.sqrt(spread / (1 - rate))) ** 2 if t.evicted else 0.0
    evicted_half = evicted_error(reads, rate, t.evicted, resident)
    widen = coarse_widening(sim) if t.evicted else 1.0
    if ratio_error is not None:
        ratio_error *= widen
    return dict(hit_ratio=ratio, hit_ratio_error=ratio_error, evicted_error=round(evicted_half * widen), widened=widen,
                sampled_hit_ratio=own, sampled_hit_ratio_error=own_error,
                coarse_classes=tuple(r.slab_class.id for r in sim.classes if coarse(r)))


# counted in the node's pages (a sampled replay's pages are the node's): never scaled
PAGE_FIELDS = ("page_length", "pages", "moved_in", "moved_out", "total_malloced", "global_page_pool",
               "pages_moved", "pool_pages", "class_id", "peak_time", "peak_class")


def _scaled(value, rate: float):
    return round(value / rate) if isinstance(value, int) and not isinstance(value, bool) else value


def _scaled_copy(record, rate: float):
    return replace(record, **{f.name: _scaled(getattr(record, f.name), rate)
                              for f in fields(record) if f.name not in PAGE_FIELDS})


def scale_back(sim: Simulation, sampled: Sampled) -> Simulation:
    """The sampled replay's counts scaled by ``1 / rate`` into the node's figures, with its :class:`Sample`.
    When every operation read is known (:attr:`Sampled.whole`), the gets and hits are the adjusted estimate
    (:func:`errors`): the gets the sample's per operation times the operations read, the misses
    scaled by ``1 / rate``, the hits the difference."""
    rate, whole = sampled.rate, sampled.whole
    info = Sample(rate, sampled.ops, sampled.kept, **errors(sim, rate, sampled.reads, sampled.ops if whole else None,
                                                            sampled.gets if whole else None),
                  drawn=sampled.drawn and sampled.left_out is None, adjusted=whole)
    if rate == 1:
        return replace(sim, sample=info)
    finding = sim.finding
    totals = replace(_scaled_copy(sim.totals, rate), ops=sampled.ops)
    if whole and sampled.kept and sim.totals.gets and info.hit_ratio is not None:
        gets = sampled.gets or round(sim.totals.gets * sampled.ops / sampled.kept)
        misses = min(gets, round((1 - info.hit_ratio) * gets))
        totals = replace(totals, gets=gets, hits=gets - misses, misses=misses)
    return replace(sim, classes=tuple(_scaled_copy(r, rate) for r in sim.classes), totals=totals,
                   finding=None if finding is None else _scaled_copy(finding, rate),
                   timeline=tuple(_scaled_copy(row, rate) for row in sim.timeline), sample=info, snapshots=())


__all__ = ["HASH_SPACE", "COARSE_ITEMS", "ROOM_CHUNKS", "Room", "Sample", "SampleError", "Sampled", "TooCoarse",
           "key_hash", "check_rate", "room_for",
           "scale_back", "errors"]
