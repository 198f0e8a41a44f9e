"""report's deployment options: --overhead, --nodes, --node-ram/--headroom, --group-by, and the
CI gate (--fail-over-waste / --fail-over-memory) on report and stats.

Expected figures are worked out here by hand from memcached's rules (item 79 bytes -> class 1,
chunk 96, 10922 per 1 MiB page; 8 bytes per hash bucket, 2^16 buckets up to 98 304 items), not
read back from the code under test; the key groups are checked against a real server's metadump.
"""

from __future__ import annotations

import json

import pytest
from helpers import run
from memcached_server import MemcachedServer
from once_stream import OnceStream

from slabcalc import load_profile

MIB = 1 << 20
HIST = "key,value,count\n10,10,100000\n"      # ntotal 48+8+11+12 = 79: class 1, 10922 per page
RULES = load_profile("1.6.45").process       # the runtime's measured constants are profile data


def runtime(mmapped_pages: int, threads: int = 4, connections: int = 1024) -> int:
    """Program + threads + connection structures + a read buffer and a response bundle per thread
    (16 KiB each) + glibc's header page of each mmapped slab page (defaults -t 4, -c 1024)."""
    return (RULES.program_bytes + threads * RULES.thread_bytes + connections * RULES.conn_bytes
            + 2 * min(threads, connections) * 16384 + mmapped_pages * 4096)




def doc(*args, input=HIST):
    result = run("report", "--format", "json", *args, "-", input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_process_memory_of_a_histogram():
    p = doc()["process"]
    # ceil(100000 / 10922) = 10 pages; 100000 > 98304 = 1.5 x 2^16: the table doubled to 2^17
    assert (p["slab_bytes"], p["memory_limit_mb"], p["hashpower"], p["hash_bytes"]) == (10 * MIB, 10, 17, 8 << 17)
    # every page mmapped: the 2^16 table freed at the doubling (512 KiB) leaves glibc's threshold below a page
    assert p["process_bytes"] == 10 * MIB + (8 << 17) + runtime(10) and p["overhead_bytes"] == 0
    assert p["parts"]["page_headers"] == 10 * 4096 and p["runtime_bytes"] == runtime(10)


def test_overhead_size_and_share():
    assert doc("--overhead", "64m")["process"]["process_bytes"] == 10 * MIB + (8 << 17) + runtime(10) + 64 * MIB
    p = doc("--overhead", "20%")["process"]
    base = 10 * MIB + (8 << 17) + runtime(10)
    assert p["overhead_bytes"] == -(-base // 4)      # 20% of the whole = a quarter of the rest
    assert run("report", "--overhead", "100%", "-", input=HIST).exit_code == 2
    assert run("report", "--overhead", "lots", "-", input=HIST).exit_code == 2


def test_hashpower_option_fixes_the_start():
    p = doc("-o", "hashpower=20")["process"]
    assert (p["hashpower"], p["hash_bytes"]) == (20, 8 << 20)
    assert doc("-o", "hashpower=13,no_hashexpand")["process"]["hashpower"] == 13


def test_nodes_split_evenly():
    n = doc("--nodes", "4", "--spread", "even")["nodes"]
    # 25000 items a node: ceil(25000 / 10922) = 3 pages, 2^16 buckets
    assert {k: n[k] for k in ("nodes", "memory_limit_mb", "items", "pages", "slab_bytes", "hash_bytes",
                              "overhead_bytes", "process_bytes", "hashpower", "hash_peak_bytes")} == {
        "nodes": 4, "memory_limit_mb": 3, "items": 25000, "pages": 3, "slab_bytes": 3 * MIB,
        "hash_bytes": 8 << 16, "overhead_bytes": 0, "process_bytes": 3 * MIB + (8 << 16) + runtime(3), "hashpower": 16,
        "hash_peak_bytes": 8 << 16}
    assert n["memcached_args"] == ["-m", "3", "-n", "48", "-f", "1.25", "-I", "1048576"]
    assert doc("--nodes", "3", "--spread", "even")["nodes"]["items"] == 33334   # 100000 = 33334 + 2 x 33333
    one = doc("--nodes", "1", "--spread", "even")["nodes"]
    assert one["process_bytes"] == doc()["process"]["process_bytes"]
    # 100000 items need 2^17 buckets: the plan starts the table there and it never doubles
    assert one["memcached_args"][-2:] == ["-o", "hashpower=17"] and one["hash_peak_bytes"] == 8 << 17


def test_fill_spare_nodes_and_the_fullest_node():
    # --fill 80%: the 3 pages of 25000 items are 80% of -m: ceil(3 / 0.8) = 4; the whole -m budgeted,
    # the hash table for 25000 / 0.8 = 31250 items
    n = doc("--nodes", "4", "--spread", "even", "--fill", "80%")["nodes"]
    assert (n["memory_limit_mb"], n["slab_bytes"], n["items_at_full"]) == (4, 4 * MIB, 31250)
    # one spare of 5: 4 serve, each sized for a quarter
    n = doc("--nodes", "5", "--spread", "even", "--spare-nodes", "1")["nodes"]
    assert (n["serving_nodes"], n["items"]) == (4, 25000)
    # ketama: the fullest share (checked in test_spread) + 3 standard deviations of 100000 keys
    n = doc("--nodes", "4")["nodes"]
    share = n["fullest_share_pct"] / 100
    expected = -(-(100000 * share + 3 * (100000 * share * (1 - share)) ** 0.5) // 1)
    assert n["items"] == int(expected) > 25000 and n["spread"] == "ketama"
    named = doc("--nodes", "2", "--node-names", "a:11211,b:11211")["nodes"]
    assert named["down"] == []
    assert run("report", "--nodes", "2", "--spare-nodes", "2", "-", input=HIST).exit_code == 2
    assert run("report", "--nodes", "2", "--node-names", "a:1", "-", input=HIST).exit_code == 2
    assert run("report", "--node-names", "a:1", "-", input=HIST).exit_code == 2
    for names in (",", "a:1,b:1,a:1"):            # an empty name, a name twice: the ring would be wrong
        bad = run("report", "--nodes", str(names.count(",") + 1), "--node-names", names, "-", input=HIST)
        assert bad.exit_code == 2 and "each node needs its own name" in bad.stderr
    assert run("report", "--nodes", "2", "--fill", "0", "-", input=HIST).exit_code == 2


def test_node_ram_finds_the_fewest_nodes():
    # usable 90% of 8 MiB = 7549747 bytes: 3 pages + 512 KiB + the runtime fit, 4 pages do not
    assert 3 * MIB + (8 << 16) + runtime(3) <= 8 * MIB * 9 // 10 < 4 * MIB + (8 << 16) + runtime(4)
    r = doc("--node-ram", "8m", "--headroom", "10%")["node_ram"]
    assert r["usable_bytes"] == 8 * MIB * 9 // 10 and r["needed"]["nodes"] == 4   # 25000 items: 3 pages
    text = run("report", "--node-ram", "8m", "--headroom", "10%", "-", input=HIST).output
    assert "4 nodes of 8388608 bytes (8.00 MiB) hold these items" in text
    assert doc("--node-ram", "1g")["node_ram"]["needed"]["nodes"] == 1
    # 4 MiB: the runtime alone (3.5 MiB) and a page do not fit
    assert "no number of nodes" in run("report", "--node-ram", "4m", "-", input=HIST).output
    assert run("report", "--nodes", "2", "-m", "64", "-", input=HIST).exit_code == 2


def test_gate_on_report():
    # one item in class 1: 79 of 1 MiB hold data
    ok = run("report", "--fail-over-waste", "99.99%", "-", input="key,value\n10,10\n")
    assert ok.exit_code == 3 and ok.stdout.startswith("class")           # the normal output first
    assert ok.stderr.strip().startswith("Error: waste 99.9925% is over --fail-over-waste 99.99%")
    assert ok.stderr.count("\n") == 1
    assert run("report", "--fail-over-waste", "100%", "-", input="key,value\n10,10\n").exit_code == 2
    assert run("report", "--fail-over-waste", "50%", "-", input=HIST).exit_code == 0
    # HIST wastes 1 - 100000*79/(10 MiB) = 24.66%
    assert run("report", "--fail-over-waste", "24.7%", "-", input=HIST).exit_code == 0
    assert run("report", "--fail-over-waste", "24.6%", "-", input=HIST).exit_code == 3
    memory = 10 * MIB + (8 << 17) + runtime(10)
    assert run("report", "--fail-over-memory", str(memory), "-", input=HIST).exit_code == 0
    over = run("report", "--fail-over-memory", str(memory - 1), "-", input=HIST)
    assert over.exit_code == 3 and f"process memory {memory} bytes" in over.stderr
    # with --nodes the gate takes one node's process
    assert run("report", "--nodes", "4", "--fail-over-memory", "8m", "-", input=HIST).exit_code == 0
    assert run("report", "--format", "json", "--fail-over-waste", "1%", "-", input=HIST).exit_code == 3


def test_gate_on_stats():
    # examples/stats-calcified.txt: 4194304 total_malloced + 524288 hash_bytes
    assert run("stats", "examples/stats-calcified.txt", "--fail-over-memory", "4718592").exit_code == 0
    over = run("stats", "examples/stats-calcified.txt", "--fail-over-memory", "4718591")
    assert over.exit_code == 3 and over.stdout and "4718592 bytes" in over.stderr
    assert run("stats", "examples/stats-calcified.txt", "--fail-over-waste", "99%").exit_code == 0
    assert run("stats", "examples/stats-calcified.txt", "--fail-over-waste", "10%").exit_code == 3


@pytest.fixture(scope="module")
def monkeypatch_root():
    import os
    from pathlib import Path
    old = os.getcwd()
    os.chdir(Path(__file__).resolve().parents[2])
    yield
    os.chdir(old)


def _raw_metadump(srv) -> list[str]:
    """``lru_crawler metadump all`` lines exactly as the server sends them (keys URL-encoded)."""
    srv.metadump()                                    # waits out a busy crawler
    srv._send(b"lru_crawler metadump all\r\n")
    lines = []
    while (line := srv._readline()) != "END":
        lines.append(line)
    return lines


def test_group_by_prefix_on_a_real_metadump(memcached, tmp_path, monkeypatch_root):
    keys = ([(f"user:{i}", 100) for i in range(20)] + [(f"session:{i}:x", 1000) for i in range(10)]
            + [(f"plain{i}", 5000) for i in range(3)])
    with MemcachedServer(["-m", "64"], memcached=memcached) as srv:
        for key, size in keys:
            assert srv.set(key, b"v" * size) == "STORED"
        lines = _raw_metadump(srv)
        chunk = {cls: s["chunk_size"] for cls, s in srv.slab_stats().per_class.items()}
    assert any("user%3A" in line for line in lines)             # memcached encodes ':'
    path = tmp_path / "dump.txt"
    path.write_text("\n".join(lines) + "\nEND\n")
    fields = [dict(t.split("=", 1) for t in line.split()) for line in lines]
    expected = {}
    for f in fields:
        name = "user:*" if f["key"].startswith("user%3A") else "session:*" if f["key"].startswith("session") \
            else "(no separator)"
        g = expected.setdefault(name, [0, 0, 0])
        g[0] += 1
        g[1] += int(f["size"])
        g[2] += chunk[int(f["cls"])]                         # the server's own class of the item
    document = json.loads(run("report", str(path), "--group-by", "prefix", "--format", "json").stdout)
    got = {g["group"]: [g["items"], g["requested_bytes"], g["used_bytes"]] for g in document["groups"]}
    assert got == expected
    assert [g["group"] for g in document["groups"]] == sorted(expected, key=lambda n: -expected[n][2])
    # a regex on the decoded keys: its first group names the group
    regex = json.loads(run("report", str(path), "--group-by", r"^(\w+):", "--format", "json").stdout)
    assert {g["group"]: g["items"] for g in regex["groups"]} == {"session": 10, "user": 20, "(no match)": 3}


def test_group_by_csv_key_names_and_separator():
    text = "key_name,value\na.1,100\na.2,100\nb.1,5000\nzzz,10\n"
    document = doc("--group-by", "prefix", "--separator", ".", input=text)
    groups = {g["group"]: g for g in document["groups"]}
    assert [g["group"] for g in document["groups"]] == ["b.*", "a.*", "(no separator)"]
    # a.1: 48 + 8 + 4 + 102 = 162 -> chunk 192 (class 4)
    assert groups["a.*"]["requested_bytes"] == 324 and groups["a.*"]["used_bytes"] == 384


def test_group_by_reads_the_rows_the_report_reads():
    # G2 (issue 15): --group-by re-read the input with its own parser: it refused the header
    # Key-Name,Value that report takes, and a bad row report counts was fatal to it
    text = "Key-Name,Value\nuser:1,100\nuser:2,200\nsession:9,x\nsession:1,3000\n"
    document = doc("--group-by", "prefix", input=text)
    assert (document["totals"]["rows"], document["totals"]["rejected"]) == (4, 1)
    groups = {g["group"]: g["items"] for g in document["groups"]}
    assert groups == {"user:*": 2, "session:*": 1}
    assert sum(groups.values()) == document["totals"]["items"]
    strict = run("report", "--group-by", "prefix", "--strict", "-", input=text)
    assert strict.exit_code == 1 and "<stdin>:4: value is not a number: 'x'" in strict.output
    # a count column weighs the groups as it weighs the report
    counted = doc("--group-by", "prefix", input="key_name,value,count\na:1,100,3\nb:1,100,0\n")
    assert {g["group"]: g["items"] for g in counted["groups"]} == {"a:*": 3, "b:*": 0}


def test_group_by_refuses_inputs_without_key_names():
    result = run("report", "--group-by", "prefix", "-", input=HIST)
    assert result.exit_code == 1 and "key_name" in result.output



def test_group_by_pattern_and_separator_are_usage_errors():
    bad = run("report", "--group-by", "(", "-", input="key_name,value\na,1\n")
    assert bad.exit_code == 2 and "is not a regular expression" in bad.output
    empty = run("report", "--group-by", "prefix", "--separator", "", "-", input="key_name,value\na,1\n")
    assert empty.exit_code == 2 and "--separator must not be empty" in empty.output


def test_capacity_page_plan_by_hand():
    """docs/capacity.md's plan (examples/capacity-mix.csv on 8 GiB nodes, 10% headroom, 5% overhead), redone
    from memcached 1.6's published class table (-vv: chunk size and perslab) and assoc.c's rule."""
    from pathlib import Path

    # (items, key, value) -> ntotal 48 + 8 + key + 1 + value + 2 -> the class (chunk, perslab) holding it
    mix = [(25_000_000, 20, 100, 192, 5461), (10_000_000, 30, 500, 600, 1747),
           (4_000_000, 24, 2000, 2320, 451), (1_000_000, 16, 12000, 13880, 75)]
    for _, key, value, chunk, _ in mix:
        assert 48 + 8 + key + 1 + value + 2 <= chunk

    def node(n):
        items = sum(count // n for count, *_ in mix)
        pages = sum(-(-(count // n) // perslab) for count, _, _, _, perslab in mix)
        hashpower = 16
        while items > (1 << hashpower) * 3 // 2:
            hashpower += 1
        base = pages * MIB + (8 << hashpower)
        return pages, base + -(-base * 5 // 95)

    usable = 8 * 1024 * MIB * 9 // 10
    fewest = next(n for n in range(1, 100) if node(n)[1] <= usable)
    assert fewest == 5 and node(5) == (6502, 7247315807) and node(4)[1] == 9043140177
    page = (Path(__file__).resolve().parents[2] / "docs" / "capacity.md").read_text(encoding="utf-8")
    for text in ("8 M items in 6502 pages (`-m 6502`)", "7247315807 bytes of the 7730941132", "9043140177 bytes",
                 "5 nodes of 8589934592 bytes"):
        assert text in page
    assert usable == 7730941132


def test_place_with_m_prints_process_memory():
    # 16 + 100 bytes: 175-byte item in the 192-byte class (5461 a page); -m 64 holds 64 pages of them,
    # 349504 items > 1.5 x 2^17: 2^18 buckets of 8 bytes
    document = json.loads(run("place", "--key", "16", "--value", "100", "-m", "64", "--format", "json").stdout)
    assert document["capacity"] == 64 * 5461
    # the second doubling (past 196608 items) frees the 1 MiB table: glibc then takes pages from an
    # arena; the first ceil(64 x 196608 / 349504) = 37 pages were mmapped, a header page each
    assert (document["process_bytes"], document["hash_bytes"]) == (64 * MIB + (8 << 18) + runtime(37), 8 << 18)


def test_group_by_reads_its_input_once_in_blocks(monkeypatch):
    # issue 30: --group-by kept the whole input as text to read it twice (698 MiB for 3 M rows);
    # the groups are now summed in the report's one pass, a block at a time.  Small blocks and a small
    # line cache make the pass hand items out and forget lines between blocks, as a large input does.
    from slabcalc.inputs import items as reader
    from slabcalc.inputs import rows as opener

    monkeypatch.setattr(reader, "BLOCK_SIZE", 512)
    monkeypatch.setattr(reader, "CACHE_MAX", 16)
    rows = [(f"{('user', 'cart', 'feed')[i % 3]}:{i}", 50 + (i * 37) % 3000) for i in range(1500)]
    rows.insert(700, ("nocolon", 10))
    text = "key_name,value\n" + "".join(f"{k},{v}\n" for k, v in rows) + "user:bad,x\n"
    pipe = OnceStream(text)
    monkeypatch.setattr(opener, "open_input", lambda path: (pipe, path))
    result = run("report", "keys.csv", "--group-by", "prefix", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (pipe.whole_reads, pipe.reads_after_end) == (0, 0)
    expected: dict[str, list[int]] = {}
    for key, value in rows:      # ntotal: 48 header + 8 CAS + key + 1 + value + 2 (flags 0), as a.1 above
        name = key.partition(":")[0] + ":*" if ":" in key else "(no separator)"
        g = expected.setdefault(name, [0, 0])
        g[0] += 1
        g[1] += 48 + 8 + len(key) + 1 + value + 2
    assert {g["group"]: [g["items"], g["requested_bytes"]] for g in document["groups"]} == expected
    assert (document["totals"]["rows"], document["totals"]["rejected"]) == (1502, 1)
    assert sum(g["used_bytes"] for g in document["groups"]) == document["totals"]["used_bytes"]
    assert sum(g["requested_bytes"] for g in document["groups"]) == document["totals"]["requested_bytes"]


def test_key_name_rows_are_counted_by_size_and_quoted_as_written():
    # issue 30: a key_name CSV's lines are cached without their names (each line is distinct); what is
    # rejected is still quoted from the line itself, and a name's bytes still make its key length
    text = "key_name,value,flags\na:1,100,0\na:2,\n\x01odd:1,5,0\nweird\x1fkey,7,0\nb:1,100,99999999999\n"
    document = doc("--group-by", "prefix", input=text)
    assert [(r["line"], r["reason"], r["text"]) for r in document["rejections"]] == [
        (3, "missing column value", "a:2,"), (6, "flags must be 0..4294967295", "b:1,100,99999999999")]
    # ntotal 48 + 8 CAS + key + 1 + value + 2: a:1 162, \x01odd:1 (6 bytes) 70, weird\x1fkey (9 bytes) 75
    assert {g["group"]: g["requested_bytes"] for g in document["groups"]} == {
        "a:*": 162, "\x01odd:*": 70, "(no separator)": 75}
    strict = run("report", "--group-by", "prefix", "--strict", "-", input=text)
    assert strict.exit_code == 1 and "<stdin>:3: missing column value: 'a:2,'" in strict.output
