"""The temporary LRU (``-o temporary_ttl=N``), as 1.6.18 runs it.

The same code is in 1.5.22 (items.c 312, 1231, 1386; memcached.c 8956-8963, 9381) and 1.6.45
(items.c 314, 1224, 1383; memcached.c 5391-5398, 5743); it arrived in 1.4.35.

``-o temporary_ttl=N`` turns ``settings.temp_lru`` on (memcached.c 5392-5399);
it needs the LRU maintainer (memcached.c 5757-5760).  Then:

* ``do_item_alloc`` (items.c 325-327) links a new item in its class's TEMP
  LRU, instead of HOT, when ``exptime - current_time <= temporary_ttl`` --
  unsigned 32-bit arithmetic (``rel_time_t``, ``uint32_t``), so an item that
  never expires (``exptime`` 0) is not temporary;
* nothing evicts from TEMP: ``do_item_alloc_pull`` (items.c 175-210) pulls
  only COLD and HOT, so a class whose memory is TEMP items runs out of memory
  (``outofmemory``) rather than evict them;
* TEMP items take no part in HOT/WARM/COLD: the juggle's ``total_bytes`` and
  ages count HOT, WARM and COLD only, and a hit only bumps a TEMP item's time
  (``do_item_bump``: "only need to bump time" for any LRU but COLD);
* ``lru_maintainer_juggle`` (items.c 1406-1415) first pulls the TEMP tail up to
  500 times, "only looking for reclaims": each ``lru_pull_tail(TEMP_LRU)``
  frees expired tail items (up to 5 tries) and stops at the first live one
  (items.c 1254-1256); a pull that freed something counts as a move;
* the LRU crawler's auto-expiry checks every LRU id, TEMP's included
  (items.c 1484: ``i < POWER_LARGEST``).
"""

from __future__ import annotations

from slabcalc.engines.lru import TEMP

U32 = 0xFFFFFFFF


class TempLru:
    """Which items go to TEMP, and the maintainer's reclaim pulls of it (given the store and the -o
    settings; never the engine)."""

    def __init__(self, store, bg):
        self.store = store
        self.limit = bg.temporary_ttl & U32      # settings.temporary_ttl is a uint32_t (atoi'd)
        self.pulls = store.config.juggles       # the same 500 as the HOT/WARM passes

    def holds(self, exptime: int, now: int) -> bool:
        """``exptime - current_time <= settings.temporary_ttl`` in ``rel_time_t`` arithmetic."""
        return (exptime - now) & U32 <= self.limit

    def juggle(self, cls: int) -> int:
        """The TEMP pulls at the start of ``lru_maintainer_juggle``: how many freed something (each
        ``lru_pull_tail``'s reclaims: :meth:`.store.Store.reclaim_tail`, ending at a live tail)."""
        reclaim_tail = self.store.reclaim_tail
        did = 0
        for _ in range(self.pulls):
            if not reclaim_tail(cls, TEMP):
                break
            did += 1
        return did
