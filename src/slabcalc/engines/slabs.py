"""The slab allocator: pages, each class's free list, the global page pool (1.6.18 ``slabs.c``).

Chunks are physical: a chunk is ``page << 32 | slot``, so the page mover can
find what lives in the page it clears.  Orders follow memcached:

``split_slab_page_into_freelist`` (slabs.c 349)
    A new page's chunks are freed first to last, so the last chunk is on top
    of the free list and is handed out first.
``do_slabs_alloc`` / ``do_slabs_free`` (slabs.c 406, 498)
    The free list is a stack: the chunk freed last is reused first.
``do_slabs_newslab`` (slabs.c 369)
    A page of ``slab_page_size`` bytes when ``slab_reassign`` or chunked
    items are on, else ``size * perslab``.  Refused when ``total_malloced +
    page > -m`` *and* the class has a page *and* the global pool is empty --
    a class's first page is always granted; a pool page is taken before new
    memory (``get_page_from_global_pool``, the page freed last), and does not
    count again in ``total_malloced``.
``slab_list`` (slabs.c 1139-1144)
    A class's pages in the order it got them; the page mover always takes
    the first ("most likely to contain the oldest items").
"""

from __future__ import annotations

import math
from typing import Final

PAGE_SHIFT = 32
# A sampled replay's carry (``Slabs.carry``) is rounded to the nearest whole chunk, a half up: a carry of
# half a chunk or more is a chunk owed, below minus a half a chunk too many.  The shares are floats, and
# their sums carry rounding error (a half may be summed as 0.49999999999): one slack for every such
# test, so that the four places (split, left, pay and the allocation's guard before pay) agree.
CARRY_SLACK: Final = 1e-9


class Slabs:
    """Pages and free chunks per class; class 0 is the global page pool."""

    def __init__(self, sizes: list[int], perslab: list[int], page_len: list[int], limit: int,
                 share: float = 1.0) -> None:
        self.size, self.perslab, self.page_len = sizes, perslab, page_len
        n = len(sizes)
        # a sampled replay (engines.sample): a page holds ``share`` of its chunks -- a class's k pages
        # hold their shares' sum rounded to the nearest whole chunk (``carry``, kept in [-1/2, 1/2)) --
        # and counts in total_malloced as a whole page, so -m and the pages are the node's.  Rounded,
        # not cut: a class held half a chunk short on average, each class of a 5 % sample of 1 GB, 2.4 %
        # of the node's bytes together, and the sample's hit ratio 0.0023 low (docs/speed.md, issue 39)
        self.share = share
        self.per_page = [p * share for p in perslab]     # chunks a page holds, on average
        self.carry = [0.0] * n                            # chunks the pages' shares add up to, less those held
        self.page_chunks: dict[int, int] = {}             # page -> its chunks, when share < 1
        self.next_slot: dict[int, int] = {}               # page -> its first slot never given a chunk
        self.sampled = share != 1
        self.limit = limit
        self.malloced = 0
        self.pages: list[list[int]] = [[] for _ in range(n)]     # slab_list per class
        # the free list, top at the end: a list (compiled, its push and pop are native; an array's
        # parsed each chunk's int through the argument parser, 350 instructions a push or pop)
        self.free: list[list[int]] = [[] for _ in range(n)]
        self.pool: list[int] = []                                # SLAB_GLOBAL_PAGE_POOL
        self._next_page = 0

    def newslab(self, cls: int) -> bool:
        """``do_slabs_newslab``: a page for ``cls``, from the pool or new memory, if allowed."""
        if self.refuses(cls):
            return False
        if self.pool:
            page = self.pool.pop()
        else:
            page = self._next_page
            self._next_page += 1
            self.malloced += self.page_len[cls]
        self.pages[cls].append(page)
        self.split(page, cls)
        return True

    def refuses(self, cls: int) -> bool:
        """``do_slabs_newslab``'s refusal (slabs.c 369-380), the one copy: ``-m`` would be passed, the
        class has a page (a class's first page is always granted) and the global pool is empty."""
        return (self.limit != 0 and self.malloced + self.page_len[cls] > self.limit and len(self.pages[cls]) > 0
                and not self.pool)

    def prefill(self, page_size: int) -> None:
        """``slabs_prefill_global`` (slabs.c 298-313): pages into the global pool while less than ``-m``
        is allocated (memcached.c 6023: "page mover algorithm for extstore needs memory prefilled")."""
        while self.limit and self.malloced < self.limit:
            self.pool.append(self._next_page)
            self._next_page += 1
            self.malloced += page_size

    def split(self, page: int, cls: int) -> None:
        """``split_slab_page_into_freelist``: every chunk of ``page`` on ``cls``'s free list."""
        base = page << PAGE_SHIFT
        chunks = self.perslab[cls]
        if self.share != 1:
            self.carry[cls] += chunks * self.share
            chunks = max(0, math.floor(self.carry[cls] + 0.5 + CARRY_SLACK))
            self.carry[cls] -= chunks
            self.page_chunks[page] = self.next_slot[page] = chunks
        self.free[cls].extend(range(base, base + chunks))

    def left(self, page: int, cls: int) -> None:
        """A sampled replay: ``page`` (and the chunks it held) has left ``cls``; the class gets or gives
        up chunks so that it holds what its remaining pages' shares add up to.  Without this a page
        that held fewer chunks than its share would take away less than a page's worth, and pages
        moved about would add chunks to the node on each move."""
        if self.share == 1:
            return
        self.carry[cls] += self.page_chunks.pop(page) - self.per_page[cls]
        self.next_slot.pop(page, None)
        free, pages, perslab = self.free[cls], self.pages[cls], self.perslab[cls]
        while self.carry[cls] >= 0.5 - CARRY_SLACK:      # owed a chunk: a new one in its newest page with room
            roomy = next((p for p in reversed(pages) if self.next_slot[p] < perslab), None)
            if roomy is None:
                break
            free.append(roomy << PAGE_SHIFT | self.next_slot[roomy])
            self.next_slot[roomy] += 1
            self.page_chunks[roomy] += 1
            self.carry[cls] -= 1
        self.pay(cls)

    def pay(self, cls: int) -> None:
        """A sampled replay's class holding more chunks than its pages' shares: free chunks go (now,
        or as the class frees them: its :meth:`alloc` pays before it hands one out)."""
        free = self.free[cls]
        while self.carry[cls] < -0.5 - CARRY_SLACK and free:
            addr = free.pop(0)
            self.page_chunks[addr >> PAGE_SHIFT] -= 1
            self.carry[cls] += 1

    def chunks(self, cls: int) -> int:
        """The chunks ``cls``'s pages hold."""
        if self.share == 1:
            return len(self.pages[cls]) * self.perslab[cls]
        return sum(self.page_chunks[page] for page in self.pages[cls])

    def alloc(self, cls: int) -> int:
        """``do_slabs_alloc``: a chunk of ``cls`` (a new page if needed), or -1."""
        if self.sampled:
            return self._sampled_alloc(cls)
        free = self.free[cls]
        if not free and not self.newslab(cls):
            return -1
        return free.pop()

    def _sampled_alloc(self, cls: int) -> int:
        """:meth:`alloc` of a sampled replay: chunks owed are paid first, and a page may hold no
        chunk of a large class (more pages are taken until one does)."""
        free = self.free[cls]
        if self.carry[cls] < -0.5 - CARRY_SLACK:
            self.pay(cls)
        while not free:
            if not self.newslab(cls):
                return -1
        return free.pop()

    @property
    def full(self) -> bool:
        """All of ``-m`` is allocated: ``global_page_pool_size``'s mem_flag (``mem_malloced >=
        mem_limit``), which the 1.6.45 automover and mover read."""
        return self.malloced >= self.limit

    def release_pool(self, page_size: int) -> None:
        """``memory_release``: free pool pages while more than ``-m`` is allocated."""
        while self.malloced > self.limit and self.pool:
            self.pool.pop()
            self.malloced -= page_size
