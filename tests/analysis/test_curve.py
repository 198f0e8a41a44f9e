"""Hit-ratio curves: ``simulate -m A,B,C`` and the ideal LRU beside it (issue 29, item 3).

Every row of a curve must be the single replay at that ``-m``, counter by counter (the curve's
replays run in other processes, so a row that drifted -- another -m, another order, a workload
consumed twice -- shows here); the ideal LRU must hit exactly what libCacheSim's LRU hits on the
same requests and sizes (skipped without libcachesim, a failure under CI).
"""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from helpers import ROOT, run, settings
from memcached_server import missing

from slabcalc.analysis.curve import hit_ratio_curve
from slabcalc.engines.ideal import ideal_lru
from slabcalc.engines.sample import HASH_SPACE, key_hash
from slabcalc.engines.simulate import simulate
from slabcalc.inputs.workload import read_workload
from slabcalc.model.item import ntotal_function
from slabcalc.model.ops import DELETE, FILL, GET, SET, TOUCH

WORKLOAD = str(ROOT / "examples" / "calcification.csv")     # evicts, moves pages, calcifies: 1450 ops
LIMITS = (2, 4, 8)


def _ops(path: str = WORKLOAD) -> list[tuple]:
    with open(path) as f:
        return list(read_workload(f, path)[0])


def _settings(mb: int, release: str = "1.6.45", *words: str):
    return settings("-m", str(mb), *words, release=release)


# -- the library: every point is simulate() at its -m ---------------------------------------------

def test_each_point_is_the_single_replay_at_its_limit():
    ops = _ops()
    settings = [_settings(mb) for mb in LIMITS]
    curve = hit_ratio_curve(settings, ops, workers=2)
    assert curve.workers == 2
    for s, point in zip(settings, curve.points):
        alone = simulate(s, ops)
        assert point.limit_maxbytes == s.maxbytes
        assert (point.simulation.totals, point.simulation.classes, point.simulation.finding) == \
               (alone.totals, alone.classes, alone.finding)
        assert point.ideal == ideal_lru(s, ops)
    hits = [p.simulation.totals.hits for p in curve.points]
    assert hits == sorted(hits) and hits[0] < hits[-1]      # a curve, not one point repeated
    assert any(p.simulation.totals.pages_moved for p in curve.points)


def test_progress_is_called_once_per_limit():
    seen = []
    hit_ratio_curve([_settings(mb) for mb in (2, 4, 8)], _ops(), workers=1,
                    progress=lambda point, done, total: seen.append((point.limit_maxbytes >> 20, done, total)))
    assert seen == [(2, 1, 3), (4, 2, 3), (8, 3, 3)]


# -- the command line -------------------------------------------------------------------------------

def _json(*args: str) -> dict:
    result = run("simulate", WORKLOAD, *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_every_row_equals_simulate_at_that_limit():
    curve = _json("-m", ",".join(map(str, LIMITS)))["curve"]
    assert [row["limit_maxbytes"] >> 20 for row in curve] == list(LIMITS)
    for row in curve:
        totals = _json("-m", str(row["limit_maxbytes"] >> 20))["totals"]
        assert (row["cmd_get"], row["get_hits"], row["get_misses"], row["evictions"], row["slabs_moved"]) == \
               (totals["cmd_get"], totals["get_hits"], totals["get_misses"], totals["evictions"], totals["slabs_moved"])
        assert row["hit_ratio"] == totals["get_hits"] / totals["cmd_get"]


def test_a_sampled_curve_is_the_sampled_replay_at_each_limit():
    curve = _json("-m", "4,16", "--sample", "0.5")
    assert curve["sample"]["rate"] == 0.5
    for row in curve["curve"]:
        single = _json("-m", str(row["limit_maxbytes"] >> 20), "--sample", "0.5")
        totals = single["totals"]
        assert (row["get_hits"], row["get_misses"], row["evictions"], row["slabs_moved"]) == \
               (totals["get_hits"], totals["get_misses"], totals["evictions"], totals["slabs_moved"])
        assert row["hit_ratio_error"] == single["sample"]["hit_ratio_error"]
        assert {k: curve["sample"][k] for k in ("ops", "sampled_ops", "scale")} == \
               {k: single["sample"][k] for k in ("ops", "sampled_ops", "scale")}


def test_a_sampled_curve_copies_the_sample_alone(monkeypatch):
    """The reader draws the sample as it reads: the compact copy every -m replays holds the sampled
    keys' operations, not the whole workload (a 1 % curve of 100 M requests copies 1 M)."""
    from slabcalc.inputs import compact

    copied = []
    real = compact.write_compact
    monkeypatch.setattr(compact, "write_compact", lambda ops, where: copied.append(real(ops, where)) or copied[-1])
    curve = _json("-m", "4,16", "--sample", "0.5")
    assert [c.count for c in copied] == [curve["sample"]["sampled_ops"]]
    assert 0 < curve["sample"]["sampled_ops"] < curve["sample"]["ops"] == len(_ops())


def test_a_range_is_its_list_and_json_has_memcached_names():
    doc = _json("-m", "4..12:4")
    assert [row["limit_maxbytes"] for row in doc["curve"]] == [mb << 20 for mb in (4, 8, 12)]
    assert list(doc["curve"][0]) == ["limit_maxbytes", "cmd_get", "get_hits", "get_misses", "hit_ratio",
                                     "evictions", "slabs_moved", "ideal_lru_hit_ratio", "ideal_lru_get_hits",
                                     "ideal_lru_evictions"]
    assert "maxbytes" not in doc["settings"] and doc["model"]["text"].count("-m 4, 8, 12") == 1
    assert _json("-m", "12,4,8,4")["curve"] == doc["curve"]                         # ascending, each once


def test_csv_is_a_row_per_limit_of_raw_numbers():
    result = run("simulate", WORKLOAD, "-m", "4,8", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [int(r["limit_maxbytes"]) for r in rows] == [4 << 20, 8 << 20]
    for r in rows:
        assert int(r["get_hits"]) + int(r["get_misses"]) == int(r["cmd_get"]) == 750
        assert float(r["hit_ratio"]) == int(r["get_hits"]) / 750
    assert result.stderr.startswith("model: memcached 1.6.45")


def test_the_table_shows_each_limit_in_units_and_no_progress_off_a_terminal():
    result = run("simulate", WORKLOAD, "-m", "4,8")
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["limit_maxbytes", "get_hits", "get_misses", "hit_ratio", "evictions",
                                "slabs_moved", "ideal_lru_hit_ratio"]
    assert lines[2].split()[:2] == ["4.00", "MiB"] and lines[3].split()[:2] == ["8.00", "MiB"]
    assert max(map(len, lines)) <= 120


def test_a_terminal_hears_of_each_limit_as_it_finishes():
    """Progress goes to stderr when it is a terminal (a pty here), one line per finished -m."""
    import os
    import pty
    import subprocess
    import sys

    main, secondary = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "slabcalc", "simulate", WORKLOAD, "-m", "2,4", "--format", "csv"],
                              stdout=subprocess.PIPE, stderr=secondary, timeout=60)
        os.close(secondary)
        said = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:          # the other end closed: all read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(main)
    assert proc.returncode == 0 and proc.stdout.decode().startswith("limit_maxbytes,")
    lines = sorted(line.strip() for line in said.decode().replace("\r", "\n").splitlines() if "replayed" in line)
    assert [line.split(",")[0] for line in lines] == ["-m 2 replayed (1 of 2)", "-m 4 replayed (2 of 2)"] or \
           [line.split(",")[0] for line in lines] == ["-m 2 replayed (2 of 2)", "-m 4 replayed (1 of 2)"]


def test_one_limit_prints_what_it_always_printed():
    assert "curve" not in _json("-m", "4") and "classes" in _json("-m", "4")


@pytest.mark.parametrize("limit,says", [
    ("16,abc", "not a size: 'abc'"),
    ("0", "-m 0"),
    ("0,16", "-m 0"),
    ("0,16 --profile 1.4.24", "no limit at all"),         # 1.4 starts with -m 0: no limit, no curve
    ("16,,32", "empty or doubled"),
    ("16..32", "needs a step"),
    ("32..16:4", "must go up"),
    ("16..32:0", "must go up"),
])
def test_a_bad_list_of_limits_is_one_line_and_exit_2(limit, says):
    limit, *more = limit.split()
    result = run("simulate", WORKLOAD, "-m", limit, *more)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ") and says in result.stderr


@pytest.mark.parametrize("args", [["report", str(ROOT / "examples" / "items.csv")], ["classes"]])
def test_other_commands_refuse_a_list_of_limits(args):
    result = run(*args, "-m", "16,32")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "simulate only" in result.stderr


def test_every_needs_one_limit():
    result = run("simulate", WORKLOAD, "-m", "4,8", "--every", "10")
    assert result.exit_code == 2 and "one -m" in result.stderr


def test_plot_draws_both_lines(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "curve.svg"
    result = run("simulate", WORKLOAD, "-m", "4,8,16", "--plot", str(out))
    assert result.exit_code == 0, result.output
    svg = out.read_text()
    assert "ideal LRU of the same bytes" in svg and "memcached (slab classes)" in svg


# -- the ideal LRU ------------------------------------------------------------------------------------

def _lookaside(n: int, keys: int, seed: int) -> list[tuple]:
    """Look-aside reads of skewed keys, each key one size (17 B to 900 KB), the clock ticking."""
    rng = random.Random(seed)
    size: dict[int, int] = {}
    ops = []
    for i in range(n):
        key = int(rng.paretovariate(0.8)) % keys
        if key not in size:
            size[key] = rng.choice((17, 100, 1000, 5000, rng.randrange(17, 900_000)))
        ops.append((float(i // 10), FILL, key, 16, size[key], 0, 0))
    return ops


@pytest.mark.parametrize("room,keys,seed", [(2 << 20, 3000, 7), (2 << 20, 30000, 8), (5 << 20, 30000, 9),
                                            (300_000, 3000, 10)])        # (a sample's room: objects too big)
def test_oracle_the_ideal_lru_hits_what_libcachesim_lru_hits(room, keys, seed):
    try:
        import libcachesim as lcs
    except ImportError as exc:
        missing(f"libcachesim is not installed (pip install -e '.[oracle]'): {exc}")
    settings = _settings(5)
    ops = _lookaside(8000, keys, seed)
    ntotal = ntotal_function(settings)
    theirs = lcs.LRU(room)
    hits = sum(bool(theirs.get(lcs.Request(obj_size=ntotal(k, v, f), obj_id=key + 1, clock_time=int(t))))
               for t, _, key, k, v, _, f in ops)
    mine = ideal_lru(settings, ops, capacity=room)
    assert mine.hits == hits and mine.gets == len(ops)
    assert 0 < mine.evictions and 0.2 < mine.hit_ratio < 1      # the trace makes the LRU work


def test_the_ideal_lru_keeps_memcached_request_rules():
    """TTLs end on memcached's whole seconds, deletes and too-large sets drop the old object,
    touch renews and bumps; sizes are ITEM_ntotal (hand-counted: 1.6.45, 64-bit, CAS on)."""
    s = _settings(2)
    assert ntotal_function(s)(10, 100, 0) == 48 + 8 + 11 + 102        # header, CAS, key + NUL, value + CRLF
    ops = [(0.0, SET, "a", 10, 100, 5, 0), (4.9, GET, "a", 0, 0, 0, 0),     # hit: expires at second 5
           (5.0, GET, "a", 0, 0, 0, 0),                                       # miss: second 5 is past it
           (6.0, SET, "b", 10, 100, 0, 0), (6.0, DELETE, "b", 0, 0, 0, 0), (6.0, GET, "b", 0, 0, 0, 0),
           (7.0, SET, "c", 10, 100, 2, 0), (8.0, TOUCH, "c", 0, 0, 10, 0), (12.0, GET, "c", 0, 0, 0, 0),
           (13.0, SET, "c", 10, 2 << 20, 0, 0), (13.0, GET, "c", 0, 0, 0, 0)]   # past -I: old value gone
    result = ideal_lru(s, ops)
    assert (result.gets, result.hits, result.evictions) == (5, 2, 0)


def test_the_ideal_lru_evicts_the_least_recently_used_by_bytes():
    s = _settings(2)
    size = ntotal_function(s)(10, 300_000, 0)
    fits = s.maxbytes // size                                   # 6 objects of ~300 KB in 2 MiB
    ops = [(0.0, SET, i, 10, 300_000, 0, 0) for i in range(fits)]
    ops += [(1.0, GET, 0, 0, 0, 0, 0), (1.0, SET, "new", 10, 300_000, 0, 0)]      # 0 used again: 1 goes
    ops += [(2.0, GET, i, 0, 0, 0, 0) for i in range(fits)]
    result = ideal_lru(s, ops)
    assert fits == 6 and result.evictions == 1 and result.hits == 1 + fits - 1


def test_a_sampled_ideal_lru_has_the_sample_share_of_the_bytes():
    s = _settings(4)
    ops = _lookaside(4000, 3000, 3)
    whole, half = ideal_lru(s, ops), ideal_lru(s, ops, sample=0.5)
    assert half.capacity == s.maxbytes // 2 and half.rate == 0.5
    kept = sum(key_hash(op[2]) < HASH_SPACE // 2 for op in ops)       # simulate --sample's keys
    assert whole.gets == len(ops) and half.gets == 2 * kept and half.hits + half.misses == half.gets
