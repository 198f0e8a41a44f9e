"""Release-true advice (issue 16, item 1): the release each flag string is for, the same words on
other releases of the line, and the class-cap trap.  The server side is test_advice_fidelity."""

from __future__ import annotations

import json

from helpers import run

from slabcalc import configure, load_profile
from slabcalc.analysis.advice import class_cap_trap, elsewhere


def notes(release, *args):
    return elsewhere(configure(load_profile(release), list(args)))


def test_slab_chunk_max_in_kib_is_bytes_before_1_6_24():
    # W1: 1.6.45's "-o slab_chunk_max=16" is 16 KiB; 1.6.0-1.6.23 read it as 16 bytes (one class)
    (note,) = notes("1.6.45", "-o", "slab_chunk_max=16")
    assert (note.first, note.last, note.refused) == ("1.6.0", "1.6.23", None)
    assert note.classes.startswith("1 class of 16 bytes, not ")
    assert note.flags == "-o slab_chunk_max=16384"
    assert "write -o slab_chunk_max=16384 there" in note.text("-o slab_chunk_max=16")


def test_slab_chunk_max_in_bytes_is_refused_from_1_6_24():
    (note,) = notes("1.6.18", "-o", "slab_chunk_max=16384")
    assert (note.first, note.last) == ("1.6.24", "1.6.45")
    assert note.refused == "slab_chunk_max must be specified in kilobytes."   # memcached.c's message
    assert note.flags == "-o slab_chunk_max=16"


def test_words_that_mean_the_same_everywhere_get_no_note():
    assert notes("1.6.45", "-f", "1.1", "-n", "64") == ()
    assert notes("1.6.18", "-o", "slab_sizes=96-200-4000") == ()
    assert notes("1.6.45") == ()


def test_class_cap_trap():
    trap = class_cap_trap(configure(load_profile("1.6.18"), ["-n", "5", "-f", "1.05"]))
    assert trap == ("the factor 1.05 reaches memcached's cap of 63 classes at 2200-byte chunks: every item of "
                    "2201 to 524288 bytes takes a 524288-byte chunk of class 63")
    assert class_cap_trap(configure(load_profile("1.6.18"), ["-f", "1.25"])) is None
    assert class_cap_trap(configure(load_profile("1.6.18"), ["-f", "1.2"])) is None
    assert class_cap_trap(configure(load_profile("1.6.18"), ["-o", "slab_sizes=96-200"])) is None


def test_optimize_names_the_release_of_its_flags():
    result = run("optimize", "examples/items.csv", "-C", "--validate", "0")
    assert result.exit_code == 0
    out = result.output
    assert "flags for memcached 1.6.45:" in out
    assert "for memcached 1.6.45: -o slab_sizes=" in out.split("best:")[1]
    assert "on memcached 1.6.0-1.6.23, -o slab_chunk_max=16 builds 1 class of 16 bytes" in " ".join(out.split())
    document = json.loads(run("optimize", "examples/items.csv", "-C", "--format",
                              "json").output)
    chunk_max = next(c for c in document["candidates"] if c["flags"] == "-o slab_chunk_max=16")
    assert chunk_max["release"] == "1.6.45"
    assert chunk_max["elsewhere"] == [{"releases": "1.6.0-1.6.23", "refused": None,
                                       "classes": chunk_max["elsewhere"][0]["classes"],
                                       "flags": "-o slab_chunk_max=16384"}]
    assert document["baseline"]["elsewhere"] == []


def test_a_trapped_configuration_is_warned_on_stderr():
    result = run("classes", "-n", "5", "-f", "1.05")
    assert result.exit_code == 0
    assert "warning: the factor 1.05 reaches memcached's cap of 63 classes" in " ".join(result.stderr.split())
    assert "warning" not in result.stdout                 # the table alone, class 63 its last row
    assert result.stdout.splitlines()[-1].split()[:2] == ["63", "524288"]
