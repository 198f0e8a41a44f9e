"""report: per-class sums, row accounting, capacity rules, --vs, and the JSON contract.

The per-class figures are checked against a real server in
test_report_fidelity.py; here are the rules around them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from helpers import run

from slabcalc import configure, load_profile, place, slab_classes
from slabcalc.analysis.report import build_report
from slabcalc.inputs.items import Item
from slabcalc.model.capacity import fits
from slabcalc.model.item import max_value_length

S16 = configure(load_profile("1.6.45"))




def test_sums_follow_placement():
    # 3 identical items and one chunked item: chunks, requested bytes and pages add up
    small, big = Item(10, 100, 0, None), Item(16, 600_000, 0, None)
    report = build_report(S16, {small: 3, big: 1})
    classes = slab_classes(S16)
    p_small, p_big = place(S16, 10, 100, 0, classes), place(S16, 16, 600_000, 0, classes)
    assert report.total("requested_bytes") == 3 * p_small.item_size + p_big.item_size
    assert report.total("used_bytes") == 3 * p_small.memory + p_big.memory
    assert report.total("chunks") == 3 + len(p_big.chunks)
    assert report.items == 4
    by_class = {c.slab_class.id: c for c in report.classes}
    assert by_class[p_small.lru_class.id].items == 3 and by_class[39].items == 1
    assert all(c.pages == 1 and c.page_bytes == 1 << 20 for c in report.classes)


def test_free_bytes_are_what_a_loaded_server_leaves():
    """tests/data/stats/1.6.18-mixed.txt, captured from Debian's 1.6.18 after 1 000 items of 100-byte
    values, 300 of 2 000 and 3 of 600 000 (chunked), keys ``item:0``, ``item:1``, ...: the report of
    that mix has each class's pages, chunks and free bytes (its pages' bytes less its used chunks, read
    from ``stats slabs``), each LRU's items, and in all ``stats``' ``bytes``."""
    text = (Path(__file__).resolve().parents[1] / "data" / "stats" / "1.6.18-mixed.txt").read_text()
    stat = {name: int(value) for name, value in re.findall(r"^STAT (\S+) (\d+)\r?$", text, re.M)}
    mix = Counter(Item(len(f"item:{i}"), value, 0, None) for n, value in ((1000, 100), (300, 2000), (3, 600_000))
                  for i in range(n))
    report = build_report(configure(load_profile("1.6.18")), mix)
    assert report.total("requested_bytes") == stat["bytes"] == 2_587_075
    assert sorted(c.slab_class.id for c in report.classes) == [2, 4, 15, 31, 39]
    for c in report.classes:
        k = c.slab_class.id
        assert (c.pages, c.chunks) == (stat[f"{k}:total_pages"], stat[f"{k}:used_chunks"]), k
        assert c.free_bytes == stat[f"{k}:total_pages"] * (1 << 20) - stat[f"{k}:used_chunks"] * stat[f"{k}:chunk_size"]
        assert c.items == stat.get(f"items:{k}:number", 0), k


def test_pages_are_ceil_of_chunks_per_page():
    item = Item(10, 100, 0, None)
    cls = place(S16, 10, 100).lru_class
    for count, pages in ((1, 1), (cls.perslab, 1), (cls.perslab + 1, 2), (3 * cls.perslab, 3)):
        assert build_report(S16, {item: count}).classes[0].pages == pages


def test_page_length_of_1_4_24_is_chunks_times_perslab():
    s = configure(load_profile("1.4.24"))
    report = build_report(s, {Item(1, 10, 0, None): 1})
    (c,) = report.classes
    assert c.page_bytes == 96 * 10922 and c.free_bytes == 96 * 10921


def test_capacity_first_page_is_free_and_then_pages_fit_the_limit():
    # memcached grants a class's first page past -m, further pages while total + page <= -m
    assert fits([(1, 1 << 20), (1, 1 << 20)], 0)
    assert fits([(2, 1 << 20)], 2 << 20) and not fits([(3, 1 << 20)], 2 << 20)
    item = Item(10, 100, 0, None)
    perslab = place(S16, 10, 100).lru_class.perslab
    report = build_report(replace(S16, maxbytes=8 << 20, memory_limit_given=True), {item: 1}, capacity=True)
    assert report.capacity.items == 8 * perslab
    tiny = build_report(replace(S16, maxbytes=1, memory_limit_given=True), {item: 1},  # below one page:
                         capacity=True)                     # the first page still comes
    assert tiny.capacity.items == perslab


def test_item_size_input_places_by_total():
    # memcached's own sizes (metadump size=) are placed without adding overhead again
    report = build_report(S16, {Item(None, None, 0, 96): 2, Item(None, None, 0, 97): 1})
    assert [(c.slab_class.id, c.chunks) for c in report.classes] == [(1, 2), (2, 1)]
    assert report.total("requested_bytes") == 2 * 96 + 97


def test_report_cli_accounts_for_every_row():
    text = "key,value,count\n10,100,5\n10,2000000,2\nx,1,1\n12,100,0\n\n"
    doc = json.loads(run("report", "--format", "json", input=text).stdout)
    t = doc["totals"]
    assert t["rows"] == 4 == t["placed_rows"] + t["too_large_rows"] + t["rejected"]
    assert (t["placed_rows"], t["too_large_rows"], t["rejected"]) == (2, 1, 1)
    assert (t["items"], t["too_large"]) == (5, 2)
    assert {"rows", "items", "too_large", "rejected", "requested_bytes", "used_bytes", "chunk_waste",
            "page_bytes"} <= set(t)
    assert {"class", "chunk_size", "perslab", "items", "pages", "requested_bytes", "used_bytes", "chunk_waste",
            "page_bytes", "free_bytes"} <= set(doc["classes"][0])
    assert doc["rejections"][0]["line"] == 4


def test_report_what_if():
    text = "key,value\n" + "10,100\n" * 50 + "16,5000\n" * 10
    doc = json.loads(run("report", "--format", "json", "--vs", "-C", "--vs", "-f 1.08", "-m", "64",
                         input=text).output)
    rows = {r["options"]: r for r in doc["what_if"]}
    assert set(rows) == {"baseline", "-C", "-f 1.08"}
    assert rows["baseline"]["page_bytes_change"] == 0
    assert rows["-C"]["capacity"] >= rows["baseline"]["capacity"]
    bad = run("report", "--vs", "-f 1", input=text)
    assert bad.exit_code == 2 and "Factor must be greater than 1" in bad.output


def test_report_capacity_and_needed_m():
    text = "key,value\n10,100\n"
    doc = json.loads(run("report", "--format", "json", "-m", "8", input=text).output)
    assert doc["capacity"] == 8 * place(S16, 10, 100).lru_class.perslab
    assert doc["limiting_class"] == place(S16, 10, 100).lru_class.id
    doc = json.loads(run("report", "--format", "json", input=text).output)
    assert doc["capacity"] is None and doc["memory_limit_needed_mb"] == 2  # -I 1m needs -m >= 2 in 1.6


def test_report_strict_and_missing_file():
    bad = run("report", "--strict", input="key,value\n10,abc\n")
    assert bad.exit_code == 1 and "<stdin>:2" in bad.output and len(bad.output.strip().splitlines()) == 1
    missing = run("report", "no-such-file.csv")
    assert missing.exit_code == 1 and "no-such-file.csv" in missing.output


def test_unplaceable_configuration_is_not_counted_as_too_large():
    # 1.6.18 starts with slab_chunk_max=32 (bytes) but a chunk leaves no room for data
    import pytest

    from slabcalc.model.placement import Unplaceable

    s = configure(load_profile("1.6.18"), ["-o", "slab_chunk_max=32"])
    with pytest.raises(Unplaceable):
        build_report(s, {Item(10, 100, 0, None): 1})
    result = run("report", "--profile", "1.6.18", "--slab-chunk-max", "32", input="key,value\n10,100\n")
    assert result.exit_code == 1 and "no room for data" in result.output


def test_values_beyond_the_protocol_are_too_large():
    report = build_report(S16, {Item(10, 3_000_000_000, 0, None): 2})
    assert (report.items, report.too_large) == (0, 2)


def _report_of(text: str, settings, columns: bool, key_length=None):
    import io

    from slabcalc.inputs.items import read_items

    elements, _ = read_items(io.StringIO(text), "data.csv", key_length=key_length, columns=columns)
    elements = list(elements)
    report = build_report(replace(settings, maxbytes=64 << 20, memory_limit_given=True), elements, capacity=True)
    return elements, report


def test_columns_are_placed_as_their_items(monkeypatch):
    # read_items(columns=True) hands the column counter's rows out as numpy columns, sized and
    # summed in bulk by build_report; every figure must equal placing the same items one by one
    import random

    from slabcalc.inputs import items as inputs
    from slabcalc.inputs.items import ItemColumns

    monkeypatch.setattr(inputs, "BLOCK_SIZE", 4096)    # inputs of several blocks: the column counter reads them

    rng = random.Random(7)
    rows = [(rng.randint(1, 250), rng.choice([rng.randint(0, 2000), rng.randint(0, 3 << 20)]),
             rng.choice([0, 1, 2 ** 31, 2 ** 32 - 1])) for _ in range(3000)]
    csv = "key,value,flags\n" + "".join(f"{k},{v},{f}\n" for k, v, f in rows)
    sizes = "item_size\n" + "".join(f"{rng.randint(60, 900_000)}\n" for _ in range(2000))
    for release, args in (("1.2.8", []), ("1.4.24", []), ("1.4.27", []), ("1.4.39", []),
                          ("1.5.22", []), ("1.6.18", ["-C"]), ("1.6.45", ["-I", "2m"])):
        s = configure(load_profile(release), args)
        largest = min(slab_classes(s)[-1].chunk_size, s.item_size_max)
        edge = max_value_length(s, largest, 10)   # the biggest item of one chunk, and one byte more
        for text in (csv + f"10,{edge},0\n10,{edge + 1},0\n", sizes + f"{largest}\n{largest + 1}\n"):
            if text is sizes and release == "1.2.8":
                continue            # a text suffix makes some item sizes impossible
            bulk, fast = _report_of(text, s, columns=True)
            assert any(isinstance(e, ItemColumns) for e in bulk)
            _, slow = _report_of(text, s, columns=False)
            assert fast == slow, (release, args)
            assert fast.too_large or release != "1.2.8"


def test_columns_refuse_item_sizes_below_the_smallest_item():
    import pytest

    with pytest.raises(ValueError, match="item size 3 is smaller than the smallest possible item"):
        _report_of("item_size\n100\n3\n", S16, columns=True)


def test_tables_show_each_class_share_as_a_bar_and_csv_does_not():
    table = run("report", "--format", "github", "examples/items.csv").output.split("\n\n")[0].splitlines()
    assert table[0].split("|")[-2].strip() == "memory"
    shares = {}
    for line in table[2:-1]:                       # class rows; the total row has no bar
        cells = [c.strip() for c in line.split("|")[1:-1]]
        shares[float(cells[-2])] = cells[-1]
    from slabcalc.cli.output import bar

    assert shares and all(shown == bar(pct) for pct, shown in shares.items())
    csv_header = run("report", "--format", "csv", "examples/items.csv").output.splitlines()[0]
    assert "memory_pct" in csv_header and not csv_header.endswith(",memory")


def test_bar_is_the_share_in_eighths_of_ten_characters():
    from slabcalc.cli.output import bar

    assert bar(100) == "\u2588" * 10 and bar(0) == "" and bar(50) == "\u2588" * 5
    assert bar(1.25) == "\u258f" and bar(13.75) == "\u2588\u258d"


SIZED_CONFIGS = (("1.4.36", ["-o", "slab_chunk_max=65536", "-I", "2m"]),   # a text flags suffix
                 ("1.4.39", ["-o", "modern", "-I", "2m"]), ("1.5.22", []), ("1.6.18", ["-C"]),
                 ("1.6.18", ["-o", "slab_chunk_max=16384"]),
                 ("1.6.18", ["-o", "slab_sizes=100-300-900-16384", "-o", "slab_chunk_max=16384"]),
                 ("1.6.45", ["-I", "4m", "-f", "1.08"]))


def _sized_chunk_sizes(s, rng):
    """Sizes of chunked items: random ones, those where the value's length gains a digit, and
    those whose value leaves the last chunk nearly empty or nearly full."""
    largest = slab_classes(s)[-1].chunk_size
    empty = place(s, 16, 0).item_size
    edges = [empty + 10 ** k + d for k in range(4, 8) for d in range(-8, 9)]
    room = largest - s.profile.chunk_header    # value bytes (CRLF included) a full chunk holds
    edges += [empty - 2 + k * room + d for k in range(1, 5) for d in range(-3, 4)]   # a tail of 0, 1, 2 ... bytes
    sizes = [rng.randint(largest + 1, s.item_size_max) for _ in range(400)] + [largest + 1, s.item_size_max]
    return sorted({x for x in sizes + edges if largest < x <= s.item_size_max})


def test_sized_chunked_items_are_placed_in_bulk_as_place_places_each():
    # place_sized_chunks is place() over columns, for items known by size alone: every row it
    # places must be place()'s placement of item_for_size's item, and it must leave exactly the
    # sizes no item has (a text suffix grows by whole digits) to place(), which refuses them
    import random

    import numpy as np

    from slabcalc.analysis.report import item_for_size
    from slabcalc.model.placement import place_sized_chunks, sized_chunks_apply

    rng = random.Random(11)
    left_some = False
    for release, args in SIZED_CONFIGS:
        s = configure(load_profile(release), args)
        classes = slab_classes(s)
        assert sized_chunks_apply(s, classes, 16)
        sizes = _sized_chunk_sizes(s, rng)
        at = place_sized_chunks(s, classes, np.asarray(sizes), 16)
        for i, size in enumerate(sizes):
            one = place(s, *item_for_size(s, size, 16), 0, classes)
            assert bool(at.exact[i]) == (one.item_size == size), (release, size)
            left_some |= not at.exact[i]
            if not at.exact[i]:
                continue
            head, *body, tail = one.chunks if one.chunks[-1].role == "tail" else (*one.chunks, None)
            assert (int(at.header[i]), classes[int(at.header_class[i])].id) == (head.requested, head.class_id)
            assert int(at.full[i]) == len(body)
            assert all((c.requested, c.class_id) == (at.body, classes[at.body_class].id) for c in body)
            if tail is None:
                assert at.tail[i] == 0
            else:
                assert (int(at.tail[i]), classes[int(at.tail_class[i])].id) == (tail.requested, tail.class_id)
    assert left_some     # the text suffix's missing sizes were met
    for release, args in (("1.4.29", ["-o", "slab_chunk_max=65536", "-I", "2m"]), ("1.4.24", [])):
        s = configure(load_profile(release), args)   # eager chunks, and none at all: place() each
        assert not sized_chunks_apply(s, slab_classes(s), 16)


def test_reports_of_sized_chunked_items_equal_placing_each(monkeypatch):
    # build_report places chunked items known by size in bulk; the report, capacity under -m
    # included, must equal the one placing each item by itself (place(), proven on real servers)
    import random

    from slabcalc.analysis import bulk as bulk_sums
    from slabcalc.analysis import report

    rng = random.Random(12)
    for release, args in SIZED_CONFIGS:
        s = configure(load_profile(release), args)
        sizes = _sized_chunk_sizes(s, rng)
        sizes = [x for x in sizes if report.item_for_size(s, x, 16) and
                 place(s, *report.item_for_size(s, x, 16)).item_size == x]
        one_chunk = [rng.randint(80, 16384) for _ in range(50)]
        rows = [(Item(None, None, 0, x), rng.choice([0, 1, rng.randint(1, 10 ** 5)]), rng.randint(1, 3))
                for x in sizes + one_chunk]
        rng.shuffle(rows)
        for limit in (None, 256 << 20):
            sized = s if limit is None else replace(s, maxbytes=limit, memory_limit_given=True)
            bulk = build_report(sized, rows, capacity=True)
            with monkeypatch.context() as m:
                m.setattr(bulk_sums, "sized_chunks_apply", lambda *a: False)
                each = build_report(sized, rows, capacity=True)
            assert bulk == each, (release, args, limit)
            assert bulk.approximated == sum(n for item, n, _ in rows if item.item_size > s.largest_chunk)
