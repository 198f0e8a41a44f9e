"""Capacity in the file's order: the rows of an item file stored one after another until the first eviction.

An item file's rows are items in the order they are set; ``-m`` holds the items
before the first one that needs a page when none is left
(:class:`slabcalc.model.arrival.InOrder`).  What a reader hands to
``read_items(arrivals=...)`` comes here block by block: each row is sized, given
its class (or, chunked, the classes of its chunks, as
:func:`slabcalc.analysis.placement.place_item` places them), and walked; memory stays a few arrays a block.
"""

from __future__ import annotations

from dataclasses import replace

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.placement import column_ntotals, item_sizer, place_item
from slabcalc.model.classes import home_indexes, slab_classes
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.placement import CHUNKED
from slabcalc.model.settings import Settings

IN_ORDER, AS_MIX = "order", "mix"      # Capacity.basis: the file's own order, or a proportional mix


class FileOrder:
    """The capacity of the ``-m`` the settings were given for the items given to it, in their order.

    Call it with each block of rows (a list of :class:`Item` or an
    :class:`ItemColumns`); :attr:`result` is the :class:`Capacity` at the first
    refused item, or None while every item was stored.
    """

    def __init__(self, settings: Settings, *, size_key_length: int = SIZE_KEY_LENGTH):
        import numpy as np  # only a report with -m walks: a plain one starts without numpy

        from slabcalc.model.arrival import InOrder

        self.settings, self.key_length = settings, size_key_length
        self.classes = classes = slab_classes(settings)
        pages = {c.id: (c.perslab, settings.page_length(c.chunk_size, c.perslab)) for c in classes}
        if settings.memory_limit is None:
            raise ValueError("capacity in the file's order needs settings given -m")
        self.walk = InOrder(pages, classes[-1].id, settings.memory_limit, settings.profile.chunk_tail_fallback)
        if settings.preallocate:
            self.walk.preallocate()
        self.chunk_sizes = np.fromiter((c.chunk_size for c in classes), dtype=np.int64, count=len(classes))
        self.ids = np.fromiter((c.id for c in classes), dtype=np.int64, count=len(classes))
        self.largest = min(classes[-1].chunk_size, settings.item_size_max)   # one chunk up to here
        self.size_of = item_sizer(settings)
        self.kind_of: dict[Item, int] = {}    # chunked items (and too large: -1) by Item

    @property
    def result(self):
        found = self.walk.result
        return None if found is None else replace(found, basis=IN_ORDER)

    def __call__(self, rows) -> None:
        import numpy as np

        if self.walk.result is not None or not len(rows):
            return
        if isinstance(rows, ItemColumns):
            sizes = column_ntotals(self.settings, rows)
            items = None
        else:
            items = rows
            sizes = np.fromiter(map(self.size_of, rows), dtype=np.int64, count=len(rows))
        kinds = self.ids[home_indexes(self.chunk_sizes, sizes)]
        for at in np.flatnonzero(sizes > self.largest).tolist():
            item = items[at] if items is not None else _item_of(rows, at)
            kinds[at] = self._chunked_kind(item)
        self.walk.feed(kinds[kinds >= 0])

    def _chunked_kind(self, item: Item) -> int:
        kind = self.kind_of.get(item)
        if kind is None:
            placement = place_item(self.settings, self.classes, item, self.key_length)
            if placement.status != CHUNKED:      # too large: memcached refuses it, nothing is allocated
                kind = -1
            else:
                kind = self.walk.kinds.add([c.class_id for c in placement.chunks],
                                           placement.chunks[-1].role == "tail", placement.lru_class.id)
            self.kind_of[item] = kind
        return kind


def _item_of(rows: ItemColumns, at: int) -> Item:
    if rows.item_size is not None:
        return Item(None, None, 0, int(rows.item_size[at]))
    return Item(int(rows.key[at]), int(rows.value[at]), int(rows.flags[at]), None)


def with_file_order(report, order: FileOrder | None):
    """``report`` with the capacity in the file's order where the items of the file, stored in their
    order, reach an eviction; else as it was (the items as a proportional mix: the file alone never
    fills ``-m``, or its rows carry counts)."""
    if order is None or order.result is None or report.capacity is None:
        return report
    return replace(report, capacity=replace(order.result, memory_limit=report.capacity.memory_limit))


def walkers(orders) -> object | None:
    """One ``arrivals`` callback feeding every :class:`FileOrder` of ``orders`` (None among them
    skipped), or None when there is none."""
    live = [o for o in orders if o is not None]
    if not live:
        return None

    def feed(rows) -> None:
        for order in live:
            order(rows)
    return feed
