"""Reading item-size distributions: every form, every rejection, and the row accounting."""

from __future__ import annotations

import csv
import io
import random
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from slabcalc.inputs import items as inputs
from slabcalc.inputs.items import Accounting, InputError, Item, Rejection, open_input, read_items

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def read(text: str, source: str = "data.csv", **options) -> tuple[Counter, Accounting]:
    """All items of ``text`` summed, and the final accounting."""
    pairs, acct = read_items(io.StringIO(text), source, **options)
    totals: Counter = Counter()
    rows = 0
    for item, n, item_rows in pairs:
        rows += item_rows
        if n:
            totals[item] += n
    # every accepted row reaches the caller, count-0 histogram rows included
    assert rows == acct.rows - acct.rejected
    return totals, acct


def kv(key: int, value: int, flags: int = 0) -> Item:
    return Item(key, value, flags, None)


def sized(size: int) -> Item:
    return Item(None, None, 0, size)


def check_accounting(totals: Counter, acct: Accounting) -> None:
    assert acct.items == sum(totals.values())
    assert acct.rejected <= acct.rows
    assert len(acct.first_rejections) == min(acct.rejected, inputs.FIRST_REJECTIONS)
    assert [r.line for r in acct.first_rejections] == sorted(r.line for r in acct.first_rejections)


# -- the five forms ------------------------------------------------------------

def test_csv_with_key_value_flags():
    totals, acct = read("key,value,flags\n16,100,0\n16,100,0\n10,2000,3\n")
    assert totals == {kv(16, 100): 2, kv(10, 2000, 3): 1}
    assert (acct.format, acct.rows, acct.items, acct.rejected) == ("csv", 3, 3, 0)
    assert acct.source == "data.csv" and not acct.keys_named


@pytest.mark.parametrize("header", [
    "KEY,VALUE", "key_size,value_size", "key_len,value_len", "key_length,value_length",
    "keylen,vlen", "klen,size", "Key Length,Value-Size",
])
def test_column_aliases(header):
    totals, acct = read(f"{header}\n16,100\n")
    assert totals == {kv(16, 100): 1}


@pytest.mark.parametrize("header", ["count", "n", "items", "freq", "frequency"])
def test_count_column_aliases(header):
    totals, acct = read(f"key,value,{header}\n16,100,5\n16,100,7\n8,10,0\n")
    assert totals == {kv(16, 100): 12}
    assert (acct.rows, acct.items) == (3, 12)      # a count-0 row is a row with no items


def test_columns_in_any_order_and_extra_columns_ignored():
    totals, acct = read("name,Value,note,Key,flag\nfoo,100,x,16,2\nbar,100,y,16,2\n")
    assert totals == {kv(16, 100, 2): 2}
    assert (acct.rows, acct.items) == (2, 2)


@pytest.mark.parametrize("delimiter", ["\t", ";"])
def test_tab_and_semicolon_delimiters(delimiter):
    text = f"key{delimiter}value\n16{delimiter}100\n 8{delimiter} 10\n"
    totals, _ = read(text)
    assert totals == {kv(16, 100): 1, kv(8, 10): 1}


def test_quoted_cells():
    totals, acct = read('"key","value"\n"16","100"\n16,100\n"1,6",100\n')
    assert totals == {kv(16, 100): 2}
    assert acct.first_rejections == [Rejection(4, "key is not a number", '"1,6",100')]


def test_value_column_without_key_column_takes_key_length():
    totals, acct = read("value\n100\n200\n100\n", key_length=12)
    assert totals == {kv(12, 100): 2, kv(12, 200): 1}
    assert acct.format == "csv"


def test_item_size_column():
    totals, acct = read("key,value,item_size\n1,2,96\n3,4,96\n5,6,1184\n")
    assert totals == {sized(96): 2, sized(1184): 1}     # key and value are not read
    assert acct.format == "item_size"
    totals, acct = read("ntotal,count\n96,3\n200,2\n")
    assert totals == {sized(96): 3, sized(200): 2}
    assert read("total_size\n96\n")[0] == {sized(96): 1}


def test_column_of_values():
    totals, acct = read("100\n 200 \n100\n0\n", key_length=16)
    assert totals == {kv(16, 100): 2, kv(16, 200): 1, kv(16, 0): 1}
    assert (acct.format, acct.rows, acct.items) == ("values", 4, 4)


def test_metadump():
    text = ("key=user%3A1001 exp=-1 la=1763700000 cas=12 fetch=no cls=1 size=72\n"
            "key=user%3A1002 exp=-1 la=1763700000 cas=13 fetch=yes cls=1 size=72\n"
            "key=a%20b exp=1763709999 la=1763700000 cas=14 fetch=no cls=5 size=300 flags=3\n"
            "END\n")
    totals, acct = read(text)
    assert totals == {sized(72): 2, sized(300): 1}
    assert (acct.format, acct.rows, acct.items, acct.rejected, acct.keys_named) == ("metadump", 3, 3, 0, True)


def test_metadump_rejections():
    text = ("key=a exp=-1 la=1 cas=1 fetch=no cls=1 size=72\n"
            "key=b exp=-1 la=1 cas=1 fetch=no cls=1\n"
            "key=c exp=-1 la=1 cas=1 fetch=no cls=1 size=7x\n"
            "BUSY currently processing crawler request\n"
            "key=d exp=-1 la=1 cas=1 fetch=no cls=1 size=072\n"
            "END\n")
    totals, acct = read(text)
    assert totals == {sized(72): 2}
    assert [(r.line, r.reason) for r in acct.first_rejections] == [
        (2, "missing column size"), (3, "size is not a number"),
        (4, "the crawler was busy when this was saved (BUSY): the dump may lack items")]
    assert (acct.rows, acct.items, acct.rejected) == (5, 2, 3)


def test_stats_sizes():
    totals, acct = read("STAT 96 1234\r\nSTAT 128 5\r\nSTAT 96 1\r\nEND\r\n")
    assert totals == {sized(96): 1235, sized(128): 5}
    assert (acct.format, acct.rows, acct.items) == ("stats_sizes", 3, 1240)


def test_stats_sizes_rejections():
    totals, acct = read("STAT 96 10\nSTAT 128\nSTAT x 3\nstat 96 1\nSTAT 160 -2\n")
    assert totals == {sized(96): 10}
    assert [(r.line, r.reason) for r in acct.first_rejections] == [
        (2, "missing column count"), (3, "size is not a number"), (4, "not a STAT line"), (5, "negative count")]


@pytest.mark.parametrize("text", ["STAT sizes_status disabled\r\nEND\r\n", "STAT 96 1\nSTAT sizes_status disabled\n"])
def test_stats_sizes_disabled(text):
    with pytest.raises(InputError) as raised:
        read(text, "stats.txt")
    assert str(raised.value) == (
        "stats.txt: memcached's size tracking is disabled (start it with -o track_sizes)")


def test_plain_stats_output_is_not_stats_sizes():
    with pytest.raises(InputError, match=r"^stats.txt:1: not 'stats sizes' output"):
        read("STAT pid 1234\nSTAT uptime 5\n", "stats.txt")


# -- the example files -----------------------------------------------------------

@pytest.mark.parametrize("name,fmt,rows", [
    ("value_sizes.txt", "values", 200), ("items.csv", "csv", 300), ("histogram.csv", "csv", 20),
    ("metadump.txt", "metadump", 50), ("stats_sizes.txt", "stats_sizes", 10),
])
def test_examples(name, fmt, rows):
    stream, source = open_input(str(EXAMPLES / name))
    with stream:
        pairs, acct = read_items(stream, source, key_length=16)
        totals = Counter()
        for item, n, _rows in pairs:
            totals[item] += n
    assert (acct.format, acct.rows, acct.rejected) == (fmt, rows, 0)
    assert acct.source == str(EXAMPLES / name)
    check_accounting(totals, acct)
    if fmt in ("metadump", "stats_sizes"):
        assert all(item.key is None and item.item_size > 48 for item in totals)
    else:
        assert all(1 <= item.key <= 250 and item.value >= 0 for item in totals)


def test_example_sizes_are_plausible():
    # metadump size= is ntotal: 48 header + 8 CAS + key + 1 + value + 2 (+4 with flags) >= key + 59
    for line in (EXAMPLES / "metadump.txt").read_text().splitlines()[:-1]:
        fields = dict(field.split("=", 1) for field in line.split())
        assert int(fields["size"]) >= len(fields["key"].replace("%3A", ":")) + 59
    assert (EXAMPLES / "metadump.txt").read_text().endswith("END\n")
    for line in (EXAMPLES / "stats_sizes.txt").read_text().splitlines()[:-1]:
        assert int(line.split()[1]) % 32 == 0       # memcached's 32-byte buckets
    counts = [int(row["count"]) for row in csv.DictReader((EXAMPLES / "histogram.csv").open())]
    assert min(counts) >= 250 and max(counts) >= 1000


# -- BOM, CRLF, blank lines ------------------------------------------------------------

@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_bom_crlf_and_blank_lines(eol):
    text = eol.join(["\ufeff", "", "key,value", "16,100", "", "  ", "16,100", "8,10", ""]) + eol
    totals, acct = read(text)
    assert totals == {kv(16, 100): 2, kv(8, 10): 1}
    assert (acct.rows, acct.items, acct.rejected) == (3, 3, 0)


def test_bom_before_a_column_of_values_and_metadump():
    assert read("\ufeff100\r\n\r\n200\r\n", key_length=5)[0] == {kv(5, 100): 1, kv(5, 200): 1}
    assert read("\ufeffkey=a exp=-1 la=1 cas=1 fetch=no cls=1 size=72\r\nEND\r\n")[0] == {sized(72): 1}


def test_bom_is_read_by_open_input(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes("\ufeffkey,value\r\n16,100\r\n".encode())
    stream, source = open_input(str(path))
    with stream:
        totals = {i: n for i, n, _ in read_items(stream, source)[0]}
    assert totals == {kv(16, 100): 1}


def test_last_line_without_line_end():
    assert read("key,value\n16,100\n16,100")[0] == {kv(16, 100): 2}
    assert read("key,value\r\n16,100\r\n8,1")[0] == {kv(16, 100): 1, kv(8, 1): 1}
    assert read("7", key_length=3)[0] == {kv(3, 7): 1}


def test_spellings_of_one_item_are_handed_out_once():
    text = "key,value\n16,100\n 16, 100\n016,0100\n16,100\r\n\"16\",\"100\"\n+16,100\n16 ,100 \n"
    pairs, acct = read_items(io.StringIO(text), "data.csv")
    assert list(pairs) == [(kv(16, 100), 7, 7)]
    assert (acct.rows, acct.items) == (7, 7)


# -- rejections -----------------------------------------------------------------

@pytest.mark.parametrize("row,reason", [
    ("abc,100,0", "key is not a number"),
    ("16,abc,0", "value is not a number"),
    ("16,100,x", "flags is not a number"),
    ("16,1_000,0", "value is not a number"),
    ("16,١٠٠,0", "value is not a number"),
    ("16,nan,0", "value is not a number"),
    ("-1,100,0", "negative key"),
    ("16,-100,0", "negative value"),
    ("16,100,-1", "negative flags"),
    ("16,-1.5,0", "negative value"),
    ("16,1.5,0", "value is not a whole number"),
    ("16,100.0,0", "value is not a whole number"),
    ("16,1e3,0", "value is not a whole number"),
    ("16,,0", "missing column value"),
    ("16", "missing column value"),
    (",100,0", "missing column key"),
    ("16,100,", "missing column flags"),
    ("0,100,0", "key length must be 1..250"),
    ("251,100,0", "key length must be 1..250"),
    ("16,100,4294967296", "flags must be 0..4294967295"),
])
def test_rejection_reasons(row, reason):
    totals, acct = read(f"key,value,flags\n1,1,0\n{row}\n")
    assert acct.first_rejections == [Rejection(3, reason, row)]
    assert (acct.rows, acct.items, acct.rejected) == (2, 1, 1)
    assert totals == {kv(1, 1): 1}


def test_limits_are_accepted():
    totals, acct = read("key,value,flags\n1,0,0\n250,1048576,4294967295\n+5,10,0\n")
    assert totals == {kv(1, 0): 1, kv(250, 1048576, 4294967295): 1, kv(5, 10): 1}
    assert acct.rejected == 0


@pytest.mark.parametrize("row,reason", [("x", "count is not a number"), ("-2", "negative count"),
                                        ("1.5", "count is not a whole number"), ("", "missing column count")])
def test_count_rejections(row, reason):
    totals, acct = read(f"key,value,count\n16,100,{row}\n16,100,3\n")
    assert acct.first_rejections == [Rejection(2, reason, f"16,100,{row}")]
    assert (acct.rows, acct.items, acct.rejected) == (2, 3, 1)


def test_values_rejections():
    totals, acct = read("100\nabc\n-5\n2.5\n\n100 200\n", key_length=10)
    assert [(r.line, r.reason, r.text) for r in acct.first_rejections] == [
        (2, "value is not a number", "abc"), (3, "negative value", "-5"),
        (4, "value is not a whole number", "2.5"), (6, "value is not a number", "100 200")]
    assert (acct.rows, acct.items, acct.rejected) == (5, 1, 4)


def test_rejection_text_is_the_line_truncated():
    row = "16," + "9" * 100 + "x"
    _, acct = read(f"key,value\n{row}\r\n")
    assert acct.first_rejections[0].text == row[:80]


def test_first_five_rejections_with_their_lines():
    lines = ["key,value"] + ["16,100"] * 3 + ["bad,1", "16,100", "bad,1", "", "8,-1", "8,1", "x,y", "z,1",
                                             "bad,1", "q,1"]
    totals, acct = read("\n".join(lines) + "\n")
    assert [(r.line, r.reason) for r in acct.first_rejections] == [
        (5, "key is not a number"), (7, "key is not a number"), (9, "negative value"),
        (11, "key is not a number"), (12, "key is not a number")]
    assert (acct.rows, acct.items, acct.rejected) == (12, 5, 7)
    check_accounting(totals, acct)


def test_rejections_across_blocks(monkeypatch):
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 24)
    lines = ["key,value"] + [f"{i % 7 + 1},{i}" if i % 5 else f"bad{i % 2},{i}" for i in range(40)]
    totals, acct = read("\n".join(lines) + "\n")
    assert [r.line for r in acct.first_rejections] == [2, 7, 12, 17, 22]
    assert acct.first_rejections[1] == Rejection(7, "key is not a number", "bad1,5")
    assert (acct.rows, acct.items, acct.rejected) == (40, 32, 8)


# -- strict mode -----------------------------------------------------------------

def test_strict_raises_at_the_first_bad_row():
    text = "key,value\n" + "16,100\n" * 15 + "16,abc\n16,-1\n"
    with pytest.raises(InputError) as raised:
        read(text, strict=True)
    assert str(raised.value) == "data.csv:17: value is not a number: 'abc'"


@pytest.mark.parametrize("text,message", [
    ("key,value\n16,\n", "data.csv:2: missing column value: '16,'"),
    ("key,value\n300,1\n", "data.csv:2: key length must be 1..250: '300'"),
    ("key,value\n\n\n16, -4 \n", "data.csv:4: negative value: '-4'"),
    ("1\nx\n", "data.csv:2: value is not a number: 'x'"),
])
def test_strict_messages(text, message):
    with pytest.raises(InputError) as raised:
        read(text, strict=True, key_length=3)
    assert str(raised.value) == message


def test_strict_finds_the_first_of_many_bad_rows_in_a_block(monkeypatch):
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 6000)
    text = "key,value\n" + "16,100\n" * 30 + "zz,1\n" + "16,aa\n" + "zz,1\n"
    with pytest.raises(InputError, match=r"^data.csv:32: key is not a number: 'zz'$"):
        read(text, strict=True)


def test_strict_accepts_good_input():
    totals, acct = read("key,value\n16,100\n\n8,1\n", strict=True)
    assert acct.rejected == 0 and sum(totals.values()) == 2


# -- unusable input ---------------------------------------------------------------

def test_missing_key_column():
    with pytest.raises(InputError) as raised:
        read("value,flags\n100,0\n")
    assert str(raised.value) == "data.csv: no key column; give --key N"


def test_column_of_values_needs_a_key():
    with pytest.raises(InputError) as raised:
        read("100\n200\n", "<stdin>")
    assert str(raised.value) == "<stdin>: a column of value sizes needs --key N"


@pytest.mark.parametrize("key_length", [0, 251])
def test_key_length_out_of_range(key_length):
    with pytest.raises(InputError, match=r"^data.csv: key length must be 1\.\.250, not "):
        read("100\n", key_length=key_length)


@pytest.mark.parametrize("text,message", [
    ("16,100\n17,200\n", "data.csv:1: no header: the first line must name the columns"),
    ("key,flags\n1,2\n", "data.csv:1: no value or item_size column in the header 'key,flags'"),
    ("\n\nfoo;bar\n", "data.csv:3: no value or item_size column"),
    ("key,value,klen\n1,2,3\n", "data.csv:1: two key columns: 'key' and 'klen'"),
    ("", "data.csv: empty input"),
    ("\n \r\n", "data.csv: empty input"),
])
def test_unusable_headers(text, message):
    with pytest.raises(InputError) as raised:
        read(text)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_not_utf8(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(b"key,value\n16,100\n" + b"\xff\xfe,1\n" * 3000)
    stream, source = open_input(str(path))
    with stream, pytest.raises(InputError, match=r"^.*data.csv: not UTF-8 text \(line \d+ or after: "):
        list(read_items(stream, source)[0])


def test_open_input_errors(tmp_path):
    with pytest.raises(InputError) as raised:
        open_input(str(tmp_path / "nope.csv"))
    assert str(raised.value) == f"{tmp_path / 'nope.csv'}: cannot read: No such file or directory"
    with pytest.raises(InputError, match="cannot read: Is a directory"):
        open_input(str(tmp_path))


def test_open_input_stdin(monkeypatch):
    raw = io.TextIOWrapper(io.BytesIO("\ufeffkey,value\r\n16,100\r\n".encode()), encoding="latin-1")
    monkeypatch.setattr(sys, "stdin", raw)
    stream, source = open_input("-")
    assert source == "<stdin>"
    assert {i: n for i, n, _ in read_items(stream, source)[0]} == {kv(16, 100): 1}


# -- streaming: blocks, hand-outs, progress -----------------------------------------

def test_aggregation_across_a_block_boundary(monkeypatch):
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 18)
    text = "key,value\n" + "16,100\n8,1\n" * 5 + "\n16,100\n"
    pairs, acct = read_items(io.StringIO(text), "data.csv")
    pairs = list(pairs)
    totals = Counter()
    for item, n, _rows in pairs:
        totals[item] += n
    assert totals == {kv(16, 100): 6, kv(8, 1): 5}
    assert (acct.rows, acct.items) == (11, 11)


def test_items_are_handed_out_when_too_many_are_pending(monkeypatch):
    monkeypatch.setattr(inputs, "FAST", False)      # line by line; the column counter hands out at the end
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 12)
    monkeypatch.setattr(inputs, "CACHE_MAX", 3)
    text = "key,value\n" + "".join(f"{i % 6 + 1},{i % 5}\n" for i in range(60))
    pairs, acct = read_items(io.StringIO(text), "data.csv")
    seen = []
    for item, n, _rows in pairs:
        seen.append((item, n))
        if len(seen) == 1:
            assert acct.rows < 60               # handed out before the end of the input
    totals = Counter()
    for item, n in seen:
        totals[item] += n
    assert totals == Counter(kv(i % 6 + 1, i % 5) for i in range(60))
    assert len(seen) > len(totals)              # the same item came again later


def test_progress_is_called_once_per_block(monkeypatch):
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 24)
    calls = []
    text = "key,value\n" + "16,100\n" * 9 + "\n" + "x,1\n"
    pairs, acct = read_items(io.StringIO(text), "data.csv", progress=calls.append)
    assert calls == []                          # nothing is read before the iterator is
    list(pairs)
    assert calls == [4, 8, 10]      # 24 characters, then to the line end: 4 lines a block; blank is no row
    assert (acct.rows, acct.items, acct.rejected) == (10, 9, 1)


def test_the_form_is_known_before_iterating():
    pairs, acct = read_items(io.StringIO("key,value\n16,100\n"), "data.csv")
    assert (acct.format, acct.rows) == ("csv", 0)
    assert list(pairs) == [(kv(16, 100), 1, 1)]
    assert acct.rows == 1


# -- the fast path reads exactly what the slow path reads ---------------------------------

def reference(text: str, key_length: int | None = None, bare: bool = False) -> tuple[Counter, list[int], int]:
    """What a line-by-line reading of a key,value[,flags] CSV gives: items, rejected lines, rows.

    ``bare``: the lines are bare numbers (a column of values), not CSV.
    """
    lines = text.split("\n")
    header = [name.strip() for name in lines[0].split(",")]
    totals: Counter = Counter()
    bad, rows = [], 0
    for number, line in enumerate(lines[1:-1], start=2):
        if not line.strip(" \t\r"):
            continue
        rows += 1
        cells = [line] if bare else next(csv.reader([line.rstrip("\r")]))
        cells = [cell.strip(" \t\r") for cell in cells]
        cells += [""] * (len(header) - len(cells))
        row = dict(zip(header, cells))
        row.setdefault("key", str(key_length))
        row.setdefault("flags", "0")
        if not all(re.fullmatch(r"\+?[0-9]+", cell) for cell in row.values()):
            bad.append(number)
            continue
        key, value, flags = int(row["key"]), int(row["value"]), int(row["flags"])
        if not (1 <= key <= 250 and flags <= 0xFFFFFFFF):
            bad.append(number)
            continue
        totals[kv(key, value, flags)] += 1
    return totals, bad, rows


CELLS = ["16", "16", "100", "0", "250", "251", "0016", " 16", "16 ", "\t7", "-3", "1.5", "", "x", "+4",
         "4294967295", "4294967296", '"12"', "99999999999"]


@pytest.mark.parametrize("fast", [True, False], ids=["columns", "lines"])
@pytest.mark.parametrize("seed", range(16))
def test_fast_and_slow_paths_agree(monkeypatch, seed, fast):
    monkeypatch.setattr(inputs, "FAST", fast)
    rng = random.Random(seed)
    monkeypatch.setattr(inputs, "BLOCK_SIZE", rng.choice([1, 10, 100, 1 << 16]))
    monkeypatch.setattr(inputs, "CACHE_MAX", rng.choice([2, 50, 1 << 20]))
    columns = rng.choice([["key", "value"], ["value", "key"], ["key", "value", "flags"], ["value"]])
    eol = rng.choice(["\n", "\r\n"])
    odd = rng.choice([0.0, 0.02, 0.3])
    rows = []
    for _ in range(rng.randint(50, 400)):
        if rng.random() < odd:
            row = rng.choice([",".join(rng.choice(CELLS) for _ in columns)] * 8 + ["", " ", "1,2,3,4"])
        else:
            row = ",".join(str(rng.randint(1, 30)) if name == "key" else str(rng.choice([0, 5, 1000]))
                           for name in columns)
        rows.append(row + (eol if rng.random() > odd else rng.choice(["\n", "\r\n"])))
    headerless = columns == ["value"] and seed % 2     # a column of values: no header
    if headerless:
        rows[0] = "7" + eol
    text = ",".join(columns) + eol + "".join(rows)
    expected, bad, rows_expected = reference(text, key_length=9, bare=headerless)
    totals, acct = read(text.split(eol, 1)[1] if headerless else text, key_length=9)
    assert acct.format == ("values" if headerless else "csv")
    assert totals == expected
    assert (acct.rows, acct.rejected) == (rows_expected, len(bad))
    assert [r.line + headerless for r in acct.first_rejections] == bad[:5]
    check_accounting(totals, acct)


def test_one_hand_out_has_each_item_once(monkeypatch):
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 30)
    text = "key,value\n" + "16,100\n 16,100\n16,100\r\n\n016,100\n8,1\n" * 10
    pairs = list(read_items(io.StringIO(text), "data.csv")[0])
    assert sorted(pairs, key=lambda pair: pair[0].key) == [(kv(8, 1), 10, 10), (kv(16, 100), 40, 40)]


# -- the pieces --------------------------------------------------------------------------

def test_new_items_are_items():
    built = inputs.new_items(3, [1, 2, 3], [10, 20, 30], [0, 0, 5], [None] * 3)
    assert built == [kv(1, 10), kv(2, 20), kv(3, 30, 5)]
    assert [hash(item) for item in built] == [hash(kv(1, 10)), hash(kv(2, 20)), hash(kv(3, 30, 5))]
    with pytest.raises(AttributeError):
        built[0].key = 5                        # still frozen


def test_formats_are_listed():
    assert set(inputs.FORMATS) == {"csv", "values", "item_size", "metadump", "stats_sizes"}


def test_a_saved_metadump_session_is_recognised():
    # what a terminal session saves: the echoed command, 1.6.45's OK, the items, END
    text = ("lru_crawler metadump all\r\nOK\r\n"
            "key=a exp=-1 la=1 cas=2 fetch=no cls=4 size=168 flags=0 \n"
            "key=b exp=-1 la=1 cas=3 fetch=no cls=4 size=170 flags=0 \nEND\r\n")
    totals, acct = read(text, "dump.txt")
    assert totals == Counter({sized(168): 1, sized(170): 1})
    assert acct.rejected == 0
    check_accounting(totals, acct)


def test_a_busy_crawler_reply_is_a_rejected_row_that_says_why():
    text = "key=a exp=-1 la=1 cas=2 fetch=no cls=4 size=168 flags=0\nBUSY currently processing crawler request\nEND\n"
    totals, acct = read(text, "dump.txt")
    assert totals == Counter({sized(168): 1}) and acct.rejected == 1
    assert "the crawler was busy" in acct.first_rejections[0].reason
    check_accounting(totals, acct)


def test_one_metadump_key_decoder_counts_bytes_as_memcached_holds_them():
    # issue 30: stats --read-items counted user%FF%FE as 10 bytes (unquote to text, then UTF-8:
    # each undecodable byte became a 3-byte U+FFFD) where the reader counts 6
    from slabcalc.inputs.metadump import metadump_key_bytes, metadump_key_length

    lines = ["key=user%FF%FE exp=-1 la=1763700000 cas=1 fetch=no cls=1 size=70",
             "key=user%FF%FD exp=-1 la=1763700000 cas=2 fetch=no cls=1 size=70",
             "key=abcdefghij exp=-1 la=1763700000 cas=3 fetch=no cls=1 size=70"]
    assert metadump_key_bytes(lines[0]) == b"user\xff\xfe"
    assert metadump_key_length(lines) == 6
    named = []
    read = read_items(io.StringIO("\n".join(lines) + "\nEND\n"), "dump", names=named.extend)[0]
    assert {item: n for item, n, _ in read} == {Item(None, None, 0, 70): 3}     # the one pass counts them
    assert [name for name, _, _ in named] == ["user\ufffd\ufffd", "user\ufffd\ufffd", "abcdefghij"]
