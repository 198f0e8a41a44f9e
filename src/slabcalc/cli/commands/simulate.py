"""``slabcalc simulate``."""

from __future__ import annotations

import click

from slabcalc.cli.common import input_workload, settings_from
from slabcalc.cli.curve_output import run_curve, settings_or_none
from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import (check_key, format_option, input_options, model_options, plot_option, real,
                                  sample_option, sampled_option, share, time_zero_option)
from slabcalc.cli.sampling import drawn_rate, reader_left_out, recount_coarse, refusing_coarse
from slabcalc.cli.simulate_output import show_simulation
from slabcalc.model.ops import TIME_MAX, UPTIME_MAX


@cli.command("simulate")
@click.argument("file", default="-", metavar="[FILE]")
@input_options("Key size of sets when the input has neither a key nor a key_size column, 1 to the "
               "release's key_max.  Not given: such an input is refused (oracleGeneral: 16).")
@click.option("--every", type=real(0, TIME_MAX, low_open=True), default=None, metavar="SECONDS",
              help="Add a timeline: pages, items and evictions per class every SECONDS of workload time.  "
                   "Not given: the end state only.")
@click.option("--uptime", type=real(0, UPTIME_MAX), default=0.0, metavar="SECONDS",
              help="How long the server had run when the workload began (its background threads, and "
                   "the automover's window, start with the server, and its clock ticks every second from "
                   "then: 0.5 puts the ticks half a second into each workload second).  Default 0; at most "
                   "388 days.")
@click.option("--input-format", "input_format", type=click.Choice(["auto", "csv", "twitter", "oracleGeneral"]),
              default="auto", show_default=True,
              help="The trace's format: auto tells CSV (MetaKV's columns included) and twitter/cache-trace "
                   "by the first line, libCacheSim's binary oracleGeneral by its name (*.oracleGeneral); "
                   "*.parquet, *.jsonl and *.csv.gz are read through DuckDB (the duckdb extra) with the "
                   "same columns; any gzip, bzip2 or xz input (told by its first bytes, stdin too) with the "
                   "standard library.")
@sample_option
@sampled_option
@click.option("--hash-keys", "hash_keys", is_flag=True,
              help="Keep string keys as 60-bit hashes, not their text: 80 bytes less memory a resident item "
                   "for replays too large for the machine.  The model line states the bound on two keys "
                   "sharing a hash.  One -m only.")
@click.option("--target-hit-ratio", "target", type=share(low_open=True, exact=False), default=None, metavar="R",
              help="Name the smallest -m (MB) whose replay reaches hit ratio R, above 0 and up to 1, a fraction "
                   "(0.9) or a percent (90%): the first limit of "
                   "the list that reaches it, then a bisection on -m between it and the limit before, down to "
                   "two limits a megabyte apart, both replayed (JSON: target_limit_mb).  A list's largest -m "
                   "that does not reach R is an error (exit 2).  Not given: no search.  See docs/curves.md.")
@time_zero_option
@plot_option
@model_options
@format_option(command="simulate")
def simulate_command(file, key_length, strict, every, uptime, input_format, sample, sampled, hash_keys, target,
                     time_zero, plot, fmt, **model):
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
    crawler_reclaimed, outofmemory, hits, misses (gets of keys the class
    evicted or expired; the newest 1,048,576 keys lost are remembered), pages moved in and out;
    totals, the global page pool, and a calcification finding (a class
    evicting while others hold idle memory) that says what the automover
    did.  --plot draws the timeline (with --every), else the memory per
    class at the end.

    With a list of limits (-m 16,32,64 or -m 16..128:16) it prints a
    hit-ratio curve instead: the workload replayed at each -m (one process
    per core; each row what simulate -m N prints): get_hits, get_misses,
    hit_ratio, evictions, slabs_moved, and the hit ratio of an ideal LRU of
    the same bytes -- one LRU over all objects, each the size memcached
    asks its allocator for (ITEM_ntotal), no slab classes: the gap is what
    slab classes and calcification cost.  --plot draws both against -m.
    --target-hit-ratio R names the smallest -m that reaches R (bisecting
    between the list's limits).  See docs/curves.md.

    \b
    Python: with open_workload(FILE) as (ops, _): simulate(settings, ops, boot=uptime, sample=rate, hash_keys=h)
    Python: hit_ratio_curve([settings, ...], ops, boot=uptime, sample=rate)
    """
    from slabcalc.cli.common import memory_limits

    noted: set = set()
    limits = memory_limits(model.pop("memory_limit"))
    every_settings = _checked_settings(model, limits, key_length, noted)
    curve = len(limits) > 1 or target is not None
    drawn, sample = drawn_rate(sample, sampled, curve, every_settings[0])
    if curve:
        _refuse_for_a_curve(every, hash_keys)
        at = settings_or_none(lambda mb: settings_from(**model, memory_limit=str(mb), noted=noted))
        return run_curve(every_settings, file, input_format, key_length, strict, uptime, sample, plot, fmt,
                         target, at, time_zero=time_zero)
    settings = every_settings[0]
    result, accounting, ops = _replay(settings, file, input_format, key_length, strict, time_zero, every, uptime,
                                      sample, drawn, hash_keys, keep_ops=bool(plot) and every is not None)
    show_simulation(result, accounting, fmt, plot, ops, uptime, hash_keys)


def _checked_settings(model, limits, key_length, noted: set) -> list:
    """The settings of each -m, refused (exit 2) where the key cannot be stored or the model cannot run."""
    from slabcalc.engines.simulate import SimulationError, background_for, describe_model

    every_settings = [settings_from(**model, memory_limit=limit, noted=noted) for limit in limits]
    check_key(every_settings[0], key_length)
    try:
        for settings in every_settings:
            describe_model(settings, background_for(settings))
    except SimulationError as exc:
        raise Refusal(str(exc)) from None
    return every_settings


def _refuse_for_a_curve(every, hash_keys) -> None:
    """The options of one replay, refused with a list of -m or --target-hit-ratio."""
    if every is not None:
        raise Refusal("--every draws the timeline of one replay: give one -m with it, not a list "
                      "or --target-hit-ratio")
    if hash_keys:
        raise Refusal("--hash-keys saves the memory of one replay: a curve holds the whole workload anyway")


def _replay(settings, file, input_format, key_length, strict, time_zero, every, uptime, sample, drawn, hash_keys,
            keep_ops: bool):
    """One replay at one -m: its result, the reader's accounting, and the operations when ``keep_ops``
    (and the reader drew no sample) -- the timeline's plot replays them once more for each step's hit ratio."""
    from slabcalc.engines.simulate import simulate

    with input_workload(file, "simulate", input_format=input_format, key_length=key_length, strict=strict,
                        key_max=settings.profile.key_max, time_zero=time_zero,
                        sample=None if drawn else sample) as (ops, accounting):
        if keep_ops and sample is None:
            ops = list(ops)
        result = refusing_coarse(lambda ops: simulate(settings, ops, every=every, boot=uptime, sample=sample,
                                                         hash_keys=hash_keys, drawn=drawn,
                                                         **reader_left_out(accounting, drawn)),
                                 recount_coarse(file, settings, accounting, input_format, key_length, time_zero))(ops)
    return result, accounting, ops if isinstance(ops, list) else None
