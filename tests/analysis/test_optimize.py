"""``slabcalc optimize``: the DP against brute force, the scores against ``report``.

The brute force here shares nothing with the DP: it enumerates every list of
chunk sizes on the aligned grid, keeps those memcached's ``_parse_slab_sizes``
rule admits (stated again below, and checked against :func:`configure`), and
counts pages per class from the requests with numpy.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import numpy as np
import pytest
from helpers import run
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from slabcalc import configure, load_profile, slab_classes
from slabcalc.analysis.optimize import (
    best_slab_sizes,
    chunk_requests,
    items_that_fit,
    listed_sizes,
    optimize,
    page_bytes,
    search_n_f,
    settings_for,
    split,
)
from slabcalc.analysis.report import build_report
from slabcalc.inputs.items import Item
from slabcalc.model.settings import Refused
from slabcalc.records.optimize import verdict

MODERN = configure(load_profile("1.6.18"), [])                 # one page length for every class
PER_CLASS = configure(load_profile("1.4.27"), ["-I", "1024"])   # pages of chunk_size * perslab, 1 KiB


def admissible(lists: np.ndarray, chunk_size: int, align: int) -> np.ndarray:
    """Rows of effective class sizes some listed numbers make: each number rounds up to its
    class, is >= -n and more than ``align`` above the previous (smallest numbers, greedily)."""
    raw = np.maximum(lists[:, 0] - align + 1, chunk_size)
    ok = raw <= lists[:, 0]
    for j in range(1, lists.shape[1]):
        raw = np.maximum(lists[:, j] - align + 1, raw + align + 1)
        ok &= raw <= lists[:, j]
    return ok


def brute_force(settings, requests, max_classes: int, top: int) -> int:
    """Fewest page bytes over every admissible list of up to max_classes aligned sizes below top."""
    align, page, chunk_max = settings.profile.align, settings.slab_page_size, settings.largest_chunk
    low = -(-settings.chunk_size // align) * align
    grid = list(range(low, min(top, chunk_max), align))
    sizes = np.asarray(requests.sizes)
    prefix = np.concatenate(([0], np.cumsum(requests.counts)))
    length = {c: settings.page_length(c, page // c) for c in grid + [chunk_max]}
    best = None
    for k in range(1, max_classes + 1):
        lists = np.array(list(itertools.combinations(grid, k)), dtype=np.int64).reshape(-1, k)
        if not len(lists):
            continue
        lists = lists[admissible(lists, settings.chunk_size, align)]
        table = np.concatenate((lists, np.full((len(lists), 1), chunk_max)), axis=1)
        reached = prefix[np.searchsorted(sizes, table, side="right")]
        held = np.diff(np.concatenate((np.zeros((len(table), 1), dtype=np.int64), reached), axis=1), axis=1)
        perslab = page // table
        lengths = np.vectorize(length.get)(table)
        total = (-(-held // perslab) * lengths).sum(axis=1)
        if len(total):
            best = int(total.min()) if best is None else min(best, int(total.min()))
    return best


def distribution(draw_sizes, counts):
    return {Item(10, v, 0, None): n for v, n in zip(draw_sizes, counts)}


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.integers(0, 200), min_size=1, max_size=30, unique=True),
       data=st.data(), max_classes=st.integers(1, 4))
def test_dp_equals_brute_force_with_whole_pages(values, data, max_classes):
    counts = data.draw(st.lists(st.integers(1, 40_000), min_size=len(values), max_size=len(values)))
    requests = chunk_requests(MODERN, distribution(values, counts))
    answer = best_slab_sizes(MODERN, requests, max_classes)
    assert len(answer.chunk_sizes) <= max_classes
    assert answer.page_bytes == page_bytes(settings_for(MODERN, answer.listed), requests)
    # larger chunks only cost more here (proved in optimize.py); the grid still goes past the items
    assert answer.page_bytes == brute_force(MODERN, requests, max_classes, max(requests.sizes) + 80)


@pytest.mark.slow     # 5 s; its twin with whole pages runs in the floors' run too
@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.integers(0, 900), min_size=1, max_size=30, unique=True),
       data=st.data(), max_classes=st.integers(1, 3))
def test_dp_equals_brute_force_with_pages_of_chunk_times_perslab(values, data, max_classes):
    values = [v for v in values if 10 + 1 + v + 2 + 48 + 8 + 7 <= 1024] or [0]
    counts = data.draw(st.lists(st.integers(1, 60), min_size=len(values), max_size=len(values)))
    requests = chunk_requests(PER_CLASS, distribution(values, counts))
    answer = best_slab_sizes(PER_CLASS, requests, max_classes)
    assert answer.page_bytes == page_bytes(settings_for(PER_CLASS, answer.listed), requests)
    assert answer.page_bytes == brute_force(PER_CLASS, requests, max_classes, 1 << 20)  # the whole grid


def test_classes_one_align_apart_come_from_unaligned_numbers():
    # 96- and 104-byte items, many of each: 96 and 104 must both be classes
    requests = chunk_requests(MODERN, {Item(10, 27, 0, None): 54_610, Item(10, 35, 0, None): 50_410})
    assert requests.sizes == (96, 104)
    answer = best_slab_sizes(MODERN, requests, 2)
    assert answer.chunk_sizes == (96, 104)
    assert answer.listed == (95, 104)
    made = configure(MODERN.profile, ["-o", "slab_sizes=95-104"])
    assert [c.chunk_size for c in slab_classes(made)][:2] == [96, 104]


@pytest.mark.parametrize("seed", range(6))
def test_listed_sizes_are_what_memcached_accepts(seed):
    """listed_sizes finds numbers exactly when some numbers in the classes' windows are accepted."""
    rng = random.Random(seed)
    profile, align = MODERN.profile, 8
    for _ in range(40):
        k = rng.randint(1, 3)
        classes = sorted(rng.sample(range(48, 200, 8), k))
        windows = [range(c - align + 1, c + 1) for c in classes]
        accepted = []
        for numbers in itertools.product(*windows):
            try:
                made = configure(profile, ["-o", "slab_sizes=" + "-".join(map(str, numbers))])
            except Refused:
                continue
            assert [c.chunk_size for c in slab_classes(made)][:k] == classes
            accepted.append(numbers)
        listed = listed_sizes(classes, 48, align)
        assert (listed is not None) == bool(accepted)
        if listed is not None:
            assert listed in accepted


def mixed(seed: int, n: int = 400, large: bool = True):
    rng = random.Random(seed)
    dist = {}
    for _ in range(n):
        if large and rng.random() < 0.1:
            value = rng.randint(20_000, 900_000)
        else:
            value = int(rng.lognormvariate(5, 1.2))
        item = Item(rng.randint(4, 60), value, rng.choice((0, 0, 5)), None)
        dist[item] = dist.get(item, 0) + rng.randint(1, 3000)
    return dist


CONFIGS = [
    ("1.6.18", []), ("1.6.18", ["-f", "1.08", "-n", "30"]), ("1.6.18", ["-o", "slab_chunk_max=16384"]),
    ("1.6.18", ["-o", "slab_sizes=100-300-1000-5000"]), ("1.6.45", ["-C", "-I", "2m", "-f", "1.5"]),
    ("1.4.24", []), ("1.4.39", ["-o", "slab_chunk_max=65536"]), ("1.5.22", ["-o", "no_modern"]),
    ("1.2.8", []),
]


@pytest.mark.parametrize("release,args", CONFIGS)
def test_scores_are_the_reports(release, args):
    settings = configure(load_profile(release), args)
    for seed in range(3):
        dist = mixed(seed)
        requests = chunk_requests(settings, dist)
        sized = replace(settings, maxbytes=512 << 20, memory_limit_given=True)
        report = build_report(sized, dist, capacity=True)
        assert page_bytes(settings, requests) == report.total("page_bytes")
        from slabcalc.analysis.optimize import items_that_fit
        assert items_that_fit(sized, requests) == report.capacity.items


@pytest.mark.parametrize("seed", range(2))
def test_dp_never_worse_than_n_f(seed):
    dist = mixed(seed, large=seed % 2 == 0)
    requests = chunk_requests(MODERN, dist)
    answer = best_slab_sizes(MODERN, requests)
    best = search_n_f(MODERN, requests)[0]
    assert answer.page_bytes <= best.page_bytes
    # and every -n/-f list slab_sizes can express (a sample)
    rng = random.Random(seed)
    compared = 0
    for _ in range(200):
        s = replace(MODERN, chunk_size=rng.randint(1, 1024), factor=round(rng.uniform(1.01, 2.5), 3))
        regular = sorted({c.chunk_size for c in slab_classes(s)[:-1]})
        if listed_sizes(regular, MODERN.chunk_size, 8) is not None:
            assert answer.page_bytes <= page_bytes(s, requests)
            compared += 1
    assert compared >= 150, compared            # nearly every sampled list is one slab_sizes can express


def test_capacity_objective_is_exact_on_small_inputs():
    dist = {Item(10, v, 0, None): n for v, n in [(30, 9000), (45, 12000), (100, 7000), (150, 3000)]}
    requests = chunk_requests(MODERN, dist)
    sized = replace(MODERN, maxbytes=4 << 20, memory_limit_given=True)
    answer = best_slab_sizes(sized, requests, 3)
    from slabcalc.analysis.optimize import items_that_fit
    best = 0
    grid = range(56, 256, 8)
    for k in range(1, 4):
        for combo in itertools.combinations(grid, k):
            listed = listed_sizes(combo, 48, 8)
            if listed is not None:
                best = max(best, items_that_fit(settings_for(sized, listed), requests))
    assert answer.items_that_fit == best


def test_split_keeps_every_item():
    dist = [(Item(1, v, 0, None), n) for v, n in [(1, 1000), (2, 7), (3, 1)]]
    kept, held = split(dist, 0.25, seed=4)
    total = {}
    for item, n in kept + held:
        total[item] = total.get(item, 0) + n
    assert total == dict(dist)
    assert split(dist, 0.25, seed=4) == (kept, held)
    with pytest.raises(ValueError):
        split(dist, 1.5, seed=1)


def test_optimize_agrees_with_report_and_beats_defaults():
    opt = optimize(MODERN, list(mixed(1).items()))
    spaces = [c.space for c in opt.candidates]
    assert spaces[0] == "n_f" and "slab_sizes" in spaces and "slab_chunk_max" in spaces
    sizes = opt.first_of("slab_sizes")
    assert sizes.page_bytes <= opt.first_of("n_f").page_bytes <= opt.baseline.page_bytes
    assert not opt.defaults_fine


# -- the command ---------------------------------------------------------------

def test_cli_json_contract():
    import json

    result = run("optimize", "examples/bimodal.csv", "--validate", "0", "--format", "json")   # scored on every item
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert {"baseline", "candidates", "best", "defaults_fine"} <= set(record)
    assert record["baseline"]["page_bytes"] > 0
    spaces = [c["space"] for c in record["candidates"]]
    assert spaces == sorted(spaces, key=["n_f", "slab_sizes", "slab_chunk_max"].index)
    for c in record["candidates"]:
        assert {"space", "flags", "page_bytes"} <= set(c)
    per_space = {}
    for c in record["candidates"]:
        per_space.setdefault(c["space"], []).append(c["page_bytes"])
    assert all(v == sorted(v) for v in per_space.values())
    # the flags are what report then counts
    sizes = next(c for c in record["candidates"] if c["space"] == "slab_sizes")
    listed = sizes["flags"].split("=")[1]
    again = json.loads(run("report", "examples/bimodal.csv", "--slab-sizes", listed, "--format", "json").output)
    assert again["totals"]["page_bytes"] == sizes["page_bytes"]


def test_cli_defaults_are_fine_and_errors(tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("key,value,count\n10,26,10\n")   # one 96-byte item size: the first class already fits it
    result = run("optimize", str(one))
    assert result.exit_code == 0, result.output
    assert "defaults are fine" in result.output.splitlines()[-1]
    bad = run("optimize", str(one), "--max-classes", "63")
    assert bad.exit_code == 2 and "at most 62" in bad.output
    missing = run("optimize", str(tmp_path / "nope.csv"))
    assert missing.exit_code == 1 and "cannot read" in missing.output
    assert run("optimize", str(one), "--validate", "1.5").exit_code == 2


def test_cli_validate_reports_both_parts():
    result = run("optimize", "examples/bimodal.csv", "--validate", "0.25", "--seed", "3", "--format", "csv")
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[0].split(",")
    assert "held_out_page_bytes" in header and "held_out_gain_pct" in header


def test_gate_measures_the_configuration_given_as_report_does():
    for gate in (["--fail-over-waste", "5%"], ["--fail-over-memory", "100m"]):
        crossed, same = run("optimize", "examples/bimodal.csv", *gate), run("report", "examples/bimodal.csv", *gate)
        assert crossed.exit_code == same.exit_code == 3
        assert crossed.output.splitlines()[-1] == same.output.splitlines()[-1]
        assert crossed.output.splitlines()[-1].startswith("Error: ")
    passed = run("optimize", "examples/bimodal.csv", "--fail-over-waste", "50%", "--fail-over-memory", "1g")
    assert passed.exit_code == 0 and "Error" not in passed.output


# -- the verdict (issue 16, C13) ------------------------------------------------------------

def _optimum(dist, held=None, **spaces):
    from slabcalc.analysis.optimize import Candidate, Optimum

    profile = load_profile("1.6.18")

    def candidate(space, args):
        s = configure(profile, args)
        return Candidate(space, " ".join(args), build_report(s, dist),
                         build_report(s, held) if held is not None else None)

    return Optimum(candidate("baseline", []), tuple(candidate(space, args) for space, args in spaces.items()),
                   None, 0.25 if held is not None else None, 0)


# 10-byte keys and 1000-byte values: ntotal 1069.  Against the default classes (1184-byte chunks):
# slab_sizes=1072 saves 8.85% of page bytes, -n 1032 (1080-byte chunks) 7.96%, -n 1052 (1100) 6.19%.
ONE_SIZE = {Item(10, 1000, 0, None): 100_000}
HELD_OUT = {Item(10, 1006, 0, None): 20_000}     # ntotal 1075: no room in a 1072-byte chunk


def test_within_the_margin_the_simpler_setting_wins():
    opt = _optimum(ONE_SIZE, n_f=["-n", "1032"], slab_sizes=["-o", "slab_sizes=1072"])
    assert round(opt.gain_pct(opt.first_of("slab_sizes")), 2) == 8.85
    assert round(opt.gain_pct(opt.first_of("n_f")), 2) == 7.96
    assert opt.best.space == "n_f"
    why = verdict(opt)
    assert why["preferred_to"] == {"space": "slab_sizes", "flags": "-o slab_sizes=1072", "gain_pct": 8.85,
                                   "why": "simpler"}
    # 2.65 points apart: beyond the margin, the larger gain wins
    opt = _optimum(ONE_SIZE, n_f=["-n", "1052"], slab_sizes=["-o", "slab_sizes=1072"])
    assert opt.best.space == "slab_sizes" and verdict(opt)["preferred_to"] is None


def test_with_validate_the_verdict_goes_by_the_held_out_items():
    opt = _optimum(ONE_SIZE, HELD_OUT, n_f=["-n", "1052"], slab_sizes=["-o", "slab_sizes=1072"])
    assert opt.gain_pct(opt.first_of("slab_sizes")) > opt.gain_pct(opt.first_of("n_f")) + 1
    assert opt.held_out_gain_pct(opt.first_of("slab_sizes")) < 0 < opt.held_out_gain_pct(opt.first_of("n_f"))
    assert opt.best.space == "n_f"
    assert verdict(opt)["on"] == "held_out"
    assert verdict(opt)["gain_pct"] == round(opt.held_out_gain_pct(opt.first_of("n_f")), 2)


def test_a_trapped_n_f_is_not_the_simpler_setting():
    opt = _optimum(ONE_SIZE, n_f=["-n", "1032", "-f", "1.01"], slab_sizes=["-o", "slab_sizes=1072"])
    assert round(opt.gain_pct(opt.first_of("n_f")), 2) == 7.96
    assert opt.best.space == "slab_sizes"
    assert verdict(opt)["preferred_to"] is None


@pytest.mark.parametrize("release, args", [("1.6.45", []), ("1.6.18", ["-o", "slab_chunk_max=16384"]),
                                           ("1.4.24", []), ("1.2.8", []), ("1.4.20", ["-I", "2m"]),
                                           ("1.5.22", ["-o", "no_modern"])])
def test_the_vectorized_grid_is_slab_classes_and_page_bytes(release, args):
    """The -n/-f grid's numpy twin builds the tables slab_classes builds (class cap, duplicate
    classes of tiny factors, factor 2's start, the largest class) and costs them as page_bytes does."""
    from dataclasses import replace

    import numpy as np

    from slabcalc.analysis.optimize import FACTORS, chunk_requests, grid_page_bytes, page_bytes
    from slabcalc.model.classes import class_tables

    settings = replace(configure(load_profile(release), args), slab_sizes=None)
    rng = random.Random(release)
    requests = chunk_requests(settings, [(Item(None, None, 0, rng.randint(60, 200_000)), rng.randint(1, 50))
                                         for _ in range(300)])
    ns = list(range(1, 400, 9))
    factors = list(FACTORS[::9]) + [2.0, 1.013]
    tables = class_tables(settings, ns, factors)
    grid = grid_page_bytes(settings, ns, factors, requests).tolist()
    assert tables.shape[:2] == (len(factors), len(ns)) and len(grid) == len(factors)
    for factor, table, costs in zip(factors, tables, grid):
        for row, n, cost in zip(table, ns, costs):
            one = replace(settings, chunk_size=n, factor=factor)
            classes = slab_classes(one)
            sizes = [c.chunk_size for c in classes]
            assert row[:len(sizes)].tolist() == sizes and np.all(row[len(sizes):] == sizes[-1])
            assert cost == page_bytes(one, requests, classes)


@pytest.mark.slow     # 8 s of the model's arithmetic: the floors' run leaves it to the full suite
def test_each_n_f_candidate_is_measured_with_its_own_classes_when_items_are_chunked():
    """With items above slab_chunk_max, -m's capacity is counted item by item over the classes: each
    -n/-f pair's must be counted with its own classes (it was counted with the grid's last pair's)."""
    dist = {Item(10, v, 0, None): n for v, n in [(70, 4000), (300, 3000), (2000, 800), (700_000, 6)]}
    requests = chunk_requests(MODERN, dist)
    assert requests.chunked
    found = search_n_f(replace(MODERN, maxbytes=24 << 20, memory_limit_given=True), requests, keep=3)
    assert len(found) == 3
    for candidate in found:
        assert candidate.settings.memory_limit == 24 << 20
        assert candidate.items_that_fit == items_that_fit(candidate.settings, requests), candidate.flags


def test_chunk_requests_of_sized_chunked_items_equal_placing_each(monkeypatch):
    # chunk_requests places chunked items known by size in bulk (place_sized); the requests, the
    # chunk shapes capacity counts and the items placed must equal placing each item by itself
    from slabcalc.analysis import bulk as bulk_sums

    rng = random.Random(21)
    too_large = 0
    for release, args in (("1.4.36", ["-o", "slab_chunk_max=65536", "-I", "2m"]), ("1.5.22", []),
                          ("1.6.18", ["-o", "slab_chunk_max=16384"]), ("1.6.45", ["-I", "4m", "-C"])):
        s = configure(load_profile(release), args)
        rows = [(Item(None, None, 0, rng.choice([rng.randint(80, 20000), rng.randint(16000, 4 << 20)])),
                 rng.choice([0, 1, rng.randint(1, 10 ** 4)])) for _ in range(600)]
        bulk = chunk_requests(s, rows)
        with monkeypatch.context() as m:
            m.setattr(bulk_sums, "sized_chunks_apply", lambda *a: False)
            each = chunk_requests(s, rows)
        assert bulk.chunked
        too_large += bulk.too_large
        assert replace(bulk, chunked=()) == replace(each, chunked=())
        assert dict(bulk.chunked) == dict(each.chunked)
    assert too_large      # items over -I were met (and left to place())


@pytest.mark.parametrize("seed", range(3))
def test_the_capacity_bound_never_cuts_a_configuration_that_fits_more(seed):
    # search_n_f with -m skips every configuration whose capacity_bound is under the keep-th best
    # capacity found: the bound must hold for every configuration, or a better one is lost.  A
    # mix of few items per kind under a small -m stores more than its pages say (first pages are
    # granted past -m, and kinds arrive smallest first), which the earlier bound missed.
    import slabcalc.analysis.optimize as opt
    from slabcalc.analysis.optimize import FACTORS

    rng = random.Random(seed)
    rows = [(Item(rng.randint(5, 60), rng.choice([rng.randint(10, 3000), rng.randint(10, 200_000),
                                                  rng.randint(520_000, 900_000)]), 0, None),
             rng.choice([1, 1, rng.randint(1, 50), rng.randint(1, 5000)])) for _ in range(rng.randint(20, 80))]
    # and many items of few small kinds: under -m 2 they fill the first pages, granted past -m
    crowd = [(Item(20, rng.randint(100, 3000), 0, None), 2000) for _ in range(30)] + [(Item(20, 700_000, 0, None), 10)]
    for release, mix in (("1.6.18", rows), ("1.5.22", rows), ("1.6.18", crowd)):
        for megabytes in (2, 4, 16, 64):
            s = configure(load_profile(release), ["-m", str(megabytes)])
            requests = chunk_requests(s, mix)
            parts = opt._BoundParts.of(requests)
            for factor in rng.sample(FACTORS, 3):
                for n in rng.sample(range(1, 1025), 6):
                    c = replace(s, chunk_size=n, factor=factor, slab_sizes=None)
                    classes = slab_classes(c)
                    usage = opt.usage(c, requests, classes)
                    fit = items_that_fit(c, requests, classes=classes)
                    assert fit <= opt.capacity_bound(requests, classes, usage, megabytes << 20, parts), \
                        (release, megabytes, n, factor)


@pytest.mark.parametrize("seed", range(4))
def test_the_capacity_grid_finds_what_scoring_each_configuration_finds(seed):
    """With -m the -n/-f grid is costed whole and capacities counted only where they can change the
    answer (grid.py ``_capacity_grid``): its ``keep`` best are those of every configuration counted one
    by one (slab_classes, report's capacity), in search_n_f's order, and equal ties come in the order
    the one-by-one search (``_with_capacity``, still -L's) meets them."""
    from slabcalc.analysis.optimize import FACTORS, grid

    rng = random.Random(seed)
    one_size = [(Item(None, None, 0, rng.choice([rng.randint(60, 400), rng.randint(60, 3000)])), rng.randint(1, 900))]
    chunked = [(Item(rng.randint(5, 60), rng.choice([rng.randint(10, 3000), rng.randint(520_000, 900_000)]), 0, None),
                rng.choice([1, rng.randint(1, 50), rng.randint(1, 5000)])) for _ in range(rng.randint(2, 30))]
    # factors as far either side of the default (equal distances: ties broken by the grid's order), and
    # large -n whose first chunk holds a small size under both
    factors = sorted({f for k in rng.sample(range(1, 25), 3) for f in (round(1.25 - k / 100, 2), round(1.25 + k / 100, 2))}
                     | {1.25, 2.0, rng.choice(FACTORS)})
    ns = sorted(set(rng.sample(range(1, 1025, 8), 10) + [41, 49, 1017]))
    for release, megabytes in (("1.6.18", rng.choice([2, 6, 64])), ("1.5.22", 4), ("1.4.24", rng.choice([2, 16]))):
        for mix in (one_size, chunked):
            s = configure(load_profile(release), ["-m", str(megabytes)])
            p, requests = s.profile, chunk_requests(s, mix)
            plain = replace(s, slab_sizes=None)

            def order(c):
                return (c.key(), abs(c.settings.factor - p.default_factor),
                        abs(c.settings.chunk_size - p.default_chunk_size))
            configs = []
            for f in factors:
                for n in ns:
                    c = replace(plain, chunk_size=n, factor=f)
                    classes = slab_classes(c)
                    flags = " ".join(c.argv(chunk_size=n, factor=f"{f:g}"))
                    configs.append((grid.Scored(flags, c, page_bytes(c, requests, classes),
                                                items_that_fit(c, requests, classes=classes)), classes))
            every = sorted((scored for scored, _ in configs), key=order)
            found = grid._capacity_grid(plain, ns, factors, requests, 3)
            assert [order(c) for c in found] == [order(c) for c in every[:3]], (release, megabytes)
            for c in found:
                assert (c.page_bytes, c.items_that_fit) == (page_bytes(c.settings, requests),
                                                             items_that_fit(c.settings, requests))
            one_by_one = sorted(grid._with_capacity([(replace(sc, items_that_fit=None), cl) for sc, cl in configs],
                                                    requests, megabytes << 20, 3, order), key=order)[:3]
            assert found == one_by_one


@pytest.mark.parametrize("seed", range(3))
def test_the_grids_bound_never_cuts_a_configuration_that_fits_more(seed):
    """_capacity_grid skips the tables whose rough bound is under the keep-th best fit: the bound must hold
    for every table.  For a one-chunk mix whose first pages are sure to be granted within -m it counts
    whole pages (grid.py ``_reach_within``): checked against report's capacity of each table, under an -m
    of a few pages (where whole pages matter most, and where first pages may come past -m), with -L too."""
    import slabcalc.analysis.optimize.grid as g
    from slabcalc.analysis.optimize import FACTORS
    from slabcalc.analysis.optimize.requests import capacity_bound, usage

    rng = random.Random(seed)
    closer = 0
    for release, megabytes, flags in (("1.6.18", rng.choice([2, 3, 6]), []), ("1.6.18", 16, []),
                                      ("1.5.22", rng.choice([2, 4]), []), ("1.4.24", 3, ["-L"])):
        kinds = rng.randint(1, 12)
        mix = {Item(rng.randint(5, 60), rng.randint(10, 20_000), 0, None): rng.choice([1, 3, rng.randint(1, 9000)])
               for _ in range(kinds)}
        s = replace(configure(load_profile(release), ["-m", str(megabytes), *flags]), slab_sizes=None)
        requests = chunk_requests(s, mix)
        assert not requests.chunked
        factors = sorted(rng.sample(FACTORS, 4))
        ns = sorted(rng.sample(range(1, 1025), 8))
        rough = []
        for table, held, perslab, lengths in g._grid_tables(s, ns, factors, requests):
            rough.append(g._rough_bounds(table, held, perslab, lengths, requests, None, megabytes << 20,
                                         s.preallocate))
        rough = np.concatenate(rough)
        for i, f in enumerate(factors):
            for j, n in enumerate(ns):
                c = replace(s, chunk_size=n, factor=f)
                classes = slab_classes(c)
                rows = usage(c, requests, classes)
                fit = items_that_fit(c, requests, classes=classes)
                assert fit <= rough[i, j], (release, megabytes, flags, f, n, fit, rough[i, j])
                closer += rough[i, j] < capacity_bound(requests, classes, rows, megabytes << 20, None)
    assert closer       # the whole pages' bound was the closer one somewhere
