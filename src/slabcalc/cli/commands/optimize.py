"""``slabcalc optimize``."""

from __future__ import annotations

import click

from slabcalc.model.item import size_key
from slabcalc.cli.common import check_layout_options, input_items, input_workload, measure, say_rejected, settings_from
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.optimize_output import print_optimum
from slabcalc.cli.options import (SHARE_HELP, check_key, format_option, gate_options, input_options, measured,
                                  model_options, resamples_option, share, time_zero_option, whole)
from slabcalc.errors import SlabcalcError


@cli.command()
@click.argument("file", default="-", metavar="[FILE]")
@input_options()
@click.option("--max-classes", "max_classes", type=whole(1, 199), default=None, metavar="K",
              help="At most K sizes in -o slab_sizes (default: the release's limit, 62).")
@click.option("--validate", "validate", type=share(high_open=True, exact=False), default=0.2, show_default=True,
              metavar="SHARE", help=f"Hold back this random share of the items ({SHARE_HELP}), optimise on the "
                                    "rest, and recommend a change only when it gains on the held-back items too; 0 "
                                    "optimises and scores on every item.  A mix too small to hold back 20 "
                                    "items is scored on every item, and the output says so.")
@click.option("--seed", type=whole(-(1 << 63), (1 << 63) - 1), default=0, show_default=True,
              help="Random seed of --validate's split and of --resamples' draws.")
@resamples_option
@click.option("--workload", "workload", default=None, metavar="FILE",
              help="Also replay this workload (simulate's input) under the baseline and each space's best, "
                   "and report their get hits: a change that would cut hits says so.  Not given: bytes only.")
@click.option("--hot", "hot", default=None, metavar="fetched|SECONDS",
              help="With a metadump: optimise for the items in use only -- fetched ones (fetch=yes), or "
                   "those used within SECONDS of the dump's newest access (la=).  Not given: every item.")
@time_zero_option
@gate_options
@model_options
@format_option(command="optimize")
def optimize(file, key_length, strict, max_classes, validate, seed, resamples, workload, hot, time_zero, fmt,
             **model):
    """The flags that hold a distribution in the fewest pages.

    Reads FILE as `report` does.  Three searches, each reported separately:
    -n/-f (a fine grid), -o slab_sizes (the exact optimum, by dynamic
    programming) and -o slab_chunk_max (when there are large items).  With -m
    the objective is the items of this mix that fit instead.  Every winner is
    scored again by `report`.  --fail-over-waste/--fail-over-memory gate the
    configuration given (the baseline), as `report` would.

    \b
    Python: with open_items(FILE, settings=settings) as (rows, _): optimize(settings, list(rows), ...)
    """
    from slabcalc.analysis.optimize import optimize as run
    from slabcalc.records.optimize import optimum_record

    settings = settings_from(**model)
    check_key(settings, key_length)
    check_layout_options(settings, "optimize")
    if max_classes is not None and max_classes > settings.profile.max_regular:
        raise Refusal(f"--max-classes: memcached {settings.profile.release} takes at most "
                      f"{settings.profile.max_regular} slab sizes")
    if hot is not None and hot != "fetched" and not hot.isdigit():
        raise click.BadParameter(f"{hot!r} is neither 'fetched' nor a number of seconds", param_hint="'--hot'")
    with input_items(file, "optimize", settings, key_length=key_length, strict=strict, hot=hot) as (items, accounting):
        triples = list(items)
    source = accounting.source
    say_rejected(accounting)
    try:
        found = run(settings, triples, max_classes=max_classes, validate=validate or None,
                    seed=seed, size_key_length=size_key(key_length), resamples=resamples)
    except SlabcalcError as exc:
        raise DataError(f"{source}: {exc}") from None
    from slabcalc.analysis.hits import HotItems

    replayed = _workload_hits(found, workload, key_length, time_zero) if workload is not None else None
    record = optimum_record(found, validate_asked=validate or None, workload=replayed,
                            hot=HotItems(hot, accounting.left_out) if hot is not None else None)
    print_optimum(record, settings.memory_limit, fmt)
    _gate_baseline(found.whole_baseline or found.baseline.report)     # every item, as report measures them


def _workload_hits(found, workload, key_length, time_zero=None):
    """``--workload``: read it (``--time-zero``: as simulate reads it), and replay it under the baseline and each space's best (simulate's engine)."""
    from slabcalc.analysis.hits import workload_hits
    from slabcalc.engines.simulate import SimulationError

    with input_workload(workload, "optimize --workload", key_length=key_length,
                        key_max=found.baseline.report.settings.profile.key_max, time_zero=time_zero) as (ops, accounting):
        ops = list(ops)
        src = accounting.source
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
