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

from dataclasses import dataclass
from typing import Iterable

from slabcalc.engines.ideal_ring import IdealRing
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
    ring = ideal_ring(settings, capacity, rate)
    ring.feed(ops)
    return ideal_result(ring, rate)


def ideal_ring(settings: Settings, capacity: int | None = None, rate: float = 1.0) -> IdealRing:
    """The LRU itself (:class:`~.ideal_ring.IdealRing`, compiled with the engine), empty: ``capacity``
    bytes (default ``settings.maxbytes``, -m) times a sample's ``rate``.  Feed it the operations
    (``ring.feed(ops)``, in as many calls as there are windows), then :func:`ideal_result`."""
    return IdealRing(settings, int((settings.maxbytes if capacity is None else capacity) * rate))


def ideal_result(ring: IdealRing, rate: float = 1.0) -> IdealLru:
    """What ``ring`` did with the operations fed to it, the counts scaled back by a sample's ``rate``."""
    gets, hits, evictions = ring.gets, ring.hits, ring.evictions
    if rate != 1.0:
        gets, hits, evictions = (round(n / rate) for n in (gets, hits, evictions))
    return IdealLru(ring.capacity, gets, hits, gets - hits, evictions, rate)


__all__ = ["IdealLru", "ideal_lru", "ideal_result", "ideal_ring"]
