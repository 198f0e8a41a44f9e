"""``slabcalc sql --workload --sample RATE``: one sampling hash on both sides.  Each dialect's
expression, parsed by sqlglot and run by DuckDB, computes the hash slabcalc's readers compute
(model/sampling.py: checked here against hashlib's MD5, not against itself); the DuckDB query keeps
exactly the requests ``simulate --sample`` keeps, with the whole log's operations and gets on every row
(``log_ops``, ``log_gets``), and ``simulate --sampled`` on its result prints what ``simulate --sample``
prints on the whole file, the hit ratio adjusted to the log's gets included; without those columns it says
that it could not adjust it."""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from helpers import duckdb_table, run

from slabcalc.inputs.sql import DIALECTS, MD5_PREFIX, id_hash_sql, workload_sql
from slabcalc.model.sampling import id_hash, key_hash, keep_ids, text_hash, threshold

duckdb = pytest.importorskip("duckdb")     # in the test extra
sqlglot = pytest.importorskip("sqlglot")

KEYS = ["", "a", "user:1", "é日本", "k" * 250, "x,y", "ключ"] + [f"user:{i}" for i in range(200)]
IDS = [0, 1, 2, 3, 2**31 - 1, 2**31, 2**31 + 1, 2**40 + 7, 2**63 - 1, -1, -(2**31), -(2**62) - 3]


def test_the_text_hash_is_md5s_first_four_bytes():
    assert text_hash("a") == 0x0cc175b9          # md5("a") = 0cc175b9c0f1b6a8...  (RFC 1321's test suite)
    assert text_hash("") == 0xd41d8cd9           # md5("") = d41d8cd98f00b204...
    assert text_hash("é") == int(hashlib.md5("é".encode()).hexdigest()[:8], 16)


def test_the_id_hash_is_multiplicative_on_the_low_31_bits():
    assert id_hash(1) == 2654435761
    assert id_hash(2) == (2 * 2654435761) % 2**32
    assert id_hash(2**31 + 5) == id_hash(5)
    assert id_hash(2**64 - 1) == id_hash(-1 % 2**64) == ((2**31 - 1) * 2654435761) % 2**32
    numpy = pytest.importorskip("numpy")
    ids = numpy.array([i % 2**64 for i in IDS], dtype=numpy.uint64)
    limit = threshold(0.4)
    assert keep_ids(ids, limit).tolist() == [id_hash(i % 2**64) < limit for i in IDS]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_computes_the_same_hash(dialect):
    con = duckdb.connect()
    duckdb_table(con, "t", "k VARCHAR, i BIGINT", [(k, None) for k in KEYS] + [(None, i) for i in IDS])
    text = sqlglot.transpile(f"SELECT k, {MD5_PREFIX[dialect].format('k')} FROM t WHERE k IS NOT NULL",
                             read=dialect, write="duckdb")[0]
    got = {k: int(h, 16) for k, h in con.execute(text).fetchall()}
    assert got == {k: text_hash(k) for k in KEYS}
    ids = sqlglot.transpile(f"SELECT i, {id_hash_sql('i', dialect)} FROM t WHERE i IS NOT NULL",
                            read=dialect, write="duckdb")[0]
    assert dict(con.execute(ids).fetchall()) == {i: id_hash(i % 2**64) for i in IDS}


OPS = ["get", "set", "GET", " gets ", "Gets", "delete", None, "touch", "set"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_workload_query_keeps_the_replays_keys(dialect):
    con = duckdb.connect()
    ops = [OPS[i % 7 % len(OPS)] for i in range(2000)]
    duckdb_table(con, "log", "t DOUBLE, c VARCHAR, name VARCHAR, bytes BIGINT, ex BIGINT",
                 [(i * 0.5, ops[i], f"user:{i % 500}", 0, 0) for i in range(2000)])
    columns = dict(time="t", op="c", key="name", value_size="bytes", ttl="ex")
    query = sqlglot.transpile(workload_sql(dialect, "log", 0.1, columns), read=dialect, write="duckdb")[0]
    rows = con.execute(query).fetchall()
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert {r[2] for r in rows} == {f"user:{i}" for i in range(500) if key_hash(f"user:{i}") < threshold(0.1)}
    assert 25 < len({r[2] for r in rows}) < 80        # about 50 of 500 keys
    # every row states the whole log's rows and gets (the reader's ops: get or gets, any case, trimmed)
    gets = sum(op is not None and op.strip().lower() in ("get", "gets") for op in ops)
    assert 2000 // 7 * 3 < gets < 2000 // 7 * 5
    assert {r[5:] for r in rows} == {(2000, gets)}


def _workload(path, n: int = 40_000, keys: int = 6000, seed: int = 3) -> None:
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write("time,op,key,value_size,ttl\n")
        for i in range(n):
            key = f"user:{int(keys * rng.random() ** 2)}"
            if rng.random() < 0.6:
                f.write(f"{i * 0.01:.2f},get,{key},0,0\n")
            else:
                f.write(f"{i * 0.01:.2f},set,{key},{rng.choice([300, 900, 2500, 6000])},{rng.choice([0, 0, 60])}\n")


ARGS = ("-m", "4", "--format", "json")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A whole log (a CSV file), the 0.2 sample ``sql --workload --sample 0.2`` draws from it in DuckDB
    (a CSV file), and ``simulate --sample 0.2``'s document of the whole log."""
    where = tmp_path_factory.mktemp("exported")
    whole, drawn = where / "whole.csv", where / "drawn.csv"
    _workload(whole)
    done = run("sql", "--workload", "--sample", "0.2", "--table", "log")
    assert done.exit_code == 0, done.output
    con = duckdb.connect()
    con.execute(f"CREATE TABLE log AS SELECT * FROM read_csv('{whole}', header = true)")
    con.execute(f"COPY ({done.stdout.rstrip().rstrip(';')}) TO '{drawn}' (HEADER, DELIMITER ',')")
    sample = run("simulate", str(whole), "--sample", "0.2", *ARGS)
    assert sample.exit_code == 0, sample.output
    return whole, drawn, json.loads(sample.stdout)


def _sampled(path) -> dict:
    done = run("simulate", str(path), "--sampled", "0.2", *ARGS)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _but_how_drawn(document: dict) -> dict:
    """A simulate document without what says how its sample was drawn: the file read, and ``drawn``."""
    document = json.loads(json.dumps(document))
    document.pop("input")
    document["sample"].pop("drawn")
    return document


def _edited(path, to, column: str, value) -> None:
    """``path``'s rows written to ``to`` with ``column`` set to ``value(row's value, row's index)``."""
    lines = path.read_text().splitlines()
    at = lines[0].split(",").index(column)
    for i in range(1, len(lines)):
        cells = lines[i].split(",")
        cells[at] = str(value(int(cells[at]), i))
        lines[i] = ",".join(cells)
    to.write_text("\n".join(lines) + "\n")


def test_the_exported_sample_replays_as_the_sample_of_the_whole(exported):
    whole, drawn, a = exported
    b = _sampled(drawn)
    # the file states the log it was drawn from: its rows and gets (counted here, not by slabcalc)
    rows = whole.read_text().splitlines()[1:]
    header = drawn.read_text().splitlines()[:2]
    assert header[0] == "time,op,key,value_size,ttl,log_ops,log_gets"
    assert header[1].endswith(f",{len(rows)},{sum(r.split(',')[1] == 'get' for r in rows)}")
    assert b["sample"]["drawn"] and not a["sample"]["drawn"]
    assert a["sample"]["sampled_ops"] == b["sample"]["sampled_ops"] < b["sample"]["ops"] == len(rows)
    assert a["sample"]["adjusted"] and b["sample"]["adjusted"]
    assert a["totals"]["evictions"] > 0 and a["totals"]["get_hits"] > 0
    assert a["sample"]["hit_ratio"] != a["sample"]["sampled_hit_ratio"]     # the adjustment moves it here
    assert _but_how_drawn(b) == _but_how_drawn(a)                           # every figure, the adjusted ones too


def test_a_wrong_count_of_the_log_prints_other_figures(exported, tmp_path):
    whole, drawn, a = exported
    _edited(drawn, tmp_path / "gets.csv", "log_gets", lambda n, i: n + 1000)
    b = _sampled(tmp_path / "gets.csv")
    assert b["sample"]["hit_ratio"] != a["sample"]["hit_ratio"]
    assert b["totals"]["cmd_get"] == a["totals"]["cmd_get"] + 1000
    assert b["sample"]["sampled_hit_ratio"] == a["sample"]["sampled_hit_ratio"]
    _edited(drawn, tmp_path / "ops.csv", "log_ops", lambda n, i: n + 1)
    b = _sampled(tmp_path / "ops.csv")
    assert b["totals"]["ops"] == b["sample"]["ops"] == a["sample"]["ops"] + 1
    assert _but_how_drawn(b) != _but_how_drawn(a)


def test_a_sample_without_its_logs_counts_says_it_is_not_adjusted(exported, tmp_path):
    whole, drawn, a = exported
    lines = [",".join(line.split(",")[:5]) for line in drawn.read_text().splitlines()]
    (tmp_path / "bare.csv").write_text("\n".join(lines) + "\n")
    b = _sampled(tmp_path / "bare.csv")
    assert b["sample"]["drawn"] and not b["sample"]["adjusted"]
    assert b["sample"]["ops"] == b["sample"]["sampled_ops"] == a["sample"]["sampled_ops"]
    assert b["sample"]["hit_ratio"] == b["sample"]["sampled_hit_ratio"] == a["sample"]["sampled_hit_ratio"]
    assert b["sample"]["hit_ratio"] != a["sample"]["hit_ratio"]
    text = run("simulate", str(tmp_path / "bare.csv"), "--sampled", "0.2", "-m", "4")
    assert text.exit_code == 0, text.output
    assert "not adjusted" in text.stdout and "log_ops" in text.stdout
    assert "not adjusted" not in run("simulate", str(drawn), "--sampled", "0.2", "-m", "4").stdout


@pytest.mark.parametrize("column,value,says", [
    ("log_ops", lambda n, i: n + (i == 50), "bad.csv:51: log_ops '"),            # one row of another log
    ("log_gets", lambda n, i: "x" if i == 7 else n, "bad.csv:8: log_ops '"),      # not a number
    ("log_gets", lambda n, i: 10**9, "bad.csv:2: log_ops '"),                     # more gets than operations
    ("log_gets", lambda n, i: 10, "log_ops 40000, log_gets 10: fewer"),       # fewer than the sample's own
])
def test_a_log_count_that_cannot_be_the_logs_is_a_data_error(exported, tmp_path, column, value, says):
    _, drawn, _ = exported
    _edited(drawn, tmp_path / "bad.csv", column, value)
    done = run("simulate", str(tmp_path / "bad.csv"), "--sampled", "0.2", "-m", "4")
    assert done.exit_code == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "bad.csv" in done.stderr and says in done.stderr, done.stderr


def test_log_ops_without_log_gets_is_refused(tmp_path):
    (tmp_path / "one.csv").write_text("time,op,key,value_size,ttl,log_ops\n0,set,a,10,0,5\n")
    done = run("simulate", str(tmp_path / "one.csv"), "--sampled", "0.2", "-m", "4")
    assert done.exit_code == 1 and "log_ops and log_gets come together" in done.stderr


def test_sampled_refuses_a_second_sample(tmp_path):
    whole = tmp_path / "whole.csv"
    _workload(whole, n=100)
    done = run("simulate", str(whole), "--sample", "0.2", "--sampled", "0.2")
    assert done.exit_code == 2 and "--sampled" in done.output
    done = run("sql", "--workload", "--table", "log")
    assert done.exit_code == 2 and "--sample" in done.output


def test_the_oraclegeneral_reader_keeps_the_samples_ids_and_counts_the_rest():
    import io

    from slabcalc.inputs.traces import RECORD, read_oracle_general

    ids = [1 + (i * 7919) % 5000 for i in range(20_000)]
    data = b"".join(RECORD.pack(i // 100, obj, 100, -1) for i, obj in enumerate(ids))
    ops, accounting = read_oracle_general(io.BytesIO(data), "t.oracleGeneral", sample=0.1)
    kept = [op[2] for op in ops]
    assert kept == [i for i in ids if (i * 2654435761) % 2**32 < threshold(0.1)]
    assert accounting.sample == 0.1 and accounting.left_out == len(ids) - len(kept) > 0
    assert accounting.rows == len(ids) and accounting.items == len(kept)


def test_the_csv_reader_keeps_the_samples_keys_and_names_lines_as_they_are(tmp_path):
    from slabcalc.inputs.workload import read_workload

    keys = [f"user:{i}" for i in range(400)]
    lines = ["time,op,key,value_size,ttl"] + [f"{i},set,{k},10,0" for i, k in enumerate(keys)]
    inside = next(i for i, k in enumerate(keys) if text_hash(k) < threshold(0.25))
    lines[inside + 1] = f"{inside},set,{keys[inside]},-5,0"         # a bad row of a sampled key
    with open(tmp_path / "w.csv", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(tmp_path / "w.csv") as f:
        ops, accounting = read_workload(f, "w.csv", sample=0.25)
        kept = [op[2] for op in ops]
    assert kept == [k for i, k in enumerate(keys) if text_hash(k) < threshold(0.25) and i != inside]
    assert accounting.rejected == 1 and accounting.first_rejections[0].line == inside + 2
    assert accounting.left_out == sum(text_hash(k) >= threshold(0.25) for k in keys)
    assert accounting.rows == len(keys)
