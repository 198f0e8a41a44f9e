"""Issue 41, nothing read wrongly in silence: a header cell a letter or two from a column slabcalc reads
is an error naming the file, the cell and the column it resembles (before, ``tme`` was an ignored
column and every operation happened at time 0, exit 0); a column the command does not read is named
on stderr, in one line."""

from __future__ import annotations

import json

import pytest

from helpers import run
from slabcalc.inputs.rows import near_name

WORKLOAD = "0,set,a,100,0\n1,set,b,200,0\n2,get,a,,\n"


def _one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("header, cell, known", [
    ("tme,op,key,value_size,ttl", "tme", "time"),
    ("time,op,key,value_size,tll", "tll", "ttl"),
    ("time,op,kye,value_size,ttl", "kye", "key"),
    ("time,op,key,vlaue_size,ttl", "vlaue_size", "value_size"),
    ("time,opp,key,value_size,ttl", "opp", "op"),
])
def test_a_misspelt_workload_column_is_an_error_naming_both(tmp_path, header, cell, known):
    path = tmp_path / "w.csv"
    path.write_text(header + "\n" + WORKLOAD)
    result = run("simulate", str(path), "-m", "4")
    assert result.exit_code == 1, result.output
    line = _one_line(result)
    assert line.startswith(f"Error: {path}:1: unknown column {cell!r}: is it {known!r}?"), line


@pytest.mark.parametrize("command", [["report"], ["compare"], ["optimize"]], ids=" ".join)
def test_a_misspelt_item_column_is_an_error_naming_both(tmp_path, command):
    """Before: ``kye,value`` made report say "no key column; give --key N"."""
    path = tmp_path / "i.csv"
    path.write_text("kye,value\n" + "".join(f"{10 + i % 5},{100 * (i + 1)}\n" for i in range(50)))
    result = run(*command, str(path))
    assert result.exit_code == 1, result.output
    assert _one_line(result).startswith(f"Error: {path}:1: unknown column 'kye': is it 'key'?")


def test_an_unused_workload_column_is_named_and_the_replay_is_unchanged(tmp_path):
    plain, extra = tmp_path / "plain.csv", tmp_path / "extra.csv"
    plain.write_text("time,op,key,value_size,ttl\n" + WORKLOAD)
    extra.write_text("time,op,key,value_size,ttl,client_id,region\n"
                     + "".join(row + ",7,eu\n" for row in WORKLOAD.splitlines()))
    one, other = (run("simulate", str(p), "-m", "4", "--format", "json") for p in (plain, extra))
    assert one.exit_code == other.exit_code == 0, other.output
    assert one.stderr == ""
    assert _one_line(other) == f"note: {extra}: simulate does not use the columns 'client_id', 'region'"
    strip = lambda doc: {k: v for k, v in doc.items() if k != "input"}     # noqa: E731
    assert strip(json.loads(one.stdout)) == strip(json.loads(other.stdout))


@pytest.mark.parametrize("header, unused", [
    ("key,value,ttl", "'ttl'"),                 # a workload's column: not a misspelling, not read by report
    ("key,value,ip", "'ip'"),                   # two letters: too short to call a slip of 'op'
    ("key,keys,value", "'keys'"),               # a slip of 'key', but 'key' is given: a column of its own
    ("key,key_name,value", "'key_name'"),       # the key length is read from 'key', not from the names
    ("item_size,key,value", "'key', 'value'"),  # ntotal holds them: not read
])
def test_an_unused_item_column_is_named(tmp_path, header, unused):
    path = tmp_path / "i.csv"
    cells = {"key": "10", "value": "100", "ttl": "5", "ip": "1", "keys": "3", "key_name": "abc",
             "item_size": "200"}
    path.write_text(header + "\n" + ",".join(cells[c] for c in header.split(",")) + "\n")
    result = run("report", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    assert _one_line(result).startswith(f"note: {path}: report does not use the column"), result.stderr
    assert _one_line(result).endswith(" " + unused)


def test_every_column_read_says_nothing(tmp_path):
    path = tmp_path / "i.csv"
    path.write_text("key,value,flags,count\n10,100,0,3\n")
    result = run("report", str(path), "--format", "json")
    assert result.exit_code == 0 and result.stderr == ""


def test_a_warehouse_files_misspelt_column_is_an_error_too(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "i.parquet"
    duckdb.sql("SELECT 10 AS kye, 100 AS value").write_parquet(str(path))
    result = run("report", str(path))
    assert result.exit_code == 1
    assert "unknown column 'kye': is it 'key'?" in _one_line(result)
    duckdb.sql("SELECT 10 AS key, 100 AS value, 3 AS shard").write_parquet(str(path))
    result = run("report", str(path), "--format", "json")
    assert result.exit_code == 0
    assert _one_line(result) == f"note: {path}: report does not use the column 'shard'"


@pytest.mark.parametrize("name, known, near", [
    ("tme", ["time", "ttl"], "time"), ("tll", ["time", "ttl"], "ttl"), ("kye", ["key"], "key"),
    ("timestmap", ["timestamp"], "timestamp"), ("valeu_sze", ["value_size"], "value_size"),
    ("ip", ["op"], None), ("region", ["op", "key", "ttl"], None), ("client_id", ["key_name"], None),
    ("abcd", ["time"], None),
])
def test_near_name(name, known, near):
    assert near_name(name, known) == near
