"""What RAM holds: the plain report, or with extstore the RAM side of a RAM+flash report.

Apart from :mod:`slabcalc.analysis.extstore` so that a report without extstore
does not import (and pay the start-up of) the extstore model.
"""

from __future__ import annotations

from dataclasses import replace

from slabcalc.analysis.report import build_report
from slabcalc.model.settings import Settings


def ram_report(settings: Settings, distribution, memory_limit: int | None, size_key_length: int = 16):
    """``(report, extstore report or None)``: the report of what RAM holds -- without extstore the
    plain report; with it, what stays in RAM, its rows accounted as the whole input's and its
    capacity RAM's side of the RAM+flash capacity (what the whole-process model reads)."""
    if settings.extstore is None:
        return build_report(settings, distribution, memory_limit, size_key_length=size_key_length), None
    from slabcalc.analysis.extstore import extstore_report   # the extstore model only when it runs

    ext = extstore_report(settings, distribution, memory_limit, size_key_length=size_key_length)
    capacity = None if ext.capacity is None else ext.capacity.ram
    report = replace(ext.ram, too_large=ext.too_large, placed_rows=ext.placed_rows,
                     too_large_rows=ext.too_large_rows, capacity=capacity)
    return report, ext
