"""Where every item of a distribution goes: the one placement pass ``report``, ``optimize``, extstore
and the file-order capacity build from.

One kind of item (:class:`~slabcalc.model.distribution.Item`, by its lengths or by its size) is
placed by :func:`place_item`: :func:`slabcalc.model.placement.place`, with an item known only by
its size split into a key and a value first (:func:`item_for_size`).  A whole distribution is
placed by :func:`place_items`, once, into a :class:`Placed`: the chunks it asks for, which do not
depend on the class table but through the largest chunk and ``-I``.  From it
:meth:`Placed.usage` gives what ``stats slabs`` / ``stats items`` count per class (the one place
the release's ``mem_requested`` rule is applied) and :meth:`Placed.requests` the chunk requests
optimize scores other class tables against.

Each distinct item is placed once and multiplied by its count, so the cost grows with the number
of distinct items, not of rows.  Where many items share a rule (one-chunk items by ntotal, chunked
items known only by size), the sums are made over numpy columns instead
(:mod:`slabcalc.analysis.bulk`), and must come out the same to the byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Iterable, Mapping, Sequence

from slabcalc.analysis.bulk import (
    check_item_size,
    column_ntotals,
    one_chunk_classes,
    one_chunk_sums,
    place_sized,
    placed_in_bulk,
    sized_chunk_requests,
)
from slabcalc.errors import InputError
from slabcalc.model.capacity import ChunkShape
from slabcalc.model.classes import ClassBytes, SlabClass, slab_classes
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.item import SIZE_KEY_LENGTH, VALUE_MAX, item_size, max_value_length, ntotal_function
from slabcalc.model.placement import CHUNKED, STORED, TOO_LARGE, Placement, check_placeable, place
from slabcalc.model.settings import Settings

__all__ = ["ClassUsage", "Placed", "chunk_shape", "column_ntotals", "item_for_size", "item_sizer",
           "place_item", "place_items"]


# -- one kind of item ---------------------------------------------------------

def item_for_size(settings: Settings, ntotal: int, key_length: int) -> tuple[int, int]:
    """``(key, value)`` lengths whose item (flags 0) is exactly ``ntotal`` bytes.

    For sizes memcached reports without the key/value split (metadump ``size=``,
    ``stats sizes``).  The split only matters for chunked items.  The answer depends only on how
    the release sizes an item, so it is kept per sizing rule (optimize asks again per candidate).
    """
    p = settings.profile
    rule = (p.header, settings.cas_bytes, settings.suffix_rule, p.flags_size, p.key_max)
    found = _SPLITS.get((rule, ntotal, key_length))
    if found is None:
        found = _SPLITS[(rule, ntotal, key_length)] = _item_for_size(settings, ntotal, key_length)
        if len(_SPLITS) > 1 << 20:
            _SPLITS.clear()
    return found


_SPLITS: dict[tuple, tuple[int, int]] = {}


def _item_for_size(settings: Settings, ntotal: int, key_length: int) -> tuple[int, int]:
    key = key_length
    empty = item_size(settings, key, 0).total
    while empty > ntotal and key > 1:
        key -= 1
        empty = item_size(settings, key, 0).total
    return key, max_value_length(settings, ntotal, key) or 0     # the inverse of ITEM_ntotal: one home


def item_sizer(settings: Settings):
    """``Item -> ntotal``: its lengths summed, or its given ``item_size`` (InputError when smaller
    than any item memcached makes)."""
    ntotal = ntotal_function(settings)
    smallest_item = item_size(settings, 1, 0).total

    def size_of(item: Item) -> int:
        size = item.item_size
        if size is None:
            return ntotal(item.key, item.value, item.flags)
        check_item_size(size, smallest_item)
        return size
    return size_of


def place_item(settings: Settings, classes: Sequence[SlabClass], item: Item, key_length: int) -> Placement:
    """The placement of one kind of item; one known only by its size is split by :func:`item_for_size`
    with a key of ``key_length`` bytes (InputError when the release makes no item of that size)."""
    if item.item_size is None:
        if item.value > VALUE_MAX:  # more than memcached's protocol takes: too large as well
            return Placement(item_size(settings, item.key, 0, item.flags), TOO_LARGE, (), None, None)
        return place(settings, item.key, item.value, item.flags, classes)
    key, value = item_for_size(settings, item.item_size, key_length)
    placement = place(settings, key, value, 0, classes)
    if placement.status != TOO_LARGE and placement.item_size != item.item_size:
        # a text flags suffix grows by whole digits, so some sizes no item has
        raise InputError(f"item size {item.item_size}: memcached {settings.profile.release} makes no "
                         f"item of exactly this size (nearest below: {placement.item_size} bytes)")
    return placement


def chunk_shape(placement: Placement) -> ChunkShape:
    """A chunked item's chunk requests in memcached's order: what its capacity depends on."""
    return tuple([(c.requested, c.role) for c in placement.chunks])


# -- a whole distribution -----------------------------------------------------

@dataclass(frozen=True)
class ClassUsage(ClassBytes):
    """One class's share of a distribution."""

    slab_class: SlabClass
    page_length: int
    items: int = 0
    chunks: int = 0
    requested_bytes: int = 0
    mem_requested: int = 0

    @property
    def pages(self) -> int:
        return -(-self.chunks // self.slab_class.perslab) if self.chunks else 0

    def chunks_in_use(self) -> tuple[int, int]:
        return self.slab_class.chunk_size, self.chunks


@dataclass(frozen=True)
class Placed:
    """Every chunk a distribution asks for under one configuration (:func:`place_items`)."""

    settings: Settings
    classes: tuple[SlabClass, ...]
    one_chunk_sizes: tuple[int, ...]             # the ntotal of the items that fit one chunk, ascending,
    one_chunk_counts: tuple[int, ...]            # and how many items of each
    chunks: tuple[tuple[int, int, int], ...]     # (class id, bytes requested, chunks) of chunked items' chunks
    chunked: tuple[tuple[ChunkShape, int], ...]  # chunked items by chunk shape (only when shapes were asked for)
    chunked_items: int       # items stored in chunks (in the largest class's LRU)
    chunked_bytes: int       # their ntotal, summed
    items: int               # items placed
    rows: int                # input rows whose items were placed
    too_large: int           # items over -I (memcached refuses them)
    too_large_rows: int
    approximated: int        # chunked items known only by total size (split assumed)
    shapes: bool             # whether ``chunked`` was counted

    @property
    def one_chunk(self) -> dict[int, int]:
        """The items that fit one chunk, by ntotal."""
        return dict(zip(self.one_chunk_sizes, self.one_chunk_counts))

    def requests(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(sizes, counts)``: every chunk request by size, ascending (sizes asked for by no chunk
        left out).  A request goes to the first class whose chunk holds it (``slabs_clsid()``)."""
        if not self.chunks and 0 not in self.one_chunk_counts:      # the one-chunk items alone
            return self.one_chunk_sizes, self.one_chunk_counts
        requests = self.one_chunk
        for _, asked, n in self.chunks:
            requests[asked] = requests.get(asked, 0) + n
        sizes = tuple(sorted(s for s, n in requests.items() if n))
        return sizes, tuple(requests[s] for s in sizes)

    def usage(self) -> tuple[ClassUsage, ...]:
        """What each class holding a chunk counts, as ``stats slabs`` / ``stats items`` would after
        storing every item once on a fresh server with room for all of them."""
        settings, p = self.settings, self.settings.profile
        rows = {c.id: [0, 0, 0, 0] for c in self.classes}   # items, chunks, requested, mem_requested
        for c, n, held in one_chunk_classes(self.classes, self.one_chunk_sizes, self.one_chunk_counts):
            row = rows[c.id]
            row[0] += n
            row[1] += n
            row[2] += held
            row[3] += held
        header = p.chunk_header or 0
        in_slabs = p.mem_requested_stat == "slabs"     # a chunk's request counts in its own class ...
        for class_id, asked, n in self.chunks:
            row = rows[class_id]
            row[1] += n
            row[2] += n * (asked - header)             # stats bytes: item bytes, item_chunk headers left out
            if in_slabs:
                row[3] += n * asked
        home = rows[self.classes[-1].id]                # a chunked item lives in the largest class's LRU
        home[0] += self.chunked_items
        if p.mem_requested_stat == "items":            # ... or the whole item in its LRU's class
            home[3] += self.chunked_bytes
        return tuple(ClassUsage(c, settings.page_length(c.chunk_size, c.perslab), *rows[c.id])
                     for c in self.classes if rows[c.id][1])


def place_items(settings: Settings, distribution: Mapping[Item, int] | Iterable, size_key_length: int = SIZE_KEY_LENGTH,
                shapes: bool = False, classes: Sequence[SlabClass] | None = None) -> Placed:
    """Place ``distribution`` under ``settings``, each distinct item once.

    ``distribution`` is ``{Item: count}`` or an iterable of ``(item, count)`` or
    ``(item, count, rows)`` (a histogram row is one row of ``count`` items), and of
    :class:`~slabcalc.model.distribution.ItemColumns` (many items at once, sized in bulk).
    ``size_key_length`` is the key length assumed to split chunked items known only by
    total size; ``shapes`` also counts chunked items by chunk shape (what capacity needs).
    """
    classes = tuple(slab_classes(settings) if classes is None else classes)
    check_placeable(settings, classes)
    tally = _Tally(settings, classes, size_key_length, shapes)
    tally.add_pairs(distribution.items() if isinstance(distribution, Mapping) else distribution)
    tally.add_sized()
    return tally.placed()


class _Tally:
    """The running sums of one :func:`place_items` pass."""

    def __init__(self, settings: Settings, classes: tuple[SlabClass, ...], key_length: int, shapes: bool):
        self.settings, self.classes, self.key_length, self.shapes = settings, classes, key_length, shapes
        self.largest = min(classes[-1].chunk_size, settings.item_size_max)   # one chunk up to here
        self.one_chunk: dict[int, int] = {}          # items by ntotal
        self.chunks: dict[tuple[int, int], int] = {}  # (class id, requested) -> chunks of chunked items
        self.chunked: dict[ChunkShape, int] = {}
        self.memo: dict[Item, Placement] = {}
        self.sized: list[tuple[Item, int, int]] = []  # chunked items known by size: placed at once
        self.in_bulk = placed_in_bulk(settings, classes, key_length)
        self.chunked_items = self.chunked_bytes = self.items = self.rows = 0
        self.too_large = self.too_large_rows = self.approximated = 0

    def add_pairs(self, pairs: Iterable) -> None:
        """Items that fit one chunk summed by ntotal; the others kept (sized) or placed one by one."""
        one_chunk, largest, in_bulk, sized = self.one_chunk, self.largest, self.in_bulk, self.sized
        size_of = item_sizer(self.settings)
        for pair in pairs:
            if isinstance(pair, ItemColumns):
                pairs_left = self.add_columns(pair)
            else:
                pairs_left = (pair,)
            for item, count, *rows in pairs_left:
                rows = rows[0] if rows else count
                size = size_of(item)
                if size <= largest:
                    one_chunk[size] = one_chunk.get(size, 0) + count
                    self.rows += rows
                elif in_bulk is not None and in_bulk(item, size):
                    sized.append((item, count, rows))
                else:
                    self.add_one(item, count, rows)

    def add_columns(self, columns: ItemColumns) -> Iterable[tuple[Item, int, int]]:
        """The rows of ``columns`` that fit one chunk summed by ntotal; the rest as triples."""
        sizes, counts, rest = one_chunk_sums(self.settings, columns, self.largest)
        one_chunk = self.one_chunk
        if not one_chunk:           # the usual first block: its distinct sizes, at C speed
            one_chunk.update(zip(sizes, counts))
        else:
            for size, count in zip(sizes, counts):
                one_chunk[size] = one_chunk.get(size, 0) + count
        self.rows += sum(counts)
        return rest

    def add_one(self, item: Item, count: int, rows: int) -> None:
        """One kind of item placed by itself (:func:`place_item`), ``count`` times."""
        placement = self.memo.get(item)
        if placement is None:
            placement = self.memo[item] = place_item(self.settings, self.classes, item, self.key_length)
        if placement.status == TOO_LARGE:
            self.too_large += count
            self.too_large_rows += rows
            return
        self.rows += rows
        if placement.status == STORED:      # counted with the one-chunk items at the end
            self.one_chunk[placement.item_size] = self.one_chunk.get(placement.item_size, 0) + count
            return
        assert placement.status == CHUNKED, placement.status
        self.items += count
        if item.item_size is not None:
            self.approximated += count
        self.chunked_items += count
        self.chunked_bytes += count * placement.item_size
        chunks = self.chunks
        for chunk, run in groupby(placement.chunks):      # a chunked item's body chunks are one run
            key = (chunk.class_id, chunk.requested)
            chunks[key] = chunks.get(key, 0) + count * sum(1 for _ in run)
        if count and self.shapes:
            shape = chunk_shape(placement)
            self.chunked[shape] = self.chunked.get(shape, 0) + count

    def add_sized(self) -> None:
        """Once the input is read: the chunked items known by size, placed at once.  The rows the
        column rule leaves (see :func:`~slabcalc.model.placement.place_sized_chunks`) are placed
        one by one."""
        sized, self.sized = self.sized, []
        if not sized:
            return
        at, sizes, counts, done = place_sized(self.settings, self.classes, sized, self.key_length,
                                              self.chunked if self.shapes else None)
        if at is not None:
            n = int(counts.sum())
            self.items += n
            self.approximated += n
            self.chunked_items += n
            self.chunked_bytes += int((counts * sizes).sum())
            self.rows += sum(t[2] for t, placed in zip(sized, done) if placed)
            chunks = self.chunks
            for key, many in sized_chunk_requests(self.classes, at, counts):
                chunks[key] = chunks.get(key, 0) + many
        for (item, count, rows), placed in zip(sized, done):
            if not placed:
                self.add_one(item, count, rows)

    def placed(self) -> Placed:
        one_chunk = self.one_chunk
        sizes = tuple(sorted(one_chunk))
        counts = tuple(map(one_chunk.__getitem__, sizes))
        self.items += sum(counts)
        return Placed(self.settings, self.classes, sizes, counts,
                      tuple((c, asked, n) for (c, asked), n in self.chunks.items()),
                      tuple(self.chunked.items()), self.chunked_items, self.chunked_bytes, self.items, self.rows,
                      self.too_large, self.too_large_rows, self.approximated, self.shapes)


def chunked_in_bulk(settings: Settings, classes, items, sizes, rows, matrix, size_key_length: int) -> list[int]:
    """For optimize's fresh draws (analysis/optimize/spread.py), the pass's rule at once: the chunked rows
    (``items[row]``, ``sizes[row]`` its ntotal) of items with flags 0 within ``-I`` (their key length known, or
    ``size_key_length`` for an item known by size, as ``place_item`` takes it) placed at once by
    :func:`slabcalc.model.placement.place_sized_chunks` (the item it makes of an ``ntotal`` and a key
    length is the item itself) into ``matrix``; the rows left to place one by one.  Draws from every
    item have thousands of chunked sizes where the held-out fifth has hundreds: one by one, scoring
    the log-uniform mix took five times as long."""
    import numpy as np

    from slabcalc.model.placement import place_sized_chunks, sized_chunks_apply

    groups: dict[int, list[int]] = {}
    rest = []
    for row in rows.tolist():
        item = items[row]
        key = item.key if item.item_size is None else size_key_length
        if (key is not None and not item.flags and sizes[row] <= settings.item_size_max
                and sized_chunks_apply(settings, classes, key)):
            groups.setdefault(key, []).append(row)
        else:
            rest.append(row)
    for key, group in groups.items():
        where = np.asarray(group, dtype=np.int64)
        placed = place_sized_chunks(settings, classes, np.asarray(sizes, dtype=np.int64)[where], key)
        exact = placed.exact
        done = where[exact]
        np.add.at(matrix, (done, placed.header_class[exact]), 1)
        matrix[done, placed.body_class] += placed.full[exact]
        tails = exact & (placed.tail > 0)
        np.add.at(matrix, (where[tails], placed.tail_class[tails]), 1)
        rest.extend(where[~exact].tolist())
    return rest
