"""``slabcalc simulate``."""

from __future__ import annotations

import click

from slabcalc.cli.common import draw, open_input_for, say_rejected, settings_from
from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import format_option, model_options, plot_option
from slabcalc.cli.simulate_output import print_simulation


@cli.command("simulate")
@click.argument("file", default="-", metavar="[FILE]")
@click.option("--key", "key_length", type=click.IntRange(1, 250), default=None, metavar="BYTES",
              help="Key size of sets when the input has neither a key nor a key_size column.")
@click.option("--strict", is_flag=True, help="Stop at the first bad row (exit 1, file and line named).")
@click.option("--every", type=click.FloatRange(0, min_open=True), default=None, metavar="SECONDS",
              help="Add a timeline: pages, items and evictions per class every SECONDS of workload time.")
@click.option("--uptime", type=click.FloatRange(0), default=0.0, metavar="SECONDS",
              help="How long the server had run when the workload began (its background threads, and "
                   "the automover's window, start with the server).  Default 0.")
@click.option("--input-format", "input_format", type=click.Choice(["auto", "csv", "twitter", "oracleGeneral"]),
              default="auto", show_default=True,
              help="The trace's format: auto tells CSV (MetaKV's columns included) and twitter/cache-trace "
                   "by the first line, libCacheSim's binary oracleGeneral by its name (*.oracleGeneral); "
                   "*.parquet, *.jsonl and *.csv.gz are read through DuckDB (the duckdb extra) with the "
                   "same columns.")
@click.option("--sample", "sample", type=click.FloatRange(0, 1, min_open=True), default=None, metavar="RATE",
              help="Replay only the keys whose hash falls under RATE (0 < RATE <= 1; SHARDS-style spatial "
                   "sampling), each page holding RATE of its chunks, and scale the counts back, with their "
                   "error: for nodes too large to replay whole.")
@plot_option
@model_options
@format_option()
def simulate_command(file, key_length, strict, every, uptime, input_format, sample, plot, fmt, **model):
    """Replay a workload under -m: pages, LRUs, expiry, evictions, page moves, calcification.

    FILE (or standard input) is a CSV with a header -- time, op (set, get,
    delete, touch), key, key_size, value_size, ttl, flags, op_count: Meta's
    MetaKV traces read as they are -- a twitter/cache-trace file, or
    libCacheSim's oracleGeneral binary (each request a get, and a set on a
    miss; obj_size split into --key bytes of key and the rest of value).  memcached's request paths run on the
    workload's clock (one-second resolution), and beside them what the
    release runs by default, changed by -o as memcached reads it: on 1.6 the
    segmented HOT/WARM/COLD LRU with its maintainer thread, the LRU crawler,
    the slab automover (-o slab_automove=0|1|2, slab_automove_ratio,
    slab_automove_window) and the page mover with the global page pool;
    -o temporary_ttl=N keeps items of a TTL up to N in a TEMP LRU that is
    never evicted.  With -o no_modern (or 1.4) nothing runs in the background
    and the replay is exact.  The model line lists every -o word given as
    modelled or of no effect (and why); a word simulate does not model is
    refused (exit 2, docs/options.md).  Per class: pages, items, evicted, reclaimed (at an LRU tail),
    crawler_reclaimed, outofmemory, hits, misses, pages moved in and out;
    totals, the global page pool, and a calcification finding (a class
    evicting while others hold idle memory) that says what the automover
    did.  --plot draws the timeline (with --every), else the memory per
    class at the end.

    \b
    Python: simulate(settings, read_workload(...)[0], boot=uptime, sample=rate)
    """
    from slabcalc.engines.simulate import SimulationError, background_for, describe_model, simulate
    from slabcalc.inputs.workload import read_workload
    from slabcalc.records.simulate import simulation_record

    settings = settings_from(**model)
    try:
        describe_model(settings, background_for(settings))
    except SimulationError as exc:
        raise Refusal(str(exc)) from None
    from slabcalc.inputs.traces import is_oracle_general
    from slabcalc.inputs.warehouse import reader_for

    if input_format == "oracleGeneral" or (input_format == "auto" and is_oracle_general(file)):
        result, accounting = _oracle_general(settings, file, key_length, strict, every, uptime, sample)
    elif input_format in ("auto", "csv", "twitter") and file != "-" and reader_for(file):
        result, accounting = _warehouse(settings, file, key_length, strict, every, uptime, sample,
                                        None if input_format == "auto" else input_format)
    else:
        with open_input_for(file, "simulate", "a workload", "ops.csv", value_errors=True) as (stream, source,
                                                                                               progress):
            ops, accounting = read_workload(stream, source, key_length=key_length, strict=strict, progress=progress,
                                            form=None if input_format == "auto" else input_format)
            result = simulate(settings, ops, every=every, boot=uptime, sample=sample)
    say_rejected(accounting)
    record = simulation_record(result, accounting)
    print_simulation(result, record, fmt)
    if plot and "timeline" in record:
        draw("plot_timeline", [{**row, "evicted": row["evicted_total"]} for row in record["timeline"]], plot)
    elif plot:
        from slabcalc.records.simulate import memory_records

        draw("plot_classes", memory_records(result), plot)


def _warehouse(settings, file, key_length, strict, every, uptime, sample, form):
    """A Parquet, JSON-lines or gzipped-CSV workload, its rows read through DuckDB: ``(result, accounting)``."""
    from slabcalc.cli.errors import DataError
    from slabcalc.engines.simulate import simulate
    from slabcalc.errors import SlabcalcError
    from slabcalc.inputs.warehouse import TraceLines, kind_of
    from slabcalc.inputs.workload import read_workload

    try:
        with TraceLines(file) as lines:
            ops, accounting = read_workload(iter(lines), file, key_length=key_length, strict=strict, form=form)
            result = simulate(settings, ops, every=every, boot=uptime, sample=sample)
    except SlabcalcError as exc:
        raise DataError(str(exc) if str(exc).startswith(file) else f"{file}: {exc}") from None
    accounting.format = accounting.format.replace("csv", kind_of(file), 1) + ", read through DuckDB"
    return result, accounting


def _oracle_general(settings, file, key_length, strict, every, uptime, sample):
    """A libCacheSim oracleGeneral file (binary) replayed: ``(result, accounting)``."""
    import sys

    from slabcalc.cli.errors import DataError
    from slabcalc.engines.simulate import simulate
    from slabcalc.errors import SlabcalcError
    from slabcalc.inputs.traces import read_oracle_general

    try:
        stream = sys.stdin.buffer if file == "-" else open(file, "rb")
    except OSError as exc:
        raise DataError(f"{file}: cannot read: {exc.strerror or exc}") from None
    with stream:
        ops, accounting = read_oracle_general(stream, "<stdin>" if file == "-" else file, key_length=key_length,
                                              strict=strict)
        try:
            result = simulate(settings, ops, every=every, boot=uptime, sample=sample)
        except SlabcalcError as exc:
            raise DataError(str(exc)) from None
    return result, accounting
