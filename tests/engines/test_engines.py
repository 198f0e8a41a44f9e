"""The background threads' schedules, one rule a test, with figures worked out from 1.6.18's source.

1.6.18 defaults, a 6-byte key and a 100-byte value: ntotal 165, class 4 (chunk
192, 5461 a page).  The server starts at the workload's time 0 (``boot`` 0):
``current_time`` is then 62 (memcached.c: process_started = time(0) - 62).
"""

from __future__ import annotations

import pytest
from helpers import PER_PAGE_4, mover_wake_gaps, s, settings

from slabcalc import Refused, configure, load_profile
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.simulate import GET, simulate
from slabcalc.records.simulate import model_text


def test_an_idle_maintainer_backs_off_by_an_eighth_from_1_ms_to_1_s():
    # items.c 1623-1636: a class that did nothing waits backoff + backoff / 8, from 1000 us, at
    # most 1 s; the thread sleeps for the shortest wait
    config = settings()
    e = Engine(config, background_for(config))
    sleeps = [e.maintainer.wake() for _ in range(60)]
    assert sleeps[:5] == [1000, 1125, 1265, 1423, 1600]
    assert sleeps[-1] == 1_000_000 and sorted(sleeps) == sleeps


def test_a_class_with_work_is_juggled_again_at_once():
    # items.c 1637-1642: a juggle that moved items halves the class's wait, under 1 ms to 0, and a
    # zero wait is no sleep; the next wake-up, with nothing left to move, sets it to 1 ms again
    config = settings("-o", "slab_automove=0")
    e = Engine(config, background_for(config))
    e.run([s(0, f"a{i:05d}") for i in range(10)])
    m = e.maintainer
    e.now += 2                       # the items are 2 s old: older than hot_age (0), to COLD
    assert (m.wake(), m.backoff[4], e.lrus.counts[4].moves_to_cold) == (0, 0, 10)
    assert m.wake() <= 1000 and m.backoff[4] == 1000


def test_the_crawler_waits_65_s_after_its_first_empty_crawl_then_frees_expired_items_anywhere():
    # A new server crawls every LRU at its first check (next_crawls start at 0), finds nothing, and
    # waits 60 + 5 s: the crawl is due when current_time > 63 + 65 = 128, at t=67 (items.c
    # 1519-1555).  The expiring items sit before a live COLD tail, where the maintainer's tail
    # pulls never reach them; only the crawler frees them (crawler_reclaimed, not reclaimed) --
    # all of them: a crawl reaches the head of the longest LRU it crawls (crawler.c 607: remaining
    # = its size + 1; 446: --remaining < 1).  The figures are the server's: the paced capture
    # crawl-to-head-1.6.18 (tests/data/paced/, this workload) freed 100 and kept 100 at 70 s.
    ops = [s(0, f"live{i:04d}") for i in range(100)] + [s(0, f"exp{i:05d}", ttl=3) for i in range(100)]
    ops += [(80, GET, "nothing", 7, 0, 0, 0)]
    sim = simulate(settings("-o", "slab_automove=0"), ops, at=[66.5, 67.5])
    (_, before), (_, after) = sim.snapshots
    assert (before.totals.crawler_reclaimed, after.totals.crawler_reclaimed) == (0, 100)
    assert after.totals.reclaimed == 0 and after.totals.curr_items == 100
    off = simulate(settings("-o", "slab_automove=0,no_lru_crawler"), ops)
    assert (off.totals.crawler_reclaimed, off.totals.curr_items) == (0, 200)


def test_the_crawler_comes_back_within_seconds_for_a_class_whose_items_expire_within_the_minute():
    # After a crawl that saw more than 1 % + 1 of the TTL items due in the first minute, the wait
    # stays 0: the next crawl is due 5 s after the check that read the result (check at t+1,
    # crawl when current_time > that + 5: at t+7).  So items expiring every few seconds are freed
    # within about 7 s, not a minute.
    ops = [s(0, f"live{i:04d}") for i in range(100)]
    ops += [s(60 + i / 10, f"e{i:05d}", ttl=5) for i in range(600)]       # 10 a second from t=60
    ops += [(130, GET, "nothing", 7, 0, 0, 0)]
    sim = simulate(settings("-o", "slab_automove=0"), ops, at=[75, 90, 105, 125])
    freed = [state.totals.crawler_reclaimed for _, state in sim.snapshots]
    assert freed[0] > 0 and freed == sorted(freed)
    # at each snapshot, at most about 7 + 5 seconds' worth of expired items are still held
    for when, state in sim.snapshots:
        set_so_far = min(600, int((when - 60) * 10))
        expired = max(0, min(600, int((when - 66) * 10)))
        held = set_so_far - (state.totals.curr_items - 100)
        assert expired - held <= 7 * 10 + 10, (when, expired, held)


# -- 1.6.45: the automover on the mover thread, free pages only once -m is allocated, the mover evicts


def test_1_6_45_gives_free_pages_to_the_pool_only_once_all_of_m_is_allocated():
    # slab_automove.c 130-137 (1.6.45): "Only handle 'too much free' scenario if all memory was
    # malloc'ed" -- global_page_pool_size's flag, total_malloced >= -m.  5 pages of -m 8 whose items
    # expired: 1.6.18 gives 3 of them to the pool, 1.6.45 none.
    ops = [s(0, f"f{i:05d}", ttl=2) for i in range(5 * PER_PAGE_4)] + [(45, GET, "x", 1, 0, 0, 0)]
    moved = {release: simulate(configure(load_profile(release), ["-m", "8"]), ops).totals.pages_moved
             for release in ("1.6.18", "1.6.45")}
    assert moved == {"1.6.18": 3, "1.6.45": 0}


def test_1_6_38_has_1_6_45s_mover_thread_and_window_but_1_6_18s_free_page_rule():
    # Debian 13's 1.6.38, read beside 1.6.45: the automover runs on slabs_mover.c's thread
    # (slabs_mover.c 600-662, as 1.6.45's 649-712), memcached.c 262 sets slab_automove_window 10,
    # slab_automove.c 131 sends free pages to the pool with no mem_limit_reached check (1.6.18's
    # rule: 3 of the 5 expired pages), and the mover evicts the source's tail (slabs_mover.c 169-182)
    ops = [s(0, f"f{i:05d}", ttl=2) for i in range(5 * PER_PAGE_4)] + [(45, GET, "x", 1, 0, 0, 0)]
    sim = simulate(configure(load_profile("1.6.38"), ["-m", "8"]), ops)
    assert sim.totals.pages_moved == 3
    assert "slab automover 1 (window 10 s" in model_text(sim.model)
    config = configure(load_profile("1.6.38"), [])
    assert [type(a).__name__ for a in Engine(config, background_for(config)).actors] == ["Maintainer", "MoverThread"]
    ops = [s(0, f"f{i:05d}") for i in range(3 * PER_PAGE_4)]
    ops += [s(5 + i / 100, f"b{i:05d}", 2000) for i in range(100 * 60)]
    t = simulate(configure(load_profile("1.6.38"), ["-m", "4"]), ops).totals
    assert (t.pages_moved, t.slab_reassign_evictions_nomem, t.slab_reassign_inline_reclaim) == (1, 0, PER_PAGE_4)
    # memcached.c 5243: the window has no upper bound before 1.6.45
    wide = configure(load_profile("1.6.38"), ["-o", "slab_automove_window=2000"])
    assert background_for(wide).slab_automove_window == 2000
    with pytest.raises(Refused, match="slab_automove_window must be > 2 and < 1800"):
        configure(load_profile("1.6.45"), ["-o", "slab_automove_window=2000"])


def test_1_6_45_evicts_the_source_class_tail_to_rescue_its_page_instead_of_dropping_items():
    # -m 4: class 4 holds 3 full pages of items never read, class 15 evicts.  1.6.18 drops the moved
    # page's 5461 live items (slab_reassign_evictions_nomem).  1.6.45 (slabs_mover.c 178-230) keeps a
    # spare chunk before each chunk it looks at, evicting class 4's COLD tail for it: the tail is
    # the oldest items, which are page 0's own (allocated first), so each eviction frees a chunk of
    # the page (inline reclaim) until the whole page is free; one more eviction, from page 1, gives
    # the spare, which goes back to the free list: 5462 evictions, no rescue, nothing lost.
    ops = [s(0, f"f{i:05d}") for i in range(3 * PER_PAGE_4)]
    ops += [s(5 + i / 100, f"b{i:05d}", 2000) for i in range(100 * 60)]
    old = simulate(configure(load_profile("1.6.18"), ["-m", "4"]), ops).totals
    new = simulate(configure(load_profile("1.6.45"), ["-m", "4"]), ops)
    t = new.totals
    assert (old.pages_moved, old.slab_reassign_evictions_nomem) == (1, PER_PAGE_4)
    assert (t.pages_moved, t.slab_reassign_evictions_nomem, t.slab_reassign_rescues) == (1, 0, 0)
    assert t.slab_reassign_inline_reclaim == PER_PAGE_4
    assert {r.slab_class.id: r.evicted for r in new.classes}[4] == PER_PAGE_4 + 1


def test_1_6_45_runs_the_windowed_automover_for_slab_automove_2_too():
    # slabs_mover.c 607: the mover thread runs the algorithm unless slab_automove is 0
    config = configure(load_profile("1.6.45"), ["-o", "slab_automove=2"])
    assert "and the windowed one, window 10 s" in model_text(simulate(config, [s(0, "a00000")]).model)
    config = configure(load_profile("1.6.18"), ["-o", "slab_automove=2"])
    assert "windowed" not in model_text(simulate(config, [s(0, "a00000")]).model)


def test_1_6_45_mover_thread_runs_every_100_ms_then_every_second():
    # slabs_mover.c 690-712: after the thread starts (or moves a page) it runs the automover, then
    # sleeps 100 ms, until it has gone 11 runs without a move; then 1 s
    gaps, thread = mover_wake_gaps("1.6.45")
    assert gaps == [100_000] * 11 + [1_000_000] * 3
    assert thread.automover.cur == 15                  # every run fills a slot of the window


def test_the_model_line_says_which_releases_background_rules_were_read():
    # captured: 1.6.18 (Debian 12), 1.6.38 (Debian 13), 1.6.45, 1.5.22, 1.6.9 (builds of their tags; the
    # random corpus); read at their tags, not captured: the rest of 1.6.0-1.6.44 (docs/releases-read.md);
    # 1.5.0-1.5.21 only in part
    for release, read, captured in (("1.6.9", True, True), ("1.6.10", True, False), ("1.6.17", True, False),
                                    ("1.6.18", True, True),
                                    ("1.6.30", True, False), ("1.6.38", True, True), ("1.6.42", True, False),
                                    ("1.6.45", True, True), ("1.5.22", True, True), ("1.5.21", False, False)):
        text = model_text(simulate(configure(load_profile(release), []), [s(0, "a00000")]).model)
        assert ("were not checked" in text) is not read, release
        assert ("not checked against a capture" in text) is (read and not captured), release


# -- an LRU: a ring linked through its items ----------------------------------------------------

def _lru_steps():
    from hypothesis import strategies as st

    return st.lists(st.tuples(st.sampled_from(["link", "unlink", "bump", "evict"]), st.integers(0, 9)),
                    max_size=80)


def test_an_lru_keeps_the_order_an_ordered_dict_keeps():
    """Links at the head, unlinks anywhere, moves to the head, evictions at the tail: the ring holds
    the items in the order an OrderedDict of them does (the structure it replaced), tail first."""
    from collections import OrderedDict

    from hypothesis import given, settings

    from slabcalc.engines.lru import Lru, new_item
    from slabcalc.engines.table import key_hash

    @settings(max_examples=300, deadline=None)
    @given(_lru_steps())
    def check(steps):
        lru, model = Lru(), OrderedDict()
        items = {k: new_item(f"k{k}", key_hash(f"k{k}"), 1, 2, 0, 0, 100, k) for k in range(10)}
        for step, k in steps:
            item = items[k]
            if step == "link" and k not in model:
                lru.append(item)
                model[k] = item
            elif step == "unlink" and k in model:
                lru.remove(item)
                del model[k]
            elif step == "bump" and k in model:
                lru.remove(item)
                lru.append(item)
                model.move_to_end(k)
            elif step == "evict" and model:
                tail = lru.next
                assert tail is model[next(iter(model))]
                lru.remove(tail)
                model.popitem(last=False)
            assert lru.values() == list(model.values()) and len(lru) == lru.n == len(model)
            assert (lru.next is lru) == (lru.prev is lru) == (not model)
            assert list(lru) == [item.key for item in model.values()]

    check()


def test_1_6_34_to_1_6_40_with_slab_automove_2_say_the_real_server_can_crash():
    # slabs_mover.c slab_rebalance_start reads the source's first page without checking it: a class that
    # slab_automove=2 has emptied crashes the mover thread; 1.6.41 (commit 221c52162, "slabs: fix hang and
    # crash") checks it.  A real 1.6.38 (a build of the tag) segfaulted on random shapes r01029 (-m 512,
    # slab_automove=2; 27 s in, three runs of three) and r01052 (-m 11; 10 s in, two of two); the model
    # line says so where it applies, and only there
    said = {}
    for release in ("1.6.33", "1.6.34", "1.6.38", "1.6.40", "1.6.41", "1.6.45"):
        for mode in (1, 2):
            config = configure(load_profile(release), ["-o", f"slab_automove={mode}"])
            said[release, mode] = "can crash" in model_text(simulate(config, [s(0, "a00000")]).model)
    assert {k for k, v in said.items() if v} == {("1.6.34", 2), ("1.6.38", 2), ("1.6.40", 2)}
