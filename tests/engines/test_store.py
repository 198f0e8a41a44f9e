"""The store (engines/store.py): one memory the engine's parts share, each rule of it in one place.

The engine's parts -- the LRUs, the maintainer, the crawler, the temporary LRU, the page mover --
are given the store, never the engine (issue 40: they read some 35 of its attributes, and 13 modules
made one import cycle); the reclaim of ``lru_pull_tail``, a page refused by ``do_slabs_newslab`` and
the class for a size are each written once, and the engine's fast copy of the last is held to the
model's (``model/classes.py`` ``class_for``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from helpers import op, s, settings

from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.lru import COLD
from slabcalc.engines.simulate import GET
from slabcalc.model.classes import class_for

ENGINES = Path(__file__).resolve().parents[2] / "src" / "slabcalc" / "engines"
# the parts that run on the store: none is handed the engine
PARTS = ("lru", "table", "slabs", "store", "maintainer", "crawl_lru", "crawler", "temp_lru", "mover")


@pytest.mark.parametrize("part", PARTS)
def test_the_engines_parts_are_given_the_store_not_the_engine(part):
    text = (ENGINES / f"{part}.py").read_text()
    tree = ast.parse(text)
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "slabcalc.engines.engine" not in imported
    params = {a.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for a in node.args.args}
    assert "engine" not in params
    assert not re.search(r"\bself\.e\.|\bself\.e\b\s*=", text)     # no engine held and reached through


def test_lru_pull_tails_search_is_written_once():
    """``tail_tries`` bounds the one search for an expired tail (``Store.reclaim_tail``): the
    HOT/WARM/COLD pulls, the TEMP pulls and the storage thread's tail all call it."""
    walk = re.compile(r"range\((?:[\w.]*tail_tries|tries)\)")
    walkers = {path.stem: len(walk.findall(path.read_text())) for path in ENGINES.glob("*.py")}
    assert {stem: n for stem, n in walkers.items() if n} == {"store": 1}


def test_a_page_refused_is_decided_by_the_slabs_alone():
    """``do_slabs_newslab``'s refusal (``-m`` passed, a page held, the pool empty) is ``Slabs.refuses``;
    the set path asks it rather than compare ``total_malloced`` with ``-m`` itself."""
    found = sorted(path.stem for path in ENGINES.glob("*.py") if re.search(r"malloced \+ .*> .*limit", path.read_text()))
    assert found == ["slabs"]


@pytest.mark.parametrize("args, release", [([], "1.6.18"), (["-f", "1.08", "-n", "10"], "1.6.18"),
                                           (["-I", "4m", "-o", "slab_chunk_max=64"], "1.6.45"),
                                           (["-o", "no_modern"], "1.5.22"), (["-f", "2"], "1.4.39")])
def test_the_engines_class_for_a_size_is_the_models(args, release):
    """``Engine.class_of`` (a byte table up to 1 MB, then a cache) is ``slabs_clsid`` as the model
    has it, for every size an item of one chunk can have."""
    config = settings(*args, release=release)
    e = Engine(config, background_for(config))
    classes = e.classes
    sizes = list(range(1, min(e.max_single, 1 << 17) + 1)) + list(range(1 << 17, e.max_single + 1, 997)) + [e.max_single]
    wrong = [(size, e.class_of(size)) for size in sizes if e.class_of(size) != class_for(classes, size).id]
    assert wrong == []


def test_an_eviction_is_reported_to_the_stores_hook():
    """``Store.evict`` tells ``store.evictions`` (the calcification peak): a full class evicting while
    another holds free chunks records those bytes, the time and the class."""
    config = settings("-m", "2", "-o", "no_lru_crawler,slab_automove=0")
    e = Engine(config, background_for(config, ["no_lru_crawler", "slab_automove=0"]))
    ops = [s(0, "b%05d" % i, value=2000) for i in range(100)]          # class of 2 KB: a page of its own
    ops += [s(1, "a%05d" % i) for i in range(30000)]                   # class 4 fills -m and evicts
    ops += [op(2, GET, "zzzzzz")]
    e.run(ops)
    assert e.lrus.counts[e.class_of(165)].evicted > 0
    peak, when, cls = e.store.evictions.peak
    assert cls == e.class_of(165) and when == 1
    assert peak == sum(e.size[c] * len(e.slabs.free[c]) for c in range(1, len(e.size)) if c != cls) > 0
    assert e.peak == e.store.evictions.peak and e.store.lrus.q[COLD][cls].n > 0


@pytest.mark.parametrize("item_size, expected", [(600_000, "largest"), (0, 0), (1, 1)])
def test_the_engines_extstore_min_class_is_the_models_slabs_clsid(item_size, expected):
    """-o ext_item_size above the largest chunk (512 KB with -I 1m) but within -I: memcached's
    slabs_clsid (slabs.c 90-99 at 1.6.18) gives the largest class, so only that class's values go to
    flash -- not 0, which would flush every class's.  A size of 0 is 0 (slabs.c 93)."""
    from slabcalc.analysis.extstore import min_flush_class

    config = settings("-m", "64", "-o", f"ext_path=/tmp/slabcalc-minclass.data:64m,ext_item_size={item_size}")
    e = Engine(config, background_for(config))
    want = e.classes[-1].id if expected == "largest" else expected
    assert e.storage.min_class == want
    assert min_flush_class(config, config.extstore, e.classes) == want
