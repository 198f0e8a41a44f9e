"""A distribution under extstore: what stays in RAM, what goes to flash, and what a RAM+flash pair holds.

The state modelled is the one memcached converges to once its write thread has caught up (at once
with ``ext_item_age=0``; under memory pressure otherwise): every item of a class at or above the
class of ``ext_item_size`` is on flash and has left a header item in RAM (storage.c 476-570).
What memcached keeps in RAM besides -- the newest items of those classes, until a class is within
``write_margin_pages`` pages of running out of free chunks (storage.c 606-620) -- is a transient
margin, not capacity, and is said, not counted.

``stats bytes`` (and metadump ``size=``) keep counting a flushed item's whole size (items.c 506,
the header's ``nbytes`` is the original's, storage.c 548); ``stats items`` ``mem_requested`` counts
the header's own size (items.c 437).  Both are reported.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.extstore_fill import FILL_RATE, Fill, fill
from slabcalc.analysis.placement import place_item
from slabcalc.analysis.report import Report, build_report
from slabcalc.errors import ValueRefused
from slabcalc.model.capacity import Capacity, largest_fitting
from slabcalc.model.classes import home_class, slab_classes, slabs_clsid
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.extstore import Extstore, FlashUse, header_ntotal, pack, why_in_ram
from slabcalc.model.placement import CHUNKED, TOO_LARGE
from slabcalc.model.settings import Settings


@dataclass(frozen=True)
class ExtstoreClass:
    """One slab class under extstore."""

    class_id: int
    chunk_size: int
    ram_items: int       # items that stay whole in RAM
    header_items: int    # header items of flushed items that live in this class
    flash_items: int     # items of this class written to flash
    flash_bytes: int     # their bytes on flash (whole ntotal each)


@dataclass(frozen=True)
class FlashCapacity:
    """Items of the mix a RAM+flash pair holds before the first eviction in RAM or on flash."""

    items: int
    limited_by: str          # "flash", "RAM" or "nothing" (no item of the mix takes either)
    ram_items: int           # items of the mix RAM (items and headers) alone would hold
    flash_items: int         # items of the mix the flash pages alone would hold
    ram: Capacity            # RAM full: its pages (the whole-process model reads it)
    fill: Fill | None = None  # the replayed fill (analysis/extstore_fill.py): ``items`` is its figure


@dataclass(frozen=True)
class ExtstoreReport:
    settings: Settings
    extstore: Extstore
    min_class: int                      # slabs_clsid(ext_item_size): classes from here are flushed
    ram: Report                         # what stays in RAM: small items and header items
    flash: FlashUse
    classes: tuple[ExtstoreClass, ...]
    items: int                          # items placed (curr_items)
    stats_bytes: int                    # ``stats bytes``: whole item sizes, flushed ones included
    too_large: int
    placed_rows: int
    too_large_rows: int
    assumed_key_length: int | None      # items known by size only: the key length assumed
    capacity: FlashCapacity | None = None

    @property
    def flash_pages_needed(self) -> int:
        """Pages of the file the items need, the reserved ones included."""
        return self.flash.pages + self.extstore.reserved_pages

    @property
    def flash_fits(self) -> bool:
        return self.flash.pages <= self.extstore.usable_pages


def min_flush_class(settings: Settings, ext: Extstore, classes) -> int:
    """``slabs_clsid(ext_item_size)`` (:func:`slabcalc.model.classes.slabs_clsid`): 0 (every class) for
    0 or a size above -I; the largest class for a size above every chunk."""
    return slabs_clsid(settings, classes, ext.item_size)


def _pairs(distribution) -> Iterable[tuple[Item, int, int]]:
    pairs = distribution.items() if isinstance(distribution, Mapping) else distribution
    for pair in pairs:
        if isinstance(pair, ItemColumns):
            yield from pair.triples()
        else:
            item, count, *rows = pair
            yield item, count, rows[0] if rows else count


def extstore_report(settings: Settings, distribution, *, capacity: bool = False,
                    size_key_length: int = SIZE_KEY_LENGTH, refill: bool = False,
                    in_order: list[tuple[Item, int]] | None = None, rate: int | None = None) -> ExtstoreReport:
    """The report of ``distribution`` (as :func:`slabcalc.analysis.report.build_report` takes it)
    with every flushable item on flash; ``capacity`` adds the RAM+flash capacity of the -m the
    settings were given (``settings.memory_limit``; none when -m was not given), replayed
    (:mod:`slabcalc.analysis.extstore_fill`) where the replay is short enough: the input's items once,
    or, ``refill``, again and again until the first eviction (a full server of the mix).  ``in_order``:
    the input's rows in their order (:class:`slabcalc.analysis.extstore_fill.InputOrder`), which the
    distribution (distinct items, counted) no longer has; ``rate``: the sets a second of the replayed fill
    (None: :data:`slabcalc.analysis.extstore_fill.FILL_RATE`)."""
    ext = settings.extstore
    if ext is None:
        raise ValueRefused("extstore needs -o ext_path=FILE:SIZE")
    classes = slab_classes(settings)
    min_class = min_flush_class(settings, ext, classes)
    ram: dict[Item, int] = {}
    per_class: dict[int, list[int]] = {}                # ram, headers, flash items, flash bytes
    streams: dict[str, dict[tuple[int, int], int]] = {"default": {}, "chunked": {}}  # (class, size) -> n
    placed = too_large = placed_rows = too_large_rows = stats_bytes = 0
    assumed = None
    known: dict[Item, tuple] = {}
    order: list[tuple[Item, int]] = []                  # the items placed, in the input's order
    for item, count, rows in _pairs(distribution):
        where = known.get(item)
        if where is None:
            where = known[item] = _where(settings, classes, ext, min_class, item, size_key_length)
        status, ntotal, home, header, header_class = where
        if item.item_size is not None:
            assumed = size_key_length
        if status == TOO_LARGE:
            too_large += count
            too_large_rows += rows
            continue
        placed += count
        placed_rows += rows
        order.append((item, count))
        stats_bytes += count * ntotal
        row = per_class.setdefault(home, [0, 0, 0, 0])
        if header is None:
            ram[item] = ram.get(item, 0) + count
            row[0] += count
            continue
        row[2] += count
        row[3] += count * ntotal
        per_class.setdefault(header_class, [0, 0, 0, 0])[1] += count
        ram_item = Item(None, None, 0, header)
        ram[ram_item] = ram.get(ram_item, 0) + count
        stream = streams["chunked" if status == CHUNKED else "default"]
        stream[(home, ntotal)] = stream.get((home, ntotal), 0) + count
    runs = [_ordered(stream) for stream in streams.values()]
    ram_report = build_report(settings, ram, size_key_length=size_key_length)
    flash = pack(ext, runs)
    rows = tuple(ExtstoreClass(c.id, c.chunk_size, *per_class[c.id]) for c in classes if c.id in per_class)
    report = ExtstoreReport(settings, ext, min_class, ram_report, flash, rows, placed, stats_bytes, too_large,
                            placed_rows, too_large_rows, assumed)
    if capacity and settings.memory_limit is not None:
        report = _with_capacity(report, ram, runs, settings.memory_limit, in_order or order, refill,
                                in_order is not None, rate or FILL_RATE)
    return report


def _ordered(stream: dict[tuple[int, int], int]) -> list[tuple[int, int]]:
    """A bucket's items in the write thread's order: class by class from the smallest (storage.c
    604), each class's items in the order they arrived (its COLD tail first)."""
    keys = sorted(stream, key=lambda key: key[0])      # stable: arrival order within a class
    return [(size, stream[(cls, size)]) for cls, size in keys]


def _where(settings, classes, ext, min_class, item: Item, size_key_length: int) -> tuple:
    """(status, ntotal, LRU class, header ntotal or None, header class) of one kind of item."""
    placement = place_item(settings, classes, item, size_key_length)
    if placement.status == TOO_LARGE:
        return TOO_LARGE, 0, 0, None, 0
    size = placement.item
    home = placement.lru_class.id
    if why_in_ram(ext, home, min_class, size.total) is not None:   # never written to flash
        return placement.status, size.total, home, None, 0
    header = header_ntotal(size.total, size.value, ext.header)
    return placement.status, size.total, home, header, home_class(classes, header).id


def _with_capacity(report: ExtstoreReport, ram: dict[Item, int], runs, memory_limit: int,
                   order: list[tuple[Item, int]], refill: bool, in_order: bool, rate: int) -> ExtstoreReport:
    """Items of the mix (scaled as :mod:`slabcalc.model.capacity` scales one: ``ceil(n x count /
    items)`` of each kind) that RAM holds -- one RAM object per item, an item or a header -- and
    that the flash pages hold, before the first eviction in either (extstore evicts its oldest page
    when none is free, extstore.c 943-993): the static figures.  The capacity itself is the replay's
    (:func:`slabcalc.analysis.extstore_fill.fill` of ``order``) where it runs, else the static one."""
    ram_capacity = build_report(report.settings, ram, capacity=True).capacity
    ram_items = ram_capacity.items if ram_capacity is not None else 0
    total = report.items
    ext = report.extstore
    flash_kinds = sum(n for run in runs for _, n in run)
    if not flash_kinds:
        flash_items = None
    else:
        def fits(n: int) -> bool:
            scaled = [[(size, -(-n * count // total)) for size, count in run] for run in runs]
            return pack(ext, scaled).pages <= ext.usable_pages
        flash_items = largest_fitting(fits) if ext.usable_pages else 0
    if flash_items is None:
        items, limited = ram_items, "RAM"
    elif flash_items < ram_items:
        items, limited = flash_items, "flash"
    else:
        items, limited = ram_items, "RAM"
    # the hash table is sized for the items held (assoc.c): the smaller of RAM's and flash's figures
    ram_full = replace(ram_capacity, items=items) if ram_capacity else Capacity(memory_limit, 0, None)
    # refilled: up to the static RAM figure and a margin (the static one counts every flushable item a
    # header in RAM: more than the server holds); beyond FILL_LIMIT sets the static figure stays
    until = min(items, ram_items) * 21 // 20 + 1000 if refill else None
    filled = (fill(report.settings, order, until, rate=rate, in_order=in_order or len(order) == 1)
              if ext.usable_pages else None)
    if refill and filled is not None and filled.evicted is None:     # full before the bound: not proven
        filled = None
    if filled is not None:      # the replay's figure, not the static one (module docstring of extstore_fill)
        items, limited = filled.items, filled.evicted or "input"
        ram_full = Capacity(memory_limit, filled.items, None, filled.page_bytes, basis="fill")
    return replace(report, capacity=FlashCapacity(items, limited, ram_items,
                                                   flash_items if flash_items is not None else ram_items,
                                                   ram_full, filled))
