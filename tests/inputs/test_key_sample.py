"""A CSV sample told a block at a time (inputs/key_sample.py) keeps exactly the rows the sampling
hash keeps (model/sampling.py's text_hash, the warehouse's), counts the others, and leaves every
row without a key to the reader, with its line number."""

from __future__ import annotations

import hashlib
import io
import random

import pytest

import slabcalc.inputs.key_sample as key_sample
from slabcalc.inputs import key_scan
from slabcalc.inputs.key_sample import LONGEST, kept_rows
from slabcalc.inputs.workload import read_workload
from slabcalc.model.sampling import text_hash, threshold


def _keys(rng: random.Random) -> list[str]:
    """Keys of every kind a block must tell apart: short, of 7 to 9 and 255 to 260 bytes (word edges,
    LONGEST), not ASCII, with spaces, and pairs that differ in one byte only."""
    keys = [f"user:{i}" for i in range(300)] + ["x" * n for n in (1, 7, 8, 9, 15, 16, 17, 255, 256, 257, 260)]
    keys += ["clé:été", "ключ", "a b", " lead", "trail ", "ab" * 130 + "c", "ab" * 130 + "d"]
    keys += [f"{'k' * rng.randrange(1, 40)}{rng.randrange(10**6)}" for _ in range(300)]
    return keys


def _csv(rng: random.Random, keys: list[str], delimiter: str = ",", key_last: bool = False) -> str:
    head = ["time", "op", "value_size", "ttl", "key"] if key_last else ["time", "op", "key", "value_size", "ttl"]
    rows = [delimiter.join(head)]
    for i in range(6000):
        key = rng.choice(keys)
        cells = [str(i // 10), rng.choice(("get", "set", "GET", "gets", "delete")), key, str(rng.randrange(1, 500)), "0"]
        if key_last:
            cells = cells[:2] + cells[3:] + [key]
        r = rng.random()
        if r < 0.01:
            rows.append("")                                   # a blank line: no row
        elif r < 0.02:
            rows.append(delimiter.join(cells[:2]))            # too few cells: rejected, not sampled
        elif r < 0.03 and not key_last:
            rows.append(delimiter.join(cells[:2] + [""] + cells[3:]))     # an empty key: rejected
        rows.append(delimiter.join(cells))
    return "\n".join(rows) + "\n"


@pytest.fixture(params=["numpy", "compiled"])
def scan(request, monkeypatch):
    """Each way a block is told: numpy's scan, and key_scan compiled by Cython (where the install built it;
    .ci/run checks that it did)."""
    if request.param == "numpy":
        monkeypatch.setattr(key_sample, "_compiled_scan", lambda: None)
    elif not key_scan.compiled():
        pytest.skip("inputs/key_scan is not compiled here (no Cython or no C compiler when it was installed)")
    return request.param


@pytest.fixture
def numpy_scan(monkeypatch):
    """numpy's scan, whether or not key_scan is compiled: its table of keys met is what is tested."""
    monkeypatch.setattr(key_sample, "_compiled_scan", lambda: None)


def _read(text: str, rate: float | None):
    ops, accounting = read_workload(io.StringIO(text, newline=""), "w.csv", sample=rate)
    return list(ops), accounting


@pytest.mark.parametrize("delimiter,key_last", [(",", False), ("\t", False), (",", True)])
def test_a_block_keeps_the_rows_the_hash_keeps(delimiter, key_last, scan, monkeypatch):
    import slabcalc.inputs.workload as workload

    monkeypatch.setattr(workload, "SAMPLED_BLOCK", 4096)      # many blocks, rows cut across them
    rng = random.Random(39)
    text = _csv(rng, _keys(rng), delimiter, key_last)
    whole, all_rows = _read(text, None)
    at = 4 if key_last else 2
    cells = {n: line.split(delimiter) for n, line in enumerate(text.split("\n")[1:], 2) if line}
    bad = _rejected_lines(text)
    keyed = {n: c[at] for n, c in cells.items() if len(c) > at and c[at]}      # the lines with a key cell
    for rate in (0.05, 0.3):
        limit = threshold(rate)
        ops, accounting = _read(text, rate)
        assert ops == [op for op in whole if text_hash(op[2]) < limit]
        out = {n for n, key in keyed.items() if text_hash(key) >= limit}
        assert accounting.left_out == len(out) > 0 and accounting.rows == all_rows.rows
        gets = sum(cells[n][1].strip().lower() in ("get", "gets") for n in out)
        assert accounting.left_out_gets == gets > 0      # the gets among them, for the hit ratio's estimate
        # the rows kept are checked as without a sample (keys over 250 bytes too), each rejection at its line
        rejected = sorted(bad - out)
        assert accounting.rejected == len(rejected) > 0 and accounting.items == len(ops)
        assert [r.line for r in accounting.first_rejections] == rejected[:len(accounting.first_rejections)]


def _rejected_lines(text: str) -> set[int]:
    """The lines an unsampled read rejects, read one line at a time (strict: the error names each)."""
    from slabcalc.errors import InputError

    head, *lines = text.split("\n")
    found = set()
    for n, line in enumerate(lines, 2):
        if not line:
            continue
        try:
            list(read_workload(io.StringIO(head + "\n" + line + "\n"), "w.csv", strict=True)[0])
        except InputError:
            found.add(n)
    return found


def test_a_quoted_block_is_read_a_line_at_a_time_alike(scan):
    rng = random.Random(5)
    keys = _keys(rng)
    text = _csv(rng, keys)
    quoted = text.replace("user:7,", '"user:7",', 1)       # one quoted cell: that block read by the cells
    plain, _ = _read(text, 0.3)
    ops, _ = _read(quoted, 0.3)
    assert [op[2] for op in ops] == [op[2] for op in plain]


def test_a_key_met_before_is_told_by_two_fingerprints_and_its_length(numpy_scan):
    """A key whose first fingerprint is remembered with another second one (as two keys would be
    whose first fingerprints met) is decided by its own MD5, and the remembered answer is kept."""
    limit = threshold(0.5)
    keys = [f"k{i}" for i in range(2000)]
    text = "".join(f"{k},1\n" for k in keys)
    rows, lines, out, known, _ = kept_rows(text, ",", 0, limit, None)
    assert lines == [f"{k},1" for k in keys if text_hash(k) < limit] and out == len(keys) - len(rows)
    assert known.count == len(keys) and kept_rows(text, ",", 0, limit, known)[1] == lines
    held = known.held.copy()
    known.held[known.firsts != 0] ^= 1 | (1 << 5)      # every answer wrong, and its second fingerprint too
    assert kept_rows(text, ",", 0, limit, known)[1] == lines
    known.held[:] = held ^ 1                            # wrong answers, fingerprints right
    assert kept_rows(text, ",", 0, limit, known)[1] != lines      # the memory is used: what the test above defeats
    long = "z" * (LONGEST + 10)
    assert kept_rows(f"{long},1\n" * 3, ",", 0, limit, None)[2] == (0 if text_hash(long) < limit else 3)


def test_the_memory_of_keys_grows_then_forgets_and_the_answers_stay_the_hashs(numpy_scan, monkeypatch):
    """The table of answers starts small and doubles as keys come (each key still found after a move to
    the larger table), and at its bound forgets all: the rows kept are the hash's whatever it holds."""
    monkeypatch.setattr(key_sample, "FIRST_KEYS", 16)
    monkeypatch.setattr(key_sample, "KNOWN_KEYS", 256)
    limit = threshold(0.3)
    rng = random.Random(7)
    known, sizes = None, []
    for block in range(12):
        keys = [f"k{rng.randrange(700)}" for _ in range(100)]        # met again, and new ones
        text = "".join(f"{k},{block}\n" for k in keys)
        rows, lines, out, known, _ = kept_rows(text, ",", 0, limit, known)
        assert lines == [f"{k},{block}" for k in keys if text_hash(k) < limit] and out == len(keys) - len(rows)
        assert known.count <= known.keys <= 256
        sizes.append(known.keys)
    assert sizes[0] < sizes[-1] == 256                # grown, to its bound
    hashed = []
    monkeypatch.setattr(key_sample, "md5", lambda data: hashed.append(data) or hashlib.md5(data))
    assert kept_rows(text, ",", 0, limit, known)[1] == lines and not hashed     # every key found: no MD5 again
    known, counts = None, []
    for block in range(4):                            # 100 new keys a block: the third overfills 256
        text = "".join(f"n{block}-{i},1\n" for i in range(100))
        known = kept_rows(text, ",", 0, limit, known)[3]
        counts.append(known.count)
    assert counts == [100, 200, 100, 200]             # forgotten at the bound, then remembered again
