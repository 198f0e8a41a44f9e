"""``simulate -m A,B,C``: the hit-ratio curve as a table, CSV or JSON, and its progress on a terminal."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.tables import CURVE_COLUMNS


def print_curve(record: dict, fmt: str) -> None:
    from slabcalc.records.curve import CURVE_FIELDS

    if fmt == "json":
        click.echo(output.render_json(record))
        return
    if fmt == "csv":
        click.echo(f"model: {record['model']['text']}", err=True)
        click.echo(output.render_rows(record["curve"], CURVE_FIELDS, "csv"))
        return
    rows = [{**row, **{name: _ratio(row[name]) for name in ("hit_ratio", "ideal_lru_hit_ratio")}}
            for row in record["curve"]]
    click.echo(output.render_rows(rows, CURVE_COLUMNS, fmt,
                                  essential=("limit_maxbytes", "hit_ratio", "ideal_lru_hit_ratio")))
    click.echo()
    click.echo(output.render_pairs(_curve_lines(record), fmt))


def _ratio(value: float | None) -> str | None:
    return None if value is None else f"{value:.4f}"


def _curve_lines(record: dict) -> list[tuple[str, str]]:
    i = record["input"]
    lines = [
        ("model", record["model"]["text"]),
        ("input", f"{i['source']} ({i['format']}), {i['rows']} rows, {i['rejected']} rejected"),
        ("replays", f"{len(record['curve'])}, one per -m; each row is what simulate -m N prints"),
        ("ideal_lru", record["ideal_lru"]),
    ]
    if "sample" in record:
        s = record["sample"]
        lines.append(("sample", f"{s['sampled_ops']} of {s['ops']} operations replayed at each -m (keys hashing "
                                f"under {s['rate']:.4g}), counts scaled back by {s['scale']:.4g}; the ideal "
                                f"LRU in {s['rate']:.4g} of each -m"))
    return lines


def progress_printer():
    """Each -m as it finishes, on stderr (the caller asks only when stderr is a terminal)."""
    def show(point, done: int, total: int) -> None:
        ratio = point.hit_ratio
        click.echo(f"\r-m {point.limit_maxbytes >> 20} replayed ({done} of {total})"
                   + ("" if ratio is None else f", hit ratio {ratio:.4f}") + " " * 8, err=True)
    return show
