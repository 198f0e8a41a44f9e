"""Item files too big to read row by row -- Parquet, JSON lines, gzipped CSV -- read through DuckDB
(the ``duckdb`` extra), aggregated inside DuckDB by the query ``slabcalc sql`` prints: out of core,
on all cores, into the ``(Item, count, rows)`` triples ``report``, ``optimize`` and ``compare`` take.

The columns are found by the names every item reader accepts (inputs/aliases.py): a key (its text,
or a key length), a value (its text or length), flags and a count are optional.  The accounting is
of the file's rows: rows read = placed + too large + rejected, the rejected ones (no key, a key of
0 or more than the profile's key_max, a negative or missing value) counted by the query.
"""

from __future__ import annotations

from slabcalc.errors import InputError, ValueRefused
from slabcalc.inputs.aliases import ITEM_COLUMNS, by_alias
from slabcalc.inputs.rows import Accounting, Rejection, header_columns
from slabcalc.model.distribution import Item
from slabcalc.model.item import VALUE_MAX

SUFFIXES = {".parquet": "read_parquet", ".jsonl": "read_json_auto", ".ndjson": "read_json_auto",
            ".csv.gz": "read_csv_auto", ".tsv.gz": "read_csv_auto"}
INSTALL = "pip install 'slabcalc[duckdb]'"


def reader_for(path: str) -> str | None:
    """DuckDB's table function for ``path`` by its suffix, or None for a file the row readers take."""
    lowered = path.lower()
    return next((fn for suffix, fn in SUFFIXES.items() if lowered.endswith(suffix)), None)


def kind_of(path: str) -> str:
    """What a file :func:`reader_for` takes is called in reports: ``parquet``, ``json lines``, ``csv.gz``."""
    return {"read_parquet": "parquet", "read_json_auto": "json lines"}.get(reader_for(path), "csv.gz")


def _relation(path: str, csv_as_text: bool = False) -> str:
    """DuckDB's table function reading ``path`` (:func:`reader_for`); a CSV's empty cell is an empty
    value, not a missing one, and with ``csv_as_text`` its cells stay text (as a CSV reader reads them)."""
    function = reader_for(path)
    relation = f"{function}('{path.replace(chr(39), chr(39) * 2)}'"
    if function != "read_csv_auto":
        return relation + ")"
    return relation + ", nullstr = '\x01'" + (", all_varchar = true)" if csv_as_text else ")")


def _duckdb():
    try:
        import duckdb
    except ImportError:
        raise ValueRefused(f"reading Parquet, JSON lines or gzipped CSV needs DuckDB: {INSTALL}") from None
    return duckdb


def read_warehouse(path: str, settings, key_length: int | None = None) -> tuple[list, Accounting]:
    """``path``'s items as ``(Item, count, rows)`` groups, and the :class:`Accounting` of its rows."""
    from slabcalc.inputs.sql import histogram_sql

    duckdb = _duckdb()
    relation = _relation(path)
    fmt = kind_of(path)
    con = duckdb.connect()
    try:
        described = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        header_columns([name for name, *_ in described], by_alias(ITEM_COLUMNS), path)   # a misspelt name
        columns = {name.strip().lower(): (name, kind) for name, kind, *_ in described}
        found = {}
        for column, aliases in ITEM_COLUMNS.items():
            name = next((columns[a] for a in aliases if a in columns), None)
            if name is not None:
                found[column] = name
        key = found.get("key") or found.get("key_name")
        value = found.get("value")
        if value is None or (key is None and key_length is None):
            names = ", ".join(sorted(columns))
            raise InputError(f"{path}: needs a key and a value column (key/key_size/..., value/value_size/...); "
                             f"it has {names}" + ("" if key is not None else " (or give --key BYTES)"))
        textual = ("VARCHAR", "BLOB")
        key_is_text = key is not None and key[1].upper() in textual
        value_is_text = value[1].upper() in textual
        key_sql = str(key_length) if key is None else _quoted(key[0])
        value_sql = _quoted(value[0])
        # lengths as they are; a column of text measured in bytes
        key_sql = f"strlen({key_sql})" if key_is_text else key_sql
        value_sql = f"strlen({value_sql})" if value_is_text else value_sql
        query = histogram_sql(settings, "duckdb", "t", key_sql, value_sql,
                              _quoted(found["flags"][0]) if "flags" in found else None, True,
                              count_col=_quoted(found["count"][0]) if "count" in found else None,
                              relation=relation, rows=True, raw_columns=True)
        groups = con.execute(query).fetchall()
    except duckdb.Error as exc:
        raise InputError(f"{path}: DuckDB: {_cause(exc)}") from None
    finally:
        con.close()
    triples, accounting = _triples(groups, path, fmt, settings.profile.key_max)
    read = {found[column][0] for column in ("key", "value", "flags", "count") if column in found}
    if key is not None:
        read.add(key[0])
    accounting.unused = tuple(name for name, *_ in described if name not in read)
    return triples, accounting


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'



def _triples(groups, path: str, fmt: str, key_max: int) -> tuple[list, Accounting]:
    accounting = Accounting(path, fmt)
    out = []
    for key, value, flags, count, rows in groups:
        accounting.rows += rows
        reason = None
        if key is None or not 1 <= key <= key_max:
            reason = f"key length must be 1..{key_max} bytes, not {key}"
        elif value is None or not 0 <= value <= VALUE_MAX:
            reason = f"value length must be 0..{VALUE_MAX} bytes, not {value}"
        elif count is None or count < 0:
            reason = f"count must be 0 or more, not {count}"
        if reason is not None:
            accounting.rejected += rows
            if len(accounting.first_rejections) < 5:
                accounting.first_rejections.append(Rejection(0, reason, f"{rows} rows of key {key}, value {value}"))
            continue
        accounting.items += count
        out.append((Item(int(key), int(value), int(flags), None), int(count), int(rows)))
    return out, accounting


class TraceLines:
    """A Parquet, JSON-lines or gzipped-CSV workload as the CSV text ``read_workload`` reads: a header
    of the file's column names (``simulate`` knows twitter/cache-trace's, MetaKV's and its own), then
    one line per row, read from DuckDB a batch at a time (the file is never held whole).

    Line ``n + 1`` is the file's row ``n``, so a rejected row is named by its place in the file.  A
    DuckDB error while reading (a corrupt file) is an :class:`InputError` naming the file.
    """

    BATCH = 65_536

    def __init__(self, path: str):
        duckdb = _duckdb()
        self.path, self.error = path, duckdb.Error
        self.con = duckdb.connect()
        try:
            self.cursor = self.con.execute(f"SELECT * FROM {_relation(path, csv_as_text=True)}")
            self.names = [d[0] for d in self.cursor.description]
        except duckdb.Error as exc:
            self.con.close()
            raise InputError(f"{path}: DuckDB: {_cause(exc)}") from None

    def __iter__(self):
        import csv
        import io

        yield ",".join(_cell(n) for n in self.names) + "\n"
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        try:
            while True:
                rows = self.cursor.fetchmany(self.BATCH)
                if not rows:
                    return
                out.seek(0)
                out.truncate()
                writer.writerows(["" if cell is None else cell for cell in row] for row in rows)
                yield from out.getvalue().splitlines(keepends=True)
        except self.error as exc:
            raise InputError(f"{self.path}: DuckDB: {_cause(exc)}") from None

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _cause(exc: Exception) -> str:
    return " ".join(str(exc).split()).split(" LINE ")[0]      # not the query DuckDB quotes


def _cell(name: str) -> str:
    return '"' + name.replace('"', '""') + '"' if any(c in name for c in ',"\n') else name
