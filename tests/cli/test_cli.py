"""The command line: formats, units, one-line errors and exit codes."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from helpers import run

from slabcalc.cli import cli


def test_classes_json_contract():
    result = run("classes", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    first = doc["classes"][0]
    assert {"class", "chunk_size", "perslab", "max_data", "min_data"} <= set(first)
    assert (first["class"], first["chunk_size"], first["perslab"]) == (1, 96, 10922)
    assert doc["classes"][-1]["chunk_size"] == 524288
    assert doc["settings"]["release"] == "1.6.45"


def test_classes_csv_has_stable_columns():
    result = run("classes", "--profile", "1.4.24", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert list(rows[0]) == ["class", "chunk_size", "perslab", "max_data", "min_data", "page_length", "page_unused"]
    assert len(rows) == 42
    # 1.4.24 allocates only chunk_size * perslab per page
    assert all(int(r["page_unused"]) == 0 for r in rows)


def test_classes_tabulate_format():
    result = run("classes", "--format", "github")
    assert result.output.splitlines()[0].startswith("|   class |")


def test_duplicate_classes_of_tiny_factor_are_marked():
    doc = json.loads(run("classes", "-f", "1.01", "--format", "json").stdout)
    classes = doc["classes"]
    assert len(classes) == 63
    assert classes[0]["chunk_size"] == classes[1]["chunk_size"] == 96
    assert classes[1]["duplicate_of"] == 1 and classes[0]["duplicate_of"] is None


def test_place_json_contract_for_chunked_item():
    doc = json.loads(run("place", "--key", "3", "--value", "600000", "--format", "json").output)
    assert {"item_size", "class", "chunk_size", "waste", "chunks"} <= set(doc)
    assert doc["status"] == "chunked"
    assert [(c["role"], c["class"]) for c in doc["chunks"]] == [("header", 2), ("body", 39), ("tail", 31)]
    assert doc["without_cas"]["item_size"] == doc["item_size"] - 8


def test_place_too_large_is_an_answer_not_an_error():
    result = run("place", "--key", "1", "--value", "1048576", "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["status"] == "too_large" and doc["class"] is None and doc["waste"] is None


def test_place_units_and_no_cas_short_flag():
    a = json.loads(run("place", "--key", "1", "--value", "512k", "-C", "--format", "json").output)
    b = json.loads(run("place", "--key", "1", "--value", "524288", "--no-cas", "--format", "json").output)
    assert a == b and a["cas"] == 0 and a["with_cas"]["cas"] == 8


def test_slab_chunk_max_units_follow_the_release():
    # 16k is 16384 bytes in both worlds: bytes before 1.6.24, kilobytes from 1.6.24
    old = run("classes", "--profile", "1.6.18", "--slab-chunk-max", "16k", "--format", "json")
    new = run("classes", "--profile", "1.6.45", "--slab-chunk-max", "16k", "--format", "json")
    assert json.loads(old.output)["classes"] == json.loads(new.output)["classes"]
    assert json.loads(new.output)["settings"]["slab_chunk_max"] == 16384
    # a plain number is in the release's own unit
    assert run("classes", "--profile", "1.6.45", "--slab-chunk-max", "16").exit_code == 0
    refused = run("classes", "--profile", "1.6.45", "--slab-chunk-max", "16384")
    assert refused.exit_code == 2 and "slab_chunk_max must be specified in kilobytes." in refused.output
    odd = run("classes", "--profile", "1.6.45", "--slab-chunk-max", "1000")
    assert odd.exit_code == 2
    half = run("classes", "--profile", "1.6.45", "--slab-chunk-max", "1536")
    assert half.exit_code == 2 and "kilobytes" in half.output


def test_slab_sizes_commas_and_dashes_agree():
    a = run("classes", "--slab-sizes", "96,200,1024", "--format", "csv").output
    b = run("classes", "--slab-sizes", "96-200-1024", "--format", "csv").output
    c = run("classes", "-o", "slab_sizes=96-200-1024", "--format", "csv").output
    assert a == b == c


@pytest.mark.parametrize("args,needle", [
    (["classes", "-f", "1"], "Factor must be greater than 1"),
    (["classes", "-n", "0"], "Chunk size must be greater than 0"),
    (["classes", "-I", "1000"], "Item max size cannot be less than 1024 bytes."),
    (["classes", "-I", "64m"], "Cannot set item size limit higher than 1/2 of memory max."),
    (["classes", "-o", "nonsense"], 'Illegal suboption "nonsense"'),
    (["classes", "--profile", "1.4.24", "--slab-sizes", "96-200"], 'Illegal suboption "slab_sizes=96-200"'),
    (["classes", "--profile", "9.9.9"], "unsupported memcached release 9.9.9; supported: 1.2.4-1.2.8, 1.4.3-1.4.26, 1.4.27-1.4.28, 1.4.29-1.4.39, 1.5.0-1.5.22, 1.6.0-1.6.45"),
    (["classes", "--profile", "nope.yaml"], "cannot read profile"),
    (["classes", "-m", "1.5g"], "-m/--memory-limit"),
    (["classes", "-m", "1000k"], "whole megabytes"),
    (["place", "--key", "251", "--value", "1"], "key length must be 1..250 bytes, not 251"),
    (["report", "-", "--key", "251"], "--key: key length must be 1..250 bytes (memcached 1.6.45), not 251"),
    (["optimize", "-", "--key", "0"], "--key: key length must be 1..250 bytes (memcached 1.6.45), not 0"),
    (["simulate", "-", "--key", "251"], "--key: key length must be 1..250 bytes (memcached 1.6.45), not 251"),
    (["compare", "-", "--key", "251"], "--key: key length must be 1..250 bytes (memcached 1.6.45), not 251"),
    (["place", "--key", "1", "--value", "-1"], "Invalid value for '--value'"),
    (["place", "--key", "1", "--value", "1", "--flags", "-1"], "'--flags': -1 is not in the range 0<=x<=4294967295"),
    (["classes", "--format", "nope"], "Invalid value for '--format'"),
])
def test_bad_input_is_one_line_exit_2(args, needle):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_memory_limit_units_reach_the_item_size_check():
    # -I may be at most half of -m in 1.6: 64m needs -m 128 or 1g
    assert run("classes", "-I", "64m", "-m", "128").exit_code == 0
    assert run("classes", "-I", "64m", "-m", "1g").exit_code == 0
    assert run("classes", "-I", "64m", "-m", "127").exit_code == 2


def test_warning_of_1_4_24_goes_to_stderr():
    result = run("classes", "--profile", "1.4.24", "-I", "2m", "--format", "csv")
    assert result.exit_code == 0
    assert "Setting item max size above 1MB is not recommended!" in result.stderr
    assert "WARNING" not in result.stdout


def test_unplaceable_item_is_a_data_error():
    result = run("place", "--profile", "1.6.18", "--key", "1", "--value", "100", "--slab-chunk-max", "32")
    assert result.exit_code == 1
    assert "no room for data" in result.output and len(result.output.strip().splitlines()) == 1


def test_python_dash_m_and_broken_pipe():
    proc = subprocess.run(
        f"{sys.executable} -m slabcalc classes -f 1.01 --format json | head -c 10",
        shell=True, capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("{")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_a_closed_pipe_ends_quietly_and_successfully():
    # the reader closed its end before slabcalc wrote, as `| head` does once it has its lines: every
    # write fails with EPIPE; nothing on stderr, exit 0 (click alone would exit 1)
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run([sys.executable, "-m", "slabcalc", "classes"], stdout=write, stderr=subprocess.PIPE,
                          text=True)
    os.close(write)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_report_vs_asks_with_its_own_memory_limit():
    # G1 (issue 15): --vs "-m 128" showed the capacity of the baseline's -m 64
    import json

    def capacity(*args):
        result = run("report", "examples/items.csv", "--format", "json", *args)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    at_64, at_128 = capacity("-m", "64")["capacity"], capacity("-m", "128")["capacity"]
    assert at_128 > at_64
    rows = {r["options"]: r["capacity"] for r in capacity("-m", "64", "--vs", "-m 128", "--vs", "-f 1.1")["what_if"]}
    assert rows["baseline"] == at_64 and rows["-m 128"] == at_128
    assert rows["-f 1.1"] == capacity("-m", "64", "-f", "1.1")["capacity"]
    # no -m in the baseline: only the --vs that gives one has a capacity
    rows = {r["options"]: r["capacity"] for r in capacity("--vs", "-m 128")["what_if"]}
    assert rows == {"baseline": None, "-m 128": at_128}


# -- errors that teach, and help (issue 15) ---------------------------------------------------

def test_slabcalc_alone_and_slabcalc_help_print_the_help():
    alone = run()
    assert alone.exit_code == 0 and alone.stdout.startswith("Usage: slabcalc [OPTIONS] COMMAND")
    assert run("help").stdout == alone.stdout
    report = run("help", "report")
    assert report.exit_code == 0 and report.stdout == run("report", "--help").stdout
    assert run("help", "profiles", "show").stdout == run("profiles", "show", "--help").stdout
    assert run("help", "nope").exit_code == 2


def test_unknown_options_are_answered_with_slabcalcs_names():
    result = run("report", "examples/items.csv", "--mem", "64")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: No such option '--mem': memcached's memory limit is -m "
                                     "(or --memory-limit)")
    assert "Did you mean -f/--slab-growth-factor?" in run("classes", "--factor", "1.1").stderr


def test_a_decimal_comma_is_pointed_out():
    refused = run("classes", "-f", "1,25")         # memcached reads 1: "Factor must be greater than 1"
    assert refused.exit_code == 2
    assert "Factor must be greater than 1 (memcached reads 1,25 as 1: write -f with a decimal point, 1.25)" \
        in refused.stderr
    accepted = run("classes", "-f", "2,5")         # read as 2, as memcached's atof does
    assert accepted.exit_code == 0
    assert "note: memcached reads -f 2,5 as 2 (it stops at the comma)" in accepted.stderr


def test_profiles_are_taken_as_slabcalc_profiles_and_tarballs_name_them():
    def release(spec):
        return json.loads(run("place", "--profile", spec, "--key", "1", "--value", "1", "--format",
                              "json").stdout)["settings"]["release"]

    assert release("memcached-1.6") == release("1.6") == "1.6.45"
    assert release("memcached-1.6.18") == "1.6.18"


def test_rejected_rows_are_noted_on_stderr_in_every_format():
    for fmt in ("table", "csv", "json"):
        result = run("report", "-", "--format", fmt, input="key,value\n10,100\n10,abc\n")
        assert result.exit_code == 0
        assert result.stderr.strip() == "note: <stdin>: 1 of 2 rows rejected (first: line 3, value is not a number)"


def test_a_header_it_cannot_use_lists_the_names_it_accepts():
    result = run("report", "-", input="foo,bar\n1,2\n")
    assert result.exit_code == 1
    assert "a value column is one of value, value_size, value_len, value_length, vlen, size" in result.stderr


# -- tables that fit the terminal (issue 15) ------------------------------------------------------

WIDE_COMMANDS = [
    ["classes"], ["classes", "-f", "1.05", "-n", "5"], ["place", "--key", "183", "--value", "877228", "-m", "16"],
    ["report", "examples/items.csv", "-m", "64", "--vs", "-m 128"],
    ["report", "examples/capacity-mix.csv", "--node-ram", "8g", "--headroom", "10%", "--overhead", "5%"],
    ["report", "examples/metadump.txt", "--group-by", "prefix"],
    ["stats", "examples/stats-calcified.txt"],
    ["stats", "examples/node-evicting-2.txt", "--since", "examples/node-evicting-1.txt"],
    ["compare", "examples/items.csv"], ["optimize", "examples/bimodal.csv", "--validate", "0.25"],
    ["simulate", "examples/calcification.csv", "-m", "4", "--every", "10"], ["profiles"],
    ["profiles", "show", "1.6.18"],
    ["report", "examples/extstore-mix.csv", "-m", "8192", "-o", "ext_path=/mnt/flash/extstore:200g"],
    ["report", "examples/capacity-mix.csv", "--container", "1g", "-t", "8", "--connections", "2000"],
    ["place", "--key", "8", "--value", "1000", "-m", "64", "-o", "ext_path=/mnt/flash/extstore:1g"],
]


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("args", WIDE_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_tables_fit_the_terminal(args, columns):
    result = run(*args, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    widest = max(result.output.splitlines(), key=len)
    assert len(widest) <= columns, widest


@pytest.mark.parametrize("columns", [80, 120])
def test_optimize_puts_long_flag_strings_on_lines_of_their_own(tmp_path, columns):
    """Issue 31: 30 slab_sizes made optimize's flag table 172 columns wide; the tables fit, and each flag
    string stands whole on a line of its own, as pasted."""
    mix = tmp_path / "many.csv"
    mix.write_text("key,value,count\n" + "".join(f"30,{int(300 * 1.19 ** i)},{1000 if i % 2 else 300}\n"
                                                 for i in range(40)))
    result = run("optimize", str(mix), env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    flags = [line[2:] for line in lines if line.startswith("  -o slab_sizes=") or line.startswith("  -n ")]
    assert any(len(f) > columns for f in flags)                      # the case: one flag string is wider
    assert all(" " not in f.split("=", 1)[1] for f in flags if f.startswith("-o"))   # whole, unbroken
    assert "slab_sizes:" in lines and lines[lines.index("slab_sizes:") + 1].startswith("  -o slab_sizes=")
    assert all(len(line) <= columns for line in lines if line[2:] not in flags), result.output


def test_a_pipe_gets_120_columns_and_all_columns_on_request():
    fitted = run("report", "examples/items.csv").stdout
    assert max(len(line) for line in fitted.splitlines()) <= 120
    assert "(not shown: " in fitted and "--columns all shows every column" in " ".join(fitted.split())
    every = run("report", "examples/items.csv", "--columns", "all").stdout
    assert every.splitlines()[0].split()[:4] == ["class", "chunk_size", "perslab", "items"]
    assert "not shown" not in every
    chosen = run("report", "examples/items.csv", "--columns", "class,pages,chunk_waste").stdout
    assert chosen.splitlines()[0].split() == ["class", "pages", "chunk_waste"]
    bad = run("report", "examples/items.csv", "--columns", "class,bogus")
    assert bad.exit_code == 2 and "no column bogus in report's tables; they have:" in bad.stderr


def test_a_wrong_column_name_lists_that_commands_columns_only():
    """Issue 31: a wrong --columns name listed about 80 names of every command (924 characters)."""
    bad = run("report", "examples/items.csv", "--columns", "class,evicted_per_s")
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) <= 3, bad.stderr
    said = " ".join(bad.stderr.split())
    assert "no column evicted_per_s in report's tables" in said          # a stats column, not report's
    assert "chunk_waste" in said and "held_out_gain_pct" not in said and "crawler_reclaimed" not in said
    assert run("stats", "examples/stats-calcified.txt", "--columns", "class,crawler_reclaimed").exit_code == 2
    assert run("simulate", "examples/automove.csv", "-m", "4", "--columns", "class,crawler_reclaimed").exit_code == 0


def test_columns_apply_to_each_table_of_a_command():
    """Issue 31: --columns was not applied to the stats --interval table."""
    lines = run("stats", "examples/node-evicting-2.txt", "--since", "examples/node-evicting-1.txt",
                "--columns", "class,pages,evicted_per_s").stdout.splitlines()
    heads = [head.split() for head, rule in zip(lines, lines[1:]) if rule.startswith("---")]
    assert heads == [["class", "pages"], ["class", "pages", "evicted_per_s"]], lines


def test_human_units_in_tables_and_raw_integers_elsewhere():
    table = run("report", "examples/items.csv", "--columns", "class,page_bytes").stdout.splitlines()
    assert table[2].split() == ["2", "1.00", "MiB"]
    raw = run("report", "examples/items.csv", "--columns", "class,page_bytes", "--bytes").stdout.splitlines()
    assert raw[2].split() == ["2", "1048576"]
    csv_text = run("report", "examples/items.csv", "--format", "csv").stdout.splitlines()
    assert csv_text[1].split(",")[9] == "1048576"          # page_bytes, an integer
    assert json.loads(run("report", "examples/items.csv", "--format", "json").stdout)["classes"][0][
        "page_bytes"] == 1048576


# -- one vocabulary (issue 15) --------------------------------------------------------------------

SYNONYMS = [{"pages", "total_pages"}, {"used_chunks", "chunks"}, {"evicted", "evictions"},
            {"items", "number"}, {"free_chunks", "free"}, {"mem_requested", "requested"}]


def test_one_name_per_figure_and_no_total_row_in_per_class_csv():
    per_class = {
        "report": run("report", "examples/items.csv", "--format", "json").stdout,
        "stats": run("stats", "examples/stats-calcified.txt", "--format", "json").stdout,
        "simulate": run("simulate", "examples/automove.csv", "--profile", "1.6.18", "-m", "16", "--format",
                        "json").stdout,
    }
    names = set()
    for text in per_class.values():
        document = json.loads(text)
        # per class memcached says evicted (stats items); node-wide, evictions (stats): both its own names
        names |= set(document["classes"][0]) | (set(document["totals"]) - {"evictions"})
        assert isinstance(document["classes"], list) and isinstance(document["totals"], dict)
    for group in SYNONYMS:
        assert len(group & names) <= 1, group & names          # one name for one figure
    assert {"class", "chunk_size", "pages", "used_chunks", "evicted", "free_chunks"} <= names
    for args in (["report", "examples/items.csv"], ["stats", "examples/stats-calcified.txt"],
                 ["simulate", "examples/automove.csv", "--profile", "1.6.18", "-m", "16"], ["classes"]):
        rows = run(*args, "--format", "csv").stdout.splitlines()
        assert not any(line.split(",")[0] == "total" or ",total," in line for line in rows[1:]), args


def test_columns_choose_the_table_that_has_them_and_never_hide_flags():
    text = run("optimize", "examples/items.csv", "--columns", "space,gain_pct").stdout
    lines = text.splitlines()
    assert lines[0].split() == ["space", "gain_pct"]
    flags = lines.index("flags for memcached 1.6.45:")
    assert lines[flags + 1].split() == ["space", "flags"]          # the paste-ready strings stay


# -- help texts say what happens when an option is not given (issue 31) ---------------------------

def _silent_options(command, path=()):
    """Options whose help does not say what happens without them: no default shown or named, no
    "Not given: ...", and neither a flag, a required option nor an "Also ..." addition."""
    import click

    ctx = click.Context(command)
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            yield from _silent_options(command.get_command(ctx, name), path + (name,))
    for p in command.params:
        said = (p.help or "").lower() if isinstance(p, click.Option) else ""
        if (isinstance(p, click.Option) and not (p.is_flag or p.show_default or p.required or p.hidden)
                and not said.startswith("also ") and "default" not in said and "not given" not in said):
            yield " ".join(path), p.opts[0]


def test_every_option_says_what_happens_when_it_is_not_given():
    assert list(_silent_options(cli)) == []
    import click

    @click.command()
    @click.option("--quiet-one", help="Does a thing.")
    @click.option("--told", help="Does a thing.  Not given: it does not.")
    def probe(quiet_one, told):
        pass

    assert list(_silent_options(probe)) == [("", "--quiet-one")]     # the check can fail


def test_the_key_limit_is_the_profiles(tmp_path):
    """--key and the rows' keys are held to the profile's key_max, not to a number of slabcalc's own."""
    profile = tmp_path / "short.yaml"
    profile.write_text('schema: 1\nbase: "1.6.45"\nitem:\n  key_max: 100\n')
    data = tmp_path / "items.csv"
    data.write_text("key,value\n100,10\n101,10\n")
    refused = run("report", str(data), "--profile", str(profile), "--key", "101")
    assert refused.exit_code == 2, refused.output
    assert refused.output.strip().endswith("--key: key length must be 1..100 bytes (memcached 1.6.45), not 101")
    strict = run("report", str(data), "--profile", str(profile), "--strict")
    assert strict.exit_code == 1, strict.output
    assert "items.csv:3: key length must be 1..100" in strict.output
    assert run("report", str(data), "--strict").exit_code == 0     # the bundled 1.6.45 takes 250
