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

``slab_rebalance_finish`` removes the page from the source's list and appends
it to the destination's, split into the destination's chunks, or to the
global page pool (class 0) -- where ``memory_release`` (slabs.c 641) frees
pool pages while ``total_malloced`` is above ``-m`` (a class's first page,
granted past the limit, is given back that way).  ``slabs_moved`` counts it.  The real mover takes
milliseconds per page; the model moves it at once.
"""

from __future__ import annotations

from array import array

from .slabs import PAGE_SHIFT


def move_page(engine, source: int, dest: int) -> bool:
    """Move ``source``'s first page to ``dest`` (0: the global pool); False when refused."""
    e = engine
    slabs = e.slabs
    pages = slabs.pages[source]
    if source == dest or len(pages) < 2 or not 0 <= dest < len(slabs.pages):
        return False
    page = pages[0]
    base = page << PAGE_SHIFT
    end = base + e.perslab[source]
    owners = _owners(e, source, base, end)
    free = slabs.free[source]
    done = set()
    counts = e.counts
    now = e.now
    for addr in range(base, end):
        if addr in done:
            continue
        owner = owners.get(addr)
        if owner is None:           # free (or inline-reclaimed): cut from the free list below
            done.add(addr)
            continue
        item, index = owner
        if e.index.get(item.key) is not item:        # a chunked item dropped earlier in this walk
            done.add(addr)
            continue
        if item.exptime and item.exptime < now:
            _drop(e, item, free)
            done.add(addr)
            continue
        new = _rescue_chunk(free, base, end, done, counts)
        if new < 0:
            counts["evictions_nomem"] += 1
            _drop(e, item, free)
            done.add(addr)
            continue
        if index < 0:
            item.addr = new
            e.lrus.unlink(item)
            e.link(item)                 # do_item_replace: relinked at its LRU's head, time now
            counts["rescues"] += 1
        else:
            cls, _ = item.chunks[index]
            item.chunks[index] = (cls, new)
            if index == 0:               # the header: the item itself is replaced and relinked
                e.lrus.unlink(item)
                e.link(item)
                counts["rescues"] += 1
            else:
                counts["chunk_rescues"] += 1
        done.add(addr)
    # whatever is still on the free list from this page is cut from it
    slabs.free[source] = array("q", (a for a in free if not base <= a < end))
    del pages[0]
    if dest == 0:
        slabs.pool.append(page)
        slabs.release_pool(e.settings.slab_page_size)
    else:
        slabs.pages[dest].append(page)
        slabs.split(page, dest)
        e.moved_in[dest] += 1
    e.moved_out[source] += 1
    counts["slabs_moved"] += 1
    return True


def _drop(e, item, free) -> None:
    """Unlink an item the mover does not keep.  A whole item's chunk is marked done, not freed
    (slabs.c 1050-1057); a chunked item's chunks all go back to their free lists (1058-1064)."""
    e.unlink(item)
    if item.chunks is None:
        free.pop()


def _rescue_chunk(free, base: int, end: int, done: set, counts) -> int:
    """``slab_rebalance_alloc``: a free chunk outside the page, skipping (and finishing) those inside."""
    while free:
        addr = free.pop()
        if base <= addr < end:
            done.add(addr)
            counts["inline_reclaim"] += 1
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
