"""Where a whole distribution of items goes: per-class chunks, pages, waste and capacity.

The input is a distribution, ``{Item: count}``.  Each distinct item is placed
once (:func:`slabcalc.model.placement.place`) and multiplied by its count, so the
cost of a report grows with the number of distinct items, not of rows.  Where
many items share a rule (one-chunk items by ntotal, chunked items known only by
size), they are summed over numpy columns instead (:mod:`slabcalc.analysis.bulk`).

Per class the report keeps what ``stats slabs`` / ``stats items`` would show
after storing every item once on a fresh server with room for all of them:
``chunks`` (used_chunks), ``items`` (items counted in the class's LRU; a
chunked item counts in the largest class), ``pages`` (total_pages: chunks
fill pages in order, so ``ceil(chunks / perslab)``) and ``mem_requested``
(as the release reports it).  ``requested_bytes`` is the item bytes held in the
class's chunks: for chunked items without the 48-byte ``item_chunk``
headers, so that the total equals ``stats`` ``bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import chain, groupby
from typing import Iterable, Iterator, Mapping, Sequence

from slabcalc.analysis.bulk import add_one_chunk, add_sized, check_item_size, one_chunk_sums, placed_in_bulk
from slabcalc.errors import InputError
from slabcalc.model.capacity import Capacity, ChunkShape, ClassPages, mix_capacity, needed_bytes
from slabcalc.model.capacity import capacity as _capacity
from slabcalc.model.classes import SlabClass, slab_classes
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.item import VALUE_MAX, item_size, ntotal_function
from slabcalc.model.placement import CHUNKED, TOO_LARGE, Placement, check_placeable, place
from slabcalc.model.settings import Settings

MIB = 1 << 20


@dataclass(frozen=True)
class ClassUsage:
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

    @property
    def used_bytes(self) -> int:
        return self.chunks * self.slab_class.chunk_size

    @property
    def chunk_waste(self) -> int:
        return self.used_bytes - self.requested_bytes

    @property
    def page_bytes(self) -> int:
        return self.pages * self.page_length

    @property
    def free_bytes(self) -> int:
        """Page bytes no item uses: the unused chunks of the last page and every page tail."""
        return self.page_bytes - self.used_bytes


@dataclass(frozen=True)
class Report:
    settings: Settings
    classes: tuple[ClassUsage, ...]  # every class that holds at least one chunk
    items: int                       # items placed
    too_large: int                   # items over -I (memcached refuses them)
    approximated: int                # chunked items known only by total size (split assumed)
    capacity: Capacity | None
    placed_rows: int = 0             # input rows whose items were placed
    too_large_rows: int = 0          # input rows whose items are too large
    preallocated: int = 0            # -L: bytes of the first pages of classes the items do not use

    def total(self, field: str) -> int:
        return sum(getattr(c, field) for c in self.classes)

    @property
    def waste_pct(self) -> float:
        """Share of page bytes not holding item bytes (chunk waste plus free page bytes)."""
        pages = self.total("page_bytes")
        return 100.0 * (pages - self.total("requested_bytes")) / pages if pages else 0.0

    @property
    def worst_class(self) -> ClassUsage | None:
        """The class that wastes most (chunk waste plus free page bytes)."""
        return max(self.classes, key=lambda c: (c.page_bytes - c.requested_bytes, -c.slab_class.id),
                   default=None)

    @property
    def memory_limit_needed(self) -> int:
        """The ``-m`` (in MiB) under which the whole distribution is stored (see :func:`fits`)."""
        pages = [(c.pages, c.page_length) for c in self.classes]
        if self.settings.preallocate:   # -L: every class's first page inside -m, none granted past it
            needed = sum(n * length for n, length in pages) + self.preallocated
        else:
            needed = needed_bytes(pages)
        megabytes = max(1, -(-needed // MIB))
        for check in self.settings.profile.item_size_max_checks:  # e.g. -I at most half of -m
            if check.rule == "max_fraction_of_maxbytes":
                megabytes = max(megabytes, -(-self.settings.item_size_max * check.value // MIB))
        return megabytes


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
    value = max(0, ntotal - empty)
    while value > 0 and item_size(settings, key, value).total > ntotal:
        value -= 1
    return key, value


def item_sizer(settings: Settings):
    """``Item -> ntotal``: its lengths summed, or its given ``item_size`` (ValueError when smaller
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


def build_report(settings: Settings, distribution: Mapping[Item, int] | Iterable[tuple],
                 memory_limit: int | None = None, size_key_length: int = 16) -> Report:
    """The report of ``distribution`` under ``settings``.

    ``distribution`` is ``{Item: count}`` or an iterable of ``(item, count)`` or
    ``(item, count, rows)`` (a histogram row is one row of ``count`` items), and
    of :class:`~slabcalc.inputs.items.ItemColumns` (many items at once, sized in bulk).

    ``memory_limit`` (bytes) adds the capacity of ``-m``; ``size_key_length``
    is the key length assumed to split chunked items known only by total size.
    """
    classes = slab_classes(settings)
    pairs = distribution.items() if isinstance(distribution, Mapping) else distribution
    usage = {c.id: [0, 0, 0, 0] for c in classes}  # items, chunks, requested, mem_requested
    check_placeable(settings, classes)
    largest = min(classes[-1].chunk_size, settings.item_size_max)
    # An item that fits one chunk is placed by its ntotal alone: sum those by ntotal
    # first (many lengths share one), and place each ntotal once.
    count_of: dict[int, int] = {}           # items by ntotal
    rows_of: dict[int, int] = {}            # input rows by ntotal
    placements: dict[Item, Placement] = {}  # the rest: chunked or too large
    chunked: dict[ChunkShape, int] = {}     # chunked items by the chunks they ask for
    placed = too_large = approximated = placed_rows = too_large_rows = 0

    def in_one_chunk(columns: ItemColumns) -> Iterator[tuple[Item, int, int]]:
        """Sum the rows of ``columns`` that fit one chunk into ``count_of``/``rows_of``; the rest as
        triples."""
        sizes, counts, rest = one_chunk_sums(settings, columns, largest)
        if not count_of:           # the usual first block: its distinct sizes, at C speed
            count_of.update(zip(sizes, counts))
            rows_of.update(zip(sizes, counts))
            return rest
        for size, count in zip(sizes, counts):
            count_of[size] = count_of.get(size, 0) + count
            rows_of[size] = rows_of.get(size, 0) + count
        return rest

    pairs = chain.from_iterable(in_one_chunk(p) if isinstance(p, ItemColumns) else (p,) for p in pairs)
    size_of = item_sizer(settings)
    in_bulk = placed_in_bulk(settings, classes, size_key_length)
    sized: list[tuple[Item, int, int]] = []   # chunked items known by size: placed at once below

    def sized_leftovers() -> Iterator[tuple[Item, int, int]]:
        """Once the input is read: the chunked items known by size, placed at once into ``usage``.
        The rows the column rule leaves (see place_sized_chunks) come back to the loop below."""
        nonlocal in_bulk, placed, placed_rows, approximated
        in_bulk = None
        if not sized:
            return
        left, counted = add_sized(usage, settings, classes, sized, size_key_length,
                                   chunked if memory_limit is not None else None)
        placed += counted[0]
        placed_rows += counted[1]
        approximated += counted[0]
        yield from left

    for item, count, *rows in chain(pairs, sized_leftovers()):
        rows = rows[0] if rows else count
        size = size_of(item)
        if size <= largest:
            count_of[size] = count_of.get(size, 0) + count
            rows_of[size] = rows_of.get(size, 0) + rows
            continue
        if in_bulk is not None and in_bulk(item, size):
            sized.append((item, count, rows))
            continue
        placement = placements.get(item)
        if placement is None:
            placement = placements[item] = _place(settings, classes, item, size_key_length)
        if placement.status == CHUNKED and count and memory_limit is not None:   # for capacity only
            shape = chunk_shape(placement)
            chunked[shape] = chunked.get(shape, 0) + count
        if placement.status == TOO_LARGE:
            too_large += count
            too_large_rows += rows
            continue
        placed += count
        placed_rows += rows
        if placement.status == CHUNKED and item.item_size is not None:
            approximated += count
        if count:
            _add(usage, settings, placement, count)
    add_one_chunk(usage, classes, count_of)
    placed += sum(count_of.values())
    placed_rows += sum(rows_of.values())
    used = tuple(
        ClassUsage(c, settings.page_length(c.chunk_size, c.perslab), *usage[c.id])
        for c in classes if usage[c.id][1])
    preallocated = 0
    if settings.preallocate:   # slabs_preallocate(): a page for every class at start, from -m
        ids = {c.slab_class.id for c in used}
        preallocated = sum(settings.page_length(c.chunk_size, c.perslab) for c in classes if c.id not in ids)
    limit = None
    if memory_limit is not None:
        budget = memory_limit - preallocated
        limit = (capacity(used, placed, budget) if not chunked else
                 mix_capacity(settings, classes, count_of, chunked, budget))
        limit = replace(limit, memory_limit=memory_limit)
    return Report(settings, used, placed, too_large, approximated, limit, placed_rows, too_large_rows, preallocated)


def _place(settings: Settings, classes: Sequence[SlabClass], item: Item, key_length: int) -> Placement:
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


def _add(usage: dict[int, list[int]], settings: Settings, placement: Placement, count: int) -> None:
    chunk_header = settings.profile.chunk_header or 0
    chunked = placement.status == CHUNKED
    in_slabs = settings.profile.mem_requested_stat == "slabs"
    for chunk, run in groupby(placement.chunks):      # a chunked item's body chunks are one run
        n = count * sum(1 for _ in run)
        row = usage[chunk.class_id]
        row[1] += n
        row[2] += n * (chunk.requested - (chunk_header if chunked else 0))
        if in_slabs:
            row[3] += n * chunk.requested
    home = usage[placement.lru_class.id]
    home[0] += count
    if settings.profile.mem_requested_stat == "items":
        home[3] += count * placement.item_size


def capacity(rows: Sequence[ClassUsage], items: int, memory_limit: int) -> Capacity:
    """Items of a mix of one-chunk items that ``-m`` holds (:func:`slabcalc.model.capacity.capacity`)."""
    return _capacity([ClassPages(r.slab_class.id, r.slab_class.perslab, r.page_length, r.chunks) for r in rows],
                     items, memory_limit)


def chunk_shape(placement: Placement) -> ChunkShape:
    """A chunked item's chunk requests in memcached's order: what its capacity depends on."""
    return tuple([(c.requested, c.role) for c in placement.chunks])
