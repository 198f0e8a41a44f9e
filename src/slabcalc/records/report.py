"""The JSON of ``slabcalc report`` and its summary lines."""

from __future__ import annotations

from typing import Sequence

from slabcalc.analysis.keyspace import Group
from slabcalc.analysis.process import ProcessMemory
from slabcalc.analysis.report import ClassUsage, Report, _summary, _what_if_row


def _class_record(c: ClassUsage, total_page_bytes: int, has_mem_requested: bool = True) -> dict:
    return {
        "class": c.slab_class.id,
        "chunk_size": c.slab_class.chunk_size,
        "perslab": c.slab_class.perslab,
        "items": c.items,
        "used_chunks": c.chunks,
        "pages": c.pages,
        "requested_bytes": c.requested_bytes,
        "used_bytes": c.used_bytes,
        "chunk_waste": c.chunk_waste,
        "page_bytes": c.page_bytes,
        "free_bytes": c.free_bytes,
        "mem_requested": c.mem_requested if has_mem_requested else None,
        "memory_pct": round(100.0 * c.page_bytes / total_page_bytes, 2) if total_page_bytes else 0.0,
    }


def report_record(report: Report, accounting, what_if: Sequence[tuple[str, Report]] = ()) -> dict:
    """The stable JSON contract of ``slabcalc report``.

    ``accounting`` is the input's :class:`slabcalc.inputs.items.Accounting`;
    ``what_if`` pairs option strings with the report under them.
    """
    from slabcalc.records.model import settings_record

    page_bytes = report.total("page_bytes")
    has_mem_requested = report.settings.profile.mem_requested_stat != "none"   # 1.2 has no such stat
    totals = {
        "rows": accounting.rows,
        "placed_rows": report.placed_rows,
        "too_large_rows": report.too_large_rows,
        "rejected": accounting.rejected,
        "items": report.items,
        "too_large": report.too_large,
        "used_chunks": report.total("chunks"),
        "pages": report.total("pages"),
        "requested_bytes": report.total("requested_bytes"),
        "used_bytes": report.total("used_bytes"),
        "chunk_waste": report.total("chunk_waste"),
        "page_bytes": page_bytes,
        "free_bytes": report.total("free_bytes"),
        "mem_requested": report.total("mem_requested") if has_mem_requested else None,
        "memory_pct": 100.0 if page_bytes else 0.0,
        "waste_pct": round(report.waste_pct, 2),
    }
    worst = report.worst_class
    record = {
        "settings": settings_record(report.settings),
        "source": accounting.source,
        "format": accounting.format,
        "classes": [_class_record(c, page_bytes, has_mem_requested) for c in report.classes],
        "totals": totals,
        "capacity": report.capacity.items if report.capacity else None,
        "limiting_class": report.capacity.limiting_class if report.capacity else None,
        "memory_limit_needed_mb": report.memory_limit_needed if report.classes else None,
        "worst_class": worst.slab_class.id if worst else None,
        "approximated_items": report.approximated,
        "rejections": [{"line": r.line, "reason": r.reason, "text": r.text} for r in accounting.first_rejections],
    }
    record["summary"] = _summary(report, accounting, record)
    if what_if:
        record["what_if"] = [_what_if_row("baseline", report, report)] + [
            _what_if_row(text, other, report) for text, other in what_if]
    return record


def group_records(groups: list[Group]) -> list[dict]:
    used = sum(g.used_bytes for g in groups)
    return [{
        "group": g.name,
        "items": g.items,
        "too_large": g.too_large,
        "requested_bytes": g.requested_bytes,
        "used_bytes": g.used_bytes,
        "chunk_waste": g.chunk_waste,
        "waste_pct": round(100.0 * g.chunk_waste / g.used_bytes, 2) if g.used_bytes else 0.0,
        "memory_pct": round(100.0 * g.used_bytes / used, 2) if used else 0.0,
    } for g in groups]


def process_record(memory: ProcessMemory) -> dict:
    """Stable JSON fields of the whole-process figures."""
    return {
        "memory_limit_mb": memory.memory_limit_mb,
        "items": memory.items,
        "slab_bytes": memory.slab_bytes,
        "overshoot_bytes": memory.overshoot,
        "hashpower": memory.hashpower,
        "hash_bytes": memory.hash_bytes,
        "hash_peak_bytes": memory.hash_peak_bytes,
        "overhead_bytes": memory.overhead,
        "process_bytes": memory.total,
        "limit_headroom_bytes": memory.limit_headroom,
    }
