"""The JSON of ``slabcalc stats``: classes (the global page pool as class 0), totals, nodes, findings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from slabcalc.analysis.diagnosis import Interval, now_findings
from slabcalc.analysis.stats import NodeStats, calcification, diagnosis, findings

if TYPE_CHECKING:      # types only: samples are read only under --read-items
    from slabcalc.analysis.sampled import SampledItems

CLASS_FIELDS = ("node", "class", "chunk_size", "perslab", "pages", "page_bytes", "used_chunks", "used_bytes",
                "requested_bytes", "chunk_waste", "free_chunks", "free_bytes", "items", "evicted", "outofmemory",
                "memory_pct", "evicted_pct")


# a node's totals under memcached's names (``stats``, ``stats slabs``), each once: summed over the classes'
# figures (named as stats slabs / stats items name them per class), or the server's own total when a class
# lacks the figure.  The per-class figure each sums, by its total's name:
TOTAL_OF = {"pages": "pages", "total_malloced": "page_bytes", "used_chunks": "used_chunks",
            "used_bytes": "used_bytes", "bytes": "requested_bytes", "chunk_waste": "chunk_waste",
            "free_chunks": "free_chunks", "free_bytes": "free_bytes", "curr_items": "items",
            "evictions": "evicted", "outofmemory": "outofmemory"}
TOTAL_FIELDS = tuple(TOTAL_OF)


def class_records(node: NodeStats) -> list[dict]:
    """One record per class; then, when pages sit in it, the global page pool as class 0
    (memcached's SLAB_GLOBAL_PAGE_POOL): pages that hold nothing, taken by the next class to grow."""
    pool_bytes = node.pool_bytes
    page_bytes = (node.total("page_bytes") or 0) + pool_bytes
    evicted = node.total("evicted")
    records = []
    for c in node.classes:
        records.append({
            "node": node.node, "class": c.id, "chunk_size": c.chunk_size, "perslab": c.perslab,
            "pages": c.pages, "page_bytes": c.page_bytes, "used_chunks": c.used_chunks,
            "used_bytes": c.used_bytes, "requested_bytes": c.requested_bytes, "chunk_waste": c.chunk_waste,
            "free_chunks": c.free_chunks, "free_bytes": c.free_bytes, "items": c.items,
            "evicted": c.evicted, "outofmemory": c.outofmemory,
            "memory_pct": round(100.0 * c.page_bytes / page_bytes, 2) if page_bytes else 0.0,
            "evicted_pct": (round(100.0 * c.evicted / evicted, 2) if evicted else 0.0)
            if c.evicted is not None else None,
        })
    if pool_bytes:
        records.append({
            "node": node.node, "class": 0, "chunk_size": None, "perslab": None, "pages": node.pool_pages,
            "page_bytes": pool_bytes, "used_chunks": 0, "used_bytes": 0, "requested_bytes": 0,
            "chunk_waste": 0, "free_chunks": None, "free_bytes": pool_bytes, "items": 0, "evicted": None,
            "outofmemory": None, "memory_pct": round(100.0 * pool_bytes / page_bytes, 2), "evicted_pct": None,
        })
    return records


def node_totals(node: NodeStats) -> dict:
    """The node's totals (:data:`TOTAL_OF`); pages, their bytes and free bytes include the global page pool's
    pages.  memcached's own ``bytes``, ``curr_items``, ``evictions`` and ``total_malloced`` are the same
    figures (tests/analysis/test_stats.py holds them equal on real servers' captures): they fill in a total that
    the classes do not give (no ``stats items`` per class)."""
    totals = {name: node.total(per_class) for name, per_class in TOTAL_OF.items()}
    pool = node.pool_pages
    if pool:
        for name, more in (("pages", pool), ("total_malloced", node.pool_bytes), ("free_bytes", node.pool_bytes)):
            if totals[name] is not None:
                totals[name] += more
    given = {**node.dump.general, "total_malloced": node.dump.slab_totals.get("total_malloced", "")}
    for name in ("bytes", "curr_items", "evictions", "total_malloced"):
        if totals[name] is None and given.get(name, "").isdigit():
            totals[name] = int(given[name])
    totals["slab_global_page_pool"] = pool
    limit = given.get("limit_maxbytes", "")
    totals["limit_maxbytes"] = int(limit) if limit.isdigit() else None
    return totals


def gate_figures(nodes: Sequence[NodeStats]) -> tuple[int | None, int, int, str]:
    """The gate's figures of ``stats`` (``--fail-over-waste``, ``--fail-over-memory``): the pool's chunk and page
    waste (page bytes less requested bytes; None when a node does not say its requested bytes), its page
    bytes, and the largest node's memory (slab pages plus hash table, ``hash_bytes``), with what that is."""
    pages = requested = 0
    memory = []
    for node in nodes:
        totals = node_totals(node)
        pages += totals["total_malloced"] or 0
        requested = None if requested is None or totals["bytes"] is None else requested + totals["bytes"]
        hash_bytes = node.dump.general.get("hash_bytes", "")
        memory.append((totals["total_malloced"] or 0) + (int(hash_bytes) if hash_bytes.isdigit() else 0))
    return (None if requested is None else pages - requested, pages, max(memory),
            "node memory (slab pages + hash table)")


def total_row(totals: dict, columns: Sequence[str]) -> dict:
    """The totals as a row of the class table (``columns`` named per class, as stats slabs names them)."""
    by_class = {per_class: name for name, per_class in TOTAL_OF.items()}
    return {"class": "total", **{c: totals.get(by_class.get(c, c)) for c in columns if c != "class"},
            "memory_pct": 100.0 if totals["total_malloced"] else 0.0}


def pool_totals(totals: Sequence[dict]) -> dict:
    """Sums over nodes; a field unknown on any node is unknown for the pool."""
    if not totals:
        return {}
    return {name: None if any(t[name] is None for t in totals) else sum(t[name] for t in totals)
            for name in totals[0]}


def node_record(node: NodeStats) -> dict:
    from slabcalc.records.model import settings_record

    return {
        "node": node.node,
        "source": node.dump.source,
        "version": node.dump.release,
        "settings": settings_record(node.settings) if node.settings else None,
        "totals": node_totals(node),
        "drift": None if node.drift is None else [
            {"class": d.class_id, "chunk_size": d.chunk_size, "perslab": d.perslab,
             "model_chunk_size": d.model_chunk_size, "model_perslab": d.model_perslab} for d in node.drift],
        "calcification": calcification(node),
        "diagnosis": _diagnosis(node),
        "notes": list(node.notes),
        "error": None,
    }


def _diagnosis(node: NodeStats) -> dict | None:
    found = diagnosis(node)
    return None if found is None else found.record()


def stats_record(nodes: Sequence[NodeStats], failed: Sequence[tuple[str, str]] = (),
                 spans: Mapping[str, Interval] | None = None, samples: Sequence[SampledItems] = ()) -> dict:
    """The stable JSON contract of ``slabcalc stats``: ``classes``, ``totals``, ``nodes``, ``findings``.

    ``failed`` pairs nodes that could not be read with their one-line error; ``spans`` are the
    intervals of the nodes read twice (each node's ``interval``; see :func:`findings`); ``samples``
    the items of ``--read-items`` (each node's ``sample``).
    """
    spans = spans or {}
    intervals = {name: interval_record(span) for name, span in spans.items()}   # each made once
    sampled = {s.node: s for s in samples}
    records = [{**node_record(n), "interval": intervals.get(n.node),
                **({"sample": sample_record(sampled[n.node])} if n.node in sampled else {})} for n in nodes]
    records += [{"node": name, "error": error} for name, error in failed]
    now = [(f"{name}: " if len(nodes) > 1 else "") + line
           for name, interval in intervals.items() for line in interval["findings"]]
    return {
        "classes": [row for n in nodes for row in class_records(n)],
        "totals": {**pool_totals([r["totals"] for r in records if r.get("error") is None]),
                   "nodes": len(records), "nodes_down": len(failed)},
        "nodes": records,
        "findings": findings(nodes, list(spans)) + now,
    }


def sample_record(sample: SampledItems) -> dict:
    """``--read-items``: the report of the sampled items (``report``'s record), and the items
    ``stats items`` counts but metadump did not list; or the error."""
    from slabcalc.records.report import report_record

    if sample.error is not None:
        return {"error": sample.error}
    unlisted = sample.unlisted or (None, None)
    return {**report_record(sample.report, sample.accounting), "unlisted_items": unlisted[0],
            "unlisted_bytes": unlisted[1]}


def sample_line(sample: SampledItems) -> str:
    """The summary line of a node's sample."""
    if sample.why == "server":
        return f"sample: none (the server said {sample.error!r})"
    if sample.why == "settings":
        return "sample: not modelled (the release or settings are unknown)"
    if sample.why == "empty":
        return "sample: no items"
    if sample.error is not None:
        return f"sample: {sample.error}"
    r = sample.report
    chunk_waste, free = r.total("chunk_waste"), r.total("free_bytes")
    line = (f"sample of {r.items} items: modelled alone they would take {r.total('pages')} pages, "
            f"{round(r.waste_pct, 2):.2f}% of page bytes holding no item data "
            f"({chunk_waste} chunk waste + {free} free)")
    missing = sample.unlisted
    if missing and missing[0] and not sample.stopped:
        line += (f"; metadump listed {r.items} of the {sample.counted} items stats items counts: it skips "
                 f"expired items not yet reclaimed, so about {missing[0]} such items (or items that came "
                 f"and went during the dump) hold about {missing[1]} bytes of chunks")
    elif sample.stopped:
        line += f"; metadump stopped at {sample.limit} items of the {sample.counted} stats items counts"
    return line


def interval_record(span: Interval) -> dict:
    """The JSON of an interval: per class rates (per second, two decimals) and the node's deltas."""
    s = span.seconds

    def rate(count):
        return None if count is None else round(count / s, 2)

    return {
        "seconds": s,
        "slabs_moved": span.slabs_moved,
        "evictions": span.evictions,
        "slab_global_page_pool": span.pool_pages,
        "automove": span.automove,
        "classes": [{"class": c.id, "pages": c.pages, "pages_delta": c.pages_delta, "free_chunks": c.free_chunks,
                     "evicted": c.evicted, "evicted_per_s": rate(c.evicted), "outofmemory": c.outofmemory,
                     "cmd_set": c.sets, "cmd_set_per_s": rate(c.sets), "age": c.age,
                     "evicted_time": c.evicted_time, "reclaimed": c.reclaimed,
                     "crawler_reclaimed": c.crawler_reclaimed} for c in span.classes],
        "findings": now_findings(span),
        "diagnosis": span.finding.record() if span.finding is not None else None,
    }


def watch_record(reading) -> dict:
    """One JSON line of ``stats --watch``: the reading's number and time, per node its
    ``curr_items``, the growth of stats' counters and their rates, and the interval
    (:func:`interval_record`, null for a node's first reading); then what changed."""
    nodes = []
    for n in reading.nodes:
        if n.error is not None:
            nodes.append({"node": n.node, "error": n.error})
            continue
        general = n.stats.dump.general
        span = n.span
        counters = dict(n.counters)
        nodes.append({
            "node": n.node, "error": None,
            "curr_items": int(general["curr_items"]) if general.get("curr_items", "").isdigit() else None,
            "seconds": None if span is None else span.seconds,
            "counters": counters or None,
            "rates": None if span is None else {f"{name}_per_s": None if value is None else
                                                round(value / span.seconds, 2) for name, value in counters.items()},
            "interval": None if span is None else interval_record(span),
        })
    return {"reading": reading.number, "elapsed": round(reading.elapsed, 3), "nodes": nodes,
            "changes": list(reading.changes)}
