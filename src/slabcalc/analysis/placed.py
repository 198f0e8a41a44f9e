"""``place -m``: how many items of one size fit, and the process memory of a server full of them; under
extstore, with the flash too.  One frozen result (issue 30: the command line worked this out itself and
added it to the record afterwards)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from slabcalc.analysis.process import ProcessMemory, process_memory
from slabcalc.model.distribution import Item
from slabcalc.model.settings import Settings

if TYPE_CHECKING:      # types only: the extstore model is loaded only under -o ext_path
    from slabcalc.analysis.extstore import ExtstoreReport


@dataclass(frozen=True)
class PlacedCapacity:
    """A server full of one item: ``items`` of them fit (None: extstore says no capacity), the
    class that runs out first, and the process; ``ext`` is the extstore report under -o ext_path."""

    items: int | None
    limiting_class: int | None
    process: ProcessMemory | None
    ext: ExtstoreReport | None = None


def placed_capacity(settings: Settings, key_length: int, value_length: int, flags: int = 0,
                    rate: int | None = None) -> PlacedCapacity:
    """How many items of these lengths ``settings`` (with -m, or under extstore) hold; without extstore
    and without -m, the -m memcached runs with by default (``settings.maxbytes``); ``rate``: the sets a
    second the extstore fill is replayed at (None: its default)."""
    from slabcalc.analysis.report import build_report

    item = {Item(key_length, value_length, flags, None): 1}
    if settings.extstore is None:
        sized = settings if settings.memory_limit is not None else replace(settings, memory_limit_given=True)
        full = build_report(sized, item, capacity=True)
        return PlacedCapacity(full.capacity.items, full.capacity.limiting_class, process_memory(full))
    from slabcalc.analysis.extstore import extstore_report

    ext = extstore_report(settings, item, capacity=True, refill=True, rate=rate)
    if ext.capacity is None:
        return PlacedCapacity(None, None, None, ext)
    return PlacedCapacity(ext.capacity.items, None, process_memory(replace(ext.ram, capacity=ext.capacity.ram)), ext)
