"""The ideal LRU: one exact LRU over every object, ``-m`` bytes of room, each object its item's size.

What a cache of the same bytes hits with no slab classes -- no chunk rounded up, no page held by
one class while another evicts (calcification), no LRU per class, no bump limited to once a minute
-- the line that ``simulate -m A,B,C``'s hit-ratio curve measures the slab model against.

An object's size is its item's ``ITEM_ntotal`` (:func:`~slabcalc.model.item.ntotal_function`:
header, CAS, key + 1, flags suffix, value + 2; 1.6.18 items.c ``item_make_header``), the bytes
memcached asks its allocator for before a chunk rounds them up: so the gap between the two curves
is what the slab classes cost (chunk waste, page tails, pages stuck in a class), not what the item
header costs.  The requests keep the engine's rules (:mod:`.engine`): memcached's clock counts whole
seconds and a TTL ends at ``second + ttl``; a request that finds an expired item frees it; a set
replaces the key's old object; a set memcached refuses as too large (past ``-I``,
:func:`~slabcalc.model.placement.place`) stores nothing and drops the old value.  An object larger
than the whole room is not stored either (libCacheSim's LRU does the same); when a set needs room,
the least recently used objects go until the new one fits.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable

from slabcalc.model.classes import slab_classes
from slabcalc.model.item import ntotal_function
from slabcalc.model.ops import DELETE, FILL, GET, SET, TOUCH
from slabcalc.model.placement import TOO_LARGE, place
from slabcalc.model.settings import Settings


@dataclass(frozen=True)
class IdealLru:
    """What one LRU of ``capacity`` bytes did with the workload (counts scaled back for a sample)."""

    capacity: int        # bytes of room (a sample's: the node's -m times the rate)
    gets: int
    hits: int
    misses: int
    evictions: int
    rate: float = 1.0    # the sample's rate (1: the whole workload)

    @property
    def hit_ratio(self) -> float | None:
        return self.hits / self.gets if self.gets else None


def ideal_lru(settings: Settings, ops: Iterable[tuple], *, sample: float | None = None,
              capacity: int | None = None) -> IdealLru:
    """Replay ``ops`` (``(time, op, key, key_size, value_size, ttl, flags)``) through one LRU of
    ``capacity`` bytes (default ``settings.maxbytes``, -m).  ``sample`` replays only the keys
    ``simulate``'s sample keeps (:mod:`.sample`), in ``sample`` of the bytes, and scales the counts
    back."""
    rate = 1.0
    if sample is not None:
        from slabcalc.engines.sample import Sampled, check_rate

        rate = check_rate(sample)
        ops = Sampled(rate).filter(ops)
    capacity = int((settings.maxbytes if capacity is None else capacity) * rate)
    gets, hits, evictions = _replay(settings, ops, capacity)
    if rate != 1.0:
        gets, hits, evictions = (round(n / rate) for n in (gets, hits, evictions))
    return IdealLru(capacity, gets, hits, gets - hits, evictions, rate)


def _replay(settings: Settings, ops: Iterable[tuple], capacity: int) -> tuple[int, int, int]:
    """The LRU itself: ``(gets, hits, evictions)``.  ``lru`` maps key -> ``[size, exptime]``
    (exptime None: never), least recently used first."""
    ntotal = ntotal_function(settings)
    classes = slab_classes(settings)
    max_single = min(classes[-1].chunk_size, settings.item_size_max)
    refused: dict[tuple, bool] = {}          # (key, value, flags) above one chunk -> too large to store
    lru: OrderedDict = OrderedDict()
    used = gets = hits = evictions = 0
    for t, op, key, key_size, value_size, ttl, flags in ops:
        now = math.floor(t)
        entry = lru.get(key)
        if entry is not None and entry[1] is not None and entry[1] <= now:
            del lru[key]                     # found expired: freed (do_item_get)
            used -= entry[0]
            entry = None
        if op == GET or op == FILL:
            gets += 1
            if entry is not None:
                hits += 1
                lru.move_to_end(key)
                continue
            if op == GET:
                continue
            op = SET                         # a look-aside read that missed: set the object
        if op == SET:
            if entry is not None:
                del lru[key]
                used -= entry[0]
            size = ntotal(key_size, value_size, flags)
            if size > max_single:
                spec = (key_size, value_size, flags)
                if spec not in refused:
                    refused[spec] = place(settings, key_size, value_size, flags, classes).status == TOO_LARGE
                if refused[spec]:
                    continue
            if size > capacity:
                continue
            while used + size > capacity:
                _, (gone, _) = lru.popitem(last=False)
                used -= gone
                evictions += 1
            lru[key] = [size, now + ttl if ttl else None]
            used += size
        elif op == DELETE:
            if entry is not None:
                del lru[key]
                used -= entry[0]
        elif op == TOUCH and entry is not None:
            lru.move_to_end(key)
            entry[1] = now + ttl if ttl else None
    return gets, hits, evictions


__all__ = ["IdealLru", "ideal_lru"]
