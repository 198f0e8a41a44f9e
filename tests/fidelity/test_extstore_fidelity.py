"""Extstore against the installed memcached (Debian's build has extstore): the ``-o ext_*`` options
start or are refused exactly as the server does, and items flushed to flash leave in RAM and on
flash what the model says (``stats``, ``stats slabs``, ``stats items``).  Fails under CI without
a server (``require_memcached``)."""

from __future__ import annotations

import json
import shlex
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import run
from memcached_server import MemcachedServer, run_vv

from slabcalc import Refused, configure
from slabcalc.analysis.extstore import extstore_report
from slabcalc.model.distribution import Item

# "{ext}" becomes a file of its own per flag set (memcached locks the file it opens)
VALID = [
    "-o ext_path={ext}:64m",
    "-o ext_page_size=8,ext_wbuf_size=2,ext_path={ext}:64m",
    "-o ext_path={ext}:64m,ext_item_size=1024,ext_item_age=0,ext_low_ttl=10,ext_max_frag=0.5",
    "-o ext_path={ext}:64m,ext_threads=2,ext_compact_under=2,ext_drop_under=1,ext_drop_unread",
    "-o ext_item_age=5,ext_item_size=100",                  # no ext_path: read, and storage stays off
    "-I 4m -o ext_path={ext}:64m",                          # -I equal to the write buffer
    "-o ext_page_size=4,ext_path={ext}:1g,ext_path={ext}b:20m",
    "-o ext_path={ext}:64m:default",
    "-o slab_automove_freeratio=0.5,ext_path={ext}:64m",
    "-o ext_path={ext}:64", "-o ext_path={ext}:0m",        # 1.6.18: no unit or 0 bytes: a file of no pages
]
INVALID = [
    "-I 8m -m 64 -o ext_path={ext}:64m",                    # -I above ext_wbuf_size
    "-U 11211 -o ext_path={ext}:64m",                       # UDP
    "-o ext_path={ext}:64m,ext_page_size=8",                # 1.6.18: page size after a path
    "-o ext_page_size=3,ext_path={ext}:64m",                # not divisible by the write buffer
    "-o ext_page_size=6,ext_wbuf_size=3,ext_path={ext}:64m",   # not a multiple of 2 MiB
    "-o ext_page_size=2,ext_wbuf_size=2,ext_path={ext}:200g",  # 102 400 pages
    "-o ext_path", "-o ext_path={ext}", "-o ext_item_size=abc", "-o ext_max_frag",
    "-o ext_path={ext}:64m:lowttl", "-o ext_path={ext}:64m:bogus", "-o ext_wbuf_size=-2",
    "-o ext_page_size=0,ext_path={ext}:64m",                # SIGFPE
    "-o ext_page_size=4096,ext_path={ext}:64m",             # 4096 MB wraps an unsigned int to 0: SIGFPE
    "-o ext_wbuf_size=0,ext_path={ext}:64m",
]


def _args(flags: str, tmp_path) -> list[str]:
    return shlex.split(flags.replace("{ext}", str(tmp_path / "ext")))


@pytest.fixture(scope="module")
def started(memcached, tmp_path_factory):
    flag_sets = VALID + INVALID
    dirs = {f: tmp_path_factory.mktemp("ext") for f in flag_sets}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = pool.map(lambda f: run_vv(_args(f, dirs[f]), memcached=memcached), flag_sets)
        return {f: (r, dirs[f]) for f, r in zip(flag_sets, results)}


@pytest.mark.parametrize("flags", VALID + INVALID)
def test_extstore_options_start_or_are_refused_as_the_server(flags, profile, started, memcached):
    server, tmp = started[flags]
    args = _args(flags, tmp)
    try:
        settings = configure(profile, args)
    except Refused as refused:
        assert not server.started, f"model refuses {args} ({refused.message}) but memcached started"
        assert refused.exit_status == server.exit_code, server.stderr
        printed = (server.stdout + server.stderr).replace(memcached, "memcached").splitlines()
        for line in refused.message.splitlines():
            assert line in printed
        return
    assert server.started, f"model accepts {args} but memcached refused: {server.stderr.strip()}"
    assert (settings.extstore is not None) == ("ext_path=" in flags)


def _settle(srv, key: str = "extstore_objects_written", quiet: float = 2.5, timeout: float = 30.0) -> dict:
    """``stats`` once ``key`` has not moved for ``quiet`` seconds (the write thread is done)."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        stats = srv.stats()
        if stats[key] != last:
            last, since = stats[key], time.monotonic()
        elif time.monotonic() - since >= quiet:
            return stats
        time.sleep(0.25)
    raise AssertionError(f"{key} still moving after {timeout} s")


LOAD = [   # (key prefix, value bytes, count, flags): one size per flash bucket keeps the order moot
    ("big", 1000, 10_000, 0),        # 1 067-byte items: class 12, flushed, 77-byte headers in class 1
    ("sml", 100, 500, 0),            # below ext_item_size: stays in RAM
    ("flg", 3000, 300, 7),           # flags: a 4-byte suffix on the item and on its header
    ("chk", 600_000, 6, 0),          # chunked: written whole to the chunked bucket's own pages
]


def test_flushed_items_leave_what_the_model_says(memcached, profile, tmp_path):
    """Every eligible item goes to flash (ext_item_age=0): per class the server's used chunks,
    items and mem_requested, and its extstore_* counters, equal the model's."""
    args = ["-m", "64", "-o", f"ext_page_size=8,ext_wbuf_size=2,ext_path={tmp_path / 'f'}:64m,"
            "ext_item_age=0,slab_automove=0"]
    settings = configure(profile, args)
    distribution = {}
    with MemcachedServer(args, memcached=memcached) as srv:
        for prefix, value, count, flags in LOAD:
            for i in range(count):
                key = f"{prefix}{i:05d}"
                assert srv.set(key, b"v" * value, flags=flags) == "STORED"
                item = Item(len(key), value, flags, None)
                distribution[item] = distribution.get(item, 0) + 1
        stats = _settle(srv)
        slabs, items = srv.slab_stats().per_class, srv.item_stats()
        said = run("stats", "--server", f"127.0.0.1:{srv.port}").output   # slabcalc stats says why bytes is big
        dump = {row["key"]: row for row in srv.metadump()}
    model = extstore_report(settings, distribution)
    flash = model.flash
    assert int(stats["extstore_objects_written"]) == flash.objects == 10_306
    assert int(stats["extstore_bytes_written"]) == flash.bytes_used
    assert int(stats["extstore_pages_used"]) == flash.pages_used
    assert int(stats["extstore_page_allocs"]) == flash.pages
    assert int(stats["extstore_bytes_fragmented"]) == flash.bytes_fragmented
    assert int(stats["bytes"]) == model.stats_bytes           # still the items' whole sizes
    assert int(stats["curr_items"]) == model.items
    server = {cls: (row["used_chunks"], items.get(cls, {}).get("number", 0), items.get(cls, {}).get("mem_requested", 0))
              for cls, row in slabs.items() if row["used_chunks"]}
    ours = {row.slab_class.id: (row.chunks, row.items, row.mem_requested) for row in model.ram.classes}
    assert server == ours
    by_class = {row.class_id: row for row in model.classes}
    assert by_class[12].flash_items == 10_000 and by_class[12].ram_items == 0
    # every header (77 bytes, 81 with the flags suffix) lives in class 1 (96-byte chunks)
    assert by_class[1].header_items == 10_306 and by_class[1].flash_items == 0
    assert by_class[4].ram_items == 500 and by_class[4].flash_items == 0
    assert "10306 items" in said and "count them whole" in " ".join(said.split())
    # metadump: a flushed item is listed in its header's class at its whole size
    assert (dump["big00000"]["cls"], dump["big00000"]["size"]) == ("1", "1067")


def test_a_file_of_one_page_is_never_written(memcached, profile, tmp_path):
    """Issue 30: ``place`` said such an item stays in RAM because "class 12 is below class 9".  A 64 MiB
    file under the default 64 MiB ext_page_size is one page, page 0, which extstore never puts on its
    free list (1.6.18 extstore.c 343-355): memcached writes nothing, whatever the item's class."""
    args = ["-m", "64", "-o", f"ext_path={tmp_path / 'f'}:64m,ext_item_age=0,slab_automove=0"]
    placed = json.loads(run("place", "--key", "8", "--value", "1000", "--profile", profile.release,
                            "--format", "json", *args).output)
    if profile.extstore.reserved_pages:
        assert placed["extstore"]["stays_in_ram"] == "no_flash_page" and not placed["extstore"]["flushed"]
    with MemcachedServer(args, memcached=memcached) as srv:
        srv.set_many((f"big{i:05d}" for i in range(2_000)), b"v" * 1000)
        stats = _settle(srv, quiet=1.5)
    assert int(stats["curr_items"]) == 2_000
    assert (int(stats["extstore_objects_written"]) == 0) == (placed["extstore"]["stays_in_ram"] == "no_flash_page")
