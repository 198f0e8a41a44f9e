"""One placement pass (issue 30): report, optimize, the file-order capacity, extstore and compare
place items through :mod:`slabcalc.analysis.placement` and nowhere else.

The figures the pass gives are held to real servers elsewhere (test_report_fidelity.py,
test_capacity_order.py); here: that no module keeps a copy of the placement (the source is read),
that every caller goes through the one pass (a spy planted in it sees each of them), and that the
callers' figures agree class by class on a mix with chunked items.
"""

from __future__ import annotations

import ast
import functools
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest


from slabcalc import configure, load_profile
from slabcalc.analysis import placement as placement_pass
from slabcalc.analysis.arrival import FileOrder
from slabcalc.analysis.compare import stored_items
from slabcalc.analysis.extstore import extstore_report
from slabcalc.analysis.optimize import chunk_requests, class_chunks
from slabcalc.analysis.report import build_report
from slabcalc.model.classes import slab_classes
from slabcalc.model.distribution import Item, ItemColumns

SRC = Path(__file__).resolve().parents[2] / "src" / "slabcalc"
PASS = {"slabcalc.analysis.placement", "slabcalc.analysis.bulk"}   # the pass and its numpy side
# private names imported across modules by code other work of issue 30 owns (records, inputs)
NOT_OURS = {("slabcalc.records.simulate", "_number"), ("slabcalc.inputs.workload", "_split")}


@functools.cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package, parsed once for the tests below."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append((".".join(["slabcalc", *parts]), ast.parse(path.read_text())))
    return tuple(found)


def test_no_module_imports_another_modules_private_name():
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("slabcalc"):
                found += [(name, a.name) for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__") and (name, a.name) not in NOT_OURS]
    assert found == []


def test_only_the_pass_places_the_items_of_a_distribution():
    """In analysis/, memcached's placement of an item (model.placement ``place`` and its column form)
    is called by the pass alone: a copy of the placement loop elsewhere would have to call it."""
    found = []
    for name, tree in _modules():
        if not name.startswith("slabcalc.analysis") or name in PASS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "slabcalc.model.placement":
                found += [f"{name} imports {a.name}" for a in node.names
                          if a.name in ("place", "place_sized_chunks", "sized_chunks_apply", "_chunks")]
            if isinstance(node, ast.ImportFrom) and node.module == "slabcalc.analysis.bulk":
                found.append(f"{name} imports the pass's numpy side")
    assert found == []


P18 = load_profile("1.6.18")
SMALL_CHUNKS = configure(P18, ["-o", "slab_chunk_max=16384"])     # many chunked items, tails of every size


def _mix(settings, seed: int = 3) -> dict[Item, int]:
    """Items of one chunk (some exactly a chunk's size), chunked ones by lengths and by size, and too
    large ones."""
    rng = random.Random(seed)
    mix: dict[Item, int] = {Item(None, None, 0, c.chunk_size): 1 for c in slab_classes(settings)[3::4]}
    for _ in range(60):
        mix[Item(rng.randint(5, 60), rng.randint(10, 12_000), rng.choice((0, 7)), None)] = rng.randint(1, 4)
    for _ in range(25):
        mix[Item(rng.randint(5, 60), rng.randint(17_000, 900_000), 0, None)] = rng.randint(1, 3)
        mix[Item(None, None, 0, rng.randint(17_000, 900_000))] = rng.randint(1, 3)
    mix[Item(20, 2_000_000, 0, None)] = 2                # over -I: refused everywhere
    return mix


def _walked(settings, mix: dict[Item, int]) -> tuple[dict[int, int], int]:
    """Chunks per class and items stored by the file-order walk under a -m that holds everything."""
    order = FileOrder(replace(settings, maxbytes=1 << 50, memory_limit_given=True))
    rows = [item for item, n in mix.items() for _ in range(n)]
    random.Random(1).shuffle(rows)
    order(rows[: len(rows) // 2])
    sized = [item for item in rows[len(rows) // 2:] if item.item_size is not None]
    order([item for item in rows[len(rows) // 2:] if item.item_size is None])
    order(ItemColumns(None, None, None, np.asarray([i.item_size for i in sized], dtype=np.int64),
                      np.ones(len(sized), dtype=np.int64)))
    walk = order.walk
    assert order.result is None
    chunks = walk.slabs * walk.perslab - walk.free
    return {cls: int(n) for cls, n in enumerate(chunks.tolist()) if n}, walk.stored


@pytest.mark.parametrize("settings", [configure(P18), SMALL_CHUNKS,
                                      configure(load_profile("1.4.30"), ["-o", "slab_chunk_max=16384"])],
                         ids=["1.6.18", "1.6.18 slab_chunk_max=16k", "1.4.30 eager chunks"])
def test_report_requests_and_arrival_give_each_item_the_same_classes(settings):
    mix = _mix(settings)
    classes = slab_classes(settings)
    for item in [*list(mix)[::5], *(i for i in mix if i.item_size is not None or i.value > 12_000)]:
        report = build_report(settings, {item: 1})
        by_report = {c.slab_class.id: c.chunks for c in report.classes}
        by_requests = {c.id: n for c, n in zip(classes, class_chunks(chunk_requests(settings, [(item, 1)]), classes))
                       if n} if report.items else {}
        walked, stored = _walked(settings, {item: 1})
        assert by_report == by_requests == walked, item
        assert report.items == stored
    report = build_report(settings, mix)
    by_report = {c.slab_class.id: c.chunks for c in report.classes}
    requests = chunk_requests(settings, mix)
    assert by_report == {c.id: n for c, n in zip(classes, class_chunks(requests, classes)) if n}
    assert (by_report, report.items) == _walked(settings, mix)
    assert report.too_large == requests.too_large == 2
    assert report.total("chunks") > report.items + 20      # chunked items, many chunks each, are placed


def test_every_caller_places_through_the_one_pass(monkeypatch):
    """A spy planted in the pass's call of memcached's placement sees every caller place the
    chunked item; a caller with a placement of its own would leave it unseen."""
    seen = []
    real = placement_pass.place

    def spy(settings, key, value, flags=0, classes=None):
        seen.append((key, value))
        return real(settings, key, value, flags, classes)

    monkeypatch.setattr(placement_pass, "place", spy)
    big = Item(30, 700_000, 0, None)
    mix = {Item(10, 100, 0, None): 5, big: 2}
    settings = configure(P18, ["-m", "64"])
    callers = {
        "report": lambda: build_report(settings, mix, capacity=True),
        "optimize's requests": lambda: chunk_requests(settings, mix),
        "file order": lambda: FileOrder(settings)([big]),
        "extstore": lambda: extstore_report(configure(P18, ["-m", "64", "-o", "ext_path=/x:1g"]), mix, capacity=True),
        "compare": lambda: stored_items(settings, mix),
    }
    missed = []
    for name, call in callers.items():
        seen.clear()
        call()
        if (30, 700_000) not in seen:
            missed.append(name)
    assert missed == []
