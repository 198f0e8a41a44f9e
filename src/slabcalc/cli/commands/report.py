"""``slabcalc report``."""

from __future__ import annotations

import click

from slabcalc.model.item import size_key
from slabcalc.cli import output
from slabcalc.cli.common import check_layout_options, draw, input_items, say_rejected, settings_from, versus_settings
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import (check_key, check_rate_given, deploy_options, format_option, gate_options,
                                  input_options, model_options, plot_option, rate_option, vs_option)
from slabcalc.cli.plan import deploy_plan, print_plan
from slabcalc.cli.tables import REPORT_COLUMNS, REPORT_ESSENTIAL, WHAT_IF_COLUMNS
from slabcalc.errors import SlabcalcError


@cli.command()
@click.argument("file", default="-", metavar="[FILE]")
@input_options()
@vs_option
@deploy_options
@rate_option
@plot_option
@model_options
@format_option(command="report")
@gate_options
def report(file, key_length, strict, what_if, plot, fmt, deploy, rate, **model):
    """Where the memory goes for a whole distribution of items.

    FILE (or standard input, when FILE is - or omitted) holds item sizes: a CSV
    with a header (key,value[,flags][,count] or item_size[,count]), a column of
    value sizes (with --key), lru_crawler metadump lines, or stats sizes
    output.  Per class: items, chunks, pages, requested and used bytes, waste
    and free page bytes; then totals and a summary.  With -m, how many items
    fit before the first eviction: an item file's rows stored in the file's
    order, a histogram's as a proportional mix (docs/capacity.md); without,
    the -m that holds them all.

    \b
    Python: with open_items(FILE, settings=settings) as (rows, _): build_report(settings, rows, capacity=True)
    """
    from slabcalc.analysis.arrival import walkers
    from slabcalc.analysis.ram import ram_reports
    from slabcalc.errors import InputError

    settings = settings_from(**model)
    check_key(settings, key_length)
    check_layout_options(settings, "report")
    check_rate_given(settings, rate)
    versus = [(text, versus_settings(settings, text)) for text in what_if]
    orders = [_file_order(s, key_length) for s in [settings] + [vs for _, vs in versus]]
    groups = None
    if deploy["group_by"] is not None:   # summed per group in the one pass that reads the sizes
        from slabcalc.analysis.keyspace import KeyGroups

        groups = KeyGroups(deploy["group_by"], deploy["separator"])
    names = groups.add if groups is not None else None
    with input_items(file, "report", settings, key_length=key_length, strict=strict, columns=True,
                     arrivals=walkers(orders), names=names) as (items, accounting):
        triples = list(items)   # distinct items (and one ItemColumns), not rows: build_report sums repeats
    source = accounting.source
    try:
        # each --vs with its own -m (G1: it used the baseline's)
        answer = ram_reports(settings, triples, versus, orders, size_key(key_length), rate)
        base, ext, others = answer.base, answer.ext, list(answer.what_if)
        if ext is not None and (deploy["nodes"] is not None or deploy["node_ram"] is not None):
            raise Refusal("--nodes and --node-ram plan nodes without extstore; drop -o ext_path to plan them")
        plan = deploy_plan(settings, base, triples, {**deploy, "strict": strict}, size_key(key_length), source,
                           ext.flash.buckets if ext is not None else None, groups)
    except InputError as exc:
        raise DataError(str(exc)) from None
    except SlabcalcError as exc:
        raise DataError(f"{source}: {exc}") from None
    say_rejected(accounting)
    _print_report(base, accounting, others, fmt, plan, ext)
    if plot:
        from slabcalc.records.report import report_record

        draw("plot_classes", report_record(base, accounting)["classes"], plot)


def _file_order(settings, key_length):
    """The capacity walk in the file's order under ``settings``: only with -m; with extstore the rows
    in their order, for the extstore replay."""
    from slabcalc.analysis.arrival import FileOrder

    if settings.memory_limit is None:
        return None
    if settings.extstore is not None:
        from slabcalc.analysis.extstore_fill import InputOrder

        return InputOrder()
    return FileOrder(settings, size_key_length=size_key(key_length))


def _print_report(base, accounting, others, fmt, plan=None, ext=None):
    from slabcalc.records.report import EXTSTORE_CLASS_FIELDS, report_record

    record = report_record(base, accounting, others, ext, plan)
    columns = REPORT_COLUMNS
    if ext is not None:
        columns = columns[:4] + EXTSTORE_CLASS_FIELDS + columns[4:]
    if fmt == "json":
        click.echo(output.render_json(record))
        return
    if fmt == "csv":   # one row per class, as every per-class csv: no total row (json has totals)
        click.echo(output.render_rows(record["classes"], columns, fmt))
        return
    # tables show each class's share of memory as a bar
    rows = [{**row, "memory": output.bar(row["memory_pct"])} for row in record["classes"]] + \
        [{"class": "total", **{k: record["totals"].get(k) for k in columns[3:]}}]
    essential = REPORT_ESSENTIAL
    if ext is not None:     # flash_items joins; memory_pct yields to it (the bar shows the share) to fit 80
        essential = (*REPORT_ESSENTIAL[:3], "flash_items", *(c for c in REPORT_ESSENTIAL[3:] if c != "memory_pct"))
    click.echo(output.render_rows(rows, columns + ("memory",), fmt, essential=essential))
    click.echo()
    click.echo(output.render_pairs(list(record["summary"].items()), fmt))
    if plan is not None:
        print_plan(plan, fmt)
    if others:
        click.echo()
        click.echo(output.render_rows(record["what_if"], WHAT_IF_COLUMNS, fmt,
                                      essential=("options", "page_bytes", "capacity", "page_bytes_change_pct")))
