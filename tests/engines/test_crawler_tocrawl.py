"""``-o lru_crawler_tocrawl=N``: the items an auto-expiry crawl checks per LRU (issue 28 items 4 and 5).

1.6.18 items.c 1549-1563: a run's limit is the size of its longest LRU, lowered
to N when N is below it; crawler.c 607 and 446 then check that many items of
each LRU from its tail.  So each LRU crawled has min(its size, N) items checked.
The paced capture ``crawl-tocrawl-1.6.18`` (tests/paced.py ``crawl_limited``,
70 s) holds the server's figures; the option's parsing is checked live against
the installed memcached, which exits at once on a value it refuses.
"""

from __future__ import annotations

import paced
import pytest
from helpers import suboption_refusals_differ
from memcached_server import MemcachedServer, require_memcached

from slabcalc import configure, load_profile
from slabcalc.engines.background import background_for
from slabcalc.engines.simulate import SET, simulate
from slabcalc.model.settings import Refused


def _replay(capture, args):
    config = configure(load_profile(capture.version), args)
    ops = [(t, SET, key, len(key), value, ttl, 0) for t, _, key, value, ttl in capture.workload]
    sim = simulate(config, ops, boot=capture.boot, at=[60, 70])
    return [(t, state.totals.crawler_reclaimed, state.totals.curr_items,
             sorted(r.crawler_reclaimed for r in state.classes if r.crawler_reclaimed))
            for t, state in sim.snapshots]


def _server(capture):
    out = []
    for snap in capture.snapshots:
        if snap["time"] in (60, 70):
            per_class = sorted(int(v) for k, v in snap["items"].items()
                               if k.endswith(":crawler_reclaimed") and int(v))
            out.append((snap["time"], int(snap["stats"]["crawler_reclaimed"]), int(snap["stats"]["curr_items"]),
                        per_class))
    return out


def test_a_crawl_checks_the_tocrawl_items_nearest_each_tail_as_the_server_does():
    # One class's COLD LRU holds 100 items without a TTL at its tail and 100 expired ones before
    # its head; another's one without a TTL and 40 expired.  With tocrawl=150 the crawl at 66 s
    # checks 150 items of the first (50 expired freed) and all 41 of the second (40 freed).
    capture = paced.load("crawl-tocrawl-1.6.18")
    server = _server(capture)
    assert server == [(60, 0, 241, []), (70, 90, 151, [40, 50])]
    assert _replay(capture, capture.args) == server
    # the option matters here: without it every expired item goes
    assert _replay(capture, ["-m", "64", "-o", "slab_automove=0"])[-1] == (70, 140, 101, [40, 100])


def test_tocrawl_is_read_as_memcached_reads_it():
    config = configure(load_profile("1.6.18"), ["-m", "64"])
    assert background_for(config, []).lru_crawler_tocrawl == 0
    assert background_for(config, ["lru_crawler_tocrawl=150"]).lru_crawler_tocrawl == 150
    # strtoul is 64-bit on x86_64 and the setting a uint32_t: accepted and truncated
    assert background_for(config, ["lru_crawler_tocrawl=5000000000"]).lru_crawler_tocrawl == 705032704
    for word, message in (("lru_crawler_tocrawl", "Missing lru_crawler_tocrawl value"),
                          ("lru_crawler_tocrawl=12x", "lru_crawler_tocrawl takes a numeric 32bit value"),
                          ("lru_crawler_tocrawl=-1", "lru_crawler_tocrawl takes a numeric 32bit value")):
        with pytest.raises(Refused, match=message):
            background_for(config, [word])


def test_the_installed_memcached_reads_tocrawl_the_same_way():
    path = require_memcached()
    assert suboption_refusals_differ(["lru_crawler_tocrawl", "lru_crawler_tocrawl=12x", "lru_crawler_tocrawl=-1"],
                                     path) == []
    with MemcachedServer(["-m", "64", "-o", "lru_crawler_tocrawl=5000000000"], memcached=path) as server:
        assert int(server.stats("settings")["lru_crawler_tocrawl"]) == 705032704
