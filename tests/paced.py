"""Paced runs of a real memcached: a workload replayed on its own clock, snapshots every few seconds.

A *scenario* is a workload (``(time, op, key, value_size, ttl)`` rows in time
order), the server's arguments and a snapshot interval.  :func:`capture`
starts memcached, waits for its one-second clock to tick, and from that
instant sends each operation at its workload time (batched every few
milliseconds), taking ``stats``, ``stats slabs`` and ``stats items`` at
every multiple of the interval, before the operations of that instant.

The same scenarios are captured once into ``tests/data/paced/*.json.gz`` by
``scripts/capture_paced.py`` (long runs, replayed by the tests) and one short
one is run live in CI.  Stdlib only.
"""

from __future__ import annotations

import gzip
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from memcached_server import MemcachedServer

DATA = Path(__file__).parent / "data" / "paced"
BATCH = 0.005          # seconds of workload sent together


@dataclass(frozen=True)
class Scenario:
    name: str
    args: tuple[str, ...]
    duration: int                      # seconds of workload
    build: Callable[[], list]          # the workload rows
    interval: int = 10                 # seconds between snapshots
    about: str = ""
    releases: tuple[str, ...] = ("1.6.18", "1.6.38", "1.6.45")    # the releases it is captured on


def _spread(start: float, count: int, seconds: float) -> list[float]:
    """``count`` instants spread evenly over ``seconds`` from ``start`` (millisecond grain)."""
    return [round(start + seconds * i / count, 3) for i in range(count)]


def expired_class_then_new_size() -> list:
    """The issue's case: 9 950 x 1 KiB items with a 10 s TTL, then 300 new 256-byte items a second."""
    rows = [(t, "set", f"a{i:05d}", 1024, 10) for i, t in enumerate(_spread(0, 9950, 1))]
    rows += [(t, "set", f"b{i:06d}", 256, 0) for i, t in enumerate(_spread(2, 300 * 118, 118))]
    return rows


def short_expired_then_new_size() -> list:
    """A 55 s version for CI: 6 000 x 1 KiB items with a 5 s TTL, then 400 x 200 B a second."""
    rows = [(t, "set", f"a{i:05d}", 1024, 5) for i, t in enumerate(_spread(0, 6000, 1))]
    rows += [(t, "set", f"b{i:06d}", 200, 0) for i, t in enumerate(_spread(2, 400 * 53, 53))]
    return rows


def three_size_shift() -> list:
    """Three item sizes one after another (40 s each), each read back while it is written."""
    rng = random.Random(3)
    rows = []
    for phase, size in enumerate((120, 900, 4000)):
        written = 0
        for t in _spread(phase * 40, 40 * 350, 40):
            key = f"p{phase}k{written:06d}"
            rows.append((t, "set", key, size, 0))
            written += 1
            if written > 50 and rng.random() < 0.6:        # a read of a recent key
                back = written - 1 - int(rng.expovariate(1 / 2000)) % written
                rows.append((t, "get", f"p{phase}k{back:06d}", 0, 0))
    return rows


def mixed_ttls_with_gets() -> list:
    """TTLs from 2 s to a minute, two sizes, gets of recent keys: reclaimed by crawler and maintainer."""
    rng = random.Random(5)
    rows = []
    keys: list[str] = []
    ttls = (2, 5, 10, 30, 60, 0)
    for i, t in enumerate(_spread(0, 120 * 250, 120)):
        key = f"m{i:06d}"
        size = 300 if i % 3 else 2000
        rows.append((t, "set", key, size, ttls[rng.randrange(len(ttls))]))
        keys.append(key)
        for _ in range(2):
            back = len(keys) - 1 - int(rng.expovariate(1 / 1500)) % len(keys)
            rows.append((t, "get", keys[back], 0, 0))
    return rows


def chunked_items() -> list:
    """Items above slab_chunk_max (chunked) beside small ones, TTLs so pages free up."""
    rng = random.Random(7)
    rows = []
    for i, t in enumerate(_spread(0, 60 * 12, 60)):
        size = rng.choice((600_000, 900_000, 1_000_000, 300_000))
        rows.append((t, "set", f"c{i:05d}", size, rng.choice((0, 8, 20))))
    for i, t in enumerate(_spread(0.0005, 60 * 200, 60)):
        rows.append((t, "set", f"s{i:06d}", 700, 0))
    rows.sort(key=lambda r: r[0])
    return rows


def pages_move_without_eviction() -> list:
    """-m large enough for everything: a class whose items expire gives its pages to the pool."""
    rows = [(t, "set", f"a{i:05d}", 1500, 4) for i, t in enumerate(_spread(0, 20000, 2))]
    rows += [(t, "set", f"b{i:06d}", 100, 0) for i, t in enumerate(_spread(3, 200 * 87, 87))]
    return rows


def temporary_ttl_beside_permanent() -> list:
    """Issue 28's case: 2 KB items with a 20 s TTL (200 a second) beside 900-byte items that never
    expire (300 a second), each set followed by a get of a recent key of either kind."""
    rng = random.Random(28)
    rows = [(t, "set", f"t{i:05d}", 2000, 20) for i, t in enumerate(_spread(0, 200 * 60, 60))]
    rows += [(t, "set", f"p{i:05d}", 900, 0) for i, t in enumerate(_spread(0.0005, 300 * 60, 60))]
    rows.sort(key=lambda r: r[0])
    out, written = [], {"t": 0, "p": 0}
    for row in rows:
        out.append(row)
        kind = row[2][0]
        written[kind] += 1
        other = rng.choice("tp")
        if written[other] > 10:
            back = written[other] - 1 - int(rng.expovariate(1 / 3000)) % written[other]
            out.append((row[0], "get", f"{other}{back:05d}", 0, 0))
    return out


def short_ttl_beside_long_lived() -> list:
    """Issue 28's reclaim case, scaled to a third so its replay stays fast: 500 sets a second of 2 000-byte
    items with a 5 s TTL beside 35 a second of the same size that never expire (the same class: a live
    item at the COLD tail stops the maintainer's tail pull, so the crawler's schedule decides), and 100
    gets a second of recent short-TTL keys (some found expired).  The crawler's second run comes about
    67 s in (its first, at start, found every LRU empty and waits 60 s more)."""
    rng = random.Random(2805)
    rows = [(t, "set", f"s{i:05d}", 2000, 5) for i, t in enumerate(_spread(0, 500 * 100, 100))]
    rows += [(t, "set", f"l{i:04d}", 2000, 0) for i, t in enumerate(_spread(0.0002, 35 * 100, 100))]
    rows += [(t, "get", "", 0, 0) for t in _spread(0.0004, 100 * 100, 100)]
    rows.sort(key=lambda r: r[0])
    out, written = [], 0
    for t, op, key, size, ttl in rows:
        if op == "get":
            if written < 10:
                continue
            back = written - 1 - int(rng.expovariate(1 / 2000)) % written
            key = f"s{back:05d}"
        elif key[0] == "s":
            written += 1
        out.append((t, op, key, size, ttl))
    return out


def crawl_to_the_head() -> list:
    """100 items without a TTL, then 100 with a 3 s TTL, all at once: the crawler's second run (66 s in)
    walks the class's COLD LRU to its head: does it free the newest expired item too?"""
    rows = [(0.0, "set", f"live{i:04d}", 100, 0) for i in range(100)]
    rows += [(0.001, "set", f"exp{i:05d}", 100, 3) for i in range(100)]
    return rows


def crawl_limited() -> list:
    """As :func:`crawl_to_the_head` (200 items in one class's COLD LRU, the 100 with a 3 s TTL nearest
    the head), and in a class of larger items 40 with a 3 s TTL behind one without: under ``-o
    lru_crawler_tocrawl=150`` the crawl at 66 s checks the 150 items nearest each tail (items.c
    1549-1563), so it frees 50 of the first class's and all 40 of the second's."""
    rows = crawl_to_the_head()
    rows += [(0.002, "set", "biglive", 1000, 0)]
    rows += [(0.003, "set", f"bigexp{i:03d}", 1000, 3) for i in range(40)]
    return rows


def readme_example() -> list:
    """``examples/automove.csv``, the workload of the automover example of docs/background.md."""
    import csv

    path = Path(__file__).resolve().parent.parent / "examples" / "automove.csv"
    with open(path, newline="") as src:
        return [(float(r["time"]), r["op"], r["key"], int(r["value_size"] or 0), int(r["ttl"] or 0))
                for r in csv.DictReader(src)]


# -- extstore (issue 28): flash files are per scenario, so captures may run side by side -----------

def _ext(name: str, size: str = "1g") -> str:
    return f"ext_path=/tmp/slabcalc-paced-{name}:{size}"


def ext_issue_case() -> list:
    """Issue 28's case: 20 000 items of 2-20 KB set in 10 s (faster than RAM holds them), then a get
    of every key in 10 s: the flusher moves values to flash, header items stay in RAM."""
    rng = random.Random(2820)
    sizes = [rng.randint(2000, 20000) for _ in range(20000)]
    rows = [(t, "set", f"x{i:05d}", sizes[i], 0) for i, t in enumerate(_spread(0, 20000, 10))]
    rows += [(t, "get", f"x{i:05d}", 0, 0) for i, t in enumerate(_spread(12, 20000, 10))]
    return rows


def _with_gets(rows: list, rng: random.Random, share: float, mean_back: int) -> list:
    """Each set followed, with chance ``share``, by a get of a recent key (exponentially far back)."""
    out, keys = [], []
    for row in rows:
        out.append(row)
        keys.append(row[2])
        if len(keys) > 10 and rng.random() < share:
            back = len(keys) - 1 - int(rng.expovariate(1 / mean_back)) % len(keys)
            out.append((row[0], "get", keys[back], 0, 0))
    return out


def ext_slow_fill() -> list:
    """300 items a second of 1-8 KB for 50 s, each read back (often) while RAM and flash fill: the
    flusher keeps up, the small file's oldest pages are evicted and their headers miss."""
    rng = random.Random(2821)
    rows = [(t, "set", f"s{i:05d}", rng.randint(1000, 8000), 0) for i, t in enumerate(_spread(0, 300 * 50, 50))]
    return _with_gets(rows, rng, 0.8, 4000)


def ext_mixed_sizes() -> list:
    """700 items a second of 100-3 000 bytes for 50 s with gets: only classes from ext_item_size=1024
    are flushed, the smaller ones compete with the header items for pages."""
    rng = random.Random(2822)
    rows = [(t, "set", f"m{i:05d}", rng.choice((rng.randint(100, 900), rng.randint(1000, 3000))), 0)
            for i, t in enumerate(_spread(0, 700 * 50, 50))]
    return _with_gets(rows, rng, 0.5, 6000)


def ext_headers_starve() -> list:
    """900 items a second of 1-3 KB for 30 s into -m 6: header items outgrow the one page their class
    gets, and evict each other (issue 28: memcached issues #541, #794)."""
    rng = random.Random(2823)
    rows = [(t, "set", f"h{i:05d}", rng.randint(1000, 3000), 0) for i, t in enumerate(_spread(0, 900 * 30, 30))]
    return _with_gets(rows, rng, 0.3, 12000)


def ext_age_low_ttl() -> list:
    """400 items a second of 2-6 KB for 40 s, half with a 20 s TTL, with gets of recent keys, into
    a -m 64 that holds them all: only items idle over ext_item_age=5 go to flash, the short-TTL ones
    into the lowttl bucket's own pages (ext_low_ttl=30); expired headers free flash objects."""
    rng = random.Random(2825)
    rows = [(t, "set", f"a{i:05d}", rng.randint(2000, 6000), 20 if i % 2 else 0)
            for i, t in enumerate(_spread(0, 400 * 40, 40))]
    return _with_gets(rows, rng, 0.6, 3000)


def ext_overwrites() -> list:
    """2 000 keys of 3-5 KB overwritten at random, 400 sets a second for 50 s, with gets, into -m 8
    and a 64 MB file of 8 MB pages: flash pages fill with dead values, the compaction thread
    rewrites the live ones of the emptiest old page (ext_compact_under, ext_max_frag)."""
    rng = random.Random(2826)
    rows = []
    for t in _spread(0, 400 * 50, 50):
        key = f"o{rng.randrange(2000):04d}"
        rows.append((t, "set", key, rng.randint(3000, 5000), 0))
        if rng.random() < 0.5:
            rows.append((t, "get", f"o{rng.randrange(2000):04d}", 0, 0))
    return rows


def ext_live() -> list:
    """A few seconds for CI: 4 000 items of 2-8 KB in 3 s into -m 8 (flushed as RAM fills), then a
    get of every one in 2 s (read from flash)."""
    rng = random.Random(2824)
    rows = [(t, "set", f"l{i:04d}", rng.randint(2000, 8000), 0) for i, t in enumerate(_spread(0, 4000, 3))]
    rows += [(t, "get", f"l{i:04d}", 0, 0) for i, t in enumerate(_spread(3.5, 4000, 2))]
    return rows


SCENARIOS = {s.name: s for s in (
    Scenario("automove-default", ("-m", "16"), 120, expired_class_then_new_size,
             about="slab_automove=1 (default): pages move from the expired class"),
    Scenario("automove-2", ("-m", "16", "-o", "slab_automove=2"), 120, expired_class_then_new_size,
             about="slab_automove=2: a page moves on each eviction"),
    Scenario("automove-0", ("-m", "16", "-o", "slab_automove=0"), 120, expired_class_then_new_size,
             about="slab_automove=0: pages stay"),
    Scenario("three-size-shift", ("-m", "12"), 120, three_size_shift,
             about="a calcifying shift between three sizes, with gets",
             releases=("1.6.18", "1.6.38", "1.6.45", "1.5.22")),     # 1.5.22: a build of its tag
    Scenario("mixed-ttls", ("-m", "24"), 120, mixed_ttls_with_gets,
             about="TTLs of seconds to a minute with gets: crawler and maintainer reclaim"),
    Scenario("chunked", ("-m", "48"), 60, chunked_items,
             about="chunked items beside small ones"),
    Scenario("moves-no-eviction", ("-m", "256"), 90, pages_move_without_eviction,
             about="no eviction, pages still move to the global pool"),
    Scenario("readme-automove", ("-m", "4"), 60, readme_example,
             about="the automover example of docs/background.md (examples/automove.csv)"),
    Scenario("temporary-ttl", ("-m", "16", "-o", "temporary_ttl=30"), 60, temporary_ttl_beside_permanent,
             about="the temporary LRU: 20 s TTL items never evicted, beside items that never expire",
             releases=("1.6.18",)),      # captured where only the installed 1.6.18 was at hand
    Scenario("ext-issue", ("-m", "64", "-o", _ext("ext-issue")), 50, ext_issue_case,
             about="extstore: 20 000 items of 2-20 KB in 10 s, -m 64, a 1 GB file; every key read back",
             releases=("1.6.18", "1.6.45")),
    Scenario("ext-slow-fill", ("-m", "16", "-o", "ext_page_size=8", "-o", _ext("ext-slow-fill", "64m")), 50,
             ext_slow_fill, about="extstore: a slow paced fill with gets; a 64 MB file of 8 MB pages fills",
             releases=("1.6.18", "1.6.45")),
    Scenario("ext-mixed", ("-m", "16", "-o", "ext_item_size=1024", "-o", _ext("ext-mixed")), 50,
             ext_mixed_sizes, about="extstore: mixed sizes, ext_item_size=1024", releases=("1.6.18", "1.6.45")),
    Scenario("ext-headers-starve", ("-m", "6", "-o", _ext("ext-headers-starve")), 30, ext_headers_starve,
             interval=5, about="extstore: -m 6, header items starve for pages", releases=("1.6.18", "1.6.45")),
    Scenario("ext-age-lowttl", ("-m", "64", "-o", "ext_item_age=5,ext_low_ttl=30", "-o", _ext("ext-age-lowttl")),
             50, ext_age_low_ttl, about="extstore: ext_item_age and ext_low_ttl with RAM to spare",
             releases=("1.6.18", "1.6.45")),
    Scenario("ext-overwrites", ("-m", "8", "-o", "ext_page_size=8", "-o", _ext("ext-overwrites", "64m")), 50,
             ext_overwrites, about="extstore: overwrites fragment flash; compaction", releases=("1.6.18", "1.6.45")),
    Scenario("live-ext", ("-m", "8", "-o", _ext("live-ext", "256m")), 6, ext_live, interval=3,
             about="the short live extstore run in CI", releases=()),
    Scenario("live-short", ("-m", "8"), 55, short_expired_then_new_size,
             about="the short live run in CI",
             releases=("1.6.18", "1.6.38", "1.6.45", "1.6.37")),     # 1.6.37: a build of its tag
    Scenario("reclaim-m16", ("-m", "16"), 100, short_ttl_beside_long_lived,
             about="issue 28: expired-item reclaim, short TTLs beside long-lived items, evicting",
             releases=("1.6.18",)),
    Scenario("reclaim-m64", ("-m", "64"), 100, short_ttl_beside_long_lived,
             about="issue 28: expired-item reclaim (the issue's case)", releases=("1.6.18",)),
    Scenario("reclaim-m256", ("-m", "256"), 100, short_ttl_beside_long_lived,
             about="issue 28: expired-item reclaim, memory to spare", releases=("1.6.18",)),
    Scenario("crawl-to-head", ("-m", "64", "-o", "slab_automove=0"), 70, crawl_to_the_head,
             about="issue 28: how far a crawl walks (crawler.c 446, 607)", releases=("1.6.18",)),
    Scenario("crawl-tocrawl", ("-m", "64", "-o", "slab_automove=0,lru_crawler_tocrawl=150"), 70, crawl_limited,
             about="issue 28: -o lru_crawler_tocrawl, the items a crawl checks per LRU", releases=("1.6.18",)),
    Scenario("reclaim-nocrawler", ("-m", "64", "-o", "no_lru_crawler"), 100, short_ttl_beside_long_lived,
             about="issue 28: expired-item reclaim with the LRU crawler off", releases=("1.6.18",)),
)}


# -- the paced replay ----------------------------------------------------------------

def _uptime(server: MemcachedServer) -> int:
    return int(server.stats()["uptime"])


def measure_tick(server: MemcachedServer, start_uptime: int, wall0: float, second: int) -> dict | None:
    """When the server's clock ticked to ``second`` (its ``uptime`` ``second`` past the tick the workload
    started at): ``{"second", "late"}``, ``late`` the seconds after the workload's ``second`` it was
    first seen, read every 0.5 ms (None: no tick within 3 s).  memcached re-arms its one-second timer
    after each tick has run (1.6.18 memcached.c clock_handler, evtimer_add), and current_time is the
    clock's whole seconds read then, so each tick comes a little after the one before plus a second
    (0.73-1.73 ms a tick here, docs/exactness.md): the model's ``tick_us`` (:func:`tick_us`) places its ticks the same way."""
    while time.monotonic() - wall0 < second + 3:
        now = time.monotonic() - wall0
        if _uptime(server) - start_uptime >= second:
            return {"second": second, "late": round(now - second, 5)}
        time.sleep(0.0005)
    return None


def tick_us(ticks: list) -> int:
    """The model's ``tick_us`` (engines/simulate.py) for runs whose :func:`measure_tick` figures are
    ``ticks`` (None where a run has none: the runs that have one decide; none: a tick each 1 000 000 us):
    the mean lateness a second, the workload's time 0 being a tick.  A run whose ``uptime`` reached the
    second before the workload did (``late`` below 0) counts no ticks: current_time is the clock's whole
    seconds read at each tick, so once the lateness carries the tick past a whole second of the clock, it
    steps by 2 (1.6.18 r01129's fourth run: 870 ms early at 81 s) -- that run measures nothing."""
    seen = [t for t in ticks if t and t["late"] >= 0]
    if not seen:
        return 1_000_000
    return 1_000_000 + round(sum(1e6 * t["late"] / t["second"] for t in seen) / len(seen))


def _snapshot(server: MemcachedServer) -> dict:
    return {"stats": server.stats(), "slabs": server.stats("slabs"), "items": server.stats("items")}


@dataclass
class Capture:
    scenario: str
    args: list
    version: str
    interval: int
    boot: float                 # seconds the server had run when the workload's time 0 began
    workload: list
    snapshots: list = field(default_factory=list)   # {"time", "uptime", "late", "stats", "slabs", "items"}
    tick: dict | None = None    # the server's tick after the last snapshot: {"second", "late"} (measure_tick)

    def __post_init__(self):
        # capture() starts the workload at one of the server's clock ticks, which come at its start + k s
        # (memcached.c clock_handler): the server had run a whole number of seconds at time 0.  The figure
        # stored is the wall time from the server's first answer to that tick (0.86-1.02 s here), which
        # misses the server's own start-up: the whole second nearest it is the server's uptime, and the
        # model places the server's ticks by its fraction (engines/engine.py server_start).
        self.boot = float(round(self.boot))

    def to_json(self) -> dict:
        return self.__dict__


def capture(scenario: Scenario, memcached: str | None = None) -> Capture:
    """Replay ``scenario`` into a fresh memcached on its own clock; the snapshots it took."""
    rows = scenario.build()
    with MemcachedServer(list(scenario.args), memcached=memcached, timeout=10) as server:
        started = time.monotonic()
        first = _uptime(server)
        while _uptime(server) == first:        # wait for a tick: workload time 0 is its start
            time.sleep(0.002)
        wall0 = time.monotonic()
        start_uptime = _uptime(server)
        result = Capture(scenario.name, list(scenario.args), server.version(), scenario.interval,
                         round(wall0 - started, 3), [list(r) for r in rows])
        sock = server._sock
        assert sock is not None
        sock.settimeout(30)
        i, n = 0, len(rows)
        next_snap = scenario.interval
        while True:
            elapsed = time.monotonic() - wall0
            if elapsed >= next_snap and (i >= n or rows[i][0] >= next_snap):
                snap = _snapshot(server)
                snap.update(time=next_snap, uptime=int(snap["stats"]["uptime"]) - start_uptime,
                            late=round(time.monotonic() - wall0 - next_snap, 4))
                result.snapshots.append(snap)
                next_snap += scenario.interval
                if next_snap > scenario.duration:
                    result.tick = measure_tick(server, start_uptime, wall0, snap["time"] + 1)
                    break
                continue
            payload = bytearray()
            ops = []
            while i < n and rows[i][0] <= elapsed and rows[i][0] < next_snap:
                t, op, key, value_size, ttl = rows[i]
                if op == "set":
                    payload += b"set %s 0 %d %d\r\n%s\r\n" % (key.encode(), ttl, value_size, b"v" * value_size)
                elif op == "get":
                    payload += b"get %s\r\n" % key.encode()
                elif op == "delete":
                    payload += b"delete %s\r\n" % key.encode()
                elif op == "touch":
                    payload += b"touch %s %d\r\n" % (key.encode(), ttl)
                ops.append(op)
                i += 1
            if payload:
                server._send(bytes(payload))
                for op in ops:
                    line = server._readline()
                    while op == "get" and line != "END":
                        if line.startswith("VALUE "):
                            _read_value(server, int(line.split()[3]))
                        line = server._readline()
                continue
            due = min(rows[i][0], next_snap) if i < n else next_snap
            wait = due - (time.monotonic() - wall0)
            if wait > 0:
                time.sleep(min(wait, BATCH))
    _remove_flash_files(scenario.args)
    return result


def _remove_flash_files(args) -> None:
    """The extstore files a scenario's server wrote (``ext_path=FILE:SIZE``), once it has stopped."""
    import os

    for word in ",".join(args).split(","):
        if word.startswith("ext_path="):
            try:
                os.remove(word[len("ext_path="):].split(":")[0])
            except OSError:
                pass


def _read_value(server: MemcachedServer, size: int) -> None:
    """Skip a value of ``size`` bytes and its CRLF."""
    need = size + 2
    while len(server._buf) < need:
        chunk = server._sock.recv(max(65536, need - len(server._buf)))
        if not chunk:
            raise ConnectionError("memcached closed the connection")
        server._buf += chunk
    del server._buf[:need]


def save(result: Capture, directory: Path = DATA) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{result.scenario}-{result.version}.json.gz"
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as out:
        json.dump(result.to_json(), out, separators=(",", ":"))
    return path


def stored(directory: Path = DATA) -> list[str]:
    """The stored runs, ``scenario-version`` each."""
    return sorted(p.name.removesuffix(".json.gz") for p in directory.glob("*.json.gz"))


def load(name: str, directory: Path = DATA) -> Capture:
    """A stored run: ``scenario-version`` (``automove-2-1.6.18``)."""
    with gzip.open(directory / f"{name}.json.gz", "rt", encoding="utf-8") as src:
        return Capture(**json.load(src))


def live_capture(name: str) -> dict:
    """A paced run of scenario ``name`` on the installed memcached, as a job of tests/ahead.py: the
    capture as JSON, or why there is none (``missing``: no server; ``other``: not 1.6.18, which the
    live scenarios are sized for).  A loaded machine can make a snapshot late: it runs once more.

    The server's threads keep the wall clock's time, and in CI the rest of the suite shares the two
    cores: where it may (root, or CAP_SYS_NICE), the job raises its own priority before it starts the
    server, so memcached's threads and the client that paces the workload inherit it."""
    import os

    from memcached_server import find_memcached, server_version

    try:
        os.nice(-5)
    except OSError:                     # not allowed here: the run keeps the suite's priority
        pass
    path = find_memcached()
    if path is None:
        return {"missing": "memcached not found (put memcached on PATH)"}
    if server_version(path) != "1.6.18":
        return {"other": server_version(path)}
    for attempt in range(2):
        run = capture(SCENARIOS[name], memcached=path)
        if max(s["late"] for s in run.snapshots) < 0.05:
            break
    return run.to_json()
