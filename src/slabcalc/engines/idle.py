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

from slabcalc.engines import extstore_idle

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
        m = engine.maintainer
        # 1.6.30+: the maintainer's longest sleep is 999 999 us, not a second (see _skip_drift)
        self.drift = m in engine.actors and m.config.max_sleep != US
        self.samples: dict = {}         # _skip_drift: the maintainer's next wake-up -> its state then
        storage = engine.storage        # -o ext_path: the write thread, taken on in closed form (catch_up)
        self.storage = storage if storage in engine.actors else None

    def skip(self, wake: int, t_us: float) -> bool:
        """Before the wake-up at ``wake`` (the earliest due), with nothing to step before ``t_us``:
        jump over idle seconds if the threads have come to repeat themselves; whether it did."""
        if self.storage is not None and wake == self.storage.next_wake and self._catch_up(wake, t_us):
            return True
        if self.drift:
            return self._skip_drift(wake, t_us)
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

    def _catch_up(self, wake: int, t_us: float) -> bool:
        """The write thread's passes from ``wake`` that write nothing, up to the other threads' next
        wake-up, ``t_us`` or its quiet bound, taken at once (engines/extstore_idle.py); whether any
        were.  Its wake-ups are too many to step and repeat no second (its sleep grows by 1 us a
        pass), but while inert it changes nothing another thread reads: the other threads' jumps
        leave it behind (its ``skip`` moves nothing) and it comes here when it is the earliest due."""
        e, storage = self.e, self.storage
        others = min((actor.next_wake for actor in e.actors if actor is not storage), default=math.inf)
        if wake >= others:              # a tie steps the thread listed first, never the write thread
            return False
        bound = storage.quiet_through()
        if bound <= e.epoch + wake // US - 1:
            return False
        end = min(others, t_us) if bound == math.inf else min(others, t_us, (bound + 1 - e.epoch) * US)
        return extstore_idle.catch_up(storage, math.ceil(end)) > 0

    def _jump(self, wake: int, t_us: float, cycle: int, crawls: bool) -> int:
        """Skip whole ``cycle``s (microseconds) from ``wake``, none past ``t_us`` nor past the quiet
        bound; the microseconds skipped."""
        e = self.e
        crawler = self.crawler
        end = self._quiet_end(wake, t_us, crawls)
        if end is None:
            return 0
        cycles = (end - wake) // cycle          # every wake-up skipped is before end
        if cycles < 1:
            return 0
        seconds = cycles * cycle // US
        for actor in e.actors:
            actor.skip(seconds)
        if crawls:
            crawler.skip(seconds)
        return seconds * US

    def _quiet_end(self, wake: int, t_us: float, crawls: bool) -> int | None:
        """The microsecond before which a jump from ``wake`` must stop: ``t_us`` (the next request)
        or the second after the threads' quiet bound (the crawls' cycle bound with ``crawls``, else
        the next crawl due), whichever is first; None when the bound is not past ``wake``'s second."""
        e = self.e
        crawler = self.crawler
        second = e.epoch + wake // US          # current_time at the wake-up
        bound = math.inf
        if crawler is not None:
            bound = self._crawls_bound() if crawls else crawler.due_through()
        for actor in e.actors:
            if bound <= second:
                return None
            bound = min(bound, actor.quiet_through())
        if bound <= second:
            return None
        return math.floor(t_us if bound == math.inf else min(t_us, (bound + 1 - e.epoch) * US))

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

    # -- 1.6.30 and later: a maintainer whose longest sleep is not a second ------------------------
    # 1.6.30 items.c 1584 (1.6.45 1544): MAX_LRU_MAINTAINER_SLEEP is 1000000-1.  With nothing to do,
    # every class's wait has grown to it (1.6.45 items.c 1597-1603: +1/8 per idle juggle, capped),
    # each class is looked at once every 999 999 us (1585-1593: its countdown less the last sleep),
    # and the thread sleeps until the earliest class is due (1593, 1606-1608).  So the thread's own
    # state, relative to its next wake-up, repeats every 999 999 us -- its period -- while its
    # wake-ups slide 1 us a period against current_time's seconds.  What it does once per second of
    # current_time (the crawler check, 1.6.45 items.c 1617-1620; 1.6.30-1.6.33 the automover too)
    # runs at the first wake-up of each second, and every second has one (no sleep is longer than a
    # second): a check for each second from the last one to the second of the last wake-up skipped.
    # The page mover's thread (1.6.34+) keeps its own 1 s period (:class:`.MoverThread`).  The
    # threads share nothing that changes while they are idle, so each jumps by its own periods.

    def _skip_drift(self, wake: int, t_us: float) -> bool:
        e = self.e
        m = e.maintainer
        period = m.config.max_sleep
        stamp = self._stamp()
        others = [actor for actor in e.actors if actor is not m]
        if (e.pending_move is not None or e.bumps or m.to_sleep <= 0
                or any(actor.idle_key(actor.next_wake) is None for actor in others)):
            self.samples, self.seen = {}, {}
            return False
        if stamp != self.stamp:
            self.stamp, self.samples, self.seen = stamp, {}, {}
        crawler = self.crawler
        own = (m.clock - m.next_wake, m.to_sleep, tuple(m.backoff),
               tuple(sorted((m.waits[cls].due - m.clock, cls) for cls in m.slots)),
               crawler.changes if crawler is not None else None)
        previous = self.samples.get(m.next_wake - period)
        if len(self.samples) >= CYCLES_KEPT:
            self.samples = {}
        self.samples[m.next_wake] = own
        if previous != own:
            return False
        # the maintainer's last wake-up, and the second it made its per-second checks at
        last = m.next_wake - m.to_sleep
        checked = e.epoch + last // US
        if ((crawler is not None and m.last_crawler_check != checked)
                or (m.automover is not None and m.last_automove_check != checked)):
            return False
        jumped = 0
        if crawler is not None:
            cyclic = crawler.idle_key(checked)
            earlier = self.seen.get(cyclic)
            if earlier is not None and earlier < checked:
                jumped = self._jump_drift(wake, t_us, checked - earlier, True)
            if not jumped and len(self.seen) < CYCLES_KEPT:
                self.seen[cyclic] = checked
        if not jumped:
            jumped = self._jump_drift(wake, t_us, 1, False)
        if jumped:
            self.samples = {m.next_wake: own}
        return jumped > 0

    def _jump_drift(self, wake: int, t_us: float, cycle: int, crawls: bool) -> int:
        """Every thread moved on by whole periods, the maintainer's per-second checks by whole
        ``cycle``s (seconds), no wake-up skipped at or past ``t_us`` or the quiet bound; the
        seconds of checks skipped."""
        e = self.e
        m = e.maintainer
        crawler = self.crawler
        end = self._quiet_end(wake, t_us, crawls)
        if end is None:
            return 0
        period = m.config.max_sleep
        last = m.next_wake - m.to_sleep
        periods = (end - m.next_wake) // period           # every wake-up skipped is before end
        seconds = (last + periods * period) // US - last // US
        seconds -= seconds % cycle
        if seconds < 1:
            return 0
        # the fewest periods that carry the last wake-up into that second (each moves it < 1 s)
        periods = -(-((last // US + seconds) * US - last) // period)
        _shift_maintainer(m, periods * period, seconds)
        for actor in e.actors:
            if actor is not m:
                actor.skip(max(0, (end - actor.next_wake) // US))
        if crawls:
            crawler.skip(seconds)
        return seconds


def _shift_maintainer(m, d: int, seconds: int) -> None:
    """The maintainer ``d`` microseconds (whole periods) later, its per-second checks ``seconds``
    later: the automover's runs of those seconds fill its window (as :meth:`.Maintainer.skip`)."""
    if m.automover is not None:
        m.automover.skip(m.last_automove_check + 1, seconds)
        m.last_automove_check += seconds
    if m.crawler is not None:
        m.last_crawler_check += seconds
    m.next_wake += d
    m.clock += d
    for wait in m.queue:
        wait.due += d
    m.earliest += d
