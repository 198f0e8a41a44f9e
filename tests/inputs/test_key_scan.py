"""inputs/key_scan.py, the CSV sample's key scan Cython compiles from its own source: its MD5 is
hashlib's (RFC 1321's, on keys of every length across the 55/56/64-byte edges of the padding), and the
rows it keeps are those numpy's scan (inputs/key_sample.py) keeps, with the same rows left out and gets
among them, on random blocks of every shape a CSV gives: compiled, and run as the plain source."""

from __future__ import annotations

import hashlib
import importlib.util
import random

import pytest

import slabcalc.inputs.key_sample as key_sample
from slabcalc.inputs import key_scan
from slabcalc.model.sampling import threshold


def _plain():
    """key_scan.py loaded from its source, whether or not the compiled module is beside it."""
    path = key_scan.__file__.rsplit(".", 2)[0] + ".py" if key_scan.compiled() else key_scan.__file__
    spec = importlib.util.spec_from_file_location("key_scan_plain", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert not module.compiled()
    return module


BUILDS = ["plain", "compiled"]


@pytest.fixture(params=BUILDS)
def build(request):
    if request.param == "plain":
        return _plain()
    if not key_scan.compiled():
        pytest.skip("inputs/key_scan is not compiled here (no Cython or no C compiler when it was installed)")
    return key_scan


def test_the_first_four_bytes_of_md5_are_hashlibs(build):
    rng = random.Random(1321)
    lengths = list(range(0, 130)) + [rng.randrange(130, 1000) for _ in range(40)]
    for n in lengths:
        key = bytes(rng.randrange(256) for _ in range(n))
        data = bytes(rng.randrange(256) for _ in range(3)) + key + b"\xff\x00"     # the key inside a block
        assert build.md5_head(data, 3, n) == int.from_bytes(hashlib.md5(key).digest()[:4], "big"), n
    with pytest.raises(ValueError):
        build.md5_head(b"abc", 2, 2)                  # past the end: refused, never read
    with pytest.raises(ValueError):
        build.md5_head(b"abc", -1, 1)


def _block(rng: random.Random, delimiter: str) -> str:
    """Lines of every shape: blank, one cell, a key cell empty or missing, the delimiter last, ops in any
    case (get, GETS, getx, ge), keys not ASCII, long and short."""
    ops = ["get", "GET", "Gets", "gets", "set", "getx", "ge", "", "delete"]
    keys = ["", "k", "user:1", "clé", "x" * 55, "y" * 56, "z" * 64, "w" * 300] + [f"k{i}" for i in range(200)]
    lines = []
    for _ in range(rng.randrange(1, 400)):
        cells = [str(rng.randrange(100)), rng.choice(ops), rng.choice(keys), str(rng.randrange(500)), "0"]
        shape = rng.random()
        if shape < 0.05:
            lines.append("")
        elif shape < 0.15:
            lines.append(delimiter.join(cells[:rng.randrange(1, 5)]) + delimiter * rng.randrange(2))
        else:
            lines.append(delimiter.join(cells[rng.randrange(2):]))     # the key in cell 2 or 1
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("delimiter", [",", "\t", ";"])
def test_the_rows_kept_are_numpys(build, delimiter, monkeypatch):
    monkeypatch.setattr(key_sample, "_compiled_scan", lambda: None)      # kept_rows: numpy's scan
    rng = random.Random(39 + ord(delimiter))
    for _ in range(30 if build is key_scan else 8):
        text = _block(rng, delimiter)
        data = text.encode()
        for i_key, i_op in ((0, -1), (1, 0), (2, 1), (2, 4), (1, 3), (0, 1)):
            limit = threshold(rng.choice((0.01, 0.3, 0.7)))
            rows, lines, left_out, _, gets = key_sample.kept_rows(text, delimiter, i_key, limit, None, i_op)
            got_rows: list[int] = []
            bounds: list[int] = []
            assert build.scan(data, ord(delimiter), i_key, i_op, limit, got_rows, bounds) == (left_out, gets)
            assert got_rows == rows
            assert [data[a:b].decode() for a, b in zip(bounds[::2], bounds[1::2])] == lines


def test_the_reader_uses_the_compiled_scan_and_it_keeps_the_same_rows(monkeypatch):
    """kept_rows goes through the compiled scan where there is one, with the same answer numpy's gives."""
    if not key_scan.compiled():
        pytest.skip("inputs/key_scan is not compiled here")
    rng = random.Random(7)
    text = _block(rng, ",")
    limit = threshold(0.3)
    fast = key_sample.kept_rows(text, ",", 2, limit, None, 1)
    assert fast[3] is None                                    # no table of keys: the compiled scan ran
    monkeypatch.setattr(key_sample, "_compiled_scan", lambda: None)
    slow = key_sample.kept_rows(text, ",", 2, limit, None, 1)
    assert slow[3] is not None and (fast[0], fast[1], fast[2], fast[4]) == (slow[0], slow[1], slow[2], slow[4])


def test_a_block_not_ended_by_a_line_feed_is_refused(build):
    with pytest.raises(ValueError):
        build.scan(b"a,get\nb,get", ord(","), 0, 1, 1 << 31, [], [])
    assert build.scan(b"", ord(","), 0, 1, 1 << 31, [], []) == (0, 0)
