"""One test per rule of the segmented LRU (1.6.18 ``items.c``), with figures worked out by hand.

1.6.18 defaults (segmented LRU, slab_reassign: 1 MiB pages): a 6-byte key and
a 100-byte value make ntotal 165, class 4 (chunk 192, 5461 per page).  So
that each rule shows on its own, these engines have no maintainer thread of
their own: the test wakes it at the start of each workload second that has
operations, before them -- every class juggled until nothing moves, the
queued bumps, and the juggles again (what the real thread does in its first
milliseconds of that second).  The thread's own schedule is tested in
``test_engines.py`` and against real servers in ``test_paced.py``.
"""

from __future__ import annotations

from dataclasses import replace

from helpers import PER_PAGE_4, op, s

from slabcalc import configure, load_profile
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.lru import COLD, HOT, SEGMENTS, WARM
from slabcalc.engines.maintainer import Maintainer
from slabcalc.engines.simulate import DELETE, GET, TOUCH, simulate

class _Engine(Engine):
    """An engine whose maintainer the test wakes once per workload second."""

    def __init__(self, settings):
        bg = replace(background_for(settings, ["no_lru_crawler", "slab_automove=0"]), lru_maintainer=False)
        super().__init__(settings, bg)
        self.juggler = Maintainer(self.store, self.temp, start=0)
        self.maintained = None

    def clock(self, t):
        super().clock(t)
        if self.now != self.maintained:
            self.maintained = self.now
            self.wake()

    def wake(self):
        for _ in range(2):
            for cls in range(1, len(self.size)):
                while self.juggler.juggle(cls):
                    pass
            bumps, self.bumps = self.bumps, []
            for item in bumps:
                self.store.update(item)

    def segment_counts(self):
        q = self.lrus.q
        return {cls: tuple(len(q[seg][cls]) for seg in (HOT, WARM, COLD))
                for cls in range(1, len(self.size)) if self.lrus.count(cls)}


def engine(ops, *args):
    e = _Engine(configure(load_profile("1.6.18"), list(args)))
    e.run(ops)
    return e


def where(e, key):
    return SEGMENTS[e.index[key].seg]


def test_new_items_go_to_hot_and_stay_there_within_their_second():
    e = engine([s(0, f"a{i:05d}") for i in range(10)])
    assert e.segment_counts() == {4: (10, 0, 0)}


def test_the_maintainer_drains_hot_to_cold_when_cold_is_empty():
    # at t=1 COLD is empty: cold_age 0, hot_age 0, and every HOT item is 1 s old (> 0)
    e = engine([s(0, f"a{i:05d}") for i in range(10)] + [op(1, GET, "zzzzzz")])
    assert e.segment_counts() == {4: (0, 0, 10)} and e.lrus.counts[4].moves_to_cold == 10


def test_hot_keeps_its_share_of_bytes_while_younger_than_hot_age():
    ops = [s(0, f"a{i:05d}") for i in range(10)] + [op(1, GET, "zzzzzz")]   # a* all to COLD
    ops += [s(10, f"b{i:05d}") for i in range(10)]
    # t=11: cold_age 11 - 0 = 11, hot_age int(11 * 0.2) = 2 > the b*'s age 1; total 20 * 165 = 3300
    # bytes, HOT limit 3300 * 20 // 100 = 660: HOT moves its tail while it holds > 660 bytes (4 items)
    e = engine(ops + [op(11, GET, "zzzzzz")])
    assert e.segment_counts() == {4: (4, 0, 16)}
    assert [where(e, f"b{i:05d}") for i in (5, 6)] == ["cold", "hot"]
    e = engine(ops + [op(13, GET, "zzzzzz")])      # t=13: hot_age 2 < age 3: all drain
    assert e.segment_counts() == {4: (0, 0, 20)}


def test_a_second_hit_in_cold_queues_a_bump_to_warm_for_the_next_second():
    ops = [s(0, "a00000"), s(0, "b00000"), s(0, "c00000")]
    ops += [op(1, GET, "a00000"), op(1, GET, "a00000"), op(1, GET, "b00000")]
    e = engine(ops)
    assert e.segment_counts() == {4: (0, 0, 3)} and len(e.bumps) == 1     # async: not yet moved
    e = engine(ops + [op(2, GET, "zzzzzz")])
    assert (where(e, "a00000"), where(e, "b00000")) == ("warm", "cold")   # b: one hit, FETCHED only
    assert e.index["a00000"].time == e.epoch + 2 and not e.index["a00000"].active        # time bumped, ACTIVE cleared


def _ten_in_cold():
    """a00000..a00009 set at t=0, all in COLD after the juggle at t=1 (COLD tail time 0)."""
    return [s(0, f"a{i:05d}") for i in range(10)] + [op(1, GET, "zzzzzz")]


def test_touch_marks_like_a_get():
    ops = _ten_in_cold() + [op(2, TOUCH, "a00000", ttl=100), op(2, GET, "a00000"), op(3, GET, "zzzzzz")]
    e = engine(ops)
    # t=3: the bump moves a00000 to WARM (time 3); warm_age int(3 * 2.0) = 6, 165 bytes <= 40 % of 1650
    assert where(e, "a00000") == "warm" and e.index["a00000"].exptime == e.epoch + 102


def test_an_active_hot_item_moves_to_warm_an_inactive_young_one_stays_hot():
    # b and c set at t=10, b hit twice (ACTIVE in HOT: a second hit bumps only its time).  t=11:
    # cold_age 11, hot_age 2, warm_age 22; total 12 * 165 = 1980, HOT limit 396: the HOT tail b,
    # ACTIVE, goes to WARM; c (165 bytes, 1 s old) stays; b in WARM is under 792 bytes and 22 s
    ops = _ten_in_cold() + [s(10, "b00000"), s(10, "c00000"), op(10, GET, "b00000"), op(10, GET, "b00000")]
    e = engine(ops)
    assert e.segment_counts() == {4: (2, 0, 10)}
    e = engine(ops + [op(11, GET, "zzzzzz")])
    assert (where(e, "b00000"), where(e, "c00000")) == ("warm", "hot")
    assert not e.index["b00000"].active          # ACTIVE cleared


def test_warm_over_its_share_goes_to_cold():
    # t=1: a* to COLD; t=2: the bump moves a00000 to WARM (time 2); the juggle's WARM pull: 165
    # bytes of 330 > 40 % (132): to COLD.  a00001 stays the COLD tail (COLD pulls are not bumps).
    ops = [s(0, "a00000"), s(0, "a00001"), op(1, GET, "a00000"), op(1, GET, "a00000"), op(2, GET, "zzzzzz")]
    e = engine(ops)
    assert e.segment_counts() == {4: (0, 0, 2)} and e.lrus.counts[4].moves_to_warm == 1
    assert list(e.lrus.q[2][4]) == ["a00001", "a00000"]       # tail first


def test_allocation_moves_the_hot_tail_to_cold_then_evicts_it():
    ops = [s(0, f"f{i:05d}") for i in range(2 * PER_PAGE_4)] + [s(0, "x00000")]
    e = engine(ops, "-m", "2")
    assert (e.lrus.counts[4].evicted, "f00000" in e.index, "f00001" in e.index, "x00000" in e.index) == (1, False, True, True)


def test_allocation_rescues_an_active_hot_tail_to_warm():
    ops = [s(0, f"f{i:05d}") for i in range(2 * PER_PAGE_4)]
    ops += [op(0, GET, "f00000"), op(0, GET, "f00000"), s(0, "x00000")]
    e = engine(ops, "-m", "2")
    assert (e.lrus.counts[4].evicted, where(e, "f00000"), "f00001" in e.index) == (1, "warm", False)


def test_ten_fruitless_rounds_are_out_of_memory():
    # -m 1 (-I 512k, at most half of it): one page of class 4.  Ten ACTIVE items at the HOT tail: each round moves one to
    # WARM and frees nothing; after 10 rounds the set fails and x is not stored.
    ops = [s(0, f"f{i:05d}") for i in range(PER_PAGE_4)]
    ops += [op(0, GET, f"f{i:05d}") for i in range(10)] * 2 + [s(0, "x00000")]
    e = engine(ops, "-m", "1", "-I", "512k")
    assert (e.lrus.counts[4].outofmemory, e.lrus.counts[4].evicted, "x00000" in e.index) == (1, 0, False)
    assert e.segment_counts() == {4: (PER_PAGE_4 - 10, 10, 0)}
    # 8 ACTIVE: rounds 1-8 move them, round 9 moves f00008 to COLD, round 10 evicts it -- and
    # the rounds are over: out of memory with a free chunk.  7 ACTIVE: round 10 takes that chunk.
    for active, stored in ((8, False), (7, True)):
        e = engine(ops[:PER_PAGE_4] + [op(0, GET, f"f{i:05d}") for i in range(active)] * 2 + [s(0, "x00000")],
                   "-m", "1", "-I", "512k")
        assert (e.lrus.counts[4].outofmemory, e.lrus.counts[4].evicted, len(e.slabs.free[4])) == (int(not stored), 1, int(not stored))
        assert (f"f{active:05d}" in e.index, "x00000" in e.index) == (False, stored)


def test_cold_evictions_take_active_items_too():
    # at t=1 all in COLD; a00000 hit twice at t=1 is ACTIVE but its bump waits: the set evicts it
    ops = [s(0, f"f{i:05d}") for i in range(2 * PER_PAGE_4)]
    ops += [op(1, GET, "f00000"), op(1, GET, "f00000"), s(1, "x00000")]
    e = engine(ops, "-m", "2")
    assert (e.lrus.counts[4].evicted, "f00000" in e.index) == (1, False)


def test_no_reclaim_before_allocating_the_maintainer_reclaims_expired_tails():
    ops = [s(0, "a00000", ttl=1), s(0, "a00001", ttl=1), s(0, "b00000")]
    e = engine(ops + [s(1, "c00000")])         # t=1: exptime 1 is not < 1
    assert e.lrus.counts[4].reclaimed == 0
    e = engine(ops + [s(2, "c00000")])         # t=2: the COLD tail's two expired items
    assert (e.lrus.counts[4].reclaimed, e.lrus.counts[4].expired_unfetched, len(e.index)) == (2, 2, 2)


def test_expired_on_access_and_delete_free_as_in_compat():
    ops = [s(0, "a00000", ttl=1), s(0, "b00000"), op(1, GET, "a00000"), op(1, DELETE, "b00000")]
    e = engine(ops)
    assert (e.counts["get_expired"], e.counts["delete_hits"], len(e.index), len(e.slabs.free[4])) == (1, 1, 0, PER_PAGE_4)


# -- where the segmented model and the compat path must agree ----------------------------


def _no_gets_no_ttls():
    """Sets, overwrites and deletes of three sizes, chunked items too, over several seconds."""
    ops = []
    for second in range(6):
        ops += [s(second, f"a{second}{i:05d}") for i in range(4000)]
        ops += [s(second, f"b{i:05d}", 2000) for i in range(second * 100, second * 100 + 300)]
        ops += [op(second, DELETE, f"a{second}{i:05d}") for i in range(0, 4000, 9)]
        ops += [s(second, f"k{i}", 700000 + 100000 * second) for i in range(second, second + 3)]
    return ops


def test_without_gets_and_ttls_segmented_and_compat_evict_the_same_items():
    # No item is ever ACTIVE, so WARM stays empty and COLD (older) + HOT (newer) is the compat
    # LRU in link order: every eviction takes the same, oldest, item.
    for args in (["-m", "3"], ["-m", "8", "-I", "2m"]):
        config = configure(load_profile("1.6.18"), args)
        seg, compat = (simulate(config, _no_gets_no_ttls(), suboptions=["slab_automove=0"], lru=lru)
                       for lru in ("segmented", "compat"))
        assert seg.totals.evicted > 1000
        assert seg.totals == compat.totals
        # the same counts; only where the items sit (HOT/COLD against COLD alone) differs
        def counts(r):
            return replace(r, number_hot=0, number_warm=0, number_cold=0)
        assert [counts(r) for r in seg.classes] == [counts(r) for r in compat.classes]
