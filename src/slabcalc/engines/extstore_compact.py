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

The page is read back one ``ext_wbuf_size`` buffer at a time (storage.c 942-975): a read is
submitted, the next turn of the thread rescues the values written into that buffer (in the order
they were written: :attr:`FlashRef.offset <slabcalc.engines.extstore.FlashRef>`), the next
submits the following buffer, and the turn after the last closes the page.  Before 1.6.25 the
thread sleeps ``MIN_STORAGE_COMPACT_SLEEP`` (10 ms, 769, 979) between turns and wakes the flash
maintenance thread before each sleep (929-930; profile ``extstore.replay.compact_read_sleep_us``):
when the first buffer's rescues took the last free page for the ``compact`` bucket, that thread
finds none free and evicts the oldest page not being written (extstore.c 941-946, 958-971,
981-995) -- often the page being compacted; the read of its next buffer then misses (extstore.c
800) and the compaction stops there (storage.c 954-959), the rest of its values evicted with it.
Before 1.6.21 a value read back moves when its key's header points at the page, at any offset
(810): an older copy of a key set again moves (1.6.21 checks the offset, 821; profile
``compact_checks_offset``); before 1.6.25 the check reads the pages as the maintenance thread last
saw them (727-728; extstore.c 195-201, 1000-1005; profile ``compact_page_data``).  From 1.6.25 the
buffers are read back to back (1.6.45 storage.c 1149-1187, no sleep): a page evicted under the
compaction (by its own write finding no free page) stops it the same way.

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
        # the timer-woken thread's sleeps (storage.c 892, 979): between a compaction's steps, and idle
        self.read_sleep = storage.replay["compact_read_sleep_us"]
        self.max_sleep = self.to_sleep = storage.max_sleep
        self.job: _Job | None = None                    # the compaction under way (wake)
        self.checks_offset = storage.replay["compact_checks_offset"]
        self.log: dict = {}             # page id -> (its version, [(offset, key, ntotal)] written into it)
        self.stale_page_data = storage.replay["compact_page_data"] == "last_maintenance"
        self.seen: list | None = [] if self.stale_page_data else None     # the pages the check reads

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
        for seen in (self.seen if self.seen is not None else self._page_data()):
            page, version, used = seen
            if lowest is None or version < lowest[1]:
                lowest = seen
            if used < frag_limit and (low is None or version < low[1]):
                low = seen
        if low is not None:
            return low[0], False, low[1]
        if lowest is not None and self.drop_unread and free <= self.drop_under:
            return lowest[0], True, lowest[1]
        return None

    def _page_data(self) -> list[tuple]:
        """``(page, version, bytes_used)`` of each page the check may pick: holding values, not being
        written, not free, not of the ``lowttl`` bucket (storage.c 731-734; extstore.c 954-961)."""
        return [(page, page.version, page.bytes_used) for page in self.s.flash.pages
                if not (page.active or page.version == 0 or page.objects == 0 or page.bucket == LOWTTL)]

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
            return low, False, low.version
        if lowest is not None and self.drop_unread and free < self.drop_under:
            return lowest, True, lowest.version
        return None

    def wake(self) -> int:
        """One turn of the timer-woken thread (before 1.6.25, storage.c 926-983): the check when no
        compaction is under way, one step of the one that is; the microseconds it sleeps next
        (``MIN_STORAGE_COMPACT_SLEEP`` while compacting, 979; ``ext_max_sleep`` added once idle
        again, 981-982).  With no sleep between reads (``compact_read_sleep_us: 0``) the page is
        compacted at once (:meth:`run`)."""
        if not self.read_sleep:
            self.run()
            self.to_sleep = self.max_sleep
            return self._sleep()
        if self.job is None:
            picked = self.check()
            if picked is not None:
                self.job = self._start(*picked)
        job = self.job
        if job is None:
            if self.to_sleep < self.max_sleep:
                self.to_sleep += self.max_sleep
            return self._sleep()
        if job.submitted:
            job.submitted = False
            if job.miss:                                # storage.c 954-959: the page went, stop
                self.job = None
            else:                                       # 960-967
                self._readback(job)
        elif job.next < len(job.buffers):               # 944-953: submit the next buffer's read
            job.submitted = True
            job.miss = not self.s.flash.valid(job.page.id, job.version)     # extstore.c 800
        else:                                           # 968-975
            self._close(job)
            self.job = None
        self.to_sleep = self.read_sleep
        return self._sleep()

    def _sleep(self) -> int:
        """Before the sleep the thread wakes the maintenance thread (storage.c 929), whose scan of the
        pages is what the next check reads (``extstore_get_page_data``, extstore.c 195-201, copied
        at 1000-1005) -- taken before the eviction it may make (981-995).  From 1.6.25 the check
        reads the pages themselves (1.6.45 extstore.c 195-220; profile ``compact_page_data``)."""
        if self.stale_page_data:
            self.seen = self._page_data()
        return self.to_sleep

    def run(self) -> bool:
        """A check, and the compaction of the page it picks, its buffers read back to back: whether
        one was compacted (1.6.25+, 1.6.45 storage.c 1139-1187)."""
        picked = self.check()
        if picked is None:
            return False
        job = self._start(*picked)
        f = self.s.flash
        while job.next < len(job.buffers):
            if not f.valid(job.page.id, job.version):       # the read misses: stop (1.6.45 1161-1166)
                return True
            self._readback(job)
        self._close(job)
        return True

    def _close(self, job: "_Job") -> None:
        """``extstore_close_page`` (extstore.c 712-722): the page freed, if it is still the one picked."""
        f = self.s.flash
        if f.valid(job.page.id, job.version):
            f.close_page(job.page)

    def written(self, where: tuple[int, int, int], key, ntotal: int) -> None:
        """A value went to flash at ``where`` (page, version, offset): what a read of its buffer
        brings back, whatever becomes of its header (kept until the page is taken again)."""
        pid, version, offset = where
        log = self.log.get(pid)
        if log is None or log[0] != version:
            log = self.log[pid] = (version, [])
        log[1].append((offset, key, ntotal))

    def _start(self, page, drop_unread: bool, version: int) -> "_Job":
        """The values written into the page, by the ``ext_wbuf_size`` buffer whose read brings them
        back, in the order written (their offsets, extstore.c 605)."""
        f = self.s.flash
        wbuf = f.wbuf_size
        buffers: list[list] = [[] for _ in range(-(-f.page_size // wbuf))]
        log = self.log.get(page.id)
        if log is not None and log[0] == version:
            for entry in log[1]:
                buffers[entry[0] // wbuf].append(entry)
        return _Job(page, version, drop_unread, buffers)

    def _readback(self, job: "_Job") -> None:
        """``storage_compact_readback`` (storage.c 779-871) of the job's next buffer: for each value
        read, the key's header item (``assoc_find``, 801) if it is linked, unexpired and points at
        the page -- and, from 1.6.21, at that value's offset (1.6.21 storage.c 821, commit
        c91842e13; profile ``compact_checks_offset``) -- has its value deleted from the page and
        written again, as read, into the ``compact`` bucket.  Before 1.6.21 an older copy of an
        overwritten key, read first, is what moves (810: page and version only)."""
        s = self.s
        f, now = s.flash, s.e.now
        pid, version = job.page.id, job.version
        entries = job.buffers[job.next]
        job.next += 1
        for offset, key, ntotal in entries:
            ref = s.refs.get(key)
            if ref is None or ref.page != pid or ref.version != version:
                continue
            if self.checks_offset and ref.offset != offset:
                continue
            header = ref.header
            if header.exptime and header.exptime <= now:
                continue
            f.delete(pid, version, ntotal)
            if job.drop_unread and header.seg == COLD:
                self.skipped += 1
                continue
            where = None
            for _ in range(WRITE_TRIES):
                where = f.write(COMPACT, ntotal)
                if where is not None:
                    break
                f.io_done()
            if where is None:
                self.lost += 1
                continue
            ref.page, ref.version, ref.offset = where
            ref.ntotal = ntotal
            self.written(where, key, ntotal)
            self.rescues += 1


class _Job:
    """A compaction under way: the page, its version when picked, its values by write buffer, the
    next buffer to read, whether that read was submitted and whether it missed."""

    __slots__ = ("page", "version", "drop_unread", "buffers", "next", "submitted", "miss")

    def __init__(self, page, version: int, drop_unread: bool, buffers: list):
        self.page, self.version, self.drop_unread, self.buffers = page, version, drop_unread, buffers
        self.next = 0
        self.submitted = self.miss = False
