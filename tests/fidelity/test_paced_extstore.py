"""``simulate`` with extstore against paced runs of the real 1.6.18 (issue 28, engines/extstore.py).

The stored ``ext-*`` captures (``tests/data/paced/``, made by ``scripts/capture_paced.py``) are
compared at every 10 s checkpoint by ``test_paced.py`` like every other paced run, with the
extstore counters added (``extstore_objects_written`` and ``get_extstore`` within 3 % or 300,
``extstore_pages_used`` and ``extstore_page_evictions`` within 1).  Here: the comparison can fail
(each rule taken out makes the model miss the server), and one short extstore run is made live.
"""

from __future__ import annotations

import json
from pathlib import Path

import paced
import pytest
from helpers import run
from test_paced import check, check_live, differences, live_result, replay


def _misses(capture, monkeypatch, target, name, value, until: int) -> list[str]:
    """What is off at the checkpoints up to ``until`` s with ``target.name`` replaced by ``value``."""
    monkeypatch.setattr(target, name, value)
    capture.workload = [row for row in capture.workload if row[0] < until]
    capture.snapshots = [s for s in capture.snapshots if s["time"] <= until]
    sim = replay(capture)
    return [p for (_, state), snapshot in zip(sim.snapshots, capture.snapshots) for p in differences(snapshot, state)]


def test_without_prefilled_memory_the_pages_would_differ(monkeypatch):
    """memcached.c 6023: with extstore all of -m is allocated into the global pool at start; without
    that the extstore automover never finds the pool low, and no page goes back to it."""
    import slabcalc.engines.extstore_attach as ext      # attach() prefills, with the name it imported

    out = _misses(paced.load("ext-issue-1.6.18"), monkeypatch, ext, "prefill", lambda slabs, size: None, 30)
    assert any("slabs_moved" in p or "slab_global_page_pool" in p for p in out), out


def test_without_header_items_the_header_class_would_be_missing(monkeypatch):
    """A flushed item leaves a header item in RAM (storage.c 494): 17 671 of them hold class 1's
    two pages in the issue's case.  Sized as if the header kept the value, they would hold none
    and evict each other from a large class."""
    from slabcalc.engines.extstore import Storage

    def no_header(self, key, key_size, flags):
        self.pending = self.e.ntotal.of(key_size, 1 << 16, flags)     # a header as large as a value

    out = _misses(paced.load("ext-issue-1.6.18"), monkeypatch, Storage, "noted", no_header, 10)
    assert any("class 1 pages" in p for p in out) and any("curr_items" in p for p in out), out


def test_without_page_eviction_no_header_would_miss(monkeypatch):
    """A 64 MB file of 8 MB pages fills at 30-40 s: the maintenance thread (woken each second by
    the compaction thread) evicts the oldest page and 130 gets of its headers miss by 50 s."""
    from slabcalc.engines.flash import Flash

    out = _misses(paced.load("ext-slow-fill-1.6.18"), monkeypatch, Flash, "maintain", lambda self: None, 50)
    assert any("extstore_page_evictions" in p for p in out), out


def _with_rules(capture, replay: dict, until: int) -> list[str]:
    """What is off at the checkpoints up to ``until`` s when the capture's release runs the storage
    threads on ``replay`` (a profile's ``extstore.replay``) instead of its own."""
    import dataclasses

    from slabcalc import configure, load_profile
    from slabcalc.engines.simulate import simulate
    from test_paced import OPS

    profile = load_profile(capture.version)
    profile = dataclasses.replace(profile, extstore=dataclasses.replace(profile.extstore, replay=replay))
    ops = [(t, OPS[op], key, len(key), value, ttl, 0) for t, op, key, value, ttl in capture.workload if t < until]
    snapshots = [s for s in capture.snapshots if s["time"] <= until]
    sim = simulate(configure(profile, capture.args), ops, boot=capture.boot, at=[s["time"] for s in snapshots])
    return [p for (_, state), snapshot in zip(sim.snapshots, snapshots) for p in differences(snapshot, state)]


def _replay_of(release: str, **changed) -> dict:
    from slabcalc import load_profile

    return {**load_profile(release).extstore.replay, **changed}


def test_1_6_45_runs_its_own_storage_threads():
    """The rules placed at 1.6.20-1.6.41 (profile changes; docs/extstore-releases.md) reach 1.6.45."""
    replay = _replay_of("1.6.45")
    assert (replay["write_target"], replay["write_walk"], replay["automove"], replay["compact_pick"],
            replay["header_keeps_fetched"], replay["write_sleep_min_us"]) == (
        "pool_deficit", "down", "1.6.38", "most_fragmented", True, 200)
    assert _replay_of("1.6.18")["write_target"] == "margin"


def test_1_6_18s_storage_threads_miss_a_1_6_45_capture():
    """1.6.45's write thread flushes a class early only while the global pool is under its minimum
    (1.6.20, storage.c 621-625), where 1.6.18's keeps 3 pages of free chunks whenever the pool is at
    or under it: on 1.6.18's rules the model writes 3 001 objects by 10 s of ext-slow-fill, the
    real 1.6.45 2 554 (its own rules: within 3 %)."""
    capture = paced.load("ext-slow-fill-1.6.45")
    out = _with_rules(capture, _replay_of("1.6.18"), 10)
    assert any("extstore_objects_written" in p for p in out), out
    assert _with_rules(paced.load("ext-slow-fill-1.6.45"), _replay_of("1.6.45"), 10) == []


def test_without_1_6_38s_page_ahead_the_automover_would_move_pages():
    """1.6.38 (storage.c 627-630): with the global pool exactly at its minimum -- 0 until the extstore
    automover's window fills -- the write thread frees one page ahead.  Without it (1.6.20-1.6.37)
    the pool stays short and the automover takes 10 pages from the large classes by 10 s of
    ext-slow-fill, where the real 1.6.45 moved 1."""
    out = _with_rules(paced.load("ext-slow-fill-1.6.45"), _replay_of("1.6.45", write_target_at_minimum=0), 10)
    assert any("slabs_moved" in p for p in out), out


def test_a_release_whose_storage_threads_were_not_read_is_refused_in_one_line():
    """A profile with ``extstore.replay: null`` (a user's, or a release not read) is refused, naming it."""
    import dataclasses

    from slabcalc import configure, load_profile
    from slabcalc.engines.background import SimulationError
    from slabcalc.engines.simulate import simulate

    profile = load_profile("1.6.45")
    profile = dataclasses.replace(profile, extstore=dataclasses.replace(profile.extstore, replay=None))
    settings = configure(profile, ["-m", "16", "-o", "ext_path=/tmp/ext.data:1g"])
    with pytest.raises(SimulationError) as refused:
        simulate(settings, [(0.0, 0, "a", 1, 100, 0, 0)])
    message = str(refused.value)
    assert "\n" not in message and "on 1.6.45" in message and "does not model -o ext_path" in message


def live_ext_capture() -> dict:
    """A job of tests/ahead.py: the 6 s extstore paced run of the installed memcached (``live-ext``)."""
    return paced.live_capture("live-ext")


@pytest.mark.ahead("test_paced_extstore:live_ext_capture")
def test_live_extstore_paced_run():
    """A 6 s extstore paced run of the installed memcached, compared at each 3 s snapshot."""
    capture = live_result("test_paced_extstore:live_ext_capture")
    last = capture.snapshots[-1]["stats"]
    assert int(last["extstore_objects_written"]) > 1000 and int(last["get_extstore"]) > 1000
    check_live(capture)


EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "extstore.csv")


def test_simulate_json_gives_the_servers_extstore_counters():
    """docs/extstore-simulate.md's example: 3 000 items of 2-20 KB set in 3 s into -m 16, then read.
    The real 1.6.18, given the same workload on its clock, reported these (measured once)."""
    result = run("simulate", EXAMPLE, "--profile", "1.6.18", "-m", "16", "-o", "ext_path=/tmp/ext.data:1g",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    x = doc["extstore"]
    assert (x["extstore_objects_written"], x["extstore_bytes_written"], x["extstore_pages_used"],
            x["get_extstore"]) == (3000, 33459625, 2, 3000)
    assert (doc["totals"]["curr_items"], doc["totals"]["get_hits"]) == (3000, 3000)
    assert [(o["name"], o["treatment"]) for o in doc["model"]["options"]] == [("ext_path", "modelled")]


@pytest.mark.parametrize("args, words", [
    (["--profile", "1.6.18", "-m", "16", "--sample", "0.5", "-o", "ext_path=/tmp/ext.data:1g"], "--sample"),
])
def test_what_is_not_replayed_is_refused_in_one_line(args, words):
    result = run("simulate", EXAMPLE, *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "does not model" in lines[0]
