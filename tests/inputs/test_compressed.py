"""Issue 41: gzip, bzip2 and xz inputs are read with the standard library, told by their first bytes
(whatever the name, and on standard input too), a block at a time; a cut-short stream is one line."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import sys

import pytest
from click.testing import CliRunner

from helpers import ROOT, run
from slabcalc.cli import cli
from slabcalc.inputs.rows import open_input

COMPRESS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}
ITEMS = (ROOT / "examples" / "items.csv").read_bytes()
WORKLOAD = (ROOT / "examples" / "calcification.csv").read_bytes()


def _answer(result) -> dict:
    """A command's JSON without what names its input."""
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    document.pop("input", None)
    document.pop("source", None)
    document.get("summary", {}).pop("input", None)
    return document


def _stdin(args: list[str], data: bytes):
    return CliRunner().invoke(cli, args, input=data, prog_name="slabcalc")


@pytest.mark.parametrize("kind", COMPRESS)
def test_a_compressed_item_file_reads_as_the_plain_one(tmp_path, kind):
    """Before: "not UTF-8 text" (a file named *.csv.gz went to DuckDB, when installed)."""
    plain = tmp_path / "items.csv"
    plain.write_bytes(ITEMS)
    packed = tmp_path / "items.dat"               # told by its bytes, not its name
    packed.write_bytes(COMPRESS[kind](ITEMS))
    expected = _answer(run("report", str(plain), "-m", "64", "--format", "json"))
    assert _answer(run("report", str(packed), "-m", "64", "--format", "json")) == expected
    assert _answer(_stdin(["report", "-", "-m", "64", "--format", "json"], COMPRESS[kind](ITEMS))) == expected


@pytest.mark.parametrize("kind", COMPRESS)
def test_a_compressed_workload_on_stdin_replays_as_the_plain_one(tmp_path, kind):
    plain = tmp_path / "w.csv"
    plain.write_bytes(WORKLOAD)
    expected = _answer(run("simulate", str(plain), "-m", "4", "--format", "json"))
    assert _answer(_stdin(["simulate", "-", "-m", "4", "--format", "json"], COMPRESS[kind](WORKLOAD))) == expected


def test_a_gzipped_csv_without_duckdb_is_read_by_the_standard_library(tmp_path, monkeypatch):
    plain, packed = tmp_path / "items.csv", tmp_path / "items.csv.gz"
    plain.write_bytes(ITEMS)
    packed.write_bytes(gzip.compress(ITEMS))
    expected = _answer(run("report", str(plain), "--format", "json"))
    monkeypatch.setitem(sys.modules, "duckdb", None)          # import duckdb now fails
    assert _answer(run("report", str(packed), "--format", "json")) == expected


def test_compressed_stats_replies_and_oracle_general_traces(tmp_path):
    stats = (ROOT / "examples" / "stats-calcified.txt").read_bytes()
    (tmp_path / "s.txt").write_bytes(stats)
    (tmp_path / "s.txt.xz").write_bytes(lzma.compress(stats))
    one, other = (run("stats", str(tmp_path / name), "--format", "json") for name in ("s.txt", "s.txt.xz"))
    assert one.exit_code == other.exit_code == 0
    assert one.stdout.replace("s.txt", "") == other.stdout.replace("s.txt.xz", "")
    import struct

    records = b"".join(struct.pack("<IQIq", t, t % 7, 100 + t % 3, -1) for t in range(50))
    (tmp_path / "t.oracleGeneral").write_bytes(records)
    (tmp_path / "t.oracleGeneral.gz").write_bytes(gzip.compress(records))
    plain, packed = (run("simulate", str(tmp_path / n), "-m", "4", "--format", "json")
                     for n in ("t.oracleGeneral", "t.oracleGeneral.gz"))
    assert _answer(plain)["totals"] == _answer(packed)["totals"]


@pytest.mark.parametrize("kind", COMPRESS)
def test_a_cut_short_stream_is_one_line_naming_the_file(tmp_path, kind):
    packed = COMPRESS[kind](WORKLOAD * 20)
    cut = tmp_path / "w.csv"
    cut.write_bytes(packed[:len(packed) // 2])
    result = run("simulate", str(cut), "-m", "4")
    assert result.exit_code == 1
    line, = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {cut}: not whole {kind} data"), line


def test_a_compressed_input_is_read_as_it_is_consumed(tmp_path):
    """Memory stays bounded: opening a large compressed file and reading its first line reads a small
    part of it, not the whole."""
    rows = b"key,value\n" + b"".join(b"%d,%d\n" % (1 + i % 200, (i * 7919) % 100_000) for i in range(400_000))
    path = tmp_path / "big.csv.xz"
    path.write_bytes(lzma.compress(rows))
    stream, _ = open_input(str(path))
    with stream:
        assert stream.readline() == "key,value\n"
        raw = stream.buffer.raw.owned
        assert raw.tell() < path.stat().st_size // 4


def test_a_corrupt_gzip_block_is_one_line_naming_the_file(tmp_path):
    """A gzip stream whose deflate data is damaged raises zlib.error, not OSError: the seeded fuzzer found
    it as a traceback (scripts/fuzz.py --seed 5302: ``compare`` on such a file).  Its first deflate block's
    code lengths garbled, every command reading it says so in one line."""
    packed = bytearray(gzip.compress(WORKLOAD * 20))
    for at in range(12, 40):
        packed[at] ^= 0x5A
    bad = tmp_path / "w.csv"
    bad.write_bytes(bytes(packed))
    for args in (("compare", str(bad), "--profile", "1.4.24"), ("simulate", str(bad), "-m", "4")):
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        line, = result.stderr.strip().splitlines()
        assert line.startswith(f"Error: {bad}: not whole gzip data"), line
