"""The temporary LRU (``-o temporary_ttl=N``): which items go to TEMP, against the source and a live 1.6.18.

1.6.18 items.c 325-327: ``exptime - current_time <= settings.temporary_ttl`` in unsigned
arithmetic -- a TTL equal to N is temporary, N + 1 is not, and an item that never expires
(``exptime`` 0) is not.  The long comparison with a real server is the paced ``temporary-ttl``
scenario (tests/fidelity/test_paced.py); this one checks the boundary live in well under a second.
"""

from __future__ import annotations

from memcached_server import MemcachedServer, require_memcached

from slabcalc import configure, load_profile
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.lru import TEMP
from slabcalc.engines.simulate import SET

TTLS = {"short": 1, "at": 30, "over": 31, "never": 0}


def _engine(ttls=TTLS):
    settings = configure(load_profile("1.6.18"), ["-m", "8", "-o", "temporary_ttl=30"])
    engine = Engine(settings, background_for(settings))
    engine.run([(0.0, SET, name, len(name), 100, ttl, 0) for name, ttl in ttls.items()])
    return engine


def test_a_ttl_up_to_temporary_ttl_links_in_temp_and_no_other():
    engine = _engine()
    assert {name for name, item in engine.index.items() if item.seg == TEMP} == {"at", "short"}


def test_the_maintainer_reclaims_an_expired_temp_tail_and_counts_it_reclaimed():
    engine = _engine()
    engine.clock(3.0)                   # "short" expired at 1 s; the maintainer wakes every few ms
    assert "short" not in engine.index and sum(engine.lrus.column("reclaimed")) == 1


def test_a_live_temp_tail_stops_the_reclaim():
    """items.c 1254-1256: at a live TEMP tail lru_pull_tail ends ("Kill the loop"), so an expired
    item linked after a longer-lived one waits (for a get, or the crawler)."""
    engine = _engine({"at": 30, "short": 1})
    engine.clock(3.0)
    assert "short" in engine.index and sum(engine.lrus.column("reclaimed")) == 0


def test_the_installed_memcached_puts_the_same_items_in_temp():
    path = require_memcached()
    with MemcachedServer(["-m", "8", "-o", "temporary_ttl=30"], memcached=path) as server:
        for name, ttl in TTLS.items():
            server.set(name, b"v" * 100, exptime=ttl)
        items = {k.split(":")[2]: int(v) for k, v in server.stats("items").items() if k.count(":") == 2}
    model = _engine()
    assert items["number_temp"] == sum(item.seg == TEMP for item in model.index.values()) == 2
    assert items["number"] == len(model.index) == 4
