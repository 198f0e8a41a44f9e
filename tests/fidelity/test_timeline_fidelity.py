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

A figure agrees as the paced runs' do (tests/fidelity/test_paced.py), and as issue 38 counts them: within the
tolerance of one of the two real runs, or between them.
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
    return [json.loads((DATA / f"{name}_{which}.json").read_text())["checkpoints"] for which in ("real", "second")]


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
    """The figures outside the tolerance of both real runs and not between them, at every checkpoint."""
    runs, sim = _real(name), _replay(name, boot)
    out = []
    for (when, state), n in zip(sim.snapshots, sorted(runs[0], key=int)):
        found = [{FIGURE.match(d).group(1): d for d in test_paced.differences(_snapshot(r[n]), state)}
                 for r in runs]
        for figure in found[0].keys() & found[1].keys():
            (_, a, model), (_, b, _) = (FIGURE.match(f[figure]).groups() for f in found)
            if not min(int(a), int(b)) <= int(model) <= max(int(a), int(b)):
                out.append(f"t={n}: {figure}: servers {a} and {b}, model {model}")
    return sorted(out)


@pytest.mark.parametrize("name", ["t4_nocrawler", "s7_bigm"])
def test_the_model_agrees_with_the_server_at_every_checkpoint(name):
    assert misses(name) == []


def test_with_the_ticks_on_the_bursts_the_model_misses():
    # the rule the two runs above hold: a start rounded to a whole second puts the ticks on the bursts
    assert "t=20: class 12 pages: servers 37 and 37, model 39" in misses("s7_bigm", boot=0.0)
    assert any("total_items" in m for m in misses("t4_nocrawler", boot=0.0))


@pytest.mark.xfail(strict=True, reason="issue 38: the LRU crawler's schedule -- crawler_reclaimed 1 328 by t=70 "
                   "where both servers have 0, 4 038 by t=100 against 1 345")
def test_the_crawler_of_the_short_ttl_run():
    assert misses("t3_shortttl") == []


@pytest.mark.xfail(strict=True, reason="issue 38: the LRU crawler's schedule -- crawler_reclaimed 441 at t=80 "
                   "where the servers have 665 and 722, 1 621 at t=140 against 1 844 and 2 798")
def test_the_crawler_of_the_ttl_mix():
    assert misses("s4_ttlmix") == []


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
