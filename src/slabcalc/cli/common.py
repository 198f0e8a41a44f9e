"""What the commands share: settings from the model options (memcached's argv), inputs, rejected rows, plots."""

from __future__ import annotations

import contextlib
import sys

import click

from slabcalc.cli import output
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.errors import InputError, RefusedInReplay, SlabcalcError, ValueRefused
from slabcalc.model.settings import Settings, chunk_max_value
from slabcalc.model.units import parse_size


def draw(kind: str, data, path: str, **extra) -> None:
    from slabcalc.cli import plot as plotting

    try:
        getattr(plotting, kind)(data, path, **extra)
    except plotting.PlotUnavailable as exc:
        raise DataError(str(exc)) from None
    except OSError as exc:
        raise DataError(f"{path}: cannot write the plot: {exc.strerror or exc}") from None


def _megabytes(text: str) -> int:
    """``-m``: a plain number is megabytes (memcached's unit); a size must be whole megabytes."""
    text = str(text).strip()
    if text.isdigit():
        return int(text)
    if "," in text or ".." in text:
        raise Refusal(f"-m/--memory-limit: a list of limits ({text}) is for simulate only (a hit-ratio curve); "
                      f"give one -m")
    try:
        size = parse_size(text)
    except ValueRefused as exc:
        raise Refusal(f"-m/--memory-limit: {exc}") from None
    if size % (1 << 20):
        raise Refusal(f"-m/--memory-limit: memcached counts memory in whole megabytes, not {text}")
    return size >> 20


def memory_limits(text: str | None) -> tuple[str | None, ...]:
    """``simulate -m``: one limit as given, or a curve's limits in megabytes, ascending, each once.

    A list is comma-separated (``16,32,64``); an item may be a range ``START..STOP:STEP``, STOP
    included when a step lands on it (``16..128:16`` is 16, 32, ... 128); every value is a
    number of megabytes or a whole-megabyte size (``512m..2g:512m``).  Anything else is one line
    naming the value (exit 2).  Other commands read one ``-m`` (:func:`_megabytes` refuses a list).
    """
    if text is None or ("," not in str(text) and ".." not in str(text)):
        return (text,)
    limits: set[int] = set()
    for part in str(text).split(","):
        part = part.strip()
        if ".." not in part:
            limits.add(_megabytes(_one(part, text)))
            continue
        start, _, rest = part.partition("..")
        stop, colon, step = rest.partition(":")
        if not colon:
            raise Refusal(f"-m/--memory-limit: the range {part} needs a step: {part}:STEP "
                          f"(16..128:16 is 16, 32, ... 128)")
        first, last, every = (_megabytes(_one(v, text)) for v in (start, stop, step))
        if every < 1 or last < first:
            raise Refusal(f"-m/--memory-limit: the range {part} must go up from START to STOP by a STEP of 1 or "
                          f"more megabytes")
        points = range(first, last + 1, every)
        if len(points) > CURVE_POINTS_MAX:      # counted, not expanded: 1..100000000:1 is 10**8 of them
            _too_many(text, f"{part} alone is {len(points)}")
        limits.update(points)
        if len(limits) > CURVE_POINTS_MAX:
            _too_many(text, f"the first {len(limits)} already")
    if 0 in limits:
        raise Refusal(f"-m/--memory-limit: {text} has -m 0, no limit at all: a curve needs a limit at each point")
    if len(limits) > CURVE_POINTS_MAX:
        _too_many(text, str(len(limits)))
    return tuple(str(mb) for mb in sorted(limits))


CURVE_POINTS_MAX = 4096     # the most limits one curve replays


def _too_many(text: str, count: str) -> None:
    raise Refusal(f"-m/--memory-limit: {text} is too many limits ({count}); a curve takes at most {CURVE_POINTS_MAX}")


def _one(value: str, text: str) -> str:
    """One limit of a list, not empty (``16,,32`` is a slip)."""
    if not value.strip() or ".." in value:
        raise Refusal(f"-m/--memory-limit: {text!r} has an empty or doubled value: write 16,32,64 or 16..128:16")
    return value


def _chunk_max_in_release_unit(profile, text: str) -> str:
    """``--slab-chunk-max``: plain numbers pass through; sizes become the release's unit."""
    text = str(text).strip()
    if text.lstrip("-").isdigit() or profile is None or not profile.has_slab_chunk_max:
        return text
    try:
        size = parse_size(text)
    except ValueRefused as exc:
        raise Refusal(f"--slab-chunk-max: {exc}") from None
    try:
        return str(chunk_max_value(profile, size))
    except ValueRefused as exc:
        raise Refusal(f"--slab-chunk-max: {exc} ({text})") from None


def check_layout_options(settings, command: str) -> None:
    """Refuse (exit 2, one line naming it) an ``-o`` word that changes ``command``'s answer and that
    slabcalc does not model (the profile's ``treatments``, layout column)."""
    from slabcalc.model.treatments import check_treated

    try:
        check_treated(settings, "layout", command)
    except ValueRefused as exc:
        raise Refusal(str(exc)) from None


def _argv_values(profile, slab_min_size, factor, max_item_size, memory_limit, cas, slab_chunk_max, slab_sizes,
                 extra_options, threads=None, conn_limit=None, prealloc=False) -> dict:
    """The model options as :meth:`Settings.argv`'s values: ``-m`` in megabytes, ``--slab-chunk-max`` in the
    release's unit, ``--slab-sizes`` dash-separated; text memcached parses itself passes through."""
    return dict(memory_mb=_megabytes(memory_limit) if memory_limit is not None else None,
                chunk_size=slab_min_size, factor=factor, item_size_max=max_item_size, no_cas=cas is False,
                slab_chunk_max=(_chunk_max_in_release_unit(profile, slab_chunk_max)
                                if slab_chunk_max is not None else None),
                slab_sizes=slab_sizes.replace(",", "-").replace(" ", "") if slab_sizes is not None else None,
                suboptions=extra_options, threads=threads, maxconns=conn_limit, preallocate=prealloc)


def versus_settings(settings, text: str):
    """Settings for ``--vs 'FLAGS'``: the given configuration's flags, as its settings write them, followed by
    these; a refusal (exit 2) names the flags and what memcached says."""
    import shlex

    from slabcalc.model.settings import Refused, configure

    try:
        return configure(settings.profile, settings.as_argv(round_trip=True) + shlex.split(text))
    except Refused as exc:
        raise Refusal(f"--vs {text!r}: {settings.profile.label} refuses: {exc.message or exc.crash}") from None
    except ValueError as exc:
        raise Refusal(f"--vs {text!r}: {exc}") from None


def flags_argv(**flags) -> list[str]:
    """memcached's command line for the flag options alone, the release not known yet (``stats``: each
    node's own): ``--slab-chunk-max`` passes through as written, for the node's memcached to read."""
    return Settings.argv(**_argv_values(None, **flags))


def settings_from(profile, bits, noted: set | None = None, **options):
    """Profile and settings from the shared options, or a one-line refusal (exit 2).

    Its notes go to stderr; ``noted`` (a set kept across calls: a curve's settings, one per ``-m``)
    keeps each note to one showing."""
    from slabcalc.model.profile import ProfileError, load_profile
    from slabcalc.model.classes import slab_classes
    from slabcalc.model.settings import Refused, configure

    try:
        release = load_profile(profile, bits=int(bits))
    except ProfileError as exc:
        raise Refusal(str(exc)) from None
    args = Settings.argv(**_argv_values(release, **options))
    try:
        settings = configure(release, args)
        slab_classes(settings)          # slabs_init() refuses too (-L without room for every class)
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
    noted = set() if noted is None else noted

    def note(text: str) -> None:
        if text not in noted:
            noted.add(text)
            click.echo(text, err=True)

    if profile is None:
        told = _local_release_note(release)
        if told:
            note(told)
    for warning in settings.warnings:
        note(f"note: {release.label} warns: " + " ".join(warning.split()))
    factor = options.get("factor")
    if factor is not None and "," in str(factor):
        note(f"note: memcached reads -f {factor} as {settings.factor:g} (it stops at the comma); for "
             f"{str(factor).replace(',', '.')} write a decimal point")
    from slabcalc.analysis.advice import class_cap_trap

    trap = class_cap_trap(settings)
    if trap:
        note(output.note(f"warning: {trap}"))
    return settings


def _local_release_note(release) -> str | None:
    """At a terminal, when no --profile was given: a line for stderr if the memcached on PATH is another
    release than the one assumed (pipes and scripts are not told: their output stays what it was)."""
    if not sys.stderr.isatty():
        return None
    from slabcalc.inputs.local import local_release

    local = local_release()
    if local is None or local == release.release:
        return None
    return (f"note: this machine runs memcached {local} (memcached on PATH); slabcalc assumes "
            f"{release.release}: give --profile {local} to model the local one")


@contextlib.contextmanager
def input_items(file: str, command: str, settings, *, value_errors: bool = False, **options):
    """FILE's items for ``command``, read by the one reader entry (:func:`slabcalc.inputs.open_items`,
    which picks the reader; ``options`` are its): ``(rows, accounting)`` in a ``with`` block."""
    from slabcalc.inputs import open_items

    with _reading(file, command, "item sizes", "sizes.csv", value_errors) as progress:
        with _opened(open_items(file, settings=settings, progress=progress, **options)) as read:
            say_unused(read[1], command)
            yield read


@contextlib.contextmanager
def input_workload(file: str, command: str, **options):
    """FILE's operations for ``command`` (:func:`slabcalc.inputs.open_workload`): ``(ops, accounting)``
    in a ``with`` block; errors of the work in the block are data errors named by the source."""
    from slabcalc.inputs import open_workload

    with _reading(file, command, "a workload", "ops.csv", True) as progress:
        with _opened(open_workload(file, progress=progress, **options)) as read:
            say_unused(read[1], command)
            yield read


@contextlib.contextmanager
def _reading(file: str, command: str, what: str, example: str, value_errors: bool):
    """Around reading FILE: an interactive terminal gets a one-line hint instead of a hang;
    ``progress`` (yielded) prints rows read to stderr when stderr is a terminal (else None); an
    unusable input is one line and exit 1, and so, with ``value_errors``, is any error of the work
    in the block, named by the source."""
    if file == "-" and sys.stdin.isatty():
        raise Refusal(f"reading {what} from the terminal: give a FILE, or pipe one in "
                      f"(cat {example} | slabcalc {command} -)")
    progress = _progress_printer() if sys.stderr.isatty() else None
    source = "<stdin>" if file == "-" else file
    try:
        yield progress
    except InputError as exc:
        raise DataError(str(exc)) from None
    except RefusedInReplay as exc:      # a configuration refused where the replay reaches it: exit 2
        raise Refusal(str(exc)) from None
    except SlabcalcError as exc:
        if not value_errors:
            raise
        said = str(exc)
        raise DataError(said if said.startswith(source) else f"{source}: {said}") from None
    finally:
        if progress:
            click.echo("", err=True)


@contextlib.contextmanager
def _opened(opening):
    """Enter ``opening`` (a reader entry's context): an option the input cannot serve is a refusal
    (exit 2: DuckDB missing, --group-by or --hot of a warehouse file), an unusable input a data error."""
    try:
        read = opening.__enter__()
    except ValueRefused as exc:
        raise Refusal(str(exc)) from None
    except SlabcalcError as exc:
        raise DataError(str(exc)) from None
    with contextlib.ExitStack() as stack:
        stack.push(opening)
        yield read


def say_unused(accounting, command: str) -> None:
    """The input's columns ``command`` does not read, one line on stderr (a misspelt name of one it reads
    is an error instead: :func:`slabcalc.inputs.rows.header_columns`)."""
    if accounting.unused:
        names = ", ".join(repr(name) for name in accounting.unused)
        click.echo(f"note: {accounting.source}: {command} does not use the column{'s' if len(accounting.unused) > 1 else ''}"
                   f" {names}", err=True)


def say_rejected(accounting) -> None:
    """Rejected rows, one line on stderr whatever the format (tables list them in full too)."""
    if not accounting.rejected:
        return
    first = accounting.first_rejections[0] if accounting.first_rejections else None
    where = (f" (first: line {first.line}, {first.reason})" if first and first.line else
             f" (first: {first.text}, {first.reason})" if first else "")   # line 0: a group of a warehouse file
    click.echo(f"note: {accounting.source}: {accounting.rejected} of {accounting.rows} rows rejected{where}",
               err=True)


def _progress_printer():
    def show(rows: int) -> None:
        click.echo(f"\rread {rows:,} rows", err=True, nl=False)
    return show


def input_dumps(files):
    """One node's saved stats FILEs (``-``: standard input), read by :func:`slabcalc.inputs.read_dumps`."""
    from slabcalc.inputs import read_dumps

    if "-" in files and sys.stdin.isatty():
        raise Refusal("reading stats from the terminal: give a FILE, or pipe one in")
    try:
        return read_dumps(files)
    except SlabcalcError as exc:      # unreadable (InputError), or not stats replies (DumpError)
        raise DataError(str(exc)) from None


def measure(waste, of, memory, what):
    from slabcalc.cli.gate import Measure

    return Measure(waste, of, memory, what)
