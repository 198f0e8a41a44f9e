"""``stats``: the tables, the interval table and the findings, and ``--sample-items``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.tables import NOW_COLUMNS, STATS_COLUMNS, STATS_ESSENTIAL, STATS_TOTAL_COLUMNS


def print_stats(nodes, failed, samples, fmt, pool, spans=None):
    from slabcalc.records.stats import class_records, interval_record, node_totals, pool_totals, stats_record

    spans = spans or {}
    sampled = {name: _sample_report(node, *samples[node.node]) for node in nodes
               for name in [node.node] if name in samples}
    record = stats_record(nodes, failed, now=list(spans))
    intervals = {name: interval_record(span) for name, span in spans.items()}   # each made once
    for entry in record["nodes"]:
        if entry.get("error") is None:
            entry["interval"] = intervals.get(entry["node"])
    now_lines = [(f"{name}: " if len(nodes) > 1 else "") + line
                 for name, interval in intervals.items() for line in interval["findings"]]
    if fmt == "json":
        for entry in record["nodes"]:
            if entry["node"] in sampled:
                entry["sample"] = sampled[entry["node"]][0]
        record["findings"] += now_lines
        click.echo(output.render_json(record))
        return
    columns = (("node",) if pool or fmt == "csv" else ()) + STATS_COLUMNS + (("memory",) if fmt != "csv" else ())
    rows = []
    for node in nodes:
        for row in class_records(node):
            label = "pool" if row["class"] == 0 and fmt != "csv" else row["class"]   # the global page pool
            rows.append({**row, "class": label, "memory": output.bar(row["memory_pct"])})
    totals = [{"node": node.node, **node_totals(node)} for node in nodes]
    if not pool and fmt != "csv":
        rows.append({"class": "total", **{k: totals[0].get(k) for k in STATS_COLUMNS[2:]},
                     "memory_pct": 100.0 if totals[0]["page_bytes"] else 0.0})
    click.echo(output.render_rows(rows, columns, fmt, essential=("node",) + STATS_ESSENTIAL))
    if fmt == "csv":
        return
    if pool:
        click.echo()
        down = f" ({len(failed)} of {len(nodes) + len(failed)} nodes down)" if failed else ""
        totals.append({"node": "pool" + down, **pool_totals([{k: t[k] for k in t if k != "node"} for t in totals])})
        click.echo(output.render_rows(totals, STATS_TOTAL_COLUMNS, fmt,
                                      essential=("node", "pages", "page_bytes", "chunk_waste", "items", "evicted")))
    for name, span in spans.items():
        rows = [row for row in intervals[name]["classes"] if row["pages"]]
        click.echo()
        click.echo(f"{name + ': ' if len(nodes) > 1 else ''}over the last {span.seconds} s:")
        click.echo(output.render_rows(rows, NOW_COLUMNS, fmt, essential=NOW_COLUMNS[:4] + ("age", "evicted_time")))
    lines = record["findings"] + now_lines + [f"{name}: {text}" for name, (_, text) in sampled.items()]
    if lines:
        click.echo()
        click.echo("\n".join(output.note(line) for line in lines))


def _sample_report(node, reason, lines, limit):
    """``--sample-items``: the sampled sizes modelled under the node's settings (record, summary line)."""
    from slabcalc.analysis.report import build_report
    from slabcalc.errors import InputError
    from slabcalc.inputs import sampled_items
    from slabcalc.records.report import report_record

    if reason is not None:
        return {"error": reason}, f"sample: none (the server said {reason!r})"
    if node.settings is None:
        return {"error": "no model settings"}, "sample: not modelled (the release or settings are unknown)"
    if not lines:
        return {"error": "no items"}, "sample: no items"
    try:
        items, accounting, key_length = sampled_items(lines, f"{node.node} metadump", node.settings)
        report = build_report(node.settings, items, size_key_length=key_length)
    except (InputError, ValueError) as exc:
        return {"error": str(exc)}, f"sample: {exc}"
    record = report_record(report, accounting)
    t = record["totals"]
    summary = (f"sample of {t['items']} items: modelled alone they would take {t['pages']} pages, "
               f"{t['waste_pct']:.2f}% of page bytes holding no item data "
               f"({t['chunk_waste']} chunk waste + {t['free_bytes']} free)")
    from slabcalc.analysis.diagnosis import unreclaimed

    counted = node.total("items")
    missing = unreclaimed(node, {c.slab_class.id: c.items for c in report.classes})
    record["unlisted_items"], record["unlisted_bytes"] = missing if missing else (None, None)
    if missing and missing[0] and len(lines) < limit:
        summary += (f"; metadump listed {report.items} of the {counted} items stats items counts: it skips "
                    f"expired items not yet reclaimed, so about {missing[0]} such items (or items that came "
                    f"and went during the dump) hold about {missing[1]} bytes of chunks")
    elif len(lines) >= limit:
        summary += f"; metadump stopped at {limit} items of the {counted} stats items counts"
    return record, summary


def stats_measure(nodes):
    """The gate's figures of ``stats``: the pool's waste, and the largest node's slab pages plus
    hash table (``hash_bytes``)."""
    from slabcalc.cli.common import measure
    from slabcalc.records.stats import node_totals

    pages = requested = 0
    memory = []
    for node in nodes:
        totals = node_totals(node)
        pages += totals["page_bytes"] or 0
        requested = None if requested is None or totals["requested_bytes"] is None \
            else requested + totals["requested_bytes"]
        hash_bytes = node.dump.general.get("hash_bytes", "")
        memory.append((totals["total_malloced"] if totals["total_malloced"] is not None else totals["page_bytes"] or 0)
                      + (int(hash_bytes) if hash_bytes.isdigit() else 0))
    return measure(None if requested is None else pages - requested, pages, max(memory),
                    "node memory (slab pages + hash table)")
