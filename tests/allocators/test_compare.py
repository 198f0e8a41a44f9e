"""``slabcalc classes --allocator`` and ``slabcalc compare``.

Figures come from research/allocators.md's worked examples (the Varnish and
Redis tables of §2.3 and §3.3), its published class lists, ``slabcalc
report``'s own totals, and a real memcached's ``stats`` (hash table).
"""

from __future__ import annotations

import json
import time

import click
import pytest
from helpers import run
from memcached_server import MemcachedServer
from test_allocators import LARGE_3_6, LARGE_5, SMALL_3_6, SMALL_5

from slabcalc.allocators import ALLOCATORS
from slabcalc.analysis.process import hash_table_bytes
from slabcalc.cli import cli


def stores(result) -> dict[str, dict]:
    assert result.exit_code == 0, result.output
    return {row["store"].split(" (")[0]: row for row in json.loads(result.output)["stores"]}


# -- classes --allocator ---------------------------------------------------------------

def test_allocator_choice_lists_every_model():
    option = next(p for p in cli.get_command(None, "classes").params if p.name == "allocator")
    assert isinstance(option.type, click.Choice) and set(option.type.choices) == set(ALLOCATORS)


@pytest.mark.parametrize("name,first", [("jemalloc-5", SMALL_5 + LARGE_5), ("jemalloc-3.6", SMALL_3_6 + LARGE_3_6),
                                        ("jemalloc-5-redis", [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128]),
                                        ("glibc", [24, 40, 56, 72, 88])])
def test_classes_allocator_json(name, first):
    result = run("classes", "--allocator", name, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    sizes = [row["size"] for row in document["classes"]]
    assert sizes[:len(first)] == first
    assert [row["class"] for row in document["classes"]] == list(range(1, len(sizes) + 1))
    assert sizes[-2] < document["up_to"] == 1 << 20 <= sizes[-1]       # up to the class that holds -I


def test_classes_allocator_table_and_csv():
    result = run("classes", "--allocator", "jemalloc-5", "--format", "csv", "-I", "2m")
    lines = result.output.splitlines()
    assert lines[0] == "class,size,category,min_request,max_request,perslab,page_length,page_unused"
    assert lines[1] == "1,8,small,1,8,512,4096,0"
    assert lines[-1].split(",")[1:3] == [str(2 << 20), "large"]
    assert "4097,5120" in result.output          # §1.3: 4097 -> 5120


def test_classes_allocator_glibc_mmap():
    rows = json.loads(run("classes", "--allocator", "glibc", "--format", "json").output)["classes"]
    heap = [r for r in rows if r["category"] == "heap"]
    assert heap[-1]["page_length"] < 128 << 10 <= next(r for r in rows if r["category"] == "mmap")["page_length"]


def test_classes_allocator_refuses_vv():
    result = run("classes", "--allocator", "glibc", "--format", "vv")
    assert result.exit_code == 2 and "vv" in result.output


# -- compare ---------------------------------------------------------------------------

def test_compare_memcached_side_is_reports_own():
    report = json.loads(run("report", "examples/histogram.csv", "--format", "json").output)["totals"]
    memcached = stores(run("compare", "examples/histogram.csv", "--format", "json"))["memcached 1.6.45"]
    assert memcached["requested_bytes"] == report["requested_bytes"]
    assert memcached["allocated_bytes"] == report["page_bytes"]
    # 186736 items > 1.5 x 2^16 buckets: the hash table has doubled once (see the fidelity test)
    assert memcached["overhead_bytes"] == 8 << 17


def test_compare_every_store_holds_the_same_items():
    document = json.loads(run("compare", "examples/items.csv", "--format", "json").output)
    rows = {r["store"]: r for r in document["stores"]}
    assert rows["jemalloc 3.6"]["requested_bytes"] == rows["memcached 1.6.45"]["requested_bytes"]
    assert rows["glibc"]["requested_bytes"] == rows["jemalloc 5"]["requested_bytes"]
    assert document["items"] == 300


@pytest.mark.parametrize("body,counted,glibc_total", [(90, 618, 1240), (100, 628, 1240), (1000, 1528, 2136),
                                                      (4097, 4625, 5240), (100000, 100528, 101144)])
def test_compare_varnish_worked_examples(body, counted, glibc_total):
    """§2.3 (H = 400): what -s counts; under glibc (no slabs) the whole object's bytes."""
    csv = f"key,value\n10,{body}\n"
    row = stores(run("compare", "--varnish-allocator", "glibc", "--format", "json", "-", input=csv))["varnish -s malloc"]
    assert row["requested_bytes"] == counted
    assert row["total_bytes"] == glibc_total


def test_compare_varnish_jemalloc_hands_out_classes():
    """§2.3: segments of 528 and 100000 bytes are handed 640 + 114688 under jemalloc 5."""
    row = stores(run("compare", "--format", "json", "-", input="key,value\n10,100000\n"))["varnish -s malloc"]
    assert (row["requested_bytes"], row["allocated_bytes"]) == (100528, 640 + 114688)


def test_compare_varnish_chunked():
    """§2.2: unknown length -> 16 KiB segments, the last trimmed to its length."""
    csv = "key,value\n10,40000\n"
    row = stores(run("compare", "--varnish-chunked", "--format", "json", "-", input=csv))["varnish -s malloc"]
    assert row["requested_bytes"] == 528 + 16384 + 16384 + 7232
    row = stores(run("compare", "--varnish-chunked", "--fetch-chunksize", "64k", "--format", "json", "-",
                     input=csv))["varnish -s malloc"]
    assert row["requested_bytes"] == 528 + 40000


@pytest.mark.parametrize("value,real72,real70", [(90, 152, 152), (1000, 1080, 1080), (100000, 114744, 118840)])
def test_compare_redis_worked_examples(value, real72, real70):
    """§3.3 (key of 10 bytes): used_memory is the example plus the 4-bucket array (32 bytes)."""
    csv = f"key,value\n10,{value}\n"
    r72 = stores(run("compare", "--format", "json", "-", input=csv))["redis 7.2 strings"]
    r70 = stores(run("compare", "--redis", "7.0", "--format", "json", "-", input=csv))["redis 7.0 strings"]
    assert r72["allocated_bytes"] == real72 + 32 == r70["allocated_bytes"]
    assert r70["overhead_bytes"] - r72["overhead_bytes"] == real70 - real72      # the pad page


def test_compare_redis_ttl_adds_an_expires_entry_and_table():
    csv = "key,value\n10,90\n"
    plain = stores(run("compare", "--format", "json", "-", input=csv))["redis 7.2 strings"]
    ttl = stores(run("compare", "--redis-ttl", "--format", "json", "-", input=csv))["redis 7.2 strings"]
    assert ttl["allocated_bytes"] - plain["allocated_bytes"] == 24 + 32


def test_compare_leaves_out_what_memcached_refuses():
    document = json.loads(run("compare", "--format", "json", "-", input="key,value\n10,100\n10,2000000\n").output)
    assert (document["items"], document["too_large"]) == (1, 1)
    assert {r["requested_bytes"] for r in document["stores"][1:4]} == {document["stores"][0]["requested_bytes"]}


def test_compare_summary_table():
    result = run("compare", "examples/value_sizes.txt", "--key", "16", "--columns", "all")
    assert result.exit_code == 0
    assert result.output.splitlines()[0].split() == ["store", "requested_bytes", "allocated_bytes",
                                                     "overhead_bytes", "total_bytes", "waste_pct", "vs_memcached"]
    assert "-s malloc," in result.output and "-m 21 holds them all" in result.output


def test_compare_errors():
    assert run("compare", "--fetch-chunksize", "1k", "examples/items.csv").exit_code == 2
    bad = run("compare", "--strict", "-", input="key,value\n10,x\n")
    assert bad.exit_code == 1 and "<stdin>:2:" in bad.output
    assert run("compare", "no/such/file.csv").exit_code == 1


# -- memcached's hash table against a real server -------------------------------------------

def _hash(srv) -> tuple[int, int]:
    stats = srv.stats()
    return int(stats["hash_power_level"]), int(stats["hash_bytes"])


def test_hash_table_bytes_real_server(memcached):
    """``stats`` hash_bytes: 2^16 pointers at start; with -o hashpower=13 (12 is refused:
    not above the item lock table) the table doubles when the 12289th item (> 1.5 x 8192) is stored."""
    with MemcachedServer(["-m", "64"], memcached=memcached) as srv:
        for i in range(10):
            srv.set(f"k{i}", b"v")
        assert _hash(srv)[1] == hash_table_bytes(10)
    with MemcachedServer(["-m", "64", "-o", "hashpower=13"], memcached=memcached) as srv:
        for i in range(12288):
            srv.set(f"k{i}", b"v")
        time.sleep(0.2)
        assert _hash(srv) == (13, hash_table_bytes(12288, hashpower=13))
        srv.set("one-more", b"v")
        # the expansion runs on its own thread; while it migrates, hash_bytes counts the old table
        # beside the new one (2^13 + 2^14 pointers, seen once in CI): wait until it is done
        deadline = time.monotonic() + 5
        while (_hash(srv)[0] == 13 or srv.stats().get("hash_is_expanding") != "0") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _hash(srv) == (14, hash_table_bytes(12289, hashpower=13))


def test_compare_empty_input():
    document = json.loads(run("compare", "--format", "json", "-", input="key,value\n").output)
    assert document["items"] == 0
    assert all(r["total_bytes"] == 0 for r in document["stores"][1:])
