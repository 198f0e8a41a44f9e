"""One command-line vocabulary (issue 40): every share a fraction (0.2) or a percent with its sign
(20%); an option that took a bare percent before still reads an unambiguous old value, with one line on
stderr, and refuses an ambiguous one (exit 2); old option names are still taken, each with its note.

Expected values are worked out here (8 GiB less 10% is 8589934592 * 9 // 10 bytes), or are the same
command spelt the other way: a percent and its fraction must print the same document."""

from __future__ import annotations

import json
from fractions import Fraction

import click
import pytest
from helpers import ROOT, run

from slabcalc.cli.vocabulary import ShareType

MIX = "examples/capacity-mix.csv"
GIB8 = 8 << 30


def _json(*args: str) -> dict:
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# -- the type -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [("0.2", Fraction(1, 5)), ("20%", Fraction(1, 5)), (" 12.5% ", Fraction(1, 8)),
                                        ("0", Fraction(0)), ("1/3", Fraction(1, 3)), ("1e-3", Fraction(1, 1000))])
def test_a_share_is_a_fraction_or_a_percent_with_its_sign(text, value):
    assert ShareType().convert(text, None, None) == value


@pytest.mark.parametrize("text", ["1.5", "-0.1", "101%", "nan", "inf", "x", "", "%"])
def test_a_share_out_of_range_or_not_a_number_is_refused(text):
    with pytest.raises(click.BadParameter, match="is not a share"):
        ShareType().convert(text, None, None)


def test_open_bounds_and_a_float_when_asked():
    assert ShareType(exact=False).convert("25%", None, None) == 0.25
    with pytest.raises(click.BadParameter, match="is not a share above 0 and up to 1"):
        ShareType(low_open=True).convert("0", None, None)
    with pytest.raises(click.BadParameter, match="is not a share from 0 and below 1"):
        ShareType(high_open=True).convert("100%", None, None)


# -- the options that took a bare percent: --headroom, --fill, --fail-over-waste ----------------

def test_headroom_as_a_percent_is_read_so_and_says_nothing():
    result = run("report", MIX, "--node-ram", "8g", "--headroom", "10%", "--format", "json")
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["node_ram"]["usable_bytes"] == GIB8 * 9 // 10


def test_an_old_bare_percent_is_still_read_with_one_line():
    result = run("report", MIX, "--node-ram", "8g", "--headroom", "10", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["node_ram"]["usable_bytes"] == GIB8 * 9 // 10
    assert result.stderr == ("note: --headroom 10 is an old spelling: read as 10% (a bare percent); "
                             "write 10% or 0.1\n")


@pytest.mark.parametrize("args,text,fixes", [
    (["report", MIX, "--node-ram", "8g", "--headroom"], "0.1", "write 0.1% or 10%"),
    (["report", MIX, "--nodes", "6", "--fill"], "1", "write 1% or 100%"),
    (["report", MIX, "--nodes", "6", "--fill"], "0.8", "write 0.8% or 80%"),
    (["report", MIX, "--fail-over-waste"], "0.5", "write 0.5% or 50%"),
])
def test_a_bare_number_read_two_ways_is_refused(args, text, fixes):
    result = run(*args, text)
    name = args[-1]
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"Error: Invalid value for '{name}': {text} is ambiguous: {name} took a bare "
                             f"percent before, and a bare number is a fraction now: {fixes}\n")


def test_fill_old_and_new_spellings_plan_the_same_nodes():
    new = _json("report", MIX, "--nodes", "6", "--fill", "80%")["nodes"]
    old = run("report", MIX, "--nodes", "6", "--fill", "80", "--format", "json")
    assert old.exit_code == 0 and json.loads(old.stdout)["nodes"] == new
    assert new["fill_pct"] == 80.0
    assert old.stderr.startswith("note: --fill 80 is an old spelling: read as 80% ")


def test_the_waste_gate_takes_a_percent_and_an_old_bare_one():
    # capacity-mix wastes 9.7226% (docs/report.md): over 5%, under 10%
    assert run("report", MIX, "--fail-over-waste", "5%").exit_code == 3
    assert run("report", MIX, "--fail-over-waste", "10%").exit_code == 0
    old = run("report", MIX, "--fail-over-waste", "5")
    assert old.exit_code == 3 and old.stderr.splitlines() == [
        "note: --fail-over-waste 5 is an old spelling: read as 5% (a bare percent); write 5% or 0.05",
        "Error: waste 9.7226% is over --fail-over-waste 5%"]


# -- the options that took a fraction: a percent now too ----------------------------------------

def test_validate_as_a_percent_is_the_fraction():
    assert _json("optimize", "examples/bimodal.csv", "--validate", "25%") == \
        _json("optimize", "examples/bimodal.csv", "--validate", "0.25")


def test_sample_and_target_as_percents_are_the_fractions():
    args = ("simulate", "examples/calcification.csv", "-m", "4,8")
    assert _json(*args, "--sample", "50%", "--target-hit-ratio", "80%") == \
        _json(*args, "--sample", "0.5", "--target-hit-ratio", "0.8")


@pytest.mark.parametrize("args", [["simulate", "examples/calcification.csv", "--sample"],
                                  ["simulate", "examples/calcification.csv", "--sampled"],
                                  ["simulate", "examples/calcification.csv", "-m", "4,8", "--target-hit-ratio"],
                                  ["sql", "--workload", "--table", "log", "--sample"],
                                  ["optimize", "examples/bimodal.csv", "--validate"]])
def test_every_rate_refuses_past_one_hundred_percent(args):
    result = run(*args, "101%")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: Invalid value for '{args[-1]}': 101% is not a share ")


# -- "sample" one meaning: stats --read-items N (a count), --sample a rate --------------------------

def _stats_doc(server, *args: str):
    result = run("stats", "--server", f"127.0.0.1:{server.port}", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_read_items_reads_that_many_and_the_old_name_is_still_taken(memcached):
    from memcached_server import MemcachedServer

    with MemcachedServer(["-m", "64"], memcached=memcached) as server:
        for i in range(30):
            assert server.set(f"key{i:05d}", b"v" * 100) == "STORED"
        new, said = _stats_doc(server, "--read-items", "10")
        old, noted = _stats_doc(server, "--sample-items", "10")
    assert said == ""
    assert noted == "note: --sample-items is an old spelling: give --read-items\n"
    for doc in (new, old):
        sample = doc["nodes"][0]["sample"]
        assert sample["totals"]["items"] == 10 and sample["unlisted_items"] == 20


def test_read_items_and_its_old_name_together_are_a_usage_error():
    result = run("stats", "--server", "127.0.0.1:1", "--read-items", "5", "--sample-items", "5")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == ("Error: --sample-items is the old spelling of --read-items: "
                                              "give --read-items alone")


def test_the_old_name_meets_the_new_names_rules():
    result = run("stats", "--server", "127.0.0.1:1", "--watch", "1", "--sample-items", "5")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "note: --sample-items is an old spelling: give --read-items",
        "Error: --watch reads each --server again and again: give --server, and no FILEs, --interval, "
        "--read-items or --plot"]
    assert run("stats", "--server", "127.0.0.1:1", "--sample-items", "0").exit_code == 2
    assert "--sample-items" not in run("stats", "--help").output


# -- memcached's flags one way: stats takes them as every command does ------------------------------

PAIR = "tests/data/stats/pairs/1.6.18-calcified-after.txt"      # a 1.6.18 node started with -m 16


def _node(*args: str) -> tuple[dict, str]:
    result = run("stats", PAIR, *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["nodes"][0], result.stderr


def test_stats_takes_the_nodes_flags_as_options_and_the_old_string_with_a_note():
    new, said = _node("-m", "64", "-f", "1.5")
    old, noted = _node("--server-args", "-m 64 -f 1.5")
    assert said == "" and noted == ("note: --server-args is an old spelling: give the flags as options, as every "
                                    "command takes them: -m 64 -f 1.5\n")
    assert new == old
    assert "stats settings says maxbytes 16777216, the given server flags 67108864" in new["notes"]
    assert "settings from the given server flags: -m 64 -n 48 -f 1.5 -I 1048576" in new["notes"]
    assert _node("-m", "1g")[0]["notes"][0] == ("stats settings says maxbytes 16777216, the given server flags "
                                                "1073741824")


def test_stats_flags_and_the_old_string_together_are_a_usage_error():
    result = run("stats", PAIR, "--server-args", "-m 16", "-f", "1.25")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == ("Error: --server-args is the old spelling of the flags given as "
                                              "options (-f 1.25): give the options alone")
    assert "--server-args" not in run("stats", "--help").output


# -- another configuration: one --vs 'FLAGS', on report and compare ---------------------------------

def _stores(*args: str) -> list[dict]:
    return _json("compare", "examples/items.csv", *args)["stores"]


def test_compare_vs_is_memcached_under_those_flags_laid_on_the_given_ones():
    stores = _stores("-C", "--vs", "-f 1.08", "--vs", "-o slab_chunk_max=16")
    alone = [_stores("-C", "-f", "1.08")[0], _stores("-C", "-o", "slab_chunk_max=16")[0]]
    assert [s["store"] for s in stores[:3]] == ["memcached 1.6.45", "memcached 1.6.45 -f 1.08",
                                                "memcached 1.6.45 -o slab_chunk_max=16"]
    for row, same in zip(stores[1:3], alone):
        assert {k: v for k, v in row.items() if k not in ("store", "vs_memcached")} == \
            {k: v for k, v in same.items() if k not in ("store", "vs_memcached")}
        assert row["vs_memcached"] == round(row["total_bytes"] / stores[0]["total_bytes"], 2)
    assert [s["store"] for s in stores[3:]] == [s["store"] for s in _stores()[1:]]   # the others unchanged


def test_vs_is_one_option_on_report_and_compare():
    from slabcalc.cli.commands.compare import compare
    from slabcalc.cli.commands.report import report

    (mine,), (theirs,) = ([p for p in c.params if p.name == "what_if"] for c in (report, compare))
    assert mine.opts == theirs.opts == ["--vs"] and mine.metavar == theirs.metavar == "'FLAGS'"
    assert mine.help == theirs.help and mine.multiple and theirs.multiple
    for command in ("report", "compare"):
        refused = run(command, "examples/items.csv", "--vs", "-f 0.5")
        assert refused.exit_code == 2
        assert refused.stderr == "Error: --vs '-f 0.5': memcached 1.6.45 refuses: Factor must be greater than 1\n"


# -- options wherever they apply: compare gates and draws memcached's side as report does -------------

@pytest.mark.parametrize("gate", [["--fail-over-waste", "5%"], ["--fail-over-memory", "1g"]])
def test_compare_gates_memcached_as_report_does(gate):
    crossed, same = (run(c, MIX, *gate, "--format", "csv") for c in ("compare", "report"))
    assert crossed.exit_code == same.exit_code == 3
    assert crossed.stderr.splitlines()[-1] == same.stderr.splitlines()[-1]
    # capacity-mix: 34086060032 page bytes of which 30772000000 requested (docs/report.md's 9.7226%)
    if gate[0] == "--fail-over-waste":
        assert crossed.stderr == "Error: waste 9.7226% is over --fail-over-waste 5%\n"
    assert crossed.stdout.splitlines()[1].startswith("memcached 1.6.45,30772000000,34086060032,")
    assert run("compare", MIX, "--fail-over-waste", "10%", "--fail-over-memory", "64g").exit_code == 0


def test_compare_plots_the_classes_report_plots(monkeypatch, tmp_path):
    from slabcalc.cli import plot

    drawn = []
    monkeypatch.setattr(plot, "plot_classes", lambda rows, path, **_: drawn.append((list(rows), path)))
    for command in ("compare", "report"):
        assert run(command, MIX, "--plot", str(tmp_path / f"{command}.svg")).exit_code == 0
    (mine, path), (theirs, _) = drawn
    assert path == str(tmp_path / "compare.svg") and mine == theirs
    assert [(r["class"], r["pages"]) for r in mine] == [(4, 4578), (9, 5725), (15, 8870), (23, 13334)]


def _presence_table() -> dict[str, tuple[bool, bool]]:
    """docs/common-options.md's table: per command, whether it has --plot and the gate (a cell that does
    not begin "no:")."""
    text = (ROOT / "docs" / "common-options.md").read_text()
    table = text[text.index("| command | `--plot` |"):].split("\n\n")[0].splitlines()[2:]
    rows = {}
    for line in table:
        name, plot, gate = (cell.strip() for cell in line.strip("|").split("|"))
        rows[name.strip("`")] = (not plot.startswith("no:"), not gate.startswith("no:"))
    return rows


def test_plot_and_the_gate_are_where_the_docs_table_says_and_every_command_is_in_it():
    from slabcalc.cli import cli

    ctx = click.Context(cli)
    table = _presence_table()
    assert sorted(table) == [n for n in cli.list_commands(ctx) if n != "help"] and len(table) == 9
    for name, (plot, gate) in table.items():
        options = {o for p in cli.get_command(ctx, name).params for o in getattr(p, "opts", [])}
        assert ("--plot" in options, "--fail-over-waste" in options, "--fail-over-memory" in options) == \
            (plot, gate, gate), name
    assert table["compare"] == (True, True) and table["place"] == (False, False)
