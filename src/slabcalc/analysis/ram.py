"""What RAM holds: the plain report, or with extstore the RAM side of a RAM+flash report.

Apart from :mod:`slabcalc.analysis.extstore` so that a report without extstore
does not import (and pay the start-up of) the extstore model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.report import Report, build_report
from slabcalc.model.settings import Settings

if TYPE_CHECKING:      # types only: the extstore model is loaded only when it runs
    from slabcalc.analysis.extstore import ExtstoreReport


def ram_report(settings: Settings, distribution, *, size_key_length: int = SIZE_KEY_LENGTH, order=None, rate: int | None = None):
    """``(report, extstore report or None)``: the report of what RAM holds -- without extstore the
    plain report; with it, what stays in RAM, its rows accounted as the whole input's and its
    capacity RAM's side of the RAM+flash capacity (what the whole-process model reads), replayed in
    ``order``'s rows where it collected them (:class:`slabcalc.analysis.extstore_fill.InputOrder`).
    The capacity is that of the -m the settings were given (none without -m); ``rate``: the sets a
    second the extstore fill is replayed at (None: its default)."""
    if settings.extstore is None:
        return build_report(settings, distribution, capacity=True, size_key_length=size_key_length), None
    from slabcalc.analysis.extstore import extstore_report   # the extstore model only when it runs

    ext = extstore_report(settings, distribution, capacity=True, size_key_length=size_key_length,
                          in_order=getattr(order, "pairs", None), rate=rate)
    capacity = None if ext.capacity is None else ext.capacity.ram
    report = replace(ext.ram, too_large=ext.too_large, placed_rows=ext.placed_rows,
                     too_large_rows=ext.too_large_rows, capacity=capacity)
    return report, ext


@dataclass(frozen=True)
class RamReports:
    """``report``'s answer: the report of what RAM holds (``ext``: the RAM+flash report under
    extstore) and, per ``--vs``, the option text and its report under its own settings."""

    base: Report
    ext: ExtstoreReport | None
    what_if: tuple[tuple[str, Report], ...] = ()


def ram_reports(settings: Settings, distribution, versus: Sequence[tuple[str, Settings]] = (),
                orders: Sequence = (), size_key_length: int = SIZE_KEY_LENGTH, rate: int | None = None) -> RamReports:
    """:func:`ram_report` of ``distribution`` under ``settings`` and under each ``versus`` settings (each
    with its own -m), each capacity counted in the file's order where ``orders`` (one
    :class:`slabcalc.analysis.arrival.FileOrder` or None per settings, the baseline's first) walked it."""
    from slabcalc.analysis.arrival import with_file_order

    orders = list(orders) or [None] * (1 + len(versus))
    base, ext = ram_report(settings, distribution, size_key_length=size_key_length, order=orders[0], rate=rate)
    others = tuple((text, with_file_order(ram_report(vs, distribution, size_key_length=size_key_length,
                                                     order=order, rate=rate)[0], order))
                   for (text, vs), order in zip(versus, orders[1:]))
    return RamReports(with_file_order(base, orders[0]), ext, others)
