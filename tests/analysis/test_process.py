"""Whole-process memory: the hash table against a real memcached, and the arithmetic around it."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from memcached_server import MemcachedServer

from slabcalc import configure, load_profile
from slabcalc.analysis.process import Overhead, hashpower_for, parse_overhead, parse_pct, process_memory
from slabcalc.analysis.report import build_report
from slabcalc.inputs.items import Item

MIB = 1 << 20


def _settled(srv, timeout: float = 8.0) -> tuple[int, int]:
    """(hash_power_level, hash_bytes) after the next once-a-second expansion check has run
    (``clock_handler`` -> ``assoc_start_expand``) and any expansion it started is done."""
    time.sleep(1.1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = srv.stats()
        if stats["hash_is_expanding"] == "0":
            return int(stats["hash_power_level"]), int(stats["hash_bytes"])
        time.sleep(0.05)
    raise AssertionError("hash table still expanding")


def _load(srv, start: int, stop: int) -> None:
    """Keys ``k{start}`` .. ``k{stop - 1}``, pipelined; every one stored (``total_items`` counts them)."""
    srv.set_many((f"k{i}" for i in range(start, stop)), b"v")
    assert int(srv.stats()["total_items"]) == stop


@pytest.mark.slow
def test_hash_table_crosses_two_growth_points(memcached, profile):
    """-o hashpower=13 (8192 buckets): 12288 items stay at 13, the 12289th (> 1.5 x 8192) doubles it;
    24576 stay at 14, the 24577th doubles it again.  The report's process model says the same."""
    args = ["-m", "64", "-o", "hashpower=13"]
    settings = configure(profile, args)
    assert settings.hashpower_init == 13
    points = [(12288, 13), (12289, 14), (24576, 14), (24577, 15)]
    with MemcachedServer(args, memcached=memcached) as srv:
        assert _settled(srv) == (13, 8 << 13)
        loaded = 0
        for items, expected in points:
            _load(srv, loaded, items)
            loaded = items
            level, hash_bytes = _settled(srv)
            model = process_memory(build_report(settings, {Item(len(f"k{items}"), 1, 0, None): items}))
            assert (level, hash_bytes) == (expected, 8 << expected)
            assert (model.hashpower, model.hash_bytes) == (level, hash_bytes), items


def test_hashpower_rule():
    assert hashpower_for(0) == 16 and hashpower_for(98304) == 16 and hashpower_for(98305) == 17
    assert hashpower_for(10**12) == 32                      # HASHPOWER_MAX
    assert hashpower_for(10**6, 13, expand=False) == 13     # -o no_hashexpand


def test_settings_read_hashpower_and_no_hashexpand():
    s = configure(load_profile("1.6.18"), ["-o", "hashpower=20,no_hashexpand"])
    assert (s.hashpower_init, s.hash_expand) == (20, False)
    assert "hashpower=20,no_hashexpand" in " ".join(s.as_argv())
    assert configure(load_profile("1.6.18"), []).hashpower_init is None


def test_overhead_forms():
    assert parse_overhead("64m") == Overhead(bytes=64 * MIB)
    assert parse_overhead("25%") == Overhead(share=Fraction(1, 4))
    assert Overhead(share=Fraction(1, 4)).on(300) == 100      # a quarter of the 400-byte whole
    assert Overhead(bytes=5).on(10**9) == 5
    for bad in ("100%", "-1%", "x%"):
        with pytest.raises(ValueError):
            parse_overhead(bad)
    assert parse_pct("12.5") == Fraction(1, 8)


def test_first_pages_past_the_limit():
    """Three items in three classes: -m 2 is enough (the least 1.6 starts with -I 1m; first pages
    are granted past it), the process still holds three pages: one past -m."""
    settings = configure(load_profile("1.6.18"), [])
    report = build_report(settings, {Item(10, 10, 0, None): 1, Item(10, 1000, 0, None): 1,
                                     Item(10, 10000, 0, None): 1})
    memory = process_memory(report)
    assert memory.memory_limit_mb == 2 and memory.slab_bytes == 3 * MIB and memory.overshoot == MIB
    rules = settings.profile.process       # -t 4, -c 1024, three mmapped pages (the runtime's parts)
    runtime = (rules.program_bytes + 4 * rules.thread_bytes + 1024 * rules.conn_bytes + 2 * 4 * 16384 + 3 * 4096)
    assert memory.total == 3 * MIB + (8 << 16) + runtime


def test_read_buf_mem_limit_caps_each_threads_buffers():
    """thread.c 457-464: each worker's buffer cache keeps read_buf_mem_limit / threads of 16 KiB
    buffers, at least one (the live server then closes connections a thread cannot serve with one,
    so this is checked here, not against it); 4 threads and 1 MiB leave room for the usual two."""
    from slabcalc.analysis.process import runtime_parts

    tight = configure(load_profile("1.6.18"), ["-t", "64", "-o", "read_buf_mem_limit=1"])
    assert dict(runtime_parts(tight, 0, 0, connections=100))["read_buffers"] == 64 * 16384
    roomy = configure(load_profile("1.6.18"), ["-t", "4", "-o", "read_buf_mem_limit=1"])
    assert dict(runtime_parts(roomy, 0, 0, connections=100))["read_buffers"] == 4 * 2 * 16384
