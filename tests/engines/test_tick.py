"""The server's tick, measured late (``simulate(tick_us=)``): each tick a little more than a second after
the one before, as a real server's is (its one-second timer re-armed after each tick has run, 1.6.18
memcached.c clock_handler; a paced capture measures it, tests/paced.py ``measure_tick``).

The expected values follow from memcached's rules, not from the engine: an item set with a TTL of 1 s
has ``exptime = current_time + 1`` (memcached.c ``realtime``) and a get finds it expired once
``exptime <= current_time`` (items.c ``do_item_get``).  With a tick every 1.001 s, the tick to 20 comes
at 20.020 s of the workload: a set at 20.010 s still reads ``current_time`` 19, so its item is expired
for a get at 20.5 s (current_time 20), where on whole seconds it was set at 20 and lives through 21.
"""

from __future__ import annotations

import pytest

from slabcalc import configure, load_profile
from slabcalc.engines.simulate import GET, SET, simulate
from slabcalc.errors import SimulationError

LATE = 1_001_000        # a tick 1 ms late each second: tick 20 at 20.020 s


def _hits(set_at: float, tick_us: int, release: str = "1.6.18") -> int:
    settings = configure(load_profile(release), ["-m", "64"])
    ops = [(0.0, SET, "warm", 4, 100, 0, 0), (set_at, SET, "k", 1, 100, 1, 0), (20.5, GET, "k", 1, 0, 0, 0)]
    return simulate(settings, ops, tick_us=tick_us).totals.hits


@pytest.mark.parametrize("release", ["1.6.18", "1.6.45", "1.5.22"])
def test_a_set_before_a_late_tick_reads_the_second_before(release):
    assert _hits(20.010, 1_000_000, release) == 1        # whole seconds: set at 20, expires after 21
    assert _hits(20.010, LATE, release) == 0             # the tick to 20 not yet come: set at 19, gone at 20
    assert _hits(20.030, LATE, release) == 1             # after it: as on whole seconds


def test_the_lateness_grows_a_tick_at_a_time():
    # k set at 99.5 s reads current_time 99 either way (exptime 100); at 100.05 s the tick to 100 has come
    # on whole seconds (expired) but not a tick every 1.001 s, whose 100th comes 100 ms late, at 100.1 s
    settings = configure(load_profile("1.6.18"), ["-m", "64"])

    def hits(get_at: float, tick_us: int) -> int:
        ops = [(0.0, SET, "warm", 4, 100, 0, 0), (99.5, SET, "k", 1, 100, 1, 0), (get_at, GET, "k", 1, 0, 0, 0)]
        return simulate(settings, ops, tick_us=tick_us).totals.hits

    assert (hits(100.05, 1_000_000), hits(100.05, LATE)) == (0, 1)
    assert (hits(100.2, 1_000_000), hits(100.2, LATE)) == (0, 0)       # past the late tick: expired too
    assert hits(100.05, 1_000_200) == 0                                 # 20 ms late by then: ticked


def test_a_tick_that_does_not_move_forward_is_refused():
    settings = configure(load_profile("1.6.18"), ["-m", "64"])
    with pytest.raises(SimulationError, match="tick forward"):
        simulate(settings, [(0.0, SET, "k", 1, 100, 0, 0)], tick_us=0)
