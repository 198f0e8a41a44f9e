"""``slabcalc compare``."""

from __future__ import annotations

import click

from slabcalc.model.item import size_key
from slabcalc.cli import output
from slabcalc.cli.commands.report import report
from slabcalc.cli.common import (check_layout_options, draw, input_items, measure, say_rejected, settings_from,
                                 versus_settings)
from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import (SIZE, check_key, format_option, gate_options, measured, model_options, plot_option,
                                  vs_option, whole)
from slabcalc.cli.tables import COMPARE_COLUMNS


@cli.command()
@click.option("--varnish-headers", "varnish_headers", type=whole(0, 1 << 30), default=400, show_default=True,
              metavar="BYTES", help="Varnish: header workspace of each object (headers kept, +1 per line).")
@click.option("--varnish-chunked", is_flag=True,
              help="Varnish: bodies come without Content-Length, in fetch_chunksize segments.")
@click.option("--fetch-chunksize", "fetch_chunksize", type=SIZE, default="16k", show_default=True,
              help="Varnish's fetch_chunksize parameter (segment size of chunked bodies; min 4k).")
@click.option("--varnish-allocator", type=click.Choice(("jemalloc-5", "jemalloc-3.6", "glibc")),
              default="jemalloc-5", show_default=True, help="The malloc Varnish is linked with.")
@click.option("--redis", "redis_release", type=click.Choice(("7.2", "7.0")), default="7.2", show_default=True,
              help="Redis release line: 7.2+ builds jemalloc without the 4 KiB large pad, 3.2-7.0 with it.")
@click.option("--redis-ttl", is_flag=True, help="Redis: every key has a TTL (an expires dict entry).")
@vs_option
@plot_option
@model_options
@format_option(command="compare")
@gate_options
def compare(varnish_headers, varnish_chunked, fetch_chunksize, varnish_allocator, redis_release, redis_ttl,
            what_if, plot, fmt, file, key_length, strict, **model):
    """The same items under memcached, jemalloc 3.6 / 5, glibc, Varnish -s malloc and Redis.

    FILE is read as `report` reads it.  Per store: the bytes requested, the
    bytes the allocator hands out (memcached: slab pages), the overhead beyond
    them (hash table, headers, pad pages, slab tails, Varnish's per-object
    structures outside -s) and the waste; then what -m, -s malloc and a
    Varnish host need.  --vs adds memcached under other flags, a row each.
    --plot draws memcached's classes and --fail-over-waste/--fail-over-memory
    gate memcached's configuration, as `report` does.

    \b
    Python: with open_items(FILE, settings=settings) as (rows, _): compare(settings, rows, CompareOptions(...))
    """
    from slabcalc.allocators.varnish import VarnishObject
    from slabcalc.analysis.compare import CompareOptions
    from slabcalc.analysis.compare import compare as compare_stores
    from slabcalc.records.compare import comparison_record

    settings = settings_from(**model)
    check_key(settings, key_length)
    check_layout_options(settings, "compare")
    versus = [(text, versus_settings(settings, text)) for text in what_if]
    if fetch_chunksize < 4096:
        raise Refusal(f"--fetch-chunksize: Varnish's minimum is 4k, not {fetch_chunksize}")
    options = CompareOptions(VarnishObject(varnish_headers, varnish_chunked, fetch_chunksize), varnish_allocator,
                             redis_release, redis_ttl, size_key(key_length))
    with input_items(file, "compare", settings, value_errors=True, key_length=key_length,
                     strict=strict) as (items, accounting):
        result = compare_stores(settings, items, options, versus)
    say_rejected(accounting)
    record = comparison_record(result, accounting, options)
    _print(record, fmt)
    _gate_and_plot(result, accounting, plot)


def _print(record, fmt) -> None:
    if fmt == "json":
        click.echo(output.render_json(record))
        return
    click.echo(output.render_rows(record["stores"], COMPARE_COLUMNS, fmt,
                                  essential=("store", "total_bytes", "waste_pct", "vs_memcached")))
    if fmt != "csv":
        click.echo()
        click.echo(output.render_pairs(list(record["summary"].items()), fmt))


def _gate_and_plot(result, accounting, plot) -> None:
    """memcached's side as ``report`` gates and draws it: page bytes not holding item data, the process."""
    from slabcalc.analysis.process import process_memory

    base = result.report
    measured(measure(base.total("page_bytes") - base.total("requested_bytes"), base.total("page_bytes"),
                     process_memory(base).total, "process memory"))
    if plot:
        from slabcalc.records.report import report_record

        draw("plot_classes", report_record(base, accounting)["classes"], plot)


# compare reads its input with report's own FILE argument, --key and --strict.
compare.params[:0] = [p for p in report.params if p.name in ("file", "key_length", "strict")]
