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
            slot = self.window[c][at]
            perslab = e.perslab[c]
            free_target = int(perslab * self.free_pages)
            dirty = int(evicted[c] > b_evicted[c] or oom[c] > b_oom[c] or pages[c] > b_pages[c])
            # a read buffer held for the write thread's next pass (engines/extstore.py) is in
            # flight for tens of microseconds in the server: the automover's run does not see it
            free_chunks = len(slabs.free[c]) + (c in held)
            lru = cold[c]
            slot[:] = [now - lru.next.time if lru.n else 0, dirty, int(free_chunks > free_target * 2)]
            window = self.window[c]
            age = sum(s[0] for s in window) // size
            if free_chunks > perslab * self.reclaim_pages and not any(s[1] for s in window):
                if small or sum(s[2] for s in window) >= size:
                    src, dst, too_free = c, 0, True
            if not small and age > oldest_age and pages[c] > self.source_pages:
                oldest, oldest_age = c, age
        self.before = after
        if self.cur < size:
            return src, dst
        if not too_free and global_low and oldest != -1:
            src, dst = oldest, 0
        return src, dst

    def quiet_runs(self, first: int) -> float:
        """Idle stretches are not jumped over with extstore on (engines/extstore.py)."""
        return 0

    def skip(self, first: int, runs: int) -> None:     # never called: quiet_runs is 0
        self.cur += runs


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
            slot = self.window[c][at]
            perslab = e.perslab[c]
            dirty = int(small and (evicted[c] > b_evicted[c] or oom[c] > b_oom[c] or pages[c] > b_pages[c]))
            free_chunks = len(slabs.free[c]) + (c in held)        # as in run()
            lru = cold[c]
            age_now = now - lru.next.time if lru.n else 0
            slot[:] = [age_now, dirty, int(free_chunks > perslab * self.source_pages)]
            window = self.window[c]
            if pool and any(s[1] for s in window):
                continue
            if sum(s[2] for s in window) >= size:
                src, dst, too_free = c, 0, True
            if small or pages[c] <= self.source_pages:
                continue
            age = age_now if now_age else sum(s[0] for s in window) // size
            if age > oldest_age or (now_age and oldest == -1):
                oldest, oldest_age = c, age
        self.before = after
        if self.cur < size:
            return src, dst
        storage.pool_min = self.watermark
        if not too_free and global_low and oldest != -1:
            src, dst = oldest, 0
        return src, dst


class NowAgeExtstoreAutomover(LaterExtstoreAutomover):
    """1.6.38's (``automove: "1.6.38"``): a class's age is its COLD tail's now, the window filled
    before the pool's minimum is set."""

    now_age = True


# by the profile's extstore.replay.automove (validated: model/profile/data.py REPLAY_KEYS)
AUTOMOVERS = {"1.6.18": ExtstoreAutomover, "1.6.34": LaterExtstoreAutomover, "1.6.38": NowAgeExtstoreAutomover}


def extstore_automover(engine) -> ExtstoreAutomover:
    """The automover of ``engine``'s release with extstore on."""
    return AUTOMOVERS[engine.settings.profile.extstore.replay["automove"]](engine)
