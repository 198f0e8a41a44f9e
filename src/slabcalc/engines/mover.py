"""The page mover: empty a class's first page and give it to another class or the pool (1.6.18 ``slabs.c`` 730-1200).

``slab_rebalance_start`` refuses a source with fewer than 2 pages.  The page
is the source's first (``slab_list[0]``).  ``slab_rebalance_move`` walks its
chunks in order:

* a free chunk is cut from the free list;
* an item past its exptime is unlinked (no counter says so);
* a live item is *rescued*: copied into a free chunk of the same class
  outside the page (``slab_rebalance_alloc`` pops the free list; chunks it
  pops from inside the page are done at once, ``slab_reassign_inline_reclaim``),
  then relinked at the head of its LRU with its time set to now
  (``do_item_replace`` -> ``do_item_link``; it counts in ``total_items``) --
  ``slab_reassign_rescues``; a chunk of a chunked item is copied the same way
  (``slab_reassign_chunk_rescues``);
* with no free chunk left, the item is dropped:
  ``slab_reassign_evictions_nomem`` (not ``evictions``); a chunked item loses
  all its chunks.

1.6.34+ (``slabs_mover.c``) keeps one spare chunk ready before each chunk it
looks at, and when there is none outside the page, evicts the source class's
COLD tail for it (``evicted``, not ``slab_reassign_evictions_nomem``), so the
page's live items are all rescued -- when the move began with ``-m`` reached and
the pool empty, or ``slab_automove=2`` asked; otherwise it waits (below).

``slab_rebalance_finish`` removes the page from the source's list and appends
it to the destination's, split into the destination's chunks, or to the
global page pool (class 0) -- where ``memory_release`` (slabs.c 641) frees
pool pages while ``total_malloced`` is above ``-m`` (a class's first page,
granted past the limit, is given back that way).  ``slabs_moved`` counts it.  Up to 1.6.33 the real
mover takes milliseconds per page and the model moves it at once (:func:`move_page`).

1.6.34+'s mover waits instead of dropping: a pass over the page that leaves a live item without a
spare chunk (none free outside the page, evictions not allowed) ends "busy", and the thread sleeps
1 us, doubling to 5 ms (1 ms before 1.6.40), before the next pass (1.6.45 slabs_mover.c 666-680);
from 1.6.41, past 5 000 busy passes, some 25 s, it allows evictions (-m reached) or takes a new page
(slabs_mover.c 196-213) -- before, it waits for ever (profile: ``mover_without_spare``).  Meanwhile
the workload, the maintainer and extstore's flusher go on and free chunks the next pass takes, so the
model carries that move out pass by pass on the mover thread's clock (:class:`PageMove`,
:class:`.automove.MoverThread`), each pass at once, the items new in the page since the last pass
told to it by the store (``Store.mover_page``).
"""

from __future__ import annotations

from slabcalc.engines.lru import COLD, GONE, HOT
from slabcalc.engines.slabs import PAGE_SHIFT


def move_page(store, source: int, dest: int) -> bool:
    """Move ``source``'s first page to ``dest`` (0: the global pool) in ``store`` (engines/store.py:
    the mover is given the memory, never the engine), at once, as a mover that drops what it has no
    chunk for does (up to 1.6.33: 1.6.34+'s moves are :class:`PageMove`'s); False when refused.
    """
    e = store
    assert not e.config.mover_evicts, "a 1.6.34+ move waits on the mover thread's clock (PageMove)"
    slabs = e.slabs
    pages = slabs.pages[source]
    if source == dest or len(pages) < 2 or not 0 <= dest < len(slabs.pages):
        return False
    e.moving = True
    try:
        _move(e, source, dest)
    finally:
        e.moving = False
    return True


def _move(e, source: int, dest: int) -> None:
    """``slab_rebalance_move`` then ``slab_rebalance_finish``: the source's first page emptied, then given away."""
    page, walk = _start(e, source, False)
    walk.empty()
    _finish(e, source, dest, page, walk)


def _start(e, source: int, allow_evictions: bool) -> tuple:
    """``slab_rebalance_start``: the source's first page, and its walk."""
    page = e.slabs.pages[source][0]
    base = page << PAGE_SHIFT
    # a sampled replay's page holds its share of the chunks, slots 0 to next_slot (engines/slabs.py): the
    # walk ends there, not at perslab -- no slot past it ever held a chunk, and walking them cost time
    # (a 1 % sample walked 100 slots a chunk) and, 1.6.45, a spare taken for a chunk that is not there
    slots = e.slabs.next_slot[page] if e.slabs.sampled else e.perslab[source]
    return page, _PageWalk(e, source, base, base + slots, allow_evictions)


class PageMove:
    """A page move on 1.6.34+'s mover thread (slabs_mover.c 650-685), pass by pass on its clock.

    :meth:`step` is one pass over the page's chunks not yet done; it returns 0 when the page is empty
    (and given away), else the microseconds the thread sleeps before the next pass: 1, doubling each
    busy pass to the release's ``mover_backoff_max_us`` (``backoff_timer``, reset by a move that completes).  While it lasts the mover
    holds its lock (``store.moving``: no other move can be asked for, ``REASSIGN_RUNNING``) and the
    store tells the walk of every item linked into the page (``store.mover_page``).  A pass that would
    find nothing changed is counted without a walk; a 1.6.34-1.6.40 move that never finds a chunk is
    stepped so every millisecond to the replay's end, as the real mover loops (the hang 1.6.41 fixed)."""

    def __init__(self, store, source: int, dest: int, allow_evictions: bool) -> None:
        self.store, self.source, self.dest = store, source, dest
        self.page, self.walk = _start(store, source, allow_evictions)
        self.backoff = 1
        store.moving = True
        store.mover_page = self.walk

    def step(self) -> int:
        walk = self.walk
        walk.now = self.store.now
        if walk.unchanged():
            pass                            # the pass would find what the last one did
        elif walk.one_pass():
            self.store.moving = False
            self.store.mover_page = None
            _finish(self.store, self.source, self.dest, self.page, walk)
            return 0
        walk.busy_loops += 1
        sleep, self.backoff = self.backoff, min(2 * self.backoff, self.store.config.mover_backoff_max)
        return sleep


class _PageWalk:
    """``slab_rebalance_move``'s walk of one page: each chunk cut from the free list, dropped or rescued."""

    def __init__(self, store, source: int, base: int, end: int, allow_evictions: bool) -> None:
        self.store = store
        self.source = source
        self.base = base
        self.end = end
        self.owners = _owners(store, source, base, end)
        self.free = store.slabs.free[source]
        self.done: set = set()
        self.counts = store.tally
        self.now = store.now
        # 1.6.45 slabs_mover.c 100-110: evictions are allowed when the move starts with -m reached and
        # the pool empty (or slab_automove=2 asked)
        self.allow = allow_evictions or (store.slabs.full and not store.slabs.pool)
        self.spare = -1                     # t->new_it: a chunk kept for the next rescue
        self.busy_loops = 0                 # passes that ended with live items left (resumed moves: PageMove)
        self.limit = store.config.mover_busy_limit
        self.pending = list(range(base, end))   # the chunks not done, in the page's order
        self.dirty, self.free_len, self.soonest = True, -1, -1     # unchanged(): since the last pass

    def waiting(self) -> bool:
        """Still within the busy passes that wait for a chunk (``t->rebal.busy_loops``)."""
        return self.limit < 0 or self.busy_loops <= self.limit

    def linked(self, item) -> None:
        """The store linked ``item`` while the move waits (``Store.link``): its chunks in the page are
        its to look at on the next pass."""
        if item.chunks is None:
            if item.cls == self.source and self.base <= item.addr < self.end:
                self.owners[item.addr] = (item, -1)
                self.dirty = True
            return
        for index, (c, addr) in enumerate(item.chunks):
            if c == self.source and self.base <= addr < self.end:
                self.owners[addr] = (item, index)
                self.dirty = True

    def one_pass(self) -> bool:
        """One pass of a resumed move (1.6.45): each chunk not done looked at, a spare readied before
        each (slab_rebalance_prep), the page's free chunks cut from the free list.  Whether the page
        is done.

        Evictions allowed, the prep runs before every chunk, as memcached's does.  Not allowed, the
        prep only pops free chunks, so it matters only where the spare is missing: before the first
        chunk, and after a rescue has used the spare; once it has found none, it finds none until the
        pass ends (the pass is at once), and the pass looks only at the chunks not done."""
        self._ready()                       # the prep before the first chunk
        exact = self.allow
        pending = set(self.pending) if exact else None
        busy = []
        last = self.end - 1
        for addr in (range(self.base, self.end) if exact else self.pending):
            if exact:
                if addr > self.base:
                    self._ready()
                if addr not in pending:
                    continue
            if addr in self.done:           # reclaimed inline by a prep of this pass
                continue
            owner = self.owners.get(addr)
            if owner is None or not _holds(owner, addr):
                continue                    # free (or freed since): cut below, MOVE_FROM_SLAB
            if not exact and self.allow and self.spare < 0:
                self._ready()               # evictions allowed since the pass began (past the busy passes)
            spare = self.spare
            if not self._look(addr, owner):
                busy.append(addr)
            elif not exact and spare >= 0 and self.spare < 0 and addr < last:
                self._ready()               # the spare went to a rescue: the next chunk's prep
        free = self.free
        if any(self.base <= a < self.end for a in free):
            free[:] = [a for a in free if not self.base <= a < self.end]
        self.pending = busy
        self._mark()
        return not busy

    def _mark(self) -> None:
        """What the next pass would find changed: an item linked into the page, a chunk freed or taken
        in the class, an item of the page expiring."""
        self.dirty = False
        self.free_len = len(self.free)
        soonest = -1
        for addr in self.pending:
            exptime = self.owners[addr][0].exptime
            if exptime and (soonest < 0 or exptime < soonest):
                soonest = exptime
        self.soonest = soonest

    def unchanged(self) -> bool:
        """A pass now would do nothing but count itself busy: no spare to be had (no evictions, none
        freed), no item new in the page, none of its items expired."""
        return (not self.allow and self.waiting() and not self.dirty and len(self.free) == self.free_len
                and (self.soonest < 0 or self.now <= self.soonest))

    def _ready(self) -> None:
        if self.spare < 0:
            self.spare, self.allow = _prep(self.store, self.source, self.free, self.base, self.end, self.done,
                                           self.counts, self.allow, self.waiting())

    def _look(self, addr: int, owner) -> bool:
        """A chunk's live or expired owner dealt with; False when it waits for a spare."""
        item, index = owner
        if item.exptime and item.exptime < self.now:
            _drop(self.store, item)
        elif self.spare < 0:
            return False
        else:
            new, self.spare = self.spare, -1
            _rescue(self.store, item, index, new, self.counts)
        self.done.add(addr)
        return True

    def empty(self) -> None:
        """Every chunk of the page, in one pass (:func:`move_page`: a mover that drops what it has no
        chunk for)."""
        for addr in range(self.base, self.end):
            self._chunk(addr)

    def _chunk(self, addr: int) -> None:
        """The chunk at ``addr`` dealt with: cut, its expired item dropped, its live item rescued or,
        with no chunk free outside the page, dropped (``slab_reassign_evictions_nomem``)."""
        if addr in self.done:
            return
        owner = self.owners.get(addr)
        if owner is not None:               # None: free (or inline-reclaimed), cut from the free list at the end
            item, index = owner
            if item.seg == GONE:            # a chunked item dropped at another of its chunks
                pass
            elif item.exptime and item.exptime < self.now:
                _drop(self.store, item)
            else:
                new = _rescue_chunk(self.free, self.base, self.end, self.done, self.counts)
                if new < 0:
                    self.counts.evictions_nomem += 1
                    _drop(self.store, item)
                else:
                    _rescue(self.store, item, index, new, self.counts)
        self.done.add(addr)


def _finish(e, source: int, dest: int, page: int, walk: _PageWalk) -> None:
    """``slab_rebalance_finish``: the unused spare back, the page's chunks cut from the free list, the
    page given to ``dest`` (split into its chunks) or to the global pool."""
    slabs = e.slabs
    free = walk.free
    if walk.spare >= 0:
        free.append(walk.spare)
    slabs.free[source] = [a for a in free if not walk.base <= a < walk.end]
    del slabs.pages[source][0]
    slabs.left(page, source)
    if dest == 0:
        slabs.pool.append(page)
        slabs.release_pool(e.page_size)
    else:
        slabs.pages[dest].append(page)
        slabs.split(page, dest)
        e.moved_in[dest] += 1
    e.moved_out[source] += 1
    e.tally.slabs_moved += 1


def _rescue(e, item, index: int, new: int, counts) -> None:
    """The live item (or its chunk ``index``) is copied into chunk ``new``."""
    if index < 0:
        item.addr = new
        e.relink(item)                   # do_item_replace: relinked at its LRU's head, time now
        counts.rescues += 1
        return
    cls, _ = item.chunks[index]
    item.chunks[index] = (cls, new)
    if index == 0:                       # the header: the item itself is replaced and relinked
        e.relink(item)
        counts.rescues += 1
    else:
        counts.chunk_rescues += 1


def _prep(e, cls: int, free, base: int, end: int, done: set, counts, allow: bool, waiting: bool) -> tuple[int, bool]:
    """``slab_rebalance_prep`` (1.6.45 slabs_mover.c 178-230): a chunk outside the page for the
    next rescue, evicting the class's COLD tail for it when evictions are allowed.

    With no chunk and no evictions allowed, the mover ``waiting`` finds none; past its busy passes
    (1.6.41+: ``mover_busy_limit``) evictions are allowed when -m is reached, else a new page is
    taken.
    """
    spare = _rescue_chunk(free, base, end, done, counts)
    if spare >= 0:
        return spare, allow
    if not allow and not waiting:
        if e.slabs.full:
            allow = True
        else:
            spare = _rescue_chunk_new_page(e, cls, base, end, done, counts)
            if spare >= 0:
                return spare, allow
            allow = e.slabs.full
    if allow:
        for _ in range(e.config.alloc_rounds):
            if e.pull_tail(cls, COLD, evict=True) <= 0 and e.config.segmented:
                e.pull_tail(cls, HOT)
            spare = _rescue_chunk(e.slabs.free[cls], base, end, done, counts)
            if spare >= 0:
                break
    return spare, allow


def _rescue_chunk_new_page(e, cls, base, end, done, counts) -> int:
    """``slab_rebalance_alloc`` with MC_ALLOW_NEWPAGE: a new page may be taken for the rescue."""
    if e.slabs.newslab(cls):
        return _rescue_chunk(e.slabs.free[cls], base, end, done, counts)
    return -1


def _holds(owner, addr: int) -> bool:
    """Whether ``owner`` (an item and the index of its chunk, -1 for a whole item) still holds ``addr``."""
    item, index = owner
    if item.seg == GONE:
        return False
    return item.addr == addr if index < 0 else item.chunks[index][1] == addr


def _drop(e, item) -> None:
    """Unlink an item the mover does not keep.  A whole item's chunk is marked done, not freed
    (slabs.c 1050-1057): unlinked keeping its chunk off the free list; a chunked item's chunks all
    go back to their free lists (1058-1064)."""
    e.unlink(item, True, True)


def _rescue_chunk(free, base: int, end: int, done: set, counts) -> int:
    """``slab_rebalance_alloc``: a free chunk outside the page, skipping (and finishing) those inside."""
    while free:
        addr = free.pop()
        if base <= addr < end:
            done.add(addr)
            counts.inline_reclaim += 1
            continue
        return addr
    return -1


def _owners(e, cls: int, base: int, end: int) -> dict:
    """Chunk -> (item, -1 for a whole item or the index of its chunk) for every used chunk in the page."""
    owners = {}
    for seg in e.lrus.q:
        for item in seg[cls].values():
            if item.chunks is None and base <= item.addr < end:
                owners[item.addr] = (item, -1)
    for item in e.chunked.values():
        for index, (c, addr) in enumerate(item.chunks):
            if c == cls and base <= addr < end:
                owners[addr] = (item, index)
    return owners
