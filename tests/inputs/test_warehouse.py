"""Warehouse files through DuckDB: Parquet, JSON lines and gzipped CSV give report, optimize and
compare the same items, and the same row accounting, as the row readers give for the same rows."""

from __future__ import annotations

import json
import random
import sys

import pytest
from helpers import doc as _doc
from helpers import duckdb_table, run

duckdb = pytest.importorskip("duckdb")


def _rows(n: int = 5000, seed: int = 3) -> list[tuple[str, str, int]]:
    rng = random.Random(seed)
    return [(f"user:{i}:" + "k" * rng.randint(0, 40), "v" * rng.choice([0, 10, 100, 700, 4000, 30_000]),
             rng.choice([0, 0, 7])) for i in range(n)]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    where = tmp_path_factory.mktemp("warehouse")
    rows = _rows()
    con = duckdb.connect()
    duckdb_table(con, "w", "key VARCHAR, value VARCHAR, flags INTEGER", rows)
    paths = {"parquet": where / "w.parquet", "jsonl": where / "w.jsonl", "csv.gz": where / "w.csv.gz"}
    con.execute(f"COPY w TO '{paths['parquet']}' (FORMAT parquet)")
    con.execute(f"COPY w TO '{paths['jsonl']}' (FORMAT json)")
    con.execute(f"COPY w TO '{paths['csv.gz']}' (FORMAT csv, HEADER, COMPRESSION gzip)")
    lengths = where / "lengths.csv"          # the same rows as the row reader takes them
    lengths.write_text("key,value,flags\n" + "".join(f"{len(k)},{len(v)},{f}\n" for k, v, f in rows))
    return paths, lengths


@pytest.mark.parametrize("kind", ["parquet", "jsonl", "csv.gz"])
def test_report_equals_the_row_reader(files, kind):
    paths, lengths = files
    ours, rows = _doc("report", str(paths[kind]), "-m", "64"), _doc("report", str(lengths), "-m", "64")
    assert ours["classes"] == rows["classes"] and ours["capacity"] == rows["capacity"]
    assert ours["totals"]["rows"] == rows["totals"]["rows"] == 5000
    assert ours["totals"]["placed_rows"] == 5000


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
def test_optimize_and_compare_read_them_too(files):
    paths, lengths = files
    # the best flags are the search's; the resamples (three searches more) would only add a record
    assert (_doc("optimize", str(paths["parquet"]), "--resamples", "0")["best"]["flags"]
            == _doc("optimize", str(lengths), "--resamples", "0")["best"]["flags"])
    assert _doc("compare", str(paths["parquet"]))["stores"] == _doc("compare", str(lengths))["stores"]


def test_counts_lengths_and_rejected_rows_are_accounted(tmp_path):
    path = tmp_path / "hist.parquet"
    con = duckdb.connect()
    con.execute("CREATE TABLE h (key_size INTEGER, value_size INTEGER, count BIGINT)")
    con.executemany("INSERT INTO h VALUES (?, ?, ?)",
                    [(10, 100, 5), (10, 100, 7), (300, 5, 2), (8, None, 1), (12, 2_000_000, 3)])
    con.execute(f"COPY h TO '{path}' (FORMAT parquet)")
    result = run("report", str(path), "--format", "json")
    doc = json.loads(result.stdout)
    t = doc["totals"]
    assert (t["rows"], t["placed_rows"], t["too_large_rows"], t["rejected"]) == (5, 2, 1, 2)
    assert t["items"] == 12 and t["too_large"] == 3
    assert "2 of 5 rows rejected" in result.stderr
    assert {r["reason"] for r in doc["rejections"]} == {"key length must be 1..250 bytes, not 300",
                                                       "value length must be 0..2147483645 bytes, not None"}


def test_bad_files_are_one_line(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    result = run("report", str(bad))
    assert result.exit_code == 1 and "bad.parquet: DuckDB:" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    odd = tmp_path / "odd.parquet"
    duckdb.connect().execute(f"COPY (SELECT 1 AS a) TO '{odd}' (FORMAT parquet)")
    result = run("report", str(odd))
    assert result.exit_code == 1 and "needs a key and a value column" in result.stderr


def test_without_duckdb_one_line_says_what_to_install(files, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)          # import duckdb now fails
    result = run("report", str(files[0]["parquet"]))
    assert result.exit_code == 2 and "pip install 'slabcalc[duckdb]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
