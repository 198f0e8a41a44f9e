"""One LRU crawled (1.6.18 ``crawler.c`` 430-470, ``crawler_expired_eval``): the crawler's walk over
the items, compiled by mypyc (setup.py) -- a crawl checks every item of every LRU due, while the rest
of the crawler (:mod:`.crawler`: its schedule) runs once a second and stays plain Python."""

from __future__ import annotations

from typing import Final

from slabcalc.engines.lru import Lru
from slabcalc.engines.store import Store

BUCKETS: Final = 60
HOUR: Final = 3600      # crawler.c: items expiring within the hour are counted by minute


def crawl_lru(store: Store, lru: Lru, cls: int, now: int, tocrawl: int | None, histo: list[int]) -> tuple[int, int]:
    """Crawl ``lru`` (of class ``cls``) from its tail: every item with ``exptime < now`` freed
    (``crawler_reclaimed``, ``expired_unfetched`` if never fetched), and with extstore every header
    item whose value's flash page was reused since (``storage_validate_item``: crawler.c 187-198 at
    1.6.18, 214-225 at 1.6.45; only the crawler checks it), every other one counted, and those
    expiring within the hour in ``histo`` by minute; at most ``tocrawl`` items (None: all).
    ``(seen, noexp)``: the items left and those of them with no TTL."""
    counts = store.lrus.counts[cls]
    storage = store.storage
    items = lru.values()            # a list: the crawl may unlink as it goes
    if tocrawl is not None:
        items = items[:tocrawl]
    seen = noexp = 0
    for item in items:
        exptime: int = item.exptime
        if (exptime and exptime < now) or (storage is not None and storage.invalid(item)):
            counts.crawler_reclaimed += 1
            if not item.fetched:
                counts.expired_unfetched += 1
            store.unlink(item)
            continue
        seen += 1
        if not exptime:
            noexp += 1
        elif exptime - now < HOUR:
            bucket = (exptime - now) // 60
            if bucket <= BUCKETS:
                histo[bucket] += 1
    return seen, noexp
