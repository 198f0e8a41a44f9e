"""Extstore's compaction thread (1.6.18 ``storage.c`` 700-1000), on the write thread's clock.

Once a second (``storage_compact_thread`` sleeps ``ext_max_sleep``, 926-931) it checks the flash
(``storage_compact_check``, 700-766): with at most ``ext_compact_under`` pages free, the page
limit is ``page_size x (1 - pages_free / page_count) x ext_max_frag`` bytes; the oldest page (by
version) holding fewer live bytes than that, not being written, not of the ``lowttl`` bucket, is
compacted -- or, with ``ext_drop_unread`` and at most ``ext_drop_under`` pages free, the oldest
page of all, its unread values dropped.  Compaction (``storage_compact_readback``, 779-866)
reads the page and, for each value whose header item is still linked, unexpired and points
there, deletes it from the page and writes it again into the ``compact`` bucket
(``extstore_compact_rescues``) -- unless ``drop_unread`` and the header sits in COLD
(``extstore_compact_skipped``); a value that finds no room is lost (``extstore_compact_lost``).
The page is then closed and freed (``extstore_close_page``): headers still pointing into it miss.
The real thread reads the page a write buffer at a time, 10 ms apart; the model compacts the
whole page at the check.

From 1.6.25 (profile ``extstore.replay.compact_pick: most_fragmented``, ``compact_wake:
written``) the thread is woken by the write thread instead of a timer and picks the most
fragmented page (:meth:`Compactor._check_most_fragmented`), page after page (:meth:`run_all`).
"""

from __future__ import annotations

from slabcalc.engines.flash import COMPACT, LOWTTL
from slabcalc.engines.lru import COLD

WRITE_TRIES = 10        # storage.c 826: ten tries, 1 ms apart, for room in the compact bucket


class Compactor:
    def __init__(self, storage):
        self.s = storage
        ext = storage.ext
        self.compact_under, self.drop_under, self.max_frag = ext.compact_under, ext.drop_under, ext.max_frag
        self.drop_unread = "ext_drop_unread" in ext.words
        self.rescues = self.lost = self.skipped = 0
        self.most_fragmented = storage.replay["compact_pick"] == "most_fragmented"

    def run_all(self) -> None:
        """1.6.25+ (storage.c 1102-1190): woken, the thread compacts page after page while the
        check finds one, then waits for the write thread's next signal."""
        for _ in range(len(self.s.flash.pages)):
            if not self.run():
                return

    def check(self):
        """``storage_compact_check``: ``(page, drop_unread)`` to compact, or None."""
        if self.most_fragmented:
            return self._check_most_fragmented()
        f = self.s.flash
        free = len(f.free)
        if f.pages_used == 0 or free > self.compact_under:
            return None
        frag_limit = int(f.page_size * ((1.0 - free / f.page_count) * self.max_frag))
        low = lowest = None
        for page in f.pages:
            if page.active or page.version == 0 or page.objects == 0 or page.bucket == LOWTTL:
                continue
            if lowest is None or page.version < lowest.version:
                lowest = page
            if page.bytes_used < frag_limit and (low is None or page.version < low.version):
                low = page
        if low is not None:
            return low, False
        if lowest is not None and self.drop_unread and free <= self.drop_under:
            return lowest, True
        return None

    def _check_most_fragmented(self):
        """1.6.25+ ``storage_compact_check`` (1.6.45 storage.c 799-925): with fewer than
        ``ext_compact_under`` pages free (all pages are in the default free bucket), the page
        with the most bytes not used among those not being written that hold under
        ``page_size x ext_max_frag`` (the first such by page id on a tie; a lowttl page too), or,
        with ``ext_drop_unread`` and fewer than ``ext_drop_under`` free, the oldest page."""
        f = self.s.flash
        free = len(f.free)
        if f.pages_used == 0 or not free < self.compact_under:
            return None
        frag_limit = int(f.page_size * self.max_frag)
        low = lowest = None
        most = 0
        for page in f.pages:
            if page.version == 0 or page.active:
                continue
            if lowest is None or page.version < lowest.version:
                lowest = page
            frag = f.page_size - page.bytes_used
            if page.bytes_used < frag_limit and frag > most:
                low, most = page, frag
        if low is not None:
            return low, False
        if lowest is not None and self.drop_unread and free < self.drop_under:
            return lowest, True
        return None

    def run(self) -> bool:
        """A check, and the compaction of the page it picks: whether one was compacted."""
        picked = self.check()
        if picked is None:
            return False
        page, drop_unread = picked
        s = self.s
        f, now = s.flash, s.e.now
        pid, version = page.id, page.version
        for ref in [r for r in s.refs.values() if r.page == pid and r.version == version]:
            header = ref.header
            if header.exptime and header.exptime <= now:
                continue
            f.delete(pid, version, ref.ntotal)
            if drop_unread and header.seg == COLD:
                self.skipped += 1
                continue
            where = None
            for _ in range(WRITE_TRIES):
                where = f.write(COMPACT, ref.ntotal)
                if where is not None:
                    break
                f.io_done()
            if where is None:
                self.lost += 1
                continue
            ref.page, ref.version = where
            self.rescues += 1
        f.close_page(page)
        return True
