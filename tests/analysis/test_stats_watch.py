"""``stats --watch SECONDS [--count N]`` (issue 31): readings as they come, against a real memcached.

The live test runs the command line in a process of its own and, between two
of its JSON lines, stores and gets items on its own connection: each reading's
deltas must be exactly what was sent in between, and equal the server's own
counters read by the test.  A second live test ends a watch with Ctrl-C.  The
changes between readings (a node down and back, a restart, a class that stops
evicting) are checked on readings built from saved replies.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys

import pytest
from helpers import run
from memcached_server import MemcachedServer

from slabcalc.analysis.stats import analyse
from slabcalc.analysis.watch import watch
from slabcalc.errors import NodeError
from slabcalc.inputs.dumps import dump_from_replies


def _start(*args, env=None):
    # Ctrl-C as at a shell: SIGINT's default action, which a pytest-xdist worker (ignoring it) would
    # otherwise pass on to its children.
    return subprocess.Popen([sys.executable, "-m", "slabcalc", "stats", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _line(proc, timeout=5.0) -> str:
    """The next line the watch prints: it must come as the reading is made (flushed), not at exit."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no line from the watch in time"
    return proc.stdout.readline()


def _get(server, keys) -> list[str]:
    server._send(f"get {' '.join(keys)}\r\n".encode())
    found = []
    while (line := server._readline()) != "END":
        found.append(line.split()[1])
        server._readline()            # the value
    return found


def _counters(server):
    general = server.stats()
    return {name: int(general[name]) for name in ("cmd_set", "cmd_get", "get_hits", "get_misses", "evictions")}


def test_each_reading_counts_what_was_sent_since_the_one_before(memcached):
    with MemcachedServer(["-m", "4", "-o", "slab_automove=0"], memcached=memcached) as server:
        proc = _start("--server", f"127.0.0.1:{server.port}", "--watch", "1", "--count", "2", "--format", "json")
        try:
            first = json.loads(_line(proc))
            before = _counters(server)
            server.set_many((f"small:{i}" for i in range(500)), b"s" * 100)
            assert _get(server, ["small:1", "small:2", "nothing"]) == ["small:1", "small:2"]
            server.set_many((f"big:{i}" for i in range(3000)), b"b" * 3000)     # 9 MB into -m 4: evictions
            after = _counters(server)
            slabs = server.slab_stats().per_class
            second = json.loads(_line(proc))
            assert proc.wait(timeout=5) == 0 and proc.stderr.read() == ""
        finally:
            proc.kill()
            proc.wait()
    assert (first["reading"], first["nodes"][0]["interval"], first["changes"]) == (1, None, [])
    node = second["nodes"][0]
    evicted = after["evictions"] - before["evictions"]
    sent = {"cmd_set": 3500, "cmd_get": 3, "get_hits": 2, "get_misses": 1, "evictions": evicted}
    assert {k: node["counters"][k] for k in sent} == sent == {k: after[k] - before[k] for k in sent}
    assert evicted > 0 and node["seconds"] == 1 and node["rates"]["cmd_set_per_s"] == 3500.0
    small, big = [c for c in node["interval"]["classes"] if c["cmd_set"]]
    # every page of both classes came in the interval: the server started empty
    assert [(c["cmd_set"], c["evicted"], c["pages_delta"]) for c in (small, big)] == \
        [(500, 0, slabs[small["class"]]["total_pages"]), (3000, evicted, slabs[big["class"]]["total_pages"])]
    assert f"class {big['class']} evicts ({evicted}/s)" in second["changes"]
    assert f"pages: class {small['class']} +{small['pages']}, class {big['class']} +{big['pages']}; " \
           "slabs_moved +0 (0 since the watch began)" in second["changes"]


def test_ctrl_c_ends_a_watch_quietly_and_the_text_fits_80_columns(memcached):
    with MemcachedServer(["-m", "8"], memcached=memcached) as server:
        server.set_many((f"k:{i}" for i in range(200)), b"v" * 100)
        proc = _start("--server", f"127.0.0.1:{server.port}", "--watch", "1", env={"COLUMNS": "80"})
        try:
            lines = [_line(proc)]
            server.set_many((f"more:{i}" for i in range(300)), b"v" * 100)
            server.stats()
            while not lines[-1].startswith("reading 2"):
                lines.append(_line(proc))
            lines += [_line(proc) for _ in range(4)]      # the headline's second line and the class table
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=5)
        finally:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and err == ""
    text = "".join(lines) + out
    assert lines[0].startswith(f"reading 1 (+0.0 s): 127.0.0.1:{server.port}: 200 items in 1 pages")
    assert f"127.0.0.1:{server.port} over 1 s: 300 sets/s, 0 gets/s (0 hits/s)" in text.replace("\n  ", " ")
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if line.startswith("  class"))
    assert header.split() == ["class", "pages", "pages_delta", "cmd_set_per_s", "evicted_per_s", "age"]


def test_watch_usage_errors():
    assert run("stats", "--server", "127.0.0.1:1", "--count", "2").exit_code == 2
    assert run("stats", "--server", "127.0.0.1:1", "--watch", "0.5").exit_code == 2
    result = run("stats", "tests/data/none.txt", "--watch", "1")
    assert result.exit_code == 2 and "--watch reads each --server again and again" in result.stderr


# -- readings from saved replies ------------------------------------------------------------

def _replies(pid, time, uptime, evicted, pages, sets, moved=0):
    """One node's replies: classes 5 (evicting ``evicted`` so far) and 12 (``pages`` pages)."""
    general = [f"STAT pid {pid}", f"STAT time {time}", f"STAT uptime {uptime}", f"STAT cmd_set {sets}",
               f"STAT evictions {evicted}", f"STAT slabs_moved {moved}", "STAT curr_items 10"]
    slabs = []
    for cls, size, perslab, total in ((5, 240, 4369, 3), (12, 944, 1110, pages)):
        slabs += [f"STAT {cls}:chunk_size {size}", f"STAT {cls}:chunks_per_page {perslab}",
                  f"STAT {cls}:total_pages {total}", f"STAT {cls}:used_chunks 1", f"STAT {cls}:cmd_set {sets}"]
    items = [f"STAT items:5:evicted {evicted}", "STAT items:5:number 1", "STAT items:12:number 1",
             "STAT items:12:evicted 0"]
    return {"version": ["1.6.18"], "stats": general, "stats slabs": slabs, "stats items": items}


def _readings(*steps):
    for elapsed, replies in steps:
        yield elapsed, [("n", replies if isinstance(replies, NodeError) else dump_from_replies("n", replies))]


def test_changes_between_readings():
    readings = list(watch(_readings(
        (0.0, _replies(7, 100, 50, evicted=0, pages=10, sets=0)),
        (1.0, _replies(7, 101, 51, evicted=20, pages=10, sets=40)),          # class 5 evicts
        (2.0, _replies(7, 102, 52, evicted=20, pages=8, sets=80, moved=2)),  # stops; 2 pages leave class 12
        (3.0, NodeError("connection refused")),
        (4.0, NodeError("connection refused")),
        (5.0, _replies(9, 105, 1, evicted=0, pages=1, sets=0)),               # restarted
        (6.0, _replies(9, 106, 2, evicted=0, pages=1, sets=5)),
    ), analyse))
    assert [r.changes for r in readings] == [
        (), ("class 5 evicts (20/s)",),
        ("class 5 stopped evicting", "pages: class 12 -2; slabs_moved +2 (2 since the watch began)"),
        ("cannot be read: connection refused",), (),
        ("read again",), (),
    ]
    last = readings[-1].nodes[0]
    assert (last.span.seconds, last.counter("cmd_set"), readings[-2].nodes[0].span) == (1, 5, None)
    spaced = list(watch(_readings((0.0, _replies(7, 100, 50, 0, 10, 0)), (1.04, _replies(7, 101, 51, 0, 10, 3))),
                        analyse))
    assert spaced[1].nodes[0].span.seconds == 1


@pytest.mark.parametrize("restart", [_replies(9, 105, 1, 0, 1, 0), _replies(7, 90, 40, 0, 1, 0)])
def test_a_restarted_node_starts_again_from_its_new_reading(restart):
    readings = list(watch(_readings((0.0, _replies(7, 100, 50, 0, 10, 0)), (1.0, restart)), analyse))
    assert readings[1].nodes[0].span is None
    assert readings[1].changes[0].startswith("starts again: ")


def test_poll_keeps_a_steady_pace(monkeypatch):
    """The n-th reading is due n x seconds after the first; one that overruns makes the next begin at once;
    --read-items goes to the last reading of a counted poll only."""
    from slabcalc.inputs import client

    now = [100.0]
    took = iter([0.2, 1.7, 0.1, 0.0])           # how long each reading takes
    asked = []

    def read_nodes(addresses, timeout, sample_items, tls):
        asked.append((now[0], sample_items))
        now[0] += next(took)
        return ["replies"]

    def sleep(seconds):
        now[0] += seconds

    monkeypatch.setattr(client, "read_nodes", read_nodes)
    got = list(client.poll(["a"], 2.0, 1.0, 4, None, 50, clock=lambda: now[0], sleep=sleep))
    assert [round(e, 6) for e, _ in got] == [0.0, 1.0, 2.7, 3.0]
    assert [(round(t, 6), n) for t, n in asked] == [(100.0, 0), (101.0, 0), (102.7, 0), (103.0, 50)]


def test_csv_is_one_row_per_class_per_interval_with_one_header(capsys):
    from slabcalc.cli.stats_watch import _print_csv
    from slabcalc.records.stats import watch_record

    readings = watch(_readings((0.0, _replies(7, 100, 50, 0, 10, 0)), (1.0, _replies(7, 101, 51, 20, 10, 40)),
                               (2.0, _replies(7, 102, 52, 20, 11, 40))), analyse)
    for reading in readings:
        _print_csv(reading, watch_record(reading), header=reading.number == 1)
    assert capsys.readouterr().out.splitlines() == [
        ("reading,elapsed,node,seconds,class,pages,pages_delta,cmd_set_per_s,evicted_per_s,age,evicted_time,"
         "chunk_size,cmd_set,evicted"),
        "2,1.0,n,1,5,3,0,40.0,20.0,,,240,40,20", "2,1.0,n,1,12,10,0,40.0,0.0,,,944,40,0",
        "3,2.0,n,1,5,3,0,0.0,0.0,,,240,0,0", "3,2.0,n,1,12,11,1,0.0,0.0,,,944,0,0"]


def test_the_text_says_a_finding_and_its_action_when_it_is_new(capsys):
    from slabcalc.cli.stats_watch import _print_reading
    from slabcalc.records.stats import watch_record

    steps = [(float(i), _replies(7, 100 + i, 50 + i, evicted=20 * i, pages=10, sets=40 * i)) for i in range(4)]
    said = {}
    for reading in watch(_readings(*steps), analyse):
        _print_reading(reading, watch_record(reading), "table", said)
    out = " ".join(capsys.readouterr().out.split())
    findings = [part for part in out.split("changed:")[0].split("(not shown")[1:]]
    assert out.count("action for memcached 1.6.18: ") == 1, out      # said once, while it stays the same
    assert findings and "action for memcached 1.6.18: nothing to change" in findings[0]
