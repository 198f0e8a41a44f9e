"""Rendering: the same records as a readable table, CSV, JSON or any tabulate format.

Knows nothing of memcached; it turns lists of flat dicts (one per row, keys
are the stable column names) into text.
"""

from __future__ import annotations

import csv
import functools
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
    width: int | None = None                 # None: :func:`width` (COLUMNS, the terminal's, else 120)


_view = View()


def set_view(view: View) -> None:
    global _view
    _view = view


def is_byte_column(name: str) -> bool:
    """Columns of byte counts people read in human units (a table's; csv/json keep integers)."""
    return name.endswith("_bytes") or name in ("chunk_waste", "mem_requested", "limit_maxbytes")


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


def fits_width(text: str) -> bool:
    """Whether every line of ``text`` fits the width tables are fitted to."""
    return _fits(text, _view.width or width())


def render_rows(rows: Iterable[dict], columns: Sequence[str], fmt: str,
                essential: Sequence[str] | None = None, wrap: str | None = None, whole: bool = False) -> str:
    """Rows (dicts) as ``fmt``: a table layout or CSV; columns in the given order.

    For tables (not csv): ``--columns`` chooses, in its order, those of its columns this table has
    when it has two of them, or the one named (any other table is fitted as usual; a ``whole``
    table, such as paste-ready flags, keeps all its columns); else, when the table is wider than the width to fit, the
    columns not in ``essential`` go, rightmost first, and a last line names them; the ``wrap``
    column (long text) is wrapped instead.  Byte counts are in human units unless ``--bytes``.
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
    named = [] if whole or _view.columns in (None, ("all",)) else [c for c in _view.columns if c in columns]
    # --columns: a table that has two of the named columns (or the one named) shows those it has; one that
    # shares a single column with a longer list (``items`` of report's plan table) fits the width as usual
    chosen_here = bool(named) and len(named) >= min(2, len(_view.columns))
    if chosen_here:
        chosen = named
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
    if fmt == TABLE:
        text = simple_table(table, list(columns), align,
                            (list(columns).index(wrap[0]), wrap[1]) if wrap and wrap[0] in columns else None)
        if text is not None:
            return text
    from tabulate import tabulate  # lazily: it costs a command a third of its start-up

    return tabulate(table, headers=list(columns), tablefmt="simple" if fmt == TABLE else fmt, colalign=align,
                    maxcolwidths=widths if any(widths) else None)


# -- tabulate's "simple" layout, for the cells this module makes -----------------------------------
#
# tabulate imports importlib.metadata to learn its own version: 40 ms, a third of a command's start-up.
# simple_table lays out what tabulate(table, headers, "simple", colalign=...) would, for tables of
# ints and of printable ASCII text (and the block elements of bar()) whose numbers are plain (123,
# -4.56); any other table (wide or invisible characters, line ends, thousands separators, exponents,
# inf, True, ...) is left to tabulate.  tests/cli/test_output.py holds the two equal on generated tables.

_PLAIN_INT = re.compile(r"[-+]?[0-9]{1,15}")
_PLAIN_FLOAT = re.compile(r"[-+]?[0-9]{1,15}\.[0-9]{1,15}")
_THOUSANDS = re.compile(r"[-+]?[0-9]{1,3}(,[0-9]{3})*(\.[0-9]*)?|\.[0-9]+")   # tabulate reads these as numbers
_NARROW = re.compile("[\x20-\x7e\u2580-\u259f]*")   # one column each, by len() and by wcwidth alike
_NONE, _BOOL, _INT, _FLOAT, _STR = 0, 1, 2, 3, 5     # tabulate's order of types, most generic last


def _kind(cell: Any) -> int | None:
    """The type tabulate gives ``cell``, or None where this module does not follow it."""
    if isinstance(cell, bool) or not isinstance(cell, (int, str)):
        return None
    if isinstance(cell, int):
        return _INT
    if cell == "":
        return _NONE
    if not _NARROW.fullmatch(cell):
        return None
    if _PLAIN_INT.fullmatch(cell):
        return _INT
    if _PLAIN_FLOAT.fullmatch(cell):
        return _FLOAT
    if cell in ("True", "False") or _THOUSANDS.fullmatch(cell):
        return None
    try:
        float(cell)
    except ValueError:
        return _STR
    return None                                       # inf, nan, Infinity...


def _shown(cell: Any, kind: int) -> str:
    if cell == "":
        return ""
    if kind == _FLOAT:
        return format(float(cell), "g")
    return str(cell)


def _after_point(text: str) -> int:
    """Characters after the decimal point (or exponent) of a number; -1 for an int or text."""
    if text == "" or _PLAIN_INT.fullmatch(text):
        return -1
    try:
        float(text)
    except ValueError:
        return -1
    point = text.rfind(".")
    if point < 0:
        point = text.lower().rfind("e")
    return len(text) - point - 1 if point >= 0 else -1


def simple_table(table: list[list], headers: list[str], align: list[str] | None,
                 wrap: tuple[int, int] | None = None) -> str | None:
    """``table`` in tabulate's "simple" layout, or None when tabulate should lay it out.

    ``wrap``: ``(column, width)``, the text cells of that column wrapped to
    the width as tabulate's ``maxcolwidths`` wraps them (then a row is as
    many lines as its tallest cell).
    """
    if not table or not all(_NARROW.fullmatch(h) for h in headers):
        return None
    kinds = []
    for i in range(len(headers)):
        kind = _BOOL                                  # tabulate starts from bool
        for row in table:
            k = _kind(row[i])
            if k is None:
                return None
            kind = max(kind, k)
        kinds.append(kind)
    if wrap is not None:            # tabulate wraps first, then reads the wrapped cells' types
        column, width = wrap
        table = [list(row) for row in table]
        kind = _BOOL
        for row in table:
            if _kind(row[column]) == _STR:
                row[column] = _wrapped(row[column], width)
            cell = row[column]
            k = _STR if isinstance(cell, str) and "\n" in cell else _kind(cell)
            if k is None:
                return None
            kind = max(kind, k)
        kinds[column] = kind
    aligns = ["decimal" if k in (_INT, _FLOAT) else "left" for k in kinds]
    for i, a in enumerate(align or ()):
        aligns[i] = a
    texts = []
    for i, (kind, how) in enumerate(zip(kinds, aligns)):
        cells = [_shown(row[i], kind) for row in table]
        if how == "decimal":
            points = [_after_point(c) for c in cells]
            most = max(points)
            cells = [c + " " * (most - p) for c, p in zip(cells, points)]
        elif how in ("left", "right"):
            cells = [c.strip() for c in cells]
        else:
            return None
        texts.append(cells)
    # tabulate lays out a table with a line end in any cell line by line: a row is as many lines as
    # its tallest cell, and an empty cell has no line of its own (a row of them, no line at all)
    multiline = any("\n" in cell for cells in texts for cell in cells)
    columns, widths, heads = [], [], []
    for header, how, cells in zip(headers, aligns, texts):
        lines = [cell.splitlines() if multiline else [cell] for cell in cells]
        width = max([len(header) + 2, *(len(line) for cell in lines for line in cell)])
        pad = str.ljust if how == "left" else str.rjust
        columns.append([[pad(line, width) for line in cell] for cell in lines])
        heads.append(pad(header, width))
        widths.append(width)
    out = ["  ".join(heads).rstrip(), "  ".join("-" * w for w in widths).rstrip()]
    for cells in zip(*columns):
        for n in range(max(len(cell) for cell in cells)):
            out.append("  ".join(cell[n] if n < len(cell) else " " * w for cell, w in zip(cells, widths)).rstrip())
    return "\n".join(out)


def _wrapped(text: str, width: int) -> str:
    """A text cell of the ``maxcolwidths`` column as tabulate wraps it (numbers are not): line by
    line by textwrap's rules as tabulate's wrapper keeps them (:func:`_wrapper`), blank lines gone."""
    wrapper = _wrapper()(width=width, break_long_words=True, break_on_hyphens=True)
    return "\n".join("\n".join(wrapper.wrap(line)) for line in text.splitlines() if line.strip() != "")


@functools.lru_cache(maxsize=None)
def _wrapper():
    """textwrap's wrapper, but a word longer than a line is cut at the line's width, never at a
    hyphen inside it (Python 3.10 began doing that; tabulate's wrapper, written earlier, does not)."""
    import textwrap

    class Wrapper(textwrap.TextWrapper):
        def _handle_long_word(self, reversed_chunks, cur_line, cur_len, width):
            room = 1 if width < 1 else width - cur_len
            if self.break_long_words and room > 0:
                cur_line.append(reversed_chunks[-1][:room])
                reversed_chunks[-1] = reversed_chunks[-1][room:]
            elif not cur_line:
                cur_line.append(reversed_chunks.pop())

    return Wrapper


def render_pairs(pairs: Sequence[tuple[str, Any]], fmt: str) -> str:
    """A two-column ``field``/``value`` table (used for one record); long values wrap."""
    return render_rows(({"field": k, "value": v} for k, v in pairs), ("field", "value"), fmt, wrap="value")


def width() -> int:
    """Columns to fit: ``COLUMNS`` when set, else the terminal's own width when stdout is a terminal,
    else 120 (a pipe or a file)."""
    import os
    import sys

    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        pass
    try:
        if sys.stdout.isatty():
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
            if columns > 0:
                return max(40, columns)
    except (AttributeError, OSError, ValueError):     # no descriptor (a test harness), or no size
        pass
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
