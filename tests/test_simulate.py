"""One test per rule of the simulation engine, with figures worked out by hand.

Sizes (1.6.18, 64-bit, CAS on, flags 0, ``-o no_modern``): a 6-byte key and a
100-byte value make ntotal 48+8+7+102 = 165, class 4 (chunk 192, 5461 per
page, a page of 192*5461 = 1048512 bytes); a 2000-byte value makes 2065,
class 15 (chunk 2320, 451 per page, 1046320 bytes).  ``-m 2`` is 2097152
bytes: two class-4 pages (2097024) fit, a third does not.
"""

from __future__ import annotations

import pytest

from slabcalc import configure, load_profile
from slabcalc.simulate import (DELETE, GET, SET, TOUCH, SimulationError, describe_model, lru_mode,
                               simulate, simulation_record)

COMPAT = ["-o", "no_modern"]
PER_PAGE_4 = 5461


def settings(*args, release="1.6.18"):
    return configure(load_profile(release), list(args))


def run(ops, *args, release="1.6.18", every=None):
    words = [w for i, a in enumerate(args) if i and args[i - 1] == "-o" for w in a.split(",")]
    config = settings(*args, release=release)
    return simulate(config, ops, lru=lru_mode(config, words), every=every)


def by_class(sim):
    return {r.slab_class.id: r for r in sim.classes}


def s(t, key, value=100, ttl=0):
    return (t, SET, key, len(key), value, ttl, 0)


def op(t, kind, key, ttl=0):
    return (t, kind, key, len(key), 0, ttl, 0)


def fill_class_4(t=0, prefix="f", n=2 * PER_PAGE_4):
    return [s(t, f"{prefix}{i:05d}") for i in range(n)]


# -- pages and the memory limit -------------------------------------------------------


def test_pages_are_granted_up_to_the_limit_then_the_tail_is_evicted():
    sim = run(fill_class_4() + [s(0, "x00000")], "-m", "2", *COMPAT)
    c4 = by_class(sim)[4]
    assert (c4.pages, c4.items, c4.evicted, c4.free_chunks) == (2, 2 * PER_PAGE_4, 1, 0)
    assert sim.totals.total_malloced == 2 * 1048512


def test_a_class_first_page_is_granted_past_the_limit():
    ops = fill_class_4() + [s(0, f"b{i:05d}", 2000) for i in range(452)]
    sim = run(ops, "-m", "2", *COMPAT)
    c15 = by_class(sim)[15]
    assert sim.totals.total_malloced == 2 * 1048512 + 1046320 > 2 << 20
    assert (c15.pages, c15.items, c15.evicted) == (1, 451, 1)   # its second page is refused


def test_a_page_that_lands_exactly_on_the_limit_is_granted():
    # value 800000: class 42 (chunk 1048576, one per page, a page of 1048576 bytes)
    ops = [s(0, f"k{i}", 800000) for i in range(3)]
    sim = run(ops, "-m", "2", *COMPAT)
    c42 = by_class(sim)[42]
    assert (c42.pages, c42.items, c42.evicted) == (2, 2, 1)
    assert sim.totals.total_malloced == 2 << 20


def test_pages_never_move_between_classes():
    ops = fill_class_4() + [op(0, DELETE, f"f{i:05d}") for i in range(2 * PER_PAGE_4)]
    ops += [s(0, f"b{i:05d}", 2000) for i in range(500)]
    sim = run(ops, "-m", "2", *COMPAT)
    c4, c15 = by_class(sim)[4], by_class(sim)[15]
    assert (c4.pages, c4.free_chunks) == (2, 2 * PER_PAGE_4)     # all free, still class 4's
    assert (c15.pages, c15.evicted) == (1, 500 - 451)
    assert sim.finding is not None and sim.finding.free_bytes == 2 * PER_PAGE_4 * 192


# -- expiry: tail reclaim, on access ---------------------------------------------------


def test_expired_tail_items_are_reclaimed_before_a_free_chunk_is_taken():
    sim = run([s(0, "a00000", ttl=1), s(2, "b00000")], "-m", "64", *COMPAT)
    c4 = by_class(sim)[4]
    assert (c4.reclaimed, c4.expired_unfetched, c4.items) == (1, 1, 1)
    assert c4.free_chunks == PER_PAGE_4 - 1      # b reused a's chunk: one chunk in use


def test_one_tail_walk_reclaims_at_most_five_items():
    ops = [s(0, f"a{i:05d}", ttl=1) for i in range(7)] + [s(2, "b00000")]
    assert by_class(run(ops, *COMPAT))[4].reclaimed == 5
    ops.append(s(2, "b00001"))
    assert by_class(run(ops, *COMPAT))[4].reclaimed == 7


def test_the_tail_walk_stops_at_the_first_live_item():
    ops = [s(0, "a00000", ttl=1), s(0, "b00000"), s(0, "a00001", ttl=1), s(2, "c00000")]
    assert by_class(run(ops, *COMPAT))[4].reclaimed == 1


def test_tail_reclaim_waits_a_second_longer_than_a_get():
    # exptime = 0 + 1; lru_pull_tail reclaims when exptime < current_time, do_item_get when <=
    at_one = run([s(0, "a00000", ttl=1), s(1, "b00000")], *COMPAT)
    assert by_class(at_one)[4].reclaimed == 0 and at_one.totals.curr_items == 2
    got = run([s(0, "a00000", ttl=1), op(1, GET, "a00000")], *COMPAT)
    assert (got.totals.misses, got.totals.get_expired, got.totals.curr_items) == (1, 1, 0)
    assert by_class(got)[4].free_chunks == PER_PAGE_4


def test_an_expired_item_at_the_tail_of_a_full_class_is_evicted_when_not_yet_reclaimable():
    ops = [s(0, "a00000", ttl=2)] + fill_class_4(n=2 * PER_PAGE_4 - 1) + [s(2, "x00000")]
    c4 = by_class(run(ops, "-m", "2", *COMPAT))[4]
    assert (c4.evicted, c4.evicted_nonzero, c4.reclaimed) == (1, 1, 0)


def test_delete_touch_and_overwrite_free_expired_items():
    ops = [s(0, "a00000", ttl=1), s(0, "b00000", ttl=1), s(0, "c00000", ttl=1),
           op(1, DELETE, "a00000"), op(1, TOUCH, "b00000", ttl=5), s(1, "c00000")]
    sim = run(ops, *COMPAT)
    t = sim.totals
    assert (t.get_expired, t.delete_hits, t.touch_hits, t.curr_items) == (3, 0, 0, 1)


def test_touch_sets_a_new_exptime():
    ops = [s(0, "a00000", ttl=1), op(0, TOUCH, "a00000", ttl=10), op(5, GET, "a00000")]
    sim = run(ops, *COMPAT)
    assert (sim.totals.touch_hits, sim.totals.hits) == (1, 1)


# -- the LRU ---------------------------------------------------------------------------


def _first_in_full_class(get_at):
    """a is the oldest item of a full class, got once at ``get_at``; then one more set."""
    ops = [s(0, "a00000")] + fill_class_4(n=2 * PER_PAGE_4 - 1)
    ops += [op(get_at, GET, "a00000"), s(get_at, "x00000"), op(get_at, GET, "a00000")]
    return run(ops, "-m", "2", *COMPAT)


def test_a_hit_does_not_bump_an_item_bumped_within_60_seconds():
    sim = _first_in_full_class(60)
    assert (sim.totals.hits, sim.totals.misses) == (1, 1)      # a was still the tail: evicted


def test_a_hit_bumps_an_item_last_bumped_more_than_60_seconds_ago():
    sim = _first_in_full_class(61)
    assert (sim.totals.hits, sim.totals.misses) == (2, 0)      # f00000 was evicted instead


def test_an_overwrite_allocates_the_new_item_before_releasing_the_old():
    ops = fill_class_4() + [s(0, "f09999")]
    c4 = by_class(run(ops, "-m", "2", *COMPAT))[4]
    assert (c4.evicted, c4.free_chunks, c4.items) == (1, 1, 2 * PER_PAGE_4 - 1)


def test_an_overwrite_may_evict_the_key_it_replaces():
    ops = fill_class_4() + [s(0, "f00000")]
    sim = run(ops, "-m", "2", *COMPAT)
    c4 = by_class(sim)[4]
    assert (c4.evicted, c4.free_chunks, c4.items) == (1, 0, 2 * PER_PAGE_4)


def test_a_set_too_large_deletes_the_old_value():
    sim = run([s(0, "a00000"), s(0, "a00000", 2 << 20)], *COMPAT)
    assert (sim.totals.too_large, sim.totals.curr_items, sim.totals.stored) == (1, 0, 1)


def test_misses_count_in_the_class_that_evicted_the_key():
    ops = fill_class_4() + [s(0, "x00000"), op(0, GET, "f00000"), op(0, GET, "nokey0")]
    sim = run(ops, "-m", "2", *COMPAT)
    assert by_class(sim)[4].misses == 1 and sim.totals.misses == 2


# -- chunked items (-I 2m: 512 KiB chunks; with -o no_modern pages are still 1 MiB) ------
# value 900000, key 2: header 48+3+8+48 = 107 -> class 2; body 524288 (class 39, two per page);
# tail 900002 - 524240 = 375762, + 48 -> class 38 (394840, two per page)

CHUNKED = ["-m", "8", "-I", "2m", *COMPAT]


def test_a_chunked_item_takes_header_body_and_tail_chunks_and_lives_in_the_largest_lru():
    sim = run([s(0, "k0", 900000)], *CHUNKED)
    c = by_class(sim)
    assert {k: (r.pages, r.used_chunks, r.items) for k, r in c.items()} == {
        2: (1, 1, 0), 38: (1, 1, 0), 39: (1, 1, 1)}
    assert sim.totals.total_malloced == 3 << 20


def test_evicting_a_chunked_item_frees_all_its_chunks():
    sim = run([s(0, f"k{i}", 900000) for i in range(8)], *CHUNKED)
    c = by_class(sim)
    assert c[39].evicted == 1 and c[2].used_chunks == 7 and sim.totals.curr_items == 7
    assert sim.totals.total_malloced == 8 << 20


def test_a_tail_falls_back_to_a_full_chunk_from_1_6_17():
    ops = [s(0, f"k{i}", 900000) for i in range(7)]
    new = run(ops, *CHUNKED)
    assert new.totals.curr_items == 7 and new.totals.chunk_failures == 0
    assert by_class(new)[39].used_chunks == 8          # 7 bodies + the 7th item's tail
    old = run(ops, *CHUNKED, release="1.6.16")
    assert old.totals.curr_items == 6 and old.totals.chunk_failures == 1


def test_out_of_memory_when_the_class_has_nothing_to_evict():
    # class 38 holds only tails of chunked items (linked in class 39's LRU): nothing to evict
    ops = [s(0, f"k{i}", 900000) for i in range(7)] + [s(0, "k0", 350000)]
    sim = run(ops, *CHUNKED)
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
    with pytest.raises(SimulationError, match="1.4.24 and later"):
        describe_model(settings(release=release), "compat")


def test_every_report_names_its_model():
    exact = run([s(0, "a00000")], *COMPAT)
    assert exact.model.exact and "exact" in exact.model.text
    model = run([s(0, "a00000")])
    assert not model.model.exact and "MODEL, not a replay" in model.model.text
    assert simulation_record(model)["model"]["exact"] is False


def test_timeline_rows_at_every_boundary_and_after_the_last_operation():
    ops = [s(0, "a00000"), s(1.5, "b00000"), s(7, "c00000", 2000)]
    sim = run(ops, *COMPAT, every=2)
    rows = [(r.time, r.class_id, r.pages, r.items) for r in sim.timeline]
    assert rows == [(2, 4, 1, 2), (6, 4, 1, 2), (8, 4, 1, 2), (8, 15, 1, 1)]


# -- --automove: a stated policy, not a replay --------------------------------------------


def _calcified(automove):
    # class 4 fills -m 3 (3 pages) with items that expire at t=5; then, from t=10, 100 sets a
    # second of class 15, which has one page (451 chunks)
    ops = [s(0, f"f{i:05d}", ttl=5) for i in range(3 * PER_PAGE_4)]
    ops += [s(10 + i // 100, f"b{i:05d}", 2000) for i in range(1000)]
    return simulate(settings("-m", "3", *COMPAT), ops, lru="compat", automove=automove)


def test_without_automove_the_expired_class_keeps_its_pages():
    c = by_class(_calcified(None))
    assert (c[4].pages, c[15].pages, c[15].evicted) == (3, 1, 1000 - 451)


def test_automove_moves_at_most_one_page_per_interval_from_the_idle_class():
    sim = _calcified(5)      # out of chunks at t=14 (set 451) and t=19 (set 902): a move each
    c = by_class(sim)
    assert (c[4].moved_out, c[15].moved_in, sim.totals.pages_moved) == (2, 2, 2)
    assert (c[4].pages, c[15].pages, c[15].evicted) == (1, 3, 0)
    assert c[4].reclaimed == 2 * PER_PAGE_4      # the expired items on the moved pages
    assert sim.totals.total_malloced == 4 << 20  # slab_reassign: every page 1 MiB
    assert not sim.model.exact and "--automove 5" in sim.model.text


def test_automove_waits_its_interval():
    sim = _calcified(6)      # t=14, then not before t=20: the last 98 sets evict
    c = by_class(sim)
    assert (sim.totals.pages_moved, c[15].evicted) == (1, 1000 - 902)
