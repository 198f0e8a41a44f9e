"""``simulate``: the class table, the summary lines and the timeline."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.tables import MOVED_COLUMNS, SIMULATE_COLUMNS, TIMELINE_COLUMNS


def show_simulation(result, accounting, fmt, plot, ops, uptime, hash_keys) -> None:
    """The replay's rejected lines, its table (or csv/json), and its plot."""
    from slabcalc.cli.common import say_rejected
    from slabcalc.records.simulate import simulation_record

    say_rejected(accounting)
    record = simulation_record(result, accounting)
    print_simulation(result, record, fmt)
    if plot:
        plot_simulation(result, record, plot, ops, uptime, hash_keys)


def print_simulation(result, record, fmt):
    from slabcalc.records.simulate import finding_lines

    if fmt == "json":
        click.echo(output.render_json(record))
        return
    if fmt == "csv":
        click.echo(f"model: {record['model']['text']}", err=True)
        if "timeline" in record:
            click.echo(output.render_rows(record["timeline"], TIMELINE_COLUMNS, "csv"))
        else:
            click.echo(output.render_rows(record["classes"], SIMULATE_COLUMNS, "csv"))
        return
    t = record["totals"]
    columns = SIMULATE_COLUMNS + (MOVED_COLUMNS if t["slabs_moved"] else ())
    rows = list(record["classes"])
    if t["slab_global_page_pool"]:
        rows.append({"class": "pool", "pages": t["slab_global_page_pool"]})
    totals = {c: sum(row.get(c, 0) for row in rows) for c in columns[2:]}
    click.echo(output.render_rows(rows + [{"class": "total", **totals}], columns, fmt,
                                  essential=("class", "chunk_size", "pages", "items", "evicted", "hits", "misses")))
    click.echo()
    click.echo(output.render_pairs(_simulation_lines(result, record, finding_lines), fmt))
    if "timeline" in record:
        click.echo()
        click.echo(output.render_rows(record["timeline"], TIMELINE_COLUMNS, fmt))


def _simulation_lines(result, record, finding_lines):
    t, i = record["totals"], record["input"]
    limit = result.settings.maxbytes
    lines = [
        ("model", record["model"]["text"]),
        ("input", f"{i['source']} ({i['format']})"),
        ("rows", f"{i['rows']} read = {t['ops']} operations + {i['rejected']} rejected"
         if t["ops"] == i["rows"] - i["rejected"] else       # MetaKV's op_count: a row of many operations
         f"{i['rows']} read = {i['rows'] - i['rejected']} accepted + {i['rejected']} rejected; "
         f"{t['ops']} operations" + (" in the log" if record.get("sample", {}).get("drawn") else "")),
        ("sets", f"{t['cmd_set']}: {t['stored']} stored, {t['too_large']} too large, {t['outofmemory']} out of memory"
                 + (f", {t['chunk_failures']} out of memory during read" if t["chunk_failures"] else "")),
        ("gets", f"{t['cmd_get']}: {t['get_hits']} hits, {t['get_misses']} misses"),
    ]
    if t["deletes"] or t["cmd_touch"]:
        lines.append(("deletes, touches", f"{t['deletes']}, {t['cmd_touch']} ({t['touch_hits']} found)"))
    lines += [
        ("evicted", f"{t['evictions']} (reclaimed {t['reclaimed']} expired at an LRU tail, {t['crawler_reclaimed']} "
                    f"by the LRU crawler, {t['get_expired']} found expired on access)"),
        ("memory", f"{t['total_malloced']} bytes in {t['pages']} pages"
                   + (f" of -m {limit >> 20} ({limit} bytes)" if limit else " (no -m limit)")
                   + (f", {t['slab_global_page_pool']} of them in the global page pool"
                      if t["slab_global_page_pool"] else "")),
    ]
    if t["slabs_moved"]:
        lines.append(("pages moved", f"{t['slabs_moved']} (slabs_moved); their live items: "
                                     f"{t['slab_reassign_rescues']} rescued, "
                                     f"{t['slab_reassign_evictions_nomem']} dropped (slab_reassign_evictions_nomem)"))
    lines.append(("items", f"{t['curr_items']} at the end (t={record['end_time']})"))
    if "extstore" in record:
        x = record["extstore"]
        lines.append(("extstore", f"{x['extstore_objects_written']} objects written to flash "
                                  f"({x['extstore_bytes_written']} bytes), {x['extstore_objects_used']} there at the end; "
                                  f"{x['get_extstore']} hits read from flash, {x['miss_from_extstore']} misses from "
                                  f"flash; {x['extstore_pages_used']} pages used, {x['extstore_page_evictions']} "
                                  f"evicted (extstore_page_evictions)"))
        if x["header_items_lost"] and x["header_items_lost_flash_free"]:
            lines.append(("header items", f"{x['header_items_lost']} evicted with their values still on "
                                          f"flash, while up to {x['header_items_lost_flash_free']} flash pages were "
                                          "free: RAM, not flash, limited this node (the header items' class got no "
                                          "more pages); a larger -m keeps them"))
    lines += finding_lines(result.finding, result.model, t["slabs_moved"], result.settings)
    if result.sample is not None:
        from slabcalc.records.simulate import sample_lines

        lines += sample_lines(result.sample)
    lines += [(f"rejected line {r['line']}", f"{r['reason']}: {r['text']}") for r in i["rejections"]]
    return lines


def plot_simulation(result, record, path: str, ops=None, uptime: float = 0.0, hash_keys: bool = False) -> None:
    """``--plot``: the timeline (with ``--every``; ``ops`` held: the hit ratio of each step from one more
    replay, :func:`slabcalc.analysis.curve.hit_ratio_steps`), else the memory per class at the end."""
    from slabcalc.cli.common import draw
    from slabcalc.records.simulate import memory_records

    if "timeline" not in record:
        draw("plot_classes", memory_records(result), path)
        return
    steps = None
    if ops is not None:
        from slabcalc.analysis.curve import hit_ratio_steps

        steps = hit_ratio_steps(result.settings, ops, sorted({row.time for row in result.timeline}), boot=uptime,
                                hash_keys=hash_keys)
    draw("plot_timeline", [{**row, "evicted": row["evicted_total"]} for row in record["timeline"]], path,
         hit_ratio=steps)
