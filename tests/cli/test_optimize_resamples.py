"""``slabcalc optimize --resamples K``: the stated counts, in text and JSON, and the option's bounds.

The mixes are tests/analysis/test_optimize_stability.py's (two item sizes, 1000 and 1104 bytes, on
1.6.18, scored on every item with ``--validate 0``), where the reasoning is written out; the
expected counts come from ``report``'s page counts of the two tables, resample by resample.
"""

from __future__ import annotations

import json
import shlex

import pytest
from helpers import run

from slabcalc import configure, load_profile
from slabcalc.analysis.optimize import GAIN_THRESHOLD_PCT, resample
from slabcalc.analysis.report import build_report
from slabcalc.inputs.items import Item

PROFILE = load_profile("1.6.18")


def _file(tmp_path, small: int, large: int):
    path = tmp_path / "mix.csv"
    path.write_text(f"item_size,count\n1000,{small}\n1104,{large}\n")
    return str(path)


def _gain(args, pairs) -> float:
    base = build_report(configure(PROFILE, []), pairs).total("page_bytes")
    return 100 * (base - build_report(configure(PROFILE, args), pairs).total("page_bytes")) / base


def test_one_dominant_size_says_stable(tmp_path):
    result = run("optimize", _file(tmp_path, 38_000, 2_000), "--profile", "1.6.18", "--validate", "0",
                 "--resamples", "5")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "stable: the same flags on 5 of 5 resamples (--seed 0)"


def test_a_near_tie_says_not_stable_with_reports_counts(tmp_path):
    path = _file(tmp_path, 19_500, 19_000)
    doc = json.loads(run("optimize", path, "--profile", "1.6.18", "--validate", "0", "--resamples", "8",
                         "--format", "json").stdout)
    flags = doc["best"]["flags"]
    mix = [(Item(None, None, 0, 1000), 19_500), (Item(None, None, 0, 1104), 19_000)]
    keeps = []
    for k in range(1, 9):      # the verdict's rule on report's counts: the list wins by over 1 point, or not
        pairs = resample(mix, 0, k)
        keeps.append(not _gain(["-o", "slab_sizes=1000-1104"], pairs) > _gain(shlex.split(flags), pairs)
                     + GAIN_THRESHOLD_PCT)
    same = keeps.count(True)
    assert 0 < same < 8
    st = doc["resamples"]
    assert (st["count"], st["same_flags"], st["stable"], st["seed"], st["judged_on"]) == (8, same, False, 0, "items")
    assert [d["same_flags"] for d in st["draws"]] == keeps
    assert all(d["flags"] == "-o slab_sizes=1000-1104" for d in st["draws"] if not d["same_flags"])
    assert all(isinstance(d[f], int) for d in st["draws"]
               for f in ("items", "baseline_page_bytes", "page_bytes", "recommended_page_bytes"))
    text = run("optimize", path, "--profile", "1.6.18", "--validate", "0", "--resamples", "8").output
    said = " ".join(text.split())
    others = ", ".join(f"#{k}" for k, keep in enumerate(keeps, 1) if not keep)
    assert (f"not stable: the same flags on {same} of 8 resamples (--seed 0); the other {8 - same} ({others}) "
            f"chose other slab_sizes lists") in said
    assert f"the gain does not hold on each: {others} more than 1% short" in said


def test_zero_skips_and_the_bounds_are_refused(tmp_path):
    path = _file(tmp_path, 38_000, 2_000)
    doc = json.loads(run("optimize", path, "--resamples", "0", "--format", "json").stdout)
    assert doc["resamples"] is None
    assert "resamples (--seed" not in run("optimize", path, "--resamples", "0").output
    for bad in ("-1", "21", "nan", "2.5"):
        result = run("optimize", path, "--resamples", bad)
        assert result.exit_code == 2 and "--resamples" in result.stderr, (bad, result.output)
