"""The LRU crawler's auto-expiry, as the maintainer schedules it (1.6.18 ``items.c`` 1511-1566, ``crawler.c``).

Once per second of ``current_time`` the maintainer looks at every LRU (HOT,
WARM, COLD of every class, and TEMP with ``-o temporary_ttl``):

* when the LRU's last crawl is complete, it decides the next one from that
  crawl's histogram of the items' remaining TTLs, by minute: if more than
  ``seen_with_ttl / 100 + 1`` items expire within minute ``x``, the wait
  grows by 60 s when it is below ``x * 60`` and shrinks by 60 s otherwise
  (down to 0); no item with a TTL makes it grow by 60 s; at most an hour.
  The next crawl is due ``wait + 5`` seconds later;
* an LRU whose crawl is due (``current_time > next``) is crawled, and its next
  check is at least 5 s away.  A server's first check crawls every LRU.

A crawl walks the LRU from its tail and frees every item with ``exptime <
current_time`` (``crawler_reclaimed``, ``expired_unfetched`` if never
fetched), and with extstore every header whose flash page was reused since
(``storage_validate_item``, crawler.c 187-198: :func:`.crawl_lru.crawl_lru`).
It checks at most as many items as the longest LRU of the run holds (items.c
1549-1553), so it reaches the head of every LRU: crawler.c 607 sets
``remaining`` to that size + 1 and 446 counts it down before each item,
ending the crawl when it falls below 1, after ``size`` items (the
``crawl-to-head`` paced capture: all 100 expired items freed).  ``-o
lru_crawler_tocrawl=N`` lowers that limit to N when N is below it (items.c
1561-1563): each LRU crawled then has its N items nearest the tail checked,
the rest neither freed nor counted.  (Before 1.5.7, crawler.c did not add the
one, and a crawl stopped one item short: memcached commit 593b6006, issue
#362.  The model runs the later rule for every release.)  Starting a
run clears every LRU's crawl statistics, crawled or not
(``crawler_expired_init``).  The crawler sleeps ``lru_crawler_sleep`` us
(100) once every 1 001 items it checks (crawler.c 486-495): about 10 000
items a millisecond at the default, so the model crawls at the instant of
the check, and refuses (:class:`~slabcalc.errors.CrawlTooSlow`) a crawl that
frees or meets an item expiring within the hour whose sleeps add up to more
than 0.8 s (:meth:`Crawler.pace`): captures of one shape at six paces show the
server at 0.4 and 0.8 s as at no sleep, and at 1, 2 and 4 s apart from it
(docs/expired-reclaim.md, tests/fidelity/test_crawler_sleep.py).  It crawls
after the juggles of the classes due at that wake-up (items.c 1633-1672) and
after the automover's run of that wake-up (1674-1694: the crawl is the crawler
thread's, and its frees come after that run has read the classes:
engines/maintainer.py), so a class not juggled yet leaves the crawl the items
that expired at the tick.  Which class wakes the thread first after a tick is the server's
timing, and run for run it splits those items differently between
``crawler_reclaimed`` and ``reclaimed`` (the sum stays: docs/expired-reclaim.md);
the model's split is one draw of that race.
"""

from __future__ import annotations

import math

from slabcalc.engines.crawl_lru import BUCKETS, HOUR, crawl_lru
from slabcalc.engines.lru import COLD, HOT, TEMP, WARM
from slabcalc.errors import CrawlTooSlow

CRAWL_SHOWN_US = 800_000    # the longest sleeps of one crawl the model takes as at once (docs/expired-reclaim.md)


class _Stats:
    __slots__ = ("seen", "noexp", "histo", "complete", "end_time")

    def __init__(self):
        self.seen = self.noexp = 0
        self.histo = [0] * (BUCKETS + 1)
        self.complete = False
        self.end_time = 0


class Crawler:
    """The crawler's schedule: given the store it crawls (its LRUs, clock and counters), the -o
    settings and whether the temporary LRU is on; never the engine."""

    def __init__(self, store, bg, temp):
        self.store = store
        const = bg.constant
        self.min_wait, self.max_wait, self.step = const["crawl_min_wait"], const["crawl_max_wait"], const["crawl_step"]
        segs = (HOT, WARM, COLD, TEMP) if temp is not None else (HOT, WARM, COLD)
        self.lrus = [(cls, seg) for cls in range(1, len(store.size)) for seg in segs]
        self.stats = {lru: _Stats() for lru in self.lrus}
        self.next_crawl = dict.fromkeys(self.lrus, 0)
        self.wait = dict.fromkeys(self.lrus, 0)
        self.changes = 0            # schedules and crawls so far (an idle stretch has none)
        # No crawl finished since the last check, and none due before ``soonest`` (the earliest next
        # crawl): then a check looks at every LRU and changes nothing, and need not look.
        self.finished = False
        self.soonest = 0
        # The items a crawl checks in one LRU: min(its size, tocrawl), whatever the run's longest LRU
        # (the limit is min(longest, tocrawl), and no LRU crawled is longer than the longest).
        self.tocrawl = bg.lru_crawler_tocrawl or None      # 0: every item
        # The crawler's pace (1.6.18 crawler.c 486-495): it sleeps lru_crawler_sleep us once every
        # crawls_persleep + 1 items it checks, its count a local of the thread (410), kept across
        # crawls.  The model crawls at once, shown for crawls of up to 0.8 s of sleeps (CRAWL_SHOWN_US):
        # :meth:`pace`.
        self.sleep_us = bg.lru_crawler_sleep
        self.per_sleep = const["crawls_persleep"] + 1
        self.since_sleep = 0        # the node's items checked since the crawler last slept
        self.behind: tuple[int, int, int] | None = None   # the first crawl slower than shown: (second, items, us)
        self.lag = 0                # us of sleeps of the crawls slower than shown, which put the schedule behind
        self.release = store.config.release

    def check(self) -> None:
        """``lru_maintainer_crawler_check``: schedule, then crawl what is due."""
        e = self.store
        now = e.now
        if not self.finished and now <= self.soonest:
            return
        todo = []
        for lru in self.lrus:
            s = self.stats[lru]
            if s.complete:
                possible = s.seen - s.noexp
                low_watermark = possible // 100 + 1
                available = 0
                wait = self.wait[lru]
                for x in range(BUCKETS):
                    available += s.histo[x]
                    if available > low_watermark:
                        if wait < x * self.step:
                            wait += self.step
                        elif wait >= self.step:
                            wait -= self.step
                        break
                if available == 0:
                    wait += self.step
                self.wait[lru] = wait = min(wait, self.max_wait)
                self.next_crawl[lru] = now + wait + self.min_wait
                s.complete = False
                self.changes += 1
            if now > self.next_crawl[lru]:
                todo.append(lru)
                self.next_crawl[lru] = now + self.min_wait
        self.soonest = min(self.next_crawl.values())
        self.finished = bool(todo)          # every LRU crawled is complete
        if todo:
            self.changes += 1
            self.crawl(todo)

    def crawl(self, todo) -> None:
        e = self.store
        now = e.now
        q = e.lrus.q
        checked = sum(min(q[seg][cls].n, self.tocrawl or q[seg][cls].n) for cls, seg in todo)
        left = 0
        for lru in self.lrus:
            self.stats[lru] = _Stats()
        for lru in todo:
            cls, seg = lru
            s = self.stats[lru]
            s.seen, s.noexp = crawl_lru(e, q[seg][cls], cls, now, self.tocrawl, s.histo)   # compiled (setup.py)
            s.complete = True
            s.end_time = now
            left += s.seen
        if self.sleep_us:
            self.pace(todo, checked, checked - left)

    def pace(self, todo, checked: int, freed: int) -> None:
        """Count the sleeps of a crawl of the LRUs ``todo`` that checked ``checked`` items and freed
        ``freed`` (a sampled replay's items stand for ``1 / share`` of the node's each), and refuse
        (:class:`CrawlTooSlow`) a crawl whose sleeps add up to more than :data:`CRAWL_SHOWN_US` if
        its pace can change what it does: if it freed an item, or checked one that expires within the
        hour and the crawl's length (which a crawl meeting it later, on a later clock, may free or
        count in another minute of the histogram that schedules the next crawl), or if an earlier
        crawl was that slow (the server's schedule then runs behind the model's: the next crawls are
        due after the check that finds a crawl complete, items.c 1487-1547).  A crawl of items without
        a TTL, or with one past that, frees nothing and counts the same at any pace."""
        share = self.store.slabs.share
        node = round(checked / share)
        total = self.since_sleep + node
        sleeps, self.since_sleep = divmod(total, self.per_sleep)
        took = sleeps * self.sleep_us
        at = self.store.now - self.store.epoch
        if took <= CRAWL_SHOWN_US and self.behind is None:
            return
        late = -(-(took + self.lag) // 1_000_000) + 1        # whole seconds the server's crawl may run behind
        if not freed and not self._expiring(todo, self.store.now + HOUR + late):
            if took > CRAWL_SHOWN_US:
                self.behind = self.behind or (at, node, took)
                self.lag += took
            return
        if took > CRAWL_SHOWN_US:
            why = (f"checks {node:,} items, its crawler sleeping {self.sleep_us:,} us (lru_crawler_sleep) every "
                   f"{self.per_sleep:,}: {took / 1e6:.2f} s of sleeps")
            most = CRAWL_SHOWN_US // sleeps
        else:
            first, items, slept = self.behind
            why = (f"checks items that expire within the hour on a schedule the server runs behind: the crawl "
                   f"at {first} s checked {items:,} items, none expiring, in {slept / 1e6:.2f} s of sleeps "
                   f"(lru_crawler_sleep {self.sleep_us:,} us every {self.per_sleep:,})")
            most = CRAWL_SHOWN_US // (slept // self.sleep_us)
        raise CrawlTooSlow(
            f"memcached {self.release}'s crawl at {at} s of the workload {why}, where the model crawls at once and "
            f"is shown for crawls of up to 0.8 s (crawler.c item_crawler_thread; docs/expired-reclaim.md); an "
            f"lru_crawler_sleep of {most:,} us or less crawls them within it")

    def _expiring(self, todo, before: int) -> bool:
        """Whether an item the crawl of ``todo`` checked and left has a TTL ending before ``before``."""
        q = self.store.lrus.q
        for cls, seg in todo:
            for item in q[seg][cls].values()[:self.tocrawl]:
                if item.exptime and item.exptime < before:
                    return True
        return False

    # -- idle stretches (engines/idle.py) -------------------------------------------------------
    # Between crawls a check changes nothing until an LRU's crawl is due (1.6.18 items.c 1549:
    # current_time > next_crawls) or a finished one is to be scheduled (1487).  A crawl that frees
    # nothing and finds no item expiring within the hour ends as the one before it did: the
    # crawler, once every wait has grown to its longest, repeats itself.

    def due_through(self) -> float:
        """The last second through which a check certainly does nothing (no crawl to schedule, none due)."""
        if any(s.complete for s in self.stats.values()):
            return -math.inf
        return min(self.next_crawl.values())

    def quiet_through(self) -> float:
        """The last second at which every crawl certainly frees nothing and counts no item in its
        histogram (none expires within the hour), the items left as they are.  A crawl reaches
        every item, or with ``lru_crawler_tocrawl`` the items it checks."""
        q = self.store.lrus.q
        soonest = math.inf
        for cls, seg in self.lrus:
            for item in q[seg][cls].values()[:self.tocrawl]:
                if item.exptime and item.exptime < soonest:
                    soonest = item.exptime
        return soonest - HOUR

    def idle_key(self, second: int):
        """The schedule and the last crawl's statistics, relative to ``second``."""
        base = second
        return tuple((self.next_crawl[lru] - base, self.wait[lru], s.seen, s.noexp, s.complete,
                      s.end_time - base if s.end_time else 0, tuple(s.histo) if any(s.histo) else None)
                     for lru, s in self.stats.items())

    def skip(self, seconds: int) -> None:
        """The crawler's state ``seconds`` later, crawls repeating as they did (each checking the
        items the one before it did: its sleeps within one of that one's, which the pace check passed)."""
        self.soonest += seconds
        for lru in self.lrus:
            self.next_crawl[lru] += seconds
            s = self.stats[lru]
            if s.end_time:
                s.end_time += seconds
