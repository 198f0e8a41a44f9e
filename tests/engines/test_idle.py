"""Idle stretches jumped over (engines/idle.py) give what stepping every wake-up gives, counter by counter.

The property test replays random small workloads (sets, gets, deletes, touches;
TTLs from none to a day; gaps from none to a quarter of an hour) through two
engines, one jumping over idle seconds and one stepping every wake-up
(``fast_forward=False``), and requires the same results, every class and
total, every timeline row and every snapshot, and the same state left for
later requests (items, the threads' schedules, the automover's window).
``-f 4`` keeps the class table to 7 classes, so stepping a quarter of an hour
costs little; the crawler's longest wait is cut from an hour to two minutes,
so the crawls reach their steady cycle -- the one the jumps over whole cycles
skip -- within the workloads' gaps (the rules do not depend on the constant's
value).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from slabcalc import configure, load_profile
from slabcalc.engines.background import background_for
from slabcalc.engines.crawler import Crawler
from slabcalc.engines.engine import Engine
from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH

SERVERS = [
    ("1.6.18", []),
    ("1.6.18", ["-o", "slab_automove=2"]),
    ("1.6.18", ["-o", "slab_automove_window=3"]),
    ("1.6.18", ["-o", "no_lru_crawler"]),
    ("1.6.18", ["-o", "hot_max_factor=1.0,warm_max_factor=0.5"]),
    ("1.6.45", []),
    ("1.6.45", ["-o", "slab_automove=2,slab_automove_window=4"]),
    ("1.5", []),
    ("1.4.30", ["-o", "lru_maintainer,lru_crawler"]),
    ("1.6.18", ["-o", "temporary_ttl=400"]),          # the TEMP LRU: its expired tails are events too
    ("1.6.18", ["-o", "temporary_ttl=30,slab_automove=2"]),
    ("1.6.18", ["-o", "lru_crawler_tocrawl=2"]),       # a crawl checks the 2 items nearest each tail
    # 1.6.30+: the maintainer's longest sleep is 999 999 us (idle.py _skip_drift); 1.6.30-1.6.33 run
    # the automover on the maintainer, 1.6.34+ on the page mover's thread
    ("1.6.30", []),
    ("1.6.30", ["-o", "no_lru_crawler"]),
    ("1.6.45", ["-o", "no_lru_crawler"]),
    ("1.6.45", ["-o", "lru_crawler_tocrawl=2,slab_automove=2"]),
    ("1.6.45", ["-o", "hot_max_factor=3,warm_max_factor=1000"]),    # past 2: ages still inside rel_time_t
]
SIZES = [40, 300, 1500, 6000, 30000, 200000, 700000]      # a class each with -f 4; the last chunked
TTLS = [0, 0, 1, 5, 30, 90, 400, 4000, 86400]


def engine(release, args, fast_forward, boot=0.0, crawl_max_wait=120, share=1.0):
    config = configure(load_profile(release), ["-m", "2", "-f", "4"] + args)
    bg = background_for(config)
    constants = dict(bg.rules.constants, crawl_max_wait=crawl_max_wait)
    bg = replace(bg, rules=replace(bg.rules, constants=constants))
    return Engine(config, bg, boot=boot, fast_forward=fast_forward, share=share)


def replay(release, args, ops, fast_forward, boot=0.0, every=None, at=(), **kw):
    """The results, the snapshots, and the state the threads and the items are left in."""
    e = engine(release, args, fast_forward, boot, **kw)
    timeline = e.run(ops, every=every, at=at)
    return e.results(None, timeline), e.snapshots, state(e)


def state(e):
    """What later requests would meet: every item's place and times, the threads' schedules, the
    automover's window."""
    items = sorted((i.key, i.cls, i.seg, i.time, i.exptime, i.fetched, i.active) for i in e.index.values())
    threads = tuple(actor.idle_key(0) for actor in e.actors)
    maintainer = getattr(e, "maintainer", None)
    crawler = maintainer and maintainer.crawler
    # the maintainer's automover, or the page mover's (1.6.34+: the maintainer's is None)
    automover = next((a.automover for a in e.actors if getattr(a, "automover", None) is not None), None)
    if automover is not None:
        # the sums kept as slots are written (stepped or skipped) are the window's: the default
        # automover's slots [age, dirty, ratio, seen], extstore's [age, dirty, excess]
        last = "excess_sum" if hasattr(automover, "excess_sum") else "seen_sum"
        for c, window in enumerate(automover.window):
            kept = automover.age_sum[c], automover.dirty_sum[c], getattr(automover, last)[c]
            assert kept == tuple(sum(slot[i] for slot in window) for i in (0, 1, 2 if last == "excess_sum" else 3)), c
            if hasattr(automover, "gained_sum"):
                assert automover.gained_sum[c] == sum(slot[1] == 2 for slot in window), c
        if getattr(automover, "recent_sum", None) is not None:     # a sample's: the events of its last W/R s
            assert automover.recent_sum == [sum(events for _, events in recent) for recent in automover.recent]
    return (items, threads, crawler and crawler.idle_key(0),
            automover and (automover.cur, automover.window), storage_state(e.storage))


def storage_state(s):
    """-o ext_path: the write thread's clock and schedule (its idle_key leaves them out: Idle takes
    them on in closed form), the compaction thread's, the flash's pages, the header items."""
    if s is None:
        return None
    c, f = s.compactor, s.flash
    return (s.next_wake, s.to_sleep, s.counter, tuple(s.backoff), s.next_maint, s.check_compact, s.slept,
            s.pool_min, c.to_sleep, c.job is None, [(p.version, p.objects, p.bytes_used, p.active) for p in f.pages],
            sorted((key, ref.page, ref.version, ref.offset) for key, ref in s.refs.items()), sorted(s.hdr_size.items()),
            s.counters())


def gaps(longest: int = 900):
    """Gaps between requests: none, under 3 s, minutes, up to ``longest`` seconds."""
    spans = [st.just(0.0), st.floats(0, 3, allow_nan=False), st.integers(1, 200).map(float),
             st.integers(200, 900).map(float)]
    if longest > 900:
        spans.append(st.integers(900, longest).map(float))
    return st.one_of(*spans)


@st.composite
def workloads(draw, most: int = 25, keys: int = 12, gets: int = 2, longest: int = 900):
    n = draw(st.integers(1, most))
    t, ops = 0.0, []
    for _ in range(n):
        t = round(t + draw(gaps(longest)), 3)
        op = draw(st.sampled_from([SET, SET, SET] + [GET] * gets + [TOUCH, DELETE]))
        key = f"k{draw(st.integers(0, keys))}"
        size = draw(st.sampled_from(SIZES)) if op == SET else 0
        ops.append((t, op, key, len(key), size, draw(st.sampled_from(TTLS)), 0))
    return ops


@hsettings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(server=st.sampled_from(SERVERS), ops=workloads(), boot=st.sampled_from([0.0, 2.0, 0.25]),
       every=st.sampled_from([None, 60.0]), share=st.sampled_from([1.0, 1.0, 1.0, 0.5]))
def test_jumping_over_idle_seconds_changes_no_counter(server, ops, boot, every, share):
    # share 0.5: a sampled replay (engines/sample.py), whose automover windows read W/R seconds back
    release, args = server
    at = [ops[-1][0] / 2, ops[-1][0] + 300]
    jumped = replay(release, args, ops, True, boot, every, at, share=share)
    stepped = replay(release, args, ops, False, boot, every, at, share=share)
    assert jumped == stepped


def test_an_hour_of_idle_server_is_jumped_over_with_its_expiries_and_crawls():
    # items expire during the idle stretches and are freed there by the crawler or the maintainer;
    # the crawls settle into their cycle (waits at their longest) and are jumped over in whole cycles
    ops = [(0.0, SET, "a", 1, 300, 0, 0), (0.0, SET, "b", 1, 300, 50, 0), (1.0, SET, "c", 1, 300, 700, 0),
           (2.0, SET, "d", 1, 6000, 3000, 0), (1500.0, GET, "a", 1, 0, 0, 0), (2000.0, TOUCH, "a", 1, 0, 100, 0),
           (2000.0, SET, "e", 1, 30000, 0, 0), (3600.0, GET, "e", 1, 0, 0, 0)]
    for release, args in [SERVERS[0], SERVERS[5], SERVERS[7]]:
        jumped = replay(release, args, ops, True, every=600.0, at=[1000.0])
        assert jumped == replay(release, args, ops, False, every=600.0, at=[1000.0]), release
        totals = jumped[0].totals
        # b and c, behind the live COLD tail a, are freed by crawls (c at the head of the longest LRU:
        # a crawl reaches it, crawler.c 607 and 446, as the paced capture crawl-to-head-1.6.18 shows);
        # a and d expire at their LRU's tail: the maintainer frees them.  e is left.
        assert (totals.crawler_reclaimed, totals.reclaimed, totals.curr_items) == (2, 2, 1), release


def test_a_jump_past_a_crawl_due_is_caught(monkeypatch):
    # The planted fault: the crawler says it has nothing due for 1000 s more than it has.  Stepped,
    # the crawls run at current_time 62, 129, then every 127 s (wait 120 + 5, checked 1 s after the
    # crawl, due 1 s past it): ..., 637, 764.  x (set at 662 with a TTL of 100: exptime 762) sits
    # between two live COLD items, where only a crawl frees it: the crawl at 764 does, and the get
    # at 778 misses.  Jumping with the fault, the crawls after 62 wait for the request at 662 and
    # then run 127 s apart from there: none between 762 and 778, and the get finds x expired.
    ops = [(0.0, SET, "a", 1, 300, 0, 0), (0.0, SET, "b", 1, 300, 30, 0), (0.0, SET, "c", 1, 300, 0, 0),
           (600.0, GET, "a", 1, 0, 0, 0), (600.0, SET, "x", 1, 300, 100, 0), (600.0, SET, "y", 1, 300, 0, 0),
           (716.0, GET, "x", 1, 0, 0, 0)]
    stepped = replay("1.6.18", [], ops, False)
    assert replay("1.6.18", [], ops, True) == stepped
    assert (stepped[0].totals.crawler_reclaimed, stepped[0].totals.get_expired) == (2, 0)     # b and x
    due_through = Crawler.due_through
    monkeypatch.setattr(Crawler, "due_through", lambda self: due_through(self) + 1000)
    faulty = replay("1.6.18", [], ops, True)
    assert (faulty[0].totals.crawler_reclaimed, faulty[0].totals.get_expired) == (1, 1)
    assert faulty != stepped


def test_a_jump_over_crawl_cycles_stops_where_an_item_within_tocrawl_nears_expiry(monkeypatch):
    # -o lru_crawler_tocrawl=2: a crawl checks the 2 items nearest each tail (a, b), never c or e
    # (items.c 1561-1563; the crawl-tocrawl paced capture).  The crawls settle into their cycle
    # while b's expiry is over an hour away; the jump over whole cycles must stop an hour before it
    # (b then counts in the histogram, and a crawl frees it once expired), not at e's, which no crawl
    # reaches.  The planted fault reads the 2 items nearest the head instead.
    ops = [(0.0, SET, "a", 1, 300, 0, 0), (0.0, SET, "b", 1, 300, 3900, 0), (0.0, SET, "c", 1, 300, 0, 0),
           (0.0, SET, "e", 1, 300, 20000, 0), (4100.0, GET, "x", 1, 0, 0, 0)]
    args = ["-o", "lru_crawler_tocrawl=2"]
    stepped = replay("1.6.18", args, ops, False)
    assert replay("1.6.18", args, ops, True) == stepped
    assert (stepped[0].totals.crawler_reclaimed, stepped[0].totals.curr_items) == (1, 3)     # b

    def from_the_head(self):
        return min((item.exptime for cls, seg in self.lrus for item in self.store.lrus.q[seg][cls].values()[-2:]
                    if item.exptime), default=math.inf) - 3600

    monkeypatch.setattr(Crawler, "quiet_through", from_the_head)
    faulty = replay("1.6.18", args, ops, True)
    assert (faulty[0].totals.crawler_reclaimed, faulty[0].totals.curr_items) == (0, 4)


class _Counted:
    """An actor whose wake-ups are counted (everything else is the actor's own)."""

    def __init__(self, actor, steps):
        self.actor, self.steps = actor, steps

    def __getattr__(self, name):
        return getattr(self.actor, name)

    def step(self):
        self.steps.append(1)
        self.actor.step()


@pytest.mark.parametrize("gap", [7 * 86400.0, 2_000_000_000.0])
def test_a_week_or_sixty_years_of_idle_server_is_a_few_hundred_wake_ups(gap):
    # not timed (benchmarks/idle_bench.py prints the figures): stepped, a week is 600 000 wake-ups
    # of the maintainer; jumping, a few hundred (the crawl waits growing to an hour, a crawl cycle
    # seen twice), and 63 years (near the replay's 31-bit clock: model/ops.py) no more
    ops = [(0.0, SET, "a", 1, 100, 0, 0), (1.0, SET, "b", 1, 100, 100000, 0), (gap, GET, "a", 1, 0, 0, 0)]
    config = configure(load_profile("1.6.18"), [])
    e = Engine(config, background_for(config))
    steps: list = []
    e.actors = [_Counted(actor, steps) for actor in e.actors]      # a compiled actor takes no new attributes
    e.run(ops)
    assert e.results(None).totals.hits == 1
    assert len(steps) < 2_000


@pytest.mark.parametrize("server", [("1.6.30", []), ("1.6.30", ["-o", "no_lru_crawler"]), ("1.6.45", []),
                                    ("1.6.45", ["-o", "no_lru_crawler"]), ("1.6.45", ["-o", "slab_automove=2"])])
def test_minutes_of_idle_server_with_a_sub_second_maintainer_sleep_are_jumped_exactly(server):
    # 1.6.30+ (items.c 1584, 1.6.45 1544): the maintainer sleeps at most 999 999 us, so its wake-ups
    # slide against the seconds; the jumps (whole periods of each thread, the per-second checks
    # counted) must leave what stepping leaves, items expiring and crawled in the gaps included
    release, args = server
    ops = [(0.0, SET, "a", 1, 300, 0, 0), (0.0, SET, "b", 1, 300, 50, 0), (1.0, SET, "c", 1, 300, 700, 0),
           (2.0, SET, "d", 1, 6000, 3000, 0), (1500.0, GET, "a", 1, 0, 0, 0), (2000.0, TOUCH, "a", 1, 0, 100, 0),
           (2000.0, SET, "e", 1, 30000, 0, 0), (2400.5, GET, "e", 1, 0, 0, 0), (3900.0, GET, "e", 1, 0, 0, 0)]
    jumped = replay(release, args, ops, True, every=600.0, at=[1000.0])
    assert jumped == replay(release, args, ops, False, every=600.0, at=[1000.0])
    assert jumped[0].totals.hits == 3      # a (no TTL), e twice: nothing evicted in -m 2


@pytest.mark.parametrize("release", ["1.6.30", "1.6.45"])
@pytest.mark.parametrize("gap", [7 * 86400.0, 2_000_000_000.0])
def test_a_week_of_idle_server_past_1_6_30_is_a_few_thousand_looks(release, gap, monkeypatch):
    # not timed: stepped, a week is 605 000 wake-ups of the maintainer (and as many of 1.6.45's
    # page mover); jumping, each is looked at before it is stepped (Idle.skip), and few are
    from slabcalc.engines.idle import Idle

    looks: list = []
    skip = Idle.skip
    monkeypatch.setattr(Idle, "skip", lambda self, wake, t_us: looks.append(1) or skip(self, wake, t_us))
    ops = [(0.0, SET, "a", 1, 100, 0, 0), (1.0, SET, "b", 1, 100, 100000, 0), (gap, GET, "a", 1, 0, 0, 0)]
    config = configure(load_profile(release), [])
    e = Engine(config, background_for(config))
    e.run(ops)
    assert e.results(None).totals.hits == 1
    assert len(looks) < 5_000


@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_an_age_past_rel_time_t_is_refused_at_the_same_second_jumped_or_stepped(release):
    # -o warm_max_factor=1e7: cold_age x 1e7 leaves rel_time_t (2^32 - 1) once the COLD tail is
    # 430 s old; a jump must not pass that juggle (Maintainer.juggle_quiet_through stops before it)
    from slabcalc.errors import AgeUndefined

    ops = [(0.0, SET, "a", 1, 300, 0, 0), (0.0, SET, "b", 1, 300, 0, 0), (900.0, GET, "a", 1, 0, 0, 0)]
    said = []
    for fast in (True, False):
        with pytest.raises(AgeUndefined) as caught:
            replay(release, ["-o", "warm_max_factor=1e7"], ops, fast)
        said.append(str(caught.value))
    assert said[0] == said[1]
    assert f"memcached {release} computes warm_age = cold_age x warm_max_factor = 430 x 1e+07" in said[0]


def test_a_temporary_items_expiry_is_an_event_of_the_maintainer():
    # -o temporary_ttl: t (TTL 30) lives in TEMP, where only the maintainer's TEMP pulls free it once
    # expired (the crawler is off); a snapshot at 40 s sees it gone, jumped or stepped
    ops = [(0.0, SET, "t", 1, 300, 30, 0), (0.0, SET, "p", 1, 300, 0, 0), (300.0, GET, "t", 1, 0, 0, 0)]
    args = ["-o", "temporary_ttl=60,no_lru_crawler"]
    stepped = replay("1.6.18", args, ops, False, at=[40.0])
    assert replay("1.6.18", args, ops, True, at=[40.0]) == stepped
    (when, at_40), = stepped[1]
    assert when == 40.0 and at_40.totals.curr_items == 1 and at_40.totals.reclaimed == 1     # t is gone
    assert (stepped[0].totals.reclaimed, stepped[0].totals.get_expired) == (1, 0)


def test_a_time_past_the_replays_clock_is_refused_not_wrapped():
    # an item keeps its times in 31 bits (engines/lru.py): the last second the clock takes is read,
    # the next refused by the engine (the readers refuse it first, naming the row)
    from slabcalc.errors import SimulationError
    from slabcalc.model.ops import TIME_MAX, UPTIME_MAX

    config = configure(load_profile("1.6.18"), [])
    last = float(TIME_MAX - 1)
    e = Engine(config, background_for(config), boot=UPTIME_MAX)
    e.run([(0.0, SET, "a", 1, 100, 0, 0), (last, SET, "b", 1, 100, 10**12, 0), (last, GET, "b", 1, 0, 0, 0)])
    assert e.results(None).totals.hits == 1 and e.index["b"].exptime == (1 << 31) - 1
    with pytest.raises(SimulationError, match="past 2080374783 s"):
        Engine(config, background_for(config)).run([(float(TIME_MAX), SET, "a", 1, 100, 0, 0)])
    with pytest.raises(SimulationError, match="uptime"):
        Engine(config, background_for(config), boot=UPTIME_MAX + 1)


# -- -o ext_path: the storage write thread (engines/extstore_idle.py) -------------------------------
# Pages of 2 MB (1.6.45 refuses less) in a 64 MB file; -m 2 keeps the global pool at its watermark
# (2 pages: slab_automove_extstore.c 128-130), so items of ext_item_size or more are flushed early;
# ext_item_age writes them by age, a short ext_max_sleep brings the sleep to its cap within the
# gaps.  1.6.21 runs 1.6.20's write thread with the timer-woken compaction thread, 1.6.28 the
# compaction woken by the write thread's sleeps, 1.6.45 the automover on the mover thread.
EXT = "ext_page_size=2,ext_wbuf_size=2,ext_path=/tmp/slabcalc-idle:64m"
EXT_SERVERS = [
    ("1.6.18", ["-o", EXT]),
    ("1.6.18", ["-o", EXT + ",ext_item_age=30"]),
    ("1.6.18", ["-m", "16", "-o", EXT + ",ext_item_age=100,ext_max_sleep=20000"]),
    ("1.6.21", ["-o", EXT + ",ext_item_age=60"]),
    ("1.6.28", ["-o", EXT]),
    ("1.6.28", ["-m", "16", "-o", EXT + ",ext_item_age=30,ext_max_sleep=20000"]),
    ("1.6.45", ["-o", EXT]),
    ("1.6.45", ["-o", EXT + ",ext_item_age=30"]),
    ("1.6.45", ["-m", "16", "-o", EXT + ",ext_item_age=100,ext_max_sleep=20000"]),
    ("1.6.45", ["-m", "16", "-o", EXT + ",ext_compact_under=32,ext_drop_unread,slab_automove_window=4"]),
    # a flash of 4 pages: pages fill, are compacted and evicted between requests
    ("1.6.18", ["-m", "8", "-o", EXT.replace("64m", "8m") + ",ext_item_age=1,ext_compact_under=3,ext_max_sleep=20000"]),
    ("1.6.45", ["-o", EXT.replace("64m", "8m") + ",ext_item_age=5,ext_compact_under=3,ext_max_frag=0.9"]),
]


@hsettings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(server=st.sampled_from(EXT_SERVERS), ops=workloads(most=12, keys=8, gets=3, longest=4000),
       boot=st.sampled_from([0.0, 2.0, 0.25]))
def test_jumping_over_idle_seconds_with_extstore_changes_no_counter(server, ops, boot):
    release, args = server
    at = [ops[-1][0] / 2, ops[-1][0] + 300]
    jumped = replay(release, args, ops, True, boot, None, at)
    assert jumped == replay(release, args, ops, False, boot, None, at)


DAY = [(0.0, SET, "a", 1, 10, 0, 0), (0.0, SET, "b", 1, 5000, 0, 0), (86400.0, GET, "a", 1, 0, 0, 0)]
HOUR = [op if op[0] == 0.0 else (3600.0, *op[1:]) for op in DAY]


def ext_engine(release, fast_forward, ext="ext_path=/tmp/slabcalc-idle:64m"):
    """The brief's server by default: -m 64 and a flash of one 64 MB page (1.6.18 never writes to
    page 0, extstore.c 343-355: only 1.6.25+ write there)."""
    config = configure(load_profile(release), ["-m", "64", "-o", ext])
    return Engine(config, background_for(config), fast_forward=fast_forward)


@pytest.mark.slow          # stepping the hour: a few seconds each (a day: 25 s; the week test jumps it)
@pytest.mark.parametrize("release", ["1.6.18", "1.6.28", "1.6.45"])
def test_an_hour_of_idle_server_with_extstore_is_jumped_to_the_stepped_counters(release, monkeypatch):
    # the write thread's sleep grows by 1 us a pass (storage.c 647-648 at 1.6.18, 728-729 at
    # 1.6.45): stepped, an hour is some 85 000 of its passes (a day 415 000); jumped, it is taken on in closed form
    # (engines/extstore_idle.py) between the other threads' wake-ups, themselves jumped
    from slabcalc.engines.extstore import Storage

    steps: list = []
    for cls in {type(ext_engine(release, True).storage), Storage}:
        monkeypatch.setattr(cls, "step", lambda self, step=cls.step: steps.append(1) or step(self))
    jumped = ext_engine(release, True)
    jumped.run(HOUR)
    taken = len(steps)
    steps.clear()
    stepped = ext_engine(release, False)
    stepped.run(HOUR)
    assert jumped.results(None) == stepped.results(None)
    assert state(jumped) == state(stepped)
    assert jumped.results(None).totals.hits == 1
    # 1.6.18 steps the 4 500 passes while its sleep is under 5 ms (a class's backoff grows then:
    # storage.c 606-609), the later releases a few hundred near the requests
    assert len(steps) > 80_000 and taken < 6_000, (taken, len(steps))


@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_a_week_of_idle_server_with_extstore_is_a_few_thousand_passes(release, monkeypatch):
    # not timed (benchmarks/idle_bench.py prints the figures): stepped, a week is a million passes
    # of the write thread and 600 000 wake-ups of the others
    from slabcalc.engines.extstore import Storage
    from slabcalc.engines.idle import Idle

    steps: list = []
    for cls in {type(ext_engine(release, True).storage), Storage}:
        monkeypatch.setattr(cls, "step", lambda self, step=cls.step: steps.append(1) or step(self))
    looks: list = []
    skip = Idle.skip
    monkeypatch.setattr(Idle, "skip", lambda self, wake, t_us: looks.append(1) or skip(self, wake, t_us))
    e = ext_engine(release, True)
    e.run([(0.0, SET, "a", 1, 10, 0, 0), (0.0, SET, "b", 1, 5000, 0, 0), (7 * 86400.0, GET, "b", 1, 0, 0, 0)])
    assert e.results(None).totals.hits == 1
    # 1.6.18 steps its first 4 500 passes, its sleep under 5 ms (see the day's test above)
    assert len(steps) < 6_000 and len(looks) < 10_000, (len(steps), len(looks))


AGED = [(0.0, SET, "a", 1, 6000, 0, 0), (0.0, SET, "p", 1, 10, 0, 0), (300.0, GET, "p", 1, 0, 0, 0)]


@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_a_write_thread_moved_a_second_too_far_is_caught(release, monkeypatch):
    # ext_item_age=100: a (set at 0, in COLD) may be written once current_time - its time > 100,
    # by the first pass of second 101 to try its class (1.6.18 storage.c 492-493): its header item
    # is stamped then.  The planted faults: the write thread's passes taken on a second too far
    # (its clock, counter and sleep a second ahead of stepping's), or its quiet bound a second late
    # (a written at 102, its header a second younger)
    from slabcalc.engines import extstore_idle

    ext = EXT + ",ext_item_age=100"
    stepped = ext_engine(release, False, ext)
    stepped.run(AGED)
    jumped = ext_engine(release, True, ext)
    jumped.run(AGED)
    assert jumped.results(None) == stepped.results(None) and state(jumped) == state(stepped)
    header = stepped.index["a"]
    assert stepped.storage.refs["a"].header is header and header.time == stepped.epoch + 101
    catch_up, quiet_through = extstore_idle.catch_up, extstore_idle.quiet_through

    def too_far(s, end):
        n = catch_up(s, end)
        if n:
            s.next_wake += 1_000_000
        return n

    for name, fault in [("catch_up", too_far), ("quiet_through", lambda s: quiet_through(s) + 1)]:
        with monkeypatch.context() as patch:
            patch.setattr(extstore_idle, name, fault)
            faulty = ext_engine(release, True, ext)
            faulty.run(AGED)
        assert state(faulty) != state(stepped), name
        if name == "quiet_through":
            assert faulty.index["a"].time == header.time + 1


FREED = ([(0.0, SET, "p", 1, 10, 0, 0)] + [(0.0, SET, f"k{i}", 4, 1500, 0, 0) for i in range(2000)] + [(1.0, DELETE, f"k{i}", 4, 0, 0, 0) for i in range(2000)]
         + [(600.0, GET, "x", 1, 0, 0, 0)])


@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_the_extstore_automover_gives_pages_to_the_pool_in_an_idle_stretch_as_stepped(release, monkeypatch):
    # 2000 items of 1500 bytes set then deleted (p stays, its COLD tail ageing): their class holds pages of free chunks, which the
    # extstore automover gives to the global pool once its window has come clean of the pages
    # gained (1.6.18 slab_automove_extstore.c 186-201; 1.6.45 164-212) -- within a stretch the
    # threads jump over (ExtstoreAutomover.quiet_runs bounds the jump).  The planted fault: the
    # runs skipped write their slots with p's age a second off
    from slabcalc.engines.extstore_automove import ExtstoreAutomover

    args = ["-m", "16", "-o", EXT]
    jumped = replay(release, args, FREED, True)
    stepped = replay(release, args, FREED, False)
    assert jumped == stepped
    assert stepped[0].totals.pages_moved >= 9
    skip = ExtstoreAutomover.skip
    monkeypatch.setattr(ExtstoreAutomover, "skip", lambda self, first, runs: skip(self, first + 1, runs))
    assert replay(release, args, FREED, True) != stepped


def test_the_write_threads_closed_forms_are_its_passes_one_by_one():
    # the sleeps s, s+1, ... up to the cap, and check_compact taking ten times each (1.6.45
    # storage.c 722-726), against the passes taken one at a time
    import random

    from slabcalc.engines.extstore_idle import _check_compact, _sleeps

    rng = random.Random(7)
    for _ in range(3000):
        page = rng.choice([77, 5000, 1 << 20, 2 << 20])
        cap = rng.choice([1, 5, 1000, 20000, 1_000_000, rng.randint(1, 3000)])
        first = rng.randint(1, cap)
        left, n = rng.randint(0, page), rng.choice([0, 1, 2, rng.randint(0, 3000)])
        slept, expected = 0, left
        for i in range(n):
            slept += min(first + i, cap)
            expected -= 10 * min(first + i, cap)
            if expected < 0:
                expected = page
        assert _sleeps(first, cap, n) == slept
        assert _check_compact(left, first, cap, n, page) == expected, (left, first, cap, n, page)


def test_ext_max_sleep_0_is_refused_not_replayed_forever():
    # with ext_max_sleep=0 memcached's write thread sleeps 0 us a pass (1.6.18 storage.c 598-599, 647):
    # stepped, a replay's clock would never reach the next request
    from slabcalc.errors import SimulationError

    config = configure(load_profile("1.6.45"), ["-m", "64", "-o", "ext_path=/tmp/slabcalc-idle:64m,ext_max_sleep=0"])
    with pytest.raises(SimulationError, match="ext_max_sleep=0"):
        Engine(config, background_for(config)).run(HOUR)
