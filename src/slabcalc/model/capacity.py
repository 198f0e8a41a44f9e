"""How many items of a mix ``-m`` holds before the first eviction, and which class runs out first.

Two rules of ``do_slabs_newslab`` (1.6.18 slabs.c 369-399) decide it: a class's
first page is always granted, and every further page needs ``total_malloced +
page <= -m``.  A histogram (sizes with counts) has no order of its own, so the
mix arrives interleaved in proportion: the ``i``-th item (from 0) of a kind of
``m`` items comes at ``(i + 1/2) / m`` of the way through the mix.  After any
number of items each kind holds its share rounded to the nearest item (a
divisor apportionment, Sainte-Lague's), never rounded up: a kind of one item
comes half way, not with the first item (issue 30: rounding every share up made
10 blobs of a 48 410-item mix arrive first, and the capacity 4 893 instead of
about 22 000).  Largest remainders would round as closely but are not an order:
one more item can take an item from a kind (the Alabama paradox), and a first
eviction needs the items in an order.  An item file has its own order
(:mod:`slabcalc.model.arrival`).

Items that fit one chunk ask only their class for a chunk: the kinds of a mix are
its classes (:func:`capacity`) and its chunked items' chunk shapes.

Chunked items (larger than ``slab_chunk_max``) need the order of their chunks
and a fallback (:func:`chunked_capacity`):

* the header chunk is taken first, then the body chunks as the value is read,
  the tail last (``do_item_alloc`` items.c 283-304, then ``do_item_alloc_chunk``
  items.c 221 called from memcached.c 2899/2956 while reading the upload);
* when the tail's class can get no chunk and has no item of its own to evict,
  1.6.17+ takes a full chunk of the largest class instead (items.c 228-246,
  PR #924) -- a free one, a new page, or by evicting there.

So the page the limit refuses may be a body page while the tail still finds
room, and an item more is stored than pages alone say.  The engine that replays
workloads follows the same two rules (``engines/engine.py`` ``set_large``); a
test holds the two to the same answers and both to a real server.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

# a chunked item's chunks as memcached asks for them: (requested bytes, role) each
ChunkShape = tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Capacity:
    """How many items of the mix fit under ``-m``, which class runs out first, and the
    page bytes they hold then."""

    memory_limit: int
    items: int
    limiting_class: int | None
    page_bytes: int = 0
    basis: str = "mix"     # "mix": the items as a proportional mix; "order": in an item file's own order


@dataclass(frozen=True)
class ClassPages:
    """What a class's pages hold, for the capacity arithmetic."""

    id: int
    perslab: int
    page_length: int
    chunks: int        # chunks of the whole mix in this class


@dataclass(frozen=True)
class Kind:
    """One kind of item in a mix: how many, and the classes of its chunks in the order
    memcached takes them (one class for an item that fits one chunk)."""

    count: int
    chunks: tuple[tuple[int, str], ...]   # (class id, role) per chunk: item/header/body/tail
    lru_class: int                        # the class whose LRU holds it (and can evict it)


def page_granted(limit: int, malloced: int, length: int, class_pages: int, pool_pages: int = 0) -> bool:
    """``do_slabs_newslab``'s test (slabs.c 377-378 at 1.6.18, 382 at 1.6.45): a page of ``length``
    bytes is refused only when ``-m`` (``limit``, 0 for none) would be passed, the class already has a
    page and the global pool has none: a class's first page is granted even past the limit.  The
    replay engine's copy (engines/slabs.py ``newslab``) is held to it by tests/model/test_class_rules.py."""
    return not (limit and malloced + length > limit and class_pages > 0 and pool_pages == 0)


def needed_bytes(pages: Iterable[tuple[int, int]]) -> int:
    """Bytes of ``-m`` that grant ``pages`` (count, length) per class.

    memcached grants a class's first page even past the limit; every further
    page needs ``total_malloced + length <= limit``.  With every first page taken
    early (a mixed workload touches each class soon), the limit must cover all
    pages unless no class needs a second one.
    """
    pages = [(n, length) for n, length in pages if n]
    if all(n <= 1 for n, _ in pages):      # first pages only: granted past any limit (page_granted)
        return 0
    return sum(n * length for n, length in pages)


def fits(pages: Iterable[tuple[int, int]], limit: int) -> bool:
    """Whether ``-m`` of ``limit`` bytes grants ``pages`` (count, length per class)."""
    return needed_bytes(pages) <= limit


def largest_fitting(fit, start: int = 1) -> int | None:
    """The largest ``n >= 0`` with ``fit(n)`` (``fit`` monotone, ``fit(0)`` true), or None past 2**62."""
    low, high = 0, start
    while fit(high):
        low, high = high, high * 2
        if high > 1 << 62:
            return None
    while high - low > 1:
        mid = (low + high) // 2
        if fit(mid):
            low = mid
        else:
            high = mid
    return low


def capacity(rows: Sequence[ClassPages], items: int, memory_limit: int) -> Capacity:
    """Items of a mix of one-chunk items (in proportion, see the module docstring) that ``-m`` holds
    before a page is refused, and the class whose page is refused.  Each class is one kind: its
    chunks arrive evenly through the mix."""
    rows = [r for r in rows if r.chunks]
    if not items or not rows:
        return Capacity(memory_limit, 0, None)
    kinds = [Kind(r.chunks, ((r.id, "item"),), r.id) for r in rows]
    pages = {r.id: (r.perslab, r.page_length) for r in rows}
    return chunked_capacity(kinds, pages, max(pages), memory_limit, False)


def chunked_capacity(kinds: Sequence[Kind], classes: dict[int, tuple[int, int]], largest: int,
                     memory_limit: int, fallback: bool) -> Capacity:
    """Items of a mix with chunked items that ``-m`` holds before the first eviction.

    ``classes`` maps a class id to ``(perslab, page_length)``; ``largest`` is the
    largest class (where a chunked item lives and where a tail falls back to
    when ``fallback``).  Kind ``j`` of count ``m_j`` has its ``i``-th item at
    ``(2i + 1) / (2 m_j)`` of the way through the mix (ties by kind order).
    """
    kinds = [k for k in kinds if k.count]
    if not kinds:
        return Capacity(memory_limit, 0, None)
    total = sum(k.count for k in kinds)
    per_class = [_chunks_by_class(k) for k in kinds]
    # Up to n0 every page was granted with total_malloced at most what all pages
    # take then: no allocation can have failed.  From there, item by item (a kind's
    # first page may come later and be granted past -m: the walk sees it).
    n0 = _all_pages_fit(kinds, per_class, total, classes, memory_limit)
    if n0 is None:
        return Capacity(memory_limit, 1 << 62, None)
    counts = [_before(n0, k.count, total) for k in kinds]
    return _item_by_item(kinds, per_class, counts, classes, largest, memory_limit, fallback)


def _chunks_by_class(kind: Kind) -> tuple[tuple[int, int], ...]:
    """A kind's chunks counted by class: a chunked item's body is one class, many times."""
    chunks: dict[int, int] = {}
    for cls, _ in kind.chunks:
        chunks[cls] = chunks.get(cls, 0) + 1
    return tuple(chunks.items())


def _held(per_class: Sequence[tuple[tuple[int, int], ...]], counts: Sequence[int]) -> dict[int, int]:
    """Chunks per class that ``counts`` items of each kind hold."""
    chunks: dict[int, int] = {}
    for shape, c in zip(per_class, counts):
        if c:
            for cls, many in shape:
                chunks[cls] = chunks.get(cls, 0) + c * many
    return chunks


def _pages(chunks: dict[int, int], classes: dict[int, tuple[int, int]]) -> dict[int, int]:
    """Pages per class that hold ``chunks`` (rounded up)."""
    return {cls: -(-n // classes[cls][0]) for cls, n in chunks.items()}


def _all_pages_fit(kinds: Sequence[Kind], per_class: Sequence[tuple[tuple[int, int], ...]], total: int,
                   classes: dict[int, tuple[int, int]], memory_limit: int) -> int | None:
    """The most items of the mix whose pages, first pages too, all fit within ``-m`` (None past 2**62)."""
    # The search starts where the pages, not rounded up, fill -m: near the answer, so it halves the steps.
    whole = _held(per_class, [k.count for k in kinds])
    per_item = sum(n * classes[c][1] / classes[c][0] for c, n in whole.items()) / total
    guess = max(1, min(int(memory_limit / per_item), 1 << 61)) if per_item else 1

    # per class: its chunks per page, its page length and the (count, chunks an item) of each kind in it
    by_class: dict[int, list[tuple[int, int]]] = {}
    for k, shape in zip(kinds, per_class):
        for cls, many in shape:
            by_class.setdefault(cls, []).append((k.count, many))
    table = [(classes[c][0], classes[c][1], tuple(shares)) for c, shares in by_class.items()]
    twice = 2 * total

    def fit(n: int) -> bool:   # every page, first pages too, within -m: _held, _pages and their bytes, inlined
        used = 0
        for perslab, length, shares in table:
            chunks = 0
            for m, many in shares:
                arrived = -((total - 2 * n * m) // twice)       # _before(n, m, total), before its floor at 0
                if arrived > 0:
                    chunks += arrived * many
            used += -(-chunks // perslab) * length
        return used <= memory_limit

    if len(kinds) >= 32:     # many kinds: the same sums over numpy columns
        fit = _column_fit(kinds, per_class, total, classes, memory_limit, fit)
    return largest_fitting(fit, guess)


class _Slabs:
    """The pages of chunked_capacity's walk and their free chunks, grown as ``do_slabs_alloc`` grows them."""

    def __init__(self, used: dict[int, int], classes: dict[int, tuple[int, int]], memory_limit: int):
        self.classes, self.memory_limit = classes, memory_limit
        self.pages = _pages(used, classes)
        self.free = {cls: self.pages[cls] * classes[cls][0] - n for cls, n in used.items()}
        self.malloced = sum(p * classes[cls][1] for cls, p in self.pages.items())

    def take(self, cls: int) -> bool:
        """``do_slabs_alloc``: a free chunk of ``cls``, or a new page if the limit allows (a class's
        first page always)."""
        if self.free.get(cls, 0):
            self.free[cls] -= 1
            return True
        length = self.classes[cls][1]
        if self.pages.get(cls, 0) and self.malloced + length > self.memory_limit:
            return False
        self.pages[cls] = self.pages.get(cls, 0) + 1
        self.malloced += length
        self.free[cls] = self.classes[cls][0] - 1
        return True


def _item_by_item(kinds: Sequence[Kind], per_class: Sequence[tuple[tuple[int, int], ...]], counts: list[int],
                  classes: dict[int, tuple[int, int]], largest: int, memory_limit: int, fallback: bool) -> Capacity:
    """From ``counts`` items of each kind stored, the next items in the mix's order, chunk by chunk,
    until one is refused: the capacity and the class that ran out."""
    slabs = _Slabs(_held(per_class, counts), classes, memory_limit)
    evictable = {k.lru_class for k, c in zip(kinds, counts) if c}  # classes with items in their LRU
    stored = sum(counts)
    # the next item of kind j arrives at (2 counts[j] + 1) / (2 m_j) of the way (_arrival), then by kind
    queue = [(*_arrival(2 * c + 1, 2 * k.count), j) for j, (k, c) in enumerate(zip(kinds, counts))]
    heapq.heapify(queue)
    while True:     # past the whole mix it goes on in the same proportions
        *_, j = heapq.heappop(queue)
        kind = kinds[j]
        for cls, role in kind.chunks:
            if slabs.take(cls):
                continue
            # items.c 228-246: a tail whose class has nothing to evict takes a largest-class chunk
            falls_back = role == "tail" and fallback and cls not in evictable
            if falls_back and slabs.take(largest):
                continue
            limiting = largest if falls_back else cls
            return Capacity(memory_limit, stored, limiting, slabs.malloced)
        stored += 1
        evictable.add(kind.lru_class)
        counts[j] += 1
        heapq.heappush(queue, (*_arrival(2 * counts[j] + 1, 2 * kind.count), j))


def _before(n: int, m: int, total: int) -> int:
    """Items of a kind of ``m`` (of ``total``) that arrive before ``n / total`` of the mix: those
    with ``(2i + 1) / (2m) < n / total``, i.e. ``ceil((2nm - total) / (2 total))`` but not below 0."""
    return max(0, -(-(2 * n * m - total) // (2 * total)))


def _column_fit(kinds: Sequence[Kind], per_class: Sequence[tuple[tuple[int, int], ...]], total: int,
                classes: dict[int, tuple[int, int]], memory_limit: int, exact):
    """chunked_capacity's test "the pages of the first ``n`` items of the mix fit", over numpy
    columns: a kind's items :func:`_before`, times its chunks per class, pages rounded up, all
    within ``-m``.  Where int64 could overflow, ``exact`` (the same test in Python
    ints) answers instead."""
    import numpy as np

    ids = sorted({cls for shape in per_class for cls, _ in shape})
    column = {cls: i for i, cls in enumerate(ids)}
    many = np.zeros((len(kinds), len(ids)), dtype=np.int64)
    for j, shape in enumerate(per_class):
        for cls, n in shape:
            many[j, column[cls]] = n
    most = max(k.count for k in kinds)
    if total >= 1 << 62:
        return exact
    counts = np.fromiter((k.count for k in kinds), dtype=np.int64, count=len(kinds))
    perslab = np.fromiter((classes[c][0] for c in ids), dtype=np.int64, count=len(ids))
    length = np.fromiter((classes[c][1] for c in ids), dtype=np.int64, count=len(ids))
    widest, longest = int(many.sum(axis=1).max()), int(length.max())

    def fit(n: int) -> bool:
        if 2 * n * most >= 1 << 62 or (n + len(kinds)) * widest * longest >= 1 << 62:
            return exact(n)
        arrived = np.maximum(0, -(-(2 * n * counts - total) // (2 * total)))   # _before
        pages = -(-(arrived @ many) // perslab)
        return int((pages * length).sum()) <= memory_limit
    return fit


def _arrival(num: int, den: int) -> tuple[float, _Ratio]:
    """A sort key of ``num / den``, exact: the float first (correctly rounded, so it never orders
    two ratios wrongly, only ties them), then :class:`_Ratio` to settle a tie."""
    return num / den, _Ratio(num, den)


class _Ratio:
    """``num / den`` (positive ``den``), compared exactly by cross-multiplying: the tie-break of
    chunked_capacity's queue, which a Fraction would do at many times the cost."""

    __slots__ = ("num", "den")

    def __init__(self, num: int, den: int):
        self.num, self.den = num, den

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ratio) and self.num * other.den == other.num * self.den

    def __lt__(self, other: _Ratio) -> bool:
        return self.num * other.den < other.num * self.den

    __hash__ = None   # compared only, never a key


def mix_capacity(settings, classes: Sequence, one_chunk: Mapping[int, int], chunked: Mapping[ChunkShape, int],
                 memory_limit: int) -> Capacity:
    """Capacity of a mix with chunked items under the class table ``classes``.

    ``one_chunk`` counts the items that fit one chunk by size (a kind a class:
    to the allocator they are alike); ``chunked`` counts chunked items by their
    chunk shape.  Where two kinds arrive at the same point of the mix the smaller
    goes first (classes by id, then chunked items by the bytes they ask for), so
    every caller gets the same answer.
    """
    from slabcalc.model.classes import classes_for, home_class

    def home(size: int) -> int:  # as placement.place: a request above every class goes to the largest
        return home_class(classes, size).id

    largest = classes[-1].id
    sizes = sorted(one_chunk)
    by_class: dict[int, int] = {}
    for size, c in zip(sizes, classes_for(classes, sizes)):
        by_class[c.id] = by_class.get(c.id, 0) + one_chunk[size]
    kinds = [Kind(n, ((cls, "item"),), cls) for cls, n in by_class.items() if n]
    kinds += [Kind(n, tuple((home(size), role) for size, role in shape), largest)
              for shape, n in sorted(chunked.items(), key=lambda kv: (sum(size for size, _ in kv[0]), kv[0]))]
    pages = {c.id: (c.perslab, settings.page_length(c.chunk_size, c.perslab)) for c in classes}
    return chunked_capacity(kinds, pages, largest, memory_limit, settings.profile.chunk_tail_fallback)
