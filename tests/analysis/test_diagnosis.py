"""stats with two readings (issue 16, item 2): rates, ages and the automover, from saved pairs.

The pairs in tests/data/stats/pairs were read from Debian's 1.6.18 and a 1.6.45
build by scripts/capture_stats_pairs.py (the scenario of tests/calcify.py): a
node evicting in one class while 15 pages hold older items, and the same node
once its automover had healed it.  Expected figures are read from the files
here with a plain parser, not by slabcalc.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run

PAIRS = Path(__file__).resolve().parents[1] / "data" / "stats" / "pairs"
VERSIONS = ["1.6.18", "1.6.45"]


def pair(version, name):
    return str(PAIRS / f"{version}-{name}-after.txt"), str(PAIRS / f"{version}-{name}-before.txt")


def stat(path, name):
    """A ``STAT name value`` of a saved reading, read plainly."""
    found = re.search(rf"^STAT {re.escape(name)} (\S+)", Path(path).read_text(), re.M)
    return found[1] if found else None


@pytest.mark.parametrize("version", VERSIONS)
def test_a_calcified_node_is_diagnosed_now(version):
    after, before = pair(version, "calcified")
    result = run("stats", after, "--since", before, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    span = doc["nodes"][0]["interval"]
    seconds = int(stat(after, "time")) - int(stat(before, "time"))
    assert span["seconds"] == seconds > 0
    assert span["slabs_moved"] == 0 == int(stat(after, "slabs_moved")) - int(stat(before, "slabs_moved"))
    rows = {r["class"]: r for r in span["classes"]}
    evicted = int(stat(after, "items:6:evicted")) - int(stat(before, "items:6:evicted"))
    assert rows[6]["evicted"] == evicted > 0
    assert rows[6]["evicted_per_s"] == round(evicted / seconds, 2)
    assert rows[6]["cmd_set"] == int(stat(after, "6:cmd_set")) - int(stat(before, "6:cmd_set"))
    assert rows[12]["age"] == int(stat(after, "items:12:age")) > rows[6]["evicted_time"]
    assert span["evictions"] == sum(r["evicted"] or 0 for r in span["classes"])   # stats vs stats items
    assert rows[6]["reclaimed"] == int(stat(after, "items:6:reclaimed")) - int(stat(before, "items:6:reclaimed"))
    assert rows[12]["crawler_reclaimed"] == 0
    now = [line for line in doc["findings"] if line.startswith("now")]
    assert now[0].startswith(f"now (over {seconds} s): class 6 evicts {evicted / seconds:.0f}/s (1 page, ")
    assert f"while class 12 holds 15 pages of items up to {rows[12]['age']} s old" in now[0]
    assert now[0].endswith("; slab_automove=1 (ratio 0.80, window 10) moved 0 pages in the interval")
    # issue 31: inside the automover's window this is no calcification alarm
    assert now[1].startswith("now: inside the automover's window: it should move a page from class 12 to "
                             "class 6 within about ")
    assert now[1].endswith(f"; action for memcached {version}: nothing to change")
    assert not any(line.startswith("calcification since boot") for line in doc["findings"])


@pytest.mark.parametrize("version", VERSIONS)
def test_a_healed_node_is_not_flagged(version):
    after, before = pair(version, "healed")
    assert int(stat(after, "evictions")) == int(stat(before, "evictions")) > 0   # it evicted, before
    result = run("stats", after, "--since", before)
    assert result.exit_code == 0, result.output
    assert "now: no class evicts (over " in result.output
    assert "now: calcification" not in result.output and "calcification since boot" not in result.output
    assert "over the last " in result.output            # the table of the interval
    # one reading alone can only speak of counters since boot, and says so
    alone = run("stats", after).output
    assert "now:" not in alone
    assert all("calcification" not in line or "since boot" in line for line in alone.splitlines())


@pytest.mark.parametrize("args, message", [
    (["{v}-calcified-after", "--since", "{v}-other-node"], "come from different servers (pid "),
    (["{v}-calcified-before", "--since", "{v}-calcified-after"], "is the later reading"),
    (["{v}-calcified-after", "--since", "{v}-calcified-after"], "are 0 s apart"),
    (["1.6.18-calcified-after", "--since", "1.6.45-calcified-before"], "come from different servers"),
])
def test_bad_pairs_get_one_line(args, message):
    paths = [str(PAIRS / (a.format(v="1.6.18") + ".txt")) if not a.startswith("--") else a for a in args]
    result = run("stats", *paths)
    assert result.exit_code == 1
    assert message in result.output and len(result.output.strip().splitlines()) == 1 and "Traceback" not in \
        result.output


def test_usage_errors():
    after, before = pair("1.6.18", "calcified")
    assert run("stats", "--server", "127.0.0.1:1", "--interval", "0").exit_code == 2
    assert run("stats", "--since", before).exit_code == 2             # --since needs the later FILEs
    result = run("stats", after, "--interval", "5")
    assert result.exit_code == 2 and "--since" in result.output


def test_server_args_replace_stats_settings():
    after, _ = pair("1.6.18", "calcified")
    doc = json.loads(run("stats", after, "-m", "16", "-f", "1.25", "-o", "slab_automove_window=10",
                         "--format", "json").stdout)
    node = doc["nodes"][0]
    assert node["drift"] == []
    assert any(n.startswith("settings from the given server flags: -m 16") for n in node["notes"])
    # flags that do not match the node are said to disagree, and drift shows
    doc = json.loads(run("stats", after, "-m", "64", "-f", "1.5", "--format", "json").stdout)
    node = doc["nodes"][0]
    assert "stats settings says maxbytes 16777216, the given server flags 67108864" in node["notes"]
    assert node["drift"]
    refused = run("stats", after, "-f", "0.5")
    assert refused.exit_code == 2
    assert refused.stderr == "Error: memcached 1.6.18 refuses to start with -f 0.5 (Factor must be greater than 1)\n"
