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
    from slabcalc.records.report import place_extstore_record

    placed = placement_record(placement)
    found: dict = {}
    if capacity is not None:
        if capacity.ext is not None:
            found["extstore"] = place_extstore_record(capacity.ext, placed["item_size"], placed["class"])
        if capacity.items is not None:
            found.update({"capacity": capacity.items, "limiting_class": capacity.limiting_class,
                          "process_bytes": capacity.process.total, "hash_bytes": capacity.process.hash_bytes})
    other_name = "without_cas" if settings.use_cas else "with_cas"
    return {"settings": settings_record(settings), **placed, **found,
            other_name: placement_record(other) if other is not None else None}
