"""Extstore capacity as a range that holds (issue 41): ``capacity_behind`` (the write thread falling behind)
to ``capacity`` (keeping pace), against real fills of several mixes.

The captures (``tests/data/extstore-fill/v18-*.json.gz``: Debian's 1.6.18; ``v45-*``: 1.6.45 built from its
tag) are ``scripts/measure_extstore_fill.py`` runs: 13-byte keys, values of a ``tests/extstore_mixes.py``
mix, ``-m`` 32-256, flash 256 MB-4 GB, 500-4 000 sets a second, ``stats`` read every 50 sets; each run
brackets the server's first eviction (``evictions`` or ``extstore_page_evictions`` above 0) and reads
``evictions`` for some sets more.  Every run's first eviction -- or all its items held -- must lie in the
range the replay gives for the same items (within the 50-set bracket, or 3 %).

Issue 41's own case (``v18-m64-exp``, values 1-30 KB mean 7.9 KB into ``-m 64``, 512 MB of flash, 2 000 a
second): ``report`` said 6 268 (the replay's first eviction: two items of class 25, missed while the
write thread skipped the class for its backoff, never again), and 13 002 for a thread falling behind;
the real 1.6.18 first evicted with 23 756 items in one run (class 1 on two pages) and 12 951 in the
other (class 1 on one).
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

import pytest

from slabcalc import configure, load_profile
from slabcalc.analysis.extstore_fill import fill
from slabcalc.model.distribution import Item

DATA = Path(__file__).resolve().parents[1] / "data" / "extstore-fill"
RELEASES = {"v18": "1.6.18", "v45": "1.6.45"}
# The suite replays FAST (both releases, each flash/-m corner; about 20 s of a core); the rest, 1.6.45's
# larger fills above all (a minute and a half), are replayed by scripts/check_extstore_range.py.
FAST = ("v18-m64-exp", "v18-m32-u100k", "v45-m32-u100k", "v18-m256-e100k", "v45-m96-u60k")
SLOW = ("v45-m64-exp", "v45-m64-exp40k", "v18-m128-u20k", "v45-m128-u20k", "v45-m256-e100k", "v18-m96-u60k")


def _runs(name: str) -> list[dict]:
    return json.loads(gzip.decompress((DATA / f"{name}.json.gz").read_bytes()))["runs"]


@functools.cache
def _replayed(name: str):
    """The replay of the capture's items with its settings: the Fill (capacity, low end)."""
    import extstore_mixes

    r = _runs(name)[0]
    settings = configure(load_profile(RELEASES[name[:3]]),
                         ["-m", str(r["memory"]), "-o", f"ext_path=/tmp/x:{r['flash']}"])
    sizes = extstore_mixes.sizes(r["count"], r["mix"], r["seed"])
    pairs = [(Item(r["key_length"], size, 0, None), 1) for size in sizes]
    return fill(settings, pairs, rate=int(r["rate"]), limit=r["count"])


def _slack(items: int) -> int:
    return max(items * 3 // 100, 50)          # the 50-set bracket between two stats reads


def _check(name: str) -> None:
    f = _replayed(name)
    assert f is not None
    assert f.low <= f.items
    for r in _runs(name):
        if r["first_eviction_between"] is None and r["stats"].get("extstore_page_evictions"):
            assert f.evicted == "flash", (name, r, f)    # a flash page evicted before the end (not bracketed)
            continue
        if r["first_eviction_between"] is None:            # the server held every item it was sent
            held = r["stats"]["curr_items"]
            assert f.evicted is None or f.items + _slack(held) >= held, (name, r, f)
            continue
        first = r["stats"]["curr_items"]
        assert f.low - _slack(first) <= first <= f.items + _slack(first), (name, first, f.low, f.items, f)


# Captures whose first eviction the range misses, each with why (scripts/check_extstore_range.py says so too).
KNOWN_MISSES = {
    "v45-m96-u60k": (
        "the real 1.6.45, captured at a load of 13, first evicted with 11 596 and 12 449 items; the replay holds "
        "all 20 000 kept-pace and stalled once.  Its range reached down to 3 300 only while the model's page "
        "mover evicted for a spare chunk it did not need (a move to the pool, evictions not allowed: 1.6.45 "
        "slabs_mover.c 178-230 waits instead, engines/mover.py since stop 53): a write thread further behind "
        "than one stall is not modelled"),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[n]))
                                  if n in KNOWN_MISSES else n for n in FAST])
def test_real_first_eviction_is_in_the_range(name):
    _check(name)


def test_the_script_checks_every_capture():
    """scripts/check_extstore_range.py replays FAST and SLOW: together, every capture stored."""
    stored = {p.name.split(".")[0] for p in DATA.glob("v*.json.gz")}
    assert set(FAST) | set(SLOW) == stored and not set(FAST) & set(SLOW)


def test_issue_41_each_end_is_a_real_run():
    """Issue 41's fill: the kept-pace end is the run whose header class got a second page (23 756 items), the
    fallen-behind end the run that left it one (12 951); the passing misses of class 25 near set 6 270 are not
    the capacity (the figure report gave: 6 268), nor are they made once the thread keeps pace."""
    f = _replayed("v18-m64-exp")
    kept, behind = sorted(_runs("v18-m64-exp"), key=lambda r: -r["stats"]["curr_items"])
    assert kept["total_pages"]["1"] == 2 and behind["total_pages"]["1"] == 1
    assert abs(f.items - kept["stats"]["curr_items"]) <= 50 and dict(f.pages)[1] == 2
    assert abs(f.low - behind["stats"]["curr_items"]) <= _slack(behind["stats"]["curr_items"])
    assert f.evicted == "RAM" and f.passing == 0 and f.low > 6_268 * 2


def test_passing_misses_that_the_server_makes_are_the_low_end():
    """-m 32, values up to 100 KB at 4 000 a second: the real 1.6.18 evicted 4 and 57 items near set 320 and
    then none for 2 000 sets (the write thread caught up); the replay makes them too (first at 308 items,
    ``passing``), and its range reaches down to them while its capacity is where eviction goes on."""
    f = _replayed("v18-m32-u100k")
    for r in _runs("v18-m32-u100k"):
        after = r["evictions_after"]
        assert after[-1][1] == after[len(after) // 2][1] > 0          # evictions stopped: a passing miss
    assert f.passing > 0 and f.low < 1_000 < f.items


def test_live_fill_is_in_the_range(memcached, profile):
    """The server the suite runs against (its own release's replay), the -m 32 fill of values up to 100 KB at
    4 000 a second for 2 400 sets (about 2 s, the start-up second included): its first eviction, if any, in
    the range."""
    import importlib.util

    name = {"1.6.18": "v18-m32-u100k", "1.6.45": "v45-m32-u100k"}.get(profile.release)
    if name is None:
        pytest.skip(f"no capture of {profile.release}'s replay")
    spec = importlib.util.spec_from_file_location("measure", Path(__file__).resolve().parents[2] / "scripts" /
                                                  "measure_extstore_fill.py")
    measure = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure)
    r = _runs(name)[0]
    live = measure.run(2400, r["rate"], str(r["memory"]), None, 50, mix=r["mix"], seed=r["seed"],
                       key_length=r["key_length"], flash=r["flash"])
    f = _replayed(name)
    held = live["stats"]["curr_items"]
    assert f.low - _slack(held) <= held <= f.items + _slack(held), (live, f)
