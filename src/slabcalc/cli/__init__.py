"""The ``slabcalc`` command: click options in, library calls, rendered text out.

Each option is defined once here and shared by every command, with
memcached's own names and units.  No memcached arithmetic lives in this
module: it builds a memcached argument list, hands it to
:func:`slabcalc.model.settings.configure`, and renders what the library returns.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from typing import Callable

import click

from slabcalc.cli import output
from slabcalc.model.units import parse_size

FORMAT_HELP = "Output: table (default), csv, json, or any tabulate format (github, grid, ...)."


class Refusal(click.ClickException):
    """A configuration memcached refuses, or input slabcalc cannot use: one line, exit 2."""

    exit_code = 2


class DataError(click.ClickException):
    """Valid options, but the model cannot answer (one line, exit 1)."""

    exit_code = 1


class SizeType(click.ParamType):
    """A byte size with memcached's 1024-based units: ``1048576``, ``512k``, ``1m``, ``1g``."""

    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


SIZE = SizeType()


def model_options(func: Callable) -> Callable:
    """The options that describe a memcached server, shared by every command."""
    options = [
        click.option("--profile", "profile", metavar="RELEASE|FILE", default=None,
                     help="memcached release (1.4.24, 1.6.18, 1.6.45, ...) or a YAML profile; default 1.6.45."),
        click.option("--bits", type=click.Choice(["64", "32"]), default="64", show_default=True,
                     help="Word size of the memcached build (32-bit builds have a 32-byte item header)."),
        click.option("-n", "--slab-min-size", "slab_min_size", metavar="BYTES", default=None,
                     help="memcached -n: minimum key+value+flags space of the smallest class (default 48)."),
        click.option("-f", "--slab-growth-factor", "factor", metavar="FACTOR", default=None,
                     help="memcached -f: chunk size growth factor between classes (default 1.25)."),
        click.option("-I", "--max-item-size", "max_item_size", type=SIZE, default=None,
                     help="memcached -I: largest item, e.g. 512k, 1m, 2m (default 1m)."),
        click.option("-m", "--memory-limit", "memory_limit", metavar="MB|SIZE", default=None,
                     help="memcached -m: memory limit in megabytes, or a size such as 1g (default 64)."),
        click.option("--cas/--no-cas", " /-C", "cas", default=None,
                     help="memcached -C turns CAS off and saves 8 bytes per item (default: on)."),
        click.option("--slab-chunk-max", "slab_chunk_max", metavar="N|SIZE", default=None,
                     help="-o slab_chunk_max: a plain number is in the release's unit (bytes before "
                          "1.6.24, kilobytes after); 16k or 512k are exact sizes."),
        click.option("--slab-sizes", "slab_sizes", metavar="LIST", default=None,
                     help="-o slab_sizes: chunk sizes in bytes, dash- or comma-separated (96-120-152)."),
        click.option("-o", "extra_options", metavar="OPTIONS", multiple=True,
                     help="memcached's own -o string, e.g. -o slab_chunk_max=16,slab_sizes=96-200."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


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


def format_option(*extra: str) -> Callable:
    """``--format``, and for tables ``--columns`` and ``--bytes`` (see :class:`slabcalc.cli.output.View`)."""
    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, columns, raw_bytes, **kwargs):
            output.set_view(output.View(columns=_columns(columns), raw_bytes=raw_bytes))
            return func(*args, **kwargs)
        wrapper = click.option("--bytes", "raw_bytes", is_flag=True,
                               help="Tables show byte counts as integers, not KiB/MiB/GiB (csv and json "
                                    "always do).")(wrapper)
        wrapper = click.option("--columns", "columns", default=None, metavar="A,B,...|all",
                               help="The table's columns, in this order, or all of them (default: those "
                                    "that fit the terminal's width, COLUMNS, else 120).")(wrapper)
        return click.option("--format", "fmt", default=output.TABLE, metavar="FORMAT", type=FormatChoice(extra),
                            help=FORMAT_HELP + (f" Also: {', '.join(extra)}." if extra else ""))(wrapper)
    return decorate


def _columns(text: str | None) -> tuple[str, ...] | None:
    """``--columns``: names every table of slabcalc uses, or ``all``."""
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if names == ("all",):
        return names
    known = _known_columns()
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise click.BadParameter(f"no column {', '.join(unknown) if unknown else repr(text)}; the columns are: "
                                 f"{', '.join(sorted(known))}, or all", param_hint="'--columns'")
    return names


def _known_columns() -> set[str]:
    """Every column name of slabcalc's tables (the *_COLUMNS of the commands, and the plan's)."""
    names = {"node", "memory", "field", "value", "flags", "space", "role", "requested", "waste",
             "held_out_page_bytes", "held_out_gain_pct", "hits", "hits_change_pct", "pages_moved_in",
             "pages_moved_out"}
    for key, value in globals().items():
        if key.endswith("_COLUMNS") and isinstance(value, tuple):
            names.update(value)
    return names


def _plot_path(ctx, param, value):
    """``--plot FILE``: a .png or .svg path (checked before any work is done)."""
    if value is not None and not value.lower().endswith((".png", ".svg")):
        raise click.BadParameter(f"{value}: the plot is written as .png or .svg, by the file's suffix")
    return value


plot_option = click.option("--plot", "plot", metavar="FILE", default=None, callback=_plot_path,
                           help="Also draw memory per class (requested, chunk waste, free) to FILE.png or "
                                "FILE.svg (needs: pip install 'slabcalc[plot]').")


def gate_options(func: Callable) -> Callable:
    """``--fail-over-waste PCT`` and ``--fail-over-memory SIZE`` (a CI gate), shared by commands.

    The command prints its normal output and calls :func:`measured` with its
    figures; when they cross a threshold the run ends with exit status 3 and
    a one-line reason on stderr.  Wiring a command: this decorator, plus one
    ``measured(Measure(...))`` call after printing.
    """
    @functools.wraps(func)
    def wrapper(*args, fail_over_waste=None, fail_over_memory=None, **kwargs):
        from slabcalc.analysis.process import parse_pct
        from slabcalc.cli.gate import EXIT_STATUS, Gate, crossed

        try:
            share = parse_pct(fail_over_waste, "--fail-over-waste") if fail_over_waste is not None else None
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--fail-over-waste'") from None
        ctx = click.get_current_context()
        ctx.meta["slabcalc.cli.gate"] = gate = Gate(share, fail_over_memory)
        result = func(*args, **kwargs)
        measure = ctx.meta.get("slabcalc.measure")
        reason = crossed(gate, measure) if gate.active and measure is not None else None
        if reason:
            click.echo(f"Error: {reason}", err=True)
            return EXIT_STATUS
        return result
    wrapper = click.option("--fail-over-memory", "fail_over_memory", type=SIZE, default=None, metavar="SIZE",
                           help="Exit with status 3 (after the normal output) when memory is over SIZE.")(wrapper)
    return click.option("--fail-over-waste", "fail_over_waste", default=None, metavar="PCT",
                        help="Exit with status 3 (after the normal output) when more than PCT% of memory "
                             "holds no item data.")(wrapper)


def measured(measure) -> None:
    """What a command gated by :func:`gate_options` measured (a :class:`slabcalc.cli.gate.Measure`)."""
    click.get_current_context().meta["slabcalc.measure"] = measure


def deploy_options(func: Callable) -> Callable:
    """``report``'s deployment options, handed to the command as one ``deploy`` dict."""
    names = ("overhead", "nodes", "node_ram", "headroom", "fill", "spare_nodes", "spread", "node_names", "group_by",
             "separator")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        deploy = {name: kwargs.pop(name) for name in names}
        if deploy["group_by"] is not None:   # a bad pattern or separator is a usage error: before reading
            from slabcalc.analysis.keyspace import grouper

            try:
                grouper(deploy["group_by"], deploy["separator"])
            except ValueError as exc:
                raise Refusal(str(exc)) from None
        return func(*args, deploy=deploy, **kwargs)
    options = [
        click.option("--overhead", "overhead", default=None, metavar="SIZE|PCT",
                     help="Process memory besides slab pages and the hash table (connections, threads, "
                          "the rest): a size (64m), or a share of the whole process (25%).  Default 0."),
        click.option("--nodes", "nodes", type=click.IntRange(1, 1 << 20), default=None, metavar="N",
                     help="Split the items evenly over N nodes: per-node -m, items, pages, process memory."),
        click.option("--node-ram", "node_ram", type=SIZE, default=None, metavar="SIZE",
                     help="How many nodes of SIZE RAM hold the items (with --headroom free on each)."),
        click.option("--headroom", "headroom", default="0", show_default=True, metavar="PCT",
                     help="With --node-ram: the share of each node's RAM to leave free."),
        click.option("--fill", "fill", default=None, metavar="PCT",
                     help="With --nodes/--node-ram: the share of -m the items fill (room to grow; the whole "
                          "-m is budgeted).  Default 100."),
        click.option("--spare-nodes", "spare_nodes", type=click.IntRange(0), default=0, show_default=True,
                     metavar="N", help="With --nodes/--node-ram: nodes that may be down while the rest hold "
                                       "every item (1 for N+1)."),
        click.option("--spread", "spread", type=click.Choice(["ketama", "even"]), default="ketama",
                     show_default=True, help="With --nodes/--node-ram: size nodes for the fullest node of a "
                                             "ketama ring (160 points a node), or for an even share."),
        click.option("--node-names", "node_names", default=None, metavar="H:P,H:P,...",
                     help="With --nodes: the nodes' names as the clients hash them (default node1:11211, ...)."),
        click.option("--group-by", "group_by", default=None, metavar="prefix|REGEX",
                     help="Items, memory and waste per key group (metadump or a CSV key_name column): "
                          "'prefix' (up to the first --separator) or a regex (its first group, or match)."),
        click.option("--separator", "separator", default=":", show_default=True, metavar="TEXT",
                     help="With --group-by prefix: where a key's prefix ends."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _draw(kind: str, data, path: str) -> None:
    from slabcalc.cli import plot as plotting

    try:
        getattr(plotting, kind)(data, path)
    except plotting.PlotUnavailable as exc:
        raise DataError(str(exc)) from None
    except OSError as exc:
        raise DataError(f"{path}: cannot write the plot: {exc.strerror or exc}") from None


def _memcached_args(profile, slab_min_size, factor, max_item_size, memory_limit, cas, slab_chunk_max,
                    slab_sizes, extra_options) -> list[str]:
    """The command-line flags a real memcached would be started with."""
    args: list[str] = []
    if memory_limit is not None:
        args += ["-m", str(_megabytes(memory_limit))]
    if slab_min_size is not None:
        args += ["-n", str(slab_min_size)]
    if factor is not None:
        args += ["-f", str(factor)]
    if max_item_size is not None:
        args += ["-I", str(max_item_size)]
    if cas is False:
        args.append("-C")
    subopts = []
    if slab_chunk_max is not None:
        subopts.append(f"slab_chunk_max={_chunk_max_in_release_unit(profile, slab_chunk_max)}")
    if slab_sizes is not None:
        subopts.append("slab_sizes=" + slab_sizes.replace(",", "-").replace(" ", ""))
    subopts += extra_options
    if subopts:
        args += ["-o", ",".join(subopts)]
    return args


def _megabytes(text: str) -> int:
    """``-m``: a plain number is megabytes (memcached's unit); a size must be whole megabytes."""
    text = str(text).strip()
    if text.isdigit():
        return int(text)
    try:
        size = parse_size(text)
    except ValueError as exc:
        raise Refusal(f"-m/--memory-limit: {exc}") from None
    if size % (1 << 20):
        raise Refusal(f"-m/--memory-limit: memcached counts memory in whole megabytes, not {text}")
    return size >> 20


def _chunk_max_in_release_unit(profile, text: str) -> str:
    """``--slab-chunk-max``: plain numbers pass through; sizes become the release's unit."""
    text = str(text).strip()
    if text.lstrip("-").isdigit() or profile is None or not profile.has_slab_chunk_max:
        return text
    try:
        size = parse_size(text)
    except ValueError as exc:
        raise Refusal(f"--slab-chunk-max: {exc}") from None
    unit = profile.slab_chunk_max_unit
    if size % unit:
        raise Refusal(f"--slab-chunk-max: memcached {profile.release} takes slab_chunk_max in "
                      f"{'kilobytes' if unit == 1024 else 'bytes'}; {text} is not a whole number of them")
    return str(size // unit)


def _settings(profile, bits, **options):
    """Profile and settings from the shared options, or a one-line refusal (exit 2)."""
    from slabcalc.model.profile import ProfileError, load_profile
    from slabcalc.model.settings import Refused, configure

    try:
        release = load_profile(profile, bits=int(bits))
    except ProfileError as exc:
        raise Refusal(str(exc)) from None
    args = _memcached_args(release, **options)
    try:
        settings = configure(release, args)
    except Refused as exc:
        said = " / ".join(exc.message.splitlines())
        if exc.crash:
            raise Refusal(f"{release.label} crashes at start-up with {' '.join(args)} ({exc.crash})"
                          + (f" after printing: {said}" if said else "")) from None
        hint = ""
        factor = options.get("factor")
        if factor is not None and "," in str(factor):   # strtod stops at the comma: "1,25" is 1
            hint = f" (memcached reads {factor} as {str(factor).split(',')[0]}: write -f with a decimal point, " \
                   f"{str(factor).replace(',', '.')})"
        raise Refusal(f"{release.label} refuses to start with {' '.join(args)}: "
                      f"{said or '(it exits without a message)'}{hint}") from None
    for warning in settings.warnings:
        click.echo(f"note: {release.label} warns: " + " ".join(warning.split()), err=True)
    factor = options.get("factor")
    if factor is not None and "," in str(factor):
        click.echo(f"note: memcached reads -f {factor} as {settings.factor:g} (it stops at the comma); for "
                   f"{str(factor).replace(',', '.')} write a decimal point", err=True)
    from slabcalc.analysis.advice import class_cap_trap

    trap = class_cap_trap(settings)
    if trap:
        click.echo(output.note(f"warning: {trap}"), err=True)
    return settings


# The parameters model_options adds to a command, in the order _settings takes them.
MODEL_PARAMS = ("profile", "bits", "slab_min_size", "factor", "max_item_size", "memory_limit", "cas",
                "slab_chunk_max", "slab_sizes", "extra_options")


def _with_settings(func: Callable) -> Callable:
    """Turn the shared model options into a ``settings`` argument."""
    @functools.wraps(func)
    def wrapper(**kwargs):
        model = {name: kwargs.pop(name) for name in MODEL_PARAMS}
        return func(settings=_settings(**model), **kwargs)
    return wrapper


# Options people reach for by another tool's (or memcached's long) name: what slabcalc calls them.
OPTION_HINTS = {"--mem": "-m/--memory-limit", "--memory": "-m/--memory-limit",
                "--factor": "-f/--slab-growth-factor", "--growth-factor": "-f/--slab-growth-factor",
                "--chunk-size": "-n/--slab-min-size", "--item-size-max": "-I/--max-item-size",
                "--release": "--profile RELEASE", "--version-of": "--profile RELEASE"}


def _hinted(exc: click.exceptions.UsageError) -> str:
    """A usage error's message, with what slabcalc calls an option it does not know."""
    text = exc.format_message()
    if isinstance(exc, click.exceptions.NoSuchOption):
        name = exc.option_name.split("=", 1)[0]
        hint = OPTION_HINTS.get(name) or next((v for k, v in OPTION_HINTS.items() if name.startswith(k)), None)
        if hint:
            text = f"No such option '{name}': memcached's memory limit is -m (or --memory-limit)" \
                if hint.startswith("-m") else f"No such option '{name}'. Did you mean {hint}?"
    return text


class OneLineErrors(click.Group):
    """A click group whose errors are one line on stderr (usage errors keep exit 2)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:   # `slabcalc` alone: the help, not an error
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(0)
        except click.exceptions.UsageError as exc:
            click.echo(f"Error: {_hinted(exc)}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="slabcalc")
def cli():
    """Where memcached's memory goes, byte for byte: slab classes, item placement and waste,
    exactly as a real memcached of the chosen release computes them."""


@cli.command("help")
@click.argument("command", nargs=-1, metavar="[COMMAND]...")
@click.pass_context
def help_command(ctx, command):
    """This help, or a command's: `slabcalc help report` is `slabcalc report --help`."""
    group, parent = cli, ctx.parent
    for name in command:
        found = group.get_command(parent, name) if isinstance(group, click.Group) else None
        if found is None:
            raise click.UsageError(f"no command {' '.join(command)!r}: slabcalc help lists them")
        parent = click.Context(found, info_name=name, parent=parent)
        group = found
    click.echo(parent.get_help() if command else ctx.parent.get_help())


PROFILE_COLUMNS = ("profile", "first", "last", "changes")


@cli.group(invoke_without_command=True)
@format_option()
@click.pass_context
def profiles(ctx, fmt):
    """List the bundled release profiles: which releases each covers.

    One row per run of releases that share every rule, with the rules that
    change where the run starts.  `slabcalc profiles show RELEASE` prints the
    rules of one release as YAML (a starting point for a user profile).

    \b
    Python: bundled_segments(), resolved_rules(RELEASE)
    """
    if ctx.invoked_subcommand is not None:
        return
    from slabcalc.model.profile import bundled_segments

    records = [{"profile": s.profile, "first": s.first, "last": s.last,
                "changes": ", ".join(s.changed) if fmt != "json" else list(s.changed)}
               for s in bundled_segments()]
    if fmt == "json":
        click.echo(output.render_json({"profiles": records}))
    else:
        click.echo(output.render_rows(records, PROFILE_COLUMNS, fmt, wrap="changes"))


@profiles.command("show")
@click.argument("release", metavar="RELEASE|FILE")
def profiles_show(release):
    """Print the resolved rules of RELEASE (or of a user profile FILE) as YAML."""
    import yaml

    from slabcalc.model.profile import ProfileError, resolved_rules

    try:
        rules = resolved_rules(release)
    except ProfileError as exc:
        raise Refusal(str(exc)) from None
    click.echo(yaml.safe_dump(rules, sort_keys=False, width=output.width() - 10, allow_unicode=True), nl=False)


CLASS_COLUMNS = ("class", "chunk_size", "perslab", "max_data", "min_data", "page_length", "page_unused")


@cli.command()
@click.option("--allocator", type=click.Choice(("jemalloc-3.6", "jemalloc-5", "jemalloc-5-redis", "glibc")),
              default=None, help="Print this allocator's size classes instead, up to the one that holds -I.")
@model_options
@format_option("vv")
@_with_settings
def classes(settings, fmt, allocator):
    """Print the slab classes memcached creates at start-up.

    One row per class: chunk size, chunks per page, the key+value bytes it
    holds (max_data for a 1-byte key and flags 0, min_data the previous
    class's max + 1), the bytes one page takes from -m and the bytes of that
    page no chunk covers.  --format vv prints exactly memcached -vv's lines.

    \b
    Python: describe_classes(configure(load_profile(RELEASE), ARGS))
    """
    from slabcalc.model.classes import class_record, describe_classes, vv_lines
    from slabcalc.model.settings import settings_record

    if allocator is not None:
        return _allocator_classes(settings, allocator, fmt)
    if fmt == "vv":
        click.echo("\n".join(vv_lines(settings)))
        return
    records = [class_record(info) for info in describe_classes(settings)]
    if fmt == "json":
        click.echo(output.render_json({"settings": settings_record(settings), "classes": records}))
    else:
        click.echo(output.render_rows(records, CLASS_COLUMNS, fmt, essential=CLASS_COLUMNS[:4]))


@cli.command()
@click.option("--key", "key_length", type=int, required=True, metavar="BYTES", help="Key length in bytes (1-250).")
@click.option("--value", "value_length", type=SIZE, required=True, metavar="BYTES",
              help="Value length in bytes (units allowed: 600k).")
@click.option("--flags", type=int, default=0, show_default=True, help="Client flags (0 to 4294967295).")
@model_options
@format_option()
@_with_settings
def place(settings, key_length, value_length, flags, fmt):
    """Show where one item goes: its size, class, chunk and waste.

    The item size is memcached's own: header + CAS + key + 1 + flags suffix +
    value + 2.  Items above the largest chunk are shown chunk by chunk where
    the release chunks them; items above -I are too large.

    \b
    Python: place(settings, key_length, value_length, flags)
    """
    from slabcalc.model.placement import Unplaceable, placement_record
    from slabcalc.model.placement import place as place_item
    from slabcalc.model.settings import settings_record, with_overrides

    try:
        record = placement_record(place_item(settings, key_length, value_length, flags))
        other = None
        if settings.profile.has_cas_option:
            flipped = with_overrides(settings, use_cas=not settings.use_cas)
            other = placement_record(place_item(flipped, key_length, value_length, flags))
    except Unplaceable as exc:
        raise DataError(str(exc)) from None
    except ValueError as exc:  # a key, value or flags memcached's protocol would not take
        raise Refusal(str(exc)) from None
    other_name = "without_cas" if settings.use_cas else "with_cas"
    if settings.memory_limit is not None and record["status"] != "too_large":
        from slabcalc.analysis.report import build_report
        from slabcalc.model.distribution import Item

        full = build_report(settings, {Item(key_length, value_length, flags, None): 1},
                            memory_limit=settings.maxbytes)
        limit = full.capacity
        record["capacity"], record["limiting_class"] = limit.items, limit.limiting_class
        record["process_bytes"], record["hash_bytes"] = _place_process(full)
    if fmt == "json":
        document = {"settings": settings_record(settings), **record, other_name: other}
        click.echo(output.render_json(document))
        return
    if fmt == "csv":
        columns = [k for k in record if k != "chunks"]
        click.echo(output.render_rows([record], columns, "csv"))
        return
    click.echo(output.render_pairs(_place_lines(settings, record, other, other_name), fmt))
    if record["status"] == "chunked":
        click.echo()
        click.echo(output.render_rows(record["chunks"], ("role", "class", "chunk_size", "requested", "waste"), fmt))


def _place_lines(settings, record, other, other_name):
    """The ``place`` breakdown as (field, value) lines for a table."""
    lines = [
        ("header", record["header"]),
        ("cas", record["cas"]),
        ("key + 1", record["key"]),
        ("suffix (flags)", record["suffix"]),
        ("value + 2", record["value"]),
        ("item_size", record["item_size"]),
    ]
    if record["status"] == "too_large":
        lines.append(("status", f"too large: over -I {settings.item_size_max} bytes "
                                f"({settings.profile.too_large})"))
    else:
        lines += [
            ("status", record["status"] if record["status"] == "stored"
             else f"chunked into {len(record['chunks'])} chunks (counted in class {record['class']})"),
            ("class", record["class"]),
            ("chunk_size", record["chunk_size"]),
        ]
        if record["status"] == "chunked":
            lines.append(("memory", record["memory"]))
        lines += [
            ("waste", f"{record['waste']} ({record['waste_pct']:.2f}%)"),
            ("spare_value_bytes", record["spare_value_bytes"]),
        ]
    if record.get("capacity") is not None:
        lines.append(("capacity", f"-m {settings.maxbytes >> 20} holds {record['capacity']} such items"))
        lines.append(("process memory", f"{record['process_bytes']} bytes when full (slab pages + "
                                        f"{record['hash_bytes']} hash table)"))
    if other is not None:
        label = "with -C (no CAS)" if other_name == "without_cas" else "with CAS"
        if other["status"] == "too_large":
            summary = f"{other['item_size']} bytes: too large"
        else:
            summary = f"{other['item_size']} bytes, class {other['class']}, waste {other['waste']}"
        lines.append((label, summary))
    return lines


REPORT_COLUMNS = ("class", "chunk_size", "perslab", "items", "chunks", "pages", "requested_bytes", "used_bytes",
                  "chunk_waste", "page_bytes", "free_bytes", "mem_requested", "memory_pct")
WHAT_IF_COLUMNS = ("options", "page_bytes", "waste_pct", "capacity", "page_bytes_change", "page_bytes_change_pct")
REPORT_ESSENTIAL = ("class", "chunk_size", "items", "pages", "page_bytes", "memory_pct", "memory")


@cli.command()
@click.argument("file", default="-", metavar="[FILE]")
@click.option("--key", "key_length", type=click.IntRange(1, 250), default=None, metavar="BYTES",
              help="Key length for inputs without a key column (a column of value sizes).")
@click.option("--strict", is_flag=True, help="Stop at the first bad row (exit 1, file and line named).")
@click.option("--vs", "what_if", multiple=True, metavar="OPTIONS",
              help='Compare with other memcached options, e.g. --vs "-f 1.08" --vs "-C" (repeatable).')
@deploy_options
@plot_option
@model_options
@format_option()
@gate_options
def report(file, key_length, strict, what_if, plot, fmt, deploy, **model):
    """Where the memory goes for a whole distribution of items.

    FILE (or standard input, when FILE is - or omitted) holds item sizes: a CSV
    with a header (key,value[,flags][,count] or item_size[,count]), a column of
    value sizes (with --key), lru_crawler metadump lines, or stats sizes
    output.  Per class: items, chunks, pages, requested and used bytes, waste
    and free page bytes; then totals and a summary.  With -m, how many items
    of this mix fit; without, the -m that holds them all.

    \b
    Python: build_report(settings, read_items(...)[0], memory_limit)
    """
    from slabcalc.analysis.report import build_report
    from slabcalc.inputs.items import InputError, read_items

    settings = _settings(**model)
    limit = settings.memory_limit
    with _input(file, "report") as (stream, source, progress):
        if deploy["group_by"] is not None:   # read twice: sizes for the report, names for the groups
            stream, deploy["text"] = _keep_text(stream)
        items, accounting = read_items(stream, source, key_length=key_length, strict=strict,
                                       progress=progress, columns=True)
        triples = list(items)               # build_report sums an item that comes more than once
    try:
        base = build_report(settings, triples, limit, size_key_length=key_length or 16)
        others = []
        for text in what_if:           # each --vs asks with its own -m (G1: it used the baseline's)
            vs = _vs_settings(settings, model, text)
            others.append((text, build_report(vs, triples, vs.memory_limit, size_key_length=key_length or 16)))
        plan = _deploy_plan(settings, base, triples, {**deploy, "strict": strict}, key_length or 16, source)
    except InputError as exc:
        raise DataError(str(exc)) from None
    except ValueError as exc:
        raise DataError(f"{source}: {exc}") from None
    _say_rejected(accounting)
    _print_report(base, accounting, others, fmt, plan)
    if plot:
        from slabcalc.analysis.report import report_record

        _draw("plot_classes", report_record(base, accounting)["classes"], plot)


def _vs_settings(settings, model, text):
    """Settings for ``--vs OPTIONS``: the baseline's options followed by these."""
    import shlex

    from slabcalc.model.settings import Refused, configure

    base_args = _memcached_args(settings.profile, **{k: v for k, v in model.items() if k not in ("profile", "bits")})
    try:
        return configure(settings.profile, base_args + shlex.split(text))
    except Refused as exc:
        raise Refusal(f"--vs {text!r}: {settings.profile.label} refuses: {exc.message or exc.crash}") from None
    except ValueError as exc:
        raise Refusal(f"--vs {text!r}: {exc}") from None


@contextlib.contextmanager
def _input(file: str, command: str, what: str = "item sizes", example: str = "sizes.csv",
           value_errors: bool = False):
    """FILE (standard input for ``-``) opened for ``command``: ``(stream, source, progress)``.

    An interactive terminal gets a one-line hint instead of a hang;
    ``progress`` prints rows read to stderr when stderr is a terminal (else
    None); an unusable input, here or while the block reads it, is one line
    and exit 1, and so, with ``value_errors``, is any ValueError of the work
    in the block, named by the source.
    """
    from slabcalc.inputs.items import InputError, open_input

    if file == "-" and sys.stdin.isatty():
        raise Refusal(f"reading {what} from the terminal: give a FILE, or pipe one in "
                      f"(cat {example} | slabcalc {command} -)")
    progress = _progress_printer() if sys.stderr.isatty() else None
    source = file
    try:
        stream, source = open_input(file)
        with stream:
            yield stream, source, progress
    except InputError as exc:
        raise DataError(str(exc)) from None
    except ValueError as exc:
        if not value_errors:
            raise
        raise DataError(f"{source}: {exc}") from None
    finally:
        if progress:
            click.echo("", err=True)


def _say_rejected(accounting) -> None:
    """Rejected rows, one line on stderr whatever the format (tables list them in full too)."""
    if not accounting.rejected:
        return
    first = accounting.first_rejections[0] if accounting.first_rejections else None
    where = f" (first: line {first.line}, {first.reason})" if first else ""
    click.echo(f"note: {accounting.source}: {accounting.rejected} of {accounting.rows} rows rejected{where}",
               err=True)


def _progress_printer():
    def show(rows: int) -> None:
        click.echo(f"\rread {rows:,} rows", err=True, nl=False)
    return show


def _print_report(base, accounting, others, fmt, plan=None):
    from slabcalc.analysis.report import report_record

    record = report_record(base, accounting, others)
    if plan is not None:
        _add_plan(record, plan)
    if fmt == "json":
        click.echo(output.render_json(record))
        return
    rows = record["classes"] + [{"class": "total", **{k: record["totals"].get(k) for k in REPORT_COLUMNS[3:]}}]
    if fmt == "csv":
        click.echo(output.render_rows(rows, REPORT_COLUMNS, fmt))
        return
    for row in record["classes"]:           # tables show each class's share of memory as a bar
        row["memory"] = output.bar(row["memory_pct"])
    click.echo(output.render_rows(rows, REPORT_COLUMNS + ("memory",), fmt, essential=REPORT_ESSENTIAL))
    click.echo()
    click.echo(output.render_pairs(list(record["summary"].items()), fmt))
    if plan is not None:
        _print_plan(plan, fmt)
    if others:
        click.echo()
        click.echo(output.render_rows(record["what_if"], WHAT_IF_COLUMNS, fmt,
                                      essential=("options", "page_bytes", "capacity", "page_bytes_change_pct")))


# -- slabcalc stats --------------------------------------------------------------------------

STATS_COLUMNS = ("class", "chunk_size", "pages", "used_chunks", "used_bytes", "requested_bytes", "chunk_waste",
                 "free_chunks", "free_bytes", "evicted", "outofmemory", "memory_pct", "evicted_pct")
STATS_ESSENTIAL = ("class", "pages", "free_bytes", "evicted", "memory_pct", "memory")
STATS_TOTAL_COLUMNS = ("node", "pages", "page_bytes", "used_bytes", "requested_bytes", "chunk_waste",
                       "free_bytes", "items", "evicted", "outofmemory")


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("--server", "servers", multiple=True, metavar="HOST:PORT|SOCKET",
              help="A live memcached (repeat for a pool): host:port, host (port 11211), [v6]:port "
                   "or a unix socket path.")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=2.0, show_default=True,
              help="Seconds to connect to a node and for each of its replies.")
@click.option("--sample-items", type=click.IntRange(1), default=None, metavar="N",
              help="Also read up to N item sizes (lru_crawler metadump) and model them under the "
                   "server's own settings.")
@click.option("--interval", type=click.IntRange(1), default=None, metavar="SECONDS",
              help="Read each --server twice, SECONDS apart, and say what happens now: evictions and sets "
                   "per second per class, item ages, pages moved by the automover.")
@click.option("--since", "since", multiple=True, metavar="FILE",
              help="An earlier saved reading of the node in FILEs (repeat for one file per command): "
                   "what happened between the two, as --interval.")
@click.option("--server-args", "server_args", default=None, metavar="'FLAGS'",
              help="The flags the node(s) were started with, e.g. '-m 1024 -f 1.0875': the model uses "
                   "them instead of what stats settings shows (it rounds -f, and hides -o slab_sizes).")
@plot_option
@format_option()
@gate_options
def stats(files, servers, timeout, sample_items, interval, since, server_args, plot, fmt):
    """Where a real memcached's memory goes, from its own stats.

    Reads `version`, `stats`, `stats slabs`, `stats items` and `stats
    settings` of each --server (never a write), or the same replies saved in
    FILEs (one node: one file per command or all in one; - is standard
    input).  Per class: pages, used chunks and bytes, requested bytes, chunk
    waste, free chunks and bytes, evictions, and its share of memory against
    its share of evictions; totals per node and for the pool.  Findings:
    calcification since boot (a class evicted while others hold free pages or
    older items), drift (the server's class table against the model of its
    release and settings, or of --server-args), and what the dump lacks.  Two
    readings (--interval, or --since an earlier saved one) say what happens
    now: evictions and sets per second per class, ages, and whether the
    automover is moving pages to the classes that evict.  A node that cannot be read is one line on stderr;
    the others are still reported, and the exit status is 1.

    \b
    Python: analyse(parse_dump([(name, text)])) / analyse(dump_from_replies(node, read_node(...)))
    """
    import shlex

    from slabcalc.analysis.diagnosis import interval as interval_of
    from slabcalc.analysis.stats import (
        DumpError,
        analyse,
        dump_from_replies,
        parse_dump,
    )
    from slabcalc.inputs.client import NodeError, parse_address, read_nodes
    from slabcalc.model.settings import Refused

    if not files and not servers:
        raise click.UsageError("give saved stats FILEs, or --server HOST:PORT (repeatable)")
    if since and not files:
        raise click.UsageError("--since is the earlier reading of the node in FILEs: give those FILEs too")
    if interval is not None and not servers:
        raise click.UsageError("--interval reads each --server twice; for saved readings give --since FILE")
    try:
        addresses = [parse_address(text) for text in servers]
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--server'") from None
    try:
        args = shlex.split(server_args) if server_args is not None else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--server-args'") from None

    def node_of(dump, name=None):
        try:
            return analyse(dump, name, args)
        except Refused as exc:
            said = " / ".join(exc.message.splitlines()) or "it exits"
            raise Refusal(f"--server-args: memcached {dump.release} refuses {server_args} ({said})") from None

    nodes, failed, samples, spans = [], [], {}, {}
    if files:
        try:
            nodes.append(node_of(parse_dump(_read_texts(files))))
            if since:
                spans[nodes[-1].node] = interval_of(parse_dump(_read_texts(since)), nodes[-1])
        except DumpError as exc:
            raise DataError(str(exc)) from None
    first = {}
    if interval is not None:
        for address, replies in zip(addresses, read_nodes(addresses, timeout)):
            if not isinstance(replies, NodeError):
                first[str(address)] = dump_from_replies(str(address), replies)
        if sys.stderr.isatty():
            click.echo(f"reading again in {interval} s ...", err=True)
        time.sleep(interval)
    for address, replies in zip(addresses, read_nodes(addresses, timeout, sample_items or 0)):
        try:
            if isinstance(replies, NodeError):
                raise replies
            node = node_of(dump_from_replies(str(address), replies))
            if interval is not None:
                if str(address) not in first:
                    raise NodeError(f"{address}: the first reading failed")
                spans[node.node] = interval_of(first[str(address)], node)
        except (NodeError, DumpError) as exc:
            failed.append((str(address), str(exc).removeprefix(f"{address}: ")))
            continue
        nodes.append(node)
        if sample_items:
            samples[node.node] = (replies.get("metadump_error", [None])[0], replies.get("metadump", []),
                                  sample_items)
    for name, error in failed:
        click.echo(f"Error: {name}: {error}", err=True)
    if nodes:
        _print_stats(nodes, failed, samples, fmt, pool=bool(files) + len(servers) > 1, spans=spans)
        measured(_stats_measure(nodes))
        if plot:
            from slabcalc.analysis.stats import class_records

            _draw("plot_classes", [r for n in nodes for r in class_records(n)], plot)
    return 1 if failed else 0


def _read_texts(names):
    """``(name, text)`` of saved stats FILEs (``-``: standard input)."""
    texts = []
    for name in names:
        if name == "-" and sys.stdin.isatty():
            raise Refusal("reading stats from the terminal: give a FILE, or pipe one in")
        try:
            if name == "-":
                texts.append(("<stdin>", sys.stdin.read()))
            else:
                with open(name, encoding="utf-8", errors="replace", newline="") as f:
                    texts.append((name, f.read()))
        except OSError as exc:
            raise DataError(f"{name}: cannot read: {exc.strerror or exc}") from None
    return texts


NOW_COLUMNS = ("class", "pages", "pages_delta", "evicted_per_s", "outofmemory", "cmd_set_per_s", "age",
               "evicted_time", "free_chunks")


def _print_stats(nodes, failed, samples, fmt, pool, spans=None):
    from slabcalc.analysis.diagnosis import interval_record
    from slabcalc.analysis.stats import (
        class_records,
        node_totals,
        pool_totals,
        stats_record,
    )

    spans = spans or {}
    sampled = {name: _sample_report(node, *samples[node.node]) for node in nodes
               for name in [node.node] if name in samples}
    record = stats_record(nodes, failed, now=list(spans))
    for entry in record["nodes"]:
        if entry.get("error") is None:
            span = spans.get(entry["node"])
            entry["interval"] = interval_record(span) if span else None
    now_lines = [(f"{name}: " if len(nodes) > 1 else "") + line
                 for name, span in spans.items() for line in interval_record(span)["findings"]]
    if fmt == "json":
        for entry in record["nodes"]:
            if entry["node"] in sampled:
                entry["sample"] = sampled[entry["node"]][0]
        record["findings"] += now_lines
        click.echo(output.render_json(record))
        return
    columns = (("node",) if pool or fmt == "csv" else ()) + STATS_COLUMNS + (("memory",) if fmt != "csv" else ())
    rows = []
    for node in nodes:
        for row in class_records(node):
            label = "pool" if row["class"] == 0 and fmt != "csv" else row["class"]   # the global page pool
            rows.append({**row, "class": label, "memory": output.bar(row["memory_pct"])})
    totals = [{"node": node.node, **node_totals(node)} for node in nodes]
    if not pool and fmt != "csv":
        rows.append({"class": "total", **{k: totals[0].get(k) for k in STATS_COLUMNS[2:]},
                     "memory_pct": 100.0 if totals[0]["page_bytes"] else 0.0})
    click.echo(output.render_rows(rows, columns, fmt, essential=("node",) + STATS_ESSENTIAL))
    if fmt == "csv":
        return
    if pool:
        click.echo()
        down = f" ({len(failed)} of {len(nodes) + len(failed)} nodes down)" if failed else ""
        totals.append({"node": "pool" + down, **pool_totals([{k: t[k] for k in t if k != "node"} for t in totals])})
        click.echo(output.render_rows(totals, STATS_TOTAL_COLUMNS, fmt,
                                      essential=("node", "pages", "page_bytes", "chunk_waste", "items", "evicted")))
    for name, span in spans.items():
        rows = [row for row in interval_record(span)["classes"] if row["pages"]]
        click.echo()
        click.echo(f"{name + ': ' if len(nodes) > 1 else ''}over the last {span.seconds} s:")
        click.echo(output.render_rows(rows, NOW_COLUMNS, fmt, essential=NOW_COLUMNS[:4] + ("age", "evicted_time")))
    lines = record["findings"] + now_lines + [f"{name}: {text}" for name, (_, text) in sampled.items()]
    if lines:
        click.echo()
        click.echo("\n".join(output.note(line) for line in lines))


def _sample_report(node, reason, lines, limit):
    """``--sample-items``: the sampled sizes modelled under the node's settings (record, summary line)."""
    import io

    from slabcalc.analysis.report import build_report, report_record
    from slabcalc.inputs.items import InputError, read_items

    if reason is not None:
        return {"error": reason}, f"sample: none (the server said {reason!r})"
    if node.settings is None:
        return {"error": "no model settings"}, "sample: not modelled (the release or settings are unknown)"
    if not lines:
        return {"error": "no items"}, "sample: no items"
    from collections import Counter
    from urllib.parse import unquote

    # metadump gives sizes, not the key/value split a chunked item's chunks depend on:
    # split them with the sample's most common key length
    keys = Counter(len(unquote(line.split(" ", 1)[0][4:]).encode()) for line in lines)
    try:
        items, accounting = read_items(io.StringIO("\n".join(lines) + "\nEND\n"), f"{node.node} metadump")
        report = build_report(node.settings, list(items), size_key_length=keys.most_common(1)[0][0])
    except (InputError, ValueError) as exc:
        return {"error": str(exc)}, f"sample: {exc}"
    record = report_record(report, accounting)
    t = record["totals"]
    summary = (f"sample of {t['items']} items: modelled alone they would take {t['pages']} pages, "
               f"{t['waste_pct']:.2f}% of page bytes holding no item data "
               f"({t['chunk_waste']} chunk waste + {t['free_bytes']} free)")
    from slabcalc.analysis.diagnosis import unreclaimed

    counted = node.total("items")
    missing = unreclaimed(node, {c.slab_class.id: c.items for c in report.classes})
    record["unlisted_items"], record["unlisted_bytes"] = missing if missing else (None, None)
    if missing and missing[0] and len(lines) < limit:
        summary += (f"; metadump listed {report.items} of the {counted} items stats items counts: it skips "
                    f"expired items not yet reclaimed, so about {missing[0]} such items (or items that came "
                    f"and went during the dump) hold about {missing[1]} bytes of chunks")
    elif len(lines) >= limit:
        summary += f"; metadump stopped at {limit} items of the {counted} stats items counts"
    return record, summary


# -- allocators and compare ------------------------------------------------------------------

ALLOCATOR_CLASS_COLUMNS = ("class", "size", "category", "min_request", "max_request", "perslab",
                           "page_length", "page_unused")


def _allocator_classes(settings, name, fmt):
    """``classes --allocator NAME``: the allocator's classes up to the one that holds -I."""
    from slabcalc.allocators import ALLOCATORS

    if fmt == "vv":
        raise Refusal("--format vv prints memcached's own lines; it has none for --allocator")
    classes = ALLOCATORS[name].size_classes(settings.item_size_max)
    records = [{"class": c.id, "size": c.size, "category": c.category, "min_request": c.min_request,
                "max_request": c.max_request, "perslab": c.perslab, "page_length": c.page_length,
                "page_unused": c.page_unused} for c in classes]
    if fmt == "json":
        click.echo(output.render_json({"allocator": name, "up_to": settings.item_size_max, "classes": records}))
    else:
        click.echo(output.render_rows(records, ALLOCATOR_CLASS_COLUMNS, fmt, essential=ALLOCATOR_CLASS_COLUMNS[:5]))


COMPARE_COLUMNS = ("store", "requested_bytes", "allocated_bytes", "overhead_bytes", "total_bytes", "waste_pct",
                   "vs_memcached")


@cli.command()
@click.option("--varnish-headers", "varnish_headers", type=click.IntRange(0), default=400, show_default=True,
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
@model_options
@format_option()
def compare(varnish_headers, varnish_chunked, fetch_chunksize, varnish_allocator, redis_release, redis_ttl,
            fmt, file, key_length, strict, **model):
    """The same items under memcached, jemalloc 3.6 / 5, glibc, Varnish -s malloc and Redis.

    FILE is read as `report` reads it.  Per store: the bytes requested, the
    bytes the allocator hands out (memcached: slab pages), the overhead beyond
    them (hash table, headers, pad pages, slab tails, Varnish's per-object
    structures outside -s) and the waste; then what -m, -s malloc and a
    Varnish host need.

    \b
    Python: compare(settings, read_items(...)[0], CompareOptions(...))
    """
    from slabcalc.allocators.varnish import VarnishObject
    from slabcalc.analysis.compare import CompareOptions, comparison_record
    from slabcalc.analysis.compare import compare as compare_stores
    from slabcalc.inputs.items import read_items

    settings = _settings(**model)
    if fetch_chunksize < 4096:
        raise Refusal(f"--fetch-chunksize: Varnish's minimum is 4k, not {fetch_chunksize}")
    options = CompareOptions(VarnishObject(varnish_headers, varnish_chunked, fetch_chunksize), varnish_allocator,
                             redis_release, redis_ttl, key_length or 16)
    with _input(file, "compare", value_errors=True) as (stream, source, _):
        items, accounting = read_items(stream, source, key_length=key_length, strict=strict)
        result = compare_stores(settings, items, options)
    _say_rejected(accounting)
    record = comparison_record(result, accounting, options)
    if fmt == "json":
        click.echo(output.render_json(record))
        return
    click.echo(output.render_rows(record["stores"], COMPARE_COLUMNS, fmt,
                                  essential=("store", "total_bytes", "waste_pct", "vs_memcached")))
    if fmt != "csv":
        click.echo()
        click.echo(output.render_pairs(list(record["summary"].items()), fmt))


# compare reads its input with report's own FILE argument, --key and --strict.
compare.params[:0] = [p for p in report.params if p.name in ("file", "key_length", "strict")]


# -- slabcalc optimize ---------------------------------------------------------

OPTIMIZE_COLUMNS = ("space", "page_bytes", "pages", "waste_pct", "capacity", "classes_used", "gain_pct")


@cli.command()
@click.argument("file", default="-", metavar="[FILE]")
@click.option("--key", "key_length", type=click.IntRange(1, 250), default=None, metavar="BYTES",
              help="Key length for inputs without a key column (a column of value sizes).")
@click.option("--strict", is_flag=True, help="Stop at the first bad row (exit 1, file and line named).")
@click.option("--max-classes", "max_classes", type=click.IntRange(1, 199), default=None, metavar="K",
              help="At most K sizes in -o slab_sizes (default: the release's limit, 62).")
@click.option("--validate", "validate", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              metavar="FRACTION", help="Hold back this random part of the items, optimise on the rest, "
                                       "and report both.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of --validate.")
@click.option("--workload", "workload", default=None, metavar="FILE",
              help="Also replay this workload (simulate's input) under the baseline and each space's best, "
                   "and report their get hits: a change that would cut hits says so.")
@click.option("--hot", "hot", default=None, metavar="fetched|SECONDS",
              help="With a metadump: optimise for the items in use only -- fetched ones (fetch=yes), or "
                   "those used within SECONDS of the dump's newest access (la=).")
@gate_options
@model_options
@format_option()
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
    from slabcalc.analysis.optimize import optimum_record
    from slabcalc.inputs.items import read_items

    settings = _settings(**model)
    limit = settings.memory_limit
    if max_classes is not None and max_classes > settings.profile.max_regular:
        raise Refusal(f"--max-classes: memcached {settings.profile.release} takes at most "
                      f"{settings.profile.max_regular} slab sizes")
    if hot is not None and hot != "fetched" and not hot.isdigit():
        raise click.BadParameter(f"{hot!r} is neither 'fetched' nor a number of seconds", param_hint="'--hot'")
    left_out = None
    with _input(file, "optimize") as (stream, source, _):
        if hot is not None:
            stream, left_out = _hot_items(stream, source, hot)
        items, accounting = read_items(stream, source, key_length=key_length, strict=strict)
        triples = list(items)
    _say_rejected(accounting)
    try:
        found = run(settings, triples, memory_limit=limit, max_classes=max_classes, validate=validate, seed=seed,
                    size_key_length=key_length or 16)
    except ValueError as exc:
        raise DataError(f"{source}: {exc}") from None
    record = optimum_record(found)
    if hot is not None:
        record["hot"] = {"rule": hot, "left_out": left_out}
    if workload is not None:
        _add_hits(record, found, workload, key_length)
    _print_optimum(record, limit, fmt)
    _gate_baseline(found.baseline.report)


def _hot_items(stream, source, rule):
    """``--hot``: the metadump's lines of items in use, as a new stream, and how many were left out."""
    import io

    from slabcalc.analysis.hits import hot_lines

    with stream:
        lines = stream.read().splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    if not (first.startswith("key=") or first.startswith("lru_crawler metadump") or first in ("OK", "END")):
        raise Refusal(f"--hot reads la= and fetch= of a metadump; {source} is not one (first line {first[:40]!r})")
    kept, left_out = hot_lines(lines, rule)
    return io.StringIO("\n".join(kept) + "\n"), left_out


def _add_hits(record, found, workload, key_length) -> None:
    """``--workload``: get hits of the baseline and of each space's best, replayed by simulate's engine."""
    from slabcalc.analysis.hits import change_pct, predicted_hits
    from slabcalc.engines.simulate import SimulationError
    from slabcalc.inputs.workload import read_workload

    with _input(workload, "optimize --workload", "a workload", "ops.csv", value_errors=True) as (stream, src, _):
        ops, accounting = read_workload(stream, src, key_length=key_length)
        ops = list(ops)
    _say_rejected(accounting)
    rows = {"": found.baseline, **{c.flags: c for c in found.candidates if c is found.first_of(c.space)}}
    try:
        hits = {flags: predicted_hits(c.report.settings, ops) for flags, c in rows.items()}
    except SimulationError as exc:
        raise Refusal(f"--workload: {exc}") from None
    base = hits[""]
    record["workload"] = {"source": src, "ops": len(ops), "gets": base.gets,
                          "memory_limit_mb": found.baseline.report.settings.maxbytes >> 20}
    for entry in [record["baseline"], *record["candidates"], record["best"]]:
        if entry is not None and entry["flags"] in hits:
            got = hits[entry["flags"]]
            entry["hits"], entry["hits_change_pct"] = got.hits, round(change_pct(got, base), 2)


def _gate_baseline(base) -> None:
    """The CI gate of ``optimize``: the configuration given, measured as ``report`` measures it."""
    from slabcalc.analysis.process import process_memory

    measured(_measure(base.total("page_bytes") - base.total("requested_bytes"), base.total("page_bytes"),
                      process_memory(base).total, "process memory"))


def _print_optimum(record, limit, fmt) -> None:
    if fmt == "json":
        click.echo(output.render_json(record))
        return
    validated = record["validate"] is not None
    held = ("held_out_page_bytes", "held_out_gain_pct") if validated else ()
    hits = ("hits", "hits_change_pct") if "workload" in record else ()
    columns = [c for c in OPTIMIZE_COLUMNS if c != "capacity" or limit is not None] + list(held) + list(hits)
    for row in [record["baseline"]] + record["candidates"]:
        if validated:
            row["held_out_page_bytes"] = row["held_out"]["page_bytes"]
            row["held_out_gain_pct"] = row["held_out"]["gain_pct"]
    if fmt == "csv":
        click.echo(output.render_rows([record["baseline"]] + record["candidates"], ["flags"] + columns, "csv"))
        return
    firsts = sorted((c for c in record["candidates"] if c is next(
        d for d in record["candidates"] if d["space"] == c["space"])), key=lambda c: -c["gain_pct"])
    click.echo(output.render_rows([record["baseline"]] + firsts, columns, fmt,
                                  essential=("space", "page_bytes", "capacity", "gain_pct", "held_out_gain_pct",
                                             "hits", "hits_change_pct")))
    click.echo()
    click.echo(f"flags for memcached {record['baseline']['release']}:")
    click.echo(output.render_rows(firsts, ("space", "flags"), fmt))
    for line in _flag_notes(firsts):
        click.echo(line)
    if "hot" in record:
        click.echo()
        click.echo(output.note(f"optimised for the items in use ({_hot_text(record['hot']['rule'])}): "
                               f"{record['hot']['left_out']} metadump items left out"))
    if "workload" in record:
        w = record["workload"]
        click.echo()
        click.echo(output.note(f"hits: {w['gets']} gets of {w['source']} replayed under -m {w['memory_limit_mb']} "
                               f"by simulate's engine; the baseline hits {record['baseline']['hits']}"))
        for c in firsts:
            if c.get("hits_change_pct", 0) < 0:
                click.echo(output.note(f"warning: {c['flags']} cuts hits by {-c['hits_change_pct']:.2f}% "
                                       f"({record['baseline']['hits']} -> {c['hits']})"))
    click.echo()
    click.echo(_verdict(record, limit))


def _flag_notes(candidates) -> list[str]:
    """Under the flags: where the same words mean something else, and the class-cap trap."""
    from slabcalc.analysis.advice import Elsewhere

    lines = []
    for c in candidates:
        for e in c["elsewhere"]:
            first, _, last = e["releases"].partition("-")
            note = Elsewhere(first, last or first, e["refused"], e["classes"], e["flags"])
            lines.append(output.note(f"note: {note.text(c['flags'])}"))
        if c["class_cap"]:
            lines.append(output.note(f"warning: {c['flags']}: {c['class_cap']}"))
    return [""] + lines if lines else []


def _hot_text(rule) -> str:
    return "fetch=yes" if rule == "fetched" else f"la= within {rule} s of the newest"


def _verdict(record, limit) -> str:
    best, why = record["best"], record["verdict"]
    what = "more items fit" if limit is not None else "fewer page bytes"
    if why["on"] == "held_out":
        what += " on the held-out items"
    if record["defaults_fine"]:
        gain = f"{why['gain_pct']:.2f}%" if best else "nothing"
        return (f"defaults are fine: the best change ({best['space'] if best else 'none'}) gains {gain} {what} "
                f"(under {why['margin_pct']:g}%)")
    said = f"best: {best['space']} gains {why['gain_pct']:.2f}% {what}"
    if why["preferred_to"]:
        other = why["preferred_to"]
        reason = ("but reaches memcached's class cap" if other["why"] == "class_cap" else
                  f"within {why['margin_pct']:g}%: the simpler setting wins")
        said = f"{said} ({other['space']} gains {other['gain_pct']:.2f}%, {reason})"
    if best.get("hits_change_pct", 0) < 0:
        said += f", but it cuts hits by {-best['hits_change_pct']:.2f}% on the workload"
    said = output.note(f"{said}; for memcached {best['release']}:")
    # the flags stay whole on one line, to be pasted
    last = said.rsplit("\n", 1)[-1]
    return f"{said} {best['flags']}" if len(last) + len(best["flags"]) < output.width() else \
        f"{said}\n  {best['flags']}"


# -- slabcalc simulate ---------------------------------------------------------------

SIMULATE_COLUMNS = ("class", "chunk_size", "pages", "items", "evicted", "reclaimed", "crawler_reclaimed",
                    "outofmemory", "hits", "misses", "free_chunks", "expired_items")
MOVED_COLUMNS = ("pages_moved_in", "pages_moved_out")
TIMELINE_COLUMNS = ("time", "class", "pages", "items", "evicted", "evicted_total")


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
@plot_option
@model_options
@format_option()
def simulate_command(file, key_length, strict, every, uptime, plot, fmt, **model):
    """Replay a workload under -m: pages, LRUs, expiry, evictions, page moves, calcification.

    FILE (or standard input) is a CSV with a header -- time, op (set, get,
    delete, touch), key, key_size, value_size, ttl, flags -- or a
    twitter/cache-trace file.  memcached's request paths run on the
    workload's clock (one-second resolution), and beside them what the
    release runs by default, changed by -o as memcached reads it: on 1.6 the
    segmented HOT/WARM/COLD LRU with its maintainer thread, the LRU crawler,
    the slab automover (-o slab_automove=0|1|2, slab_automove_ratio,
    slab_automove_window) and the page mover with the global page pool.
    With -o no_modern (or 1.4) nothing runs in the background and the replay
    is exact.  Per class: pages, items, evicted, reclaimed (at an LRU tail),
    crawler_reclaimed, outofmemory, hits, misses, pages moved in and out;
    totals, the global page pool, and a calcification finding (a class
    evicting while others hold idle memory) that says what the automover
    did.  --plot draws the timeline (with --every), else the memory per
    class at the end.

    \b
    Python: simulate(settings, read_workload(...)[0], boot=uptime)
    """
    from slabcalc.engines.simulate import (
        SimulationError,
        background_for,
        describe_model,
        simulate,
        simulation_record,
    )
    from slabcalc.inputs.workload import read_workload

    settings = _settings(**model)
    try:
        describe_model(settings, background_for(settings))
    except SimulationError as exc:
        raise Refusal(str(exc)) from None
    with _input(file, "simulate", "a workload", "ops.csv", value_errors=True) as (stream, source, progress):
        ops, accounting = read_workload(stream, source, key_length=key_length, strict=strict, progress=progress)
        result = simulate(settings, ops, every=every, boot=uptime)
    _say_rejected(accounting)
    record = simulation_record(result, accounting)
    _print_simulation(result, record, fmt)
    if plot and "timeline" in record:
        _draw("plot_timeline", [{**row, "evicted": row["evicted_total"]} for row in record["timeline"]], plot)
    elif plot:
        from slabcalc.engines.simulate import memory_records

        _draw("plot_classes", memory_records(result), plot)


def _print_simulation(result, record, fmt):
    from slabcalc.engines.simulate import finding_lines

    if fmt == "json":
        click.echo(output.render_json(record))
        return
    if fmt == "csv":
        click.echo(f"model: {result.model.text}", err=True)
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
        ("model", result.model.text),
        ("input", f"{i['source']} ({i['format']})"),
        ("rows", f"{i['rows']} read = {t['ops']} operations + {i['rejected']} rejected"),
        ("sets", f"{t['sets']}: {t['stored']} stored, {t['too_large']} too large, {t['outofmemory']} out of memory"
                 + (f", {t['chunk_failures']} out of memory during read" if t["chunk_failures"] else "")),
        ("gets", f"{t['gets']}: {t['hits']} hits, {t['misses']} misses"),
    ]
    if t["deletes"] or t["touches"]:
        lines.append(("deletes, touches", f"{t['deletes']}, {t['touches']} ({t['touch_hits']} found)"))
    lines += [
        ("evicted", f"{t['evicted']} (reclaimed {t['reclaimed']} expired at an LRU tail, {t['crawler_reclaimed']} "
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
    lines += finding_lines(result.finding, result.model, t["slabs_moved"])
    lines += [(f"rejected line {r['line']}", f"{r['reason']}: {r['text']}") for r in i["rejections"]]
    return lines


# -- deployment: whole-process memory, nodes, key groups, the CI gate ---------------------

PLAN_NODE_COLUMNS = ("nodes", "memory_limit_mb", "items", "pages", "slab_bytes", "hash_bytes", "overhead_bytes",
                     "process_bytes")   # JSON adds the rest of deploy.plan_record
GROUP_COLUMNS = ("group", "items", "requested_bytes", "used_bytes", "chunk_waste", "waste_pct", "memory_pct")


def _keep_text(stream):
    """The whole of ``stream`` (closed) as a new stream and as text, to be read twice."""
    import io

    with stream:
        text = stream.read()
    return io.StringIO(text), text


def _deploy_plan(settings, base, triples, deploy, key_length, source):
    """``report``'s whole-process memory, node plan and key groups (library calls only)."""
    from dataclasses import replace

    from slabcalc.analysis.deploy import aggregate, nodes_needed, plan_nodes, usable
    from slabcalc.analysis.process import parse_overhead, parse_pct, process_memory

    try:
        overhead = parse_overhead(deploy["overhead"]) if deploy["overhead"] is not None else parse_overhead("0")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--overhead'") from None
    try:
        headroom = parse_pct(deploy["headroom"], "--headroom")
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--headroom'") from None
    planning = deploy["nodes"] is not None or deploy["node_ram"] is not None
    for given, name in ((deploy["fill"] is not None, "--fill"), (deploy["spare_nodes"], "--spare-nodes"),
                        (deploy["node_names"], "--node-names")):
        if given and not planning:
            raise Refusal(f"{name} shapes a plan of nodes: give --nodes N or --node-ram SIZE too")
    plan = {"overhead": overhead, "process": process_memory(base, overhead), "node_plan": None,
            "node_ram": deploy["node_ram"], "headroom": headroom, "needed": None, "groups": None}
    if deploy["nodes"] is not None or deploy["node_ram"] is not None:
        if base.capacity is not None:
            raise Refusal("--nodes and --node-ram size nodes for the items: they find -m, so give no -m")
        distribution = aggregate(triples)
        plan["keys"] = sum(distribution.values())
        rules = _plan_rules(deploy)
        try:
            if deploy["nodes"] is not None:
                plan["node_plan"] = plan_nodes(settings, distribution, deploy["nodes"], overhead, key_length,
                                               rules)
            if deploy["node_ram"] is not None:
                plan["needed"] = nodes_needed(settings, distribution, deploy["node_ram"], headroom, overhead,
                                              key_length, replace(rules, names=None))
                plan["usable"] = usable(deploy["node_ram"], headroom)
        except ValueError as exc:     # more spare nodes than nodes, names that do not match --nodes
            raise Refusal(str(exc)) from None
    if deploy["group_by"] is not None:
        import io

        from slabcalc.analysis.keyspace import breakdown
        from slabcalc.inputs.items import read_named_items

        # the same rows as the report's (G2): the same header rules, the same rejections
        named, _ = read_named_items(io.StringIO(deploy["text"]), source, key_length=key_length,
                                    strict=deploy["strict"])
        plan["groups"] = breakdown(settings, named, deploy["group_by"], deploy["separator"], key_length)
    gauge = plan["needed"] or plan["node_plan"]
    memory = (gauge.memory if gauge is not None else plan["process"]).total
    measured(_measure(base.total("page_bytes") - base.total("requested_bytes"), base.total("page_bytes"),
                      memory, "process memory per node" if gauge is not None else "process memory"))
    return plan


def _plan_rules(deploy):
    """``--fill``, ``--spare-nodes``, ``--spread`` and ``--node-names`` as :class:`PlanRules`."""
    from fractions import Fraction

    from slabcalc.analysis.deploy import PlanRules
    from slabcalc.analysis.process import parse_pct

    fill = PlanRules.fill
    if deploy["fill"] is not None:
        try:   # a share of -m above 0, up to 100%
            fill = 1 - parse_pct(100 - Fraction(str(deploy["fill"]).strip().removesuffix("%")), "--fill")
        except (ValueError, ZeroDivisionError):
            raise click.BadParameter(f"{deploy['fill']!r} is not a share above 0 and up to 100 (e.g. 80 or 80%)",
                                     param_hint="'--fill'") from None
    names = tuple(n.strip() for n in deploy["node_names"].split(",")) if deploy["node_names"] else None
    if names and deploy["nodes"] is None:
        raise Refusal("--node-names names the nodes of --nodes N: give --nodes too")
    if names and len(names) != deploy["nodes"]:
        raise Refusal(f"--node-names gives {len(names)} names for --nodes {deploy['nodes']}")
    return PlanRules(fill=fill, spare=deploy["spare_nodes"], spread=deploy["spread"], names=names)


def _place_process(report):
    """``place -m``: (process bytes, hash table bytes) of a server full of the item."""
    from slabcalc.analysis.process import process_memory

    memory = process_memory(report)
    return memory.total, memory.hash_bytes


def _stats_measure(nodes):
    """The gate's figures of ``stats``: the pool's waste, and the largest node's slab pages plus
    hash table (``hash_bytes``)."""
    from slabcalc.analysis.stats import node_totals

    pages = requested = 0
    memory = []
    for node in nodes:
        totals = node_totals(node)
        pages += totals["page_bytes"] or 0
        requested = None if requested is None or totals["requested_bytes"] is None \
            else requested + totals["requested_bytes"]
        hash_bytes = node.dump.general.get("hash_bytes", "")
        memory.append((totals["total_malloced"] if totals["total_malloced"] is not None else totals["page_bytes"] or 0)
                      + (int(hash_bytes) if hash_bytes.isdigit() else 0))
    return _measure(None if requested is None else pages - requested, pages, max(memory),
                    "node memory (slab pages + hash table)")


def _measure(waste, of, memory, what):
    from slabcalc.cli.gate import Measure

    return Measure(waste, of, memory, what)


def _add_plan(record, plan):
    """Whole-process lines in the summary, and the plan's JSON fields."""
    from slabcalc.analysis.keyspace import group_records
    from slabcalc.analysis.process import MIB, process_record

    m = plan["process"]
    record["process"] = process_record(m)
    summary = record["summary"]
    if m.overshoot:
        summary["past -m"] = f"{m.overshoot} bytes of slab pages (a class's first page is granted past -m)"
    summary["hash table"] = f"{m.hash_bytes} bytes (2^{m.hashpower} buckets for {m.items} items)"
    if m.overhead:
        summary["overhead"] = f"{m.overhead} bytes ({plan['overhead']})"
    summary["process memory"] = (f"{m.total} bytes ({m.total / MIB:.2f} MiB) = {m.slab_bytes} slab pages + "
                                 f"{m.hash_bytes} hash table + {m.overhead} overhead")
    if m.limit_bytes:
        summary["headroom"] = (f"{m.limit_headroom} bytes ({100.0 * m.limit_headroom / m.limit_bytes:.2f}%) "
                               f"of -m {m.memory_limit_mb} free")
    from slabcalc.analysis.deploy import plan_record

    if plan["node_plan"] is not None:
        record["nodes"] = plan_record(plan["node_plan"])
    if plan["node_ram"] is not None:
        needed = plan["needed"]
        record["node_ram"] = {"node_ram": plan["node_ram"], "headroom_pct": float(plan["headroom"] * 100),
                              "usable_bytes": plan["usable"], "needed": plan_record(needed) if needed else None}
    if plan["groups"] is not None:
        record["groups"] = group_records(plan["groups"])


def _print_plan(plan, fmt):
    from slabcalc.analysis.deploy import plan_lines, plan_record
    from slabcalc.analysis.process import MIB

    plans = [p for p in (plan["node_plan"], plan["needed"]) if p is not None]
    if plans:
        click.echo()
        click.echo(output.render_rows([plan_record(p) for p in plans], PLAN_NODE_COLUMNS, fmt,
                                      essential=("nodes", "memory_limit_mb", "items", "process_bytes")))
    if plan["node_plan"] is not None:
        click.echo()
        click.echo("\n".join(output.note(line) for line in plan_lines(plan["node_plan"], plan["keys"])))
    if plan["node_ram"] is not None:
        click.echo()
        ram, usable, needed = plan["node_ram"], plan["usable"], plan["needed"]
        room = f"{usable} bytes usable ({usable / MIB:.2f} MiB, {float(plan['headroom'] * 100):g}% headroom)"
        if needed is None:
            click.echo(f"no number of nodes of {ram} bytes holds these items: {room}")
        else:
            m = needed.memory
            click.echo(output.note(f"{needed.nodes} nodes of {ram} bytes ({ram / MIB:.2f} MiB) hold these items: "
                                   f"each runs -m {m.memory_limit_mb} and takes {m.total} bytes of {room}"))
            click.echo("\n".join(output.note(line) for line in plan_lines(needed, plan["keys"])))
    if plan["groups"] is not None:
        from slabcalc.analysis.keyspace import group_records

        click.echo()
        click.echo(output.render_rows(group_records(plan["groups"]), GROUP_COLUMNS, fmt,
                                      essential=("group", "items", "used_bytes", "memory_pct")))


def main() -> None:
    """Console entry point: run the CLI; a closed pipe (``| head``) ends quietly."""
    import os

    # numpy (read lazily for large inputs) would start OpenBLAS's thread pool on import;
    # slabcalc does no linear algebra, and those threads cost start-up and CPU time
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        cli(prog_name="slabcalc")
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
