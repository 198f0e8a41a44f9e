"""slabcalc stats on saved replies: parsing in every arrangement, analysis, findings, the CLI contract.

Expected figures come from the servers that printed the dumps (``bytes``,
``total_malloced``, ``mem_requested`` of the golden captures) or from the
dump's own numbers by the definitions (used = chunk_size x used_chunks).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run

from slabcalc.analysis.stats import DumpError, analyse, calcification
from slabcalc.inputs.dumps import parse_dump
from slabcalc.records.stats import class_records, node_totals

DATA = Path(__file__).resolve().parents[1] / "data" / "stats"
SPLIT = sorted((DATA / "1.4.39").glob("*.txt"))


def texts(*paths):
    return [(str(p), p.read_text(encoding="utf-8")) for p in paths]


def records(node):
    return [{k: v for k, v in r.items() if k != "node"} for r in class_records(node)]


def test_one_file_per_command_or_concatenated_with_or_without_cr_give_the_same_node():
    split = analyse(parse_dump(texts(*SPLIT)), "n")
    joined = "".join(f"{p.stem.replace('_', ' ')}\r\n" + p.read_text().replace("\n", "\r\n") for p in SPLIT)
    concatenated = analyse(parse_dump([("all.txt", joined)]), "n")
    assert records(split) == records(concatenated)
    assert node_totals(split) == node_totals(concatenated)
    assert split.drift == () and concatenated.drift == ()


@pytest.mark.parametrize("name,mem_requested", [("1.4.24.txt", 66), ("1.5.22.txt", 60)])
def test_golden_first_item(name, mem_requested):
    # the golden captures: key 1 byte, value 0, one item in class 1 (96-byte chunks)
    node = analyse(parse_dump(texts(DATA / name)))
    [row] = class_records(node)
    assert (row["class"], row["chunk_size"], row["used_chunks"], row["used_bytes"]) == (1, 96, 1, 96)
    assert row["requested_bytes"] == mem_requested          # stats slabs (1.4.24) / stats items (1.5.22)
    assert row["chunk_waste"] == 96 - mem_requested
    assert node.drift == ()
    totals, server = node_totals(node), _server_totals(node)
    assert totals["bytes"] == sum(r["requested_bytes"] for r in class_records(node)) == server["bytes"]
    assert totals["total_malloced"] == sum(r["page_bytes"] for r in class_records(node)) == server["total_malloced"]
    assert node.notes == ()


def _server_totals(node) -> dict:
    """The server's own totals in the capture (``stats``, ``stats slabs``), which node_totals sums
    from the classes: the sums must equal them."""
    return {k: int(v) for k, v in {**node.dump.general, **node.dump.slab_totals}.items() if v.isdigit()}


def test_a_total_is_given_once_under_memcached_s_name():
    """issue 30: ``evicted``/``evictions``, ``items``/``curr_items``, ``requested_bytes``/``bytes`` and
    ``page_bytes``/``total_malloced`` were one figure under two names."""
    totals = node_totals(analyse(parse_dump(texts(DATA / "1.6.18-mixed.txt"))))
    assert {"evictions", "curr_items", "bytes", "total_malloced"} <= set(totals)
    assert not {"evicted", "items", "requested_bytes", "page_bytes"} & set(totals)


def test_1_6_capture_totals_match_the_server():
    node = analyse(parse_dump(texts(DATA / "1.6.18-mixed.txt")))
    totals, server = node_totals(node), _server_totals(node)
    rows = class_records(node)
    assert totals["bytes"] == sum(r["requested_bytes"] for r in rows) == server["bytes"] == 2587075
    assert totals["total_malloced"] == sum(r["page_bytes"] for r in rows) == server["total_malloced"] == 6 << 20
    assert totals["curr_items"] == sum(r["items"] for r in rows) == server["curr_items"] == 1303
    assert totals["used_bytes"] == 120 * 3 + 192 * 1000 + 2320 * 300 + 82792 * 3 + 524288 * 3
    assert node.drift == ()
    assert any("class 39 holds chunked items" in n for n in node.notes)
    assert calcification(node) is None


def test_missing_replies_are_named_and_their_fields_unknown():
    only_slabs = [t for t in texts(*SPLIT) if t[0].endswith("stats_slabs.txt")]
    node = analyse(parse_dump(only_slabs))
    [row] = class_records(node)
    assert row["evicted"] is None and row["outofmemory"] is None and row["items"] is None
    assert row["requested_bytes"] == 66          # mem_requested is in stats slabs before 1.5.17
    assert node.drift is None                    # no version, no settings: nothing to compare with
    notes = " | ".join(node.notes)
    assert "no version" in notes and "stats items" in notes and "replies missing" in notes
    assert row["page_bytes"] == 96 * 10922       # without settings: chunk_size x chunks_per_page


def test_no_mem_requested_anywhere():
    text = (DATA / "1.5.22.txt").read_text().replace("STAT items:1:mem_requested 60\n", "")
    node = analyse(parse_dump([("x", text)]))
    [row] = class_records(node)
    assert row["requested_bytes"] is None and row["chunk_waste"] is None
    assert any("no mem_requested" in n for n in node.notes)
    assert node_totals(node)["chunk_waste"] is None


def test_stats_sizes_and_comments_and_echoed_commands_are_skipped():
    text = "# saved on host a\nstats sizes\nSTAT sizes_status disabled\nEND\n" + (DATA / "1.4.24.txt").read_text()
    assert records(analyse(parse_dump([("x", text)]), "n")) == records(analyse(parse_dump(texts(DATA / "1.4.24.txt")), "n"))


@pytest.mark.parametrize("text,message", [
    ("STAT 1:chunk_size 96\nGARBAGE here\nEND\n", r"x, line 2: not a line of memcached's stats replies: 'GARBAGE here'"),
    ("STAT 1:chunk_size 96\n", r"x, line 1: a block of STAT lines without its END"),
    ("STAT foo 1\nEND\n", r"x, line 1: cannot tell which stats command printed this block \(first name 'foo'\)"),
    ("STAT 1:chunk_size 96\nEND\nSTAT 2:chunk_size 120\nEND\n", r"x, line 3: a second 'stats slabs' reply"),
    ("STAT pid 1\nEND\n", r"no 'stats slabs' reply"),
    ("STAT 1:chunk_size 96\nEND\n", r"class 1 lacks chunks_per_page, total_pages, used_chunks"),
    ("STAT 1:chunk_size 96\nSTAT 1:chunks_per_page x\nSTAT 1:total_pages 1\nSTAT 1:used_chunks 1\nEND\n",
     r"1:chunks_per_page is 'x', not a whole number"),
])
def test_unusable_dumps_are_one_line_errors(text, message):
    with pytest.raises(DumpError, match=message):
        analyse(parse_dump([("x", text)]))


def test_drift_is_reported_class_by_class():
    # the 1.6 capture with a growth factor the server did not run with
    text = (DATA / "1.6.18-mixed.txt").read_text().replace("STAT growth_factor 1.25", "STAT growth_factor 1.20")
    node = analyse(parse_dump([("x", text)]))
    # class 2 is 120 bytes either way (96 x 1.2 = 115.2, aligned to 8); with more classes below
    # slab_chunk_max, class 39 is no longer the largest
    assert {d.class_id for d in node.drift} == {4, 15, 31, 39}
    d = next(d for d in node.drift if d.class_id == 4)
    assert (d.chunk_size, d.perslab) == (192, 5461)
    assert d.model_chunk_size != 192


def test_calcification_when_a_class_evicts_while_another_holds_free_pages():
    node = analyse(parse_dump(texts(DATA / "1.4.39-calcified.txt")))
    found = calcification(node)
    # issue 31: one reading says what happens now (class 5's tail is as young as its last victim) and
    # ends with an action for the node's release (1.4.39 has slab_reassign off by default)
    assert found == ("calcification: class 5 evicts now (10 pages, victims last used 12 s before) while class 1 "
                     "holds 3 pages (about 2 of them free chunks, items up to 3600 s old); slab_reassign is off, "
                     "so no page ever moves; action for memcached 1.4.39: -o slab_reassign,slab_automove=1 "
                     "(at the next start)")
    rows = {r["class"]: r for r in class_records(node)}
    assert rows[5]["evicted_pct"] == 100.0 and rows[1]["evicted_pct"] == 0.0
    assert rows[5]["memory_pct"] == round(100 * 10 * 240 * 4369 / 13631136, 2)
    totals, server = node_totals(node), _server_totals(node)
    assert totals["total_malloced"] == sum(r["page_bytes"] for r in rows.values()) == server["total_malloced"]
    assert totals["bytes"] == sum(r["requested_bytes"] for r in rows.values()) == server["bytes"]
    assert totals["evictions"] == sum(r["evicted"] for r in rows.values()) == server["evictions"]




def test_cli_json_contract():
    result = run("stats", str(DATA / "1.6.18-mixed.txt"), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {"classes", "totals", "nodes", "findings"} <= set(doc)
    assert {"node", "class", "chunk_size", "pages", "used_chunks", "used_bytes", "requested_bytes", "chunk_waste",
            "free_chunks", "free_bytes", "evicted", "outofmemory", "memory_pct", "evicted_pct"} <= set(doc["classes"][0])
    assert {"used_bytes", "bytes", "chunk_waste", "total_malloced", "curr_items", "evictions"} <= set(doc["totals"])
    assert doc["nodes"][0]["settings"]["release"] == "1.6.18"
    assert doc["nodes"][0]["drift"] == []


def test_cli_table_has_a_bar_per_class_and_a_total_row():
    result = run("stats", str(DATA / "1.4.39-calcified.txt"))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split()[-1] == "memory"
    assert lines[2].endswith("\u2588\u2588\u258e")      # 23.08% of 10 characters: 2 and 3/8
    assert lines[3].endswith("\u2588" * 7 + "\u258a")   # 76.92%: 7 and 6/8
    assert lines[4].startswith("total")
    assert "calcification: class 5 evicts now" in result.output


def test_cli_csv_always_names_the_node():
    result = run("stats", "--format", "csv", *map(str, SPLIT))
    assert result.output.splitlines()[0].startswith("node,class,chunk_size")


def test_cli_reads_stdin_and_reports_bad_files_in_one_line():
    result = run("stats", "-", input=(DATA / "1.4.24.txt").read_text())
    assert result.exit_code == 0 and "drift: none" in result.output
    result = run("stats", "-", input="hello\n")
    assert result.exit_code == 1
    assert result.output.strip() == "Error: <stdin>, line 1: not a line of memcached's stats replies: 'hello'"
    result = run("stats", "no/such/file")
    assert result.exit_code == 1 and "no/such/file: cannot read" in result.output


def test_cli_usage_errors_exit_2():
    assert run("stats").exit_code == 2
    assert run("stats", "--server", "host:notaport").exit_code == 2
    assert re.search(r"\.png or \.svg", run("stats", "x", "--plot", "out.pdf").output)


def test_the_global_page_pool_is_a_row_and_counts_in_the_totals(tmp_path):
    # W4 (issue 16): pages in the global page pool showed in no table, total or JSON, and
    # memory_pct ignored them.  A real 1.6.18's stats at 50 s of a paced run
    # (tests/data/paced/automove-default-1.6.18.json.gz): 8 pages in the pool.
    import paced

    snapshot = paced.load("automove-default-1.6.18").snapshots[4]
    lines = []
    for key in ("stats", "slabs", "items"):
        lines += [f"STAT {name} {value}" for name, value in snapshot[key].items()] + ["END"]
    dump = tmp_path / "stats.txt"
    dump.write_text("\n".join(lines) + "\n")
    result = run("stats", str(dump), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    pool = [c for c in document["classes"] if c["class"] == 0]
    class_pages = sum(int(v) for k, v in snapshot["slabs"].items() if k.endswith(":total_pages"))
    assert snapshot["stats"]["slab_global_page_pool"] == "8"
    assert [(p["pages"], p["page_bytes"], p["free_bytes"]) for p in pool] == [(8, 8 << 20, 8 << 20)]
    assert document["totals"]["slab_global_page_pool"] == 8
    assert document["totals"]["pages"] == class_pages + 8
    assert abs(sum(c["memory_pct"] for c in document["classes"]) - 100) < 0.05
    table = run("stats", str(dump)).output
    assert any(line.startswith("pool ") for line in table.splitlines())
