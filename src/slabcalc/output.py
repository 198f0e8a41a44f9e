"""Rendering: the same records as a readable table, CSV, JSON or any tabulate format.

Knows nothing of memcached; it turns lists of flat dicts (one per row, keys
are the stable column names) into text.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Iterable, Sequence

TABLE = "table"          # our default: tabulate's "simple" layout
MACHINE = ("csv", "json")


def tabulate_formats() -> list[str]:
    from tabulate import tabulate_formats as formats  # lazily: keep start-up light

    return list(formats)


def format_choices(extra: Sequence[str] = ()) -> list[str]:
    """Every ``--format`` value: table, csv, json, ``extra`` and tabulate's formats."""
    return [TABLE, *MACHINE, *extra, *(f for f in tabulate_formats() if f not in (TABLE, *MACHINE, *extra))]


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return value


def render_rows(rows: Iterable[dict], columns: Sequence[str], fmt: str) -> str:
    """Rows (dicts) as ``fmt``: a table layout or CSV; columns in the given order."""
    rows = list(rows)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
        return out.getvalue().rstrip("\n")
    from tabulate import tabulate

    table = [[_cell(row.get(c)) for c in columns] for row in rows]
    return tabulate(table, headers=list(columns), tablefmt="simple" if fmt == TABLE else fmt)


def render_pairs(pairs: Sequence[tuple[str, Any]], fmt: str) -> str:
    """A two-column ``field``/``value`` table (used for one record)."""
    return render_rows(({"field": k, "value": v} for k, v in pairs), ("field", "value"), fmt)


def width() -> int:
    """Columns to fit: ``COLUMNS`` when set, else 120 (a pipe or a wide terminal)."""
    import os

    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 120


def note(text: str) -> str:
    """A note under a table, wrapped to :func:`width` with the continuation indented."""
    import textwrap

    return textwrap.fill(text, width=width(), subsequent_indent="  ", break_on_hyphens=False,
                         break_long_words=False)


def bar(pct: float, width: int = 10) -> str:
    """A share of 0-100 as a bar of ``width`` characters, in eighths of a character."""
    eighths = round(pct * width * 8 / 100)
    return "\u2588" * (eighths // 8) + ("", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a",
                                      "\u2589")[eighths % 8]


def render_json(document: Any) -> str:
    return json.dumps(document, indent=2)
