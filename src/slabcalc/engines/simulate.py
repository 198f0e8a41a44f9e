"""Replay a workload under ``-m``: pages, LRUs, expiry, evictions, page moves, calcification.

The library face of ``slabcalc simulate`` and its JSON records; the machinery
is :mod:`slabcalc.engines` (the slab allocator and page pool, the LRUs, the
LRU maintainer, the crawler, the automovers and the page mover, one op loop).

What runs beside the requests is the release's (its profile's ``background``
section) changed by the server's ``-o`` words, as memcached reads them: 1.6
runs the segmented HOT/WARM/COLD LRU, its maintainer thread, the LRU crawler
and ``slab_automove=1``; ``-o no_modern`` turns them all off; 1.4 runs none
of them.  With nothing in the background (the compat LRU, no page moves) the
replay is exact; with the threads it is as close as their timing allows, and
the paced runs of a real 1.6.18 (``tests/test_paced.py``) state and test the
tolerance.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

from slabcalc.engines.background import Background, SimulationError, background_for, check_replayable, with_lru
from slabcalc.engines.engine import DELETE, GET, OP_NAMES, SET, TOUCH, Engine
from slabcalc.engines.findings import finding_lines, finding_record
from slabcalc.engines.results import ClassResult, Finding, Model, Simulation, TimelineRow, Totals
from slabcalc.model.settings import Settings

__all__ = ["SET", "GET", "DELETE", "TOUCH", "OP_NAMES", "SimulationError", "Model", "ClassResult", "Totals",
           "Finding", "TimelineRow", "Simulation", "Background", "background_for", "lru_mode", "describe_model",
           "simulate", "finding_lines", "simulation_record", "memory_records"]


def lru_mode(settings: Settings, suboptions: Sequence[str] | None = None) -> str:
    """``compat`` or ``segmented``: the LRU a server of these settings and ``-o`` words runs."""
    return background_for(settings, suboptions).lru


def _limit(settings: Settings) -> str:
    return f"-m {settings.maxbytes >> 20}" if settings.maxbytes else "-m 0 (no limit)"


def describe_model(settings: Settings, background: Background) -> Model:
    """The model line printed with every simulation: what ran, and how exact it is."""
    check_replayable(settings, background)
    p, bg = settings.profile, background
    rules = bg.rules
    lru = ("segmented HOT/WARM/COLD LRU" if bg.lru == "segmented" else "compat LRU (one per class)")
    note = f" ({rules.note})" if rules.note else ""
    fields = dict(automove=bg.slab_automove if bg.moves_pages else 0, maintainer=bg.maintainer,
                  crawler=bg.crawls, automove_window=bg.slab_automove_window if bg.moves_pages else None,
                  automove_ratio=bg.slab_automove_ratio if bg.moves_pages else None)
    if not bg.threads:
        if bg.lru == "compat":
            text = (f"memcached {p.release}, compat LRU (one per class), no page moves, {_limit(settings)}: "
                    f"a replay of the synchronous allocation path, exact")
            return Model(p.release, bg.lru, True, text, **fields)
        text = (f"memcached {p.release}, {lru} with no maintainer thread, no page moves, {_limit(settings)}: "
                f"a MODEL{note}")
        return Model(p.release, bg.lru, False, text, **fields)
    exactness = ("rules read from the source, timing as the paced runs allow: not exact"
                 if rules.segmented_exact or bg.lru == "compat" else "a MODEL of this release")
    text = (f"memcached {p.release}, {lru}, {_limit(settings)}; beside the requests, on the workload's clock "
            f"from the server's start: {bg.describe()}{note}; {exactness}")
    return Model(p.release, bg.lru, False, text, **fields)


def simulate(settings: Settings, ops: Iterable[tuple], *, suboptions: Sequence[str] | None = None,
             lru: str | None = None,
             every: float | None = None, boot: float = 0.0, at: Iterable[float] = ()) -> Simulation:
    """Replay ``ops`` (``(time, op, key, key_size, value_size, ttl, flags)``) under ``settings``.

    ``suboptions`` are the server's ``-o`` words in order (by default those
    ``configure`` read into ``settings``); ``lru``
    forces an LRU (``compat`` also stops the maintainer and what it runs).
    ``every`` adds a timeline row per class every that many seconds of
    workload time; ``boot`` is how long the server had run at the workload's
    time 0 (its threads start then); ``at`` lists times at which to keep the
    whole state (the result's ``snapshots``).
    """
    background = background_for(settings, suboptions)
    if lru is not None and lru != background.lru:
        background = with_lru(background, lru)
    model = describe_model(settings, background)
    engine = Engine(settings, background, boot=boot)
    timeline = engine.run(ops, every=every, at=at)
    return replace(engine.results(model, timeline), snapshots=tuple(engine.snapshots))


# -- records (the stable JSON contract) --------------------------------------------

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
            "slab_automove_window": model.automove_window, "slab_automove_ratio": model.automove_ratio}


def simulation_record(sim: Simulation, accounting=None) -> dict:
    """The stable JSON contract of ``slabcalc simulate``."""
    from slabcalc.model.settings import settings_record

    record = {
        "settings": settings_record(sim.settings),
        "model": model_record(sim.model),
        "classes": [class_record(r) for r in sim.classes],
        "totals": totals_record(sim.totals),
        "calcification": finding_record(sim.finding),
        "end_time": _clean(sim.end_time),
    }
    if accounting is not None:
        record["input"] = {"source": accounting.source, "format": accounting.format, "rows": accounting.rows,
                           "rejected": accounting.rejected,
                           "rejections": [{"line": r.line, "reason": r.reason, "text": r.text}
                                          for r in accounting.first_rejections]}
    if sim.timeline:
        record["timeline"] = [timeline_record(r) for r in sim.timeline]
    return record
