"""The compact copy of a workload (inputs/compact.py, issue 39): 24 bytes a request, read back as the very
tuples the reader yielded; what does not fit is held as a list and said, never cut; the temporary
directory goes however the block ends."""

from __future__ import annotations

import os
import pickle
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from slabcalc.inputs import compact
from slabcalc.inputs.compact import RECORD, CompactOps, compact_copy
from slabcalc.inputs.intern import IntKeys
from slabcalc.model.ops import DELETE, FILL, GET, SET, TOUCH

U32, I32 = (1 << 32) - 1, 1 << 31

STRINGS = [  # every field at its extremes, string keys (non-ASCII, a lone surrogate, a comma, the longest)
    (0.0, SET, "a", 1, 0, 0, 0),
    (0.25, GET, "a", 1, 0, 0, 0),
    (1e-9, SET, "ké y,\udc80", 9, U32, I32 - 1, U32),
    (3.5, TOUCH, "ké y,\udc80", 9, 0, -I32, 0),
    (3.5, DELETE, "k" * 250, 255, 7, -1, 1 << 40),
    (1234567.125, 255, "a", 0, 1, 2_592_000, 3),
    (2.0 ** 31 - 1, GET, "\u4e2d\u6587", 6, 0, 0, U32),
]
INTS = [  # integer keys and times (oracleGeneral's ids, keyless sets' serials), the widest id
    (0, FILL, 0, 16, 100, 0, 0),
    (0, FILL, U32 + 1, 16, 5, 0, 0),
    (7, FILL, (1 << 64) - 1, 16, 0, 0, 0),
    ((1 << 53) - 1, FILL, 0, 16, 200_000, 0, 0),
    ((1 << 53) - 1, SET, 12, 250, 1, 60, 9),
]


def _types(ops):
    return [tuple(type(f) for f in op) for op in ops]


@pytest.mark.parametrize("ops", [STRINGS, INTS], ids=["strings", "ints"])
def test_every_field_comes_back_as_it_went_in(ops):
    with compact_copy(iter(ops)) as (copy, unfit):
        assert unfit is None and isinstance(copy, CompactOps)
        back = list(copy)
        assert back == ops and _types(back) == _types(ops)
        assert list(copy) == ops                     # read again: a copy, not a stream
        assert len(copy) == len(ops)


@pytest.mark.parametrize("chunk", [2, compact.KEYS_CHUNK], ids=["keys-2-at-a-time", "keys-at-once"])
@pytest.mark.parametrize("last", ["\u4e2d\udc80", "nul\0", "x" * 33], ids=["unicode", "nul", "long"])
def test_short_string_keys_come_back_from_either_table(monkeypatch, last, chunk):
    """Keys of up to 32 characters come back from a UCS-4 table (non-ASCII, a lone surrogate); one ending
    with a NUL (which numpy's strings drop) or longer sends them all back to the UTF-8 table -- also when
    the table is made a few keys at a time and that key is in the last few."""
    monkeypatch.setattr(compact, "KEYS_CHUNK", chunk)
    ops = [(float(i), SET, key, 3, i, 0, 0) for i, key in enumerate(["a", "b\u00e9", "", "a", last, "a", last])]
    with compact_copy(ops) as (copy, unfit):
        assert unfit is None and list(copy) == ops
        assert copy.key_width == (2 if last == "\u4e2d\udc80" else 0)


def test_across_batches_and_windows_in_order(monkeypatch):
    """Small batches and windows: keys first met in a later batch, windows that end mid-batch."""
    monkeypatch.setattr(compact, "BATCH", 3)
    monkeypatch.setattr(compact, "WINDOW", 2)
    ops = [(float(i // 3), (SET, GET, DELETE)[i % 3], f"k{i % 7}", 2, i, i % 5, i % 4) for i in range(50)]
    with compact_copy(ops) as (copy, unfit):
        assert unfit is None and list(copy) == ops


def test_a_request_is_24_bytes_and_a_key_is_kept_once():
    ops = [(float(i), GET, i % 10, 16, 0, 0, 0) for i in range(1000)]
    with compact_copy(ops) as (copy, _):
        assert RECORD.itemsize == 24
        assert os.path.getsize(copy.records) == 24 * 1000
        assert os.path.getsize(copy.key_table) == 8 * 10 and copy.keys == 10
        assert len(pickle.dumps(copy)) < 600         # what a worker is handed: paths and tables, not data


@pytest.mark.parametrize("bad,says", [
    ((9.0, SET, "k", 1, 1 << 32, 0, 0), "value 4294967296 is outside"),
    ((9.0, SET, "k", 256, 1, 0, 0), "key_size 256 is outside"),
    ((9.0, SET, "k", 1, 1, I32, 0), "ttl 2147483648 is outside"),
    ((9.0, SET, "k", 1, 1, -I32 - 1, 0), "ttl -2147483649 is outside"),
    ((9.0, 256, "k", 1, 1, 0, 0), "op 256 is outside"),
    ((9.0, SET, 5, 1, 1, 0, 0), "keys of int and str"),
    ((9, SET, "k", 1, 1, 0, 0), "times of float and int"),
    ((9.0, SET, "k", 1, 1.5, 0, 0), "value of float, not int"),
    ((9.0, SET, "a\nb", 1, 1, 0, 0), "newline"),
    ((9.0, SET, "k", 1, 1, 0, 1 << 64), "flags 18446744073709551616 is outside"),
    ((9.0, SET, "k", 1, 1, 0), "not (time, op, key"),
])
def test_what_does_not_fit_is_held_whole_and_said(monkeypatch, bad, says):
    """A field out of its record's range (after batches already written) falls back to the list: every
    operation, in order, none cut."""
    monkeypatch.setattr(compact, "BATCH", 2)
    ops = STRINGS[:5] + [bad] + STRINGS[5:]
    with compact_copy(iter(ops)) as (held, unfit):
        assert says in unfit
        assert held == ops and _types(held) == _types(ops)


def test_more_flags_than_the_table_holds_fall_back(monkeypatch):
    monkeypatch.setattr(compact, "FLAGS_IDS", 3)
    ops = [(0.0, SET, "k", 1, 1, 0, flags) for flags in range(5)]
    with compact_copy(ops) as (held, unfit):
        assert held == ops and "more than 3 distinct flags" in unfit


def test_an_empty_workload_is_an_empty_copy():
    with compact_copy([]) as (copy, unfit):
        assert unfit is None and list(copy) == [] and len(copy) == 0


def _made(monkeypatch) -> list[str]:
    made = []
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: made.append(real(**kw)) or made[-1])
    return made


def test_the_directory_goes_when_the_block_ends(monkeypatch):
    made = _made(monkeypatch)
    with compact_copy(STRINGS) as (copy, _):
        assert os.path.isdir(copy.directory) and made == [copy.directory]
    assert not os.path.exists(made[0])


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_the_directory_goes_when_the_block_fails(monkeypatch, error):
    made = _made(monkeypatch)
    with pytest.raises(error):
        with compact_copy(STRINGS) as (copy, _):
            next(iter(copy))
            raise error()
    assert len(made) == 1 and not os.path.exists(made[0])


def test_the_directory_goes_when_the_reader_fails(monkeypatch):
    """A reader's error mid-way (a strict row, a truncated trace) is the reader's, and the copy goes."""
    monkeypatch.setattr(compact, "BATCH", 2)
    made = _made(monkeypatch)

    def reader():
        yield from STRINGS[:5]
        raise ValueError("ops.csv:7: bad row")
    with pytest.raises(ValueError, match="bad row"):
        with compact_copy(reader()):
            pass
    assert len(made) == 1 and not os.path.exists(made[0])


# -- a trace's batches as numpy columns: no tuple made, the same copy -----------------------------------

def _trace(bad_at: int | None = None) -> bytes:
    """oracleGeneral records: ids repeating across batches (some first met in a later one), the widest id;
    with ``bad_at``, one record there below the key (rejected: its batch is read record by record)."""
    from slabcalc.inputs.traces import RECORDS

    n = 40
    records = np.zeros(n, dtype=RECORDS)
    ids = [(1 << 64) - 1, 5, 1 << 40, 7] + [(i * 7) % 11 + 100 for i in range(n - 4)]
    records["clock"], records["obj"], records["next"] = np.arange(n) // 3, ids, -1
    records["size"] = [20 + (i * 37) % 500 for i in range(n)]
    if bad_at is not None:
        records["size"][bad_at] = 3
    return records.tobytes()


@pytest.mark.parametrize("bad_at", [None, 13], ids=["clean", "a rejected record"])
def test_a_trace_is_copied_from_its_columns_as_from_its_tuples(monkeypatch, bad_at):
    """Batches of good records go into the copy as numpy columns (never made into tuples), a batch with a
    rejected record as tuples: the copy reads back the reader's operations, keys interned in the order the
    tuples would have interned them (the same ids, the same key table), and says the same."""
    import io

    from slabcalc.inputs import traces

    monkeypatch.setattr(traces, "BATCH", 8)
    data = _trace(bad_at)
    read = lambda: traces.read_oracle_general(io.BytesIO(data), "t.oracleGeneral")[0]    # noqa: E731
    ops = list(read())
    columns = []
    real = compact._Writer._add_columns
    monkeypatch.setattr(compact._Writer, "_add_columns", lambda self, b, *a: columns.append(b) or real(self, b, *a))
    with compact_copy(read()) as (by_columns, unfit), compact_copy(iter(list(read()))) as (by_tuples, _):
        assert unfit is None and len(columns) == 5 - (bad_at is not None)
        assert list(by_columns) == ops and _types(list(by_columns)) == _types(ops)
        assert list(by_columns.read(by_id=True)) == list(by_tuples.read(by_id=True))
        assert (by_columns.keys, by_columns.constant, by_columns.int_times) == \
               (by_tuples.keys, by_tuples.constant, by_tuples.int_times)
        for name in ("records", "key_table"):
            with open(getattr(by_columns, name), "rb") as a, open(getattr(by_tuples, name), "rb") as b:
                assert a.read() == b.read()


def test_a_trace_batch_that_does_not_fit_falls_back_whole(monkeypatch):
    """More distinct keys than the record's id holds, met in a later batch of columns: every operation
    held (those written read back from the copy)."""
    import io

    from slabcalc.inputs import traces

    monkeypatch.setattr(traces, "BATCH", 8)
    monkeypatch.setattr(compact, "KEYS_MAX", 9)
    data = _trace()
    ops = list(traces.read_oracle_general(io.BytesIO(data), "t.oracleGeneral")[0])
    with compact_copy(traces.read_oracle_general(io.BytesIO(data), "t.oracleGeneral")[0]) as (held, unfit):
        assert "more than 9 distinct keys" in unfit
        assert held == ops and _types(held) == _types(ops)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.sampled_from([0, 1, 5, 7, 2**32, 2**63, 2**64 - 1]) | st.integers(0, 40), max_size=30),
                max_size=6))
@pytest.mark.parametrize("recent_min", [0, 3, 1 << 16])
def test_integer_keys_are_interned_in_numpy_as_a_dict_ranks_them(recent_min, batches):
    """The arrays that intern integer keys (16 bytes a key, where a dict took about 100) give each key its
    rank of first appearance across batches, and the new keys of each batch in that order, whether the
    recent keys go into the main run at every batch, now and then, or never."""
    table, ranks = IntKeys(recent_min), {}
    for batch in batches:
        ids, new = table.intern(np.array(batch, dtype=np.uint64))
        before = len(ranks)
        expected = [ranks.setdefault(k, len(ranks)) for k in batch]
        assert ids.tolist() == expected
        assert new.tolist() == list(ranks)[before:]
    assert table.count == len(ranks)
    table.forget(3)
    ids, _ = table.intern(np.array(list(ranks)[:3], dtype=np.uint64))
    assert ids.tolist() == list(range(min(3, len(ranks)))) and table.count == min(3, len(ranks))
