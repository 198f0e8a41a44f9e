"""The column counter: plain blocks counted in C exactly as the line-by-line reading counts them."""

from __future__ import annotations

import io
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabcalc.inputs import columns
from slabcalc.inputs import items as inputs
from slabcalc.inputs.columns import ColumnCounter
from slabcalc.inputs.items import Item, read_items


def counter(layout=("key", "value"), delimiter=",", key=None):
    return ColumnCounter(layout, delimiter, key, 250, 0xFFFFFFFF)


def counted(c: ColumnCounter) -> Counter:
    cols, counts = c.arrays()
    rows = zip(*(column.tolist() for column in cols.values()))
    return Counter(dict(zip(rows, counts.tolist())))


def test_a_plain_block_is_counted():
    c = counter()
    assert c.take("16,100\n8,1\n16,100\n0016,00100\n") == 4
    assert counted(c) == {(16, 100, 0): 3, (8, 1, 0): 1}
    assert counted(c) == {}                   # handed out once, then forgotten


@pytest.mark.parametrize("block", [
    "16,100\n8,x\n", "16,100\n\n", "16,100\r\n", "16 ,100\n", "16,100,1\n", "16\n", "+16,100\n",
    "0,100\n", "251,100\n", "16,-1\n", "16,1.5\n", "16,1e3\n", "16,\n", ",100\n", "16;100\n",
    "16,1234567890123456789\n", "١٦,100\n", "16,100", "",
])
def test_anything_not_plain_is_not_taken(block):
    c = counter()
    assert c.take(block) is None
    cols, counts = c.arrays()
    assert list(cols) == ["key", "value", "flags"] and not len(counts)
    assert all(not len(column) for column in cols.values())


def test_flags_range_and_other_delimiters():
    c = counter(("value", "flags", "key"), "\t")
    assert c.take("100\t4294967295\t250\n100\t0\t1\n") == 2
    assert counted(c) == {(250, 100, 4294967295): 1, (1, 100, 0): 1}
    assert c.take("100\t4294967296\t1\n") is None


def test_values_take_the_given_key_and_item_sizes_stand_alone():
    c = counter(("value",), key=9)
    assert c.take("5\n5\n0\n") == 3
    assert counted(c) == {(9, 5, 0): 2, (9, 0, 0): 1}
    c = counter(("item_size",))
    assert c.take("72\n1048576\n72\n") == 3
    assert counted(c) == {(72,): 2, (1048576,): 1}


def test_rows_too_wide_to_pack_are_sorted_by_every_column():
    # 18-digit values and 32-bit flags do not fit one 62-bit code together
    big = 10 ** 18 - 1
    c = counter(("key", "value", "flags"))
    assert c.take(f"1,{big},4294967295\n1,{big},4294967294\n1,{big},4294967295\n2,0,0\n") == 4
    assert counted(c) == {(1, big, 4294967295): 2, (1, big, 4294967294): 1, (2, 0, 0): 1}


def test_blocks_are_merged_when_many_are_held(monkeypatch):
    # rows are held as read until RAW_ROWS, then counted; the counted blocks are merged past COMPACT_ROWS
    monkeypatch.setattr(columns, "COMPACT_ROWS", 3)
    monkeypatch.setattr(columns, "RAW_ROWS", 12)
    c = counter()
    expected = Counter()
    rng = random.Random(4)
    counted_once = False
    for _ in range(30):
        rows = [(rng.randint(1, 4), rng.randint(0, 3)) for _ in range(rng.randint(1, 9))]
        assert c.take("".join(f"{k},{v}\n" for k, v in rows)) == len(rows)
        expected.update((k, v, 0) for k, v in rows)
        assert len(c.held) <= 2 and c.raw_rows < 12
        counted_once |= bool(c.held)
    assert counted_once and counted(c) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 250), st.integers(0, 10 ** 18 - 1), st.integers(0, 2 ** 32 - 1)),
                min_size=1, max_size=60),
       st.integers(1, 4))
def test_counts_equal_pythons(rows, repeat):
    c = counter(("key", "value", "flags"))
    block = "".join(f"{k},{v},{f}\n" for k, v, f in rows) * repeat
    assert c.take(block) == len(rows) * repeat
    assert counted(c) == Counter({row: 0 for row in rows}) + Counter(rows * repeat)


@pytest.mark.parametrize("fast", [True, False])
def test_crlf_and_mixed_blocks_read_alike(monkeypatch, fast):
    monkeypatch.setattr(inputs, "FAST", fast)
    monkeypatch.setattr(inputs, "BLOCK_SIZE", 16)
    text = "key,value\r\n" + "16,100\r\n" * 6 + "x,1\r\n" + "8,1\r\n16,100\r\n" * 4 + "16,100\r8,1\r"
    pairs, acct = read_items(io.StringIO(text, newline=""), "data.csv")
    totals = Counter()
    for item, n, _ in pairs:
        totals[item] += n
    assert totals == {Item(16, 100, 0, None): 11, Item(8, 1, 0, None): 5}
    assert (acct.rows, acct.rejected, acct.first_rejections[0].line) == (17, 1, 8)
