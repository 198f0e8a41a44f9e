"""Public trace formats for ``simulate``: libCacheSim's oracleGeneral (binary, a get and a set on a
miss per request) and Meta's MetaKV CSV (op_time, op_count).  Samples are made here; the
oracleGeneral replay is checked against the real server, request by request."""

from __future__ import annotations

import random
import struct

import pytest

from helpers import doc, run
from memcached_server import MemcachedServer
from test_simulate_fidelity import COMPAT, by_the_servers_second, replayed_counts, simulated_counts

from slabcalc import configure
from slabcalc.engines.simulate import simulate
from slabcalc.inputs.traces import read_oracle_general
from slabcalc.model.ops import FILL

RECORD = struct.Struct("<IQIq")    # libCacheSim oracleGeneral: clock_time, obj_id, obj_size, next_access_vtime


def oracle_general(path, requests) -> None:
    path.write_bytes(b"".join(RECORD.pack(t, obj, size, -1) for t, obj, size in requests))


def _doc(*args) -> dict:
    return doc("simulate", *args)


def test_each_request_is_a_get_and_a_set_on_a_miss(tmp_path):
    """A, B, A, C, A: three misses (each then stored), two hits; a record below the key is rejected."""
    path = tmp_path / "tiny.oracleGeneral"
    oracle_general(path, [(1, 1, 116), (1, 2, 216), (2, 1, 116), (3, 3, 1016), (4, 1, 116), (5, 4, 10)])
    doc = _doc(str(path), "--profile", "1.6.18")
    t, i = doc["totals"], doc["input"]
    assert (t["cmd_get"], t["get_hits"], t["get_misses"], t["cmd_set"], t["curr_items"]) == (5, 2, 3, 3, 3)
    assert (i["rows"], i["rejected"]) == (6, 1) and "16-byte key" in i["format"]
    # --key 100 splits obj_size differently: the 116-byte object has a 16-byte value
    classes = {c["class"]: c["items"] for c in _doc(str(path), "--profile", "1.6.18", "--key", "100")["classes"]}
    assert sum(classes.values()) == 3


def test_truncated_and_misnamed_files_are_one_line(tmp_path):
    path = tmp_path / "cut.oracleGeneral"
    path.write_bytes(RECORD.pack(1, 1, 100, -1) * 3 + b"\x01\x02\x03")
    result = run("simulate", str(path))
    assert result.exit_code == 1 and "truncated oracleGeneral record at byte 72 (3 of 24 bytes)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    csv = tmp_path / "ops.csv"
    csv.write_text("time,op,key,value_size\n0,set,a,10\n")
    assert run("simulate", str(csv), "--input-format", "twitter").exit_code == 1


def test_metakv_rows_of_many_operations(tmp_path):
    path = tmp_path / "kvcache.csv"
    path.write_text("op_time,key,key_size,op,op_count,size,cache_hits,ttl\n"
                    "1,a,10,SET,1,100,0,0\n2,a,10,GET,3,100,0,0\n3,b,10,GET,1,0,0,0\n4,c,10,GET_LEASE,1,0,0,0\n")
    doc = _doc(str(path), "--profile", "1.6.18")
    t, i = doc["totals"], doc["input"]
    assert (t["cmd_set"], t["cmd_get"], t["get_hits"], t["get_misses"]) == (1, 4, 3, 1)
    assert (i["rows"], i["rejected"], i["format"]) == (4, 1, "csv (MetaKV)")   # GET_LEASE: not replayed


def _zipf_requests(n: int = 8000, objects: int = 5000, seconds: int = 3, seed: int = 11):
    rng = random.Random(seed)
    weights = [1 / (rank + 1) ** 0.8 for rank in range(objects)]
    sizes = {obj: 16 + rng.choice([200, 700, 1500, 3000]) for obj in range(objects)}
    chosen = rng.choices(range(objects), weights, k=n)
    return [(i * seconds // n, obj, sizes[obj]) for i, obj in enumerate(chosen)]


def _replay_fill(server: MemcachedServer, ops) -> None:
    """Each request on the server's clock: get, and on a miss a set of the object."""
    for _, batch in by_the_servers_second(server, ops):
        for _, _, obj, key_size, value_size, _, _ in batch:
            key = b"%0*d" % (key_size, obj)
            server._send(b"get %s\r\n" % key)
            line, hit = server._readline(), False
            while line != "END":
                hit = True
                server._readline()
                line = server._readline()
            if not hit:
                server._send(b"set %s 0 0 %d\r\n%s\r\n" % (key, value_size, b"v" * value_size))
                assert server._readline() == "STORED"


def test_oracle_general_replay_equals_the_server(memcached, profile, tmp_path):
    """-m 2, the exact (compat) model: hits, misses, evictions and every class's counts equal the
    real server's when the trace is replayed into it the same way."""
    path = tmp_path / "zipf.oracleGeneral"
    # 1 200 requests a second, each a round trip (a get, and a set on a miss): about 0.3 s of the
    # server's second here, room for a machine running at half its speed (8 000 in 3 s took 0.7 s
    # a second, and a slow moment in CI spilled past the server's tick)
    oracle_general(path, _zipf_requests(n=6000, seconds=5))
    args = ["-m", "2", "-o", COMPAT]
    settings = configure(profile, args)
    with open(path, "rb") as stream:
        ops = list(read_oracle_general(stream, str(path))[0])
    sim = simulate(settings, ops, lru="compat")
    assert sim.totals.evicted > 0 and sim.totals.hits > 0
    assert simulated_counts(sim) == replayed_counts(memcached, args, ops, send=_replay_fill)


def test_parquet_traces_replay_as_their_csv(tmp_path):
    """A Parquet trace with twitter/cache-trace's column names (timestamp, key, key_size, value_size,
    client_id, operation, ttl), read through DuckDB, replays exactly as the same rows in CSV; a bad
    row is named by its place in the file, and counted."""
    duckdb = pytest.importorskip("duckdb")
    rng = random.Random(8)
    rows = [(i // 100, f"k{rng.randrange(3000)}", 12, rng.choice([100, 900, 5000]), 7,
             rng.choice(["get", "set", "set", "delete"]), rng.choice([0, 0, 5])) for i in range(20_000)]
    rows[500] = (5, "bad", 12, -3, 7, "set", 0)
    names = "timestamp,key,key_size,value_size,client_id,operation,ttl"
    csv_path = tmp_path / "trace.csv"
    csv_path.write_text(names + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    parquet = tmp_path / "trace.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_csv_auto('{csv_path}')) TO '{parquet}' (FORMAT parquet)")
    from_parquet, from_csv = _doc(str(parquet), "-m", "2"), _doc(str(csv_path), "-m", "2")
    assert from_parquet["totals"] == from_csv["totals"] and from_parquet["classes"] == from_csv["classes"]
    assert from_parquet["totals"]["evictions"] > 0
    i = from_parquet["input"]
    assert (i["rows"], i["rejected"], i["format"]) == (20_000, 1, "parquet, read through DuckDB")
    assert i["rejections"][0]["line"] == 502 == from_csv["input"]["rejections"][0]["line"]
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(parquet.read_bytes()[:300])
    result = run("simulate", str(corrupt))
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {corrupt}: DuckDB: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_no_calcification_when_no_other_class_holds_memory(tmp_path):
    """Issue 30: a Zipf trace whose every class evicts left nothing held elsewhere, yet simulate said
    "classes 7, 12, 17, 22 evicted ... while other classes held 0 bytes" (from a transient peak while
    classes still filled their first pages)."""
    rng = random.Random(4)
    objects, n = 20_000, 60_000
    weights = [1 / (rank + 1) ** 0.8 for rank in range(objects)]
    sizes = {obj: rng.choice([300, 1000, 3000, 9000]) for obj in range(objects)}
    chosen = rng.choices(range(objects), weights, k=n)
    path = tmp_path / "zipf.oracleGeneral"
    oracle_general(path, [(i * 30 // n, obj, sizes[obj]) for i, obj in enumerate(chosen)])
    doc = _doc(str(path), "--profile", "1.6.18", "-m", "8")
    evicting = [c for c in doc["classes"] if c["evicted"]]
    assert {c["class"] for c in evicting} == {c["class"] for c in doc["classes"] if c["items"]}   # every class
    assert all(c["free_chunks"] == 0 for c in doc["classes"] if not c["evicted"])
    assert doc["calcification"] is None


def test_records_read_in_batches_are_the_records_read_one_by_one(tmp_path, monkeypatch):
    # a batch of good records is read by numpy at once (traces._clean_batch), any other record by
    # record: with batches of 7 records, bad ones among them, the requests and the rejections are
    # the ones written down here, wherever the batches fall
    import slabcalc.inputs.traces as traces

    monkeypatch.setattr(traces, "BATCH", 7)
    rng = random.Random(5)
    records, want, bad = [], [], []
    clock = 1
    for n in range(1, 301):
        kind = rng.random() if n > 1 else 1.0
        if kind < 0.05:
            records.append((clock - 1, 9, 500))           # time goes backwards
            bad.append((n, "time goes backwards"))
        elif kind < 0.1:
            records.append((clock, 9, 15))                # below the 16-byte key
            bad.append((n, "obj_size 15 is below"))
        else:
            clock += rng.randrange(2)
            obj, size = rng.randrange(1, 2**40), rng.randrange(16, 3000)
            records.append((clock, obj, size))
            want.append((float(clock), FILL, obj, 16, size - 16, 0, 0))
    path = tmp_path / "mixed.oracleGeneral"
    oracle_general(path, records)
    with open(path, "rb") as stream:
        ops, acct = read_oracle_general(stream, str(path))
        assert list(ops) == want
    assert (acct.rows, acct.items, acct.rejected) == (300, len(want), len(bad)) and len(bad) > 5
    assert all(r.line == n and r.reason.startswith(why) for r, (n, why) in zip(acct.first_rejections, bad))


def test_a_clock_past_the_replays_is_rejected_by_its_record(tmp_path):
    # oracleGeneral's clock is 32 bits, the replay's 31 (model/ops.py TIME_MAX): a record past it is
    # rejected, named, and accounted for; the last second the replay takes is read
    from slabcalc.model.ops import TIME_MAX

    path = tmp_path / "late.oracleGeneral"
    oracle_general(path, [(1, 5, 100), (TIME_MAX - 1, 6, 100), (TIME_MAX, 7, 100), (2**32 - 1, 8, 100)])
    with open(path, "rb") as stream:
        ops, acct = read_oracle_general(stream, str(path))
        assert [op[0] for op in ops] == [1.0, float(TIME_MAX - 1)]
    assert (acct.rows, acct.items, acct.rejected) == (4, 2, 2)
    assert [r.line for r in acct.first_rejections] == [3, 4]
    assert acct.first_rejections[0].reason == "time past 2080374783 s (66 years: the replay's clock)"
