"""The storage write thread over an idle stretch (engines/idle.py): its passes that write nothing,
taken in closed form.

Between two requests far apart the write thread wakes far more often than the other threads: its
sleep grows by 1 us a pass from ``WRITE_SLEEP_MIN`` (500 us at 1.6.18, 200 us from 1.6.20) up to
``ext_max_sleep`` (1 s by default) -- 1.6.18 storage.c 597-599 and 647-648, 1.6.45 storage.c
632-634 and 728-729 --, a ramp of a million passes over 5.8 days, which no jump of whole seconds
meets twice alike.  But a pass that finds nothing to write changes nothing another thread reads,
and its own state moves on by rules with a closed form:

* the sleeps are ``s, s+1, ...`` up to ``ext_max_sleep``: the passes before an instant, and the
  wake-up after them, are sums of an arithmetic series (:func:`_sleeps`);
* 1.6.18: a class that the pass skips by its backoff has it halved while the sleep is over
  ``WRITE_SLEEP_MIN * 10`` (storage.c 606-609), one it tries that writes nothing has it raised by
  one (637-638): past 5 ms every walked class's backoff is 2 after a pass of even ``counter`` and
  1 after an odd one (tried every other pass: 1 -> 2 at an even counter, 2 -> 1 at an odd one);
  the compaction thread, checking each ``ext_max_sleep`` and finding nothing, sleeps on (926-931,
  980-982): the model wakes it at the first pass at or past each point of its grid;
* 1.6.20+: a pass that wrote nothing sets every class's backoff to 1 (1.6.45 storage.c 713-718);
  1.6.20-1.6.24 wake the compaction thread as 1.6.18 does; from 1.6.25 each sleep takes
  ``to_sleep x 10`` off ``check_compact`` and, below 0, kicks the compaction thread, whose check
  finds nothing (1.6.45 722-726; 1.6.28 691-695).

The thread is *inert* while a pass would change nothing else: no read buffer held, no write
buffer in flight, no compaction under way or to start, the flash with a free page where a wake of
the maintenance thread would evict one, the backoffs where the rules above keep them, and every
walked class's COLD tail absent, a header item (``ITEM_HDR``, never written again: 1.6.18
storage.c 492-493), a key whose header size is not noted, or not old enough for the age the pass
would ask (``ext_item_age``, or 0 -- anything -- under the free-chunk target: 1.6.18 storage.c
617-625, 1.6.45 storage.c 661-686).  :func:`quiet_through` is the last second of ``current_time``
this holds by the clock alone: a COLD tail expiring (``lru_pull_tail`` reclaims it, items.c
1144-1192) or growing older than ``ext_item_age`` (storage.c 492-493: ``current_time - it->time
> item_age``).  While inert the thread is not moved by the jumps of the other threads (its
``skip`` moves nothing): :class:`.Idle` takes it on, in closed form, up to the next wake-up of
another thread (:func:`catch_up`) -- exactly where stepping it would have left it.
"""

from __future__ import annotations

import math

from slabcalc.engines.lru import COLD


def _sleeps(first: int, cap: int, n: int) -> int:
    """The microseconds of ``n`` sleeps ``first, first + 1, ...``, none over ``cap`` (``first <= cap``)."""
    rising = cap - first + 1                     # first .. cap
    if n <= rising:
        return n * first + n * (n - 1) // 2
    return rising * first + rising * (rising - 1) // 2 + (n - rising) * cap


def _compact_period(s) -> int | None:
    """The microseconds between the timer-woken compaction thread's idle wake-ups (before 1.6.25),
    None when its sleep is still to change (1.6.18 storage.c 979-982: 10 ms while compacting, then
    ``ext_max_sleep`` added once)."""
    c = s.compactor
    if not c.read_sleep:
        return c.max_sleep                      # Compactor.wake: run at once, then ext_max_sleep
    return c.to_sleep if c.to_sleep >= c.max_sleep else None


def _timer_woken(s) -> bool:
    """Whether the pass wakes the compaction (and maintenance) thread on its own clock (before 1.6.25)."""
    return s.replay["write_target"] == "margin" or not s.compact_on_writes


def _passes_inert(s) -> bool:
    """The thread's own state where a pass writing nothing leaves it as the closed form has it."""
    c, flash = s.compactor, s.flash
    if s.held or any(p is not None and p.wbuf_full for p in flash.open):
        return False
    if c.job is not None or c.check() is not None:
        return False
    if c.stale_page_data and c.seen != c._page_data():
        return False
    capped = min(s.to_sleep, s.max_sleep)
    if capped < 1:
        return False                            # ext_max_sleep=0: no sleep, no closed form
    if _timer_woken(s):
        period = _compact_period(s)
        # each pass's sleep at most the compaction thread's: it is woken once at most a pass
        if period is None or period < s.max_sleep or s.next_maint + period <= s.next_wake:
            return False
        if (not flash.free and (s.maint_evicts or s.replay["write_target"] == "margin")
                and flash.evictable() is not None):
            return False                        # the maintenance thread would evict a page
    if s.replay["write_target"] == "margin":    # 1.6.18's pass
        if s.halve_over is None or capped <= s.halve_over:
            return False
        settled = 2 if s.counter % 2 == 0 else 1
        return all(s.backoff[x] == settled for x in s._walk())
    return s.reset_on_sleep and s.slept and all(b == 1 for b in s.backoff)


def quiet_through(s) -> float:
    """The last second of ``current_time`` through which the thread's passes write nothing and change
    nothing but its own clock, the LRUs and memory left as they are; -inf when a pass would now."""
    if not _passes_inert(s):
        return -math.inf
    e = s.e
    cold = e.lrus.q[COLD]
    bound: float = math.inf
    for x in s._walk():
        lru = cold[x]
        if not lru.n:
            continue
        tail = lru.next
        if tail.exptime:                        # reclaimed once exptime < current_time (store.reclaim_tail)
            bound = min(bound, tail.exptime)
        ref = s.refs.get(tail.key)
        if (ref is not None and ref.header is tail) or tail.key not in s.hdr_size:
            continue                            # never written (Storage.write)
        age = s.first_age(x)
        if age == 0:
            return -math.inf
        if age is not None:                     # extstore.NO_AGE: no age is long enough
            bound = min(bound, tail.time + age)
    return bound


def idle_key(s):
    """None unless the thread is inert; then what another thread's jump must see unchanged (not its
    clock: :func:`catch_up` moves it)."""
    if quiet_through(s) == -math.inf:
        return None
    f = s.flash
    return (s.pool_min, len(f.free), f.page_allocs, f.page_evictions, f.page_reclaims, f.objects_written,
            f.objects_used, len(s.refs))


def catch_up(s, end: int) -> int:
    """Every pass before microsecond ``end``, the thread inert through them (the caller's bound): its
    clock, counter, backoffs, compaction wake-ups and ``check_compact`` as stepping leaves them;
    how many passes."""
    wake, cap = s.next_wake, s.max_sleep
    if wake >= end:
        return 0
    first = min(s.to_sleep, cap)
    lo, hi = 0, (end - wake) // first + 1       # the largest j with wake + sleeps(j) < end
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if wake + _sleeps(first, cap, mid) < end:
            lo = mid
        else:
            hi = mid - 1
    n = lo + 1
    last = wake + _sleeps(first, cap, n - 1)    # the last pass taken
    if _timer_woken(s):
        period = _compact_period(s)
        if last >= s.next_maint:                # woken at the first pass at or past each grid point
            s.next_maint += period * ((last - s.next_maint) // period + 1)
    elif s.compact_on_writes:
        s.check_compact = _check_compact(s.check_compact, first, cap, n, s.e.settings.slab_page_size)
    s.counter += n
    if s.replay["write_target"] == "margin":
        settled = 2 if s.counter % 2 == 0 else 1
        for x in s._walk():
            s.backoff[x] = settled
    s.next_wake = last + min(first + n - 1, cap)
    s.to_sleep = min(first + n - 1, cap) + 1
    return n


def _check_compact(left: int, first: int, cap: int, n: int, page: int) -> int:
    """``check_compact`` after ``n`` sleeps ``first, first + 1, ...`` (at most ``cap``), each taking ten
    times itself and, below 0, setting it to a slab page (1.6.45 storage.c 722-726): it never
    exceeds a page, so once a sleep's tenfold is over a page every sleep sets it to one; at the cap
    it goes round a cycle of ``page // (10 x cap) + 1`` sleeps from a page."""
    rising = min(n, cap - first)                # the sleeps under the cap, one by one
    for i in range(rising):
        amount = 10 * (first + i)
        if amount > page:
            return page
        left -= amount
        if left < 0:
            left = page
    n -= rising
    amount = 10 * cap
    if n == 0:
        return left
    if amount > page:
        return page
    first_reset = left // amount + 1            # the sleeps that take it below 0 from here
    if n < first_reset:
        return left - n * amount
    return page - (n - first_reset) % (page // amount + 1) * amount
