"""The compiled engine (setup.py: mypyc) and the plain Python source it is built from replay alike.

A hypothesis property: random workloads -- sets, gets, deletes, touches with TTLs, items chunked
across classes, the 1.6 background threads on (and the compat LRU) -- replayed by this process's
engine (compiled where the install compiled it) and by one child process told ``SLABCALC_PURE=1``
(the ``.py`` source), every counter and every class's figures required equal.  Where nothing is
compiled the two are the same code and the test skips (the floors' environment has no C compiler).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from slabcalc import configure, load_profile
from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, engine_build, simulate

PROFILE = load_profile("1.6.18")

# the plain engine: one workload a line in, its figures a line out (one start-up for every example)
CHILD = r"""
import json, sys
import slabcalc.engines.engine as e, slabcalc.engines.lru as l, slabcalc.engines.slabs as s
import slabcalc.inputs.workload as w
from dataclasses import asdict
from slabcalc import configure, load_profile
from slabcalc.engines.simulate import engine_build, simulate
print(json.dumps([m.__file__ for m in (e, l, s, w)]), flush=True)
profile = load_profile("1.6.18")
for line in sys.stdin:
    argv, ops = json.loads(line)
    sim = simulate(configure(profile, argv), [tuple(o) for o in ops])
    print(json.dumps([engine_build(), asdict(sim.totals), [asdict(r) for r in sim.classes]], default=str), flush=True)
"""


@st.composite
def workloads(draw):
    n = draw(st.integers(60, 300))
    ops, t = [], 0.0
    for _ in range(n):
        t += draw(st.sampled_from([0, 0.001, 0.5, 3, 70]))      # idle seconds too: the threads wake
        op = draw(st.sampled_from([SET, SET, GET, DELETE, TOUCH]))
        # text, ints that are their own hash, and ints that are not (held by the item: engines/table.py)
        k = draw(st.integers(0, 60))
        key = draw(st.sampled_from([f"k{k}", f"k{k}", k, 2**62 + k, -k - 1]))
        value = draw(st.sampled_from([40_000, 10, 100, 900, 5_000, 600_000]))     # 600 000: chunked
        ttl = draw(st.sampled_from([0, 2, 30]))
        ops.append((round(t, 3), op, key, len(str(key)), value if op == SET else 0, ttl, 0))
    argv = draw(st.sampled_from([["-m", "2"], ["-m", "3", "-o", "slab_automove=2"], ["-m", "2", "-o", "no_modern"]]))
    return argv, ops


@pytest.fixture(scope="module")
def plain():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, SLABCALC_PURE="1"))
    files = json.loads(child.stdout.readline())
    assert all(f.endswith(".py") for f in files), files       # SLABCALC_PURE=1 loaded the source

    def replay(argv, ops):
        child.stdin.write(json.dumps([argv, ops]) + "\n")
        child.stdin.flush()
        return json.loads(child.stdout.readline())
    yield replay
    child.stdin.close()
    child.wait()


@pytest.mark.skipif(engine_build() != "compiled (mypyc)", reason="this install runs the plain modules only")
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=workloads())
def test_compiled_and_plain_engines_replay_alike(plain, case):
    argv, ops = case
    sim = simulate(configure(PROFILE, argv), ops)
    mine = json.loads(json.dumps([engine_build(), asdict(sim.totals), [asdict(r) for r in sim.classes]], default=str))
    theirs = plain(argv, ops)
    assert (mine[0], theirs[0]) == ("compiled (mypyc)", "plain Python")
    assert mine[1:] == theirs[1:]


def test_a_ttl_past_64_bits_is_held_and_never_expires():
    """An item holds exptime in 31 bits (engines/lru.py): a TTL beyond them is capped, not
    refused with a traceback, and the item is found as the plain build finds it."""
    ops = [(0.0, SET, "a", 1, 10, 10**20, 0), (5.0, GET, "a", 1, 0, 0, 0), (6.0, TOUCH, "a", 1, 0, 10**20, 0),
           (9.0, GET, "a", 1, 0, 0, 0)]
    sim = simulate(configure(PROFILE, ["-m", "4"]), ops)
    assert (sim.totals.hits, sim.totals.misses, sim.totals.touch_hits) == (2, 0, 1)


def test_keys_that_share_a_hash_stay_apart():
    """The hash table compares held keys whose hashes are equal (engines/table.py): -1 and -2 share
    Python's hash, 5 and 5 + 2**61 - 1 would share it were the second not held with the top bit set."""
    keys = [-1, -2, 5, 5 + 2**61 - 1, "a", 2**64 + 3]
    ops = [(0.0, SET, k, 4, 100 + i, 0, 0) for i, k in enumerate(keys)]
    ops += [(1.0, DELETE, -2, 4, 0, 0, 0), (1.0, DELETE, 5, 4, 0, 0, 0)]
    ops += [(2.0, GET, k, 4, 0, 0, 0) for k in keys]
    sim = simulate(configure(PROFILE, ["-m", "4"]), ops)
    assert (sim.totals.hits, sim.totals.misses, sim.totals.curr_items, sim.totals.delete_hits) == (4, 2, 4, 2)


def test_an_engines_items_are_freed_with_it():
    """Compiled, items are acyclic to the collector (no GC header, engines/lru.py): their LRU rings are
    untied when the engine goes (Lrus.__del__), else every replay's items would stay in memory."""
    import gc
    import tracemalloc

    ops = [(0.0, SET, i, 8, 100, 0, 0) for i in range(20_000)] + [(1.0, GET, i, 8, 0, 0, 0) for i in range(0, 20_000, 7)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sim = simulate(configure(PROFILE, ["-m", "64"]), ops)
        del sim
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert left < 200_000, left        # 20 000 items of 80 bytes would leave 1.6 MB
