"""stats' advice against what a real memcached does next (issue 41): the automover turned on at run time,
and the page mover's drops.

* After ``slabs automove 1`` at run time the automover's window starts empty and must fill before its
  first move (1.6.18 items.c:1674-1679, slab_automove.c:162): the finding of the readings either side
  of the command, and of a ``--watch`` reading after, name a time the server's first move falls in
  (it said "within about 1 s" while the move came a window later).
* Items the page mover evicts to empty a page it takes are counted in the source class's ``evicted``
  on 1.6.45 (slabs_mover.c:214-219, items.c:1194) and in ``slab_reassign_evictions_nomem`` on 1.6.18
  (slabs.c:985): a class that received no set is named as losing items to the page mover, never as
  evicting (1.6.45 read "class 12 started evicting (354/s)").  The 1.6.45 pair is stored
  (tests/data/stats/mover-drops/, captured by :func:`capture_drops` from a build of the 1.6.45 tag);
  the live test runs the installed server.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from calcify import BIG, BIG_VALUE, SMALL_KEYS, SMALL_VALUE, reading
from memcached_server import MemcachedServer

from slabcalc.analysis.diagnosis import interval, now_findings
from slabcalc.analysis.stats import analyse
from slabcalc.analysis.watch import watch
from slabcalc.inputs.dumps import parse_dump

DROPS = Path(__file__).resolve().parents[1] / "data" / "stats" / "mover-drops"
WINDOW = 10


def node(name: str, text: str):
    return analyse(parse_dump([(name, text)]))


def stat(text: str, key: str) -> int:
    return int(re.search(rf"^STAT {re.escape(key)} (\S+)", text, re.M)[1])


def bounds(line: str) -> tuple[int, int]:
    """(soonest, latest) seconds of a finding that knows when the automover started."""
    found = re.search(r"within about (\d+) s \(no sooner than (\d+) s: it started at most", line)
    assert found, line
    return int(found[2]), int(found[1])


def _load(server: MemcachedServer) -> None:
    for i in range(BIG):
        assert server.set(f"big{i:06d}", b"v" * BIG_VALUE) == "STORED"


def _small(server: MemcachedServer, start: int, count: int) -> None:
    server.set_many((f"small{(start + i) % SMALL_KEYS:06d}" for i in range(count)), b"x" * SMALL_VALUE)


def test_after_slabs_automove_1_at_run_time_the_window_fills_before_the_first_move(memcached):
    flags = ["-m", "16", "-o", f"slab_automove=0,slab_automove_window={WINDOW}"]
    with MemcachedServer(flags, memcached=memcached) as server:
        _load(server)
        written = 0
        # up longer than a window (the old rule said 1 s), and the small class evicting: under load the
        # big items' load alone can outlast the window, and the readings below saw a class not yet full
        while True:
            stats = server.stats()
            if int(stats["uptime"]) >= WINDOW + 3 and int(stats["evictions"]) > 0:
                break
            _small(server, written, 500)
            written += 500
            time.sleep(0.2)
        readings, clock = [], []
        for step in ("before", "command", "later"):
            _small(server, written, 500)
            written += 500
            if step == "command":
                time.sleep(1)          # the readings a second apart, as --interval 1 takes them
                assert server._command("slabs automove 1") == "OK"
            readings.append(reading(server))
            clock.append(time.monotonic())
            if step == "command":
                time.sleep(3)
        moved_at = None
        while moved_at is None and time.monotonic() - clock[1] < WINDOW + 20:
            _small(server, written, 400)       # the small class keeps evicting, as the window asks
            written += 400
            if int(server.stats()["slabs_moved"]):
                moved_at = time.monotonic()
            time.sleep(0.2)
    assert moved_at is not None, "the automover never moved a page"
    assert stat(readings[0], "slab_automove") == 0 and stat(readings[1], "slab_automove") == 1
    assert stat(readings[1], "slabs_moved") == 0
    # the two readings either side of the command (stats FILE --since FILE, or --interval)
    span = interval(parse_dump([("before", readings[0])]), node("command", readings[1]), round(clock[1] - clock[0], 1))
    line = now_findings(span)[-1]
    assert "should move a page from class 12 to class 6" in line, line
    soonest, latest = bounds(line)
    assert clock[1] + soonest - 1 <= moved_at <= clock[1] + latest + 1, (moved_at - clock[1], line)
    assert moved_at - clock[1] > 3                # not "within about 1 s"
    # --watch: its third reading knows the automover started between the first two
    third = list(watch([(0.0, [("n", parse_dump([("a", readings[0])]))]),
                        (clock[1] - clock[0], [("n", parse_dump([("b", readings[1])]))]),
                        (clock[2] - clock[0], [("n", parse_dump([("c", readings[2])]))])], analyse))[2]
    line = now_findings(third.nodes[0].span)[-1]
    soonest, latest = bounds(line)
    assert clock[2] + soonest - 1 <= moved_at <= clock[2] + latest + 1, (moved_at - clock[2], line)


def capture_drops(memcached: str) -> tuple[str, str]:
    """Readings either side of ``slabs reassign 12 6`` on a full node: class 12 (1 000-byte items, 3 pages)
    gives a page while no set comes to it, so the page mover must evict to empty it."""
    with MemcachedServer(["-m", "4", "-o", "slab_automove=0"], memcached=memcached) as server:
        server.set_many((f"big{i:05d}" for i in range(2400)), b"v" * 1000)
        server.version()
        time.sleep(2.1)
        server.set_many((f"small{i:05d}" for i in range(8000)), b"x" * 200)
        server.version()
        before = reading(server)
        assert server._command("slabs reassign 12 6") == "OK"
        time.sleep(2.5)
        return before, reading(server)


def _drops_said(before: str, after: str) -> tuple[str, str]:
    span = interval(parse_dump([("before", before)]), node("after", after), 3)
    first, *rest = now_findings(span)
    return first, " ".join(rest)


def test_the_page_movers_drops_on_1_6_45_are_named_as_such():
    before, after = ((DROPS / f"1.6.45-{name}.txt").read_text() for name in ("before", "after"))
    dropped = stat(after, "items:12:evicted") - stat(before, "items:12:evicted")
    assert dropped > 0 and stat(after, "12:cmd_set") == stat(before, "12:cmd_set")      # no set came to class 12
    assert stat(after, "slabs_moved") - stat(before, "slabs_moved") == 1
    first, rest = _drops_said(before, after)
    assert first.startswith(f"now: no class evicts (over 3 s); class 12 loses {dropped / 3:.0f}/s to the page "
                            "mover (page-mover drops: no set came to it"), first
    assert "class 12 evicts" not in first + rest and "slabs reassign 6 12" not in first + rest
    changes = list(watch([(0.0, [("n", parse_dump([("a", before)]))]), (3.0, [("n", parse_dump([("b", after)]))])],
                         analyse))[1].changes
    assert f"class 12: page-mover drops ({dropped / 3:.0f}/s): the page mover evicts its items to empty the pages " \
           "it takes; no set came to it" in changes
    assert not any("started evicting" in c or "class 12 evicts" in c for c in changes), changes


def test_the_installed_servers_page_mover_drops_are_never_a_class_evicting(memcached):
    before, after = capture_drops(memcached)
    first, rest = _drops_said(before, after)
    assert "class 12 evicts" not in first + rest and "slabs reassign 6 12" not in first + rest, first + rest
    if stat(after, "items:12:evicted") > stat(before, "items:12:evicted"):       # 1.6.45 counts them there
        assert "class 12 loses" in first and "page-mover drops" in first
    else:                                                                       # 1.6.18 apart
        assert stat(after, "slab_reassign_evictions_nomem") > stat(before, "slab_reassign_evictions_nomem")
