"""slabcalc stats against three real memcached nodes started with different flags.

Each node gets known items; what ``slabcalc stats --server`` says per class,
per node and for the pool is checked against what was stored and against the
servers' own independent counters: ``lru_crawler metadump`` (each item's class
and size), ``stats`` ``bytes``/``curr_items`` and ``total_malloced``.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from helpers import doc
from memcached_server import MemcachedServer


NODES = {
    # defaults, with chunked items (values over slab_chunk_max)
    "a": (["-m", "64"], [(500, 100, 0), (200, 2000, 0), (2, 600000, 0)]),
    # no CAS, bigger -n, pages of chunk_size x perslab, and classes stats settings cannot show
    "b": (["-m", "64", "-C", "-n", "64", "-o", "no_slab_reassign,slab_sizes=128-256-512-1024-2048-4096-8192"],
          [(300, 50, 7), (100, 3000, 0)]),
    # small memory, no automove: small items deleted, then big items evict (calcification)
    "c": (["-m", "4", "-o", "slab_automove=0"], [(6000, 200, 0), (1500, 3000, 0)]),
}


@pytest.fixture(scope="module")
def pool(memcached):
    servers = {}
    try:
        for name, (args, loads) in NODES.items():
            srv = servers[name] = MemcachedServer(args, memcached=memcached)
            srv.start()
            for batch, (count, value, flags) in enumerate(loads):
                for i in range(count):
                    assert srv.set(f"{name}{batch}:{i:06d}", b"v" * value, flags=flags) == "STORED"
        for i in range(NODES["c"][1][0][0]):
            servers["c"].delete(f"c0:{i:06d}")
        servers["c"].set("c1:again", b"v" * 3000)   # one more eviction after the deletes
        yield servers
    finally:
        for srv in servers.values():
            srv.stop()


def stats_json(*servers, extra=()):
    return doc("stats", *extra, *[word for srv in servers for word in ("--server", f"127.0.0.1:{srv.port}")])


def metadump_by_class(srv):
    by_class = defaultdict(list)
    for item in srv.metadump():
        by_class[int(item["cls"])].append(int(item["size"]))
    return by_class


@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_each_node_against_its_items(pool, name):
    srv = pool[name]
    doc = stats_json(srv)
    server = srv.stats()
    totals = doc["totals"]
    # the server's own counters
    rows = doc["classes"]
    assert totals["curr_items"] == sum(r["items"] for r in rows) == int(server["curr_items"])
    assert totals["bytes"] == sum(r["requested_bytes"] for r in rows) == int(server["bytes"])
    assert totals["total_malloced"] == sum(r["page_bytes"] for r in rows) == \
        int(srv.slab_stats().totals["total_malloced"])
    assert not [n for n in doc["findings"] if "total_malloced" in n]
    # every item, by the metadump: its class and ntotal
    dumped = metadump_by_class(srv)
    rows = {r["class"]: r for r in doc["classes"]}
    for cls, sizes in dumped.items():
        row = rows[cls]
        assert row["items"] == len(sizes)
        assert row["requested_bytes"] == sum(sizes)
        if max(sizes) <= row["chunk_size"]:        # not chunked: one chunk per item
            assert row["used_chunks"] == len(sizes)
            assert row["chunk_waste"] == sum(row["chunk_size"] - s for s in sizes)
            assert row["used_bytes"] == row["chunk_size"] * len(sizes)
    for row in doc["classes"]:
        assert row["free_bytes"] == row["page_bytes"] - row["used_bytes"]
    assert doc["nodes"][0]["settings"]["release"] == srv.version()


def test_stored_counts(pool):
    a = stats_json(pool["a"])
    assert a["totals"]["curr_items"] == 500 + 200 + 2 and a["totals"]["evictions"] == 0
    b = stats_json(pool["b"])
    assert b["totals"]["curr_items"] == 300 + 100
    c = stats_json(pool["c"])
    big = 1500 + 1
    assert c["totals"]["curr_items"] + c["totals"]["evictions"] == big
    assert c["totals"]["evictions"] == sum(r["evicted"] for r in c["classes"]) == \
        int(pool["c"].stats()["evictions"]) > 0


def test_drift_only_where_the_settings_hide_an_option(pool):
    docs = {name: stats_json(srv) for name, srv in pool.items()}
    assert docs["a"]["nodes"][0]["drift"] == [] and docs["c"]["nodes"][0]["drift"] == []
    drift = docs["b"]["nodes"][0]["drift"]
    sizes = {128, 256, 512, 1024, 2048, 4096, 8192}
    assert drift and {d["chunk_size"] for d in drift} <= sizes | {524288}
    said = [line for line in docs["b"]["findings"] if "slab_sizes" in line]
    assert said and said[-1].endswith("action: give slabcalc the flags the node was started with, "
                                      "as options (stats -f ... -o slab_sizes=...), so the model is the node's")
    # and done so, the model is the node's: no drift
    again = stats_json(pool["b"], extra=tuple(NODES["b"][0]))       # memcached's flags, as options
    assert again["nodes"][0]["drift"] == []


def evict_now(pool):
    """One more big item on node c: its class evicts now, not only seconds ago (issue 31: one reading
    tells a class that evicts now by its tail being as young as its last victim)."""
    assert pool["c"].set("c1:now", b"v" * 3000) == "STORED"


def test_calcification_only_on_the_starved_node(pool):
    evict_now(pool)
    docs = {name: stats_json(srv) for name, srv in pool.items()}
    assert docs["a"]["nodes"][0]["calcification"] is None
    assert docs["b"]["nodes"][0]["calcification"] is None
    found = docs["c"]["nodes"][0]["calcification"]
    assert found.startswith("calcification: class 17 evicts now (") and "slab_automove is 0" in found, found
    # the deleted small items left class 6's pages free: the action names the release and the page to move
    assert "while class 6 holds 2 pages (about 2 of them free chunks)" in found, found
    version = docs["c"]["nodes"][0]["version"]
    assert found.endswith(f"action for memcached {version}: slabs automove 1 (now), or -o slab_automove=1 (at the "
                          "next start), or slabs reassign 6 17 (one page now)"), found


def test_the_pool_is_the_sum_of_its_nodes(pool):
    evict_now(pool)
    doc = stats_json(*pool.values())
    assert [n["node"] for n in doc["nodes"]] == [f"127.0.0.1:{s.port}" for s in pool.values()]
    assert {r["node"] for r in doc["classes"]} == {n["node"] for n in doc["nodes"]}
    for field in ("used_bytes", "bytes", "chunk_waste", "total_malloced", "curr_items", "evictions"):
        assert doc["totals"][field] == sum(n["totals"][field] for n in doc["nodes"])
    assert doc["totals"]["bytes"] == sum(int(s.stats()["bytes"]) for s in pool.values())
    assert doc["totals"]["curr_items"] == sum(int(s.stats()["curr_items"]) for s in pool.values())
    assert any(line.startswith(doc["nodes"][2]["node"] + ": calcification: ") for line in doc["findings"])


def test_sample_items_modelled_alone_match_the_server(pool):
    # node a never deleted or evicted: its items modelled on a fresh server are the server
    doc = stats_json(pool["a"], extra=["--read-items", "100000"])
    sample = doc["nodes"][0]["sample"]
    assert sample["totals"]["items"] == doc["totals"]["curr_items"]
    assert sample["totals"]["requested_bytes"] == doc["totals"]["bytes"]
    model = {r["class"]: r["used_chunks"] for r in sample["classes"]}
    assert model == {r["class"]: r["used_chunks"] for r in doc["classes"] if r["used_chunks"]}
    few = stats_json(pool["a"], extra=["--read-items", "10"])
    assert few["nodes"][0]["sample"]["totals"]["items"] == 10
