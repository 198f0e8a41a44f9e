"""A distribution of items: what one kind of item is, and many kinds at once as numpy columns.

The data every analysis takes and every reader hands out; no I/O here.
"""

from __future__ import annotations

import gc
from collections import deque
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Iterable, Iterator


@dataclass(frozen=True)
class Item:
    """One kind of item: lengths in bytes, or a full item size."""

    __slots__ = ("key", "value", "flags", "item_size")   # written out: dataclass(slots=) is 3.10+

    key: int | None        # key length (None when item_size given)
    value: int | None      # value length
    flags: int             # 0 if not given
    item_size: int | None  # ntotal as memcached reports it (metadump size=, stats sizes bucket,
                           # item_size column); then key and value are None


@dataclass(frozen=True)
class ItemColumns:
    """Many distinct items at once, as equally long int64 numpy columns, each ``counts`` times
    (one row per item).

    What :func:`slabcalc.inputs.items.read_items` hands out, when asked for columns, for the rows
    the column counter read: ``key``, ``value`` and ``flags``, or ``item_size``
    (the others None).
    """

    key: Any
    value: Any
    flags: Any
    item_size: Any
    counts: Any

    def __len__(self) -> int:
        return len(self.counts)

    def select(self, mask) -> ItemColumns:
        """The rows where ``mask`` (a boolean array) is true."""
        return ItemColumns(*(None if c is None else c[mask] for c in
                             (self.key, self.value, self.flags, self.item_size, self.counts)))

    def triples(self) -> Iterator[tuple[Item, int, int]]:
        """The rows as :func:`slabcalc.inputs.items.read_items` triples ``(Item, count, rows)``."""
        n, counts = len(self), self.counts.tolist()
        columns = [repeat(default) if c is None else c.tolist() for c, default in
                   ((self.key, None), (self.value, None), (self.flags, 0), (self.item_size, None))]
        return zip(new_items(n, *columns), counts, counts)


_ITEM_FIELDS = tuple(Item.__dict__[name].__set__ for name in ("key", "value", "flags", "item_size"))


def new_items(n: int, keys: Iterable, values: Iterable, flags: Iterable, sizes: Iterable) -> list[Item]:
    """``[Item(key, value, flags, item_size), ...]`` for the columns, built at C speed.

    Item's own ``__init__`` sets each field with ``object.__setattr__`` (it is
    frozen); this sets the same slots, column by column, at a quarter of the
    cost of calling it: building Items is most of the work a new line costs.
    The cyclic garbage collector is held off meanwhile -- these objects hold
    only ints and None, yet would make it scan the young Items again every
    700 of them.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        items = list(map(object.__new__, repeat(Item, n)))
        for set_field, column in zip(_ITEM_FIELDS, (keys, values, flags, sizes)):
            deque(map(set_field, items, column), maxlen=0)
    finally:
        if collecting:
            gc.enable()
    return items
