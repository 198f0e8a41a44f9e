"""The flash file of extstore: pages, their write buffers, versions and objects (1.6.18 ``extstore.c``).

What simulate needs of it, on the workload's clock:

``extstore_write_request`` (extstore.c 545-596)
    Each page bucket has an open page.  No open page: one is taken from the
    free list (``_allocate_page``, 417-451), or, with none free, the
    maintenance thread is woken and the request fails.  A write buffer that an
    object does not fit is submitted and marked full (576-579); while it is
    being written, requests of that bucket fail.  A new buffer takes the next
    ``ext_wbuf_size`` bytes of the page (``_allocate_wbuf``, 454-474); a page
    whose buffers reached ``ext_page_size`` is closed for writing and the
    bucket takes a new page (566-572), failing that request.  The model's IO
    thread finishes a submitted buffer before the storage thread's next wake.
``extstore_maint_thread`` (extstore.c 928-1000)
    Frees pages that hold no object; with no free page left it *evicts* the
    page of lowest version (the oldest written) that is not being written:
    ``page_evictions``, and the headers pointing into it miss when read.
    From 1.6.25 there is no maintenance thread: the write request that finds
    no free page evicts the oldest itself (``_evict_page``, 1.6.45 extstore.c
    429-466, 605, 620) -- what :meth:`Flash._allocate_page` does for every
    release; only before 1.6.25 does the storage thread's clock also evict
    each second (profile ``extstore.replay.flash_evict``).
``extstore_get_stats`` (extstore.c 172-193)
    ``pages_used`` is ``page_count - page_free``; 1.6.18 never puts page 0 on
    the free list (343-355), so it counts as used from the start.
"""

from __future__ import annotations

DEFAULT, COMPACT, CHUNKED, LOWTTL = 0, 1, 2, 3      # extstore.h PAGE_BUCKET_*


class Page:
    __slots__ = ("id", "version", "allocated", "wbuf_free", "wbuf_full", "objects", "bytes_used", "active", "bucket")

    def __init__(self, pid: int):
        self.id = pid
        self.version = 0
        self.allocated = 0          # bytes of the page given to write buffers
        self.wbuf_free = -1         # bytes left in its open write buffer; -1: none open
        self.wbuf_full = False      # the open buffer was submitted (being written)
        self.objects = 0
        self.bytes_used = 0
        self.active = False         # a bucket writes to it
        self.bucket = 0


class Flash:
    """The file's pages and ``stats``' ``extstore_*`` counters."""

    def __init__(self, page_count: int, reserved: int, page_size: int, wbuf_size: int, buckets: int):
        self.page_size, self.wbuf_size = page_size, wbuf_size
        self.pages = [Page(i) for i in range(page_count)]
        # the free list: the last page pushed first, so page ``reserved`` is on top (extstore.c 343-355)
        self.free = [p for p in reversed(self.pages[reserved:])]
        self.page_count = page_count
        self.open: list[Page | None] = [None] * buckets
        self.next_version = 1
        self.objects_written = self.bytes_written = 0
        self.objects_used = self.bytes_used = 0
        self.page_evictions = self.objects_evicted = self.bytes_evicted = 0
        self.page_allocs = self.page_reclaims = 0

    @property
    def pages_used(self) -> int:
        return self.page_count - len(self.free)

    def _allocate_page(self, bucket: int) -> Page | None:
        """``_allocate_page``: the free list's top page opened for ``bucket``; none free wakes the
        maintenance thread (which, in the model, runs at once)."""
        if not self.free:
            self.maintain()
            return None
        page = self.free.pop()
        page.active, page.version, page.bucket = True, self.next_version, bucket
        self.next_version += 1
        page.allocated, page.wbuf_free, page.wbuf_full = 0, -1, False
        self.open[bucket] = page
        self.page_allocs += 1
        return page

    def write(self, bucket: int, length: int) -> tuple[int, int, int] | None:
        """``extstore_write_request`` + ``extstore_write`` of ``length`` bytes: ``(page, version,
        offset)`` -- the offset in the page, its open buffer's start plus what the buffer holds
        (extstore.c 605) --, or None when the request fails (the storage thread tries again at its
        next wake)."""
        page = self.open[bucket]
        if page is None:
            page = self._allocate_page(bucket)
            if page is None:
                return None
        if page.allocated >= self.page_size and (page.wbuf_free < 0 or page.wbuf_full):
            self._close(page)
            self._allocate_page(bucket)
            return None
        if page.wbuf_free >= 0 and not page.wbuf_full and page.wbuf_free < length:
            page.wbuf_full = True                       # _submit_wbuf
        if page.wbuf_free < 0 and page.allocated < self.page_size:
            page.allocated += self.wbuf_size            # _allocate_wbuf
            page.wbuf_free, page.wbuf_full = self.wbuf_size, False
        if page.wbuf_free >= length and not page.wbuf_full:
            offset = page.allocated - page.wbuf_free
            page.wbuf_free -= length
            page.objects += 1
            page.bytes_used += length
            self.objects_written += 1
            self.bytes_written += length
            self.objects_used += 1
            self.bytes_used += length
            return page.id, page.version, offset
        return None

    def io_done(self) -> None:
        """The IO thread wrote every submitted buffer (``_wbuf_cb``): their pages take a new one."""
        for page in self.open:
            if page is not None and page.wbuf_full:
                page.wbuf_free, page.wbuf_full = -1, False

    def _close(self, page: Page) -> None:
        page.active = False
        if page.objects == 0:
            self._free_page(page)

    def _free_page(self, page: Page) -> None:
        """``_free_page`` (extstore.c 867-900): what it still holds is no longer used."""
        self.objects_used -= page.objects
        self.bytes_used -= page.bytes_used
        self.page_reclaims += 1
        page.version = 0            # headers still pointing here miss
        page.objects = page.bytes_used = 0
        page.active = False
        self.free.append(page)

    def delete(self, pid: int, version: int, length: int) -> None:
        """``extstore_delete``: an object's header went; a closed page left empty is freed."""
        page = self.pages[pid]
        if page.version != version:
            return
        page.objects -= 1
        page.bytes_used -= length
        self.objects_used -= 1
        self.bytes_used -= length
        if page.objects == 0 and not page.active:
            self._free_page(page)

    def close_page(self, page: Page) -> None:
        """``extstore_close_page`` after a compaction: the page is freed (unless it already was)."""
        if page.version != 0 and not page.active:
            self._free_page(page)

    def valid(self, pid: int, version: int) -> bool:
        """The object is still on flash (its page was not evicted or freed since)."""
        return self.pages[pid].version == version

    def maintain(self) -> None:
        """``extstore_maint_thread`` woken with no free page: evict the oldest page not written to."""
        oldest = self.evictable()
        if oldest is not None:
            self.page_evictions += 1
            self.objects_evicted += oldest.objects
            self.bytes_evicted += oldest.bytes_used
            self._free_page(oldest)

    def evictable(self) -> Page | None:
        """The page :meth:`maintain` evicts: the oldest holding objects that is neither being written
        nor free (extstore.c 958-971); None when there is none."""
        oldest = None
        for page in self.pages:
            if page.active or page.version == 0:        # being written, or free
                continue
            if page.objects > 0 and (oldest is None or page.version < oldest.version):
                oldest = page
        return oldest
