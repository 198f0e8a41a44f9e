"""Four real paced runs of Debian's memcached 1.6.18 that the model missed (issue 38, "short TTLs").

The runs in ``tests/data/fidelity/`` (from ``shared/fidelity/1.6.18-debian``, each captured twice;
keys renamed to 32-digit numbers of the same length, one name a key) were sent as bursts: each
workload second's operations pipelined at that second, the server started 0.5 s before second 0, a
checkpoint ``N`` taken right after second ``N``'s operations.  Two rules made the misses:

- memcached's clock ticks at the server's start + k s (memcached.c clock_handler), half a second into
  each burst here; the model put its ticks on whole seconds of workload time (``round(boot)``), on
  the bursts.  Items then expired at the burst that should reuse their chunks, not half a second
  before it: s7_bigm's class 12 held 39 pages where both real runs held 37, and t4_nocrawler stored
  686 items more (engines/engine.py ``server_start``).
- ``simulate --every``'s rows were taken at the last operation before a boundary, without the
  background work up to it: read off the command line, the model held 4-13 % more items than the
  server (engines/readout.py ``timeline_rows``).

What is left of the family is not the model's: who frees an item that expired at the tick before a
crawl, the crawler or the maintainer, is a race the server runs differently run for run (below).
``t3_shortttl`` and ``s4_ttlmix``, whose two runs differed on it beyond the tolerance, were replayed a
third time (``*_third.json``, scripts/replay_bursts.py), as issue 38 asks of such shapes.

A figure agrees as the paced runs' do (tests/fidelity/test_paced.py), and as issue 38 counts them: within the
tolerance of one of the real runs, or between them.
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
import test_paced
from helpers import run

from slabcalc import configure, load_profile
from slabcalc.engines.simulate import simulate

DATA = Path(__file__).resolve().parents[1] / "data" / "fidelity"
RUNS = {"t3_shortttl": ["-m", "64"], "t4_nocrawler": ["-m", "16", "-o", "no_lru_crawler"],
        "s4_ttlmix": ["-m", "32"], "s7_bigm": ["-m", "256"]}
BOOT = 0.5              # the server started half a second before second 0
AFTER = 0.2             # a checkpoint: right after its second's operations, before the next tick


def _real(name: str) -> list[dict]:
    """Every real run of ``name``: the two captured, and a third where those two differ (issue 38's rule)."""
    return [json.loads((DATA / f"{name}_{which}.json").read_text())["checkpoints"]
            for which in ("real", "second", "third") if (DATA / f"{name}_{which}.json").exists()]


@functools.cache
def _replay(name: str, boot: float = BOOT):
    with gzip.open(DATA / f"{name}_workload.csv.gz", "rt") as src:
        ops = [(float(r["time"]), test_paced.OPS[r["op"]], r["key"], len(r["key"]), int(r["value_size"] or 0),
                int(r["ttl"] or 0), 0) for r in csv.DictReader(src)]
    at = [int(n) + AFTER for n in sorted(_real(name)[0], key=int)]
    return simulate(configure(load_profile("1.6.18"), RUNS[name]), ops, boot=boot, at=at)


def _snapshot(checkpoint: dict) -> dict:
    """A checkpoint in the form tests/fidelity/test_paced.py's ``differences`` reads."""
    slabs = {f"{c}:total_pages": pages for c, pages in checkpoint["pages"].items()}
    # the runs kept no chunks_per_page: 1 allows no page's worth of items in flight where pages differ
    slabs.update({f"{c}:chunks_per_page": 1 for c in checkpoint["pages"]})
    return {"stats": {"slab_reassign_rescues": None, **checkpoint["stats"]}, "slabs": slabs}


FIGURE = re.compile(r"^(.*): server (-?\d+), model (-?\d+)$")


def misses(name: str, boot: float = BOOT) -> list[str]:
    """The figures outside the tolerance of every real run and not between them, at every checkpoint."""
    runs, sim = _real(name), _replay(name, boot)
    out = []
    for (when, state), n in zip(sim.snapshots, sorted(runs[0], key=int)):
        found = [{FIGURE.match(d).group(1): d for d in test_paced.differences(_snapshot(r[n]), state)}
                 for r in runs]
        for figure in set.intersection(*(set(f) for f in found)):
            servers = [int(FIGURE.match(f[figure]).group(2)) for f in found]
            model = int(FIGURE.match(found[0][figure]).group(3))
            if not min(servers) <= model <= max(servers):
                out.append(f"t={n}: {figure}: servers {' and '.join(map(str, servers))}, model {model}")
    return sorted(out)


@pytest.mark.parametrize("name", ["t4_nocrawler", "s7_bigm"])
def test_the_model_agrees_with_the_server_at_every_checkpoint(name):
    assert misses(name) == []


def test_with_the_ticks_on_the_bursts_the_model_misses():
    # the rule the two runs above hold: a start rounded to a whole second puts the ticks on the bursts
    assert "t=20: class 12 pages: servers 37 and 37, model 39" in misses("s7_bigm", boot=0.0)
    assert any("total_items" in m for m in misses("t4_nocrawler", boot=0.0))


# -- who frees an expired item: the crawler or the maintainer ------------------------------------
# At each crawl the crawler and the maintainer race for the items that expired at the tick before
# it.  The maintainer checks the crawler's schedule once a second of current_time, after the juggles
# of the classes due at that wake-up (1.6.18 items.c 1633-1672); a class not due then keeps the
# second of items that just expired at its COLD tail until its own wake-up, a few ms to tens of ms
# later.  The crawl, started at the check, links its cursor at each LRU's tail (crawler.c 613) and
# frees every expired item it passes (crawler.c 197-213), while the maintainer's pulls stop at a
# cursor at the tail (items.c 1126-1131): so a crawl frees either that whole second
# (crawler_reclaimed) or, when the class was juggled first, none of it (reclaimed).  Which wake-up
# comes first after the tick is sub-millisecond timing: run for run the server splits the same items
# differently (t3_shortttl's crawler_reclaimed at t=110: 1 345, 2 693 and 1 353 in three runs;
# s4_ttlmix's at t=150: 2 215, 3 121 and 2 299), while the sum, the items that left, agrees to a few
# items.  The model's split is one draw of that race; the sum is held.

# items: test_paced's floor for reclaimed, without its 5 % (the sum is steadier than its parts): the
# real runs' sums are at most 15 apart where their items expired in the same seconds (s4_ttlmix t=40-60
# and t4_nocrawler from t=50: one run freed a burst's items a second apart, 48-439)
FREED_FLOOR = 50


def _freed(stats: dict) -> int:
    """The expired items the background freed, by tail pulls (``reclaimed``) and by the crawler."""
    return int(stats["reclaimed"]) + int(stats["crawler_reclaimed"])


def freed_misses(name: str, boot: float = BOOT) -> list[str]:
    """The checkpoints where the model's freed items are over FREED_FLOOR from every real run, not between."""
    runs, sim = _real(name), _replay(name, boot)
    out = []
    for (when, state), n in zip(sim.snapshots, sorted(runs[0], key=int)):
        servers = [_freed(r[n]["stats"]) for r in runs]
        model = state.totals.reclaimed + state.totals.crawler_reclaimed
        if not (min(servers) <= model <= max(servers) or any(abs(model - x) <= FREED_FLOOR for x in servers)):
            out.append(f"t={n}: freed: servers {' and '.join(map(str, servers))}, model {model}")
    return out


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_expired_items_leave_the_model_when_they_leave_the_server(name):
    assert freed_misses(name) == []


def test_with_the_ticks_on_the_bursts_the_expired_items_leave_late():
    # the comparison can fail: with the server's start rounded to a whole second (its ticks on the
    # bursts) the TTL mix's items leave up to 389 fewer by t=150
    assert "t=150: freed: servers 43112 and 43108" in " ".join(freed_misses("s4_ttlmix", boot=0.0))


def test_the_server_splits_the_same_expired_items_differently_run_for_run():
    # the premise of the two tests above and below, read off the captures: the runs' crawler_reclaimed
    # are further apart than test_paced's tolerance (5 % or 50), their sums within FREED_FLOOR
    for name, n in (("t3_shortttl", "110"), ("s4_ttlmix", "110"), ("s4_ttlmix", "150")):
        crawled = [int(r[n]["stats"]["crawler_reclaimed"]) for r in _real(name)]
        assert max(crawled) - min(crawled) > max(50, max(crawled) * 5 / 100), (name, n, crawled)
        freed = [_freed(r[n]["stats"]) for r in _real(name)]
        assert max(freed) - min(freed) <= FREED_FLOOR, (name, n, freed)


@pytest.mark.parametrize("name", ["t3_shortttl", "s4_ttlmix"])
def test_the_short_ttl_runs_agree_but_for_who_freed_the_items(name):
    assert [m for m in misses(name) if ": crawler_reclaimed: " not in m] == []


# -- simulate --every's rows ------------------------------------------------------------------------

@functools.cache
def _timeline(name: str, *extra: str) -> dict:
    result = run("simulate", str(DATA / f"{name}_workload.csv.gz"), *RUNS[name], "--profile", "1.6.18",
                 "--uptime", str(BOOT), "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_row_counts_what_the_background_reclaimed_before_its_boundary():
    # 1 500 sets/s of 5 s items at -m 64.  A row at N is the state before second N's operations, so it
    # holds no more items than the server right after them (checkpoint N).  The rows used to show the
    # state after second N-1's sets, before the tick that expires a second of items: 9 431 + 891 at
    # t=10 against the server's 9 086.
    items: dict = defaultdict(int)
    for row in _timeline("t3_shortttl", "--every", "10")["timeline"]:
        items[row["time"]] += row["items"]
    real = _real("t3_shortttl")[0]
    for n in range(10, 120, 10):
        assert items[n] <= int(real[str(n)]["stats"]["curr_items"]), n


def test_the_timeline_does_not_change_the_replay():
    with_rows, without = _timeline("t4_nocrawler", "--every", "7"), _timeline("t4_nocrawler")
    assert with_rows["totals"] == without["totals"]
    assert with_rows["classes"] == without["classes"]
