"""Many items placed at once: the numpy side of :mod:`slabcalc.analysis.placement`.

The placement pass places each distinct item by itself (:func:`slabcalc.model.placement.place`);
where many share a rule, the sums are made over columns instead and must come out the
same to the byte (tests/analysis/test_report.py holds them to the one-by-one placement):

* items that fit one chunk, summed by ``ntotal`` (:func:`one_chunk_sums`) and given to
  their classes a class at a time (:func:`one_chunk_classes`);
* chunked items known only by their size (:func:`place_sized`, :func:`sized_chunk_requests`).

Each function returns its sums; only :mod:`slabcalc.analysis.placement` calls them.
"""

from __future__ import annotations

from bisect import bisect_right
from operator import mul
from typing import Sequence

from slabcalc.errors import InputError
from slabcalc.model.capacity import ChunkShape
from slabcalc.model.classes import SlabClass
from slabcalc.model.distribution import ItemColumns
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
    :func:`place_sized` (known by size alone, within ``-I``), not to ``placement.place_item`` one by one;
    None where :func:`place_sized_chunks` places no chunked item of this configuration."""
    if not sized_chunks_apply(settings, classes, key_length):
        return None
    most = settings.item_size_max
    return lambda item, size: item.key is None and size <= most


def column_ntotals(settings: Settings, columns: ItemColumns):
    """The ``ntotal`` of each row of ``columns`` (an int64 array): given, or its lengths summed."""
    sizes = columns.item_size
    return ntotal_array(settings, columns.key, columns.value, columns.flags) if sizes is None else sizes


def one_chunk_sums(settings: Settings, columns: ItemColumns, largest: int):
    """``(sizes, counts, rest)``: the rows of ``columns`` whose item is at most ``largest`` bytes
    summed by ``ntotal`` (ascending lists of ints), and the other rows as triples."""
    import numpy as np  # ItemColumns hold numpy arrays: numpy is loaded

    sizes = column_ntotals(settings, columns)
    if columns.item_size is not None and len(sizes):
        check_item_size(int(sizes.min()), item_size(settings, 1, 0).total)
    fits = sizes <= largest
    fitting = sizes[fits]
    order = np.argsort(fitting, kind="stable")
    ordered, counts = fitting[order], columns.counts[fits][order]
    starts = np.flatnonzero(np.diff(ordered, prepend=-1))
    summed = np.add.reduceat(counts, starts).tolist() if len(starts) else []
    return ordered[starts].tolist(), summed, columns.select(~fits).triples()


def one_chunk_classes(classes: Sequence[SlabClass], sizes: Sequence[int], counts: Sequence[int]):
    """``(class, items, bytes)`` of each class the items that fit one chunk (``counts[i]`` of ntotal
    ``sizes[i]``, ascending) go to: each size to the first class whose chunk holds it
    (``slabs_clsid()``, as :func:`class_for`), found for a whole class at once."""
    start = 0
    for c in classes:      # chunk sizes never decrease: a class holds the sizes above the last one's
        end = bisect_right(sizes, c.chunk_size, start)
        if end > start:
            yield c, sum(counts[start:end]), sum(map(mul, counts[start:end], sizes[start:end]))
            start = end
    if start != len(sizes):
        raise AssertionError("an item of one chunk is larger than the largest class")   # cannot happen


def place_sized(settings: Settings, classes: Sequence[SlabClass], sized: Sequence[tuple], key_length: int,
                chunked: dict[ChunkShape, int] | None = None):
    """``placement.place_item`` for many chunked items known by size (``(item, count, ...)``), at once.

    Returns ``(at, sizes, counts, placed)``: the :class:`SizedChunks` of the items
    :func:`place_sized_chunks` places, with their sizes and counts (int64 arrays), and
    whether each tuple of ``sized`` was placed (a list of bools; the others are left to
    place one by one).  When given, ``chunked`` counts each placed item's chunk shape (as
    ``placement.chunk_shape``).  Callers sum int64 products of these: where the sums could
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


def sized_chunk_requests(classes: Sequence[SlabClass], at, counts) -> list[tuple[tuple[int, int], int]]:
    """``((class id, bytes requested), chunks)`` of every chunk of the items :func:`place_sized` placed
    (``at``, each ``counts`` times): header, full body chunks and tail, summed by class and request."""
    import numpy as np

    has_tail = at.tail > 0
    where = np.concatenate((at.header_class, at.tail_class[has_tail], [at.body_class]))
    asked = np.concatenate((at.header, at.tail[has_tail], [at.body]))
    many = np.concatenate((counts, counts[has_tail], [int((counts * at.full).sum())]))
    key = where * (int(asked.max()) + 1) + asked
    unique, inverse = np.unique(key, return_inverse=True)
    total = np.zeros(len(unique), dtype=np.int64)
    np.add.at(total, inverse, many)
    first = np.zeros(len(unique), dtype=np.int64)
    first[inverse] = np.arange(len(key))
    ids = [c.id for c in classes]
    return [((ids[c], a), n) for c, a, n in zip(where[first].tolist(), asked[first].tolist(), total.tolist())]
