"""The first eviction of items stored in the order they arrive: pages granted as memcached grants them.

memcached gives a class a new page only when the class has no free chunk left
(``do_slabs_alloc``, 1.6.18 slabs.c 424-429), and ``do_slabs_newslab`` (slabs.c
369-399) refuses it when ``mem_malloced + len > mem_limit`` -- unless the class
has no page yet (``p->slabs > 0``: a class's first page is granted past ``-m``)
or the global pool holds a page (it holds none before the first eviction: pages
reach it only by the slab mover, which moves none before there are evictions).
Refused, ``do_item_alloc`` (items.c 183-204) evicts from the class's LRU: the
first eviction, the end of the walk.

A chunked item asks for its chunks in order: the header, the body chunks as the
value is read, the tail last (items.c 283-304 and 221-246).  A tail whose class
is refused and whose LRU is empty takes a chunk of the largest class instead
(1.6.17+, ``do_item_alloc_chunk`` items.c 228-242), which may be free or a new
page.

The walk needs no item of its own: per class a count of free chunks and of
pages.  A block of items is walked at once with numpy: the ``k``-th chunk a
class is asked for in the block needs a page exactly when ``k`` reaches the
class's free chunks plus a whole number of pages; only those moments (a page
each) are looked at one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from slabcalc.model.capacity import Capacity, page_granted


@dataclass
class Kinds:
    """The kinds of item a walk meets, by number: kind ``c`` below :attr:`first_chunked` is an item
    of one chunk of class ``c``; above, chunked items registered with :meth:`add`."""

    first_chunked: int
    chunks: list[tuple[int, ...]] = field(default_factory=list)   # class of each chunk, in order
    tails: list[bool] = field(default_factory=list)              # whether the last chunk is a tail
    lru: list[int] = field(default_factory=list)                 # the class whose LRU holds the item
    _arrays: tuple | None = None

    def add(self, chunks: Sequence[int], tail: bool, lru_class: int) -> int:
        self.chunks.append(tuple(chunks))
        self.tails.append(tail)
        self.lru.append(lru_class)
        self._arrays = None
        return self.first_chunked + len(self.chunks) - 1

    def arrays(self):
        """``(start, count, flat, tail, lru)`` indexed by kind: where each kind's chunk classes
        begin in ``flat``, how many, whether its last is a tail, its LRU class."""
        if self._arrays is None:
            n = self.first_chunked
            count = np.concatenate([np.ones(n, np.int64), [len(c) for c in self.chunks]]).astype(np.int64)
            flat = np.concatenate([np.arange(n, dtype=np.int64)] +
                                  [np.asarray(c, dtype=np.int64) for c in self.chunks])
            start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
            tail = np.concatenate([np.zeros(n, bool), np.asarray(self.tails, dtype=bool)])
            lru = np.concatenate([np.arange(n, dtype=np.int64), np.asarray(self.lru, dtype=np.int64)])
            self._arrays = (start, count, flat, tail, lru)
        return self._arrays


class InOrder:
    """Items stored one after another under ``-m`` until the first that needs a page none is left for.

    ``pages`` maps each class id to ``(perslab, page_length)``; ``largest`` is the
    class of ``slab_chunk_max`` chunks; ``fallback`` whether a tail may fall back to
    it (the profile's ``chunk_tail_fallback``).  :meth:`feed` takes kinds (see
    :class:`Kinds`) in arrival order; :attr:`result` is the :class:`Capacity` once an
    item is refused, None while every item was stored.
    """

    def __init__(self, pages: Mapping[int, tuple[int, int]], largest: int, memory_limit: int, fallback: bool):
        size = max(pages) + 1
        self.kinds = Kinds(size)
        self.perslab = np.ones(size, np.int64)
        self.length = np.zeros(size, np.int64)
        for cls, (perslab, length) in pages.items():
            self.perslab[cls], self.length[cls] = perslab, length
        self.free = np.zeros(size, np.int64)        # free chunks of each class
        self.slabs = np.zeros(size, np.int64)       # pages of each class
        self.evictable = np.zeros(size, bool)       # classes with an item in their LRU
        self.largest, self.memory_limit, self.fallback = largest, memory_limit, fallback
        self.malloced = 0                           # mem_malloced
        self.stored = 0
        self.result: Capacity | None = None

    def preallocate(self) -> None:
        """``-L``: ``slabs_preallocate`` (slabs.c 305-330) gives every class its first page at start."""
        self.slabs[:] = self.length > 0
        self.free[:] = np.where(self.length > 0, self.perslab, 0)
        self.malloced = int(self.length.sum())

    def feed(self, kinds: np.ndarray) -> None:
        """Store the items of ``kinds`` (int array, arrival order) until one is refused."""
        kinds = np.asarray(kinds, dtype=np.int64)
        while self.result is None and len(kinds):
            done = self._walk(kinds)
            kinds = kinds[done:]

    def _walk(self, kinds: np.ndarray) -> int:
        """Store ``kinds`` up to the first chunk refused; return how many items were dealt with."""
        start, count, flat, tail, lru = self.kinds.arrays()
        many = count[kinds]
        row = np.repeat(np.arange(len(kinds)), many)                  # the item of each chunk asked for
        first = np.cumsum(many) - many
        within = np.arange(len(row)) - first[row]
        cls = flat[start[kinds][row] + within]
        order = np.argsort(cls, kind="stable")
        ordered = cls[order]
        begins = np.flatnonzero(np.diff(ordered, prepend=-1))
        rank = np.arange(len(ordered)) - np.repeat(begins, np.diff(np.append(begins, len(ordered))))
        free, perslab = self.free[ordered], self.perslab[ordered]
        needs = (rank >= free) & ((rank - free) % perslab == 0)      # the chunk that opens a new page
        events = np.sort(order[needs])
        refused = None
        for at in events.tolist():
            c = int(cls[at])
            if not self._grant(c):
                refused = at
                break
        upto = len(cls) if refused is None else refused
        asked = np.bincount(cls[:upto], minlength=len(self.free))
        granted = np.bincount(cls[events[events < upto]], minlength=len(self.free))
        self.free += granted * self.perslab - asked
        if refused is None:
            self._stored(lru[kinds])
            return len(kinds)
        item = int(row[refused])
        self._stored(lru[kinds[:item]])
        c = int(cls[refused])
        is_tail = bool(tail[kinds[item]]) and int(within[refused]) == int(many[item]) - 1
        if is_tail and self.fallback and not self.evictable[c] and self._take(self.largest):
            self._stored(lru[kinds[item:item + 1]])       # the tail found a chunk of the largest class
            return item + 1
        limiting = self.largest if is_tail and self.fallback and not self.evictable[c] else c
        self.result = Capacity(self.memory_limit, self.stored, limiting, self.malloced)
        return len(kinds)

    def _grant(self, cls: int) -> bool:
        """``do_slabs_newslab``: a page for ``cls`` unless ``-m`` is reached and the class has one."""
        length = int(self.length[cls])
        if not page_granted(self.memory_limit, self.malloced, length, int(self.slabs[cls])):
            return False
        self.slabs[cls] += 1
        self.malloced += length
        return True

    def _take(self, cls: int) -> bool:
        """One chunk of ``cls``: a free one, or one of a new page."""
        if self.free[cls]:
            self.free[cls] -= 1
            return True
        if not self._grant(cls):
            return False
        self.free[cls] += self.perslab[cls] - 1
        return True

    def _stored(self, lru_classes: np.ndarray) -> None:
        self.stored += len(lru_classes)
        self.evictable[lru_classes] = True
