"""Rendering: the same records as a readable table, CSV, JSON or any tabulate format.

Knows nothing of memcached; it turns lists of flat dicts (one per row, keys
are the stable column names) into text.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

TABLE = "table"          # our default: tabulate's "simple" layout
MACHINE = ("csv", "json")
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


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


@dataclass
class View:
    """How tables are shown to people (never csv/json): which columns, raw bytes or human units,
    and the width to fit.  Set once per command by the CLI (:func:`set_view`)."""

    columns: tuple[str, ...] | None = None   # None: fit the width; ("all",): every column
    raw_bytes: bool = False
    width: int | None = None                 # None: :func:`width` (COLUMNS, else 120)


_view = View()


def set_view(view: View) -> None:
    global _view
    _view = view


def is_byte_column(name: str) -> bool:
    """Columns of byte counts people read in human units (a table's; csv/json keep integers)."""
    return name.endswith("_bytes") or name in ("chunk_waste", "mem_requested")


def human(value: Any) -> Any:
    """``1572864`` -> ``1.50 MiB``; below 1 KiB in bytes."""
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    size = abs(value)
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{value / (1 << shift):.2f} {unit}"
    return f"{value} B"


def _fits(text: str, limit: int) -> bool:
    return max((len(line) for line in text.splitlines()), default=0) <= limit


def render_rows(rows: Iterable[dict], columns: Sequence[str], fmt: str,
                essential: Sequence[str] | None = None, wrap: str | None = None) -> str:
    """Rows (dicts) as ``fmt``: a table layout or CSV; columns in the given order.

    For tables (not csv): ``--columns`` chooses the columns; else, when the table is wider than
    the width to fit, the columns not in ``essential`` go, rightmost first, and a last line names
    them; the ``wrap`` column (long text) is wrapped instead.  Byte counts are in human units
    unless ``--bytes``.
    """
    rows = list(rows)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
        return out.getvalue().rstrip("\n")
    limit = _view.width or width()
    chosen = list(columns)
    chosen_here = bool(_view.columns) and _view.columns != ("all",) and set(_view.columns) <= set(columns)
    if chosen_here:   # --columns names a table by its columns; the command's other tables fit the width
        chosen = list(_view.columns)
    text = _table(rows, chosen, fmt, None)
    dropped: list[str] = []
    if not chosen_here and _view.columns != ("all",) and fmt == TABLE:
        keep = set(essential if essential is not None else columns)
        while not _fits(text, limit):
            if wrap in chosen:
                others = _table(rows, [c for c in chosen if c != wrap], fmt, None)
                room = limit - max(len(line) for line in others.splitlines()) - 2
                if room >= 20:
                    text = _table(rows, chosen, fmt, (wrap, room))
                    break
            optional = [c for c in chosen if c not in keep and c != wrap]
            if not optional:
                break
            dropped.insert(0, optional[-1])
            chosen.remove(optional[-1])
            text = _table(rows, chosen, fmt, None)
    if dropped:
        text += "\n" + note(f"(not shown: {', '.join(dropped)}; --columns all shows every column)", limit)
    return text


def _table(rows: list[dict], columns: Sequence[str], fmt: str, wrap: tuple[str, int] | None) -> str:
    from tabulate import tabulate

    humanize = not _view.raw_bytes
    table = [[human(row.get(c)) if humanize and is_byte_column(c) else _cell(row.get(c)) for c in columns]
             for row in rows]
    def numeric(i: int) -> bool:
        cells = [r[i] for r in table if r[i] != ""]
        return all(isinstance(v, (int, float)) or _NUMBER.fullmatch(str(v)) for v in cells)

    # human units are text: their columns are aligned right, and then every column needs saying
    align = None
    if humanize and any(is_byte_column(c) for c in columns):
        align = ["right" if is_byte_column(c) else "decimal" if numeric(i) else "left" for i, c in enumerate(columns)]
    widths = [wrap[1] if wrap and c == wrap[0] else None for c in columns]
    return tabulate(table, headers=list(columns), tablefmt="simple" if fmt == TABLE else fmt, colalign=align,
                    maxcolwidths=widths if any(widths) else None)


def render_pairs(pairs: Sequence[tuple[str, Any]], fmt: str) -> str:
    """A two-column ``field``/``value`` table (used for one record); long values wrap."""
    return render_rows(({"field": k, "value": v} for k, v in pairs), ("field", "value"), fmt, wrap="value")


def width() -> int:
    """Columns to fit: ``COLUMNS`` when set, else 120 (a pipe or a wide terminal)."""
    import os

    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return 120


def note(text: str, limit: int | None = None) -> str:
    """A note under a table, wrapped to :func:`width` with the continuation indented."""
    import textwrap

    return textwrap.fill(text, width=limit or _view.width or width(), subsequent_indent="  ",
                         break_on_hyphens=False, break_long_words=False)


def bar(pct: float, width: int = 10) -> str:
    """A share of 0-100 as a bar of ``width`` characters, in eighths of a character."""
    eighths = round(pct * width * 8 / 100)
    return "\u2588" * (eighths // 8) + ("", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a",
                                      "\u2589")[eighths % 8]


def render_json(document: Any) -> str:
    return json.dumps(document, indent=2)
