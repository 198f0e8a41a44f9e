"""Many items placed at once: the numpy side of :mod:`slabcalc.analysis.report`.

The report places each distinct item by itself (:func:`slabcalc.model.placement.place`);
where many share a rule, the sums are made over columns instead and must come out the
same to the byte (tests/test_report.py holds them to the one-by-one placement):

* items that fit one chunk, summed by ``ntotal`` (:func:`one_chunk_sums`) and given to
  their classes a class at a time (:func:`add_one_chunk`);
* chunked items known only by their size (:func:`place_sized`, :func:`add_sized`).
"""

from __future__ import annotations

from bisect import bisect_right
from operator import mul
from typing import Sequence

from slabcalc.errors import InputError
from slabcalc.model.capacity import ChunkShape
from slabcalc.model.classes import SlabClass
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.item import item_size, ntotal_array
from slabcalc.model.placement import place_sized_chunks, sized_chunks_apply
from slabcalc.model.settings import Settings


def check_item_size(size: int, smallest_item: int) -> None:
    """A given item size must be one memcached can make: at least its smallest item."""
    if size < smallest_item:
        raise InputError(f"item size {size} is smaller than the smallest possible item "
                         f"({smallest_item} bytes)")


def placed_in_bulk(settings: Settings, classes: Sequence[SlabClass], key_length: int):
    """``(item, ntotal) -> bool``: whether an item larger than the largest chunk goes to
    :func:`place_sized` (known by size alone, within ``-I``), not to ``report._place`` one by one;
    None where :func:`place_sized_chunks` places no chunked item of this configuration."""
    if not sized_chunks_apply(settings, classes, key_length):
        return None
    most = settings.item_size_max
    return lambda item, size: item.key is None and size <= most


def one_chunk_sums(settings: Settings, columns: ItemColumns, largest: int):
    """``(sizes, counts, rest)``: the rows of ``columns`` whose item is at most ``largest`` bytes
    summed by ``ntotal`` (ascending lists of ints), and the other rows as triples."""
    import numpy as np  # ItemColumns hold numpy arrays: numpy is loaded

    sizes = columns.item_size
    if sizes is None:
        sizes = ntotal_array(settings, columns.key, columns.value, columns.flags)
    elif len(sizes):
        check_item_size(int(sizes.min()), item_size(settings, 1, 0).total)
    fits = sizes <= largest
    fitting = sizes[fits]
    order = np.argsort(fitting, kind="stable")
    ordered, counts = fitting[order], columns.counts[fits][order]
    starts = np.flatnonzero(np.diff(ordered, prepend=-1))
    summed = np.add.reduceat(counts, starts).tolist() if len(starts) else []
    return ordered[starts].tolist(), summed, columns.select(~fits).triples()


def add_one_chunk(usage: dict[int, list[int]], classes: Sequence[SlabClass], count_of: dict[int, int]) -> None:
    """Items that fit one chunk, by ntotal, into ``usage``: each size goes to the first class whose
    chunk holds it (``slabs_clsid()``, as :func:`class_for`), found for a whole class at once."""
    sizes = sorted(count_of)
    counts = [count_of[size] for size in sizes]
    start = 0
    for c in classes:      # chunk sizes never decrease: a class holds the sizes above the last one's
        end = bisect_right(sizes, c.chunk_size, start)
        if end > start:
            n = sum(counts[start:end])
            held = sum(map(mul, counts[start:end], sizes[start:end]))
            row = usage[c.id]
            row[0] += n
            row[1] += n
            row[2] += held
            row[3] += held
            start = end
    if start != len(sizes):
        raise AssertionError("an item of one chunk is larger than the largest class")   # cannot happen


def place_sized(settings: Settings, classes: Sequence[SlabClass], sized: Sequence[tuple], key_length: int,
                chunked: dict[ChunkShape, int] | None = None):
    """``report._place`` for many chunked items known by size (``(item, count, ...)``), at once.

    Returns ``(at, sizes, counts, placed)``: the :class:`SizedChunks` of the items
    :func:`place_sized_chunks` places, with their sizes and counts (int64 arrays), and
    whether each tuple of ``sized`` was placed (a list of bools; the others are left to
    place one by one).  When given, ``chunked`` counts each placed item's chunk shape (as
    ``report.chunk_shape``).  Callers sum int64 products of these: where the sums could
    overflow, every item is left.
    """
    import numpy as np

    sizes = np.fromiter((t[0].item_size for t in sized), dtype=np.int64, count=len(sized))
    counts = [t[1] for t in sized]
    if sum(counts) * (2 * int(sizes.max(initial=0)) + 3 * classes[-1].chunk_size) >= 1 << 62:
        return None, sizes[:0], sizes[:0], [False] * len(sized)
    counts = np.asarray(counts, dtype=np.int64)
    at = place_sized_chunks(settings, classes, sizes, key_length)
    exact = at.exact
    at, sizes, counts = at.select(exact), sizes[exact], counts[exact]
    if chunked is not None:
        body = ((at.body, "body"),)
        for n, h, f, t in zip(counts.tolist(), at.header.tolist(), at.full.tolist(), at.tail.tolist()):
            if n:
                shape = ((h, "header"),) + body * f + (((t, "tail"),) if t else ())
                chunked[shape] = chunked.get(shape, 0) + n
    return at, sizes, counts, exact.tolist()


def add_sized(usage: dict[int, list[int]], settings: Settings, classes: Sequence[SlabClass],
              sized: Sequence[tuple[Item, int, int]], key_length: int,
              chunked: dict[ChunkShape, int] | None) -> tuple[list[tuple[Item, int, int]], tuple[int, int]]:
    """``report._add`` for many chunked items known by size (:func:`place_sized`), at once.

    Returns the triples left to place one by one, and ``(items, rows)`` added.
    """
    import numpy as np

    at, sizes, counts, placed = place_sized(settings, classes, sized, key_length, chunked)
    left = [t for t, done in zip(sized, placed) if not done]
    if at is None:
        return left, (0, 0)
    p = settings.profile
    room = p.chunk_header
    n = len(classes)
    chunks, requested, mem = (np.zeros(n, dtype=np.int64) for _ in range(3))
    has_tail = at.tail > 0
    for where, many, asked in ((at.header_class, counts, at.header),
                               (at.tail_class[has_tail], counts[has_tail], at.tail[has_tail]),
                               (np.full(len(counts), at.body_class), counts * at.full, at.body)):
        np.add.at(chunks, where, many)
        np.add.at(requested, where, many * (asked - room))
        np.add.at(mem, where, many * asked)
    in_slabs = p.mem_requested_stat == "slabs"
    for i in np.flatnonzero(chunks).tolist():
        row = usage[classes[i].id]
        row[1] += int(chunks[i])
        row[2] += int(requested[i])
        if in_slabs:
            row[3] += int(mem[i])
    home = usage[classes[-1].id]     # a chunked item lives in the largest class's LRU
    home[0] += int(counts.sum())
    if p.mem_requested_stat == "items":
        home[3] += int((counts * sizes).sum())
    rows = sum(t[2] for t, done in zip(sized, placed) if done)
    return left, (int(counts.sum()), rows)
