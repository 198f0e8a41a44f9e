"""A curve replayed from the workload's compact copy (issue 39: curves in bounded memory) prints exactly
what the curve of the operations held in a list printed, on workloads of every kind of operation and key;
``--target-hit-ratio``'s search too; and the copy's directory is gone after the command, however it ends."""

from __future__ import annotations

import io
import os
import random
import tempfile

import pytest
from helpers import ROOT, run, settings
from memcached_server import missing

from slabcalc.analysis import curve as curve_module
from slabcalc.analysis.curve import hit_ratio_curve, target_limit
from slabcalc.cli.curve_output import print_curve
from slabcalc.inputs import compact
from slabcalc.inputs.compact import CompactOps, compact_copy
from slabcalc.inputs.traces import RECORDS, read_oracle_general
from slabcalc.inputs.workload import read_workload
from slabcalc.records.curve import curve_record


def _mixed_csv() -> str:
    """Sets, gets, deletes and touches with TTLs (some expiring within the run), flags and fractional times."""
    rng = random.Random(39)
    rows = ["time,op,key,value_size,ttl,flags"]
    for i in range(6000):
        key = f"user:{min(rng.randrange(2500), rng.randrange(2500))}"
        kind = rng.choices(["get", "set", "delete", "touch"], [60, 30, 5, 5])[0]
        ttl = rng.choice([0, 0, 5, 30, 3600]) if kind in ("set", "touch") else 0
        size = int(rng.lognormvariate(10, 0.8)) % 300_000 if kind == "set" else 0
        rows.append(f"{i * 0.01:.2f},{kind},{key},{size},{ttl},{rng.choice([0, 0, 1, 1 << 31])}")
    return "\n".join(rows) + "\n"


def _metakv_csv() -> str:
    """MetaKV's columns: a key_size and an op_count per row (each row replayed op_count times)."""
    rng = random.Random(7)
    rows = ["op_time,key,key_size,op,op_count,size"]
    for i in range(2500):
        key = f"{rng.randrange(2000):x}"
        rows.append(f"{i // 10},{key},{rng.randrange(10, 60)},{rng.choice(['GET', 'SET'])},{rng.randrange(1, 4)},"
                    f"{rng.randrange(1000, 100_000)}")
    return "\n".join(rows) + "\n"


def _keyless_csv() -> str:
    """No key column: every set a new key (the sets' serials, integer keys)."""
    return "time,value_size,ttl\n" + "".join(f"{i // 50},{(i * 7919) % 60_000},{i % 3 * 10}\n" for i in range(3000))


def _oracle_bytes() -> bytes:
    import numpy as np

    rng = np.random.default_rng(39)
    n, objects = 20_000, 3000
    ranks = np.minimum(rng.zipf(1.3, n), objects) - 1
    ids = rng.integers(1, 1 << 63, size=objects, dtype=np.uint64)
    sizes = np.clip(rng.lognormal(8, 1.6, objects), 50, 200_000).astype(np.uint32)
    records = np.zeros(n, dtype=RECORDS)
    records["clock"], records["obj"], records["size"], records["next"] = np.arange(n) // 500, ids[ranks], sizes[ranks], -1
    return records.tobytes()


def _reader(kind: str):
    """A fresh reader of one workload: ``(ops iterator, accounting)``."""
    if kind == "calcification":
        path = str(ROOT / "examples" / "calcification.csv")
        return read_workload(io.StringIO(open(path).read()), path)
    if kind == "oracle":
        return read_oracle_general(io.BytesIO(_ORACLE), "t.oracleGeneral", key_length=16)
    text = {"mixed": _MIXED, "metakv": _METAKV, "keyless": _KEYLESS}[kind]
    return read_workload(io.StringIO(text), f"{kind}.csv", key_length=12)


_MIXED, _METAKV, _KEYLESS, _ORACLE = _mixed_csv(), _metakv_csv(), _keyless_csv(), _oracle_bytes()
CASES = {"calcification": (2, 4, 8), "mixed": (2, 32, 48), "metakv": (2, 16, 32), "keyless": (2, 3, 64),
         "oracle": (2, 4, 16, 64)}


def _printed(capsys, curve, accounting, fmt: str) -> str:
    print_curve(curve_record(curve, accounting), fmt)
    return capsys.readouterr().out


@pytest.mark.parametrize("kind", CASES)
def test_the_compact_curve_prints_what_the_list_curve_printed(kind, capsys):
    every = [settings("-m", str(mb), release="1.6.45") for mb in CASES[kind]]
    ops, accounting = _reader(kind)
    held = list(ops)
    before = [_printed(capsys, hit_ratio_curve(every, held, workers=2), accounting, fmt) for fmt in ("json", "table")]
    ops, accounting = _reader(kind)
    with compact_copy(ops) as (copy, unfit):
        assert unfit is None and isinstance(copy, CompactOps) and len(copy) == len(held)
        assert copy.key_kind == ("int" if kind in ("oracle", "keyless") else "str")
        curves = [hit_ratio_curve(every, copy, workers=2), hit_ratio_curve(every, copy, workers=1)]
    assert curves[0].workers == 2
    for curve in curves:
        assert [_printed(capsys, curve, accounting, fmt) for fmt in ("json", "table")] == before
    hits = [p.simulation.totals.hits for p in curves[0].points]
    assert hits[0] != hits[-1] or kind == "keyless"          # a curve, not one point repeated


def test_a_sampled_curve_and_the_target_search_replay_the_copy_alike():
    every = [settings("-m", str(mb), release="1.6.45") for mb in (16, 48)]
    held = list(_reader("mixed")[0])
    at = lambda mb: settings("-m", str(mb), release="1.6.45")       # noqa: E731
    with compact_copy(_reader("mixed")[0]) as (copy, unfit):
        assert unfit is None
        for sample, limits in ((None, every), (0.5, [at(64), at(128)])):
            listed_s, copied = (hit_ratio_curve(limits, ops, sample=sample, workers=2) for ops in (held, copy))
            assert [(p.simulation.totals, p.simulation.sample, p.ideal) for p in listed_s.points] == \
                   [(p.simulation.totals, p.simulation.sample, p.ideal) for p in copied.points]
        listed = hit_ratio_curve(every, held, workers=1)
        ratio = (listed.points[0].hit_ratio + listed.points[1].hit_ratio) / 2
        found = [target_limit(listed, ratio, at, ops) for ops in (held, copy)]
    assert found[0].replays > 0 and found[0].limit_mb == found[1].limit_mb
    assert (found[0].reached.totals, found[0].below.totals) == (found[1].reached.totals, found[1].below.totals)


@pytest.mark.parametrize("kind", ["mixed", "oracle", "keyless"])
def test_keys_by_id_name_the_same_keys_and_the_tap_sees_every_window(kind):
    """``read(by_id=True)``: each key an int id, one id for one key and another for another, every other
    field as read; ``beside`` is handed every operation once, in order, before the replay takes it."""
    held = list(_reader(kind)[0])
    with compact_copy(_reader(kind)[0]) as (copy, unfit):
        assert unfit is None
        tapped: list = []
        by_id = list(copy.read(by_id=True, beside=tapped.extend))
    assert tapped == by_id and len(by_id) == len(held)
    assert [op[:2] + op[3:] for op in by_id] == [op[:2] + op[3:] for op in held]
    ids = {}
    for op, mine in zip(held, by_id):
        assert type(mine[2]) is int and 0 <= mine[2] < 1 << 32
        assert ids.setdefault(op[2], mine[2]) == mine[2]
    assert len(set(ids.values())) == len(ids)           # another key, another id


def test_oracle_a_compact_curve_has_the_ideal_lru_hit_what_libcachesim_lru_hits():
    """The ideal LRU fed from the replay's read of the copy (windows, keys as their ids) hits, at each
    -m, what libCacheSim's LRU hits on the same requests with each object its item's bytes."""
    try:
        import libcachesim as lcs
    except ImportError as exc:
        missing(f"libcachesim is not installed (pip install -e '.[oracle]'): {exc}")
    from slabcalc.model.item import ntotal_function

    limits = (2, 4, 16)
    every = [settings("-m", str(mb), release="1.6.45") for mb in limits]
    ops = list(_reader("oracle")[0])
    with compact_copy(_reader("oracle")[0]) as (copy, unfit):
        assert unfit is None
        curve = hit_ratio_curve(every, copy, workers=1)
    ntotal = ntotal_function(every[0])
    for mb, point in zip(limits, curve.points):
        theirs = lcs.LRU(mb << 20)
        hits = sum(bool(theirs.get(lcs.Request(obj_size=ntotal(k, v, f), obj_id=key, clock_time=int(t))))
                   for t, _, key, k, v, _, f in ops)
        assert (point.ideal.hits, point.ideal.gets) == (hits, len(ops))
    assert curve.points[0].ideal.evictions > 0 and curve.points[0].ideal.hits < curve.points[-1].ideal.hits


# -- the command line: the directory goes, and a workload that does not fit is still curved --------

def _spy(monkeypatch, tmp_path) -> list[str]:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = []
    real = compact.write_compact

    def writing(ops, directory):
        made.append(directory)
        return real(ops, directory)
    monkeypatch.setattr(compact, "write_compact", writing)
    return made


def test_the_command_line_removes_the_copy(monkeypatch, tmp_path):
    made = _spy(monkeypatch, tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    (tmp_path / "mixed.csv").write_text(_MIXED)
    result = run("simulate", str(tmp_path / "mixed.csv"), "-m", "2,48", "--target-hit-ratio", "0.2")
    assert result.exit_code == 0, result.output
    assert len(made) == 1 and str(tmp_path / "tmp") in made[0] and os.listdir(tmp_path / "tmp") == []
    assert "held in memory" not in result.stderr


@pytest.mark.parametrize("fault", ["strict row", "replay"])
def test_the_copy_goes_when_the_command_fails(monkeypatch, tmp_path, fault):
    made = _spy(monkeypatch, tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(compact, "BATCH", 100)            # the bad row comes after batches written
    text = _MIXED + ("9999,frobnicate,k,1,0,0\n" if fault == "strict row" else "")
    (tmp_path / "w.csv").write_text(text)
    if fault == "replay":
        def failing(*args, **kwargs):
            raise RuntimeError("a worker died")
        monkeypatch.setattr(curve_module, "hit_ratio_curve", failing)
    result = run("simulate", str(tmp_path / "w.csv"), "-m", "2,4", "--strict")
    assert result.exit_code != 0
    if fault == "strict row":
        assert result.exit_code == 1 and "unsupported op" in result.stderr
    else:
        assert isinstance(result.exception, RuntimeError)
    assert len(made) == 1 and not os.path.exists(made[0]) and os.listdir(tmp_path / "tmp") == []


def test_a_workload_that_does_not_fit_is_curved_from_memory_and_says_so(tmp_path):
    """A ttl memcached reads as a unix time 3000 years on is more seconds than the record's 32 bits: the
    curve is replayed from the list, as before, and stderr says why."""
    fits = tmp_path / "fits.csv"
    fits.write_text(_MIXED)
    wide = tmp_path / "wide.csv"
    wide.write_text(_MIXED + "60.5,set,far,100,99999999999,0\n")
    normal = run("simulate", str(fits), "-m", "2,4", "--time-zero", "1700000000", "--format", "csv")
    held = run("simulate", str(wide), "-m", "2,4", "--time-zero", "1700000000", "--format", "csv")
    assert normal.exit_code == 0 and held.exit_code == 0, held.output
    assert "held in memory" not in normal.stderr
    assert "held in memory" in held.stderr and "ttl 98299999939 is outside" in held.stderr
    assert held.stdout.splitlines()[0] == normal.stdout.splitlines()[0] and len(held.stdout.splitlines()) == 3


def test_the_progress_line_says_how_long_is_left(capsys):
    """On a terminal each finished -m says the time left: the time so far over the limits done, times
    those left (a clock given here: 30 s a limit)."""
    from slabcalc.cli.curve_output import duration, progress_printer

    readings = iter([100.0, 130.0, 160.0, 190.0])
    show = progress_printer(clock=lambda: next(readings))

    class Point:
        limit_maxbytes, hit_ratio = 64 << 20, 0.5
    for done in (1, 2, 3):
        show(Point, done, 3)
    lines = [line.strip() for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if line.strip()]
    assert lines == ["-m 64 replayed (1 of 3), hit ratio 0.5000, about 1m 00s left",
                     "-m 64 replayed (2 of 3), hit ratio 0.5000, about 30s left",
                     "-m 64 replayed (3 of 3), hit ratio 0.5000"]
    assert [duration(s) for s in (0.4, 59.6, 3725, 7 * 3600)] == ["0s", "1m 00s", "1h 02m 05s", "7h 00m 00s"]
