"""Hit-aware advice (issue 16, item 4, W7): optimize's --workload and --hot.

examples/hot-cold-items.csv is the set of items examples/hot-cold-ops.csv writes:
2 000 small items read round and round, and 8 000 larger ones written once and
never read.  Under -m 6 a class table that fits more items cuts hits: the small
items lose their own classes.  The hits optimize reports for each candidate must
be those `slabcalc simulate` reports for the same flags (its engine is proven
against real servers in test_paced and test_simulate_fidelity).
"""

from __future__ import annotations

import json

import pytest
from helpers import run

from slabcalc.inputs.metadump import hot_lines

ITEMS, OPS = "examples/hot-cold-items.csv", "examples/hot-cold-ops.csv"




def simulated_hits(*flags):
    result = run("simulate", OPS, "--profile", "1.6.18", "-m", "6", "--format", "json", *flags)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["totals"]["get_hits"]


@pytest.mark.slow
def test_workload_hits_are_simulates_and_a_cut_is_said():
    result = run("optimize", ITEMS, "-m", "6", "--profile", "1.6.18", "--workload", OPS, "--format", "json", "--resamples", "0")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["workload"] == {"source": OPS, "ops": 18000, "cmd_get": 8000, "memory_limit_mb": 6}
    assert doc["baseline"]["get_hits"] == simulated_hits() == 8000
    firsts = {}
    for c in doc["candidates"]:
        firsts.setdefault(c["space"], c)
    for c in firsts.values():
        assert c["get_hits"] == simulated_hits(*c["flags"].split())
        assert c["get_hits_change_pct"] == round(100 * (c["get_hits"] - 8000) / 8000, 2)
    assert doc["best"]["get_hits"] < 8000 and doc["best"]["gain_pct"] > 0      # more items, fewer hits
    # the warning lines the table prints from these figures ("cuts hits by 21.94% (8000 -> 6245)") are
    # docs/optimize.md's example of this command, which tests/test_readme.py runs and compares line by line


def test_hot_keeps_the_items_in_use():
    lines = ["lru_crawler metadump all",
             "key=a exp=-1 la=1000 cas=1 fetch=yes cls=1 size=70",
             "key=b exp=-1 la=1000 cas=2 fetch=no cls=1 size=70",
             "key=c exp=-1 la=940 cas=3 fetch=yes cls=1 size=70",
             "END"]
    kept, left = hot_lines(lines, "fetched")
    assert left == 1 and kept == [lines[0], lines[1], lines[3], lines[4]]
    kept, left = hot_lines(lines, "30")           # within 30 s of la=1000
    assert left == 1 and kept == lines[:3] + [lines[4]]
    doc = json.loads(run("optimize", "examples/metadump.txt", "--hot", "fetched", "--format", "json").stdout)
    fetched = sum("fetch=yes" in line for line in open("examples/metadump.txt"))
    items = sum(line.startswith("key=") for line in open("examples/metadump.txt"))
    assert doc["hot"] == {"rule": "fetched", "left_out": items - fetched}
    assert doc["baseline"]["pages"] >= 1


def test_hot_and_workload_errors():
    assert run("optimize", ITEMS, "--hot", "fetched").exit_code == 2         # not a metadump
    assert run("optimize", "examples/metadump.txt", "--hot", "soon").exit_code == 2
    no_gets = run("optimize", ITEMS, "--workload", ITEMS)          # sets only: hits would say nothing
    assert no_gets.exit_code == 1 and "has no gets" in no_gets.stderr
    missing = run("optimize", ITEMS, "--workload", "no-such-file.csv")
    assert missing.exit_code in (1, 2) and "no-such-file.csv" in missing.output


@pytest.mark.parametrize("rule, seekable", [("fetched", False), ("600", True)])
def test_hot_reads_its_input_in_parts(monkeypatch, rule, seekable):
    # issue 30: --hot read the whole metadump into memory before keeping its hot lines; now the kept lines
    # are handed to the reader as they are read (SECONDS: a file is read twice, the newest la= first)
    from once_stream import OnceStream

    from slabcalc.inputs import items as reader
    from slabcalc.inputs import rows as opener

    monkeypatch.setattr(reader, "BLOCK_SIZE", 512)
    lines = [f"key=k{i} exp=-1 la={10_000 - i} cas={i} fetch={'yes' if i % 3 else 'no'} cls=1 size={60 + i % 500}"
             for i in range(2000)]
    stream = OnceStream("\n".join(lines) + "\nEND\n", seekable=seekable)
    monkeypatch.setattr(opener, "open_input", lambda path: (stream, path))
    result = run("optimize", "dump.txt", "--hot", rule, "--format", "json")
    assert result.exit_code == 0, result.output
    assert (stream.whole_reads, stream.reads_after_end, stream.rewinds) == (0, 0, int(seekable))
    left_out = sum(i % 3 == 0 for i in range(2000)) if rule == "fetched" else 2000 - 601   # la >= 10000 - 600
    assert json.loads(result.stdout)["hot"] == {"rule": rule, "left_out": left_out}
