"""The JSON of ``slabcalc simulate`` and its summary lines (the calcification finding's words)."""

from __future__ import annotations

from slabcalc.engines.findings import _number, why
from slabcalc.engines.results import ClassResult, Finding, Model, Simulation, TimelineRow, Totals
from slabcalc.records.model import option_records

CLASS_FIELDS = ("class", "chunk_size", "pages", "items", "evicted", "reclaimed", "crawler_reclaimed", "outofmemory",
                "hits", "misses", "used_chunks", "free_chunks", "expired_items", "free_bytes", "expired_bytes",
                "evicted_nonzero", "evicted_unfetched", "expired_unfetched", "pages_moved_in", "pages_moved_out",
                "number_hot", "number_warm", "number_cold")


def class_record(r: ClassResult) -> dict:
    c = r.slab_class
    return {
        "class": c.id,
        "chunk_size": c.chunk_size,
        "pages": r.pages,
        "items": r.items,
        "evicted": r.evicted,
        "reclaimed": r.reclaimed,
        "crawler_reclaimed": r.crawler_reclaimed,
        "outofmemory": r.outofmemory,
        "hits": r.hits,
        "misses": r.misses,
        "used_chunks": r.used_chunks,
        "free_chunks": r.free_chunks,
        "expired_items": r.expired_items,
        "free_bytes": r.free_chunks * c.chunk_size,
        "expired_bytes": r.expired_bytes,
        "evicted_nonzero": r.evicted_nonzero,
        "evicted_unfetched": r.evicted_unfetched,
        "expired_unfetched": r.expired_unfetched,
        "pages_moved_in": r.moved_in,
        "pages_moved_out": r.moved_out,
        "number_hot": r.number_hot,
        "number_warm": r.number_warm,
        "number_cold": r.number_cold,
    }


def totals_record(t: Totals) -> dict:
    return {
        "ops": t.ops, "sets": t.sets, "gets": t.gets, "hits": t.hits, "misses": t.misses,
        "deletes": t.deletes, "delete_hits": t.delete_hits, "touches": t.touches, "touch_hits": t.touch_hits,
        "stored": t.stored, "too_large": t.too_large, "chunk_failures": t.chunk_failures,
        "outofmemory": t.outofmemory, "evicted": t.evicted, "reclaimed": t.reclaimed,
        "crawler_reclaimed": t.crawler_reclaimed, "get_expired": t.get_expired, "curr_items": t.curr_items,
        "total_items": t.total_items, "total_malloced": t.total_malloced, "pages": t.pages,
        "slabs_moved": t.pages_moved, "slab_global_page_pool": t.global_page_pool,
        "slab_reassign_rescues": t.slab_reassign_rescues,
        "slab_reassign_evictions_nomem": t.slab_reassign_evictions_nomem,
        "slab_reassign_inline_reclaim": t.slab_reassign_inline_reclaim,
        "slab_reassign_chunk_rescues": t.slab_reassign_chunk_rescues,
    }


def _clean(value: float | None):
    """A whole number of seconds as an int (``3``, not ``3.0``)."""
    return int(value) if value is not None and float(value).is_integer() else value


def memory_records(sim: Simulation) -> list[dict]:
    """Each class's page bytes at the end, split into used chunks and free page bytes (the unused
    chunks and the page tails); the item bytes inside chunks are not tracked (``None``)."""
    rows = [{"class": r.slab_class.id, "requested_bytes": None, "chunk_waste": None,
             "used_bytes": r.used_chunks * r.slab_class.chunk_size,
             "free_bytes": r.pages * r.page_length - r.used_chunks * r.slab_class.chunk_size}
            for r in sim.classes if r.pages]
    if sim.totals.global_page_pool:
        rows.append({"class": 0, "requested_bytes": None, "chunk_waste": None, "used_bytes": 0,
                     "free_bytes": sim.totals.global_page_pool * sim.settings.slab_page_size})
    return rows


def timeline_record(row: TimelineRow) -> dict:
    return {"time": _clean(row.time), "class": row.class_id, "pages": row.pages, "items": row.items,
            "evicted": row.evicted, "evicted_total": row.evicted_total}


def model_record(model: Model) -> dict:
    return {"release": model.release, "lru": model.lru, "exact": model.exact, "text": model.text,
            "slab_automove": model.automove, "lru_maintainer": model.maintainer, "lru_crawler": model.crawler,
            "slab_automove_window": model.automove_window, "slab_automove_ratio": model.automove_ratio,
            "options": option_records(model.options), "build": model.build}


def simulation_record(sim: Simulation, accounting=None) -> dict:
    """The stable JSON contract of ``slabcalc simulate``."""
    from slabcalc.records.model import settings_record

    record = {
        "settings": settings_record(sim.settings, "simulate"),
        "model": model_record(sim.model),
        "classes": [class_record(r) for r in sim.classes],
        "totals": totals_record(sim.totals),
        "calcification": finding_record(sim.finding, sim.settings, sim.model),
        "end_time": _clean(sim.end_time),
    }
    if accounting is not None:
        record["input"] = {"source": accounting.source, "format": accounting.format, "rows": accounting.rows,
                           "rejected": accounting.rejected,
                           "rejections": [{"line": r.line, "reason": r.reason, "text": r.text}
                                          for r in accounting.first_rejections]}
    if sim.sample is not None:
        record["sample"] = sample_record(sim.sample)
    if sim.timeline:
        record["timeline"] = [timeline_record(r) for r in sim.timeline]
    return record


def sample_record(s) -> dict:
    """How a sampled replay was made (``simulate --sample``) and the error of its scaled counts."""
    return {"rate": s.rate, "ops": s.ops, "sampled_ops": s.sampled_ops, "scale": s.scale,
            "hit_ratio": s.hit_ratio, "hit_ratio_error": s.hit_ratio_error, "evicted_error": s.evicted_error,
            "coarse_classes": list(s.coarse_classes)}


def sample_lines(s) -> list[tuple[str, str]]:
    """A sampled replay's summary lines: what was replayed, and the error of the scaled figures."""
    from slabcalc.engines.sample import COARSE_ITEMS

    ratio = ("no gets" if s.hit_ratio is None else
             f"hit ratio {s.hit_ratio:.4f} +/- {s.hit_ratio_error:.4f}")
    coarse = ", ".join(map(str, s.coarse_classes))
    return [
        ("sample", f"{s.sampled_ops} of {s.ops} operations replayed (keys hashing under {s.rate:.4g}), each "
                   f"page holding {s.rate:.4g} of its chunks: pages are the node's, every other count is the "
                   f"sample's times {s.scale:.4g}"),
        ("sampling error", f"chance (95%): {ratio}, evicted +/- {s.evicted_error}"
                           + (f"; classes {coarse} hold fewer than {COARSE_ITEMS} sampled items (their figures "
                              f"are mostly chance)" if coarse else "")),
    ]


def finding_record(f: Finding | None, settings, model: Model) -> dict | None:
    if f is None:
        return None
    return {
        "evicting_classes": list(f.evicting), "evicted": f.evicted, "free_bytes": f.free_bytes,
        "expired_bytes": f.expired_bytes, "idle_bytes": f.idle_bytes, "holding_classes": list(f.holders),
        "peak_free_bytes": f.peak_free_bytes, "peak_time": f.peak_time, "peak_class": f.peak_class,
        "pages_moved": f.pages_moved, "global_page_pool": f.pool_pages, "action": finding_action(settings, model),
    }


def finding_action(settings, model: Model) -> str:
    """What to change after a calcification finding: with no page moves, the flag that turns the
    automover on (checked by the release's own option rules, as memcached reads them); with page moves,
    the automover already did what its rules allow, and the limit is ``-m``."""
    from slabcalc.analysis.automover import AUTOMOVE_NOW, TURN_ON, TURN_ON_REASSIGN
    from slabcalc.model.settings import Refused, configure

    release = settings.profile.release
    if model.automove:
        return ("more -m: the automover already moves pages as its rules allow; simulate with a list of -m "
                "(-m 16,32,64) shows the hits each buys")
    flag = TURN_ON if settings.slab_reassign else TURN_ON_REASSIGN
    try:
        configure(settings.profile, settings.as_argv() + flag.split())
    except Refused:
        return f"memcached {release} cannot move pages: more -m, or classes that fit the items (optimize)"
    now = f", or {AUTOMOVE_NOW} on a running node" if settings.slab_reassign else ""
    return f"for memcached {release}: {flag} (at the next start){now}"


def finding_lines(f: Finding | None, model: Model, pages_moved: int = 0,
                  settings=None) -> list[tuple[str, str]]:
    """The calcification finding as (field, text) lines for a report (with ``settings``, its action)."""
    if f is None:
        return [("calcification", "none: no class evicted while another held free chunks or expired items")]
    plural = "es" if len(f.evicting) > 1 else ""
    holders = ", ".join(map(str, f.holders[:5])) + (" ..." if len(f.holders) > 5 else "")
    lines = [("calcification",
              f"class{plural} {', '.join(map(str, f.evicting))} evicted {f.evicted} items while "
              + (f"class{'es' if len(f.holders) > 1 else ''} {holders}" if f.holders else "other classes")
              + f" held {f.idle_bytes} bytes ({f.idle_bytes / (1 << 20):.2f} MiB) at the end: "
              f"{f.free_bytes} in free chunks, {f.expired_bytes} in expired items")]
    if f.peak_free_bytes:
        lines.append(("calcification peak", f"class {f.peak_class} evicted at t={_number(f.peak_time)} while "
                                             f"other classes had {f.peak_free_bytes} bytes in free chunks"))
    lines.append(("why", why(model, pages_moved)))
    if settings is not None:
        lines.append(("action", finding_action(settings, model)))
    return lines
