"""``slabcalc sql``: the DuckDB query, run on DuckDB over a generated table of keys, values and flags,
gives the histogram whose report equals the report of the raw rows -- for every suffix rule; the
Spark, BigQuery and Trino queries parse with a dialect-aware parser (sqlglot)."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from helpers import duckdb_table, run

duckdb = pytest.importorskip("duckdb")     # in the test extra: never skipped where .ci/run installs
sqlglot = pytest.importorskip("sqlglot")

# a release for each flags suffix rule, and one option that changes the rule
RULES = {
    "binary": ["--profile", "1.6.18"],
    "binary_always": ["--profile", "1.4.35", "-o", "no_inline_ascii_resp"],
    "text_unsigned": ["--profile", "1.4.27"],
    "text_signed": ["--profile", "1.2.8"],
}


def _rows(seed: int = 7, n: int = 3000) -> list[tuple[str, str, int]]:
    """Keys and values of many lengths (UTF-8 counted in bytes), flags across the digit counts and
    both sides of 2^31, a value large enough to be chunked."""
    rng = random.Random(seed)
    flags = [0, 0, 0, 1, 9, 10, 99, 12345, 2**31 - 1, 2**31, 2**31 + 5, 4_000_000_000, 2**32 - 1]
    rows = []
    for i in range(n):
        key = f"k{i}:" + "é" * rng.randint(0, 20) + "x" * rng.randint(0, 100)
        value = "v" * rng.choice([0, 1, 50, 120, 900, 3000, 20_000])
        rows.append((key, value, rng.choice(flags)))
    rows.append(("big", "w" * 700_000, 3))
    return rows


def _report(args: list[str], text: str) -> dict:
    result = run("report", "--format", "json", *args, "-", input=text)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    return {"classes": doc["classes"], "items": doc["totals"]["items"], "capacity": doc["capacity"]}


@pytest.mark.parametrize("rule", list(RULES))
def test_duckdb_histogram_equals_the_raw_rows(rule):
    args = RULES[rule]
    rows = _rows()
    raw = io.StringIO()
    writer = csv.writer(raw, lineterminator="\n")
    writer.writerow(["key", "value", "flags"])
    writer.writerows((len(k.encode()), len(v.encode()), f) for k, v, f in rows)
    query = run("sql", "--table", "writes", "--flags-col", "flags", *args)
    assert query.exit_code == 0, query.output
    con = duckdb.connect()
    duckdb_table(con, "writes", "key VARCHAR, value VARCHAR, flags UBIGINT", rows)
    groups = con.execute(query.stdout).fetchall()
    assert sum(g[3] for g in groups) == len(rows) and len(groups) < len(rows)
    hist = "key,value,flags,count\n" + "".join(f"{k},{v},{f},{c}\n" for k, v, f, c in groups)
    assert _report(args + ["-m", "1024"], hist) == _report(args + ["-m", "1024"], raw.getvalue())


def test_lengths_columns_and_quoted_names():
    query = run("sql", "--table", "my table", "--key-col", "key len", "--value-col", "v", "--lengths").stdout
    con = duckdb.connect()
    con.execute('CREATE TABLE "my table" ("key len" INTEGER, v INTEGER)')
    con.executemany('INSERT INTO "my table" VALUES (?, ?)', [(10, 100), (10, 100), (12, 5000)])
    assert con.execute(query).fetchall() == [(10, 100, 0, 2), (12, 5000, 0, 1)]


# Each engine's byte length of a string, from its own documentation: Spark's octet_length, BigQuery's
# BYTE_LENGTH, Trino's length(to_utf8(...)) (length alone counts characters there), DuckDB's strlen.
BYTE_LENGTH = {"spark": "OCTET_LENGTH({})", "bigquery": "BYTE_LENGTH({})", "trino": "LENGTH(TO_UTF8({}))",
               "duckdb": "STRLEN({})"}


def _sized(parsed) -> dict:
    """The inner select's columns of a parsed query, by name: ``key``, ``value``, ``flags``."""
    return {e.alias: e.this for e in parsed.find(sqlglot.exp.Subquery).this.expressions}


@pytest.mark.parametrize("dialect", ["spark", "bigquery", "trino", "duckdb"])
@pytest.mark.parametrize("rule", list(RULES))
def test_other_dialects_parse(dialect, rule):
    """Each dialect's query parses with that dialect's grammar into the DuckDB query's histogram: the
    byte lengths of key and value, the flags column DuckDB computes (run on DuckDB over every flags
    value of ``_rows``), grouped by the three and counted, from the table named."""
    query = run("sql", "--dialect", dialect, "--table", "db.writes", "--flags-col", "f", *RULES[rule]).stdout
    parsed = sqlglot.parse_one(query, read=dialect)
    sized = _sized(parsed)
    assert [t.sql() for t in parsed.find_all(sqlglot.exp.Table)] == ["db.writes"]
    assert [e.sql() for e in parsed.expressions] == ["key", "value", "flags", "COUNT(*) AS count"]
    assert [g.sql() for g in parsed.args["group"].expressions] == ["key", "value", "flags"]
    for column in ("key", "value"):
        assert sized[column].sql(dialect=dialect).upper() == BYTE_LENGTH[dialect].format(column.upper())
    duck = run("sql", "--table", "db.writes", "--flags-col", "f", *RULES[rule]).stdout
    duck_flags = _sized(sqlglot.parse_one(duck, read="duckdb"))
    theirs = sqlglot.transpile(sized["flags"].sql(dialect=dialect), read=dialect, write="duckdb")[0]
    con = duckdb.connect()
    duckdb_table(con, "writes", "f UBIGINT", [(f,) for f in {f for _, _, f in _rows()}])
    assert (con.execute(f"SELECT f, {theirs} FROM writes ORDER BY f").fetchall()
            == con.execute(f"SELECT f, {duck_flags['flags'].sql(dialect='duckdb')} FROM writes ORDER BY f").fetchall())


def test_bad_dialect_is_a_usage_error():
    result = run("sql", "--dialect", "oracle", "--table", "t")
    assert result.exit_code == 2 and "oracle" in result.output
