"""Every ``-o`` word is accounted for: modelled, no effect on memory or time, or refused (issue 28 item 5).

The treatments are the profiles' ``treatments`` sections; docs/options.md is written from them
(``scripts/gen_options_docs.py``).  One test reads the installed memcached's own ``-h`` and checks
that every extended option it lists has a treatment.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess

import pytest
from helpers import ROOT, run
from memcached_server import require_memcached, server_version

from slabcalc import configure, load_profile
from slabcalc.engines.simulate import GET, SET, simulate
from slabcalc.model.profile import bundled_lines, release_key
from slabcalc.model.treatments import accepted_words

_spec = importlib.util.spec_from_file_location("gen_options_docs", ROOT / "scripts" / "gen_options_docs.py")
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)


def releases():
    for _, first, last in bundled_lines():
        major, minor, low = release_key(first)[:3]
        for patch in range(low, release_key(last)[2] + 1):
            yield f"{major}.{minor}.{patch}"


def test_options_md_is_what_the_script_writes():
    assert (ROOT / "docs" / "options.md").read_text() == GEN.render(), \
        "docs/options.md is stale: run python scripts/gen_options_docs.py"


def test_every_accepted_word_of_every_release_has_a_treatment_and_no_other_word_does():
    missing, stray = [], []
    lines: dict[str, set] = {}
    for release in releases():
        profile = load_profile(release)
        words = accepted_words(profile)
        missing += [f"{release}: {w}" for w in sorted(words - set(profile.treatments))]
        lines.setdefault(profile.line, set()).update(words)
    for line, first, last in bundled_lines():
        stray += [f"{line}: {w}" for w in sorted(set(load_profile(last).treatments) - lines.get(line, set()))]
    assert not missing and not stray, (missing, stray)


# what reads a word: simulate's background words, the layout's suboptions, the words configure parses
LAYOUT_READ = {"slab_chunk_max", "slab_sizes", "hashpower", "no_hashexpand", "ext_path", "ext_page_size",
               "ext_wbuf_size", "ext_item_size"}
# what simulate's storage threads read (engines/extstore.py), besides the layout's words
from slabcalc.engines.extstore import READ_WORDS as EXTSTORE_READ  # noqa: E402


def test_modelled_means_read_by_slabcalc_and_read_means_modelled():
    wrong = []
    for release in releases():
        p = load_profile(release)
        background = set(p.background.suboptions) if p.background else set()
        for word, t in p.treatments.items():
            if word not in accepted_words(p):
                continue
            if word in background and t.simulate != "modelled":
                wrong.append(f"{release}: {word} is read by simulate's threads but says {t.simulate}")
            if word in p.suboptions and t.layout != "modelled":
                wrong.append(f"{release}: {word} changes the layout but says {t.layout}")
            if t.simulate == "modelled" and word not in background | set(p.suboptions) | LAYOUT_READ | EXTSTORE_READ:
                wrong.append(f"{release}: {word} (simulate)")
            if t.layout == "modelled" and word not in set(p.suboptions) | LAYOUT_READ:
                wrong.append(f"{release}: {word} (layout)")
    assert not wrong


def _ops(rows):
    return [(t, op, key, len(key), value, ttl, 0) for t, op, key, value, ttl in rows]


def test_a_modelled_word_changes_the_result():
    """-o temporary_ttl: 2 000-byte items with a 20 s TTL filling -m 2 are not evicted but refused
    (outofmemory), as in 1.6.18; without it they are evicted."""
    rows = [(i / 100, SET, f"k{i:05d}", 2000, 20) for i in range(2000)]
    with_temp = simulate(configure(load_profile("1.6.18"), ["-m", "2", "-o", "temporary_ttl=30"]), _ops(rows))
    without = simulate(configure(load_profile("1.6.18"), ["-m", "2"]), _ops(rows))
    assert with_temp.totals.evicted == 0 and with_temp.totals.outofmemory > 0
    assert without.totals.evicted > 0 and without.totals.outofmemory == 0
    assert [(o.name, o.value, o.treatment) for o in with_temp.model.options] == [("temporary_ttl", "30", "modelled")]


def test_a_word_of_no_effect_is_listed_with_its_reason_and_changes_nothing(tmp_path):
    workload = tmp_path / "w.csv"
    workload.write_text("time,op,key,value_size,ttl\n" + "".join(f"{i / 10},set,k{i},3000,5\n" for i in range(900))
                        + "".join(f"{90 + i / 10},get,k{i},0,0\n" for i in range(900)))
    given = run("simulate", str(workload), "-m", "2", "-o", "idle_timeout=5", "--format", "json")
    plain = run("simulate", str(workload), "-m", "2", "--format", "json")
    assert given.exit_code == plain.exit_code == 0, given.output
    doc, base = json.loads(given.stdout), json.loads(plain.stdout)
    assert doc["model"]["options"] == [{"name": "idle_timeout", "value": "5", "treatment": "none",
                                        "why": "closes idle connections; no item memory"}]
    assert "idle_timeout=5 no effect on memory or time: closes idle connections" in doc["model"]["text"]
    assert doc["totals"] == base["totals"] and doc["classes"] == base["classes"]
    text = run("simulate", str(workload), "-m", "2", "-o", "idle_timeout=5")
    assert "idle_timeout=5 no effect on memory or time" in " ".join(text.stdout.split())


@pytest.mark.parametrize("args, word", [
    (["simulate", "-", "-m", "8", "-o", "lru_segmented"], "lru_segmented"),
    (["simulate", "-", "-m", "8", "-o", "idle_timeout=5,no_lru_segmented"], "no_lru_segmented"),
    (["report", "-", "-m", "8", "-o", "slab_automove_freeratio=0.5"], "slab_automove_freeratio"),
    (["optimize", "-", "-m", "8", "-o", "slab_automove_freeratio=0.5"], "slab_automove_freeratio"),
    (["place", "--key", "10", "--value", "100", "-o", "slab_automove_freeratio=0.5"], "slab_automove_freeratio"),
])
def test_a_refused_word_exits_2_with_one_line_naming_it(args, word):
    result = run(*args, input="time,op,key,value_size\n0,set,a,10\n" if args[0] == "simulate" else "key,value\n10,100\n")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"-o {word}" in lines[0] and "does not model" in lines[0]


def test_report_lists_the_words_given_with_their_treatment():
    result = run("report", "-", "-m", "8", "-o", "hot_lru_pct=30,slab_chunk_max=64", "--format", "json",
                 input="key,value\n10,100\n")
    assert result.exit_code == 0, result.output
    options = json.loads(result.stdout)["settings"]["options"]
    assert [(o["name"], o["value"], o["treatment"]) for o in options] == [("hot_lru_pct", "30", "none"),
                                                                          ("slab_chunk_max", "64", "modelled")]


def test_temporary_ttl_needs_the_lru_maintainer_as_memcached_says():
    result = run("simulate", "-", "-m", "8", "-o", "no_lru_maintainer,temporary_ttl=30",
                 input="time,op,key,value_size\n0,set,a,10\n")
    assert result.exit_code == 2 and "temporary_ttl requires lru_maintainer to be enabled" in result.stderr


def help_words(text: str) -> list[str]:
    """The extended options ``memcached -h`` lists (``   - word:`` lines after ``-o, --extended``)."""
    extended = text[text.index("-o, --extended"):]
    return re.findall(r"^\s+- ([a-z_]+):", extended, flags=re.M)


def test_every_extended_option_the_installed_memcached_lists_is_classified():
    """A live check: the installed server's own help text, word by word."""
    path = require_memcached()
    version = server_version(path)
    if version != "1.6.18":
        pytest.skip(f"the 1.6.18 profile is checked against a 1.6.18, not {version}")
    shown = subprocess.run([path, "-h"], capture_output=True, text=True, timeout=10).stdout
    words = help_words(shown)
    assert len(words) > 40 and "idle_timeout" in words and "temporary_ttl" in words
    profile = load_profile("1.6.18")
    unclassified = [w for w in words if w not in profile.treatments]
    refused_by_configure = []
    for word in words:
        try:
            configure(profile, ["-o", word])
        except Exception as exc:  # a word the profile does not take at all says "Illegal suboption"
            if "Illegal suboption" in str(exc):
                refused_by_configure.append(word)
    assert not unclassified and not refused_by_configure, (unclassified, refused_by_configure)


def test_the_examples_of_docs_options_md_print_what_it_shows(monkeypatch):
    from test_readme import console_examples

    examples = list(console_examples((ROOT / "docs" / "options.md").read_text()))
    assert examples
    monkeypatch.chdir(ROOT)
    for command, expected in examples:
        result = run(*command.split()[1:])
        assert result.output.rstrip("\n") == expected.rstrip("\n"), command


@pytest.mark.parametrize("release,argv,words", [
    ("1.6.18", ["-m", "64", "-o", "slab_chunk_max=16384,slab_sizes=96-200-1024-4096"],
     "slab_chunk_max=16384,slab_sizes=96-200-1024-4096"),
    ("1.6.45", ["-m", "64", "-C", "-o", "slab_chunk_max=64"], "slab_chunk_max=64"),        # KiB from 1.6.24
    ("1.4.39", ["-m", "64", "-o", "slab_chunk_max=16384"], "slab_chunk_max=16384"),
])
def test_the_argv_writer_gives_back_the_words_memcached_took(release, argv, words):
    """``Settings.as_argv`` (through ``Settings.argv``) writes slab_chunk_max in the release's unit and
    slab_sizes dash-separated, and memcached's options read back give the same settings."""
    settings = configure(load_profile(release), argv)
    written = settings.as_argv()
    assert written[written.index("-o") + 1] == words
    assert ("-C" in written) == ("-C" in argv)
    assert configure(load_profile(release), written) == settings


@pytest.mark.parametrize("argv", [[], ["-m", "64"], ["-m", "1024", "-f", "1.08", "-n", "64", "-C"],
                                  ["-I", "4m", "-o", "slab_chunk_max=65536,hashpower=20"],
                                  ["-f", "1.25", "-t", "8", "-c", "4096", "-L"]])
def test_settings_write_the_argv_that_gives_them_back(argv):
    """``Settings`` is the one writer of memcached's argv (issue 30: the command line and stats had writers of
    their own, and --vs rebuilt the baseline's from the options beside it): what it writes with
    ``round_trip`` configures the same settings, whether -m was given or not."""
    profile = load_profile("1.6.18")
    settings = configure(profile, argv)
    assert configure(profile, settings.as_argv(round_trip=True)) == settings
    assert ("-m" in settings.as_argv(round_trip=True)) == ("-m" in argv)
    assert "-m" in settings.as_argv()                  # the start line a person copies names its -m
