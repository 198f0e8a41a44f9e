"""One test per rule of the simulation engine, with figures worked out by hand.

Sizes (1.6.18, 64-bit, CAS on, flags 0, ``-o no_modern``): a 6-byte key and a
100-byte value make ntotal 48+8+7+102 = 165, class 4 (chunk 192, 5461 per
page, a page of 192*5461 = 1048512 bytes); a 2000-byte value makes 2065,
class 15 (chunk 2320, 451 per page, 1046320 bytes).  ``-m 2`` is 2097152
bytes: two class-4 pages (2097024) fit, a third does not.
"""

from __future__ import annotations

import pytest
from helpers import PER_PAGE_4, o_words, op, s, settings

from slabcalc.engines.engine import Engine
from slabcalc.engines.simulate import (
    DELETE,
    GET,
    TOUCH,
    SimulationError,
    background_for,
    describe_model,
    lru_mode,
    simulate,
)
from slabcalc.records.simulate import model_text, simulation_record

COMPAT = ["-o", "no_modern"]
def replay(ops, *args, release="1.6.18", every=None):
    """``simulate`` of ``ops`` under memcached's flags ``args`` (helpers.run is the command line)."""
    config = settings(*args, release=release)
    return simulate(config, ops, suboptions=o_words(args), every=every)


def by_class(sim):
    return {r.slab_class.id: r for r in sim.classes}


def fill_class_4(t=0, prefix="f", n=2 * PER_PAGE_4):
    return [s(t, f"{prefix}{i:05d}") for i in range(n)]


# -- pages and the memory limit -------------------------------------------------------


def test_pages_are_granted_up_to_the_limit_then_the_tail_is_evicted():
    sim = replay(fill_class_4() + [s(0, "x00000")], "-m", "2", *COMPAT)
    c4 = by_class(sim)[4]
    assert (c4.pages, c4.items, c4.evicted, c4.free_chunks) == (2, 2 * PER_PAGE_4, 1, 0)
    assert sim.totals.total_malloced == 2 * 1048512


def test_a_class_first_page_is_granted_past_the_limit():
    ops = fill_class_4() + [s(0, f"b{i:05d}", 2000) for i in range(452)]
    sim = replay(ops, "-m", "2", *COMPAT)
    c15 = by_class(sim)[15]
    assert sim.totals.total_malloced == 2 * 1048512 + 1046320 > 2 << 20
    assert (c15.pages, c15.items, c15.evicted) == (1, 451, 1)   # its second page is refused


def test_a_page_that_lands_exactly_on_the_limit_is_granted():
    # value 800000: class 42 (chunk 1048576, one per page, a page of 1048576 bytes)
    ops = [s(0, f"k{i}", 800000) for i in range(3)]
    sim = replay(ops, "-m", "2", *COMPAT)
    c42 = by_class(sim)[42]
    assert (c42.pages, c42.items, c42.evicted) == (2, 2, 1)
    assert sim.totals.total_malloced == 2 << 20


def test_pages_never_move_between_classes():
    ops = fill_class_4() + [op(0, DELETE, f"f{i:05d}") for i in range(2 * PER_PAGE_4)]
    ops += [s(0, f"b{i:05d}", 2000) for i in range(500)]
    sim = replay(ops, "-m", "2", *COMPAT)
    c4, c15 = by_class(sim)[4], by_class(sim)[15]
    assert (c4.pages, c4.free_chunks) == (2, 2 * PER_PAGE_4)     # all free, still class 4's
    assert (c15.pages, c15.evicted) == (1, 500 - 451)
    assert sim.finding is not None and sim.finding.free_bytes == 2 * PER_PAGE_4 * 192


# -- expiry: tail reclaim, on access ---------------------------------------------------


def test_expired_tail_items_are_reclaimed_before_a_free_chunk_is_taken():
    sim = replay([s(0, "a00000", ttl=1), s(2, "b00000")], "-m", "64", *COMPAT)
    c4 = by_class(sim)[4]
    assert (c4.reclaimed, c4.expired_unfetched, c4.items) == (1, 1, 1)
    assert c4.free_chunks == PER_PAGE_4 - 1      # b reused a's chunk: one chunk in use


def test_one_tail_walk_reclaims_at_most_five_items():
    ops = [s(0, f"a{i:05d}", ttl=1) for i in range(7)] + [s(2, "b00000")]
    assert by_class(replay(ops, *COMPAT))[4].reclaimed == 5
    ops.append(s(2, "b00001"))
    assert by_class(replay(ops, *COMPAT))[4].reclaimed == 7


def test_the_tail_walk_stops_at_the_first_live_item():
    ops = [s(0, "a00000", ttl=1), s(0, "b00000"), s(0, "a00001", ttl=1), s(2, "c00000")]
    assert by_class(replay(ops, *COMPAT))[4].reclaimed == 1


def test_tail_reclaim_waits_a_second_longer_than_a_get():
    # exptime = 0 + 1; lru_pull_tail reclaims when exptime < current_time, do_item_get when <=
    at_one = replay([s(0, "a00000", ttl=1), s(1, "b00000")], *COMPAT)
    assert by_class(at_one)[4].reclaimed == 0 and at_one.totals.curr_items == 2
    got = replay([s(0, "a00000", ttl=1), op(1, GET, "a00000")], *COMPAT)
    assert (got.totals.misses, got.totals.get_expired, got.totals.curr_items) == (1, 1, 0)
    assert by_class(got)[4].free_chunks == PER_PAGE_4


def test_an_expired_item_at_the_tail_of_a_full_class_is_evicted_when_not_yet_reclaimable():
    ops = [s(0, "a00000", ttl=2)] + fill_class_4(n=2 * PER_PAGE_4 - 1) + [s(2, "x00000")]
    c4 = by_class(replay(ops, "-m", "2", *COMPAT))[4]
    assert (c4.evicted, c4.evicted_nonzero, c4.reclaimed) == (1, 1, 0)


def test_delete_touch_and_overwrite_free_expired_items():
    ops = [s(0, "a00000", ttl=1), s(0, "b00000", ttl=1), s(0, "c00000", ttl=1),
           op(1, DELETE, "a00000"), op(1, TOUCH, "b00000", ttl=5), s(1, "c00000")]
    sim = replay(ops, *COMPAT)
    t = sim.totals
    assert (t.get_expired, t.delete_hits, t.touch_hits, t.curr_items) == (3, 0, 0, 1)


def test_touch_sets_a_new_exptime():
    ops = [s(0, "a00000", ttl=1), op(0, TOUCH, "a00000", ttl=10), op(5, GET, "a00000")]
    sim = replay(ops, *COMPAT)
    assert (sim.totals.touch_hits, sim.totals.hits) == (1, 1)


# -- the LRU ---------------------------------------------------------------------------


def _first_in_full_class(get_at):
    """a is the oldest item of a full class, got once at ``get_at``; then one more set."""
    ops = [s(0, "a00000")] + fill_class_4(n=2 * PER_PAGE_4 - 1)
    ops += [op(get_at, GET, "a00000"), s(get_at, "x00000"), op(get_at, GET, "a00000")]
    return replay(ops, "-m", "2", *COMPAT)


def test_a_hit_does_not_bump_an_item_bumped_within_60_seconds():
    sim = _first_in_full_class(60)
    assert (sim.totals.hits, sim.totals.misses) == (1, 1)      # a was still the tail: evicted


def test_a_hit_bumps_an_item_last_bumped_more_than_60_seconds_ago():
    sim = _first_in_full_class(61)
    assert (sim.totals.hits, sim.totals.misses) == (2, 0)      # f00000 was evicted instead


def test_an_overwrite_allocates_the_new_item_before_releasing_the_old():
    ops = fill_class_4() + [s(0, "f09999")]
    c4 = by_class(replay(ops, "-m", "2", *COMPAT))[4]
    assert (c4.evicted, c4.free_chunks, c4.items) == (1, 1, 2 * PER_PAGE_4 - 1)


def test_an_overwrite_may_evict_the_key_it_replaces():
    ops = fill_class_4() + [s(0, "f00000")]
    sim = replay(ops, "-m", "2", *COMPAT)
    c4 = by_class(sim)[4]
    assert (c4.evicted, c4.free_chunks, c4.items) == (1, 0, 2 * PER_PAGE_4)


def test_a_set_too_large_deletes_the_old_value():
    sim = replay([s(0, "a00000"), s(0, "a00000", 2 << 20)], *COMPAT)
    assert (sim.totals.too_large, sim.totals.curr_items, sim.totals.stored) == (1, 0, 1)


def test_misses_count_in_the_class_that_evicted_the_key():
    ops = fill_class_4() + [s(0, "x00000"), op(0, GET, "f00000"), op(0, GET, "nokey0")]
    sim = replay(ops, "-m", "2", *COMPAT)
    assert by_class(sim)[4].misses == 1 and sim.totals.misses == 2


def test_a_key_stored_again_then_deleted_misses_in_no_class():
    # f00000 is evicted from class 4, stored again in class 15, deleted: its miss is nobody's eviction
    ops = fill_class_4() + [s(0, "x00000"), s(0, "f00000", 2000), op(0, DELETE, "f00000"), op(0, GET, "f00000")]
    sim = replay(ops, "-m", "2", *COMPAT)
    assert (by_class(sim)[4].misses, by_class(sim)[15].misses, sim.totals.misses) == (0, 0, 1)
    assert sim.totals.curr_items == 2 * PER_PAGE_4


def test_misses_by_class_remember_the_newest_keys_lost_and_no_more():
    """The keys lost are remembered up to a bound (LOST_MAX, here 10): the hash table never holds
    more than the items plus that many, the newest losses still count in their class."""
    e = Engine(settings("-m", "2", *COMPAT), background_for(settings("-m", "2", *COMPAT), ["no_modern"]))
    e.table.lost_max = 10
    lost = [f"f{i:05d}" for i in range(40)]                 # the first 40 keys, evicted in order
    e.run(fill_class_4() + [s(0, f"x{i:05d}") for i in range(40)])
    assert len(e.table) <= e.curr_items() + 10 and e.curr_items() == 2 * PER_PAGE_4
    e.run([op(0, GET, key) for key in lost[-5:] + lost[:5]])
    assert (e.lrus.counts[4].misses, e.counts["misses"]) == (5, 10)     # the newest five in class 4, the oldest in none


# -- chunked items (-I 2m: 512 KiB chunks; with -o no_modern pages are still 1 MiB) ------
# value 900000, key 2: header 48+3+8+48 = 107 -> class 2; body 524288 (class 39, two per page);
# tail 900002 - 524240 = 375762, + 48 -> class 38 (394840, two per page)

CHUNKED = ["-m", "8", "-I", "2m", *COMPAT]


def test_a_chunked_item_takes_header_body_and_tail_chunks_and_lives_in_the_largest_lru():
    sim = replay([s(0, "k0", 900000)], *CHUNKED)
    c = by_class(sim)
    assert {k: (r.pages, r.used_chunks, r.items) for k, r in c.items()} == {
        2: (1, 1, 0), 38: (1, 1, 0), 39: (1, 1, 1)}
    assert sim.totals.total_malloced == 3 << 20


def test_evicting_a_chunked_item_frees_all_its_chunks():
    sim = replay([s(0, f"k{i}", 900000) for i in range(8)], *CHUNKED)
    c = by_class(sim)
    assert c[39].evicted == 1 and c[2].used_chunks == 7 and sim.totals.curr_items == 7
    assert sim.totals.total_malloced == 8 << 20


def test_a_tail_falls_back_to_a_full_chunk_from_1_6_17():
    ops = [s(0, f"k{i}", 900000) for i in range(7)]
    new = replay(ops, *CHUNKED)
    assert new.totals.curr_items == 7 and new.totals.chunk_failures == 0
    assert by_class(new)[39].used_chunks == 8          # 7 bodies + the 7th item's tail
    old = replay(ops, *CHUNKED, release="1.6.16")
    assert old.totals.curr_items == 6 and old.totals.chunk_failures == 1


def test_out_of_memory_when_the_class_has_nothing_to_evict():
    # class 38 holds only tails of chunked items (linked in class 39's LRU): nothing to evict
    ops = [s(0, f"k{i}", 900000) for i in range(7)] + [s(0, "k0", 350000)]
    sim = replay(ops, *CHUNKED)
    assert by_class(sim)[38].outofmemory == 1
    assert (sim.totals.outofmemory, sim.totals.curr_items) == (1, 6)   # k0's old value deleted


# -- the model --------------------------------------------------------------------------


@pytest.mark.parametrize("release,words,mode", [
    ("1.6.18", [], "segmented"),
    ("1.6.18", ["no_modern"], "compat"),
    ("1.6.18", ["no_lru_maintainer"], "compat"),
    ("1.6.18", ["no_modern", "lru_maintainer"], "segmented"),
    ("1.6.18", ["no_modern", "modern"], "compat"),       # modern sets nothing in 1.5+
    ("1.5.22", ["no_modern"], "compat"),
    ("1.4.39", [], "compat"),
    ("1.4.39", ["modern"], "segmented"),
    ("1.4.24", ["lru_maintainer"], "segmented"),
])
def test_lru_mode(release, words, mode):
    assert lru_mode(settings(release=release), words) == mode


@pytest.mark.parametrize("release", ["1.2.8", "1.4.23"])
def test_releases_before_lru_pull_tail_are_refused(release):
    config = settings(release=release)
    with pytest.raises(SimulationError, match="1.4.24 and later"):
        describe_model(config, background_for(config))


def test_every_report_names_its_model():
    exact = replay([s(0, "a00000")], *COMPAT)
    assert exact.model.exact and "exact" in model_text(exact.model)
    model = replay([s(0, "a00000")])
    assert not model.model.exact and "not exact" in model_text(model.model)
    assert ("slab automover 1 (window 30 s, ratio 0.8), LRU maintainer, LRU crawler" in model_text(model.model))
    record = simulation_record(model)["model"]
    assert (record["exact"], record["slab_automove"], record["lru_maintainer"], record["lru_crawler"]) == (
        False, 1, True, True)
    off = replay([s(0, "a00000")], "-o", "no_lru_crawler,slab_automove=0")
    assert "no slab automover (pages stay in their class), LRU maintainer, no LRU crawler" in model_text(off.model)


def test_background_values_are_refused_as_memcached_refuses_them():
    from slabcalc.model.settings import Refused

    for words, message in ((["slab_automove=3"], "slab_automove must be between 0 and 2"),
                           (["slab_automove_ratio=0"], "slab_automove_ratio must be > 0 and < 1"),
                           (["slab_automove_window=2"], "slab_automove_window must be > 2"),
                           (["hot_lru_pct=80"], "hot_lru_pct must be > 1 and < 80"),
                           (["slab_automove_ratio"], "Missing slab_automove_ratio argument")):
        with pytest.raises(Refused, match=message):
            background_for(settings(), words)
    assert background_for(settings(), ["slab_automove"]).slab_automove == 1     # the bare word is 1
    assert background_for(settings(), ["slab_automove=x"]).slab_automove == 0   # atoi


def test_timeline_rows_at_every_boundary_and_after_the_last_operation():
    ops = [s(0, "a00000"), s(1.5, "b00000"), s(7, "c00000", 2000)]
    sim = replay(ops, *COMPAT, every=2)
    rows = [(r.time, r.class_id, r.pages, r.items) for r in sim.timeline]
    assert rows == [(2, 4, 1, 2), (6, 4, 1, 2), (8, 4, 1, 2), (8, 15, 1, 1)]


# -- page moves: the automovers and the page mover (slab_automove.c, slabs.c 730-1300) ------------


def test_a_class_with_over_two_and_a_half_free_pages_and_a_clean_window_gives_pages_to_the_pool():
    # -m 8, defaults: 5 pages of class 4 items that expire at t=2 (reclaimed by the maintainer at
    # t=3).  Page growth made the window dirty; 30 runs later the first clean run sends a page to the
    # global pool, and again every wake-up (1 ms) while more than 2.5 pages (13652 chunks) are free:
    # 5 -> 4 -> 3 -> 2 pages (10922 free).  total_malloced stays: the pages are still the process's.
    ops = [s(0, f"f{i:05d}", ttl=2) for i in range(5 * PER_PAGE_4)]
    sim = simulate(settings("-m", "8"), ops + [op(20, GET, "x"), op(45, GET, "x")], at=[20, 45])
    (t20, early), (t45, late) = sim.snapshots
    assert (by_class(early)[4].pages, early.totals.pages_moved) == (5, 0)
    assert (by_class(late)[4].pages, late.totals.pages_moved, late.totals.global_page_pool) == (2, 3, 3)
    assert late.totals.total_malloced == 5 << 20 and by_class(late)[4].moved_out == 3


def test_pool_pages_past_the_limit_are_freed():
    # -m 4: four pages of class 4 (expiring) and class 15's first page, granted past the limit:
    # 5 MiB.  Two pages go to the pool (4 -> 2 pages); memory_release frees pool pages while
    # total_malloced is over -m: one, back to 4 MiB, and one stays in the pool.
    ops = [s(0, f"f{i:05d}", ttl=2) for i in range(4 * PER_PAGE_4)] + [s(1, "b00000", 2000)]
    sim = simulate(settings("-m", "4"), ops + [op(45, GET, "x")])
    c = by_class(sim)
    assert (c[4].pages, c[15].pages, sim.totals.pages_moved) == (2, 1, 2)
    assert (sim.totals.global_page_pool, sim.totals.total_malloced) == (1, 4 << 20)


def test_a_page_from_the_pool_is_taken_before_new_memory():
    ops = [s(0, f"f{i:05d}", ttl=2) for i in range(5 * PER_PAGE_4)]
    ops += [s(45 + i // 400, f"b{i:05d}", 2000) for i in range(900)]     # class 15: 451 a page
    sim = simulate(settings("-m", "8"), ops)
    c = by_class(sim)
    assert (c[15].pages, sim.totals.global_page_pool, sim.totals.total_malloced) == (2, 1, 5 << 20)


def test_the_automover_moves_a_page_from_the_oldest_class_to_the_youngest_evicting_one():
    # -m 4: class 4 fills 3 pages with items never read (old); from t=5 class 15 (1 page, 451
    # chunks) takes 100 sets a second and evicts.  Once the 30-run window has filled, its age (the
    # COLD tail's, a few seconds) is under 0.8 of class 4's and it evicted in over half the window:
    # class 4's first page moves, its 5461 live items dropped (no free chunk to rescue them into).
    # Then class 4 has 2 pages, no longer more than 2: nothing else moves.
    ops = [s(0, f"f{i:05d}") for i in range(3 * PER_PAGE_4)]
    ops += [s(5 + i / 100, f"b{i:05d}", 2000) for i in range(100 * 60)]
    sim = simulate(settings("-m", "4"), ops)
    c, t = by_class(sim), sim.totals
    assert (c[4].pages, c[4].moved_out, c[15].pages, c[15].moved_in, t.pages_moved) == (2, 1, 2, 1, 1)
    assert (t.slab_reassign_evictions_nomem, t.slab_reassign_rescues, c[4].evicted) == (PER_PAGE_4, 0, 0)
    none = simulate(settings("-m", "4", "-o", "slab_automove=0"), ops)
    assert (by_class(none)[15].pages, none.totals.pages_moved) == (1, 0)
    assert none.totals.evicted > t.evicted + 400


def test_slab_automove_2_moves_a_page_on_each_eviction_from_the_next_class_with_a_spare_page():
    ops = [s(0, f"f{i:05d}") for i in range(2 * PER_PAGE_4)]
    ops += [s(5, f"b{i:05d}", 2000) for i in range(451 + 1)]
    sim = simulate(settings("-m", "3", "-o", "slab_automove=2"), ops)
    c = by_class(sim)
    # set 452 evicts one class-15 item, then a page of class 4 moves: the next 451 sets need none
    assert (c[15].evicted, c[15].pages, c[4].pages, sim.totals.pages_moved) == (1, 2, 1, 1)


def test_the_mover_rescues_live_items_into_free_chunks_outside_the_page():
    from slabcalc.engines.background import background_for as bg_for
    from slabcalc.engines.engine import Engine
    from slabcalc.engines.mover import move_page

    config = settings("-o", "no_lru_crawler,slab_automove=0")
    e = Engine(config, bg_for(config, ["no_lru_maintainer"]))
    # page 0 full (5461 items), page 1 with 10: 5451 free chunks outside page 0
    e.run([s(0, f"f{i:05d}") for i in range(PER_PAGE_4 + 10)] + [op(0, DELETE, "f00000")])
    before = e.counts["total_items"]
    e.now += 3
    assert move_page(e.store, 4, 15)
    k = e.counts
    # the deleted item's chunk (slot 5460, freed last) is popped first: inline-reclaimed; then
    # 5451 - 0 free chunks of page 1 take 5451 of page 0's 5460 live items; 9 are dropped
    assert (k["inline_reclaim"], k["rescues"], k["evictions_nomem"]) == (1, 5451, 9)
    assert k["total_items"] - before == 5451          # a rescue links the copy again
    assert len(e.index) == 5451 + 10
    assert all(item.time == e.now for item in e.index.values() if item.key < "f05461")
    assert (len(e.slabs.pages[4]), len(e.slabs.pages[15]), len(e.slabs.free[4])) == (1, 1, 0)
    assert not move_page(e.store, 4, 15)                    # a class needs 2 pages to give one
