"""The workload reader's fast reading: time cells read digit by digit, lines split a block at a time.

Both must give exactly what the plain reading gives: float()'s number to the bit, and the stream's own
lines (its numbering in every rejection).  Run compiled and plain (``SLABCALC_PURE=1``): compiled, the
reader uses its own digit loop (``_seconds``); plain, float() itself.
"""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slabcalc.engines.simulate import GET, SET
from slabcalc.errors import InputError
from slabcalc.inputs.workload import BLOCK, _seconds, read_workload

# Cells of 16 digits and a point where the digits' integer (past 2**53, so rounded) over 10**k is not
# float()'s number: what a reader allowing one more digit would get wrong.
ROUNDED_TWICE = ["95.74890682883607", "946.8585017754865", "98113286.09574339", "95299841956680.99"]
EDGES = ["0", "00", "0.0", ".5", "5.", "000012.5", "12.3456", "0.1", "0.3", "2.675", "1" * 15, "9" * 15,
         "9" * 16, "1" * 16, "9007199254740993", "9" * 15 + ".", "." + "9" * 15, "0." + "0" * 13 + "1",
         "1" * 8 + "." + "1" * 7, "0.98015558059171", "87588025.5329291", "58655.4950134684", "1e5", "1E5",
         "+1", "-1", "-0", " 1", "1 ", "nan", "inf", "-inf", "1_0", ".", "", "..", "1.2.3", "٣", "0x1", "12a",
         "1\n", "1/2", ":"] + ROUNDED_TWICE


def same_as_float(cell: str) -> None:
    try:
        want = float(cell)
    except ValueError:
        with pytest.raises(ValueError):
            _seconds(cell)
    else:
        assert _seconds(cell).hex() == want.hex(), cell


def test_time_cells_read_digit_by_digit_are_what_float_reads():
    # _seconds reads digits[.digits] of at most 15 digits as their integer over 10**k (both exact doubles,
    # one correctly rounded division) and leaves any other text to float(): float()'s double, bit for bit
    rng = random.Random(31)
    cells = EDGES + ["".join(rng.choice("0123456789.") for _ in range(rng.randrange(1, 19))) for _ in range(4000)]
    cells += [f"{rng.uniform(0, 10 ** rng.randrange(1, 12)):.{rng.randrange(0, 12)}f}" for _ in range(4000)]
    for cell in cells:
        same_as_float(cell)


@given(st.one_of(st.tuples(st.text("0123456789", max_size=17), st.sampled_from(("", ".")),
                           st.text("0123456789", max_size=17)).map("".join),
                 st.text(alphabet="0123456789.+-e_ n", max_size=18),
                 st.floats(min_value=0, max_value=2e9).map(repr),
                 st.tuples(st.integers(0, 10 ** 16), st.integers(0, 16)).map(lambda p: f"{p[0]:0{p[1]}d}")))
def test_any_time_cell_reads_as_float_reads_it(cell):
    same_as_float(cell)


def numbered(rng: random.Random, rows: int, bad_from: int):
    """A CSV text of ``rows`` lines after its header with \\n and \\r\\n ends, blank lines, quoted cells
    and (from line ``bad_from``) bad rows at random, its last line without an end; the good rows' keys
    and the bad rows' line numbers."""
    lines, good, bad = ["time,op,key,value_size"], [], []
    for n in range(2, rows + 2):
        kind = rng.random()
        if kind < 0.03:
            lines.append(" " * rng.randrange(3))
        elif kind < 0.06 and n >= bad_from:
            lines.append(f"{n},set,k{n},x{n}")
            bad.append(n)
        elif kind < 0.08:
            lines.append(f'{n},set,"k,{n}",10')
            good.append(f"k,{n}")
        else:
            lines.append(f"{n}.{rng.randrange(1000)},set,k{n},{rng.randrange(1000)}")
            good.append(f"k{n}")
    text = "".join(line + rng.choice(("\n", "\r\n")) for line in lines[:-1]) + lines[-1]
    return text, good, bad


def test_rows_read_a_block_at_a_time_keep_their_line_numbers(tmp_path):
    # 9 000 lines over three 64 KiB blocks, rejections only in the second and third: every row, every
    # rejection's line, blank lines and quotes, as a file opened as simulate opens it (newline=""), a
    # StringIO, a translating StringIO, and lines given one by one
    text, good, bad = numbered(random.Random(5), 9000, 6000)
    assert len(text) > 2 * BLOCK and text.index(f"\n{bad[0]},") > BLOCK and len(bad) > 5
    path = tmp_path / "w.csv"
    path.write_text(text, newline="")
    streams = [lambda: open(path, encoding="utf-8-sig", newline=""), lambda: io.StringIO(text),
               lambda: io.StringIO(text, newline=None), lambda: iter(io.StringIO(text, newline=""))]
    for stream in streams:
        ops, acct = read_workload(stream(), "w.csv", key_max=250)
        assert [op[2] for op in ops] == good
        assert [r.line for r in acct.first_rejections] == bad[:5] and acct.rejected == len(bad)
        assert acct.rows == len(good) + len(bad)
    with open(path, encoding="utf-8-sig", newline="") as f:
        with pytest.raises(InputError, match=rf"^w.csv:{bad[0]}: value_size is not a number: 'x{bad[0]}'$"):
            list(read_workload(f, "w.csv", key_max=250, strict=True)[0])


def test_a_line_end_split_between_blocks_is_one_line_end(tmp_path):
    # the \r of a \r\n as the last character of a block and the \n the first of the next: one line
    header = "time,op,key,value_size\r\n"
    row = "0,set,k{},100\r\n"
    cut = BLOCK - 1                     # where the \r must be: blocks follow the header first_line read
    rows, size = [], 0
    while size + 40 < cut:
        rows.append(row.format(len(rows)))
        size += len(rows[-1])
    pad = cut - size - len("0,set,,100")                # a key that puts its \r at the block's end
    rows.append("0,set," + "p" * pad + ",100\r\n")
    rows += [row.format(i) for i in range(len(rows), len(rows) + 50)] + ["0,set,last,x"]
    body = "".join(rows)
    assert body[cut] == "\r" and body[cut + 1] == "\n"
    path = tmp_path / "w.csv"
    path.write_text(header + body, newline="")
    for opened in (lambda: open(path, encoding="utf-8-sig", newline=""), lambda: io.StringIO(header + body)):
        with opened() as f:
            ops, acct = read_workload(f, "w.csv", key_max=250)
            ops = list(ops)
        assert len(ops) == len(rows) - 1 and ops[len(rows) - 52][2] == "p" * pad
        assert [(r.line, r.reason) for r in acct.first_rejections] == [(len(rows) + 1, "value_size is not a number")]


@pytest.mark.parametrize("newline, keys, lines", [("", "abc", [7]), (None, "abc", [7]), ("\n", "c", [2, 5])])
def test_a_lone_carriage_return_ends_a_line_as_the_stream_reads_it(tmp_path, newline, keys, lines):
    # opened with newline="" (simulate's files and stdin) a lone \r ends a line and "b\r\r\n" is a line
    # and a blank one; newline="\n" (a StringIO's) keeps it in the line ("1\r0" is not a value_size);
    # a translating stream (newline=None) reads no \r at all: what Python's own line reading does
    text = "time,op,key,value_size\n0,set,a,1\r0,set,b,1\r\r\n0,set,c,1\r\n\n0,set,d,x\r"
    path = tmp_path / "w.csv"
    path.write_text(text, newline="")
    for stream in (open(path, encoding="utf-8", newline=newline), io.StringIO(text, newline=newline)):
        with stream:
            ops, acct = read_workload(stream, "w.csv", key_max=250)
            assert [op[2] for op in ops] == list(keys)
        assert [r.line for r in acct.first_rejections] == lines


def test_the_twitter_form_first_line_is_its_first_row(tmp_path):
    text = "1,k1,2,100,9,set,0\r\n2,k2,2,100,9,get,0\n\n3,k3,2,x,9,set,0"
    path = tmp_path / "t.csv"
    path.write_text(text, newline="")
    with open(path, encoding="utf-8-sig", newline="") as f:
        ops, acct = read_workload(f, "t.csv", key_max=250)
        assert [op[:3] for op in ops] == [(1.0, SET, "k1"), (2.0, GET, "k2")]
    assert acct.format == "twitter" and [r.line for r in acct.first_rejections] == [4]


def test_a_refused_time_cell_is_refused_on_every_row_that_repeats_it():
    # rows at one instant share one reading of their time cell: only a cell that was read, never one refused
    ops, acct = read_workload(io.StringIO("time,key,value_size\n1,a,1\nx,b,1\nx,c,1\n1e0,d,1\n1e0,e,1\n"), "w.csv",
                              key_max=250)
    assert [op[:3] for op in ops] == [(1.0, SET, "a"), (1.0, SET, "d"), (1.0, SET, "e")]
    assert [(r.line, r.reason) for r in acct.first_rejections] == [(3, "time is not a number"),
                                                                   (4, "time is not a number")]


@pytest.mark.parametrize("rows", [3000, 5000, 20000])
def test_a_file_not_utf8_is_named_at_the_line_its_own_reading_stops(tmp_path, rows):
    # the message names the line Python's line by line reading of the file stops before (its 8 KiB
    # chunks), not where a 64 KiB block met the fault
    path = tmp_path / "u.csv"
    path.write_bytes(b"time,key,value_size\n" + b"".join(b"%d,k%d,100\n" % (i, i) for i in range(rows))
                     + b"0,\xff\xfe,1\n" + b"1,b,1\n" * 100)
    with open(path, encoding="utf-8-sig", newline="") as f:
        read = 0
        with pytest.raises(UnicodeDecodeError):
            for _ in f:
                read += 1
    assert 1 < read < rows
    with open(path, encoding="utf-8-sig", newline="") as f:
        ops, _ = read_workload(f, "u.csv", key_max=250)
        with pytest.raises(InputError, match=rf"^u.csv: not UTF-8 text \(line {read + 1} or after: invalid start"):
            list(ops)
        assert not f.closed


@pytest.mark.parametrize("newline", ["", None])
def test_a_file_ended_by_carriage_returns_alone_is_read_a_line_at_a_time(tmp_path, newline):
    # old Mac line ends: every line of a file opened with newline="" (or translated) ends at its \r, so
    # blocks are cut at their last \r as at their last \n (one \r last may begin a \r\n), never held whole
    text, good, bad = numbered(random.Random(7), 9000, 6000)
    text = text.replace("\r\n", "\n").replace("\n", "\r") + "\r"
    path = tmp_path / "w.csv"
    path.write_text(text, newline="")
    with open(path, encoding="utf-8-sig", newline=newline) as f:
        ops, acct = read_workload(f, "w.csv", key_max=250)
        assert [op[2] for op in ops] == good
    assert [r.line for r in acct.first_rejections] == bad[:5] and acct.rows == len(good) + len(bad)
