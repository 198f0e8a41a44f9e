"""``simulate --sample``: spatial sampling of keys (SHARDS), -m scaled, counts scaled back.

The rules are checked on their own (which keys a rate keeps, what -m becomes,
what a scaled figure is); the error of a sample is checked against the full
replay of the same workload, which the sample must approach within the bound
the issue sets (evictions and hit ratio within 5 % at a 10 % sample).
"""

from __future__ import annotations

import json
import math
import random

import ahead
import pytest
from helpers import run

from slabcalc import configure
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.sample import Sampled, SampleError, TooCoarse, check_rate, key_hash
from slabcalc.engines.simulate import GET, SET, simulate
from slabcalc.engines.slabs import Slabs


def test_the_hash_is_stable_and_spreads_neighbouring_keys():
    keys = [f"user:{i}" for i in range(200_000)]
    # about a tenth of any run of neighbouring keys falls under a tenth of the hash space
    for start in range(0, 200_000, 50_000):
        under = sum(key_hash(k) < (1 << 32) // 10 for k in keys[start:start + 50_000])
        assert abs(under - 5_000) < 4 * math.sqrt(50_000 * 0.1 * 0.9)     # four standard deviations
    # an int key (oracleGeneral's obj_id) by the id rule (model/sampling.py), not as its digits; its
    # consecutive ids spread too
    assert key_hash(12345) == (12345 * 2654435761) % (1 << 32) != key_hash("12345")
    for start in range(0, 200_000, 50_000):
        under = sum(key_hash(i) < (1 << 32) // 10 for i in range(start, start + 50_000))
        assert abs(under - 5_000) < 4 * math.sqrt(50_000 * 0.1 * 0.9)
    assert len({key_hash(k) for k in keys[:1000]}) == 1000


def test_a_sample_keeps_every_operation_of_its_keys_and_none_of_the_others():
    rng = random.Random(4)
    ops = [(i, rng.choice((SET, GET)), f"k{rng.randrange(5000)}", 8, 100, 0, 0) for i in range(50_000)]
    sampled = Sampled(0.2)
    kept = list(sampled.filter(iter(ops)))
    kept_keys = {op[2] for op in kept}
    assert kept == [op for op in ops if op[2] in kept_keys]
    assert all(key_hash(k) < int(0.2 * (1 << 32)) for k in kept_keys)
    assert not any(key_hash(op[2]) < int(0.2 * (1 << 32)) for op in ops if op[2] not in kept_keys)
    assert (sampled.ops, sampled.kept) == (50_000, len(kept))
    assert 0.17 < len(kept_keys) / 5000 < 0.23


def test_the_hit_ratio_error_is_that_of_sampled_keys():
    """Keys are sampled, not gets: two keys of 10 gets, one always hit, one never, at a 50 % sample,
    give a ratio of 0.5 with a 95 % half-width of 1.96 * sqrt(0.5 * (5^2 + 5^2)) / 20 = 0.49, where
    20 independent gets would give 1.96 * sqrt(0.25 / 20) = 0.219."""
    from types import SimpleNamespace

    from slabcalc.engines.sample import errors

    sim = SimpleNamespace(totals=SimpleNamespace(gets=20, hits=10, evicted=0), classes=())
    assert errors(sim, 0.5, {"a": [10, 10], "b": [10, 0]})["hit_ratio_error"] == pytest.approx(0.49)
    assert errors(sim, 0.5)["hit_ratio_error"] == pytest.approx(1.96 * math.sqrt(0.25 / 20))
    assert errors(sim, 1.0, {"a": [10, 10], "b": [10, 0]})["hit_ratio_error"] == 0.0


def test_a_memory_that_evicts_widens_by_its_pages_in_coarse_classes():
    """1 + 1.5 q, q the share of the pages in classes of fewer than 100 sampled items: 30 of 120 pages
    (a class of 99 items, one of 40) give 1 + 1.5 * 30 / 120 = 1.375; a class without pages does not
    count, and a memory that does not evict keeps the keys' interval as it is."""
    from types import SimpleNamespace

    from slabcalc.engines.sample import errors
    from slabcalc.engines.sample_error import coarse_widening

    def row(cls, pages, items):
        return SimpleNamespace(slab_class=SimpleNamespace(id=cls, chunk_size=96 * cls), pages=pages, items=items)

    classes = (row(1, 90, 5000), row(2, 20, 99), row(3, 10, 40), row(4, 0, 3))
    evicting = SimpleNamespace(totals=SimpleNamespace(gets=20, hits=10, evicted=7), classes=classes)
    assert coarse_widening(evicting) == pytest.approx(1.375)
    reads = {"a": [10, 10], "b": [10, 0]}
    quiet = SimpleNamespace(totals=SimpleNamespace(gets=20, hits=10, evicted=0), classes=classes)
    assert errors(quiet, 0.5, reads)["hit_ratio_error"] == pytest.approx(0.49)
    assert errors(evicting, 0.5, reads)["hit_ratio_error"] == pytest.approx(0.49 * 1.375)


def test_a_sample_counts_each_keys_gets_and_hits(profile):
    ops = [(0, SET, "a", 1, 10, 0, 0), (1, GET, "a", 1, 0, 0, 0), (2, GET, "a", 1, 0, 0, 0),
           (3, GET, "b", 1, 0, 0, 0)]
    sampled = Sampled(1.0)
    engine = Engine(configure(profile, []), background_for(configure(profile, [])))
    sampled.count_reads(engine)
    engine.run(sampled.counted(sampled.filter(iter(ops))))
    # gets, hits, operations, sets, fills, the last set's key and value bytes
    assert sampled.reads == {"a": [2, 2, 3, 1, 0, 11], "b": [1, 0, 1, 0, 0, 0]}


def test_rates_outside_zero_to_one_are_refused():
    assert check_rate(0.25) == 0.25 and check_rate(1) == 1.0
    for rate in (0, -0.5, 1.5, True):
        with pytest.raises(SampleError, match="above 0 and at most 1"):
            check_rate(rate)


def test_a_sampled_page_holds_its_share_of_the_chunks_and_counts_whole():
    """At a share of 0.1 a page of 8738 chunks holds 873 or 874, adding up to a tenth; a class of
    2 chunks a page at 0.01 gets its first chunk with its 25th page (the shares' 0.5 rounds to one,
    as 8738 x 0.1 = 873.8 rounds to 874: a class is held to the nearest chunk, not cut short of its
    share); -m counts whole pages, and a class's first page is granted past it as memcached grants it."""
    page = 1 << 20
    slabs = Slabs([0, 120, 524288], [0, 8738, 2], [0, page, page], 100 * page, share=0.1)
    got = []
    for _ in range(10):
        assert slabs.newslab(1)
        got.append(len(slabs.free[1]) - sum(got))
    assert set(got) == {873, 874} and slabs.chunks(1) == 8738 == len(slabs.free[1])
    assert slabs.malloced == 10 * page
    slabs = Slabs([0, 120, 524288], [0, 8738, 2], [0, page, page], 100 * page, share=0.01)
    assert slabs.alloc(2) >= 0 and len(slabs.pages[2]) == 25 and slabs.malloced == 25 * page
    while slabs.newslab(1):
        pass
    assert slabs.malloced == 100 * page and slabs.alloc(2) == -1        # the limit holds, in whole pages
    # a page that held more chunks than its share leaves: the class is owed the difference, a new
    # chunk in a page with room; one that held fewer (below, as a debt) gives up a free chunk now
    # or (full) the next one it frees
    slabs = Slabs([0, 120], [0, 10], [0, page], 4 * page, share=0.25)
    for _ in range(4):
        slabs.newslab(1)                    # 2.5, 2.5, 2.5, 2.5 chunks: pages of 3, 2, 3, 2
    held = [slabs.alloc(1) for _ in range(10)]
    gone = slabs.pages[1].pop(0)            # the mover takes the first page (3 chunks, their items rescued)
    slabs.left(gone, 1)
    assert slabs.carry[1] == pytest.approx(-0.5) and slabs.chunks(1) == 8      # 7.5 shares: 8 chunks
    assert len(slabs.free[1]) == 1          # the chunk it was owed, new in a page with room
    slabs.carry[1] -= 1                      # as if a page of 1.5 chunks too few had left
    assert slabs.alloc(1) == -1 and slabs.chunks(1) == 7          # the debt takes it; -m: no new page either
    slabs.carry[1] -= 1
    slabs.free[1].append(held[0])            # the class frees a chunk (of its newest page): the debt takes it
    assert slabs.alloc(1) == -1 and slabs.chunks(1) == 6
    assert slabs.carry[1] == pytest.approx(-0.5)
    first = Slabs([0, 120], [0, 8738], [0, page], 0 * page + 1, share=0.5)
    assert first.newslab(1) and not first.newslab(1)                   # the first page, past -m


def _mixed(n: int, keys: int, seconds: float, seed: int = 18):
    """Gets and sets of a skewed key space, values of 1-200 KB, a third with a TTL."""
    rng = random.Random(seed)
    rand, lognorm = rng.random, rng.lognormvariate
    for i in range(n):
        t = round(i * seconds / n, 3)
        key = f"user:{int(keys * rand() ** 2.5)}"
        if rand() < 0.6:
            yield (t, GET, key, 0, 0, 0, 0)
        else:
            r = rand()
            yield (t, SET, key, len(key), max(1000, min(int(lognorm(9.0, 0.9)), 200_000)),
                   60 if r < 0.17 else 300 if r < 0.33 else 0, 0)


def test_counts_are_the_sample_scaled_back(profile):
    """A sample is a replay of its keys with pages holding the rate's share of their chunks: its
    pages, page moves and memory are the node's as they are, every other count times 1/rate."""
    settings = configure(profile, ["-m", "128"])        # room for 0.25 (a rate of 0.16 or more)
    ops = list(_mixed(100_000, 80_000, 60))
    sim = simulate(settings, ops, sample=0.25)
    kept = Sampled(0.25)
    engine = Engine(settings, background_for(settings), share=0.25)
    raw = engine.results(None, engine.run(kept.filter(iter(ops))))
    s = sim.sample
    assert (s.ops, s.sampled_ops, s.rate) == (100_000, kept.kept, 0.25)
    assert sim.settings.maxbytes == 128 << 20 and sim.totals.ops == 100_000
    for name in ("evicted", "curr_items", "reclaimed", "crawler_reclaimed", "sets"):
        assert getattr(sim.totals, name) == round(getattr(raw.totals, name) * 4), name
    # the gets: every get read (the sample's times 4 only on average); the misses times 4; hits the rest
    gets = sum(op[1] == GET for op in ops)
    assert sim.totals.gets == gets != round(raw.totals.gets * 4)
    assert abs(sim.totals.misses - raw.totals.misses * 4) <= 1 and sim.totals.misses == sim.totals.gets - sim.totals.hits
    assert s.hit_ratio == pytest.approx(1 - raw.totals.misses * 4 / gets)
    assert s.sampled_hit_ratio == raw.totals.hits / raw.totals.gets
    for name in ("pages", "total_malloced", "pages_moved", "global_page_pool"):
        assert getattr(sim.totals, name) == getattr(raw.totals, name), name
    assert raw.totals.evicted > 0 and sim.totals.pages >= 128       # -m 128 (a first page may go past it)
    by_class = {r.slab_class.id: r for r in raw.classes}
    for r in sim.classes:
        was = by_class[r.slab_class.id]
        assert (r.pages, r.items, r.used_chunks, r.moved_in) == (was.pages, was.items * 4, was.used_chunks * 4,
                                                                 was.moved_in)
    # the evictions' error: binomial evictions of each sampled key's sets (counted here from the workload)
    from collections import Counter

    sets = Counter(op[2] for op in ops if op[1] == SET and key_hash(op[2]) < 0.25 * 2**32)
    p = raw.totals.evicted / sum(sets.values())
    square = p * (1 - p) * sum(sets.values()) + p * p * sum(n * n for n in sets.values())
    # and the resident items' number, as their mean chunk size varies: I * CV^2
    held = [(r.items, r.slab_class.chunk_size) for r in raw.classes]
    count = sum(n for n, _ in held)
    mean = sum(n * c for n, c in held) / count
    square += count * (sum(n * c * c for n, c in held) / count / mean ** 2 - 1)
    # and the keys' bytes (engines/sample_error.py, tested below), which only widens it
    assert s.evicted_error >= round(1.96 * math.sqrt(0.75 * square) * 4) > round(1.96 * math.sqrt(raw.totals.evicted) * 4)
    assert s.coarse_classes == tuple(r.slab_class.id for r in raw.classes if r.items < 100)


def test_a_memory_of_alike_keys_holds_hits_in_proportion_to_its_bytes():
    """K keys alike (g reads, b bytes each), H hits among them: Che's approximation holds each with the
    same p, the bytes held and the hits are both in proportion to p, so dH/dlnC is H; the share of
    the bytes a sample's keys hold varies as (1 - R) / K.  Keys of other sizes change the spread."""
    from slabcalc.engines.sample_error import footprint

    reads = {f"k{i}": [10, 6, 10, 0, 10, 4000] for i in range(50)}
    slope, spread = footprint(reads, 0.05, 300)
    assert slope == pytest.approx(300, rel=1e-6) and spread == pytest.approx(0.95 / 50)
    reads["big"] = [10, 6, 10, 0, 10, 400_000]       # one key of a hundred times the bytes: most of them
    assert footprint(reads, 0.05, 306)[1] == pytest.approx(0.95 * (50 * 4000**2 + 400_000**2) / 600_000**2)
    assert footprint(reads, 0.05, 9 * 51) == (0.0, 0.0)     # every read but the first hits: none at stake


def test_a_sample_of_one_is_the_whole_replay(profile):
    settings = configure(profile, ["-m", "64"])
    ops = list(_mixed(20_000, 20_000, 20))
    whole, sampled = simulate(settings, ops), simulate(settings, ops, sample=1)
    assert sampled.totals == whole.totals and sampled.classes == whole.classes
    assert sampled.sample.sampled_ops == 20_000
    assert (sampled.sample.evicted_error, sampled.sample.coarse_classes) == (0, ())


# -- room: -m must hold 20 sampled chunks of every class the workload uses ------------------------

def _sets(*value_sizes: int, times: int = 200):
    """``times`` sets of each value size (10-byte keys), one key each, a second apart."""
    return [(float(i), SET, f"k{size}:{i:06d}", 10, size, 0, 0)
            for size in value_sizes for i in range(times)]


def test_a_rate_whose_minus_m_cannot_hold_20_sampled_chunks_a_class_is_refused_at_its_boundary(profile):
    """1.6.18 defaults, -m 100: a 450 000-byte value sits in class 39 (524 288-byte chunks, 2 a
    1 MiB page, as `stats slabs` shows them).  20 sampled chunks of it take 20 / (2 R) pages, so
    100 pages hold them from R = 10 / 100 = 0.1 up; below, refused, naming 0.1.  A 10-byte value
    (class 1: 96 bytes, 10 922 a page) adds 20 / 10 922 pages: then 0.1 is short, and 0.101 (the
    exact 0.1000183 rounded up) is named -- though that class's items come after the refusal was
    due, as they are read."""
    settings = configure(profile, ["-m", "100"])
    big = _sets(450_000)
    assert simulate(settings, big, sample=0.1).sample.rate == 0.1          # exactly at the boundary
    with pytest.raises(TooCoarse, match=r"--sample 0.0999 is too coarse for -m 100: .* cannot hold 20 sampled "
                                        r"chunks of each of the 1 classes .*--sample 0.1$") as refused:
        simulate(settings, big, sample=0.0999)
    assert refused.value.smallest == 0.1
    exact = (20 / 2 + 20 / 10922) / 100
    assert 0.1 < exact < 0.101
    both = big + [(1000.0 + t, op, key, k, v, ttl, f) for t, op, key, k, v, ttl, f in _sets(10)]
    for short in (0.05, 0.1):
        with pytest.raises(TooCoarse, match=r"2 classes the workload uses; the smallest rate that can is "
                                            r"--sample 0.101$"):
            simulate(settings, both, sample=short)
    assert simulate(settings, both, sample=0.101).totals.ops == len(both)
    # a chunked item uses each class it has a chunk in: 700 000 bytes, a header in class 2, chunks in 39, 35
    with pytest.raises(TooCoarse, match="of each of the 3 classes"):
        simulate(settings, _sets(700_000), sample=0.1)
    assert simulate(settings, big, sample=1).sample.rate == 1               # the whole replay is never refused


def test_a_refused_rate_stops_replaying_when_it_is_found(profile):
    """The refusal is due at the first set of class 39: the operations after it are read (for the
    classes they use), not replayed."""
    from slabcalc.engines.sample import Room

    settings = configure(profile, ["-m", "10"])        # class 39 needs 10 / 0.99 pages: more than 10
    engine = Engine(settings, background_for(settings), share=0.99)
    ops = _sets(10, times=50) + [(60.0, SET, "big", 10, 450_000, 0, 0)] + _sets(2000, times=50)
    with pytest.raises(TooCoarse, match="3 classes"):
        engine.run(Sampled(0.99).filter(iter(ops), Room(settings, 0.99)))
    assert 40 < engine.counts["ops"] <= 50


def test_a_curve_is_refused_by_its_smallest_limit(profile):
    """-m 100 and 200 at 0.06: 200 pages have room from 0.05 up, 100 only from 0.1, which decides,
    before any replay; at 0.1 both replay."""
    from slabcalc.analysis.curve import hit_ratio_curve

    settings = [configure(profile, ["-m", str(mb)]) for mb in (200, 100)]
    done = []
    with pytest.raises(TooCoarse, match=r"for -m 100: .*--sample 0.1$"):
        hit_ratio_curve(settings, _sets(450_000), sample=0.06, workers=1, progress=lambda *a: done.append(a))
    assert done == []
    assert len(hit_ratio_curve(settings, _sets(450_000), sample=0.1, workers=1).points) == 2


def half_a_million_operations_without_page_moves() -> dict:
    """Half a million operations over 300 s, mixed sizes and TTLs, 1.6.18's defaults (maintainer,
    crawler) with -o slab_automove=0, -m 512, replayed whole and at 0.1 (a job of tests/ahead.py: a
    dozen seconds of the core the suite leaves idle)."""
    from slabcalc import load_profile

    settings = configure(load_profile("1.6.18"), ["-m", "512", "-o", "slab_automove=0"])
    figures = {}
    for name, rate in (("full", None), ("sample", 0.1)):
        sim = simulate(settings, _mixed(500_000, 150_000, 300), sample=rate)
        t = sim.totals
        figures[name] = {"evicted": t.evicted, "hits": t.hits, "gets": t.gets, "pages": t.pages,
                         "classes": {str(r.slab_class.id): r.pages for r in sim.classes}}
        if rate is not None:
            figures[name]["hit_ratio_error"] = sim.sample.hit_ratio_error
    return figures


@pytest.mark.slow
@pytest.mark.ahead("test_sample:half_a_million_operations_without_page_moves")
def test_a_ten_percent_sample_without_page_moves_is_within_five_percent_of_the_full_replay():
    """Evictions and hit ratio of the sample within the issue's 5 % of the whole replay, and the full
    hit ratio inside the stated error.  Measured: evictions +3.8 %; hit ratio 0.4300 +/- 0.0156 against
    the full 0.4268 (the sample's own ratio, before the adjustment to the gets read, was 5.0 %
    low, 0.4054, outside its stated +/- 0.0193: engines/sample.py errors).  The automover's case at 5 M
    operations is measured by benchmarks/sample_bench.py (docs/simulate.md)."""
    figures = ahead.result("test_sample:half_a_million_operations_without_page_moves")
    full, sample = figures["full"], figures["sample"]
    assert full["evicted"] > 50_000
    assert abs(sample["evicted"] - full["evicted"]) <= 0.05 * full["evicted"]
    full_ratio, ratio = full["hits"] / full["gets"], sample["hits"] / sample["gets"]
    assert abs(ratio - full_ratio) <= 0.05 * full_ratio
    assert abs(ratio - full_ratio) <= sample["hit_ratio_error"]          # the stated error covers it
    assert sample["pages"] == full["pages"] == 512                      # pages are the node's
    pages = full["classes"]
    assert max(abs(n - pages.get(c, 0)) for c, n in sample["classes"].items()) <= 8


def test_the_command_line(tmp_path):
    path = tmp_path / "ops.csv"
    rows = [f"{t},{'get' if op == GET else 'set'},{key},{value},{ttl}"
            for t, op, key, _, value, ttl, _ in _mixed(30_000, 20_000, 30)]
    path.write_text("time,op,key,value_size,ttl\n" + "\n".join(rows) + "\nx,set,a,1,0\n")
    result = run("simulate", str(path), "-m", "640", "--sample", "0.1", "--profile", "1.6.18", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    s, t, i = doc["sample"], doc["totals"], doc["input"]
    assert (s["rate"], s["ops"], s["scale"]) == (0.1, 30_000, 10)
    assert t["ops"] + i["rejected"] == i["rows"] == 30_001          # every row accounted for
    assert 0 < s["sampled_ops"] < 30_000 and "0.1 sample of the keys" in doc["model"]["text"]
    text = run("simulate", str(path), "-m", "640", "--sample", "0.1", "--profile", "1.6.18").stdout
    assert "every other count is the sample's times 10" in " ".join(text.split()) and "sampling error" in text
    result = run("simulate", str(path), "-m", "32", "--sample", "0.1", "--profile", "1.6.18")
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.startswith("Error: --sample 0.1 is too coarse for -m 32: ")
    smallest = result.stderr.split("--sample ")[-1].strip()
    assert 0.1 < float(smallest) < 1 and len(result.stderr.strip().splitlines()) == 1
    assert run("simulate", str(path), "-m", "32", "--sample", smallest, "--profile", "1.6.18").exit_code == 0
    for bad, why in (("0", "0 is not a share above 0"), ("1.5", "1.5 is not a share above 0"), ("x", "'x' is not a share")):
        result = run("simulate", str(path), "-m", "640", "--sample", bad)
        assert result.exit_code == 2 and why in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


# -- the automover of a sampled replay -------------------------------------------------------

def _sampled_automover(profile, share):
    """An engine of 1.6.18's defaults at ``share``, and its windowed automover (W = 30 runs)."""
    from slabcalc.engines.automove import WindowedAutomover

    engine = Engine(configure(profile, ["-m", "1024"]), background_for(configure(profile, ["-m", "1024"])),
                    share=share)
    return engine, WindowedAutomover(engine)


def _runs_until_a_move(engine, mover, first: int, last: int):
    """Run the automover once a second from ``first`` to ``last``: the first second with a move, and it."""
    for now in range(first, last + 1):
        engine.now = now
        src, dst = mover.run()
        if src != -1:
            return now, (src, dst)
    return None, None


def test_a_sampled_window_is_clean_only_without_evictions_in_w_over_r_seconds(profile):
    """A class with pages of free chunks gives one to the pool once its window is clean. In the node
    (share 1) an eviction keeps the window dirty for its 30 runs; in a 10 % sample, which sees a tenth
    of the evictions, one sampled eviction keeps it dirty for 30 / 0.1 = 300 seconds."""
    for share, dirty_for in ((1.0, 30), (0.1, 300)):
        engine, mover = _sampled_automover(profile, share)
        c = 5
        for _ in range(8):
            assert engine.slabs.newslab(c)            # every chunk free: far over 2.5 pages of them
        t0 = 1000
        engine.now = t0
        mover.run()                                   # the pages were gained in this run's slot
        engine.lrus.counts[c].evicted += 1                   # one eviction in the next second
        when, move = _runs_until_a_move(engine, mover, t0 + 1, t0 + 1000)
        assert move == (c, 0)
        assert when == t0 + 1 + dirty_for, share


def test_the_sampled_free_chunk_rule_needs_two_standard_deviations(profile):
    """2.5 pages of free chunks of a class of 4 chunks a page is a quarter of a chunk in a 1 % sample:
    the rule takes free chunks F with F - 2 sqrt(F) over it, five and not four; the node, ten."""
    engine, _ = _sampled_automover(profile, 1.0)
    big = next(c for c in range(1, len(engine.perslab)) if engine.perslab[c] == 4)
    for share, (under, over) in ((0.01, (4, 5)), (1.0, (10, 11))):
        for free, moves in ((under, False), (over, True)):
            engine, mover = _sampled_automover(profile, share)
            engine.slabs.pages[big] = list(range(40))
            engine.slabs.free[big].extend(range(free))
            _, move = _runs_until_a_move(engine, mover, 1000, 1040)
            assert (move == (big, 0)) is moves, (share, free)


# -- an error that holds (issue 39): the stated intervals against full replays ----------------------

def _recipe(requests: int, objects: int, seed: int) -> list[tuple]:
    """Issue 39's trace recipe, small: Zipf 0.9 over ``objects`` (random 63-bit ids), log-normal sizes
    50 B-200 KB, 20 000 requests a second, each a look-aside read (FILL) of a 16-byte key and the rest."""
    import numpy as np

    from slabcalc.model.ops import FILL

    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / np.arange(1, objects + 1) ** 0.9)
    ranks = np.searchsorted(cdf, rng.random(requests) * cdf[-1])
    ids = rng.integers(1, 1 << 63, size=objects, dtype=np.uint64)[ranks].tolist()
    sizes = np.clip(rng.lognormal(7.5, 1.8, size=objects), 50, 200_000).astype(int)[ranks].tolist()
    return [(float(i // 20_000), FILL, obj, 16, max(size - 16, 0), 0, 0) for i, (obj, size) in enumerate(zip(ids, sizes))]


def sample_coverage_cases() -> list[dict]:
    """Eight seeds of the recipe (200 000 requests over 40 000 objects), 1.6.18's defaults at -m 128,
    each replayed whole and at a 20 % sample (a job of tests/ahead.py: about a minute of the idle core)."""
    from slabcalc import load_profile

    settings = configure(load_profile("1.6.18"), ["-m", "128"])
    cases = []
    for seed in range(100, 108):
        ops = _recipe(200_000, 40_000, seed)
        full, sampled = simulate(settings, ops).totals, simulate(settings, ops, sample=0.2)
        s = sampled.sample
        cases.append({"ratio": full.hits / full.gets, "evicted": full.evicted, "estimate": s.hit_ratio,
                      "error": s.hit_ratio_error, "own": s.sampled_hit_ratio, "own_error": s.sampled_hit_ratio_error,
                      "sample_evicted": sampled.totals.evicted, "evicted_error": s.evicted_error})
    return cases


@pytest.mark.slow
@pytest.mark.ahead("test_sample:sample_coverage_cases")
def test_the_stated_intervals_hold_the_full_replays_figures():
    """The full replay's hit ratio and evictions inside the sample's stated 95 % intervals: measured 7 and
    8 of 8 at this size (6 and 6 without the keys' bytes' term, engines/sample_error.py: the samples whose
    keys' bytes are 5 % over or under a fifth of the whole, a memory that fits fewer or more of them;
    the evictions' half-width is then 17-19 %), before the coarse classes' widening; 8 and 8 with it.
    The adjusted hit ratio is within 0.012 of the full one in every case, at +/- 0.008 to 0.012 before
    that widening and 0.016 to 0.025 with it (at -m 128 a fifth of this small trace leaves most pages in
    classes of under 100 sampled items: the factor is about 2, wider than these cases need); the
    sample's own ratio (before issue 39's adjustment) errs by 0.031 on average, at +/- 0.023 to 0.062."""
    cases = ahead.result("test_sample:sample_coverage_cases")
    inside = sum(abs(c["estimate"] - c["ratio"]) <= c["error"] for c in cases)
    evictions = sum(abs(c["sample_evicted"] - c["evicted"]) <= c["evicted_error"] for c in cases)
    assert inside >= 7 and evictions >= 7, (inside, evictions)
    assert all(c["evicted"] > 10_000 for c in cases)                    # the memory evicts: -m matters
    assert max(abs(c["estimate"] - c["ratio"]) for c in cases) <= 0.012
    assert max(c["error"] for c in cases) <= 0.025
    adjusted = sum(abs(c["estimate"] - c["ratio"]) for c in cases) / len(cases)
    own = sum(abs(c["own"] - c["ratio"]) for c in cases) / len(cases)
    assert own >= 3 * adjusted, (own, adjusted)
