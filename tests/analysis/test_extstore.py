"""Extstore arithmetic and its command line.  Figures are worked by hand from memcached's source
(storage.c, extstore.c) and the ones the server shows in test_extstore_fidelity.py."""

from __future__ import annotations

import json

import pytest
from helpers import run

from slabcalc import Refused, configure, load_profile
from slabcalc.analysis.extstore import extstore_report
from slabcalc.model.distribution import Item
from slabcalc.model.extstore import pack

P18, P45 = load_profile("1.6.18"), load_profile("1.6.45")
SMALL = "ext_page_size=8,ext_wbuf_size=2"


def test_a_flushed_item_leaves_a_header_of_its_key_and_twelve_bytes():
    """The issue's figure: key 8, value 1000 is a 1 067-byte item in class 12; flushed, a 77-byte
    header (48 + 8 CAS + 9 key + 12 item_hdr) in class 1."""
    settings = configure(P18, ["-o", "ext_path=/x:1g"])
    ext = extstore_report(settings, {Item(8, 1000, 0, None): 3})
    rows = {row.class_id: row for row in ext.classes}
    assert rows[12].flash_items == 3 and rows[12].flash_bytes == 3 * 1067
    assert rows[1].header_items == 3 and ext.ram.classes[0].requested_bytes == 3 * 77
    assert ext.stats_bytes == 3 * 1067                # stats bytes: the whole items


def test_write_buffers_are_never_straddled():
    """2 MiB buffers of 1 067-byte items: 1 965 each, 497 bytes lost; 4 buffers per 8 MiB page."""
    settings = configure(P18, ["-o", f"{SMALL},ext_path=/x:64m"])
    flash = pack(settings.extstore, [[(1067, 10_000)]])
    assert flash.wbufs == 6 and flash.pages == 2 and flash.wbuf_waste == 5 * 497
    assert flash.pages_used == 3                      # page 0 counted used, never written (1.6.18)
    assert flash.bytes_fragmented == 3 * 8 * 2**20 - 10_670_000
    two = pack(settings.extstore, [[(1067, 1964), (2000, 2)]])   # 1 564 bytes left: 2 000 does not fit
    assert (two.wbufs, two.wbuf_waste) == (2, 2 * 2**20 - 1964 * 1067)


def test_buckets_open_their_own_pages():
    settings = configure(P18, ["-o", f"{SMALL},ext_path=/x:64m"])
    assert pack(settings.extstore, [[(1067, 10)], [(600_080, 2)]]).pages == 2


def test_release_differences_are_profile_data():
    s18 = configure(P18, ["-o", "ext_path=/x:6400m"]).extstore
    s45 = configure(P45, ["-o", "ext_path=/x:6400m"]).extstore
    assert (s18.page_count, s18.usable_pages, s18.compact_under, s18.wbuf_bytes) == (100, 99, 25, 4 * 4 * 2**20)
    assert (s45.page_count, s45.usable_pages, s45.compact_under, s45.wbuf_bytes) == (100, 100, 1, 6 * 4 * 2**20)
    configure(P45, ["-o", "ext_path=/x:64m,ext_page_size=8"])          # 1.6.45 counts pages at the end
    with pytest.raises(Refused, match="before any ext_path"):
        configure(P18, ["-o", "ext_path=/x:64m,ext_page_size=8"])
    with pytest.raises(Refused, match="zero size"):
        configure(P45, ["-o", "ext_path=/x:0m"])
    with pytest.raises(Refused, match=r"\(m\|g\|t\|p supported\)"):
        configure(P45, ["-o", "ext_path=/x:64"])


def test_1_6_38_counts_pages_as_it_reads_but_refuses_as_1_6_45():
    """Debian's 1.6.38 storage.c: pages counted as ext_path is read (1262-1269), so an ext_page_size
    after it is refused (1383-1386) and a path of no whole page is refused there, exit 1 (1265-1268);
    an unknown unit is refused naming M|G|T|P (1258); any bucket name (1277-1294); six buckets, page 0
    used and compaction under 1% as 1.6.45 (storage.c 14-21, 1574-1579; extstore.c as 1.6.45's).
    Each refusal was checked against a 1.6.38 built from that source (test_extstore_fidelity.py
    with $SLABCALC_MEMCACHED naming it)."""
    p38 = load_profile("1.6.38")
    s38 = configure(p38, ["-o", "ext_path=/x:6400m"]).extstore
    assert (s38.page_count, s38.usable_pages, s38.compact_under, s38.wbuf_bytes) == (100, 100, 1, 6 * 4 * 2**20)
    with pytest.raises(Refused, match="before any ext_path"):
        configure(p38, ["-o", "ext_path=/x:64m,ext_page_size=8"])
    with pytest.raises(Refused, match="zero size") as zero:
        configure(p38, ["-o", "ext_path=/x:0m"])
    assert zero.value.exit_status == 1 and "failed to parse ext_path argument" in zero.value.message
    with pytest.raises(Refused, match=r"\(M\|G\|T\|P supported\)"):
        configure(p38, ["-o", "ext_path=/x:64"])
    assert configure(p38, ["-o", "ext_path=/x:64m:lowttl"]).extstore is not None
    with pytest.raises(Refused, match="only presently supports the default bucket"):
        configure(P18, ["-o", "ext_path=/x:64m:lowttl"])


def test_classes_below_ext_item_size_stay_and_so_does_a_file_of_no_usable_page():
    settings = configure(P18, ["-o", "ext_item_size=2000,ext_path=/x:1g"])
    ext = extstore_report(settings, {Item(8, 1000, 0, None): 5, Item(8, 3000, 0, None): 2})
    assert {r.class_id: (r.ram_items, r.flash_items) for r in ext.classes} == {12: (5, 0), 17: (0, 2), 1: (0, 0)}
    # 1.6.18, default 64 MiB pages, a 64 MiB file: its one page is page 0, never written
    empty = configure(P18, ["-o", "ext_path=/x:64m"])
    ext = extstore_report(empty, {Item(8, 1000, 0, None): 5})
    assert ext.flash.objects == 0 and ext.classes[0].ram_items == 5


def test_capacity_of_a_ram_and_flash_pair():
    """The static figures: -m 64 of 77-byte headers: 64 pages x 10 922; 127 usable 8 MiB pages x 4 x
    1 965 on flash.  A full server of them is past what is replayed (analysis/extstore_fill.py
    FILL_LIMIT): the static capacity stands, and the hash table is sized for it."""
    settings = configure(P18, ["-m", "64", "-o", f"{SMALL},ext_path=/x:1g"])
    cap = extstore_report(settings, {Item(8, 1000, 0, None): 1}, capacity=True, refill=True).capacity
    assert (cap.ram_items, cap.flash_items, cap.items, cap.limited_by, cap.fill) == (699_008, 998_220, 699_008,
                                                                                     "RAM", None)
    small = configure(P18, ["-m", "64", "-o", f"{SMALL},ext_path=/x:64m"])
    cap = extstore_report(small, {Item(8, 1000, 0, None): 1}, capacity=True).capacity
    assert (cap.flash_items, cap.ram_items) == (7 * 4 * 1965, 699_008)
    assert (cap.items, cap.limited_by, cap.ram.items) == (1, "input", 1)      # one item, replayed: held


def test_report_json_contract_and_row_accounting(tmp_path):
    data = tmp_path / "mix.csv"
    data.write_text("key,value,flags,count\n10,100,0,50\n12,1000,0,200\n12,3000,7,30\n16,2000000,0,4\nx,1,0,1\n")
    result = run("report", str(data), "--profile", "1.6.18", "--format", "json",
                 "-o", f"{SMALL},ext_path=/x:1g")
    assert result.exit_code == 0, result.output          # a rejected row is said on stderr
    doc = json.loads(result.stdout)
    t = doc["totals"]
    assert t["rows"] == 5 == t["placed_rows"] + t["too_large_rows"] + t["rejected"]
    assert (t["placed_rows"], t["too_large_rows"], t["rejected"]) == (3, 1, 1)
    assert (t["ram_items"], t["header_items"], t["flash_items"]) == (50, 230, 230)
    # 48 + 8 CAS + 13 key + value + 2 (+ 4 flags suffix): 1 071 and 3 075 bytes
    assert t["flash_bytes"] == 200 * 1071 + 30 * 3075 and t["flash_pages"] == 1
    assert t["ram_bytes"] == t["page_bytes"] == 2 * 2**20           # class 1 (headers) and class 4
    rows = {r["class"]: r for r in doc["classes"]}
    assert rows[12]["flash_items"] == 200 and rows[12]["used_chunks"] == 0     # 1 071 bytes: class 12
    assert rows[1]["header_items"] == 230 and rows[1]["mem_requested"] == 200 * 81 + 30 * 85
    assert doc["extstore"]["ext_path_bytes_needed"] == 2 * 8 * 2**20     # page 0 and one page


def test_report_table_and_place_say_where_items_go(tmp_path):
    data = tmp_path / "mix.csv"
    data.write_text("key,value\n12,1000\n10,100\n")
    text = run("report", str(data), "--profile", "1.6.18", "-m", "64", "-o", f"{SMALL},ext_path=/x:1g").stdout
    assert "flash_items" in text and "header items" in text and "holds all 2 items, none evicted" in text
    place = run("place", "--key", "8", "--value", "1000", "--profile", "1.6.18", "-m", "64",
                "-o", f"{SMALL},ext_path=/x:1g").stdout
    assert "77-byte header item in class 1" in place and "1965 per 2 MiB write buffer" in place
    assert "699008 such items" in place


@pytest.mark.parametrize("options, says", [
    ("ext_page_size=3,ext_path=/x:64m", "page_size must be divisible by wbuf_size"),
    ("ext_path", "missing argument to ext_path"),
])
def test_refusals_are_one_line(options, says):
    result = run("report", "-", "--profile", "1.6.18", "-o", options, input="key,value\n1,1\n")
    assert result.exit_code == 2 and says in result.output and len(result.output.strip().splitlines()) == 1


def test_node_plans_do_not_pretend_to_model_extstore():
    result = run("report", "-", "--nodes", "2", "-o", "ext_path=/x:1g", input="key,value\n1,1000\n")
    assert result.exit_code == 2 and "without extstore" in result.output


def test_place_gives_the_true_reason_an_item_stays_in_ram():
    # issue 30: under a one-page file place said "class 12 is below class 9"
    one_page = run("place", "--key", "8", "--value", "1000", "--profile", "1.6.18", "-o", "ext_path=/x:64m").stdout
    assert "is below class" not in one_page
    assert "ext_path holds 1 page of 64 MiB (ext_page_size) and memcached writes to none" in " ".join(one_page.split())
    small = run("place", "--key", "8", "--value", "100", "--profile", "1.6.18", "-o", "ext_path=/x:1g").stdout
    assert "class 4 is below class 9 (ext_item_size 512)" in small
    doc = json.loads(run("place", "--key", "8", "--value", "1000", "--profile", "1.6.18", "-o", "ext_path=/x:1g",
                         "--format", "json").stdout)
    assert doc["extstore"]["stays_in_ram"] is None and doc["extstore"]["flushed"]


def test_the_write_buffers_are_one_figure_with_one_name():
    """report states extstore's write buffers once: the bytes the buffers written to hold, named alike in the
    "outside -m" line and in the process memory (it said "4 write buffers of 4m = 16777216" beside
    "0 extstore wbufs").  The 1.6.18 default has 4 page buckets (4 buffers calloc'd at start-up, extstore.c
    393-401); this fill writes one bucket, so one 4 MiB buffer is touched (extstore.c 454-511)."""
    import re

    from helpers import ROOT, doc, run

    args = (str(ROOT / "examples" / "extstore-issue.csv"), "--profile", "1.6.18", "-m", "64",
            "-o", "ext_path=/tmp/ext.data:1g")
    result = run("report", *args, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    outside = re.search(r"outside -m (\d+) bytes of extstore write buffers: (\d+) of the (\d+) calloc'd", text)
    process = re.search(r"\+ (\d+) extstore write buffers \+", text)
    assert outside and process, text
    assert int(outside.group(1)) == int(process.group(1)) == 4 << 20
    assert (int(outside.group(2)), int(outside.group(3))) == (1, 4)
    assert "wbufs" not in text and "write buffers of 4m =" not in text
    parts = doc("report", *args)["process"]["parts"]
    assert parts["extstore_write_buffers"] == 4 << 20 and "extstore_wbufs" not in parts


def test_each_storage_variant_a_profile_can_name_is_a_class_and_each_release_gets_its_own():
    """extstore.replay names a release's write thread and automover (validated choices,
    model/profile/data.py REPLAY_KEYS); the engines hold one class for each name, no more."""
    from slabcalc.engines.extstore import Storage
    from slabcalc.engines.extstore_automove import AUTOMOVERS, ExtstoreAutomover, NowAgeExtstoreAutomover
    from slabcalc.engines.extstore_write import WRITE_THREADS, LaterStorage
    from slabcalc.model.profile.data import REPLAY_KEYS

    assert set(WRITE_THREADS) == set(REPLAY_KEYS["write_target"][2])
    assert set(AUTOMOVERS) == set(REPLAY_KEYS["automove"][2])
    for release, thread, automover in (("1.6.18", Storage, ExtstoreAutomover),
                                       ("1.6.45", LaterStorage, NowAgeExtstoreAutomover)):
        replay = load_profile(release).extstore.replay
        assert WRITE_THREADS[replay["write_target"]] is thread, release
        assert AUTOMOVERS[replay["automove"]] is automover, release
