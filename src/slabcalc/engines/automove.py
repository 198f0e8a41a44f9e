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

``slab_automove=2`` (:class:`PickAny`): every eviction asks for a page, from
the next class (round robin over all classes, from where the last request
stopped) that has more than one page.
"""

from __future__ import annotations

from .lru import COLD


class WindowedAutomover:
    def __init__(self, engine):
        self.e = engine
        bg = engine.bg
        self.size = bg.slab_automove_window
        self.ratio = bg.slab_automove_ratio
        const = bg.constant
        self.source_pages = const["automove_source_pages"]
        self.reclaim_tenths = const["automove_reclaim_tenths"]
        n = len(engine.size)
        # per class, per slot: [age, dirty, evicted_ratio, evicted_seen]
        self.window = [[[0, 0, 0.0, 0] for _ in range(self.size)] for _ in range(n)]
        self.cur = 0
        self.before = self._counters()

    def _counters(self):
        e = self.e
        lrus = e.lrus
        return (list(lrus.evicted), list(lrus.outofmemory), [len(p) for p in e.slabs.pages])

    def run(self) -> tuple[int, int]:
        """``slab_automove_run``: ``(source, destination)``, -1 for none, destination 0 the pool."""
        e = self.e
        now = e.now
        evicted, oom, pages = after = self._counters()
        b_evicted, b_oom, b_pages = self.before
        n = len(pages)
        total_evicted = sum(evicted[c] - b_evicted[c] for c in range(1, n))
        self.cur += 1
        slot_at = self.cur % self.size
        src = dst = -1
        oldest, oldest_age = -1, 0
        youngest, youngest_age, youngest_evicting = -1, None, False
        cold = e.lrus.q[COLD]
        free, perslab = e.slabs.free, e.perslab
        for c in range(1, n):
            slot = self.window[c][slot_at]
            slot[:] = [0, 0, 0.0, 0]
            delta = evicted[c] - b_evicted[c]
            if delta > 0:
                slot[2] = delta / total_evicted
                slot[3] = 1
                slot[1] = 1
            if oom[c] - b_oom[c] > 0 or pages[c] - b_pages[c] > 0:
                slot[1] = 1
            lru = cold[c]
            slot[0] = now - lru[next(iter(lru))].time if lru else 0
            window = self.window[c]
            age = sum(s[0] for s in window) // self.size
            dirty = sum(s[1] for s in window)
            if len(free[c]) * 10 > perslab[c] * self.reclaim_tenths and dirty == 0:
                src, dst = c, 0
                oldest = youngest = -1
                break
            if age > oldest_age and pages[c] > self.source_pages:
                oldest, oldest_age = c, age
            seen = sum(s[3] for s in window)
            ratio = sum(s[2] for s in window)
            if (youngest_age is None or age < youngest_age) and (seen > self.size // 2
                                                                  or ratio / self.size > 0.25):
                youngest, youngest_age, youngest_evicting = c, age, bool(slot[3])
        self.before = after
        if youngest != -1 and oldest != -1 and self.cur > self.size:
            if youngest_age < oldest_age * self.ratio and youngest_evicting:
                src, dst = oldest, youngest
        return src, dst


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
