"""`simulate --every`'s timeline against real paced runs of Debian's memcached 1.6.18.

The four runs in ``tests/data/fidelity/`` (from ``shared/fidelity/1.6.18-debian``, each captured
twice; keys renamed to 32-digit numbers of the same length, one name a key) are the "short TTL"
family of misses of issue 38: read off the command line's timeline, the model held 4-13 % more items
than the server at every checkpoint.  The model itself was right (``Engine.snapshot_at`` agreed with
the server at every checkpoint); the timeline row at a boundary was taken at the last operation before
it, without the background work of the rest of that second, so items the maintainer had already
reclaimed on the server were still counted.

A checkpoint ``N`` of these runs is the server's ``stats`` right after the operations of workload
second ``N`` (the runs' own README), the state the timeline shows at boundary ``N + 1`` (the last
checkpoint, taken a second after the workload's end, has no such row); the server
was started 0.5 s before second 0 (``--uptime 0.5``).  A figure agrees as the paced runs' do
(tests/fidelity/test_paced.py): within 3 % or 300 of one of the two real runs, or between them; pages per class
within one.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import run

DATA = Path(__file__).resolve().parents[1] / "data" / "fidelity"
RUNS = {"t3_shortttl": ["-m", "64"], "t4_nocrawler": ["-m", "16", "-o", "no_lru_crawler"],
        "s4_ttlmix": ["-m", "32"], "s7_bigm": ["-m", "256"]}


@functools.cache
def _timeline(name: str, *extra: str) -> dict:
    result = run("simulate", str(DATA / f"{name}_workload.csv.gz"), *RUNS[name], "--profile", "1.6.18",
                 "--uptime", "0.5", "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _rows(out: dict) -> tuple[dict, dict]:
    items: dict = defaultdict(int)
    pages: dict = defaultdict(dict)
    for row in out["timeline"]:
        items[row["time"]] += row["items"]
        pages[row["time"]][str(row["class"])] = row["pages"]
    return items, pages


def _real(name: str) -> list[dict]:
    return [json.loads((DATA / f"{name}_{which}.json").read_text())["checkpoints"] for which in ("real", "second")]


def _agrees(model: int, reals: list[int]) -> bool:
    low, high = min(reals), max(reals)
    return low <= model <= high or any(abs(model - r) <= max(300, r * 3 / 100) for r in reals)


def _misses(name: str) -> list[str]:
    out_ = _timeline(name, "--every", "1")
    items, pages = _rows(out_)
    runs = _real(name)
    out = []
    for n in sorted(runs[0], key=int):
        at = int(n) + 1
        if at > out_["end_time"]:       # the last row is the state after the last operation, not at a boundary
            continue
        reals = [int(r[n]["stats"]["curr_items"]) for r in runs]
        if not _agrees(items[at], reals):
            out.append(f"t={n}: curr_items: server {reals}, model {items[at]}")
        for cls in sorted(set(runs[0][n]["pages"]) | set(pages[at])):
            real = [r[n]["pages"].get(cls, 0) for r in runs]
            if all(abs(pages[at].get(cls, 0) - p) > 1 for p in real):
                out.append(f"t={n}: class {cls} pages: server {real}, model {pages[at].get(cls, 0)}")
    return out


@pytest.mark.parametrize("name", ["t3_shortttl", "t4_nocrawler", "s4_ttlmix"])
def test_the_timeline_agrees_with_the_server_at_every_checkpoint(name):
    assert _misses(name) == []


@pytest.mark.xfail(strict=True, reason="issue 38: at -m 256 the server holds 1 000-byte items of a 15 s TTL "
                   "in 37 pages of class 12 from t=20, the model in 39 (both real runs 37)")
def test_the_timeline_agrees_at_256_megabytes():
    assert _misses("s7_bigm") == []


def test_a_row_counts_what_the_background_reclaimed_before_its_boundary():
    # 1 500 sets/s of 5 s items at -m 64: at every boundary the maintainer has reclaimed the items that
    # expired in the second before it.  The rows used to show the state after the second's last set,
    # 9 431 + 891 items at t=10 where the server (checkpoint 9 is not stored; 10 holds 9 086 after
    # one more second of sets) had about 9 000.
    items, _ = _rows(_timeline("t3_shortttl", "--every", "1"))
    real = _real("t3_shortttl")[0]
    for n in range(10, 120, 10):
        assert items[n] <= int(real[str(n)]["stats"]["curr_items"]), n


def test_the_timeline_does_not_change_the_replay():
    with_rows, without = _timeline("t4_nocrawler", "--every", "7"), _timeline("t4_nocrawler")
    assert with_rows["totals"] == without["totals"]
    assert with_rows["classes"] == without["classes"]
