"""Workload files: the CSV and twitter cache-trace forms, row accounting, --strict."""

from __future__ import annotations

import io
import json
import re

import pytest
from helpers import run

from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH
from slabcalc.inputs.items import InputError
from slabcalc.inputs.workload import read_workload


def read(text, **kw):
    ops, acct = read_workload(io.StringIO(text), "w.csv", **kw)
    return list(ops), acct


def test_csv_with_every_column():
    ops, acct = read("time,op,key,value_size,ttl,flags\n0,set,user:1,100,30,5\n1.5,get,user:1,,,\n"
                     "2,DELETE,user:1,,,\n3,touch,user:1,,10,\n")
    assert ops == [(0.0, SET, "user:1", 6, 100, 30, 5), (1.5, GET, "user:1", 6, 0, 0, 0),
                   (2.0, DELETE, "user:1", 6, 0, 0, 0), (3.0, TOUCH, "user:1", 6, 0, 10, 0)]
    assert (acct.format, acct.rows, acct.items, acct.rejected, acct.keys_named) == ("csv", 4, 4, 0, True)


def test_aliases_any_case_other_separators_and_ignored_columns():
    ops, _ = read("Timestamp;Operation;Key;Key_Size;Value;Exptime;client\n7;gets;k;40;0;0;x\n")
    assert ops == [(7.0, GET, "k", 40, 0, 0, 0)]


def test_without_key_column_every_set_is_a_new_key():
    ops, _ = read("time,key_size,value_size\n0,10,100\n0,10,100\n")
    assert [o[2] for o in ops] == [1, 2] and ops[0][3] == 10
    ops, _ = read("value_size\n100\n", key_length=12)
    assert ops == [(0.0, SET, 1, 12, 100, 0, 0)]


def test_without_key_or_key_size_column_a_key_length_is_needed():
    with pytest.raises(InputError, match="give --key N"):
        read("value_size\n100\n")


def test_twitter_cache_trace_format():
    ops, acct = read("0,key1,12,300,7,set,3600\n1,key1,12,0,7,get,0\n2,key2,8,10,7,incr,0\n")
    assert acct.format == "twitter"
    assert ops == [(0.0, SET, "key1", 12, 300, 3600, 0), (1.0, GET, "key1", 12, 0, 0, 0)]
    assert (acct.rows, acct.items, acct.rejected) == (3, 2, 1)
    assert acct.first_rejections[0].line == 3 and acct.first_rejections[0].reason == "unsupported op"


@pytest.mark.parametrize("row,reason", [
    ("1,set,a,x,0", "value_size is not a number"),
    ("1,set,a,1.5,0", "value_size is not a whole number"),
    # a negative ttl is no bad row: memcached stores the item expired (tests/model/test_exptime.py)
    ("0,set,a,10,0", "time goes backwards (after 1)"),
    ("x,set,a,10,0", "time is not a number"),
    ("1,add,a,10,0", "unsupported op"),
    ("1,set,,10,0", "missing column key"),
    ("1,set,a", "missing columns"),
])
def test_bad_rows_are_counted_and_named(row, reason):
    ops, acct = read(f"time,op,key,value_size,ttl\n1,set,a,10,0\n{row}\n\n2,get,a,,\n")
    assert len(ops) == 2 and (acct.rows, acct.rejected) == (3, 1)
    assert (acct.first_rejections[0].line, acct.first_rejections[0].reason) == (3, reason)
    with pytest.raises(InputError, match=re.escape(f"w.csv:3: {reason}")):
        read(f"time,op,key,value_size,ttl\n1,set,a,10,0\n{row}\n", strict=True)


@pytest.mark.parametrize("row,reason", [
    ("nan,set,a,10,0,0,1", "time must be a number of seconds, 0 to 2080374784 (66 years: the replay's clock)"),    # NaN fails every comparison
    ("0,set,a,10,0,0,1", "time goes backwards (after 1)"),
    (",set,a,10,0,0,1", "missing column time"),
    ("1,set,a,10,0,4294967296,1", "flags must be 0..4294967295"),
    ("1,set,a,2147483646,0,0,1", "value_size must be 0..2147483645"),
    ("1,set,a,10,0,0,0", "op_count must be 1 or more"),
    ("1,append,a,10,0,0,1", "unsupported op"),
])
def test_rows_the_quick_reading_must_not_take(row, reason):
    # the reader's quick path takes the rows it can read at once: these parse (float('nan') is a
    # float) or name an op, yet each is one rejected row, and the repeated time text "1" too
    text = f"time,op,key,value_size,ttl,flags,op_count\n1,set,a,10,0,0,1\n{row}\n1,get,a,,,,2\n"
    ops, acct = read(text)
    assert ops == [(1.0, SET, "a", 1, 10, 0, 0)] + [(1.0, GET, "a", 1, 0, 0, 0)] * 2
    assert (acct.rows, acct.items, acct.rejected, acct.first_rejections[0].reason) == (3, 3, 1, reason)


def test_a_first_row_without_its_time_is_rejected():
    # (the quick path keeps the last time cell it read: none is read before the first row)
    _, acct = read("time,key,value_size\n,a,10\n")
    assert (acct.rejected, acct.first_rejections[0].reason) == (1, "missing column time")


def test_cells_the_quick_reading_refuses_are_read_the_careful_way():
    # int(" ") refuses a blank ttl and flags, " Get " and "SET" are not the plain names: read all the same
    ops, acct = read("time,op,key,value_size,ttl,flags\n1, Get ,é,,  ,\n1,SET,é,5, , \n2,,k\t,+7,1_0,3\n")
    assert ops == [(1.0, GET, "é", 2, 0, 0, 0), (1.0, SET, "é", 2, 5, 0, 0), (2.0, SET, "k\t", 2, 7, 10, 3)]
    assert (acct.rows, acct.rejected) == (3, 0)


def test_without_key_column_a_rejected_set_still_takes_its_key_number():
    ops, acct = read("time,value_size\n0,10\n0,-1\n0,10\n", key_length=10)
    assert [o[2] for o in ops] == [1, 3] and acct.rejected == 1


def test_a_key_longer_than_memcached_takes_is_rejected():
    _, acct = read("key,value_size\n" + "k" * 251 + ",10\n")
    assert acct.first_rejections[0].reason == "key length must be 1..250"


@pytest.mark.parametrize("text,message", [
    ("", "empty input"),
    ("time,key\n0,a\n", "no value_size column"),
    ("1,2,3\n", "no header"),
])
def test_unusable_inputs(text, message):
    with pytest.raises(InputError, match=message):
        read(text)


# -- the command ---------------------------------------------------------------------------

WORKLOAD = "time,op,key,value_size,ttl\n0,set,a,100,0\n0,set,b,100,1\n3,get,b,,\n3,get,a,,\n"


def invoke(*args, input=WORKLOAD):
    return run("simulate", *args, input=input)


def test_json_contract():
    result = invoke("-", "--profile", "1.6.18", "-o", "no_modern", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {"classes", "totals", "model", "settings", "calcification", "input"} <= set(doc)
    # the totals under memcached's stats names, as simulate -m A,B and stats give them (issue 30)
    assert {"cmd_set", "evictions", "reclaimed", "cmd_get", "get_hits", "get_misses", "curr_items"} <= set(doc["totals"])
    assert not {"sets", "evicted", "gets", "hits", "misses"} & set(doc["totals"])
    assert [c["class"] for c in doc["classes"]] == [4]
    assert set(doc["classes"][0]) >= {"class", "chunk_size", "pages", "items", "evicted", "reclaimed",
                                      "outofmemory", "hits", "misses"}
    assert doc["model"]["exact"] is True and (doc["totals"]["get_hits"], doc["totals"]["get_misses"]) == (1, 1)


def test_table_prints_the_model_and_the_finding():
    result = invoke("--profile", "1.6.18")
    assert result.exit_code == 0
    assert "slab automover 1 (window 30 s, ratio 0.8), LRU maintainer, LRU crawler" in result.output
    assert "calcification" in result.output


def test_every_adds_a_timeline():
    result = invoke("--every", "1", "--format", "json")
    assert [(r["time"], r["items"]) for r in json.loads(result.output)["timeline"]] == [(1, 2), (3, 2), (4, 1)]
    result = invoke("--every", "2", "--format", "csv")
    assert "time,class,pages,items,evicted,evicted_total\n2,4,1,2,0,0\n4,4,1,1,0,0" in result.output


def test_errors_are_one_line():
    result = invoke("--profile", "1.2.8")
    assert result.exit_code == 2 and "1.4.24 and later" in result.output
    result = invoke("--strict", input="time,op,key,value_size\n0,set,a,x\n")
    assert result.exit_code == 1 and "<stdin>:2: value_size is not a number: 'x'" in result.output
    result = invoke("no-such-file.csv")
    assert result.exit_code == 1 and "no-such-file.csv: cannot read" in result.output


def test_whole_number_cells_read_digit_by_digit_are_what_int_reads():
    # the compiled reader sums a cell of ASCII digits itself (workload._whole) and leaves any other text to
    # int(): every cell gives int()'s number, or int()'s ValueError (then the careful path names the cell)
    import random

    from slabcalc.inputs.workload import _whole

    rng = random.Random(29)
    cells = ["0", "00", "007", "9" * 18, "9" * 19, "1" + "0" * 30, "", " 5", "5 ", "+5", "-5", "1_000", "٣",
             "12a", "1.5", "x", "/", ":"]
    cells += ["".join(rng.choice("0123456789 +-_:/a٣") for _ in range(rng.randrange(1, 22))) for _ in range(2000)]
    for cell in cells:
        try:
            want = int(cell)
        except ValueError:
            with pytest.raises(ValueError):
                _whole(cell)
        else:
            assert _whole(cell) == want, cell


def test_rows_with_odd_whole_numbers_read_as_int_reads_them():
    from slabcalc.model.item import VALUE_MAX

    ops, acct = read("time,op,key,value_size,ttl,flags\n0,set,a,0012, 30 ,+7\n0,set,b,1_0,0,0\n0,set,c,-1,0,0\n"
                     "0,set,d,12x,0,0\n0,set,e,100,-3,0\n")
    # a negative ttl: memcached stores the item expired (model/exptime.py)
    assert ops == [(0.0, SET, "a", 1, 12, 30, 7), (0.0, SET, "b", 1, 10, 0, 0), (0.0, SET, "e", 1, 100, -1, 0)]
    assert [(r.line, r.reason) for r in acct.first_rejections] == [
        (4, f"value_size must be 0..{VALUE_MAX}"), (5, "value_size is not a number")]
