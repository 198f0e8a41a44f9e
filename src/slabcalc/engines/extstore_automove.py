"""The automover 1.6.18 runs when extstore is on (``slab_automove_extstore.c``; items.c 1574-1580).

Run by the LRU maintainer where the default automover would be (once a second
of ``current_time``, or at once again after a page sent to the pool), it moves
pages only *to the global pool*, which the write thread and every class draw
on (slab_automove_extstore.c 142-232):

* ``memcheck`` (113-131): the pool's watermark is ``slab_automove_freeratio``
  of all pages (the pool's included), at least 2; it becomes the write
  thread's ``ext_global_pool_min``;
* a class whose window (``slab_automove_window`` runs) saw no eviction, no
  allocation failure and no page gained, with more than 2.5 pages of free
  chunks, gives a page to the pool -- a class of chunks below
  ``ext_item_size`` at once, a larger one only if it had over 3 pages of free
  chunks (twice 1.5 pages) for the whole window; the last such class wins;
* else, once the window has filled and the pool was under the watermark at
  the run's start (``global_pool_check``, 87-101), the class of chunks
  ``ext_item_size`` or more whose COLD tail is oldest on the window's average,
  with more than 2 pages, gives one.
"""

from __future__ import annotations

import math

from slabcalc.engines.automove import quiet_slots

COLD = 2
MAX_CLASSES = 64        # MAX_NUMBER_OF_SLAB_CLASSES: the run walks 1..63 (classes without pages idle)


class ExtstoreAutomover:
    def __init__(self, engine):
        e = self.e = engine
        replay = e.settings.profile.extstore.replay
        ext = e.settings.extstore
        self.window_size = e.bg.slab_automove_window
        self.free_ratio = replay["free_ratio"] if ext.free_ratio is None else ext.free_ratio
        self.floor = replay["pool_min_floor"]
        self.free_pages = replay["automove_free_pages"]
        self.reclaim_pages = replay["automove_reclaim_pages"]
        self.source_pages = replay["automove_source_pages"]
        self.item_size = ext.item_size
        n = len(e.size)
        # per class, per slot: [age, dirty, excess_free]
        self.window = [[[0, 0, 0] for _ in range(self.window_size)] for _ in range(n)]
        # per class, the sums of its window's slots, kept as they are written (_write): adding the
        # window up at each run cost 63 classes x 30 slots a second of workload time, a tenth of an
        # extstore replay's CPU (engines/automove.py keeps the same sums for the same reason)
        self.age_sum = [0] * n
        self.dirty_sum = [0] * n
        self.excess_sum = [0] * n
        self.cur = 0
        self.watermark = 0
        self.before = self._counters()          # the init's dry run

    def _counters(self):
        e = self.e
        return (e.lrus.column("evicted"), e.lrus.column("outofmemory"), [len(p) for p in e.slabs.pages])

    def _open_run(self):
        """What every run reads first: the pool's pages, whether the pool is under the last run's
        watermark once -m is reached, this run's window slot and the counters; then the watermark
        anew from memcheck's total (1.6.18 slab_automove_extstore.c 143-149, 110-125)."""
        slabs = self.e.slabs
        pool = len(slabs.pool)
        global_low = slabs.full and pool < self.watermark
        after = self._counters()
        self.cur += 1
        total = sum(after[2][1:]) + pool                                 # memcheck
        self.watermark = max(self.floor, int(total * self.free_ratio))
        return pool, global_low, self.cur % self.window_size, after

    def run(self) -> tuple[int, int]:
        """``slab_automove_extstore_run``: ``(source, 0)`` or ``(-1, -1)``."""
        e = self.e
        slabs, storage = e.slabs, e.storage
        held = storage.held
        _, global_low, at, after = self._open_run()
        (evicted, oom, pages), (b_evicted, b_oom, b_pages) = after, self.before
        storage.pool_min = self.watermark
        src = dst = oldest = -1
        too_free, oldest_age = False, 0
        size = self.window_size
        cold, now = e.lrus.q[COLD], e.now
        for c in range(1, len(pages)):
            small = e.size[c] < self.item_size
            perslab = e.perslab[c]
            dirty = int(evicted[c] > b_evicted[c] or oom[c] > b_oom[c] or pages[c] > b_pages[c])
            # a read buffer held for the write thread's next pass (engines/extstore.py) is in
            # flight for tens of microseconds in the server: the automover's run does not see it
            free_chunks = len(slabs.free[c]) + (c in held)
            lru = cold[c]
            self._write(c, at, now - lru.next.time if lru.n else 0, dirty, self._excess(c, free_chunks))
            age = self.age_sum[c] // size
            if free_chunks > perslab * self.reclaim_pages and not self.dirty_sum[c]:
                if small or self.excess_sum[c] >= size:
                    src, dst, too_free = c, 0, True
            if not small and age > oldest_age and pages[c] > self.source_pages:
                oldest, oldest_age = c, age
        self.before = after
        if self.cur < size:
            return src, dst
        if not too_free and global_low and oldest != -1:
            src, dst = oldest, 0
        return src, dst

    # -- idle stretches (engines/idle.py) -------------------------------------------------------
    # With no counter changed since the last run, a run writes a clean slot (dirty 0; 1.6.18
    # slab_automove_extstore.c 160-169), the COLD tail's age at its second and whether the class's
    # free chunks are over its mark -- both fixed while nothing changes -- and sets the write
    # thread's pool minimum to a watermark that is the last run's.  It gives a page only from a
    # class with free chunks over 2.5 pages whose window has come clean (and, for a class of
    # ``ext_item_size`` or more, full of over-the-mark slots: 186-201), or, once the window has
    # filled with the pool under its watermark, from the oldest class with pages enough (205-226):
    # that one is not counted, the runs are stepped while the pool is low and such a class exists.

    def _excess(self, c: int, free_chunks: int) -> int:
        """The slot's mark: free chunks over twice 1.5 pages' worth (1.6.18 158, 170-174)."""
        return int(free_chunks > int(self.e.perslab[c] * self.free_pages) * 2)

    def quiet_runs(self, first: int) -> float:
        """How many runs from second ``first`` certainly give no page and change nothing but the
        window's slots; 0 when counters changed since the last run, a read buffer is held, the
        watermark or the pool minimum is to change, or the pool is low with a class to take from."""
        e = self.e
        slabs, storage = e.slabs, e.storage
        after = self._counters()
        if after != self.before or storage.held:
            return 0
        pages = after[2]
        pool = len(slabs.pool)
        if self.watermark != max(self.floor, int((sum(pages[1:]) + pool) * self.free_ratio)):
            return 0
        runs = self._pool_min_runs()
        if slabs.full and pool < self.watermark and any(
                e.size[c] >= self.item_size and pages[c] > self.source_pages for c in range(1, len(pages))):
            return 0
        for c in range(1, len(pages)):
            clean = self._clean_in(c, pool)
            if clean is not None:
                runs = min(runs, clean - 1)
        return runs

    def _pool_min_runs(self) -> float:
        """Runs before one sets the write thread's pool minimum anew: every run sets it (1.6.18 125)."""
        return math.inf if self.e.storage.pool_min == self.watermark else 0

    def _clean_in(self, c: int, pool: int) -> int | None:
        """The run (1 the next) that finds class ``c`` free enough to give a page, or None for none."""
        e = self.e
        free_chunks = len(e.slabs.free[c])
        if not free_chunks > e.perslab[c] * self.reclaim_pages:
            return None
        small = e.size[c] < self.item_size
        if not small and not self._excess(c, free_chunks):
            return None
        clean, cur, size = 1, self.cur, self.window_size       # run j writes slot (cur + j) % size
        for i, slot in enumerate(self.window[c]):
            if slot[1] or (not small and not slot[2]):
                clean = max(clean, (i - cur - 1) % size + 1)
        return clean

    def skip(self, first: int, runs: int) -> None:
        """``runs`` quiet runs, one a second from second ``first``: each writes its slot of every
        class's window, clean, with the COLD tail's age at its second and the class's mark."""
        e = self.e
        cold, free = e.lrus.q[COLD], e.slabs.free
        window = self.window
        for now, at in quiet_slots(first, runs, self.cur, self.window_size):
            for c in range(1, len(window)):
                lru = cold[c]
                self._write(c, at, now - lru.next.time if lru.n else 0, 0, self._excess(c, len(free[c])))
        self.cur += runs

    def _write(self, c: int, at: int, age: int, dirty: int, excess: int) -> None:
        """Slot ``at`` of class ``c``'s window written, and the window's sums with it."""
        slot = self.window[c][at]
        self.age_sum[c] += age - slot[0]
        self.dirty_sum[c] += dirty - slot[1]
        self.excess_sum[c] += excess - slot[2]
        slot[:] = [age, dirty, excess]


class LaterExtstoreAutomover(ExtstoreAutomover):
    """1.6.34's automover with extstore (profile ``extstore.replay.automove: "1.6.34"``)."""

    now_age = False         # a class's age: its COLD tail's on the window's average

    def run(self) -> tuple[int, int]:
        """1.6.34's and 1.6.38's ``slab_automove_extstore_run`` (1.6.45 slab_automove_extstore.c
        133-250), on the mover thread: only a class of chunks under ``ext_item_size`` can be
        dirty (an eviction, an allocation failure or a page gained in a run of its window), and
        while the pool holds a page a dirty class is passed over; any class with over 2 pages of
        free chunks in every run of its window gives a page to the pool (the last such wins);
        else, with the window filled, ``-m`` reached and the pool under its watermark, the class
        of chunks ``ext_item_size`` or more with over 2 pages whose COLD tail is oldest gives
        one -- 1.6.34: oldest on the window's average; 1.6.38: now, or the first such class.
        1.6.34 sets the write thread's pool minimum at every run, 1.6.38 once the window filled."""
        e = self.e
        slabs, storage = e.slabs, e.storage
        held = storage.held
        pool, global_low, at, after = self._open_run()
        (evicted, oom, pages), (b_evicted, b_oom, b_pages) = after, self.before
        now_age = self.now_age
        if not now_age:
            storage.pool_min = self.watermark
        src = dst = oldest = -1
        too_free, oldest_age = False, 0
        size = self.window_size
        cold, now = e.lrus.q[COLD], e.now
        for c in range(1, len(pages)):
            small = e.size[c] < self.item_size
            dirty = int(small and (evicted[c] > b_evicted[c] or oom[c] > b_oom[c] or pages[c] > b_pages[c]))
            free_chunks = len(slabs.free[c]) + (c in held)        # as in run()
            lru = cold[c]
            age_now = now - lru.next.time if lru.n else 0
            self._write(c, at, age_now, dirty, self._excess(c, free_chunks))
            if pool and self.dirty_sum[c]:
                continue
            if self.excess_sum[c] >= size:
                src, dst, too_free = c, 0, True
            if small or pages[c] <= self.source_pages:
                continue
            age = age_now if now_age else self.age_sum[c] // size
            if age > oldest_age or (now_age and oldest == -1):
                oldest, oldest_age = c, age
        self.before = after
        if self.cur < size:
            return src, dst
        storage.pool_min = self.watermark
        if not too_free and global_low and oldest != -1:
            src, dst = oldest, 0
        return src, dst

    # -- idle stretches (engines/idle.py): as 1.6.18's, with 1.6.34's rules (1.6.45
    # slab_automove_extstore.c 175-213): only a small class is marked dirty, a class with a dirty
    # slot is passed over only while the pool holds a page, and any class whose window is full of
    # slots over 2 pages of free chunks gives a page to the pool

    def _excess(self, c: int, free_chunks: int) -> int:
        """The slot's mark: free chunks over 2 pages' worth (1.6.45 slab_automove_extstore.c 163, 188-191)."""
        return int(free_chunks > self.e.perslab[c] * self.source_pages)

    def _pool_min_runs(self) -> float:
        """1.6.34 sets the pool minimum at every run; 1.6.38 once the window has filled (1.6.45
        slab_automove_extstore.c 241-245): the runs before that one, when it changes it."""
        if self.e.storage.pool_min == self.watermark:
            return math.inf
        return max(0, self.window_size - self.cur - 1) if self.now_age else 0

    def _clean_in(self, c: int, pool: int) -> int | None:
        free_chunks = len(self.e.slabs.free[c])
        if not self._excess(c, free_chunks):
            return None
        clean, cur, size = 1, self.cur, self.window_size
        for i, slot in enumerate(self.window[c]):
            if not slot[2] or (pool and slot[1]):
                clean = max(clean, (i - cur - 1) % size + 1)
        return clean


class NowAgeExtstoreAutomover(LaterExtstoreAutomover):
    """1.6.38's (``automove: "1.6.38"``): a class's age is its COLD tail's now, the window filled
    before the pool's minimum is set."""

    now_age = True


# by the profile's extstore.replay.automove (validated: model/profile/data.py REPLAY_KEYS)
AUTOMOVERS = {"1.6.18": ExtstoreAutomover, "1.6.34": LaterExtstoreAutomover, "1.6.38": NowAgeExtstoreAutomover}


def extstore_automover(engine) -> ExtstoreAutomover:
    """The automover of ``engine``'s release with extstore on."""
    return AUTOMOVERS[engine.settings.profile.extstore.replay["automove"]](engine)
