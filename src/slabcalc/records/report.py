"""The JSON of ``slabcalc report`` and its summary lines (it is long because they cover RAM, extstore, process)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from slabcalc.analysis.process import write_buffers_touched
from slabcalc.analysis.report import MIB, ClassUsage, Report
from slabcalc.model.treatments import given_options, options_text

# how a capacity was counted (Capacity.basis): an item file stored row by row, or the items as a mix
CAPACITY_BASIS = {"order": "in the file's order", "mix": "as a proportional mix",
                  "fill": "set in the input's order through simulate's extstore replay"}

if TYPE_CHECKING:      # types only: key groups are read only under --group-by; ProcessMemory is only annotated here
    from slabcalc.analysis.deployment import Deployment
    from slabcalc.analysis.keyspace import Group
    from slabcalc.analysis.process import ProcessMemory


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


def report_record(report: Report, accounting, what_if: Sequence[tuple[str, Report]] = (), ext=None,
                  deployment: Deployment | None = None) -> dict:
    """The stable JSON contract of ``slabcalc report``, built in one pass.

    ``accounting`` is the input's :class:`slabcalc.inputs.items.Accounting`;
    ``what_if`` pairs option strings with the report under them; ``ext`` is the report under extstore
    (:func:`slabcalc.analysis.extstore.extstore_report`): the class rows are then what stays in RAM,
    with the extstore fields; ``deployment`` (:func:`slabcalc.analysis.deployment.deployment`) adds the
    process, the container and the plans of nodes and key groups.
    """
    from slabcalc.records.model import settings_record

    has_mem_requested = report.settings.profile.mem_requested_stat != "none"   # 1.2 has no such stat
    totals = _totals(report, accounting, has_mem_requested)
    classes = [_class_record(c, totals["page_bytes"], has_mem_requested) for c in report.classes]
    if ext is not None:
        classes = _extstore_classes(classes, ext)
        totals = {**totals, **_extstore_totals(totals, ext)}
    capacity, limiting_class, capacity_behind = _capacity(report, ext)
    worst = report.worst_class
    record = {
        "settings": settings_record(report.settings),
        "source": accounting.source,
        "format": accounting.format,
        "classes": classes,
        "totals": totals,
        "capacity": capacity,
        "capacity_behind": capacity_behind,
        "limiting_class": limiting_class,
        "capacity_basis": report.capacity.basis if report.capacity else None,   # "order" or "mix"
        "memory_limit_needed_mb": report.memory_limit_needed if report.classes else None,
        "worst_class": worst.slab_class.id if worst else None,
        "approximated_items": report.approximated,
        "rejections": [{"line": r.line, "reason": r.reason, "text": r.text} for r in accounting.first_rejections],
        "summary": _summary_lines(report, accounting, totals, ext, deployment),
    }
    return {**record, **_sections(report, what_if, ext, deployment)}


def _totals(report: Report, accounting, has_mem_requested: bool) -> dict:
    """The totals over every class in RAM (extstore's are added to them by ``_extstore_totals``)."""
    page_bytes = report.total("page_bytes")
    return {
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


def _capacity(report: Report, ext) -> tuple:
    """(capacity, limiting_class, capacity_behind): under extstore a range's capacity behind its low end
    (extstore_fill.py), with no limiting class."""
    if ext is not None and ext.capacity is not None:
        return ext.capacity.items, None, ext.capacity.fill.low if ext.capacity.fill else None
    if report.capacity:
        return report.capacity.items, report.capacity.limiting_class, None
    return None, None, None


def _summary_lines(report: Report, accounting, totals: dict, ext, deployment: Deployment | None) -> dict:
    """The summary's lines: RAM's, then extstore's and the deployment's where given."""
    summary = _summary(report, accounting, totals)
    if ext is not None:
        summary = _extstore_summary(summary, ext, totals)
    if deployment is not None:
        summary = {**summary, **_deployment_lines(deployment, report.settings.profile.release)}
    return summary


def _sections(report: Report, what_if: Sequence[tuple[str, Report]], ext, deployment: Deployment | None) -> dict:
    """The record's sections that only some reports have: what-if rows, extstore, the deployment's."""
    sections: dict = {}
    if what_if:
        sections["what_if"] = [_what_if_row("baseline", report, report)] + [
            _what_if_row(text, other, report) for text, other in what_if]
    if ext is not None:
        sections["extstore"] = _extstore_record(ext)
    if deployment is not None:
        sections.update(_deployment_record(deployment))
    return sections


def group_records(groups: Sequence[Group]) -> list[dict]:
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
        "runtime_bytes": memory.runtime_bytes,
        "parts": dict(memory.runtime),
        "process_bytes": memory.total,
        "limit_headroom_bytes": memory.limit_headroom,
    }


def container_record(plan) -> dict:
    """``report --container``: the -m to set, and the -m x 1.2 rule's -m, each with its process."""
    return {
        "container_bytes": plan.limit,
        "memory_limit_mb": plan.memory_limit_mb,
        "memcached_args": list(plan.flags),
        "process_bytes": plan.memory.total if plan.memory else None,
        "rule_memory_limit_mb": plan.rule_mb,
        "rule_process_bytes": plan.rule_memory.total if plan.rule_memory else None,
    }


def container_lines(plan, release: str) -> dict:
    """Summary lines of ``report --container``: the -m to set, and where the -m x 1.2 rule is wrong."""
    lines = {}
    if plan.memory is None:
        lines["container"] = f"no -m fits a process in {plan.limit} bytes"
    else:
        m = plan.memory
        lines["container"] = (f"for memcached {release}: {' '.join(plan.flags)} fits {plan.limit} bytes: a full "
                              f"process takes {m.total} "
                              f"({m.slab_bytes} slab pages, {m.hash_bytes} hash table, {m.runtime_bytes} runtime, "
                              f"{m.overhead} overhead)")
    rule = plan.rule_memory
    if rule is not None:
        gap = rule.total - plan.limit
        verdict = (f"{gap} bytes over the limit" if gap > 0 else
                   f"{-gap} bytes under it: -m {plan.memory_limit_mb} is {plan.memory_limit_mb - plan.rule_mb} MiB more"
                   if plan.memory_limit_mb and plan.memory_limit_mb > plan.rule_mb else f"{-gap} bytes under it")
        lines["-m x 1.2 rule"] = f"-m {plan.rule_mb} takes {rule.total} bytes, {verdict}"
    return lines


EXTSTORE_CLASS_FIELDS = ("ram_items", "header_items", "flash_items", "flash_bytes")


def _extstore_classes(rows: list[dict], ext) -> list[dict]:
    """The class rows under extstore: what stays in RAM, each with the extstore fields; classes whose
    items all went to flash get a row of their own."""
    by_class = {row.class_id: row for row in ext.classes}
    known = {row["class"]: row for row in rows}
    for cls, row in by_class.items():
        if cls not in known:
            known[cls] = {"class": cls, "chunk_size": row.chunk_size, "perslab": None, "items": 0, "used_chunks": 0,
                          "pages": 0, "requested_bytes": 0, "used_bytes": 0, "chunk_waste": 0, "page_bytes": 0,
                          "free_bytes": 0, "mem_requested": 0, "memory_pct": 0.0}
    return [{**known[cls], **{name: getattr(by_class[cls], name) if cls in by_class else 0
                              for name in EXTSTORE_CLASS_FIELDS}} for cls in sorted(known)]


def _extstore_totals(totals: dict, ext) -> dict:
    """What RAM and flash hold, beside the report's totals."""
    flash = ext.flash
    return {**{name: sum(getattr(row, name) for row in ext.classes) for name in EXTSTORE_CLASS_FIELDS},
            "ram_bytes": totals["page_bytes"],
            "flash_pages": flash.pages,
            "flash_page_bytes": flash.flash_bytes,
            "wbufs": flash.wbufs,
            "wbuf_waste": flash.wbuf_waste,
            "stats_bytes": ext.stats_bytes}


def _extstore_record(ext) -> dict:
    e, flash, capacity = ext.extstore, ext.flash, ext.capacity
    return {
        "min_class": ext.min_class,
        "ext_item_size": e.item_size,
        "page_size": e.page_size,
        "wbuf_size": e.wbuf_size,
        "page_count": e.page_count,
        "usable_pages": e.usable_pages,
        "flash_pages_needed": ext.flash_pages_needed,
        "ext_path_bytes_needed": ext.flash_pages_needed * e.page_size,
        "flash_fits": ext.flash_fits,
        "wbuf_bytes": e.wbuf_bytes,
        "compact_under": e.compact_under,        # pages: compaction starts with fewer free
        "drop_under": e.drop_under,
        "max_frag": e.max_frag,
        "stats": {"extstore_objects_used": flash.objects, "extstore_bytes_used": flash.bytes_used,
                  "extstore_page_allocs": flash.pages, "extstore_pages_used": flash.pages_used,
                  "extstore_bytes_fragmented": flash.bytes_fragmented, "bytes": ext.stats_bytes},
        "capacity": None if capacity is None else {
            "items": capacity.items, "limited_by": capacity.limited_by,
            "ram_items": capacity.ram_items, "flash_items": capacity.flash_items,
            "replayed": fill_record(capacity.fill)},
        "assumed_key_length": ext.assumed_key_length,
    }


def fill_record(f) -> dict | None:
    """The replayed fill behind the capacity (analysis/extstore_fill.py), None when it was not run."""
    return None if f is None else {"sets_per_second": f.rate, "in_order": f.in_order, "loaded": f.loaded, "of": f.total, "ran_out": f.evicted,
            "curr_items": f.items, "extstore_objects_written": f.written, "passing_evictions": f.passing,
            "first_eviction_items": f.first, "total_pages": {str(cls): pages for cls, pages in f.pages},
            "behind": fill_record(f.behind)}        # the thread fallen behind once: None when it ends the same


def _capacity_line(ext) -> str:
    """How many items the node holds: the replayed fill's figure, or the static one beside it."""
    c, e = ext.capacity, ext.extstore
    head = f"-m {ext.settings.maxbytes >> 20} with {e.usable_pages} flash pages"
    f = c.fill
    if f is None:
        return (f"{head} holds {c.items} items of this mix ({c.limited_by} runs out first: RAM alone {c.ram_items}, "
                f"flash alone {c.flash_items}; static: every flushable item on flash, headers fill -m); memcached "
                f"also keeps the newest items of flushed classes in RAM until a class is within "
                f"{e.write_margin_pages} pages of free chunks")
    pages = dict(f.pages)
    header, most = (min(pages), max(pages.values())) if pages else (None, 0)
    order = "the file's rows set in order" if f.in_order else "each distinct item set its count in a row"
    b = f.behind or f     # the write thread fallen behind once as the pool ran dry (analysis/extstore_fill.py)
    kept, gone = dict(b.pages).get(header, 0), "RAM" if f.low == b.first else b.evicted or "RAM"
    behind = ("" if f.low == f.items else f", {f.low} if it falls behind as the page pool runs dry (when {gone} "
              f"first evicts, class {header} {f'on {kept} page' + 's' * (kept > 1) if kept else 'with no page yet'})")
    return (f"{head} {_held(f)}, if the write thread keeps pace{behind}: {order} at {f.rate} sets a second through "
            f"simulate's extstore replay; {f.written} written to flash; class {header} had {pages.get(header, 0)} "
            f"pages, other classes up to {most} (static, every flushable item on flash: RAM alone {c.ram_items}, "
            f"flash alone {c.flash_items})")


def _held(f) -> str:
    passing = f"{f.passing} evicted only as passing misses the write thread recovers from" if f.passing else ""
    held = f"all {f.items}" if f.items == f.loaded else f"{f.items} of {f.loaded}"
    return (f"holds {f.items} items when {f.evicted} starts evicting (after {f.loaded} sets; {f.passing} passing "
            f"misses before)" if f.evicted and f.passing else f"holds {f.items} items when {f.evicted} starts "
            f"evicting (after {f.loaded} sets)" if f.evicted else f"holds {held} items, {passing or 'none evicted'}")


def _extstore_summary(lines: dict, ext, t: dict) -> dict:
    from slabcalc.model.units import format_size

    e, flash = ext.extstore, ext.flash
    out = {k: v for k, v in lines.items() if k not in ("capacity", "-m needed")}
    if not e.usable_pages:
        out["extstore"] = f"nothing goes to flash: {no_flash_page(e)}; all {t['ram_items']} items stay in RAM"
    else:
        out["extstore"] = (f"classes {ext.min_class} and up (ext_item_size {e.item_size}) go to flash: "
                           f"{t['flash_items']} items; {t['header_items']} header items of {e.header} value "
                           f"bytes stay in RAM, {t['ram_items']} items stay whole")
    if ext.capacity is None:
        out["RAM"] = f"-m {ext.ram.memory_limit_needed if ext.ram.classes else 0} holds what stays in RAM"
    out["flash"] = (f"{flash.bytes_used} item bytes in {flash.wbufs} {format_size(e.wbuf_size)} write-buffer flushes "
                    f"({flash.wbuf_waste} bytes lost at buffer ends) on {flash.pages} pages of "
                    f"{format_size(e.page_size)}: ext_path needs {ext.flash_pages_needed * e.page_size} bytes "
                    f"({ext.flash_pages_needed} pages"
                    + (", page 0 never written" if e.reserved_pages else "") + ")")
    if not ext.flash_fits:
        out["flash"] += (f"; the file has {e.usable_pages} usable pages: extstore evicts its oldest pages "
                         f"(extstore_page_evictions)")
    n = write_buffers_touched(e, flash.buckets)
    out["outside -m"] = (f"{n * e.wbuf_size} bytes of extstore write buffers: {n} of the {e.wbuf_count} calloc'd at "
                         f"start-up ({e.wbuf_bytes} bytes), one per page bucket written to (process memory's figure)")
    out["compaction"] = (f"starts when fewer than {e.compact_under} of the {e.page_count} pages are free "
                         f"(ext_compact_under) and rewrites pages whose live bytes fell below ext_max_frag "
                         f"({e.max_frag:g}) of a page, scaled by how full the flash is; items never "
                         f"overwritten or deleted leave no such page")
    out["stats"] = (f"stats bytes reads {ext.stats_bytes} (flushed items at their whole size); "
                    f"mem_requested counts a header at its own size")
    if ext.capacity is not None:
        out["capacity"] = _capacity_line(ext)
    if ext.assumed_key_length is not None:
        out["key length"] = (f"items known by size only: headers assume a {ext.assumed_key_length}-byte key "
                             f"(--key sets it)")
    note = ext.settings.profile.extstore.note
    if note:
        out["release note"] = note
    return out


def no_flash_page(e) -> str:
    """Why a store with no usable page is never written to (:func:`slabcalc.model.extstore.why_in_ram`)."""
    pages = e.page_count
    return (f"ext_path holds {pages} page{'s' if pages != 1 else ''} of {e.page_size >> 20} MiB "
            f"(ext_page_size) and memcached writes to none"
            + (": page 0 is never on extstore's free list" if e.reserved_pages else ""))


def _what_if_row(text: str, other: Report, base: Report) -> dict:
    change = other.total("page_bytes") - base.total("page_bytes")
    base_bytes = base.total("page_bytes")
    return {
        "options": text,
        "page_bytes": other.total("page_bytes"),
        "waste_pct": round(other.waste_pct, 2),
        "capacity": other.capacity.items if other.capacity else None,
        "items": other.items,
        "too_large": other.too_large,
        "page_bytes_change": change,
        "page_bytes_change_pct": round(100.0 * change / base_bytes, 2) if base_bytes else 0.0,
    }


def _summary(report: Report, accounting, t: dict) -> dict:
    """Human lines of the summary (field -> text)."""
    lines = {
        "input": f"{accounting.source} ({accounting.format})",
        "rows": f"{t['rows']} read = {t['placed_rows']} placed + {t['too_large_rows']} too large "
                f"+ {t['rejected']} rejected",
        "items": f"{t['items']} placed, {t['too_large']} too large (over -I {report.settings.item_size_max})",
        "memory": f"{t['page_bytes']} bytes in {t['pages']} pages ({t['page_bytes'] / MIB:.2f} MiB)",
        "waste": f"{t['waste_pct']:.2f}% of page bytes hold no item data "
                 f"({t['chunk_waste']} chunk waste + {t['free_bytes']} free)",
    }
    worst = report.worst_class
    if worst:
        lines["worst class"] = (f"class {worst.slab_class.id} (chunk {worst.slab_class.chunk_size}): "
                                f"{worst.page_bytes - worst.requested_bytes} bytes not holding item data")
    if report.capacity:
        cap = report.capacity
        lines["capacity"] = (f"-m {cap.memory_limit // MIB} holds {cap.items} items "
                             f"{CAPACITY_BASIS[cap.basis]}"
                             + (f"; class {cap.limiting_class} runs out first" if cap.limiting_class else ""))
    elif report.classes:
        lines["-m needed"] = f"-m {report.memory_limit_needed} holds them all"
    if report.approximated:
        lines["note"] = (f"{report.approximated} chunked items were given only by total size; "
                         f"their chunks assume a key of the --key length (default 16)")
    unmodelled = options_text(given_options(report.settings, "layout"), modelled=False)
    if unmodelled:          # the modelled words show in the answer itself (JSON: settings.options, all)
        lines["options"] = unmodelled
    for r in accounting.first_rejections:
        lines[f"rejected line {r.line}"] = f"{r.reason}: {r.text}"
    return lines


def _deployment_lines(plan: Deployment, release: str) -> dict:
    """Whole-process lines of the summary."""
    m = plan.process
    lines = {}
    if m.overshoot:
        lines["past -m"] = f"{m.overshoot} bytes of slab pages (a class's first page is granted past -m)"
    lines["hash table"] = f"{m.hash_bytes} bytes (2^{m.hashpower} buckets for {m.items} items)"
    if m.overhead:
        lines["overhead"] = f"{m.overhead} bytes ({plan.overhead})"
    runtime = "".join(f" + {size} {name.replace('_', ' ')}" for name, size in m.runtime)
    lines["process memory"] = (f"{m.total} bytes ({m.total / MIB:.2f} MiB) = {m.slab_bytes} slab pages + "
                               f"{m.hash_bytes} hash table{runtime} + {m.overhead} overhead")
    if plan.container is not None:
        lines.update(container_lines(plan.container, release))
    if m.limit_bytes:
        lines["headroom"] = (f"{m.limit_headroom} bytes ({100.0 * m.limit_headroom / m.limit_bytes:.2f}%) "
                             f"of -m {m.memory_limit_mb} free")
    return lines


def _deployment_record(plan: Deployment) -> dict:
    """The process, and what was planned: a container, nodes, key groups."""
    from slabcalc.records.plan import plan_record

    record = {"process": process_record(plan.process)}
    if plan.container is not None:
        record["container"] = container_record(plan.container)
    if plan.node_plan is not None:
        record["nodes"] = plan_record(plan.node_plan)
    if plan.node_ram is not None:
        needed = plan.needed
        record["node_ram"] = {"node_ram": plan.node_ram, "headroom_pct": float(plan.headroom * 100),
                              "usable_bytes": plan.usable, "needed": plan_record(needed) if needed else None}
    if plan.groups is not None:
        record["groups"] = group_records(plan.groups)
    return record
