"""``stats``: the tables, the interval table and the findings, and ``--read-items``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.tables import NOW_COLUMNS, STATS_COLUMNS, STATS_ESSENTIAL, STATS_TOTAL_COLUMNS


def print_stats(nodes, failed, samples, fmt, pool, spans=None):
    """``samples``: :class:`slabcalc.analysis.sampled.SampledItems` of the nodes sampled."""
    from slabcalc.records.stats import class_records, node_totals, pool_totals, sample_line, stats_record, total_row

    spans = spans or {}
    record = stats_record(nodes, failed, spans, samples)
    if fmt == "json":
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
        rows.append(total_row(totals[0], STATS_COLUMNS[2:]))
    click.echo(output.render_rows(rows, columns, fmt, essential=("node",) + STATS_ESSENTIAL))
    if fmt == "csv":
        return
    if pool:
        click.echo()
        down = f" ({len(failed)} of {len(nodes) + len(failed)} nodes down)" if failed else ""
        totals.append({"node": "pool" + down, **pool_totals([{k: t[k] for k in t if k != "node"} for t in totals])})
        click.echo(output.render_rows(totals, STATS_TOTAL_COLUMNS, fmt,
                                      essential=("node", "pages", "total_malloced", "chunk_waste", "curr_items",
                                                 "evictions")))
    intervals = {entry["node"]: entry["interval"] for entry in record["nodes"] if entry.get("interval")}
    for name, span in spans.items():
        rows = [row for row in intervals[name]["classes"] if row["pages"]]
        click.echo()
        click.echo(f"{name + ': ' if len(nodes) > 1 else ''}over the last {span.seconds} s:")
        click.echo(output.render_rows(rows, NOW_COLUMNS, fmt, essential=NOW_COLUMNS[:4] + ("age", "evicted_time")))
    lines = record["findings"] + [f"{s.node}: {sample_line(s)}" for s in samples]
    if lines:
        click.echo()
        click.echo("\n".join(output.note(line) for line in lines))

