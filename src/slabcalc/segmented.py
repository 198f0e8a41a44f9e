"""The segmented HOT/WARM/COLD LRU of memcached 1.5+/1.6 defaults, as a model.

:class:`SegmentedEngine` is :class:`~slabcalc.simulate.Engine` (pages, free
chunks, chunked items, counts) with each class's one LRU split in three, and
the rules of memcached 1.6.18's ``items.c`` that run on the worker thread,
synchronously with the request:

``do_item_alloc``
    A new item is linked at the head of its class's HOT LRU, its time set to
    ``current_time`` (``temporary_ttl`` and the TEMP LRU are off by default
    and not modelled).
``do_item_alloc_pull`` (segmented)
    Up to 10 rounds, with no reclaim before allocating: take a chunk (free
    list, else a new page); when none, ``lru_pull_tail(COLD, evict)`` -- look
    at up to 5 COLD tail items, reclaim the expired ones (``exptime <
    current_time``), evict the first live one, ACTIVE or not; when that
    removed nothing, ``lru_pull_tail(HOT)`` with no byte limit and no age:
    reclaim expired HOT tail items, then move the first live one to WARM if
    ACTIVE, else to COLD (where the next round evicts it).  The rounds do not
    stop early: 10 fruitless rounds are ``outofmemory``.
``do_item_get`` (segmented)
    An item with ``exptime <= current_time`` is freed on access.  A hit on an
    item that is not ACTIVE marks it FETCHED the first time and ACTIVE the
    second; on becoming ACTIVE an item in HOT or WARM gets its time bumped
    (when more than 60 s old; it is not moved), an item in COLD is queued for
    an *asynchronous* bump (``lru_bump_async``).  A hit on an ACTIVE item
    changes nothing.  ``touch`` does the same, then sets the new exptime.

Everything else happens on the LRU maintainer thread, which memcached runs
every 1 ms to 1 s.  The model applies it as a stated policy, **once at the
start of each workload second that has operations** (with that second's
clock, before its first operation):

1. the queued bumps, in order (``lru_maintainer_bumps`` -> ``do_item_update``):
   an item still linked, in COLD and ACTIVE moves to the WARM head, ACTIVE
   cleared, its time set to now;
2. ``lru_maintainer_juggle`` for every class, repeated until it moves nothing:
   ``total_bytes`` is the item bytes (``ITEM_ntotal``) in HOT+WARM+COLD,
   ``cold_age`` the age of the COLD tail, ``hot_age = int(cold_age * 0.2)``,
   ``warm_age = int(cold_age * 2.0)``; each pass pulls the HOT tail (or, when
   that did nothing, the WARM tail) and then the COLD tail, each pull
   reclaiming up to 5 expired tail items and then deciding about the first
   live one: HOT/WARM -- ACTIVE: cleared, and from HOT moved to WARM, in WARM
   bumped to its head if its time is more than 60 s old; else moved to COLD
   when the segment holds more than ``hot_lru_pct`` 20 % / ``warm_lru_pct``
   40 % of ``total_bytes`` or the item is older than ``hot_age`` /
   ``warm_age``; COLD -- ACTIVE: cleared and moved to WARM.

Not modelled: the LRU crawler (it reclaims expired items anywhere in an LRU),
the slab automover, ``temporary_ttl``/TEMP, non-default ``hot_lru_pct`` /
``warm_lru_pct`` / ``*_max_factor``, and the real interleaving of the
maintainer with requests inside a second.
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from typing import Iterable

from .simulate import (_CLS, _EXP, _FETCHED, _TIME, ALLOC_ROUNDS, DELETE, GET, ITEM_UPDATE_INTERVAL,
                       LRU_PULL_TRIES, SET, TOUCH, Engine, TimelineRow)

HOT, WARM, COLD = range(3)
SEGMENTS = ("hot", "warm", "cold")
HOT_LRU_PCT = 20        # memcached.c settings_init(): hot_lru_pct
WARM_LRU_PCT = 40       # warm_lru_pct
HOT_MAX_FACTOR = 0.2    # hot_max_factor
WARM_MAX_FACTOR = 2.0   # warm_max_factor

# A segmented record extends the compat one: [..., segment, active, ntotal].
_SEG, _ACTIVE, _NTOTAL = 5, 6, 7


class SegmentedEngine(Engine):
    """memcached's memory under the segmented LRU: the synchronous rules, and the maintainer's
    juggle once per workload second (see the module's rules)."""

    def __init__(self, settings):
        super().__init__(settings, "segmented", None)
        n = len(self.size)
        self.lrus = [{} for _ in range(n)]            # every item of a class, for the results
        self.segs = [[OrderedDict() for _ in range(n)] for _ in SEGMENTS]
        self.seg_bytes = [[0] * n for _ in SEGMENTS]
        self.moves_to_cold = [0] * n
        self.moves_to_warm = [0] * n
        self.bumps: list = []                         # (key, record) queued by lru_bump_async
        self.maintained = None                        # the workload second of the last juggle
        self._pending_ntotal = 0

    # -- links -------------------------------------------------------------------

    def release(self, key, rec) -> None:
        del self.segs[rec[_SEG]][rec[_CLS]][key]
        self.seg_bytes[rec[_SEG]][rec[_CLS]] -= rec[_NTOTAL]
        super().release(key, rec)

    def _relink(self, key, rec, seg: int) -> None:
        """Unlink from its segment, link at the head of ``seg`` (``item_link_q``)."""
        cls = rec[_CLS]
        del self.segs[rec[_SEG]][cls][key]
        self.seg_bytes[rec[_SEG]][cls] -= rec[_NTOTAL]
        rec[_SEG] = seg
        self.segs[seg][cls][key] = rec
        self.seg_bytes[seg][cls] += rec[_NTOTAL]
        if seg == COLD:
            self.moves_to_cold[cls] += 1
        elif seg == WARM:
            self.moves_to_warm[cls] += 1

    def _store(self, key, cls: int, ttl: int, chunks) -> None:
        """``do_store_item`` for a set, as the one-LRU engine does it; the new item also goes
        to the HOT head (not ACTIVE, with its ntotal for the segments' byte limits)."""
        super()._store(key, cls, ttl, chunks)
        rec = self.index[key]
        rec += (HOT, 0, self._pending_ntotal)
        self.segs[HOT][cls][key] = rec
        self.seg_bytes[HOT][cls] += rec[_NTOTAL]

    # -- lru_pull_tail ---------------------------------------------------------------

    def pull_tail(self, cls: int, seg: int, total_bytes: int = 0, evict: bool = False, max_age: int = 0) -> int:
        """``lru_pull_tail``: items removed or moved from the tail of ``seg`` of ``cls``."""
        lru, now = self.segs[seg][cls], self.now
        removed = 0
        for _ in range(LRU_PULL_TRIES):
            if not lru:
                break
            key = next(iter(lru))
            rec = lru[key]
            exptime = rec[_EXP]
            if exptime and exptime < now:
                self.reclaimed[cls] += 1
                if not rec[_FETCHED]:
                    self.expired_unfetched[cls] += 1
                self.release(key, rec)
                self.gone[key] = cls
                removed += 1
                continue
            if seg == COLD:
                if evict:
                    self.evicted[cls] += 1
                    if exptime:
                        self.evicted_nonzero[cls] += 1
                    if not rec[_FETCHED]:
                        self.evicted_unfetched[cls] += 1
                    self.release(key, rec)
                    self.gone[key] = cls
                    removed += 1
                    if self._peak_checked != now:
                        self._note_peak(cls)
                elif rec[_ACTIVE]:
                    rec[_ACTIVE] = 0
                    self._relink(key, rec, WARM)
                    removed += 1
                break
            limit = total_bytes * HOT_LRU_PCT // 100 if seg == HOT else 0
            if limit == 0:                  # items.c: HOT falls through to WARM's limit when 0
                limit = total_bytes * WARM_LRU_PCT // 100
            if rec[_ACTIVE]:
                rec[_ACTIVE] = 0
                removed += 1
                if seg == HOT:
                    self._relink(key, rec, WARM)
                elif rec[_TIME] < now - ITEM_UPDATE_INTERVAL:    # do_item_update_nolock
                    rec[_TIME] = now
                    lru.move_to_end(key)
            elif self.seg_bytes[seg][cls] > limit or now - rec[_TIME] > max_age:
                self._relink(key, rec, COLD)
                removed += 1
            break
        return removed

    def alloc_pull(self, cls: int, rounds: int = ALLOC_ROUNDS) -> bool:
        """``do_item_alloc_pull`` with the segmented LRU (no reclaim before allocating)."""
        free = self.free
        for _ in range(rounds):
            if not free[cls]:               # slabs_alloc: a new page (do_slabs_newslab)
                length = self.page_len[cls]
                if not (self.limit and self.malloced + length > self.limit and self.pages[cls] > 0):
                    self.pages[cls] += 1
                    self.malloced += length
                    free[cls] += self.perslab[cls]
            if free[cls]:
                free[cls] -= 1
                return True
            if self.pull_tail(cls, COLD, evict=True) <= 0:
                self.pull_tail(cls, HOT)
        return False

    # -- the LRU maintainer (a policy: once per workload second) ---------------------

    def maintain(self) -> None:
        """Queued bumps, then ``lru_maintainer_juggle`` of every class until nothing moves."""
        now = self.now
        for key, rec in self.bumps:
            if self.index.get(key) is not rec:        # unlinked since: do_item_update skips it
                continue
            if rec[_SEG] == COLD and rec[_ACTIVE]:
                rec[_TIME] = now
                rec[_ACTIVE] = 0
                self._relink(key, rec, WARM)
            elif rec[_TIME] < now - ITEM_UPDATE_INTERVAL:
                rec[_TIME] = now
        self.bumps.clear()
        segs, seg_bytes = self.segs, self.seg_bytes
        for cls in range(1, len(self.size)):
            if not self.lrus[cls]:
                continue
            while True:
                cold = segs[COLD][cls]
                cold_age = now - cold[next(iter(cold))][_TIME] if cold else 0
                hot_age, warm_age = int(cold_age * HOT_MAX_FACTOR), int(cold_age * WARM_MAX_FACTOR)
                total = seg_bytes[HOT][cls] + seg_bytes[WARM][cls] + seg_bytes[COLD][cls]
                moved = 0
                for _ in range(500):
                    more = (self.pull_tail(cls, HOT, total, max_age=hot_age)
                            or self.pull_tail(cls, WARM, total, max_age=warm_age))
                    more += self.pull_tail(cls, COLD, total)
                    if not more:
                        break
                    moved += 1
                if not moved:
                    break

    # -- the workload -------------------------------------------------------------------

    def run(self, ops: Iterable[tuple], every: float | None = None) -> list[TimelineRow]:
        """Apply ``(time, op, key, key_size, value_size, ttl, flags)`` operations in order."""
        index, counts = self.index, self.counts
        p = self.settings.profile
        binary = self.settings.suffix_rule == "binary" and p.cas == "appended"
        fixed = p.header + (p.cas_size if self.settings.use_cas else 0) + 3
        timeline: list[TimelineRow] = []
        next_row = -1.0 if every else float("inf")
        last_evicted = [0] * len(self.size)
        collecting = gc.isenabled()
        gc.disable()
        try:
            for t, op, key, key_size, value_size, ttl, flags in ops:
                counts["ops"] += 1
                if t >= next_row:
                    if next_row < 0:
                        next_row = (t // every + 1) * every
                    else:
                        next_row = self._timeline_rows(timeline, next_row, every, t, last_evicted)
                self.now, self.time = int(t), t
                now = self.now
                if now != self.maintained:
                    self.maintain()
                    self.maintained = now
                if op == SET:
                    counts["sets"] += 1
                    if binary:
                        size = fixed + key_size + value_size + (p.flags_size if flags else 0)
                    else:
                        size = self.ntotal(key_size, value_size, flags)
                    self._pending_ntotal = size
                    if size > self.max_single:
                        self.set_large(key, key_size, value_size, flags, ttl)
                        continue
                    cls = self.class_of(size)
                    if not self.alloc_pull(cls):
                        self.outofmemory[cls] += 1
                        self.forget(key)
                        continue
                    self._store(key, cls, ttl, None)
                    continue
                rec = index.get(key)
                if op == DELETE:
                    counts["deletes"] += 1
                    if rec is not None:
                        exptime = rec[_EXP]
                        if exptime and exptime <= now:
                            counts["get_expired"] += 1
                            self.gone[key] = rec[_CLS]
                        else:
                            counts["delete_hits"] += 1
                        self.release(key, rec)
                    continue
                if rec is not None:
                    exptime = rec[_EXP]
                    if exptime and exptime <= now:     # do_item_get: expired on access, freed
                        counts["get_expired"] += 1
                        self.release(key, rec)
                        self.gone[key] = rec[_CLS]
                        rec = None
                if op == GET:
                    counts["gets"] += 1
                    if rec is None:
                        counts["misses"] += 1
                        cls = self.gone.get(key)
                        if cls:
                            self.misses[cls] += 1
                        continue
                    counts["hits"] += 1
                    self.hits[rec[_CLS]] += 1
                else:
                    counts["touches"] += 1
                    if rec is None:
                        continue
                    counts["touch_hits"] += 1
                self._hit(key, rec)
                if op == TOUCH:
                    rec[_EXP] = now + ttl if ttl else 0
        finally:
            if collecting:
                gc.enable()
        if every and self.time is not None:
            end = next_row if next_row is not None else (self.time // every + 1) * every
            self._snapshot(timeline, end, last_evicted)
        return timeline

    def _hit(self, key, rec) -> None:
        """``do_item_get``'s hit markers: FETCHED on the first hit, ACTIVE on the second."""
        if rec[_ACTIVE]:
            return
        if not rec[_FETCHED]:
            rec[_FETCHED] = 1
            return
        rec[_ACTIVE] = 1
        if rec[_SEG] != COLD:
            if rec[_TIME] < self.now - ITEM_UPDATE_INTERVAL:   # do_item_update: time only
                rec[_TIME] = self.now
        else:
            self.bumps.append((key, rec))

    def segment_counts(self) -> dict[int, tuple[int, int, int]]:
        """Per class with items: (number_hot, number_warm, number_cold)."""
        return {cls: tuple(len(self.segs[s][cls]) for s in (HOT, WARM, COLD))
                for cls in range(1, len(self.size)) if self.lrus[cls]}
