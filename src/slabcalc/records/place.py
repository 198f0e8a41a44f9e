"""The JSON of ``slabcalc place``, built in one pass: the settings, the placement, a full server's
capacity and process (with -m, or under extstore), and the placement with CAS flipped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from slabcalc.model.placement import Placement
from slabcalc.model.settings import Settings
from slabcalc.records.model import placement_record, settings_record

if TYPE_CHECKING:      # types only
    from slabcalc.analysis.placed import PlacedCapacity

# the fields of the csv row: the placement and the capacity, not the chunks or the extstore section
NOT_IN_CSV = ("settings", "chunks", "extstore", "with_cas", "without_cas")


def place_record(settings: Settings, placement: Placement, other: Placement | None = None,
                 capacity: PlacedCapacity | None = None) -> dict:
    """The stable JSON contract of ``slabcalc place``: ``other`` is the item placed with CAS flipped
    (``without_cas`` or ``with_cas``, None where the release has no -C)."""
    placed = placement_record(placement)
    found: dict = {}
    if capacity is not None:
        if capacity.ext is not None:
            found["extstore"] = place_extstore_record(capacity.ext, placed["item_size"], placed["class"])
        if capacity.items is not None:
            found.update({"capacity": capacity.items, "limiting_class": capacity.limiting_class,
                          "process_bytes": capacity.process.total, "hash_bytes": capacity.process.hash_bytes})
            fill = capacity.ext.capacity.fill if capacity.ext is not None and capacity.ext.capacity else None
            if fill is not None:   # the write thread falling behind (analysis/extstore_fill.py): the range's low end
                found["capacity_behind"] = fill.low
    other_name = "without_cas" if settings.use_cas else "with_cas"
    return {"settings": settings_record(settings), **placed, **found,
            other_name: placement_record(other) if other is not None else None}


def place_extstore_record(ext, item_size: int, lru_class: int) -> dict:
    """``place``'s ``extstore`` section: where one item (``item_size`` bytes, in ``lru_class``'s LRU)
    lives under extstore, and why it stays in RAM when it does (``stays_in_ram``, see
    :func:`slabcalc.model.extstore.why_in_ram`)."""
    from slabcalc.model.extstore import why_in_ram

    e = ext.extstore
    flushed = next((row for row in ext.classes if row.flash_items), None)
    header = next((row for row in ext.classes if row.header_items), None)
    per_wbuf = e.wbuf_size // item_size if flushed else 0
    record = {
        "flushed": flushed is not None,
        "stays_in_ram": why_in_ram(e, lru_class, ext.min_class, item_size),
        "min_class": ext.min_class,
        "header_size": ext.ram.classes[0].requested_bytes if flushed else None,
        "header_class": header.class_id if header else None,
        "items_per_wbuf": per_wbuf,
        "items_per_flash_page": per_wbuf * e.wbufs_per_page,
        "wbuf_waste": e.wbuf_size - per_wbuf * item_size if flushed else None,
        "capacity": None,
    }
    if ext.capacity is not None:
        c = ext.capacity
        from slabcalc.records.report import fill_record

        record["capacity"] = {"items": c.items, "limited_by": c.limited_by, "ram_items": c.ram_items,
                              "flash_items": c.flash_items, "replayed": fill_record(c.fill)}
    return record
