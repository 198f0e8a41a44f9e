"""``stats --watch``: each reading printed as it comes (a block of text, or one JSON line)."""

from __future__ import annotations

import json

import click

from slabcalc.cli import output
from slabcalc.cli.tables import WATCH_COLUMNS


def run_watch(addresses, timeout, seconds, count, tls, fmt, analyse) -> int:
    """Read ``addresses`` every ``seconds`` (``count`` times, or until Ctrl-C) and print each reading;
    exit status 1 when a node could not be read at the last reading, else 0 (also after Ctrl-C)."""
    from slabcalc.analysis.watch import watch
    from slabcalc.inputs.client import poll
    from slabcalc.inputs.dumps import dump_from_replies
    from slabcalc.records.stats import watch_record

    def dumps():
        for elapsed, replies in poll(addresses, timeout, seconds, count, tls):
            yield elapsed, [(str(a), r if isinstance(r, Exception) else dump_from_replies(str(a), r))
                            for a, r in zip(addresses, replies)]

    status, down, said = 0, set(), {}
    try:
        for reading in watch(dumps(), analyse):
            for n in reading.nodes:
                if n.error is not None and n.node not in down:
                    click.echo(f"Error: {n.node}: {n.error}", err=True)
            down = {n.node for n in reading.nodes if n.error is not None}
            status = 1 if down else 0
            record = watch_record(reading)
            if fmt == "json":   # JSON lines: one record a reading
                click.echo(json.dumps(record, separators=(",", ":")))
            elif fmt == "csv":  # one row per class per interval, the header once
                _print_csv(reading, record, header=reading.number == 1)
            else:
                _print_reading(reading, record, fmt, said)
    except KeyboardInterrupt:   # the way a watch without --count ends
        pass
    return status


def _print_reading(reading, record, fmt, said: dict) -> None:
    """Per node its headline, the classes that did something and its finding with its action when the
    finding is new (``said``: each node's last one); then what changed."""
    for i, (n, entry) in enumerate(zip(reading.nodes, record["nodes"])):
        headline = f"{n.node}: cannot be read" if n.error is not None else _headline(n, entry)
        click.echo(output.note((f"reading {reading.number} (+{reading.elapsed:.1f} s): " if i == 0 else "")
                               + headline))
        if n.span is None:
            continue
        sizes = {c.id: c.chunk_size for c in n.span.classes}
        rows = [{**row, "chunk_size": sizes[row["class"]]} for row in entry["interval"]["classes"]
                if row["cmd_set"] or row["evicted"] or row["pages_delta"] or row["outofmemory"]]
        if rows:
            click.echo(output.render_rows(rows, WATCH_COLUMNS, fmt, essential=WATCH_COLUMNS[:6]))
        found = n.span.finding.line if n.span.finding is not None else None
        if found != said.get(n.node):
            said[n.node] = found
            if found is not None:
                click.echo(output.note(f"{n.node}: {found}" if len(reading.nodes) > 1 else found))
    for line in reading.changes:
        click.echo(output.note(f"changed: {line}"))
    click.echo()


CSV_COLUMNS = ("reading", "elapsed", "node", "seconds") + WATCH_COLUMNS


def _print_csv(reading, record, header) -> None:
    rows = [{"reading": reading.number, "elapsed": record["elapsed"], "node": n.node, "seconds": n.span.seconds,
             "chunk_size": c.chunk_size, **row}
            for n, entry in zip(reading.nodes, record["nodes"]) if n.span is not None
            for c, row in zip(n.span.classes, entry["interval"]["classes"])]
    text = output.render_rows(rows, CSV_COLUMNS, "csv")
    lines = text.splitlines()[0 if header else 1:]
    if lines:
        click.echo("\n".join(lines))


def _headline(n, entry) -> str:
    """One node's figures in a reading: since boot for its first, rates over the interval after."""
    items = entry["curr_items"]
    if n.span is None:
        moved = n.stats.dump.general.get("slabs_moved", "?")
        return (f"{n.node}: {items} items in {n.stats.total('pages')} pages; slabs_moved {moved} since boot")
    rates = entry["rates"]

    def per_s(name):
        value = rates.get(f"{name}_per_s")
        return "?" if value is None else f"{value:g}"
    moved = n.span.slabs_moved
    return (f"{n.node} over {n.span.seconds} s: {per_s('cmd_set')} sets/s, {per_s('cmd_get')} gets/s "
            f"({per_s('get_hits')} hits/s), {per_s('evictions')} evictions/s, "
            f"{'?' if moved is None else moved} pages moved; {items} items")
