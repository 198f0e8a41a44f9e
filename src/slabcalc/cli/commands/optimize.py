"""``slabcalc optimize``."""

from __future__ import annotations

import click

from slabcalc.cli.common import check_layout_options, measure, open_input_for, say_rejected, settings_from, warehouse_items
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.optimize_output import print_optimum
from slabcalc.cli.options import check_key, format_option, gate_options, input_options, measured, model_options
from slabcalc.errors import SlabcalcError


@cli.command()
@click.argument("file", default="-", metavar="[FILE]")
@input_options()
@click.option("--max-classes", "max_classes", type=click.IntRange(1, 199), default=None, metavar="K",
              help="At most K sizes in -o slab_sizes (default: the release's limit, 62).")
@click.option("--validate", "validate", type=click.FloatRange(0, 1, max_open=True), default=0.2, show_default=True,
              metavar="FRACTION", help="Hold back this random part of the items, optimise on the rest, and "
                                       "recommend a change only when it gains on the held-back items too; 0 "
                                       "optimises and scores on every item.  A mix too small to hold back 20 "
                                       "items is scored on every item, and the output says so.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of --validate's split.")
@click.option("--workload", "workload", default=None, metavar="FILE",
              help="Also replay this workload (simulate's input) under the baseline and each space's best, "
                   "and report their get hits: a change that would cut hits says so.  Not given: bytes only.")
@click.option("--hot", "hot", default=None, metavar="fetched|SECONDS",
              help="With a metadump: optimise for the items in use only -- fetched ones (fetch=yes), or "
                   "those used within SECONDS of the dump's newest access (la=).  Not given: every item.")
@gate_options
@model_options
@format_option(command="optimize")
def optimize(file, key_length, strict, max_classes, validate, seed, workload, hot, fmt, **model):
    """The flags that hold a distribution in the fewest pages.

    Reads FILE as `report` does.  Three searches, each reported separately:
    -n/-f (a fine grid), -o slab_sizes (the exact optimum, by dynamic
    programming) and -o slab_chunk_max (when there are large items).  With -m
    the objective is the items of this mix that fit instead.  Every winner is
    scored again by `report`.  --fail-over-waste/--fail-over-memory gate the
    configuration given (the baseline), as `report` would.

    \b
    Python: optimize(settings, read_items(...)[0], memory_limit=..., max_classes=...)
    """
    from slabcalc.analysis.optimize import optimize as run
    from slabcalc.inputs.items import read_items
    from slabcalc.records.optimize import optimum_record

    settings = settings_from(**model)
    check_key(settings, key_length)
    check_layout_options(settings, "optimize")
    limit = settings.memory_limit
    if max_classes is not None and max_classes > settings.profile.max_regular:
        raise Refusal(f"--max-classes: memcached {settings.profile.release} takes at most "
                      f"{settings.profile.max_regular} slab sizes")
    if hot is not None and hot != "fetched" and not hot.isdigit():
        raise click.BadParameter(f"{hot!r} is neither 'fetched' nor a number of seconds", param_hint="'--hot'")
    left_out = None
    read = warehouse_items(file, settings, key_length)
    if read is not None and hot is not None:
        raise Refusal("--hot reads metadump lines: give it a metadump, not a warehouse file")
    if read is not None:
        (triples, accounting), source = read, file
    else:
        with open_input_for(file, "optimize") as (stream, source, _):
            if hot is not None:
                stream, left_out = _hot_items(stream, source, hot)
            items, accounting = read_items(stream, source, key_length=key_length, strict=strict,
                                           key_max=settings.profile.key_max)
            triples = list(items)
    say_rejected(accounting)
    try:
        found = run(settings, triples, memory_limit=limit, max_classes=max_classes, validate=validate or None,
                    seed=seed, size_key_length=key_length or 16)
    except SlabcalcError as exc:
        raise DataError(f"{source}: {exc}") from None
    from slabcalc.analysis.hits import HotItems

    replayed = _workload_hits(found, workload, key_length) if workload is not None else None
    record = optimum_record(found, validate_asked=validate or None, workload=replayed,
                            hot=HotItems(hot, left_out.left_out) if hot is not None else None)
    print_optimum(record, limit, fmt)
    _gate_baseline(found.whole_baseline or found.baseline.report)     # every item, as report measures them


def _hot_items(stream, source, rule):
    """``--hot``: the metadump's lines of items in use as a stream that keeps them as it is read, and the
    :class:`HotLines` that counts those left out.  The input is not held (issue 30), but for SECONDS from
    a pipe: SECONDS counts back from the newest la=, which a file gives in a first pass."""
    from itertools import chain

    from slabcalc.analysis.hits import HotLines, newest_access
    from slabcalc.inputs.lines import LineStream, split_lines

    lines, head = split_lines(stream), []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    first = head[-1].strip() if head else ""
    if not (first.startswith("key=") or first.startswith("lru_crawler metadump") or first in ("OK", "END")):
        raise Refusal(f"--hot reads la= and fetch= of a metadump; {source} is not one (first line {first[:40]!r})")
    lines, newest = chain(head, lines), None
    if rule != "fetched" and stream.seekable():
        newest = newest_access(lines)
        stream.seek(0)
        lines = split_lines(stream)
    elif rule != "fetched":
        lines = list(lines)
        newest = newest_access(lines)
    hot = HotLines(lines, rule, newest)
    return LineStream(hot), hot


def _workload_hits(found, workload, key_length):
    """``--workload``: read it, and replay it under the baseline and each space's best (simulate's engine)."""
    from slabcalc.analysis.hits import workload_hits
    from slabcalc.engines.simulate import SimulationError
    from slabcalc.inputs.workload import read_workload

    with open_input_for(workload, "optimize --workload", "a workload", "ops.csv", value_errors=True) as (stream, src, _):
        ops, accounting = read_workload(stream, src, key_length=key_length,
                                        key_max=found.baseline.report.settings.profile.key_max)
        ops = list(ops)
    say_rejected(accounting)
    try:
        replayed = workload_hits(found, ops, src)
    except SimulationError as exc:
        raise Refusal(f"--workload: {exc}") from None
    if not replayed.base.gets:
        raise DataError(f"--workload: {src} has no gets: replaying it says nothing of hits")
    return replayed


def _gate_baseline(base) -> None:
    """The CI gate of ``optimize``: the configuration given, measured as ``report`` measures it."""
    from slabcalc.analysis.process import process_memory

    measured(measure(base.total("page_bytes") - base.total("requested_bytes"), base.total("page_bytes"),
                      process_memory(base).total, "process memory"))
