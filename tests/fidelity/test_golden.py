"""The model against data captured from real memcached builds (tests/data/golden).

Every class table, every refusal and every placement captured from the real
servers must come out of the model unchanged.  See tests/data/golden/README.md
for how the data was captured (copied from the project's shared golden set).
"""

from __future__ import annotations

import csv
import json
import shlex
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from slabcalc import Refused, configure, load_profile, place, slab_classes, vv_lines

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"

def _build(folder: str) -> tuple[str, int]:
    """A capture folder's (release, bits): ``1.4.24-i386`` is 1.4.24 built 32-bit."""
    release, _, variant = folder.partition("-")
    return release, 32 if variant == "i386" else 64


# Every capture folder is walked: adding a capture adds its tests.
BUILDS = {d.name: _build(d.name) for d in sorted(GOLDEN.iterdir()) if (d / "classes").is_dir()}


# Lines a started server prints that are not about its configuration.
NOISE = ("server listening", "Signal handled", "Exiting normally")


def _index(build: str) -> list[dict]:
    with open(GOLDEN / build / "classes" / "index.csv", newline="") as f:
        return list(csv.DictReader(f))


def _class_cases():
    for build in BUILDS:
        stderr = json.loads((GOLDEN / build / "classes" / "stderr.json").read_text())
        for row in _index(build):
            yield pytest.param(build, row, stderr[row["config"]], id=f"{build}:{row['config']}")


@pytest.mark.parametrize("build,row,captured", list(_class_cases()))
def test_class_table_and_refusals(build, row, captured):
    release, bits = BUILDS[build]
    profile = load_profile(release, bits=bits)
    args = shlex.split(row["args"])
    if row["started"] == "yes":
        settings = configure(profile, args)
        with open(GOLDEN / build / "classes" / row["csv"], newline="") as f:
            expected = [(int(r["class"]), int(r["chunk_size"]), int(r["perslab"])) for r in csv.DictReader(f)]
        got = [(c.id, c.chunk_size, c.perslab) for c in slab_classes(settings)]
        assert got[:len(vv_lines(settings))] == expected
        assert len(vv_lines(settings)) == int(row["n_classes"])
        # warnings memcached prints at start-up come out of the model too
        printed = [line for line in captured["stderr_without_slab_class_lines"].split("\n")
                   if line and not any(n in line for n in NOISE)]
        assert "\n".join(printed) == "\n".join(settings.warnings)
    else:
        with pytest.raises(Refused) as refused:
            configure(profile, args)
        assert refused.value.exit_status == int(row["exit_code"])
        if refused.value.exit_status > 0:  # a crash (SIGFPE) prints nothing to compare
            stream = captured[refused.value.stream if refused.value.stream == "stdout"
                              else "stderr_without_slab_class_lines"]
            message = refused.value.message.split("\n")
            assert stream.strip().split("\n")[-len(message):] == message


def _placement_cases():
    for build in BUILDS:
        for variant in ("default", "nocas"):
            path = GOLDEN / build / f"placement_{variant}.csv"
            if not path.exists():
                continue
            groups: dict[tuple, list[dict]] = defaultdict(list)
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    groups[(int(r["key_len"]), int(r["value_len"]), int(r["flags"]))].append(r)
            for (k, v, fl), rows in groups.items():
                yield pytest.param(build, variant, k, v, fl, rows, id=f"{build}:{variant}:k{k}:v{v}:f{fl}")


def test_golden_covers_every_placement_file():
    cases = list(_placement_cases())
    files = list(GOLDEN.glob("*/placement_*.csv"))
    assert len(BUILDS) >= 7 and len(files) >= 13
    assert len(cases) == 275 * len(files)  # the grid has 275 points


@pytest.mark.parametrize("build,variant,key_len,value_len,flags,rows", list(_placement_cases()))
def test_placement(build, variant, key_len, value_len, flags, rows):
    release, bits = BUILDS[build]
    settings = configure(load_profile(release, bits=bits), ["-C"] if variant == "nocas" else [])
    classes = slab_classes(settings)
    got = place(settings, key_len, value_len, flags, classes)
    response = rows[0]["response"]
    if response != "STORED":
        assert response == settings.profile.too_large
        assert got.status == "too_large"
        return
    assert got.item_size == int(rows[0]["stats_bytes_delta"])
    if rows[0]["metadump_size"]:
        assert got.item_size == int(rows[0]["metadump_size"])
        assert got.lru_class.id == int(rows[0]["metadump_cls"])
    # chunks per class, as `stats slabs` used_chunks moved
    assert Counter({c.class_id: 0 for c in got.chunks}) + Counter(c.class_id for c in got.chunks) == Counter(
        {int(r["class_id"]): int(r["used_chunks_delta"]) for r in rows})
    by_class = {int(r["class_id"]): r for r in rows}
    for chunk in got.chunks:
        assert int(by_class[chunk.class_id]["chunk_size"]) == chunk.chunk_size
    # the item is counted in its LRU class
    assert [int(r["class_id"]) for r in rows if r["items_number_delta"] == "1"] == [got.lru_class.id]
    # mem_requested: per chunk (stats slabs) or whole item under the LRU class (stats items)
    if settings.profile.mem_requested_stat == "slabs":
        requested = Counter()
        for chunk in got.chunks:
            requested[chunk.class_id] += chunk.requested
    else:
        requested = Counter({got.lru_class.id: got.item_size})
    for r in rows:
        if r["mem_requested_delta"]:
            assert int(r["mem_requested_delta"]) == requested[int(r["class_id"])]
    # a page allocated by this set costs what the model says a page of that class costs
    for r in rows:
        if r["total_pages_before"] == "0" and r["total_pages_after"] == "1" and len(rows) == 1:
            cls = classes[int(r["class_id"]) - 1]
            grown = int(r["total_malloced_after"]) - int(r["total_malloced_before"])
            assert grown == settings.page_length(cls.chunk_size, cls.perslab)
