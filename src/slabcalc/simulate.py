"""Replay a workload under ``-m``: pages, per-class LRUs, expiry, evictions, calcification.

The engine runs memcached's own synchronous paths, driven by the workload's
clock, for the compat allocation path of 1.4.24+ and of 1.5+/1.6 started with
``-o no_modern`` (or ``-o no_lru_maintainer``), read from 1.6.18's
``items.c`` / ``slabs.c`` / ``proto_text.c``:

``do_slabs_newslab``
    A page of ``page_length`` bytes (``size * perslab``, or the whole page
    with ``slab_reassign`` or chunked items) is refused when
    ``total_malloced + page > -m`` -- except a class's first page, which is
    always granted (``p->slabs > 0``).  Pages never leave their class.
``do_slabs_alloc`` / ``do_slabs_free``
    A class's free chunks (all of a new page, and every freed chunk) are
    handed out before a new page is asked for.  memcached reuses the last
    freed chunk first; which chunk is reused changes no count, so a count of
    free chunks per class is exact.
``do_item_alloc_pull``
    Up to 10 rounds of: ``lru_pull_tail`` without evicting (look at up to 5
    items at the class's LRU tail, reclaim the expired ones -- ``exptime <
    current_time``, strictly -- and stop at the first live one); take a chunk
    (free list, else a new page); when none, ``lru_pull_tail`` evicting (the
    same walk, evicting the first live item); when that removed nothing, give
    up: ``outofmemory``.
``do_item_get``
    An item whose ``exptime <= current_time`` is freed on access (get, touch,
    delete, overwrite); a hit moves the item to the LRU head only when it
    was last bumped more than 60 s ago (``ITEM_UPDATE_INTERVAL``).
``process_update_command`` / ``do_store_item``
    A set allocates the new item first (which may evict, even the key's own
    old item) and only then releases the old one; a set memcached cannot
    store (too large, out of memory) deletes the key's old item.
Chunked items (``ntotal > slab_chunk_max``)
    A header chunk from the class of the header, then one chunk at a time
    for the value: full chunks from the largest class, the tail from the
    smallest class that fits (from 1.6.17 falling back to a full chunk when
    that class has nothing); the item lives in the largest class's LRU.

memcached's clock (``current_time``) has one-second resolution: the workload
time ``t`` is ``current_time = floor(t)``.  A TTL is a duration in seconds:
``exptime = current_time + ttl``.

The 1.5+ defaults (segmented HOT/WARM/COLD LRU, LRU crawler, slab automover)
depend on background threads and timers: for them :mod:`slabcalc.segmented`
runs the segmented LRU's synchronous rules and the LRU maintainer as a stated
policy, and the report says plainly that it is a model, not a replay (with
``--automove``, or for 1.4.x ``-o lru_maintainer``, the compat path runs, as
a model).
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Sequence

from .classes import SlabClass, class_for, slab_classes
from .item import ntotal_function
from .placement import CHUNKED, TOO_LARGE, check_placeable, place
from .settings import Settings, with_overrides

SET, GET, DELETE, TOUCH = range(4)
OP_NAMES = ("set", "get", "delete", "touch")

ITEM_UPDATE_INTERVAL = 60   # memcached.h: a hit bumps an item at most once a minute
LRU_PULL_TRIES = 5          # items.c lru_pull_tail(): tries = 5
ALLOC_ROUNDS = 10           # items.c do_item_alloc_pull(): for (i = 0; i < 10; i++)
FIRST_COMPAT_RELEASE = (1, 4, 24)   # lru_pull_tail() arrived in 1.4.24

# One list per stored item: [lru class, exptime (0 = never), time of last bump, fetched,
# chunks].  ``chunks`` is None for an item in one chunk of its LRU's class, else the class
# of every chunk it holds (header first).
_CLS, _EXP, _TIME, _FETCHED, _CHUNKS = range(5)


class SimulationError(ValueError):
    """A configuration or workload the engine does not model."""


@dataclass(frozen=True)
class Model:
    """What the engine replays: the release, its LRU and whether counts are exact."""

    release: str
    lru: str          # "compat" (one LRU per class) or "segmented" (1.5+ defaults)
    exact: bool
    text: str         # one line for every report


def lru_mode(settings: Settings, suboptions: Sequence[str] = ()) -> str:
    """``compat`` or ``segmented``: the LRU a server of these settings runs.

    ``suboptions`` are the ``-o`` words in order (``no_modern``, ...).  1.4.x
    runs one LRU per class unless ``-o lru_maintainer`` or (1.4.29+)
    ``-o modern``; 1.5+ runs the segmented LRU unless ``-o no_modern`` or
    ``-o no_lru_maintainer`` (``memcached.c main()``: both clear
    ``settings.lru_segmented``; ``lru_maintainer`` sets it again).
    """
    release = _version(settings.profile.release)
    segmented = release >= (1, 5, 0)
    for word in suboptions:
        name = word.partition("=")[0]
        if name in ("no_modern", "no_lru_maintainer"):
            segmented = False
        elif name == "lru_maintainer" or (name == "modern" and (1, 4, 29) <= release < (1, 5, 0)):
            segmented = True
    return "segmented" if segmented else "compat"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def describe_model(settings: Settings, lru: str, automove: float | None = None) -> Model:
    """The model line printed with every simulation."""
    p = settings.profile
    release = _version(p.release)
    if release < FIRST_COMPAT_RELEASE:
        raise SimulationError(f"simulate models memcached 1.4.24 and later (lru_pull_tail); "
                              f"{p.release} reuses expired tail items by another rule")
    if p.chunked == "eager" and settings.chunked_items:
        raise SimulationError(f"simulate does not model {p.release}'s chunked items "
                              f"(1.4.29-1.4.35 take every chunk from the largest class)")
    limit = f"-m {settings.maxbytes >> 20}" if settings.maxbytes else "-m 0 (no limit)"
    if automove is not None:
        text = (f"memcached {p.release}, compat LRU (one per class), {limit}, with --automove {automove:g}: "
                f"a MODEL, not a replay: at most one page every {automove:g} s moves to a class out of "
                f"chunks from the class with the most free chunks, else the oldest LRU tail "
                f"(memcached's automover decides on a background thread)")
        return Model(p.release, lru, False, text)
    if lru == "compat":
        text = (f"memcached {p.release}, compat LRU (one per class), no page moves, {limit}: "
                f"a replay of the synchronous allocation path, exact")
        return Model(p.release, lru, True, text)
    if release >= (1, 5, 0):
        text = (f"memcached {p.release}, segmented HOT/WARM/COLD LRU, no page moves, {limit}: a MODEL, "
                f"not a replay: 1.6.18's synchronous LRU rules, the LRU maintainer's juggle applied once "
                f"per workload second, no LRU crawler, no slab automover")
        return Model(p.release, lru, False, text)
    text = (f"memcached {p.release} defaults run a segmented LRU with background threads "
            f"(LRU maintainer, crawler, slab automover); this is a MODEL, not a replay: the compat "
            f"LRU path without page moves, {limit}; start memcached with -o no_modern to compare")
    return Model(p.release, lru, False, text)


@dataclass(frozen=True)
class ClassResult:
    """One class at the end of the workload (``stats slabs`` / ``stats items`` names)."""

    slab_class: SlabClass
    page_length: int
    pages: int          # total_pages
    items: int          # number: items in this class's LRU
    used_chunks: int
    free_chunks: int
    evicted: int
    evicted_nonzero: int
    evicted_unfetched: int
    reclaimed: int
    expired_unfetched: int
    outofmemory: int
    hits: int           # get_hits of items in this class
    misses: int         # gets of keys whose item this class evicted or expired
    expired_items: int  # items still linked but past their exptime at the end
    expired_bytes: int  # chunk bytes those items hold
    moved_in: int = 0   # pages moved to this class (--automove)
    moved_out: int = 0  # pages moved away (its items on them evicted: counted in evicted)


@dataclass(frozen=True)
class Totals:
    ops: int
    sets: int
    gets: int
    hits: int
    misses: int
    deletes: int
    delete_hits: int
    touches: int
    touch_hits: int
    stored: int
    too_large: int
    chunk_failures: int      # chunked sets that ran out of memory after their header ("during read")
    outofmemory: int
    evicted: int
    reclaimed: int
    get_expired: int         # found past exptime (and freed) by a get, touch, delete or overwrite
    curr_items: int
    total_malloced: int
    pages: int
    pages_moved: int = 0


@dataclass(frozen=True)
class Finding:
    """Calcification: a class evicting while other classes hold reusable memory."""

    evicting: tuple[int, ...]        # classes that evicted
    evicted: int
    free_bytes: int                  # free chunk bytes in the other classes (end of workload)
    expired_bytes: int               # chunk bytes of expired items in the other classes (end)
    holders: tuple[int, ...]         # the other classes holding them, most first
    peak_free_bytes: int             # most free chunk bytes elsewhere seen at an eviction
    peak_time: float | None          # workload time of that eviction
    peak_class: int | None

    @property
    def idle_bytes(self) -> int:
        return self.free_bytes + self.expired_bytes


@dataclass(frozen=True)
class TimelineRow:
    time: float
    class_id: int
    pages: int
    items: int
    evicted: int         # evictions in this class since the previous row
    evicted_total: int


@dataclass(frozen=True)
class Simulation:
    settings: Settings
    model: Model
    classes: tuple[ClassResult, ...]   # every class that holds a page
    totals: Totals
    finding: Finding | None
    timeline: tuple[TimelineRow, ...]
    end_time: float | None


class Engine:
    """memcached's memory state, changed one operation at a time (see the module's rules)."""

    def __init__(self, settings: Settings, lru: str = "compat", automove: float | None = None):
        if automove is not None:
            settings = with_overrides(settings, slab_reassign=True)   # page moves need equal pages
        classes = slab_classes(settings)
        check_placeable(settings, classes)
        self.settings, self.classes, self.lru = settings, classes, lru
        n = len(classes) + 1
        self.size = [0] + [c.chunk_size for c in classes]
        self.perslab = [0] + [c.perslab for c in classes]
        self.page_len = [0] + [settings.page_length(c.chunk_size, c.perslab) for c in classes]
        self.largest = classes[-1].id
        self.limit = settings.maxbytes
        self.malloced = 0
        self.pages = [0] * n
        self.free = [0] * n
        self.lrus = [OrderedDict() for _ in range(n)]
        self.index: dict = {}
        self.gone: dict = {}      # key -> class that evicted or expired it (misses by class)
        self.evicted = [0] * n
        self.evicted_nonzero = [0] * n
        self.evicted_unfetched = [0] * n
        self.reclaimed = [0] * n
        self.expired_unfetched = [0] * n
        self.outofmemory = [0] * n
        self.automove, self.last_move = automove, None
        self.moved_in, self.moved_out, self.moved_evictions = [0] * n, [0] * n, [0] * n
        self.hits = [0] * n
        self.misses = [0] * n
        self.counts = {"sets": 0, "gets": 0, "hits": 0, "misses": 0, "deletes": 0, "touches": 0,
                       "delete_hits": 0, "touch_hits": 0, "too_large": 0, "chunk_failures": 0, "get_expired": 0, "ops": 0}
        self.chunk_fallback = settings.profile.chunked == "lazy_fallback"
        self.chunk_header = settings.profile.chunk_header or 0
        self.ntotal = ntotal_function(settings)
        self.max_single = min(classes[-1].chunk_size, settings.item_size_max)
        self._class_of: dict[int, int] = {}
        self._shapes: dict[tuple, tuple | None] = {}
        self.peak = (0, None, None)          # free bytes elsewhere, time, class
        self._peak_checked = None
        self.now = 0
        self.time = None

    # -- the slab allocator ----------------------------------------------------

    def release(self, key, rec) -> None:
        """Unlink an item and give its chunks back to their classes."""
        del self.lrus[rec[_CLS]][key]
        del self.index[key]
        chunks = rec[_CHUNKS]
        free = self.free
        if chunks is None:
            free[rec[_CLS]] += 1
        else:
            for cls in chunks:
                free[cls] += 1

    def alloc_pull(self, cls: int, rounds: int = ALLOC_ROUNDS) -> bool:
        """``do_item_alloc_pull`` in compat mode: a chunk of ``cls``, reclaiming and evicting.

        Each round: ``lru_pull_tail`` without evicting, ``slabs_alloc``, and
        when that fails ``lru_pull_tail`` evicting (the same walk, the first
        live item evicted); a walk that removed nothing ends it (out of memory).
        Written out in one function: it runs for every eviction.
        """
        lru, free, now = self.lrus[cls], self.free, self.now
        release, gone = self.release, self.gone
        for _ in range(rounds):
            for evict in (False, True):
                removed = 0
                for _ in range(LRU_PULL_TRIES):
                    if not lru:
                        break
                    key = next(iter(lru))
                    rec = lru[key]
                    exptime = rec[_EXP]
                    if exptime and exptime < now:      # strictly: a get sees it a second earlier
                        self.reclaimed[cls] += 1
                        if not rec[_FETCHED]:
                            self.expired_unfetched[cls] += 1
                        release(key, rec)
                        gone[key] = cls
                        removed += 1
                        continue
                    if evict:
                        self.evicted[cls] += 1
                        if exptime:
                            self.evicted_nonzero[cls] += 1
                        if not rec[_FETCHED]:
                            self.evicted_unfetched[cls] += 1
                        release(key, rec)
                        gone[key] = cls
                        removed += 1
                        if self._peak_checked != now:
                            self._note_peak(cls)
                    break
                if evict:
                    if removed <= 0:
                        return False
                    break
                # slabs_alloc: the free chunks, else a new page (do_slabs_newslab)
                if not free[cls]:
                    length = self.page_len[cls]
                    if not (self.limit and self.malloced + length > self.limit and self.pages[cls] > 0):
                        self.pages[cls] += 1
                        self.malloced += length
                        free[cls] += self.perslab[cls]
                if not free[cls] and self.automove is not None:
                    self.move_page(cls)
                if free[cls]:
                    free[cls] -= 1
                    return True
        return False

    def move_page(self, receiver: int) -> bool:
        """``--automove``: one page to ``receiver`` from the class with the most idle memory.

        A policy model, not memcached's automover: at most one page every
        ``automove`` seconds of workload time, taken from a class with at
        least two pages -- the one with a page's worth of free chunks and the
        most free bytes, else the one with the oldest LRU tail.  The donor
        gives up a page's worth of chunks: free ones first, then its LRU tail
        items (reclaimed if expired, else evicted).  Pages are all
        ``slab_page_size`` long (slab_reassign), so ``total_malloced`` stays.
        """
        now = self.now
        if self.last_move is not None and now - self.last_move < self.automove:
            return False
        size, free, pages, perslab, lrus = self.size, self.free, self.pages, self.perslab, self.lrus
        best, donor = None, None
        for c in range(1, len(size)):
            if c == receiver or pages[c] < 2:
                continue
            lru = lrus[c]
            age = now - lru[next(iter(lru))][_TIME] if lru else 0
            score = (free[c] >= perslab[c], free[c] * size[c], age)
            if best is None or score > best:
                best, donor = score, c
        if donor is None:
            return False
        lru, need = lrus[donor], perslab[donor]
        taken = min(free[donor], need)
        free[donor] -= taken
        while taken < need and lru:
            key = next(iter(lru))
            rec = lru[key]
            exptime = rec[_EXP]
            if exptime and exptime < now:
                self.reclaimed[donor] += 1
            else:
                self.evicted[donor] += 1
                self.moved_evictions[donor] += 1
            self.release(key, rec)
            self.gone[key] = donor
            more = min(free[donor], need - taken)
            free[donor] -= more
            taken += more
        if taken < need:         # chunks held by other classes' chunked items: no whole page
            free[donor] += taken
            return False
        pages[donor] -= 1
        pages[receiver] += 1
        free[receiver] += perslab[receiver]
        self.moved_in[receiver] += 1
        self.moved_out[donor] += 1
        self.last_move = now
        return True

    def _note_peak(self, cls: int) -> None:
        """Free chunk bytes outside ``cls`` at an eviction (checked once per second)."""
        self._peak_checked = self.now
        size, free = self.size, self.free
        elsewhere = sum(size[c] * free[c] for c in range(1, len(size)) if c != cls)
        if elsewhere > self.peak[0]:
            self.peak = (elsewhere, self.time, cls)

    # -- items ------------------------------------------------------------------

    def class_of(self, ntotal: int) -> int:
        """``slabs_clsid`` of an item that fits one chunk."""
        cls = self._class_of.get(ntotal)
        if cls is None:
            cls = self._class_of[ntotal] = class_for(self.classes, ntotal).id
        return cls

    def shape(self, key_size: int, value_size: int, flags: int):
        """A larger item's chunk plan ``(header class, [(class, requested), ...])``, or None if too large."""
        spec = (key_size, value_size, flags)
        if spec in self._shapes:
            return self._shapes[spec]
        placement = place(self.settings, key_size, value_size, flags, self.classes)
        if placement.status == TOO_LARGE:
            shape = None
        elif placement.status == CHUNKED:
            head, *body = placement.chunks
            shape = (head.class_id, tuple((c.class_id, c.requested) for c in body))
        else:
            shape = (placement.chunks[0].class_id, None)
        self._shapes[spec] = shape
        return shape

    def forget(self, key) -> None:
        """A set memcached could not store deletes the key's old item (``do_item_get`` first)."""
        rec = self.index.get(key)
        if rec is not None:
            exptime = rec[_EXP]
            if exptime and exptime <= self.now:
                self.counts["get_expired"] += 1
                self.gone[key] = rec[_CLS]
            self.release(key, rec)

    def set_large(self, key, key_size: int, value_size: int, flags: int, ttl: int) -> None:
        """A set of an item above the largest chunk: chunked, or too large."""
        shape = self.shape(key_size, value_size, flags)
        if shape is None:
            self.counts["too_large"] += 1
            self.forget(key)
            return
        head, body = shape
        if body is None:                       # one chunk after all (e.g. the largest class)
            self._store(key, head, ttl, None)
            return
        largest = self.largest
        if not self.alloc_pull(head):
            self.outofmemory[largest] += 1     # counted on the item's own class (the LRU's)
            self.forget(key)
            return
        chunks = [head]
        chunk_max = self.size[largest]
        for cls, requested in body:
            if self.alloc_pull(cls):
                chunks.append(cls)
                continue
            if self.chunk_fallback and requested != chunk_max and self.alloc_pull(largest):
                chunks.append(largest)     # 1.6.17+: a full chunk instead of the small tail
                continue
            # "SERVER_ERROR Out of memory during read": the partial item is freed, the old kept
            free = self.free
            for c in chunks:
                free[c] += 1
            self.counts["chunk_failures"] += 1
            return
        self._store(key, largest, ttl, tuple(chunks))

    def _store(self, key, cls: int, ttl: int, chunks) -> None:
        """``do_store_item`` for a set: release the old item, link the new one at the head."""
        now = self.now
        old = self.index.get(key)
        if old is not None:
            exptime = old[_EXP]
            if exptime and exptime <= now:
                self.counts["get_expired"] += 1
            self.release(key, old)
        rec = [cls, now + ttl if ttl else 0, now, 0, chunks]
        self.lrus[cls][key] = rec
        self.index[key] = rec
        self.gone.pop(key, None)

    # -- the workload -------------------------------------------------------------

    def run(self, ops: Iterable[tuple], every: float | None = None) -> list[TimelineRow]:
        """Apply ``(time, op, key, key_size, value_size, ttl, flags)`` operations in order."""
        index, lrus, free, gone = self.index, self.lrus, self.free, self.gone
        hits_by, misses_by = self.hits, self.misses
        ntotal, class_of_cache, class_of = self.ntotal, self._class_of, self.class_of
        max_single, alloc_pull, release = self.max_single, self.alloc_pull, self.release
        set_large, forget = self.set_large, self.forget
        counts = self.counts
        pages, page_len, limit, evicted_by = self.pages, self.page_len, self.limit, self.evicted
        automove = self.automove is not None
        p = self.settings.profile
        binary = self.settings.suffix_rule == "binary" and p.cas == "appended"
        fixed = p.header + (p.cas_size if self.settings.use_cas else 0) + 3   # key NUL + value CRLF
        flags_size = p.flags_size
        timeline: list[TimelineRow] = []
        next_row = -1.0 if every else float("inf")     # the first operation sets the first boundary
        last_evicted = [0] * len(self.size)
        sets = gets = hits = misses = deletes = delete_hits = touches = touch_hits = expired = n = 0
        bump_after = ITEM_UPDATE_INTERVAL
        now = self.now
        t = self.time
        # Item records are lists of numbers: held off, the cyclic collector stops rescanning
        # them (and the caller's list of operations) every few hundred new records.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for t, op, key, key_size, value_size, ttl, flags in ops:
                n += 1
                if t >= next_row:
                    if next_row < 0:
                        next_row = (t // every + 1) * every
                    else:
                        self.now = now
                        next_row = self._timeline_rows(timeline, next_row, every, t, last_evicted)
                now = int(t)
                if op == SET:
                    sets += 1
                    self.now = now
                    self.time = t
                    if binary:
                        size = fixed + key_size + value_size + (flags_size if flags else 0)
                    else:
                        size = ntotal(key_size, value_size, flags)
                    if size > max_single:
                        set_large(key, key_size, value_size, flags, ttl)
                        continue
                    cls = class_of_cache.get(size) or class_of(size)
                    lru = lrus[cls]
                    if free[cls]:
                        if lru:
                            tail = lru[next(iter(lru))][_EXP]
                            if tail and tail < now:
                                got = alloc_pull(cls)
                            else:
                                free[cls] -= 1
                                got = True
                        else:
                            free[cls] -= 1
                            got = True
                    elif automove or not lru or not (limit and self.malloced + page_len[cls] > limit
                                                     and pages[cls]):
                        got = alloc_pull(cls)         # an empty LRU, or a new page: the long way
                    else:
                        # The common eviction, written out: the tail is live (else reclaim it the
                        # long way), no page can be had, so evict it, then round two of the pull.
                        victim = next(iter(lru))
                        vrec = lru[victim]
                        exptime = vrec[_EXP]
                        if (exptime and exptime < now) or vrec[_CHUNKS] is not None:
                            got = alloc_pull(cls)
                        else:
                            evicted_by[cls] += 1
                            if exptime:
                                self.evicted_nonzero[cls] += 1
                            if not vrec[_FETCHED]:
                                self.evicted_unfetched[cls] += 1
                            del lru[victim]
                            del index[victim]
                            gone[victim] = cls
                            if self._peak_checked != now:
                                self._note_peak(cls)
                            if lru:
                                tail = lru[next(iter(lru))][_EXP]
                                if tail and tail < now:           # round two reclaims first
                                    free[cls] += 1
                                    got = alloc_pull(cls, ALLOC_ROUNDS - 1)
                                else:
                                    got = True                    # the victim's chunk
                            else:
                                got = True
                    if not got:
                        self.outofmemory[cls] += 1
                        forget(key)
                        continue
                    old = index.get(key)
                    rec = [cls, now + ttl if ttl else 0, now, 0, None]
                    if old is not None:               # do_store_item: the old item goes after
                        exptime = old[_EXP]
                        if exptime and exptime <= now:
                            expired += 1
                        old_cls = old[_CLS]
                        del lrus[old_cls][key]
                        chunks = old[_CHUNKS]
                        if chunks is None:
                            free[old_cls] += 1
                        else:
                            for c in chunks:
                                free[c] += 1
                    elif gone:
                        gone.pop(key, None)
                    lru[key] = rec
                    index[key] = rec
                    continue
                rec = index.get(key)
                if op == DELETE:
                    deletes += 1
                    if rec is not None:
                        exptime = rec[_EXP]
                        if exptime and exptime <= now:
                            expired += 1
                            gone[key] = rec[_CLS]
                        else:
                            delete_hits += 1
                        release(key, rec)
                    continue
                if rec is not None:
                    exptime = rec[_EXP]
                    if exptime and exptime <= now:     # do_item_get: expired on access, freed
                        expired += 1
                        cls = rec[_CLS]
                        release(key, rec)
                        gone[key] = cls
                        rec = None
                if op == GET:
                    gets += 1
                    if rec is None:
                        misses += 1
                        cls = gone.get(key)
                        if cls:
                            misses_by[cls] += 1
                        continue
                    cls = rec[_CLS]
                    hits += 1
                    hits_by[cls] += 1
                else:
                    touches += 1
                    if rec is None:
                        continue
                    touch_hits += 1
                    cls = rec[_CLS]
                rec[_FETCHED] = 1
                if rec[_TIME] < now - bump_after:
                    rec[_TIME] = now
                    lrus[cls].move_to_end(key)
                if op == TOUCH:
                    rec[_EXP] = now + ttl if ttl else 0
        finally:
            if collecting:
                gc.enable()
            self.now, self.time = now, t
            for name, value in (("sets", sets), ("gets", gets), ("hits", hits), ("misses", misses),
                                ("deletes", deletes), ("delete_hits", delete_hits), ("touches", touches), ("touch_hits", touch_hits), ("get_expired", expired),
                                ("ops", n)):
                counts[name] += value
        if every and self.time is not None:     # the state after the last operation
            end = next_row if next_row is not None else (self.time // every + 1) * every
            self._snapshot(timeline, end, last_evicted)
        return timeline

    def _timeline_rows(self, timeline, due, every, t, last_evicted):
        """Rows for the boundary ``due``: the state before the first operation at or after it.

        A gap of several intervals gets rows at its first and last boundary
        (nothing changes in between).
        """
        self._snapshot(timeline, due, last_evicted)
        if due + every <= t:
            due += ((t - due) // every) * every
            self._snapshot(timeline, due, last_evicted)
        return due + every

    def _snapshot(self, timeline, when, last_evicted) -> None:
        for c in self.classes:
            cls = c.id
            if self.pages[cls]:
                total = self.evicted[cls]
                timeline.append(TimelineRow(when, cls, self.pages[cls], len(self.lrus[cls]),
                                            total - last_evicted[cls], total))
                last_evicted[cls] = total

    # -- results ------------------------------------------------------------------

    def expired_now(self) -> tuple[list[int], list[int]]:
        """Per class: linked items past their exptime at the current time, and their chunk bytes."""
        n = len(self.size)
        items, chunk_bytes = [0] * n, [0] * n
        now, size = self.now, self.size
        for lru_cls, lru in enumerate(self.lrus):
            for rec in lru.values():
                exptime = rec[_EXP]
                if exptime and exptime <= now:
                    items[lru_cls] += 1
                    chunks = rec[_CHUNKS]
                    if chunks is None:
                        chunk_bytes[lru_cls] += size[lru_cls]
                    else:
                        for c in chunks:
                            chunk_bytes[c] += size[c]
        return items, chunk_bytes

    def results(self, model: Model, timeline: Sequence[TimelineRow] = ()) -> Simulation:
        expired_items, expired_bytes = self.expired_now()
        rows = []
        for c in self.classes:
            cls = c.id
            if not self.pages[cls]:
                continue
            total = self.pages[cls] * c.perslab
            rows.append(ClassResult(
                c, self.page_len[cls], self.pages[cls], len(self.lrus[cls]), total - self.free[cls],
                self.free[cls], self.evicted[cls], self.evicted_nonzero[cls], self.evicted_unfetched[cls],
                self.reclaimed[cls], self.expired_unfetched[cls], self.outofmemory[cls], self.hits[cls],
                self.misses[cls], expired_items[cls], expired_bytes[cls], self.moved_in[cls],
                self.moved_out[cls]))
        k = self.counts
        totals = Totals(
            ops=k["ops"], sets=k["sets"], gets=k["gets"], hits=k["hits"], misses=k["misses"],
            deletes=k["deletes"], delete_hits=k["delete_hits"], touches=k["touches"], touch_hits=k["touch_hits"],
            stored=k["sets"] - k["too_large"] - sum(self.outofmemory) - k["chunk_failures"],
            too_large=k["too_large"], chunk_failures=k["chunk_failures"],
            outofmemory=sum(self.outofmemory), evicted=sum(self.evicted), reclaimed=sum(self.reclaimed),
            get_expired=k["get_expired"], curr_items=len(self.index),
            total_malloced=self.malloced, pages=sum(self.pages), pages_moved=sum(self.moved_in))
        return Simulation(self.settings, model, tuple(rows), totals, _finding(rows, self.peak),
                          tuple(timeline), self.time)


def _finding(rows: Sequence[ClassResult], peak) -> Finding | None:
    """Classes that evicted while other classes held free chunks or expired items."""
    evicting = tuple(r.slab_class.id for r in rows if r.evicted)
    if not evicting:
        return None
    others = [r for r in rows if r.slab_class.id not in evicting]
    idle = {r.slab_class.id: r.free_chunks * r.slab_class.chunk_size + r.expired_bytes for r in others}
    holders = tuple(sorted((c for c in idle if idle[c]), key=lambda c: (-idle[c], c)))
    free_bytes = sum(r.free_chunks * r.slab_class.chunk_size for r in others)
    expired_bytes = sum(r.expired_bytes for r in others)
    evicted = sum(r.evicted for r in rows)
    if not free_bytes and not expired_bytes and not peak[0]:
        return None
    return Finding(evicting, evicted, free_bytes, expired_bytes, holders, peak[0], peak[1], peak[2])


def simulate(settings: Settings, ops: Iterable[tuple], *, lru: str | None = None,
             every: float | None = None, automove: float | None = None) -> Simulation:
    """Replay ``ops`` (``(time, op, key, key_size, value_size, ttl, flags)``) under ``settings``.

    ``lru`` is :func:`lru_mode` of the server's ``-o`` words (``settings``
    does not keep them); None is the release's default.  ``every`` adds a
    timeline row per class every that many seconds of workload time;
    ``automove`` moves pages between classes by the policy of
    :meth:`Engine.move_page`, at most one every that many seconds.
    """
    lru = lru or lru_mode(settings)
    model = describe_model(settings, lru, automove)
    if lru == "segmented" and automove is None and _version(settings.profile.release) >= (1, 5, 0):
        from .segmented import SegmentedEngine

        engine = SegmentedEngine(settings)
    else:
        engine = Engine(settings, lru, automove)
    timeline = engine.run(ops, every=every)
    return engine.results(model, timeline)


# -- records (the stable JSON contract) --------------------------------------------

CLASS_FIELDS = ("class", "chunk_size", "pages", "items", "evicted", "reclaimed", "outofmemory", "hits",
                "misses", "used_chunks", "free_chunks", "expired_items", "free_bytes", "expired_bytes",
                "evicted_nonzero", "evicted_unfetched", "expired_unfetched", "moved_in", "moved_out")


def class_record(r: ClassResult) -> dict:
    c = r.slab_class
    return {
        "class": c.id,
        "chunk_size": c.chunk_size,
        "pages": r.pages,
        "items": r.items,
        "evicted": r.evicted,
        "reclaimed": r.reclaimed,
        "outofmemory": r.outofmemory,
        "hits": r.hits,
        "misses": r.misses,
        "used_chunks": r.used_chunks,
        "free_chunks": r.free_chunks,
        "expired_items": r.expired_items,
        "free_bytes": r.free_chunks * c.chunk_size,
        "expired_bytes": r.expired_bytes,
        "evicted_nonzero": r.evicted_nonzero,
        "evicted_unfetched": r.evicted_unfetched,
        "expired_unfetched": r.expired_unfetched,
        "moved_in": r.moved_in,
        "moved_out": r.moved_out,
    }


def totals_record(t: Totals) -> dict:
    return {
        "ops": t.ops, "sets": t.sets, "gets": t.gets, "hits": t.hits, "misses": t.misses,
        "deletes": t.deletes, "delete_hits": t.delete_hits, "touches": t.touches, "touch_hits": t.touch_hits, "stored": t.stored, "too_large": t.too_large,
        "chunk_failures": t.chunk_failures,
        "outofmemory": t.outofmemory, "evicted": t.evicted, "reclaimed": t.reclaimed,
        "get_expired": t.get_expired, "curr_items": t.curr_items,
        "total_malloced": t.total_malloced, "pages": t.pages, "pages_moved": t.pages_moved,
    }


def finding_record(f: Finding | None) -> dict | None:
    if f is None:
        return None
    return {
        "evicting_classes": list(f.evicting), "evicted": f.evicted, "free_bytes": f.free_bytes,
        "expired_bytes": f.expired_bytes, "idle_bytes": f.idle_bytes, "holding_classes": list(f.holders),
        "peak_free_bytes": f.peak_free_bytes, "peak_time": f.peak_time, "peak_class": f.peak_class,
    }


def finding_lines(f: Finding | None, moving: bool = False) -> list[tuple[str, str]]:
    """The calcification finding as (field, text) lines for a report."""
    if f is None:
        return [("calcification", "none: no class evicted while another held free chunks or expired items")]
    plural = "es" if len(f.evicting) > 1 else ""
    holders = ", ".join(map(str, f.holders[:5])) + (" ..." if len(f.holders) > 5 else "")
    lines = [("calcification",
              f"class{plural} {', '.join(map(str, f.evicting))} evicted {f.evicted} items while "
              + (f"class{'es' if len(f.holders) > 1 else ''} {holders}" if f.holders else "other classes")
              + f" held {f.idle_bytes} bytes ({f.idle_bytes / (1 << 20):.2f} MiB) at the end: "
              f"{f.free_bytes} in free chunks, {f.expired_bytes} in expired items")]
    if f.peak_free_bytes:
        lines.append(("calcification peak", f"class {f.peak_class} evicted at t={_number(f.peak_time)} while "
                                             f"other classes had {f.peak_free_bytes} bytes in free chunks"))
    lines.append(("why", ("pages move only as often as --automove allows" if moving else
                          "a page serves one class for good (no slab_reassign)")
                  + "; a chunk freed by expiry or delete is reused only by its own class"))
    return lines


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _clean(value: float | None):
    """A whole number of seconds as an int (``3``, not ``3.0``)."""
    return int(value) if value is not None and float(value).is_integer() else value


def memory_records(sim: Simulation) -> list[dict]:
    """Each class's page bytes at the end, split into used chunks and free page bytes (the unused
    chunks and the page tails); the item bytes inside chunks are not tracked (``None``)."""
    return [{"class": r.slab_class.id, "requested_bytes": None, "chunk_waste": None,
             "used_bytes": r.used_chunks * r.slab_class.chunk_size,
             "free_bytes": r.pages * r.page_length - r.used_chunks * r.slab_class.chunk_size}
            for r in sim.classes if r.pages]


def timeline_record(row: TimelineRow) -> dict:
    return {"time": _clean(row.time), "class": row.class_id, "pages": row.pages, "items": row.items,
            "evicted": row.evicted, "evicted_total": row.evicted_total}


def simulation_record(sim: Simulation, accounting=None) -> dict:
    """The stable JSON contract of ``slabcalc simulate``."""
    from .settings import settings_record

    record = {
        "settings": settings_record(sim.settings),
        "model": {"release": sim.model.release, "lru": sim.model.lru, "exact": sim.model.exact,
                  "text": sim.model.text},
        "classes": [class_record(r) for r in sim.classes],
        "totals": totals_record(sim.totals),
        "calcification": finding_record(sim.finding),
        "end_time": _clean(sim.end_time),
    }
    if accounting is not None:
        record["input"] = {"source": accounting.source, "format": accounting.format, "rows": accounting.rows,
                           "rejected": accounting.rejected,
                           "rejections": [{"line": r.line, "reason": r.reason, "text": r.text}
                                          for r in accounting.first_rejections]}
    if sim.timeline:
        record["timeline"] = [timeline_record(r) for r in sim.timeline]
    return record
