"""The slab automovers: which page should move, and where (1.6.18 ``slab_automove.c``, ``slabs.c`` 1248).

``slab_automove=1`` (:class:`WindowedAutomover`) runs on the LRU maintainer
thread once per second of ``current_time`` (more often while it sends pages
to the global pool).  Each run fills one slot of a per-class window of
``slab_automove_window`` runs from the counters since the previous run:

* the slot is *dirty* when the class evicted, ran out of memory or got a page;
  it records the age of the COLD tail and the class's share of all evictions;
* the first class (lowest id) with more than 2.5 pages of free chunks and a
  clean window gives a page to the global pool, and the run stops there
  (later classes' slots are left as they were);
* else the *oldest* class is the one with the highest window-average age and
  more than 2 pages; the *youngest* the one with the lowest average age that
  evicted in more than half the window or took more than a quarter of all
  evictions on average; once the window has filled, a page moves from the
  oldest to the youngest when the youngest evicted in this run and its age is
  below ``slab_automove_ratio`` times the oldest's.

Before 1.6.17 (profile rules, docs/releases-read.md) the window is summed
once this run's slot is zeroed, before it is written (``automove_window_sum:
before_slot``), and a page found for the pool does not end the run: a
youngest and an oldest class chosen below it stay, and a move between them
replaces it (``automove_pool_move: overridable``, 1.5.22 slab_automove.c
116-149).  Before 1.6.7 a slot is *evicted* when the class evicted or ran out
of memory, and only a class whose window evicted in more than half its slots
may receive (``automove_youngest: evicted_half``, 1.5.22 99-104, 132).

``slab_automove=2`` (:class:`PickAny`): every eviction asks for a page, from
the next class (round robin over all classes, from where the last request
stopped) that has more than one page.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from operator import itemgetter

from slabcalc.engines.lru import COLD


def quiet_slots(first: int, runs: int, cur: int, size: int) -> Iterator[tuple[int, int]]:
    """Of ``runs`` automover runs skipped, one a second from second ``first``, with run j writing
    slot ``(cur + j) % size`` of a window of ``size``: the ``(second, slot)`` of each run whose slot
    the window still holds after them (the last ``size``; the earlier ones are overwritten)."""
    for j in range(max(1, runs - size + 1), runs + 1):
        yield first + j - 1, (cur + j) % size


RATIO = itemgetter(2)       # a window slot: [age, dirty, evicted_ratio, evicted_seen]


class WindowedAutomover:
    def __init__(self, engine):
        self.e = engine
        bg = engine.bg
        self.size = bg.slab_automove_window
        self.ratio = bg.slab_automove_ratio
        const = bg.constant
        self.source_pages = const["automove_source_pages"]
        self.reclaim_tenths = const["automove_reclaim_tenths"]
        rules = bg.rules.rules
        self.needs_full = rules["free_pages_need_full_memory"]
        self.with_slot = rules["automove_window_sum"] == "with_slot"
        self.by_share = rules["automove_youngest"] == "evicted_half_or_quarter"
        self.pool_final = rules["automove_pool_move"] == "final"
        n = len(engine.size)
        # per class, per slot: [age, dirty, evicted_ratio, evicted_seen]
        self.window = [[[0, 0, 0.0, 0] for _ in range(self.size)] for _ in range(n)]
        # per class, the sums of its window's ages, dirty marks and evicted marks, kept as slots are
        # written (_write): whole numbers, the same sums as adding the window up at each run, which
        # cost 60 classes x 4 x 30 slots a second of workload time (a third of a replay of a sparse
        # trace).  The evicted ratios are floats: added up in the window's order when a rule reads them.
        self.age_sum = [0] * n
        self.dirty_sum = [0] * n
        self.seen_sum = [0] * n
        self.gained_sum = [0] * n       # slots marked dirty for a page gained (2: a sampled replay's)
        self.cur = 0
        self.before = self._counters()
        # A sampled replay (engines.sample) sees a share R of the evictions: a class that evicts a few
        # times a second in the node evicts once a minute in a 1 % sample, so its window would read
        # clean and free to give pages to the pool. A sampled window is clean only when the sample
        # saw no eviction or allocation failure in the last W/R seconds (W the window's runs, a
        # second each): the chance that a sample of rate R sees none in W/R seconds is the node's
        # chance of none in W. (The youngest class is still chosen by the sample's own slots: the
        # eviction share is unbiased, and the slots that evicted count low by the rate, which
        # offsets the noise of tail ages over R of the items -- with the slots estimated as the
        # node's, a 10 % sample moved 3-7 times the node's pages and missed its evictions by more.)
        #
        # Its free chunks are as coarse: a page of a large class holds a fraction of a chunk, so
        # 2.5 pages of free chunks in the node can be under one chunk in the sample, and a free
        # list that is used as fast as it fills wanders as far in the sample as in the node -- one
        # or two chunks, each standing for 1/R of the node's. The free-chunk rule needs the free
        # chunks to be over 2.5 pages' share by two standard deviations of their count (Poisson):
        # a page goes to the pool on evidence, not on the chance that a chunk stood free.
        self.share = engine.slabs.share
        if self.share != 1:
            self.recent = [deque() for _ in range(n)]     # (second, evictions and failures) of recent runs
            # their sum per class, kept as runs come and go: summing each window at each run cost
            # O(W/R) a class a second (a 1 % curve of 100 M requests: 80 % of its CPU)
            self.recent_sum = [0] * n

    def _counters(self):
        e = self.e
        lrus = e.lrus
        return (lrus.column("evicted"), lrus.column("outofmemory"), [len(p) for p in e.slabs.pages])

    def run(self) -> tuple[int, int]:
        """``slab_automove_run``: ``(source, destination)``, -1 for none, destination 0 the pool."""
        e = self.e
        now = e.now
        evicted, oom, pages = after = self._counters()
        b_evicted, b_oom, b_pages = self.before
        n = len(pages)
        d_evicted = [evicted[c] - b_evicted[c] for c in range(n)]
        total_evicted = sum(d_evicted[1:])
        sampled = self._sampled(now, d_evicted, [oom[c] - b_oom[c] for c in range(n)]) if self.share != 1 else None
        self.cur += 1
        slot_at = self.cur % self.size
        src = dst = -1
        oldest, oldest_age = -1, 0
        youngest, youngest_age, youngest_evicting = -1, None, False
        cold = e.lrus.q[COLD]
        may_free = e.slabs.full or not self.needs_full     # 1.6.45: slab_automove.c 130
        for c in range(1, n):
            delta = d_evicted[c]
            ran_out = oom[c] - b_oom[c] > 0
            gained = pages[c] - b_pages[c] > 0
            dirty = seen = 0
            share = 0.0
            if delta > 0:
                share, seen, dirty = delta / total_evicted, 1, 1
            elif ran_out and not self.by_share:     # before 1.6.7 running out counts as evicting
                seen = 1
            if ran_out or gained:
                dirty = 1
            if sampled is not None and gained:
                dirty = 2                           # a page gained: what the sampled events do not count
            lru = cold[c]
            tail_age = now - lru.next.time if lru.n else 0
            self._write(c, slot_at, tail_age, dirty, share, seen)
            window = self.window[c]
            age, seen_sum = self.age_sum[c], self.seen_sum[c]
            if sampled is None:
                dirty_sum = self.dirty_sum[c]
            else:
                dirty_sum = sampled[c] + self.gained_sum[c]
            if not self.with_slot:              # summed before this run's slot was written
                age, seen_sum = age - tail_age, seen_sum - seen
                if sampled is None:
                    dirty_sum -= dirty
                else:                           # this run's events, and its page gained
                    dirty_sum -= d_evicted[c] + oom[c] - b_oom[c] + (dirty == 2)
            age //= self.size
            if dirty_sum == 0 and may_free and self._free_enough(c):
                src, dst = c, 0
                if self.pool_final:
                    oldest = youngest = -1
                break
            if age > oldest_age and pages[c] > self.source_pages:
                oldest, oldest_age = c, age
            # by share (1.6.7+) a slot evicted exactly when its share is above 0: no evicted slot, no share
            if (youngest_age is None or age < youngest_age) and (seen_sum > self.size // 2 or self.by_share and seen_sum
                                                                  and sum(map(RATIO, window)) / self.size > 0.25):
                youngest, youngest_age, youngest_evicting = c, age, bool(seen)
        self.before = after
        if youngest != -1 and oldest != -1 and self.cur > self.size:
            if youngest_age < oldest_age * self.ratio and youngest_evicting:
                src, dst = oldest, youngest
        return src, dst

    def _write(self, c: int, at: int, age: int, dirty: int, share: float, seen: int) -> None:
        """Slot ``at`` of class ``c``'s window written, and the window's sums with it."""
        slot = self.window[c][at]
        self.age_sum[c] += age - slot[0]
        self.dirty_sum[c] += dirty - slot[1]
        self.seen_sum[c] += seen - slot[3]
        self.gained_sum[c] += (dirty == 2) - (slot[1] == 2)
        slot[:] = [age, dirty, share, seen]

    def _free_enough(self, c: int) -> bool:
        """More than 2.5 pages of free chunks (slab_automove.c 131; a sampled replay: by two
        standard deviations of their count, see ``__init__``)."""
        slabs = self.e.slabs
        chunks = len(slabs.free[c])
        if self.share == 1:
            return chunks * 10 > slabs.perslab[c] * self.reclaim_tenths
        return (chunks - 2 * math.sqrt(chunks)) * 10 > slabs.per_page[c] * self.reclaim_tenths

    # -- idle stretches (engines/idle.py) -------------------------------------------------------
    # A run that finds no counter changed since the last writes a clean slot (the COLD tail's age;
    # 1.6.18 slab_automove.c 97-120), and can move a page only to the pool: from the first class
    # with free chunks enough whose window has come clean (131-137; a move between classes needs
    # the youngest to have evicted in this run).  Until then, runs only fill slots, and a stretch of
    # them has a closed form.

    def quiet_runs(self, first: int) -> float:
        """How many runs, one a second from second ``first``, certainly give no page (nothing
        evicted, allocated or freed meanwhile); 0 when counters have changed since the last run."""
        if self._counters() != self.before:
            return 0
        if not (self.e.slabs.full or not self.needs_full):
            return math.inf
        runs = math.inf
        size, cur = self.size, self.cur
        for c in range(1, len(self.window)):
            if not self._free_enough(c):
                continue
            clean = 1                   # run j writes slot (cur + j) % size, clean
            for i, slot in enumerate(self.window[c]):
                if (slot[1] == 2) if self.share != 1 else slot[1]:
                    clean = max(clean, (i - cur - 1) % size + 1)
            if self.share != 1 and self.recent[c]:       # its events leave at second time + W/R
                clean = max(clean, math.ceil(self.recent[c][-1][0] + size / self.share) - first)
            runs = min(runs, clean - 1)
        return runs

    def skip(self, first: int, runs: int) -> None:
        """``runs`` quiet runs, one a second from second ``first``: each fills its slot of every
        class's window, clean, with the age of the COLD tail at its second."""
        cold = self.e.lrus.q[COLD]
        window = self.window
        for now, at in quiet_slots(first, runs, self.cur, self.size):
            for c in range(1, len(window)):
                lru = cold[c]
                self._write(c, at, now - lru.next.time if lru.n else 0, 0, 0.0, 0)
        self.cur += runs
        if self.share != 1:
            since = first + runs - 1 - self.size / self.share
            for c, recent in enumerate(self.recent):
                while recent and recent[0][0] <= since:
                    self.recent_sum[c] -= recent.popleft()[1]

    def _sampled(self, now: int, d_evicted: list[int], d_oom: list[int]) -> list[int]:
        """A sampled replay's evictions and allocation failures per class in the last W/R seconds."""
        since = now - self.size / self.share
        sums = self.recent_sum
        for c, recent in enumerate(self.recent):
            if d_evicted[c] or d_oom[c]:
                recent.append((now, d_evicted[c] + d_oom[c]))
                sums[c] += d_evicted[c] + d_oom[c]
            while recent and recent[0][0] <= since:
                sums[c] -= recent.popleft()[1]
        return list(sums)


class MoverThread:
    """``slab_automove`` on the page mover's own thread (1.6.45 ``slabs_mover.c`` 604-720).

    When idle the thread runs the automover, then sleeps 100 ms -- 1 s once it
    has gone 11 runs without a move; a move resets that count.  A move to
    another class sets ``am_last`` to the second of the wall clock (the model:
    of the workload), and the runs left in that second do not run the
    algorithm; a move to the global pool does not, and the algorithm runs again
    as soon as the page has moved.  Each run fills a slot of the window, so the
    window is counted in runs, ten to a second after a move.
    """

    def __init__(self, engine, start: float):
        self.e = engine
        self.automover = WindowedAutomover(engine)
        self.next_wake = round(start * 1_000_000)    # the thread starts with the server (whole microseconds)
        self.idle_runs = 0                       # algo_backoff
        self.last_move_second = None             # am_last.tv_sec
        # 1.6.34-1.6.37 (slabs_mover.c 644-649): 1 s between idle runs from the first
        self.slow = engine.bg.rules.rules["mover_idle_sleep"] == "second"
        self.move = None                         # the page move under way (mover.PageMove), resumed each wake

    def step(self) -> None:
        wake = self.next_wake
        if self.move is not None:
            self._pass(wake)
            return
        second = wake // 1_000_000
        if self.last_move_second != second:
            source, dest = self.automover.run()
            if source != -1 and dest != -1:
                if dest != 0:
                    self.last_move_second = second
                self.begin(source, dest, False, wake)
                return
        self.next_wake = wake + (1_000_000 if self.idle_runs > 10 or self.slow else 100_000)
        self.idle_runs += 1

    def begin(self, source: int, dest: int, allow_evictions: bool, now_us: int, asked: bool = False) -> None:
        """``do_slabs_reassign`` then the thread's first pass at once: from its own automover, or
        ``asked`` by a worker (``slab_automove=2``'s ``slabs_reassign``, which signals the thread awake
        and leaves its idle count as it was); a source of fewer than 2 pages is refused
        (REASSIGN_NOSPARE) and the thread runs again at once."""
        from slabcalc.engines.mover import PageMove

        if not asked:
            self.idle_runs = 0                  # algo_backoff = 0: the automover moved a page
        store = self.e.store
        pages = store.slabs.pages
        if source == dest or not 0 <= dest < len(pages) or len(pages[source]) < 2:
            if not asked:                       # a worker's refused request wakes nothing
                self.next_wake = now_us
            return
        self.move = PageMove(store, source, dest, allow_evictions)
        self._pass(now_us)

    def _pass(self, now_us: int) -> None:
        """A pass of the move under way: done, the thread runs again at once; busy, it sleeps first."""
        assert self.move is not None
        sleep = self.move.step()
        if sleep == 0:
            self.move = None
        self.next_wake = now_us + sleep

    # -- idle stretches (engines/idle.py): past 11 idle runs, one run a second ------------------

    def idle_key(self, ref: int):
        """The thread's state relative to ``ref`` (microseconds); None until it sleeps 1 s a run,
        or while a move's second holds the runs back."""
        if self.idle_runs <= 10 or self.move is not None:
            return None
        if self.last_move_second is not None and self.last_move_second >= self.next_wake // 1_000_000:
            return None
        return (self.next_wake - ref,)

    def quiet_through(self) -> float:
        """The last second through which its runs certainly move nothing."""
        first = self.e.epoch + self.next_wake // 1_000_000      # current_time of its next run
        return first - 1 + self.automover.quiet_runs(first)

    def skip(self, seconds: int) -> None:
        self.automover.skip(self.e.epoch + self.next_wake // 1_000_000, seconds)
        self.next_wake += seconds * 1_000_000
        self.idle_runs += seconds


class PickAny:
    """``slabs_reassign_pick_any``: the next class after the last one picked with a spare page."""

    def __init__(self, engine):
        self.e = engine
        self.cur = 0

    def source(self, dest: int) -> int:
        pages = self.e.slabs.pages
        largest = len(pages) - 1
        for _ in range(largest):
            self.cur += 1
            if self.cur > largest:
                self.cur = 1
            if self.cur == dest:
                continue
            if len(pages[self.cur]) > 1:
                return self.cur
        return -1
