"""Issue 41: a ttl over 30 days is replayed as memcached reads it -- a unix time (memcached.c realtime():
slabcalc.model.exptime) -- and a negative one as an item already expired; checked against the real
server: the same sets, touches and gets give the same hits and misses."""

from __future__ import annotations

import pytest
from memcached_server import MemcachedServer

from helpers import doc, run
from slabcalc.model.exptime import EXPIRED, REALTIME_MAXDELTA, UnknownClock, replay_ttl, unix_time_of

DAY = 86400


def _ops(now: int) -> list[tuple[str, str, int]]:
    """``(op, key, exptime)`` at unix time ``now`` (the server's own): what each get finds is in the name."""
    return [
        ("set", "forty_days_miss", 40 * DAY),           # a unix time in 1970: expired at once
        ("set", "thirty_days_hit", REALTIME_MAXDELTA),  # the longest relative ttl
        ("set", "future_unix_hit", now + 3600),
        ("set", "past_unix_miss", now - 5),             # after the server's start (62 s before it), but past
        ("set", "negative_miss", -1),
        ("set", "relative_hit", 100),
        ("set", "touched_miss", 0),
        ("touch", "touched_miss", 40 * DAY),
        ("set", "touched_hit", 0),
        ("touch", "touched_hit", now + 3600),
    ] + [("get", key, 0) for key in ("forty_days_miss", "thirty_days_hit", "future_unix_hit", "past_unix_miss",
                                     "negative_miss", "relative_hit", "touched_miss", "touched_hit")]


def _server_hits(memcached) -> tuple[int, int, int, dict[str, bool]]:
    with MemcachedServer(["-m", "64"], memcached=memcached) as server:
        now = int(server.stats()["time"])
        found = {}
        for op, key, exptime in _ops(now):
            if op == "set":
                assert server.set(key, b"x" * 100, exptime=exptime) == "STORED"
            elif op == "touch":
                server._send(f"touch {key} {exptime}\r\n".encode())
                assert server._readline() == "TOUCHED"
            else:
                server._send(f"get {key}\r\n".encode())
                line = server._readline()
                if line.startswith("VALUE"):
                    server._readline()
                    assert server._readline() == "END"
                found[key] = line.startswith("VALUE")
        stats = server.stats()
        assert int(stats["time"]) - now <= 1, "the ops took over a second: the test assumes one"
        return now, int(stats["get_hits"]), int(stats["get_misses"]), found


def _workload(path, now: int, times_are_unix: bool) -> None:
    rows = [f"{now if times_are_unix else 0},{op},{key},{100 if op == 'set' else ''},{exptime}"
            for op, key, exptime in _ops(now)]
    path.write_text("time,op,key,value_size,ttl\n" + "\n".join(rows) + "\n")


@pytest.mark.parametrize("times_are_unix", [False, True], ids=["--time-zero", "unix times"])
def test_exptimes_replay_as_the_real_server_reads_them(tmp_path, memcached, server_profile, times_are_unix):
    now, hits, misses, found = _server_hits(memcached)
    assert found == {key: key.endswith("_hit") for key in found}      # the rule, as the real server keeps it
    path = tmp_path / "w.csv"
    _workload(path, now, times_are_unix)
    zero = [] if times_are_unix else ["--time-zero", str(now)]
    totals = doc("simulate", str(path), "-m", "64", "--profile", server_profile.release, *zero)["totals"]
    assert (totals["get_hits"], totals["get_misses"]) == (hits, misses) == (4, 4)


def test_a_ttl_over_30_days_without_the_unix_time_is_refused(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("time,op,key,value_size,ttl\n0,set,a,100,30\n5,set,b,100,3456000\n")
    result = run("simulate", str(path), "-m", "4")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: {path}:3: ttl 3456000 is over 30 days: memcached reads it as a unix time (memcached.c "
        "realtime()); give --time-zero UNIX, the unix time of the workload's time 0"]


def test_a_negative_ttl_is_an_item_stored_expired_not_a_rejected_row(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("time,op,key,value_size,ttl\n0,set,a,100,-1\n1,get,a,,\n")
    record = doc("simulate", str(path), "-m", "4", "--profile", "1.6.18")
    assert record["input"]["rejected"] == 0
    assert (record["totals"]["get_hits"], record["totals"]["get_misses"]) == (0, 1)
    assert record["totals"]["total_items"] == 1         # stored (before: the row rejected), and expired


@pytest.mark.parametrize("exptime, now, ttl", [
    (0, None, 0), (REALTIME_MAXDELTA, None, REALTIME_MAXDELTA), (-1, None, EXPIRED), (-1, 10**9, EXPIRED),
    (1_700_000_100, 1_700_000_000, 100), (1_700_000_000, 1_700_000_000, EXPIRED), (40 * DAY, 10**9, EXPIRED),
    (REALTIME_MAXDELTA + 1, 0, REALTIME_MAXDELTA + 1),      # a server whose clock were in 1970
])
def test_replay_ttl(exptime, now, ttl):
    assert replay_ttl(exptime, now) == ttl


def test_replay_ttl_needs_the_unix_time_above_30_days():
    with pytest.raises(UnknownClock):
        replay_ttl(REALTIME_MAXDELTA + 1, None)
    assert unix_time_of(5.7, 100) == 105 and unix_time_of(1_700_000_000.5, None) == 1_700_000_000
    assert unix_time_of(5.7, None) is None


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
def test_optimize_workload_takes_time_zero_as_simulate_does(tmp_path):
    # optimize --workload reads the workload as simulate does: a ttl over 30 days is a unix time,
    # refused without --time-zero (the same line, exit 1), read from it with one.  a expires an hour
    # after time 0 (a hit at 10 s), b's 40 days are a unix time in 1970 (stored expired: a miss), c
    # is relative (a hit) -- the rule test_exptimes_replay_as_the_real_server_reads_them holds
    path = tmp_path / "w.csv"
    zero = 1_700_000_000
    path.write_text(f"time,op,key,value_size,ttl\n0,set,a,100,{zero + 3600}\n0,set,b,100,{40 * DAY}\n"
                    "0,set,c,100,100\n10,get,a,,\n10,get,b,,\n10,get,c,,\n")
    items = tmp_path / "items.csv"
    items.write_text("key,value,count\n1,100,3\n")
    items = str(items)
    refused = run("optimize", items, "-m", "4", "--workload", str(path))
    assert refused.exit_code == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        f"Error: {path}:2: ttl {zero + 3600} is over 30 days: memcached reads it as a unix time (memcached.c "
        "realtime()); give --time-zero UNIX, the unix time of the workload's time 0")
    record = doc("optimize", items, "-m", "4", "--workload", str(path), "--time-zero", str(zero), "--resamples", "0")
    assert (record["workload"]["cmd_get"], record["baseline"]["get_hits"]) == (3, 2)
    simulated = doc("simulate", str(path), "-m", "4", "--time-zero", str(zero))["totals"]
    assert simulated["get_hits"] == record["baseline"]["get_hits"]
