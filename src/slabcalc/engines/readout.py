"""The engine's state read out at an instant: memcached's counters per class and in total, and the finding.

Read once per replay (and per snapshot), never on the request path: plain Python beside the compiled
engine (setup.py), which calls :func:`simulation` from ``Engine.results``.
"""

from __future__ import annotations

from slabcalc.engines.findings import finding
from slabcalc.engines.lru import COLD, HOT, WARM
from slabcalc.engines.results import ClassResult, Model, Simulation, TimelineRow, Totals


def expired_now(engine) -> tuple[list[int], list[int]]:
    """Per class: linked items past their exptime at the current time, and their chunk bytes."""
    n = len(engine.size)
    items, chunk_bytes = [0] * n, [0] * n
    now, size = engine.now, engine.size
    for seg in engine.lrus.q:
        for cls, lru in enumerate(seg):
            for item in lru.values():
                exptime = item.exptime
                if exptime and exptime <= now:
                    items[cls] += 1
                    if item.chunks is None:
                        chunk_bytes[cls] += size[cls]
                    else:
                        for c, _ in item.chunks:
                            chunk_bytes[c] += size[c]
    return items, chunk_bytes


def simulation(engine, model: Model | None, timeline=()) -> Simulation:
    """The engine's state now: per class and in total, with memcached's names, and the finding."""
    expired_items, expired_bytes = expired_now(engine)
    rows = []
    lrus, slabs = engine.lrus, engine.slabs
    counts = lrus.counts
    for c in engine.classes:
        cls = c.id
        pages = len(slabs.pages[cls])
        if not pages:
            continue
        free = len(slabs.free[cls])
        rows.append(ClassResult(
            c, slabs.page_len[cls], pages, lrus.count(cls), slabs.chunks(cls) - free, free,
            counts[cls].evicted, counts[cls].evicted_nonzero, counts[cls].evicted_unfetched, counts[cls].reclaimed,
            counts[cls].expired_unfetched, counts[cls].outofmemory, counts[cls].hits, counts[cls].misses,
            expired_items[cls], expired_bytes[cls], engine.moved_in[cls], engine.moved_out[cls],
            counts[cls].crawler_reclaimed, len(lrus.q[HOT][cls]), len(lrus.q[WARM][cls]),
            len(lrus.q[COLD][cls])))
    k = engine.counts
    outofmemory = sum(lrus.column("outofmemory"))
    totals = Totals(
        ops=k["ops"], sets=k["sets"], gets=k["gets"], hits=k["hits"], misses=k["misses"],
        deletes=k["deletes"], delete_hits=k["delete_hits"], touches=k["touches"], touch_hits=k["touch_hits"],
        stored=k["sets"] - k["too_large"] - outofmemory - k["chunk_failures"],
        too_large=k["too_large"], chunk_failures=k["chunk_failures"],
        outofmemory=outofmemory, evicted=sum(lrus.column("evicted")), reclaimed=sum(lrus.column("reclaimed")),
        get_expired=k["get_expired"], curr_items=engine.curr_items(),
        total_malloced=slabs.malloced, pages=sum(map(len, slabs.pages)), pages_moved=k["slabs_moved"],
        global_page_pool=len(slabs.pool), crawler_reclaimed=sum(lrus.column("crawler_reclaimed")),
        slab_reassign_rescues=k["rescues"], slab_reassign_evictions_nomem=k["evictions_nomem"],
        slab_reassign_inline_reclaim=k["inline_reclaim"], slab_reassign_chunk_rescues=k["chunk_rescues"],
        total_items=k["total_items"])
    return Simulation(engine.settings, model, tuple(rows), totals, finding(rows, engine.peak, totals),
                      tuple(timeline), engine.time,
                      extstore=engine.storage.counters() if engine.storage is not None else None)


def timeline_rows(engine, timeline: list, due: float, every: float, t: float, last_evicted: list[int]) -> float:
    """Rows for the boundary ``due``; a gap of several intervals gets rows at its first and last.
    The next boundary.

    A row is the state just before its boundary with the background threads run up to it, as a
    snapshot (``Engine.snapshot_at``) and a real server's ``stats`` at that instant see it: before,
    a row showed the state after the last operation before the boundary, without the second of
    maintainer and crawler work since, and items that had expired and been reclaimed on the real
    server were still counted (13 % of curr_items at 1 500 sets/s of 5 s items, 1.6.18 -m 64)."""
    engine.clock(due - 1e-6)
    timeline_row(engine, timeline, due, last_evicted)
    if due + every <= t:
        due += ((t - due) // every) * every
        engine.clock(due - 1e-6)
        timeline_row(engine, timeline, due, last_evicted)
    return due + every


def timeline_row(engine, timeline: list, when: float, last_evicted: list[int]) -> None:
    """A timeline row per class that holds a page, at ``when``: its pages, items and evictions."""
    pages, lrus = engine.slabs.pages, engine.lrus
    evicted = lrus.column("evicted")
    for c in engine.classes:
        cls = c.id
        if pages[cls]:
            total = evicted[cls]
            timeline.append(TimelineRow(when, cls, len(pages[cls]), lrus.count(cls), total - last_evicted[cls], total))
            last_evicted[cls] = total
