"""The segmented-LRU model against a real memcached 1.6.18 with its defaults.

The server runs its own segmented LRU and LRU maintainer thread; only the LRU
crawler and the slab automover are switched off (``-o
no_lru_crawler,slab_automove=0``), as the model does not have them.  The
workloads leave at least one idle second between the operations whose
outcome depends on the maintainer (HOT -> COLD draining, queued bumps,
reclaiming expired tail items) and the operations that depend on it, so
the outcome does not depend on when, within those seconds, the maintainer
ran.  Each asserts that the compat path would give a different answer where
the segmented rules matter, so the comparison can fail.
"""

from __future__ import annotations

from helpers import PER_PAGE_4, o_words
from helpers import op as _op
from helpers import s as _set
from test_simulate_fidelity import compare_with_server

from slabcalc import configure
from slabcalc.engines.simulate import DELETE, GET, lru_mode, simulate
from slabcalc.records.simulate import model_text

DEFAULTS = "no_lru_crawler,slab_automove=0"
def check(memcached, profile, args, ops):
    settings = configure(profile, args)
    lru = lru_mode(settings, o_words(args))
    assert lru == "segmented"
    sim = simulate(settings, ops, lru=lru)
    assert not sim.model.exact and "LRU maintainer, no LRU crawler" in model_text(sim.model)
    return compare_with_server(memcached, args, ops, sim)


def sets_and_deletes():
    """No gets, no TTLs: items flow HOT -> COLD in set order and are evicted oldest first."""
    ops = [_set(0, f"a{i:05d}", 100) for i in range(15000)]
    ops += [_op(0, DELETE, f"a{i:05d}") for i in range(14500, 14600)]      # free chunks
    ops += [_set(1, f"b{i:05d}", 2000) for i in range(600)]                 # class 15: first page free of -m
    ops += [_set(2, f"a{i:05d}", 100) for i in range(14000, 14300)]         # overwrites, then evictions
    ops += [_set(2, "huge", 2 << 20)]
    return ops


def fetched_twice_survives():
    """A key fetched twice becomes ACTIVE and moves to WARM; the next evictions pass it by."""
    ops = [_set(0, f"a{i:05d}", 100) for i in range(2 * PER_PAGE_4)]        # -m 2 full, nothing evicted
    ops += [_op(3, GET, f"a{i:05d}") for i in range(100)] * 2               # the 100 oldest: ACTIVE
    ops += [_set(5, f"c{i:05d}", 100) for i in range(200)]                  # 200 evictions from COLD
    ops += [_op(7, GET, f"a{i:05d}") for i in range(150)]
    return ops


def expired_tail_reclaimed_by_the_maintainer():
    """Expired items at the COLD tail are reclaimed in the background, not 5 per set."""
    ops = [_set(0, f"a{i:05d}", 100, ttl=2) for i in range(3000)]
    ops += [_set(0, f"b{i:05d}", 100) for i in range(2 * PER_PAGE_4 - 3000)]
    ops += [_set(5, f"c{i:05d}", 100) for i in range(50)]
    return ops


def compat_of(profile, args, ops):
    return simulate(configure(profile, args), ops, lru="compat")


def test_sets_and_deletes_evict_as_the_compat_path(memcached, server_profile):
    args = ["-m", "2", "-o", DEFAULTS]
    sim = check(memcached, server_profile, args, sets_and_deletes())
    compat = compat_of(server_profile, args, sets_and_deletes())
    assert sim.totals.evicted > 0 and sim.totals == compat.totals


def test_an_item_fetched_twice_moves_to_warm_and_is_not_evicted(memcached, server_profile):
    args = ["-m", "2", "-o", DEFAULTS]
    sim = check(memcached, server_profile, args, fetched_twice_survives())
    assert (sim.totals.evicted, sim.totals.hits) == (200, 200 + 100)
    assert compat_of(server_profile, args, fetched_twice_survives()).totals.hits == 200 + 0


def test_expired_items_are_reclaimed_by_the_maintainer(memcached, server_profile):
    args = ["-m", "2", "-o", DEFAULTS]
    sim = check(memcached, server_profile, args, expired_tail_reclaimed_by_the_maintainer())
    assert (sim.totals.reclaimed, sim.totals.evicted) == (3000, 0)
    assert compat_of(server_profile, args, expired_tail_reclaimed_by_the_maintainer()).totals.reclaimed < 3000
