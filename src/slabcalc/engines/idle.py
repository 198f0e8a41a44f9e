"""Idle stretches: the background threads' clock jumps over wake-ups that change nothing.

Between two requests far apart the threads wake thousands of times a day
(the LRU maintainer at least once a second, 1.6.18 ``items.c`` 1582-1622; the
1.6.45 mover once a second once idle).  Stepped one at a time, a week of idle
server costs minutes.  Yet once nothing is left to do, a second of wake-ups is
the second before it moved on by 1 s: each class's wait at its longest
(``MAX_LRU_MAINTAINER_SLEEP``), the same wake-ups at the same offsets, one
crawler check and one automover run per second of ``current_time``.

So, between requests, every second of the threads' clock (at the earliest
wake-up due) the threads' state is read relative to that instant:

* when it equals the state one second earlier and nothing else changed (no
  item, counter, page or crawl schedule), the clock jumps by whole seconds, up
  to the next instant at which something can change: a tail item expiring or
  growing old enough for a juggle (:meth:`.Maintainer.juggle_quiet_through`),
  a crawl due (:meth:`.Crawler.due_through`), an automover run that gives a
  page (:meth:`.WindowedAutomover.quiet_runs`), or the next request;
* when it equals the state at an earlier instant of the same stretch, crawls
  included (every crawl wait at its hour, each crawl as the one before), the
  clock jumps by whole cycles, up to the first item that a crawl would free or
  count (:meth:`.Crawler.quiet_through`).

A jump moves every wake-up, the countdown and the crawl schedule by the
seconds skipped, and fills the automover's window as its runs would have
(:meth:`.WindowedAutomover.skip`).  Past the bound, wake-ups are stepped
again, so the result is the stepped one, counter by counter
(``Engine(fast_forward=False)`` steps every wake-up; tests/engines/test_idle.py
holds the two equal on random workloads).
"""

from __future__ import annotations

import math

US = 1_000_000
CYCLES_KEPT = 4096      # states remembered for finding a cycle; forgotten when anything changes


class Idle:
    def __init__(self, engine):
        self.e = engine
        self.crawler = engine.maintainer.crawler     # None: no maintainer thread, or no crawler
        self.next_check = -math.inf
        self.last = None                # (instant, state) of the last look
        self.seen: dict = {}            # state (crawls included) -> instant, within one unchanged stretch
        self.stamp = None
        self.bound = None               # (stamp, the crawls' bound) for that stamp

    def skip(self, wake: int, t_us: float) -> bool:
        """Before the wake-up at ``wake`` (the earliest due), with nothing to step before ``t_us``:
        jump over idle seconds if the threads have come to repeat themselves; whether it did."""
        if wake < self.next_check:
            return False
        self.next_check = wake + US
        e = self.e
        keys = tuple(actor.idle_key(wake) for actor in e.actors)
        if None in keys or e.pending_move is not None:
            self.last = None
            return False
        stamp = self._stamp()
        if stamp != self.stamp:
            self.stamp, self.seen = stamp, {}
        crawler = self.crawler
        frozen = (keys, wake % US, crawler.changes if crawler is not None else None, stamp)
        if self.last != (wake - US, frozen):
            self.last = (wake, frozen)
            return False
        # this second went as the one before it did
        jumped = 0
        if crawler is not None:
            cyclic = (keys, wake % US, crawler.idle_key(e.epoch + wake // US))
            earlier = self.seen.get(cyclic)
            if earlier is not None:
                jumped = self._jump(wake, t_us, wake - earlier, crawls=True)
            if not jumped and len(self.seen) < CYCLES_KEPT:
                self.seen[cyclic] = wake
        if not jumped:
            jumped = self._jump(wake, t_us, US, crawls=False)
        # after a jump the threads are as they were here, later: the next second may be compared to it
        self.last = (wake + jumped, frozen)
        self.next_check = wake + jumped + US
        return jumped > 0

    def _jump(self, wake: int, t_us: float, cycle: int, crawls: bool) -> int:
        """Skip whole ``cycle``s (microseconds) from ``wake``, none past ``t_us`` nor past the quiet
        bound; the microseconds skipped."""
        e = self.e
        crawler = self.crawler
        second = e.epoch + wake // US          # current_time at the wake-up
        bound = math.inf
        if crawler is not None:
            bound = self._crawls_bound() if crawls else crawler.due_through()
        for actor in e.actors:
            if bound <= second:
                return 0
            bound = min(bound, actor.quiet_through())
        if bound <= second:
            return 0
        end = t_us if bound == math.inf else min(t_us, (bound + 1 - e.epoch) * US)
        cycles = (math.floor(end) - wake) // cycle          # every wake-up skipped is before end
        if cycles < 1:
            return 0
        seconds = cycles * cycle // US
        for actor in e.actors:
            actor.skip(seconds)
        if crawls:
            crawler.skip(seconds)
        return seconds * US

    def _stamp(self):
        """What requests, juggles, crawls and page moves change (nothing else may, for a jump)."""
        e = self.e
        return (tuple(v.n for v in e.lrus.version), tuple(e.counts.values()), e.slabs.malloced, len(e.slabs.pool),
                sum(e.lrus.column("crawler_reclaimed")))

    def _crawls_bound(self) -> float:
        """:meth:`.Crawler.quiet_through`, read once while nothing changes (it looks at every item)."""
        if self.bound is None or self.bound[0] != self.stamp:
            self.bound = (self.stamp, self.crawler.quiet_through())
        return self.bound[1]
