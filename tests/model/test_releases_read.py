"""Releases between the captured ones, read at their own tags (docs/releases-read.md).

Each rule below was read in memcached's source at the tag where it changed; the
line cited is the published figure.  Each test runs the same situation under
the release's profile and under the neighbour's rules it borrowed before, and
fails if the profile fell back to them.  The paced captures of real 1.5.22 and
1.6.37 builds are checked by tests/fidelity/test_paced.py with every other capture.
"""

from __future__ import annotations

import pytest
from helpers import mover_wake_gaps, s

from slabcalc import configure, load_profile
from slabcalc.engines.automove import WindowedAutomover
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.lru import COLD, WARM, new_item
from slabcalc.engines.simulate import GET, SET, simulate
from slabcalc.records.simulate import model_text


def automover(release: str, *args: str):
    """An engine of ``release``'s defaults (``-m 1024``) and a windowed automover over it."""
    config = configure(load_profile(release), ["-m", "1024", *args])
    engine = Engine(config, background_for(config))
    return engine, WindowedAutomover(engine)


def held_pages(engine, cls: int, pages: int, tail_time: int) -> None:
    """``pages`` pages in ``cls`` with no free chunk, and a COLD tail last touched at ``tail_time``."""
    for _ in range(pages):
        assert engine.slabs.newslab(cls)
    del engine.slabs.free[cls][:]
    engine.lrus.q[COLD][cls].append(new_item(f"tail{cls}", -1, cls, COLD, 0, tail_time, 100, 0))


def runs(engine, mover, first: int, count: int, each=None):
    """``count`` runs, one a second from ``first`` (``each(now)`` first); the moves they asked for."""
    moves = []
    for now in range(first, first + count):
        engine.now = now
        if each is not None:
            each(now)
        src, dst = mover.run()
        if src != -1:
            moves.append((now, src, dst))
    return moves


# -- the windowed automover before 1.6.17 and 1.6.7 ----------------------------------------------

@pytest.mark.parametrize("release,at_once", [("1.5.22", True), ("1.6.0", True), ("1.6.16", True),
                                             ("1.6.17", False), ("1.6.18", False)])
def test_before_1_6_17_a_page_gained_in_this_run_does_not_keep_its_class_from_the_pool(release, at_once):
    # 1.5.22 slab_automove.c 93-96: the window is summed right after this run's slot is zeroed, so a
    # class that got 8 pages (all free) in this run reads clean and gives one to the pool at once;
    # 1.6.17 (commit e183fa37d, 100-124) sums after the slot is written: dirty for the window's 30 runs
    engine, mover = automover(release)
    runs(engine, mover, 1000, 40)                     # the window fills, clean
    for _ in range(8):
        assert engine.slabs.newslab(5)
    moves = runs(engine, mover, 1040, 40)
    assert moves[0] == ((1040, 5, 0) if at_once else (1070, 5, 0))   # its slot written again 30 runs on


@pytest.mark.parametrize("release,overridden", [("1.5.22", True), ("1.6.16", True), ("1.6.17", False),
                                                ("1.6.40", False)])
def test_before_1_6_17_a_move_between_classes_found_below_replaces_a_page_for_the_pool(release, overridden):
    # class 2: 3 pages, a tail 600 s old (the oldest); class 3 evicts every second (the youngest);
    # class 6 has 8 free pages and a clean window (for the pool).  1.5.22 slab_automove.c 116-120
    # breaks out of the loop at class 6 with (6, 0) but keeps youngest and oldest, and 145-149 then
    # moves a page 2 -> 3; 1.6.17 (131-138) resets both: the page goes to the pool
    engine, mover = automover(release)
    held_pages(engine, 2, 3, tail_time=400)
    held_pages(engine, 3, 3, tail_time=999)

    def evict(now):
        engine.lrus.counts[3].evicted += 1
        engine.lrus.q[COLD][3].next.time = now - 1   # the youngest's tail stays a second old

    runs(engine, mover, 1000, 40, evict)
    for _ in range(8):
        assert engine.slabs.newslab(6)
    runs(engine, mover, 1040, 35, evict)              # class 6's page-gained slot leaves the window
    engine.now = 1075
    evict(1075)
    assert mover.run() == ((2, 3) if overridden else (6, 0))


@pytest.mark.parametrize("release,receives", [("1.5.22", True), ("1.6.6", True), ("1.6.7", False),
                                              ("1.6.18", False)])
def test_before_1_6_7_running_out_of_memory_counts_as_evicting(release, receives):
    # 1.5.22 slab_automove.c 99-104: a slot is "evicted" when the class evicted or ran out of memory
    # (outofmemory), and 132 takes the youngest from those slots; 1.6.7 (commit e86a585d5, 106-117):
    # outofmemory only dirties the slot, and only evictions count
    engine, mover = automover(release)
    held_pages(engine, 2, 3, tail_time=400)
    held_pages(engine, 3, 3, tail_time=999)

    def out_of_memory(now):
        engine.lrus.counts[3].outofmemory += 1
        engine.lrus.q[COLD][3].next.time = now - 1

    moves = runs(engine, mover, 1000, 40, out_of_memory)
    assert bool(moves) is receives
    if receives:
        assert moves[0] == (1030, 2, 3)               # once the window has filled (window_cur > 30)


@pytest.mark.parametrize("release,receives", [("1.6.6", False), ("1.6.7", True), ("1.6.18", True)])
def test_from_1_6_7_a_class_with_most_evictions_receives_though_it_evicts_in_few_runs(release, receives):
    # class 3 evicts in one run of 3 (10 of the 30-run window: not more than half), and takes every
    # eviction then: its average share is 10/30 > 0.25, so 1.6.7 slab_automove.c 144-148 may pick it;
    # 1.6.6 (as 1.5.22, 132) needs evictions in more than 15 of the 30 runs
    engine, mover = automover(release)
    held_pages(engine, 2, 3, tail_time=400)
    held_pages(engine, 3, 3, tail_time=999)

    def every_third(now):
        if now % 3 == 0:
            engine.lrus.counts[3].evicted += 1
        engine.lrus.q[COLD][3].next.time = now - 1

    moves = runs(engine, mover, 1000, 60, every_third)
    assert bool(moves) is receives
    if receives:
        assert moves[0][1:] == (2, 3) and moves[0][0] % 3 == 0


def test_a_1_5_22_model_line_says_its_rules_were_read():
    text = model_text(simulate(configure(load_profile("1.5.22"), []), [s(0, "a00000")]).model)
    assert "not checked" not in text and "window 30 s" in text
    earlier = model_text(simulate(configure(load_profile("1.5.21"), []), [s(0, "a00000")]).model)
    assert "items.c and crawler.c were not checked" in earlier


# -- 1.6.30, 1.6.34, 1.6.41 ---------------------------------------------------------------------

def test_from_1_6_30_the_maintainer_sleeps_at_most_999_999_us():
    # items.c 1584 (1.6.30, commit 2395a2d77): MAX_LRU_MAINTAINER_SLEEP (1000000-1); before, 1000000
    for release, most in (("1.6.29", 1_000_000), ("1.6.30", 999_999), ("1.6.45", 999_999)):
        config = configure(load_profile(release), ["-o", "slab_automove=0,no_lru_crawler"])
        e = Engine(config, background_for(config))
        wakes = []
        for _ in range(80):
            wakes.append(e.maintainer.next_wake)
            e.now = e.epoch + e.maintainer.next_wake // 1_000_000
            e.maintainer.step()
        assert max(b - a for a, b in zip(wakes, wakes[1:])) == most, release


@pytest.mark.parametrize("release,thread,window", [("1.6.33", "Maintainer", 30), ("1.6.34", "MoverThread", 10),
                                                   ("1.6.37", "MoverThread", 10)])
def test_from_1_6_34_the_automover_runs_on_the_mover_thread_with_a_window_of_10(release, thread, window):
    # 1.6.34 slabs_mover.c 555-593 (slab_rebalance_check_automove), memcached.c 262: window 10
    config = configure(load_profile(release), [])
    e = Engine(config, background_for(config))
    assert [type(a).__name__ for a in e.actors][-1] == thread
    assert background_for(config).slab_automove_window == window


@pytest.mark.parametrize("release,gaps", [("1.6.34", [1_000_000] * 14), ("1.6.37", [1_000_000] * 14),
                                          ("1.6.38", [100_000] * 11 + [1_000_000] * 3)])
def test_1_6_34_to_1_6_37_mover_thread_sleeps_a_second_between_idle_runs(release, gaps):
    # 1.6.34 slabs_mover.c 644-649: now.tv_sec++ then a timed wait; 1.6.38 (645-660) adds
    # algo_backoff: 100 ms until 11 runs without a move
    assert mover_wake_gaps(release)[0] == gaps


@pytest.mark.parametrize("release,rule,value,borrowed", [
    # 1.6.34 slabs_mover.c 157-185: with allow_evictions the mover pulls the source's COLD tail for a
    # free chunk (the engine's rule is tested on 1.6.45 in test_engines); 1.6.18 slabs.c 1000 dropped
    # the page's live items
    ("1.6.34", "mover_without_free_chunk", "evict", "drop"),
    # 1.6.41 slab_automove.c 85-86, 134: global_page_pool_size(&mem_limit_reached) and "Only
    # handle 'too much free' scenario if all memory was malloc'ed" (tested on 1.6.45 in test_engines);
    # 1.6.38-1.6.40 have neither
    ("1.6.41", "free_pages_need_full_memory", True, False),
    ("1.6.44", "free_pages_need_full_memory", True, False),
    ("1.6.40", "free_pages_need_full_memory", False, True),
])
def test_rules_that_the_engine_already_runs_for_another_release(release, rule, value, borrowed):
    assert load_profile(release).background.rules[rule] == value != borrowed


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
def test_the_1_6_37_capture_misses_with_1_6_18s_rules():
    """The real 1.6.37 (a build of its tag, live-short: -m 8, 55 s): with 1.6.34's mover thread and
    window of 10 the model is within tolerance at every snapshot (test_paced's test_stored_paced_run);
    with the 1.6.18 rules it borrowed before (window 30, the automover on the maintainer) it misses
    at every snapshot from 20 s -- 8 152 evictions for the server's 161."""
    import dataclasses

    import paced
    from test_paced import OPS, differences

    capture = paced.load("live-short-1.6.37")
    borrowed = dataclasses.replace(load_profile("1.6.37"), background=load_profile("1.6.18").background)
    ops = [(t, OPS[op], key, len(key), value, ttl, 0) for t, op, key, value, ttl in capture.workload]
    sim = simulate(configure(borrowed, capture.args), ops, boot=capture.boot,
                   at=[snap["time"] for snap in capture.snapshots])
    assert int(capture.snapshots[-1]["stats"]["evictions"]) == 161 and sim.totals.evicted > 8000
    assert all(differences(snap, state) for (_, state), snap in zip(sim.snapshots[1:], capture.snapshots[1:]))


# -- 1.5.19: the segmented LRU's access time ----------------------------------------------------

@pytest.mark.parametrize("release,bumped", [("1.5.18", False), ("1.5.19", True), ("1.6.18", True)])
def test_before_1_5_19_a_warm_hit_sets_the_time_only_once_a_minute(release, bumped):
    # 1.5.18 items.c 1045-1052 -> do_item_update 564-585: an ACTIVE hit in HOT/WARM sets it->time
    # only when it is older than ITEM_UPDATE_INTERVAL (60 s), and lru_pull_tail relinks an ACTIVE
    # WARM tail only then (1178-1179); 1.5.19 (commit e3d97fd12) sets it on every such hit.  Beside
    # 100 items, one read at 1 s and 2 s (FETCHED, then ACTIVE in COLD: to WARM, time 2) and at 20 s.
    config = configure(load_profile(release), [])
    e = Engine(config, background_for(config))
    e.run([s(0, f"f{i:05d}") for i in range(100)]
          + [s(0, "a00000")] + [(t, GET, "a00000", 6, 0, 0, 0) for t in (1, 2, 20)] + [(21, GET, "x", 1, 0, 0, 0)])
    item = e.index["a00000"]
    assert item.seg == WARM and item.time - e.epoch == (20 if bumped else 2)


# -- extstore before 1.6.17 ---------------------------------------------------------------------

@pytest.mark.parametrize("release,refused", [("1.6.0", True), ("1.6.14", True), ("1.6.16", True),
                                             ("1.6.17", False), ("1.6.18", False)])
def test_extstore_before_1_6_17_is_refused_with_its_reason(release, refused):
    # commit 3d6d74a34 (first in 1.6.17, `git describe --contains`) replaced slab_automove_extstore.c's
    # per-class free-chunk balance and storage.c's per-class flush limits (ext_free_memchunks); the
    # model replays the later threads only.  Real 1.6.14 runs held pages they do not
    # (tests/data/random/1.6.14: r01008 class 36 3 pages against 1, r01014 class 14 18-19 against 16)
    from slabcalc.engines.background import SimulationError

    settings = configure(load_profile(release), ["-m", "16", "-o", "ext_path=/tmp/slabcalc-refused.data:64m"])
    ops = [(0.0, SET, "a", 1, 100, 0, 0)]
    if refused:
        with pytest.raises(SimulationError) as why:
            simulate(settings, ops)
        message = str(why.value)
        assert f"on {release}:" in message and "3d6d74a34" in message and "\n" not in message
    else:
        assert simulate(settings, ops).totals.curr_items == 1
