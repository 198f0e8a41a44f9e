"""Where a whole distribution of items goes: per-class chunks, pages, waste and capacity.

The input is a distribution, ``{Item: count}``, placed once by the one placement pass
(:func:`slabcalc.analysis.placement.place_items`), so the cost of a report grows with
the number of distinct items, not of rows.

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
from typing import Iterable, Mapping, Sequence

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.placement import ClassUsage, chunk_shape, item_for_size, item_sizer, place_items
from slabcalc.model.capacity import Capacity, ClassPages, mix_capacity, needed_bytes
from slabcalc.model.capacity import capacity as pages_capacity
from slabcalc.model.settings import Settings

# ClassUsage, item_for_size, item_sizer and chunk_shape are the placement pass's, named here too
# for the callers that have always imported them from the report.
__all__ = ["MIB", "ClassUsage", "Report", "build_report", "capacity", "chunk_shape", "item_for_size", "item_sizer"]

MIB = 1 << 20


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


def build_report(settings: Settings, distribution: Mapping | Iterable, *, capacity: bool = False,
                 size_key_length: int = SIZE_KEY_LENGTH) -> Report:
    """The report of ``distribution`` under ``settings``.

    ``distribution`` is what :func:`slabcalc.analysis.placement.place_items` takes: ``{Item: count}``,
    ``(item, count[, rows])`` and :class:`~slabcalc.model.distribution.ItemColumns`.
    ``capacity`` adds the capacity of the ``-m`` the settings were given (``settings.memory_limit``;
    none when -m was not given: a report under another limit is a report under settings configured
    with it); ``size_key_length`` is the key length assumed to split chunked items known only by total size.
    """
    memory_limit = settings.memory_limit if capacity else None
    placed = place_items(settings, distribution, size_key_length, shapes=memory_limit is not None)
    used = placed.usage()
    preallocated = 0
    if settings.preallocate:   # slabs_preallocate(): a page for every class at start, from -m
        ids = {c.slab_class.id for c in used}
        preallocated = sum(settings.page_length(c.chunk_size, c.perslab) for c in placed.classes if c.id not in ids)
    limit = None
    if memory_limit is not None:
        budget = memory_limit - preallocated
        limit = (_rows_capacity(used, placed.items, budget) if not placed.chunked else
                 mix_capacity(settings, placed.classes, placed.one_chunk, dict(placed.chunked), budget))
        limit = replace(limit, memory_limit=memory_limit)
    return Report(settings, used, placed.items, placed.too_large, placed.approximated, limit, placed.rows,
                  placed.too_large_rows, preallocated)


def capacity(rows: Sequence[ClassUsage], items: int, memory_limit: int) -> Capacity:
    """Items of a mix of one-chunk items that ``-m`` holds (:func:`slabcalc.model.capacity.capacity`)."""
    return _rows_capacity(rows, items, memory_limit)


def _rows_capacity(rows: Sequence[ClassUsage], items: int, memory_limit: int) -> Capacity:
    # build_report's keyword ``capacity`` hides the public function of that name inside it
    return pages_capacity([ClassPages(r.slab_class.id, r.slab_class.perslab, r.page_length, r.chunks) for r in rows],
                          items, memory_limit)
