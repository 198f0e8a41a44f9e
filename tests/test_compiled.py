"""The compiled engine (setup.py: mypyc) and the plain Python source it is built from replay alike.

A hypothesis property (seeded: ``derandomize``): random workloads -- sets, gets, deletes, touches with
TTLs and non-zero flags, items chunked across classes, the background threads on (and the compat LRU),
the temporary LRU (``temporary_ttl``), extstore -- on 1.4.39, 1.5.22, 1.6.18 and 1.6.45, replayed by
this process's engine (compiled where the install compiled it) and by one child process told
``SLABCALC_PURE=1`` (the ``.py`` source), every counter and every class's figures required equal.
Where nothing is compiled the two are the same code and the test skips (the floors' environment has no
C compiler).

The build cannot drift: setup.py records the SHA-256 of every source the library was built from
(``slabcalc/_plain.py``), and a copy of the install with one of them edited runs the plain modules,
with one line on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import slabcalc
from slabcalc import _plain, configure, load_profile
from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, engine_build, simulate

PROFILE = load_profile("1.6.18")
COMPILED = engine_build() == "compiled (mypyc)"
RELEASES = ["1.4.39", "1.5.22", "1.6.18", "1.6.45"]
# per release, the configurations drawn from: the default, the compat or segmented LRU, the temporary
# LRU, the automover, extstore (1.6)
ARGV = {
    "1.4.39": [["-m", "2"], ["-m", "2", "-o", "modern,slab_automove=0"], ["-m", "3", "-o", "modern,slab_automove=0,temporary_ttl=20"]],
    "1.5.22": [["-m", "2"], ["-m", "2", "-o", "no_modern"], ["-m", "3", "-o", "temporary_ttl=20"],
               ["-m", "3", "-o", "slab_automove=2"]],
    "1.6.18": [["-m", "2"], ["-m", "2", "-o", "no_modern"], ["-m", "3", "-o", "temporary_ttl=20"],
               ["-m", "3", "-o", "slab_automove=2"], ["-m", "4", "-o", "ext_path=/tmp/slabcalc-x:64m"],
               ["-m", "4", "-o", "ext_path=/tmp/slabcalc-x:64m,ext_item_size=2000,ext_item_age=5"]],
    "1.6.45": [["-m", "2"], ["-m", "3", "-o", "temporary_ttl=20"],
               ["-m", "4", "-o", "ext_path=/tmp/slabcalc-x:64m"],
               ["-m", "4", "-o", "ext_path=/tmp/slabcalc-x:64m,ext_item_size=2000,ext_item_age=5"]],
}

# the plain engine: one workload a line in, its figures a line out (one start-up for every example)
CHILD = r"""
import json, sys
import slabcalc.engines.engine as e, slabcalc.engines.lru as l, slabcalc.engines.slabs as s
import slabcalc.inputs.workload as w
from dataclasses import asdict
from slabcalc import configure, load_profile
from slabcalc.engines.simulate import engine_build, simulate
print(json.dumps([m.__file__ for m in (e, l, s, w)]), flush=True)
for line in sys.stdin:
    release, argv, ops = json.loads(line)
    sim = simulate(configure(load_profile(release), argv), [tuple(o) for o in ops])
    print(json.dumps([engine_build(), asdict(sim.totals), [asdict(r) for r in sim.classes]], default=str), flush=True)
"""


CASES = [(release, argv) for release in RELEASES for argv in ARGV[release]]


@st.composite
def workloads(draw):
    n = draw(st.integers(30, 120))
    ops, t = [], 0.0
    for _ in range(n):
        t += draw(st.sampled_from([0, 0.001, 0.5, 3, 70]))      # idle seconds too: the threads wake
        op = draw(st.sampled_from([SET, SET, GET, DELETE, TOUCH]))
        # text, ints that are their own hash, and ints that are not (held by the item: engines/table.py)
        k = draw(st.integers(0, 60))
        key = draw(st.sampled_from([f"k{k}", f"k{k}", k, 2**62 + k, -k - 1]))
        value = draw(st.sampled_from([40_000, 10, 100, 900, 5_000, 600_000]))     # 600 000: chunked
        ttl = draw(st.sampled_from([0, 2, 30]))                                    # 2: the temporary LRU
        flags = draw(st.sampled_from([0, 0, 1, 0xFFFFFFFF]))
        ops.append((round(t, 3), op, key, len(str(key)), value if op == SET else 0, ttl, flags if op == SET else 0))
    return ops


@pytest.fixture(scope="module")
def plain():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, SLABCALC_PURE="1"))
    files = json.loads(child.stdout.readline())
    assert all(f.endswith(".py") for f in files), files       # SLABCALC_PURE=1 loaded the source

    def replay(release, argv, ops):
        child.stdin.write(json.dumps([release, argv, ops]) + "\n")
        child.stdin.flush()
        return json.loads(child.stdout.readline())
    yield replay
    child.stdin.close()
    child.wait()


@pytest.mark.skipif(not COMPILED, reason="this install runs the plain modules only")
@pytest.mark.parametrize("release, argv", CASES, ids=[f"{r}:{' '.join(a)}" for r, a in CASES])
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)
@given(ops=workloads())
def test_compiled_and_plain_engines_replay_alike(plain, release, argv, ops):
    """Every configuration of every release (each its own case, none left to the draw), two workloads each."""
    sim = simulate(configure(load_profile(release), argv), ops)
    mine = json.loads(json.dumps([engine_build(), asdict(sim.totals), [asdict(r) for r in sim.classes]], default=str))
    theirs = plain(release, argv, ops)
    assert (mine[0], theirs[0]) == ("compiled (mypyc)", "plain Python")
    assert mine[1:] == theirs[1:]


def test_the_build_records_every_source_mypyc_folds_in():
    """The compiled modules and the uncompiled ones whose Final constants mypyc copies (model/ops.py's
    TIME_MAX, model/exptime.py), not a module they only call (model/settings.py: no Final)."""
    package = os.path.dirname(slabcalc.__file__)
    sources = _plain.built_from(package, ["engines/engine.py", "model/ntotal.py", "inputs/workload.py"])
    assert {"engines/engine.py", "model/ntotal.py", "inputs/workload.py", "model/ops.py", "model/exptime.py",
            "engines/lru.py"} <= set(sources)
    assert "model/settings.py" not in sources and "model/units.py" not in sources


def test_every_source_the_build_records_is_installed_with_the_package():
    """A source the build records (``_built.json``) and a wheel leaves out reads as changed since the build:
    the installed library would run plain Python (a ``pip install .`` did, with key_scan.pxd left out).
    Every Python module is a package file; the others (setup.py's CYTHON_TYPES) must match package-data."""
    import ast
    import fnmatch
    import re

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    lists = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
             and node.targets[0].id in ("COMPILED", "CYTHON", "CYTHON_TYPES")}
    assert lists["CYTHON_TYPES"] and all(path.endswith(".py") for path in lists["COMPILED"] + lists["CYTHON"])
    with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:      # no tomllib before 3.11
        section = f.read().split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    patterns = ast.literal_eval(re.sub(r"#[^\n]*", "", re.search(r"slabcalc\s*=\s*(\[.*?\])", section, re.S).group(1)))
    for path in lists["CYTHON_TYPES"]:
        inside = os.path.relpath(path, "src/slabcalc")
        assert os.path.isfile(os.path.join(root, path))
        assert any(fnmatch.fnmatch(inside, pattern) for pattern in patterns), f"{inside} is not package data"


def test_an_edited_source_is_found_by_its_hash(tmp_path):
    """An edit that keeps the file's size and mtime is found; so are a missing record and a lost file."""
    (tmp_path / "model").mkdir()
    ops = tmp_path / "model" / "ops.py"
    ops.write_text("from typing import Final\nTIME_MAX: Final = 7\n")
    (tmp_path / "mod.py").write_text("from slabcalc.model.ops import TIME_MAX\n")
    assert _plain.changed_source(str(tmp_path)).startswith("no record")
    (tmp_path / _plain.BUILT).write_text(json.dumps(_plain.record(str(tmp_path), ["mod.py"])))
    assert _plain.changed_source(str(tmp_path)) is None
    stat = ops.stat()
    ops.write_text("from typing import Final\nTIME_MAX: Final = 8\n")
    os.utime(ops, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _plain.changed_source(str(tmp_path)) == "model/ops.py changed since the build"
    ops.unlink()
    assert _plain.changed_source(str(tmp_path)) == "model/ops.py changed since the build"


def _copy_of_the_install(tmp_path):
    """The package, its compiled library and the build's record, copied: edits are made there."""
    package = os.path.dirname(slabcalc.__file__)
    top = os.path.dirname(package)
    shutil.copytree(package, tmp_path / "slabcalc", ignore=shutil.ignore_patterns("__pycache__"))
    for name in os.listdir(top):
        if name.startswith("slabcalc__mypyc"):
            shutil.copy2(os.path.join(top, name), tmp_path / name)
    return tmp_path


def _build_in(top, *env):
    code = "import slabcalc.engines.engine as e; from slabcalc.engines.simulate import engine_build; print(engine_build())"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=top,
                          env=dict(os.environ, PYTHONPATH=str(top), **dict(env)))


@pytest.mark.skipif(not COMPILED, reason="this install runs the plain modules only")
def test_a_source_edited_after_the_build_runs_the_plain_modules(tmp_path):
    top = _copy_of_the_install(tmp_path)
    as_built = _build_in(top)
    assert (as_built.stdout.strip(), as_built.stderr) == ("compiled (mypyc)", "")
    ops = top / "slabcalc" / "model" / "ops.py"      # uncompiled, but its TIME_MAX is in the library
    ops.write_text(ops.read_text().replace("TIME_MAX: Final = (1 << 31) - (1 << 26)", "TIME_MAX: Final = (1 << 31) - (1 << 27)"))
    edited = _build_in(top)
    assert edited.stdout.strip() == "plain Python"
    assert edited.stderr.splitlines() == ["slabcalc: the compiled engine is stale (model/ops.py changed since the build): "
                                          "running plain Python; reinstall to compile it again"]
    assert _build_in(top, ("SLABCALC_PURE", "0")).stdout.strip() == "plain Python"     # 0: not pure, still stale


@pytest.mark.skipif(not COMPILED, reason="this install runs the plain modules only")
@pytest.mark.parametrize("value,expected", [("1", "plain Python"), ("yes", "plain Python"), ("0", "compiled (mypyc)"),
                                            ("", "compiled (mypyc)")])
def test_slabcalc_pure_means_one_thing(tmp_path, value, expected):
    """Anything but 0 or empty: plain Python, at run time as at build time (setup.py ``pure_wanted``)."""
    top = _copy_of_the_install(tmp_path)
    ran = _build_in(top, ("SLABCALC_PURE", value))
    assert (ran.stdout.strip(), ran.stderr) == (expected, "")


def test_a_ttl_past_64_bits_is_held_and_never_expires():
    """An item holds exptime in 31 bits (engines/lru.py): a TTL beyond them is capped, not
    refused with a traceback, and the item is found as the plain build finds it."""
    ops = [(0.0, SET, "a", 1, 10, 10**20, 0), (5.0, GET, "a", 1, 0, 0, 0), (6.0, TOUCH, "a", 1, 0, 10**20, 0),
           (9.0, GET, "a", 1, 0, 0, 0)]
    sim = simulate(configure(PROFILE, ["-m", "4"]), ops)
    assert (sim.totals.hits, sim.totals.misses, sim.totals.touch_hits) == (2, 0, 1)


def test_keys_that_share_a_hash_stay_apart():
    """The hash table compares held keys whose hashes are equal (engines/table.py): -1 and -2 share
    Python's hash, 5 and 5 + 2**61 - 1 would share it were the second not held with the top bit set."""
    keys = [-1, -2, 5, 5 + 2**61 - 1, "a", 2**64 + 3]
    ops = [(0.0, SET, k, 4, 100 + i, 0, 0) for i, k in enumerate(keys)]
    ops += [(1.0, DELETE, -2, 4, 0, 0, 0), (1.0, DELETE, 5, 4, 0, 0, 0)]
    ops += [(2.0, GET, k, 4, 0, 0, 0) for k in keys]
    sim = simulate(configure(PROFILE, ["-m", "4"]), ops)
    assert (sim.totals.hits, sim.totals.misses, sim.totals.curr_items, sim.totals.delete_hits) == (4, 2, 4, 2)


def test_an_engines_items_are_freed_with_it():
    """Compiled, items are acyclic to the collector (no GC header, engines/lru.py): their LRU rings are
    untied when the engine goes (Lrus.__del__), else every replay's items would stay in memory."""
    import gc
    import tracemalloc

    ops = [(0.0, SET, i, 8, 100, 0, 0) for i in range(20_000)] + [(1.0, GET, i, 8, 0, 0, 0) for i in range(0, 20_000, 7)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sim = simulate(configure(PROFILE, ["-m", "64"]), ops)
        del sim
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert left < 200_000, left        # 20 000 items of 80 bytes would leave 1.6 MB
