"""``simulate --target-hit-ratio R``: the smallest ``-m`` that reaches R, searched between the curve's points.

The answer M is held three ways: the model against itself (``simulate -m M`` reaches R and
``simulate -m M-1`` does not, each a separate run; every limit between the curve's points replayed
one by one finds the same first M), and against a real memcached (the server started with ``-m M``
hits at least R of the gets and with ``-m M-1`` fewer, on the compat path where the replay is
exact).  Targets outside (0, 1] and targets the largest ``-m`` does not reach are refused (exit 2).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from helpers import ROOT, o_words, run
from helpers import op as _op
from helpers import s as _set
from test_simulate_fidelity import COMPAT, replayed_counts

from slabcalc import configure
from slabcalc.analysis.curve import TargetError, hit_ratio_curve, target_limit
from slabcalc.engines.simulate import GET, lru_mode, simulate

CALCIFIED = str(ROOT / "examples" / "calcification.csv")


def _json(*args: str) -> dict:
    result = run("simulate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _hits(*args: str) -> tuple[int, int]:
    totals = _json(*args)["totals"]
    return totals["get_hits"], totals["cmd_get"]


def test_the_limit_reaches_the_ratio_and_a_megabyte_less_does_not():
    found = _json(CALCIFIED, "-m", "2,4,8,12,16", "--target-hit-ratio", "0.9")
    m = found["target_limit_mb"]
    assert 4 < m < 8                  # between the curve's points 4 (0.52) and 8, found by the search
    hits, gets = _hits(CALCIFIED, "-m", str(m))
    assert Fraction(hits, gets) >= Fraction(9, 10)
    hits, gets = _hits(CALCIFIED, "-m", str(m - 1))
    assert Fraction(hits, gets) < Fraction(9, 10)
    assert found["target"]["below"]["limit_mb"] == m - 1
    assert found["target"]["below"]["get_hits"] == hits


def test_the_search_finds_the_first_limit_a_walk_up_from_the_point_before_finds():
    walked = next(m for m in range(5, 9)
                  if Fraction(*_hits(CALCIFIED, "-m", str(m))) >= Fraction(9, 10))
    assert _json(CALCIFIED, "-m", "4,8", "--target-hit-ratio", "0.9")["target_limit_mb"] == walked


def test_the_text_output_names_the_limit_and_the_one_below():
    result = run("simulate", CALCIFIED, "-m", "4,8", "--target-hit-ratio", "0.9")
    assert result.exit_code == 0, result.output
    found = _json(CALCIFIED, "-m", "4,8", "--target-hit-ratio", "0.9")
    assert f"-m {found['target_limit_mb']} is the smallest limit that reaches hit ratio 0.9" \
        in " ".join(result.stdout.split())


@pytest.mark.parametrize("ratio", ["0", "-0.5", "1.5", "nan", "inf"])
def test_a_ratio_outside_0_1_is_refused_before_any_replay(ratio):
    result = run("simulate", CALCIFIED, "-m", "4,8", "--target-hit-ratio", ratio)
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("Error: Invalid value for '--target-hit-ratio': ")
    assert "is not a share" in result.output
    assert "Traceback" not in result.output


def test_a_ratio_the_largest_limit_does_not_reach_is_refused_and_says_what_it_reached():
    result = run("simulate", CALCIFIED, "-m", "2,4", "--target-hit-ratio", "0.9")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: --target-hit-ratio: hit ratio 0.9 is not reached: the largest -m, 4, "
                                     "hits 0.5200; give a larger -m")     # 390 of 750 gets: the curve's own row


def test_one_limit_searches_below_it_down_to_the_smallest_the_release_starts_with():
    found = _json(CALCIFIED, "-m", "8", "--target-hit-ratio", "0.5")
    # -m 2 hits 390 of 750; 1.6.45 refuses -m 1 with -I 1m ("item size limit higher than 1/2 of memory max")
    assert found["target_limit_mb"] == 2 and found["target"]["below"] is None
    assert "memcached refuses to start with -m 1" in found["target"]["text"]


def test_a_workload_without_gets_has_no_ratio_to_reach(tmp_path):
    path = tmp_path / "sets.csv"
    path.write_text("time,key,value_size\n0,a,100\n")
    result = run("simulate", str(path), "-m", "4,8", "--target-hit-ratio", "0.5")
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: --target-hit-ratio: the workload has no get: there is no hit ratio to reach"


def test_the_library_refuses_a_ratio_outside_0_1():
    curve = hit_ratio_curve([configure(_profile(), ["-m", "4"])], [_set(0, "a")], workers=1)
    with pytest.raises(TargetError):
        target_limit(curve, float("nan"), lambda mb: None, [])


def _profile():
    from slabcalc import load_profile

    return load_profile("1.6.18")


# -- against a real memcached --------------------------------------------------------------------

def cyclic_fill(keys: int = 9000, value: int = 1000) -> list[tuple]:
    """Set ``keys`` items of one size, then get each once in the order set: the gets that hit are the
    items the limit kept (the newest), so the hit ratio grows with -m a page at a time."""
    return [_set(0, f"k{i:05d}", value) for i in range(keys)] + [_op(1, GET, f"k{i:05d}") for i in range(keys)]


def test_the_real_server_reaches_the_ratio_at_the_limit_found_and_not_a_megabyte_below(memcached, profile,
                                                                                        tmp_path):
    ops = cyclic_fill()
    path = tmp_path / "cyclic.csv"
    path.write_text("time,op,key,value_size\n" + "".join(
        f"{t},{'set' if kind != GET else 'get'},{key},{size if kind != GET else ''}\n"
        for t, kind, key, _, size, _, _ in ops))
    found = _json(str(path), "--profile", profile.release, "-m", "4,16", "-o", COMPAT, "--target-hit-ratio", "0.6")
    m = found["target_limit_mb"]
    assert 4 < m < 16 and found["target"]["replays"] >= 3
    for limit, reaches in ((m, True), (m - 1, False)):
        args = ["-m", str(limit), "-o", COMPAT]
        settings = configure(profile, args)
        assert lru_mode(settings, o_words(args)) == "compat"
        _, totals = replayed_counts(memcached, args, ops)
        assert (Fraction(totals["get_hits"], totals["get_hits"] + totals["get_misses"]) >= Fraction(3, 5)) is reaches
        sim = simulate(settings, ops)
        assert (sim.totals.hits, sim.totals.misses) == (totals["get_hits"], totals["get_misses"])
