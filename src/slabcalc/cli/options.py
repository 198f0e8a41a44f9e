"""Every shared option, defined once: the model's flags, --format/--columns/--bytes, --plot, the CI gate and the deployment plan.

This module is long because every option the commands share is defined here once (pip-tools' options.py), with
the one numeric type that refuses NaN and infinity and bounds every number (issue 41)."""

from __future__ import annotations

import functools
import math
from typing import Callable

import click

from slabcalc.cli import output, tables
from slabcalc.cli.common import settings_from
from slabcalc.cli.errors import Refusal
from slabcalc.cli.vocabulary import SHARE_HELP, old_spelling, say_old, share
from slabcalc.errors import ValueRefused
from slabcalc.model.units import parse_size

FORMAT_HELP = "Output: table (default), csv, json, or any tabulate format (github, grid, ...)."


class SizeType(click.ParamType):
    """A byte size with memcached's 1024-based units: ``1048576``, ``512k``, ``1m``, ``1g``."""

    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ValueRefused as exc:
            self.fail(str(exc), param, ctx)


SIZE = SizeType()


class FiniteRange(click.FloatRange):
    """A real number within bounds that is a number at all: ``nan`` and ``inf`` (which Python's
    ``float`` reads, and which pass every comparison a range makes or fail none) are refused."""

    name = "number"

    def convert(self, value, param, ctx):
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


def real(low: float, high: float, *, low_open: bool = False, high_open: bool = False) -> click.ParamType:
    """A number option's type: finite, from ``low`` to ``high`` (both required: no option is unbounded)."""
    return FiniteRange(low, high, min_open=low_open, max_open=high_open)


def whole(low: int, high: int) -> click.ParamType:
    """A whole-number option's type, from ``low`` to ``high`` (both required: no option is unbounded)."""
    return click.IntRange(low, high)


# Bounds shared by several commands' options.
DAY = 86400
COUNT_MAX = (1 << 31) - 1          # a count of readings, items, connections: a C int's range




def _release_options() -> list:
    """``--profile`` and ``--bits``: which memcached build (stats reads both from each node)."""
    return [
        click.option("--profile", "profile", metavar="RELEASE|FILE", default=None,
                     help="memcached release (1.4.24, 1.6.18, 1.6.45, ...) or a YAML profile; default 1.6.45."),
        click.option("--bits", type=click.Choice(["64", "32"]), default="64", show_default=True,
                     help="Word size of the memcached build (32-bit builds have a 32-byte item header)."),
    ]


def _flag_options(memory_help: str) -> list:
    """memcached's own flags, spelt as memcached spells them: one configuration, given one way to every command."""
    return [
        click.option("-n", "--slab-min-size", "slab_min_size", metavar="BYTES", default=None,
                     help="memcached -n: minimum key+value+flags space of the smallest class (default 48)."),
        click.option("-f", "--slab-growth-factor", "factor", metavar="FACTOR", default=None,
                     help="memcached -f: chunk size growth factor between classes (default 1.25)."),
        click.option("-I", "--max-item-size", "max_item_size", type=SIZE, default=None,
                     help="memcached -I: largest item, e.g. 512k, 1m, 2m (default 1m)."),
        click.option("-m", "--memory-limit", "memory_limit", metavar="MB|SIZE", default=None, help=memory_help),
        click.option("--cas/--no-cas", " /-C", "cas", default=None,
                     help="memcached -C turns CAS off and saves 8 bytes per item (default: on)."),
        click.option("--slab-chunk-max", "slab_chunk_max", metavar="N|SIZE", default=None,
                     help="-o slab_chunk_max: a plain number is in the release's unit (bytes before "
                          "1.6.24, kilobytes after); 16k or 512k are exact sizes.  Not given: the release's default (512k)."),
        click.option("--slab-sizes", "slab_sizes", metavar="LIST", default=None,
                     help="-o slab_sizes: chunk sizes in bytes, dash- or comma-separated (96-120-152).  Not given: "
                          "classes grow from -n by -f."),
        click.option("-o", "extra_options", metavar="OPTIONS", multiple=True,
                     help="memcached's own -o string, e.g. -o slab_chunk_max=16,slab_sizes=96-200 (repeatable).  "
                          "Not given: the release's defaults."),
        click.option("-t", "--threads", "threads", metavar="N", default=None,
                     help="memcached -t: worker threads (default 4); sizes the process, not the slabs."),
        click.option("-c", "--conn-limit", "conn_limit", metavar="N", default=None,
                     help="memcached -c: most connections at once (default 1024); the process model "
                          "budgets this many unless --connections says fewer."),
        click.option("-L", "--prealloc", "prealloc", is_flag=True, default=False,
                     help="memcached -L: -m in one block and a page for every class at start."),
    ]


MEMORY_HELP = ("memcached -m: memory limit in megabytes, or a size such as 1g.  Not given: simulate replays under "
               "memcached's default, 64; report prints the -m that holds the items; optimize minimises page bytes "
               "instead of fitting items; place shows no capacity; classes and compare do not use it.  simulate "
               "also takes a list, 16,32,64, or a range START..STOP:STEP, 16..128:16: a hit-ratio curve, one "
               "replay per limit.")


def model_options(func: Callable) -> Callable:
    """The options that describe a memcached server, shared by every command: the release, then its flags."""
    for option in reversed(_release_options() + _flag_options(MEMORY_HELP)):
        func = option(func)
    return func


def server_flag_options(func: Callable) -> Callable:
    """``stats``: the flags the node(s) were started with, the same options as every command's (the release
    and word size are the node's own), handed to the command as one ``server_args`` argument: memcached's
    command line, or None when none is given.  The old ``--server-args 'FLAGS'`` is still taken, with its note."""
    @functools.wraps(func)
    def wrapper(*args, server_args_old_spelling=None, **params):
        import shlex

        from slabcalc.cli.common import flags_argv

        flags = {name: params.pop(name) for name in FLAG_PARAMS}
        argv = flags_argv(**flags) if any(v not in (None, False, ()) for v in flags.values()) else None
        if server_args_old_spelling is not None:
            if argv is not None:
                raise click.UsageError("--server-args is the old spelling of the flags given as options "
                                       f"({' '.join(argv)}): give the options alone")
            try:
                argv = shlex.split(server_args_old_spelling)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="'--server-args'") from None
            say_old("--server-args", f"give the flags as options, as every command takes them: {' '.join(argv)}")
        return func(*args, server_args=argv, **params)

    memory_help = ("memcached -m the node(s) were started with, in megabytes or a size such as 1g.  Any of these "
                   "flags given: the model is memcached started with them, not what stats settings shows (it "
                   "rounds -f and hides -o slab_sizes).  Not given (none of them): stats settings.")
    wrapper = click.option("--server-args", "server_args_old_spelling", hidden=True, default=None)(wrapper)
    for option in reversed(_flag_options(memory_help)):
        wrapper = option(wrapper)
    return wrapper


vs_option = click.option(
    "--vs", "what_if", multiple=True, metavar="'FLAGS'",
    help="Another memcached configuration beside the one given: memcached's flags in one string, laid on the "
         "given ones as memcached reads its command line (a later flag wins), e.g. --vs '-f 1.08' --vs '-C' "
         "(repeatable).  Not given: no comparison.")


KEY_HELP = ("Key length for inputs without a key column (a column of value sizes), 1 to the release's key_max.  "
            "Not given: such an input is refused.")


def key_option(key_help: str = KEY_HELP, required: bool = False) -> Callable:
    """``--key BYTES``: a key length, 1 to the release's key_max (checked by :func:`check_key`)."""
    # no default when required: click 8.3+ takes an explicit default=None as given, and would not ask
    default = {} if required else {"default": None}
    return click.option("--key", "key_length", type=whole(-COUNT_MAX, COUNT_MAX), required=required, metavar="BYTES",
                        help=key_help, **default)


def input_options(key_help: str = KEY_HELP) -> Callable:
    """``--key`` and ``--strict``, for every command that reads an input of items or operations.

    ``--key``'s range is the release's (the profile's ``key_max``): :func:`check_key` checks it once
    the settings are known."""
    def decorate(func: Callable) -> Callable:
        func = click.option("--strict", is_flag=True,
                            help="Stop at the first bad row (exit 1, file and line named).")(func)
        return key_option(key_help)(func)
    return decorate


time_zero_option = click.option(
    "--time-zero", "time_zero", type=click.IntRange(0, 1 << 36), default=None, metavar="UNIX",
    help="The unix time of the workload's time 0: a ttl over 30 days is a unix time to memcached, replayed as "
         "the seconds left until it (an item already expired when it is past).  Not given: a time of 10^9 or "
         "more is itself a unix time, and a ttl over 30 days at an earlier time is refused.")


SAMPLE_HELP = ("Replay only the keys whose hash falls under RATE, a share above 0 and up to 1 (0.01 or 1%; "
               "SHARDS-style spatial "
               "sampling; the hash is docs/sampling.md's, the one `sql --workload --sample` uses), each page "
               "holding RATE of its chunks, and scale the counts back, with their error: for nodes too large to "
               "replay whole.  A RATE at which -m cannot hold 20 sampled chunks of each class the workload uses "
               "is refused, naming the smallest that can.  Not given: every key.")
sample_option = click.option("--sample", "sample", type=share(low_open=True, exact=False), default=None, metavar="RATE",
                             help=SAMPLE_HELP)
sampled_option = click.option(
    "--sampled", "sampled", type=share(low_open=True, exact=False), default=None, metavar="RATE",
    help="FILE is a sample of RATE (0.01 or 1%) drawn already (`slabcalc sql --workload --sample RATE`, run in a "
         "warehouse): replay all of it and scale the counts as --sample RATE does, the hit ratio adjusted to the "
         "whole log's gets its log_ops and log_gets columns state (without them: the sample's own, said so).  "
         "Not with --sample.  Not given: FILE is the whole log.")


def workload_sample_options(func: Callable) -> Callable:
    """``slabcalc sql --workload``: the sample's rate, the key rule and the log's columns (each named
    as the workload CSV's column by default)."""
    for option in reversed([
        click.option("--workload", is_flag=True,
                     help="Write the query selecting a replayable sample of a request log (TABLE) for "
                          "`simulate --sampled`, not the item-size histogram."),
        click.option("--sample", "sample", type=share(low_open=True, exact=False), default=None, metavar="RATE",
                     help="With --workload: keep the requests of the keys `simulate --sample RATE` keeps "
                          "(above 0 and up to 1: 0.01 or 1%; required with --workload).  Not given: refused "
                          "with --workload."),
        click.option("--id-keys", "id_keys", is_flag=True,
                     help="With --workload: the key column holds integer ids (oracleGeneral's obj_id), "
                          "hashed as the oracleGeneral reader hashes them, not as text."),
        click.option("--time-col", "time_col", default="time", show_default=True, metavar="COLUMN",
                     help="With --workload: the column holding the request's time (seconds)."),
        click.option("--op-col", "op_col", default="op", show_default=True, metavar="COLUMN",
                     help="With --workload: the column holding the command (set, get, delete, touch)."),
        click.option("--value-size-col", "value_size_col", default="value_size", show_default=True,
                     metavar="COLUMN", help="With --workload: the column holding the value's size in bytes."),
        click.option("--ttl-col", "ttl_col", default="ttl", show_default=True, metavar="COLUMN",
                     help="With --workload: the column holding the TTL (exptime) sent."),
    ]):
        func = option(func)
    return func


RESAMPLES_DEFAULT = 3     # optimize: each resample searched again costs one more search (benchmarks/optimize_bench.py)

resamples_option = click.option(
    "--resamples", "resamples", type=whole(0, 20), default=RESAMPLES_DEFAULT, show_default=True, metavar="K",
    help="Run the search again on K resamples of the items (drawn with replacement, --seed) and say "
         "whether they choose the same flags, and whether the recommended flags' gain holds on each; "
         "0 skips it.  Each resample costs one more search.")


def check_key(settings, key_length: int | None) -> None:
    """``--key`` within the release's key lengths (1..``key_max``, memcached's KEY_MAX_LENGTH), or a
    one-line refusal (exit 2)."""
    key_max = settings.profile.key_max
    if key_length is not None and not 1 <= key_length <= key_max:
        raise Refusal(f"--key: key length must be 1..{key_max} bytes ({settings.profile.label}), not {key_length}")


class FormatChoice(click.ParamType):
    """``--format``: table, csv, json, a command's own extras, or any tabulate format (any case).

    Like ``click.Choice``, but tabulate (and what it imports) is loaded only
    for a value that is none of ours: it costs a fifth of start-up.
    """

    name = "format"

    def __init__(self, extra: tuple[str, ...]):
        self.extra = extra

    def convert(self, value, param, ctx):
        fmt = str(value).lower()
        if fmt in (output.TABLE, *output.MACHINE, *self.extra):
            return fmt
        choices = output.format_choices(self.extra)
        if fmt in choices:
            return fmt
        self.fail(f"{value!r} is not one of {', '.join(map(repr, choices))}.", param, ctx)


def format_option(*extra: str, command: str) -> Callable:
    """``--format``, and for tables ``--columns`` (those of ``command``'s tables, :data:`tables.COMMAND_COLUMNS`)
    and ``--bytes`` (see :class:`slabcalc.cli.output.View`)."""
    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, columns, raw_bytes, **kwargs):
            output.set_view(output.View(columns=_columns(columns, command), raw_bytes=raw_bytes))
            return func(*args, **kwargs)
        wrapper = click.option("--bytes", "raw_bytes", is_flag=True,
                               help="Tables show byte counts as integers, not KiB/MiB/GiB (csv and json "
                                    "always do).")(wrapper)
        wrapper = click.option("--columns", "columns", default=None, metavar="A,B,...|all",
                               help="Each table that has two of these columns (or the one named) shows those it "
                                    "has, in this order; or all its columns (default: those that fit the "
                                    "terminal's width, COLUMNS, else 120).")(wrapper)
        return click.option("--format", "fmt", default=output.TABLE, metavar="FORMAT", type=FormatChoice(extra),
                            help=FORMAT_HELP + (f" Also: {', '.join(extra)}." if extra else ""))(wrapper)
    return decorate


def _columns(text: str | None, command: str) -> tuple[str, ...] | None:
    """``--columns``: names of ``command``'s table columns, or ``all``."""
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if names == ("all",):
        return names
    known = tables.COMMAND_COLUMNS[command]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        listed = ", ".join(dict.fromkeys(known))
        raise click.BadParameter(f"no column {', '.join(unknown) if unknown else repr(text)} in {command}'s tables; "
                                 f"they have: {listed}, or all", param_hint="'--columns'")
    return names


def _plot_path(ctx, param, value):
    """``--plot FILE``: a .png or .svg path, and matplotlib installed (both checked before any work is done:
    exit 2, one line)."""
    if value is None:
        return None
    if not value.lower().endswith((".png", ".svg")):
        raise click.BadParameter(f"{value}: the plot is written as .png or .svg, by the file's suffix")
    from slabcalc.cli.plot import PlotUnavailable, check_available

    try:
        check_available()
    except PlotUnavailable as exc:
        raise click.UsageError(str(exc)) from None
    return value


plot_option = click.option("--plot", "plot", metavar="FILE", default=None, callback=_plot_path,
                           help="Also draw memory per class (requested, chunk waste, free) to FILE.png or "
                                "FILE.svg (needs: pip install 'slabcalc[plot]').")


def _fill_rate(ctx, param, value):
    """``--rate SETS``: refused (exit 2) where the real server was not measured to keep a pace the replay
    can answer for (:func:`slabcalc.analysis.extstore_fill.check_rate`)."""
    if value is None:
        return None
    from slabcalc.analysis.extstore_fill import check_rate

    try:
        return check_rate(value)
    except ValueRefused as exc:
        raise click.BadParameter(str(exc)) from None


rate_option = click.option("--rate", "rate", type=whole(-COUNT_MAX, COUNT_MAX), default=None, metavar="SETS", callback=_fill_rate,
                           help="With -o ext_path and -m: the sets a second the items arrive at in the replayed "
                                "fill that gives the capacity, 500 to 4000 (docs/extstore-capacity.md).  Not given: "
                                "2000.")


def check_rate_given(settings, rate: int | None) -> None:
    """``--rate`` only where a fill is replayed: with -o ext_path and -m (exit 2 otherwise)."""
    if rate is not None and (settings.extstore is None or settings.memory_limit is None):
        raise Refusal("--rate paces the extstore fill replayed for the capacity: it needs -o ext_path=FILE:SIZE "
                      "and -m")


def gate_options(func: Callable) -> Callable:
    """``--fail-over-waste PCT`` and ``--fail-over-memory SIZE`` (a CI gate), shared by commands.

    The command prints its normal output and calls :func:`measured` with its
    figures; when they cross a threshold the run ends with exit status 3 and
    a one-line reason on stderr.  Wiring a command: this decorator, plus one
    ``measured(Measure(...))`` call after printing.
    """
    @functools.wraps(func)
    def wrapper(*args, fail_over_waste=None, fail_over_memory=None, **kwargs):
        from slabcalc.cli.gate import EXIT_STATUS, Gate, crossed

        ctx = click.get_current_context()
        ctx.meta["slabcalc.cli.gate"] = gate = Gate(fail_over_waste, fail_over_memory)
        result = func(*args, **kwargs)
        measure = ctx.meta.get("slabcalc.measure")
        reason = crossed(gate, measure) if gate.active and measure is not None else None
        if reason:
            click.echo(f"Error: {reason}", err=True)
            return EXIT_STATUS
        return result
    wrapper = click.option("--fail-over-memory", "fail_over_memory", type=SIZE, default=None, metavar="SIZE",
                           help="Exit with status 3 (after the normal output) when memory is over SIZE.  Not "
                                "given: no memory gate.")(wrapper)
    return click.option("--fail-over-waste", "fail_over_waste", type=share(high_open=True, was_percent=True),
                        default=None, metavar="SHARE",
                        help=f"Exit with status 3 (after the normal output) when more than SHARE of memory holds "
                             f"no item data, {SHARE_HELP}.  Not given: no waste gate.")(wrapper)


def tls_options(func: Callable) -> Callable:
    """``--tls``, ``--tls-ca``, ``--tls-cert``, ``--tls-key``: handed to the command as one ``tls``
    argument, an ``ssl.SSLContext`` (or None) made once for every node of the pool.

    A CA file or certificate implies ``--tls``; a key without a certificate, or
    files OpenSSL cannot use, are refused (exit 2) before any node is read.
    """
    @functools.wraps(func)
    def wrapper(*args, tls, tls_ca, tls_cert, tls_key, **kwargs):
        context = None
        if tls_key is not None and tls_cert is None:
            raise click.UsageError("--tls-key is the key of --tls-cert: give the certificate too")
        if tls or tls_ca is not None or tls_cert is not None:
            from slabcalc.inputs.client import tls_context

            try:
                context = tls_context(tls_ca, tls_cert, tls_key)
            except ValueRefused as exc:
                raise Refusal(str(exc)) from None
        return func(*args, tls=context, **kwargs)
    path = click.Path(exists=True, dir_okay=False)
    options = [
        click.option("--tls", "tls", is_flag=True, default=False,
                     help="Speak TLS to the nodes (memcached -Z), verifying each server's certificate and "
                          "host name (default: plain TCP)."),
        click.option("--tls-ca", "tls_ca", type=path, default=None, metavar="FILE",
                     help="The CA bundle (PEM) to verify the servers against; implies --tls (default: the "
                          "system's CAs)."),
        click.option("--tls-cert", "tls_cert", type=path, default=None, metavar="FILE",
                     help="A client certificate (PEM) for servers that require one (-o ssl_verify_mode=2); "
                          "implies --tls (default: none)."),
        click.option("--tls-key", "tls_key", type=path, default=None, metavar="FILE",
                     help="The private key of --tls-cert (default: in the certificate's file)."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def watch_options(func: Callable) -> Callable:
    """``--watch SECONDS`` and ``--count N``: read the nodes again and again."""
    options = [
        click.option("--watch", "watch", type=real(1, DAY), default=None, metavar="SECONDS",
                     help="Keep reading each --server every SECONDS (1 to 86400) and print, as each reading "
                          "comes, the rates since the one before, pages moved and what changed; Ctrl-C "
                          "stops (default: read once)."),
        click.option("--count", "count", type=whole(1, COUNT_MAX), default=None, metavar="N",
                     help="With --watch: stop after N readings (default: until Ctrl-C)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def measured(measure) -> None:
    """What a command gated by :func:`gate_options` measured (a :class:`slabcalc.cli.gate.Measure`)."""
    click.get_current_context().meta["slabcalc.measure"] = measure


def deploy_options(func: Callable) -> Callable:
    """``report``'s deployment options, handed to the command as one ``deploy`` dict."""
    names = ("overhead", "connections", "container", "nodes", "node_ram", "headroom", "fill", "spare_nodes", "spread",
             "node_names", "group_by", "separator")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        deploy = {name: kwargs.pop(name) for name in names}
        if deploy["group_by"] is not None:   # a bad pattern or separator is a usage error: before reading
            from slabcalc.analysis.keyspace import grouper

            try:
                grouper(deploy["group_by"], deploy["separator"])
            except ValueRefused as exc:
                raise Refusal(str(exc)) from None
        return func(*args, deploy=deploy, **kwargs)
    options = [
        click.option("--overhead", "overhead", default=None, metavar="SIZE|N%",
                     help="Process memory besides slab pages and the hash table (connections, threads, "
                          "the rest): a size (64m; a bare number is bytes), or a share of the whole process, "
                          "a percent with its sign (25%).  Default 0."),
        click.option("--connections", "connections", type=whole(0, COUNT_MAX), default=None, metavar="N",
                     help="Client connections open at once, for the process model (default: -c, 1024)."),
        click.option("--container", "container", type=SIZE, default=None, metavar="SIZE",
                     help="The -m to set so the whole process fits a container or node of SIZE "
                          "(compared with the -m x 1.2 rule).  Not given: no container sizing."),
        click.option("--nodes", "nodes", type=whole(1, 1 << 20), default=None, metavar="N",
                     help="Split the items evenly over N nodes: per-node -m, items, pages, process memory.  "
                          "Not given: one node."),
        click.option("--node-ram", "node_ram", type=SIZE, default=None, metavar="SIZE",
                     help="How many nodes of SIZE RAM hold the items (with --headroom free on each).  Not "
                          "given: not asked."),
        click.option("--headroom", "headroom", type=share(high_open=True, was_percent=True), default="0",
                     show_default=True, metavar="SHARE",
                     help=f"With --node-ram: the share of each node's RAM to leave free, {SHARE_HELP}."),
        click.option("--fill", "fill", type=share(low_open=True, was_percent=True), default=None, metavar="SHARE",
                     help=f"With --nodes/--node-ram: the share of -m the items fill (room to grow; the whole "
                          f"-m is budgeted), {SHARE_HELP}.  Default 100%."),
        click.option("--spare-nodes", "spare_nodes", type=whole(0, 1 << 20), default=0, show_default=True,
                     metavar="N", help="With --nodes/--node-ram: nodes that may be down while the rest hold "
                                       "every item (1 for N+1)."),
        click.option("--spread", "spread", type=click.Choice(["ketama", "even"]), default="ketama",
                     show_default=True, help="With --nodes/--node-ram: size nodes for the fullest node of a "
                                             "ketama ring (160 points a node), or for an even share."),
        click.option("--node-names", "node_names", default=None, metavar="H:P,H:P,...",
                     help="With --nodes: the nodes' names as the clients hash them (default node1:11211, ...)."),
        click.option("--group-by", "group_by", default=None, metavar="prefix|REGEX",
                     help="Items, memory and waste per key group (metadump or a CSV key_name column): "
                          "'prefix' (up to the first --separator) or a regex (its first group, or match).  "
                          "Not given: no groups."),
        click.option("--separator", "separator", default=":", show_default=True, metavar="TEXT",
                     help="With --group-by prefix: where a key's prefix ends."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


# The parameters model_options adds to a command, in the order settings_from takes them.
FLAG_PARAMS = ("slab_min_size", "factor", "max_item_size", "memory_limit", "cas", "slab_chunk_max", "slab_sizes",
               "extra_options", "threads", "conn_limit", "prealloc")
MODEL_PARAMS = ("profile", "bits", *FLAG_PARAMS)


def with_settings(func: Callable) -> Callable:
    """Turn the shared model options into a ``settings`` argument."""
    @functools.wraps(func)
    def wrapper(**kwargs):
        model = {name: kwargs.pop(name) for name in MODEL_PARAMS}
        return func(settings=settings_from(**model), **kwargs)
    return wrapper
