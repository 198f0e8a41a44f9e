"""The storage write thread of 1.6.20 and later (``storage_write_thread``, 1.6.45 storage.c 599-730).

:class:`slabcalc.engines.extstore.Storage` runs 1.6.18's pass, :class:`LaterStorage` this one: the
one a release runs is chosen by its profile's ``extstore.replay.write_target`` (``margin`` or
``pool_deficit``, validated: :data:`WRITE_THREADS`).  What differs by release within it is profile
data too (docs/extstore-releases.md): the walk's order (1.6.34), the page freed ahead at the pool's minimum
and the small classes' caps (1.6.38), the compaction thread's wake (1.6.25).
"""

from __future__ import annotations

from slabcalc.engines.extstore import Storage
from slabcalc.engines.lru import COLD


class LaterStorage(Storage):
    """1.6.20's and later storage write thread."""

    def step(self) -> None:
        """One pass of 1.6.20's and later write thread (1.6.45 storage.c 599-730; releases differ
        as profile data): a class is flushed early (any item, age 0) while its free chunks are
        under ``target`` pages' worth, ``target`` being the global pool's deficit under its
        minimum (1.6.38: 1 page at the minimum, and at most 3, 4 or 5 pages for classes of
        chunks under 500, 1000, 2000 bytes); a pass that wrote goes again at once, a pass that
        wrote nothing sleeps, setting every class's backoff back to 1.  From 1.6.25 the writes
        and sleeps wake the compaction thread (:meth:`kick_compact`)."""
        if self.slept:
            self.flash.io_done()                # the IO thread wrote the buffers during the sleep
        if not self.compact_on_writes:
            self.maintain_due()
        self.counter += 1
        if self.to_sleep > self.max_sleep:
            self.to_sleep = self.max_sleep
        wrote = self._pass(self._target_pages())
        self.slept = not wrote or self.sleep_after_moves
        if self.slept:
            self._sleep()
        self.free_held()

    def _target_pages(self) -> int:
        """The global pool's deficit under its minimum, in pages (1.6.38: ``at_minimum`` at the minimum)."""
        pool = len(self.e.slabs.pool)
        if pool < self.pool_min:
            return self.pool_min - pool
        return self.at_minimum if pool == self.pool_min else 0

    def _pass(self, target_pages: int) -> bool:
        """The classes in the walk's order (1.6.34: downwards), each whose backoff lets it this pass
        flushed; whether any wrote.  A class with no COLD tail, or that wrote nothing, backs off further."""
        counter, backoff, cold = self.counter, self.backoff, self.e.lrus.q[COLD]
        walk = self._walk()
        wrote = False
        for x in (reversed(walk) if self.down else walk):
            b = backoff[x]
            if b and counter % b:
                continue
            if not cold[x].n:
                backoff[x] = b + 1
                continue
            moved = self._flush(x, target_pages)
            backoff[x] = 1 if moved else b + 1
            wrote = wrote or moved
        return wrote

    def _flush(self, x: int, target_pages: int) -> bool:
        """Class ``x``'s COLD tail written to flash while it can: any item (age 0) while the class's free
        chunks are under its target (``target_pages`` capped for small chunks, 1.6.38), else items past
        ``item_age``; each write halves the sleep.  Whether any was written."""
        e = self.e
        chunk_size = e.settings.slab_page_size // e.perslab[x]
        target = self._class_target(x, target_pages)
        chunks_free = len(e.slabs.free[x])
        moved = False
        while True:
            age = 0 if chunks_free < target else self.item_age
            if not self.write(x, age):
                break
            chunks_free += 1
            moved = True
            if self.compact_on_writes:
                self.kick_compact(chunk_size)
            if self.to_sleep > self.sleep_min:
                self.to_sleep //= 2
        return moved

    def _class_target(self, x: int, target_pages: int) -> int:
        """The free chunks under which class ``x`` is flushed early: ``target_pages`` pages' worth,
        capped for small chunks (1.6.38; 1.6.45 storage.c 661-677)."""
        perslab = self.e.perslab[x]
        chunk_size = self.e.settings.slab_page_size // perslab
        pages = target_pages
        for under, most in self.small_caps:
            if chunk_size < under:
                pages = min(pages, most)
                break
        return perslab * pages

    def first_age(self, x: int):
        """The age the next pass's first write from class ``x`` would ask: 0 under its target, else
        ``ext_item_age`` (1.6.45 storage.c 682-686)."""
        if len(self.e.slabs.free[x]) < self._class_target(x, self._target_pages()):
            return 0
        return self.item_age

    def _sleep(self) -> None:
        """A pass that wrote nothing (or, where the release says, any pass) sleeps: every class's
        backoff set back to 1 (where the release does), the compaction thread woken (1.6.25+), the
        next pass a sleep later, and the next sleep a microsecond longer."""
        if self.reset_on_sleep:
            backoff = self.backoff
            for x in range(len(backoff)):
                backoff[x] = 1
        if self.compact_on_writes:
            self.kick_compact(self.to_sleep * 10)
        self.next_wake += self.to_sleep
        self.to_sleep += 1

    def kick_compact(self, amount: int) -> None:
        """1.6.25+ (storage.c 660-666, 693-697): a slab page's worth of chunk sizes written (or ten
        times the sleeps) signals the compaction thread, which compacts while a page qualifies."""
        self.check_compact -= amount
        if self.check_compact < 0:
            self.check_compact = self.e.settings.slab_page_size
            self.compactor.run_all()

    def maintain_due(self) -> None:
        """Before 1.6.25: the compaction thread's wake each ``ext_max_sleep``, each 10 ms while it
        compacts (``Storage.step``)."""
        if self.next_wake >= self.next_maint:
            self.next_maint += self.compactor.wake()
            if self.maint_evicts and not self.flash.free:
                self.flash.maintain()


# by the profile's extstore.replay.write_target (validated: model/profile/data.py REPLAY_KEYS)
WRITE_THREADS = {"margin": Storage, "pool_deficit": LaterStorage}
