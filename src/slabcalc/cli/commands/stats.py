"""``slabcalc stats``."""

from __future__ import annotations

import sys

import click

from slabcalc.cli.common import draw, input_dumps, measure
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import (COUNT_MAX, DAY, format_option, gate_options, measured, old_spelling, plot_option,
                                  real, server_flag_options, tls_options, watch_options, whole)
from slabcalc.cli.stats_output import print_stats
from slabcalc.errors import ValueRefused


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("--server", "servers", multiple=True, metavar="HOST:PORT|SOCKET",
              help="A live memcached (repeat for a pool): host:port, host (port 11211), [v6]:port "
                   "or a unix socket path.  Not given: FILE holds saved readings.")
@click.option("--timeout", type=real(0, 3600, low_open=True), default=2.0, show_default=True,
              help="Seconds to connect to a node and for each of its replies.")
@click.option("--read-items", "metadump_items", type=whole(1, 10_000_000), default=None, metavar="N",
              help="Also read up to N items' sizes (lru_crawler metadump: the first N it lists, not a random "
                   "sample) and model them under the server's own settings.  Not given: counters only.")
@click.option("--interval", type=whole(1, DAY), default=None, metavar="SECONDS",
              help="Read each --server twice, SECONDS apart, and say what happens now: evictions and sets "
                   "per second per class, item ages, pages moved by the automover.  Not given: one reading.")
@click.option("--since", "since", multiple=True, metavar="FILE",
              help="An earlier saved reading of the node in FILEs (repeat for one file per command): "
                   "what happened between the two, as --interval.  Not given: counters since boot.")
@server_flag_options
@watch_options
@tls_options
@plot_option
@format_option(command="stats")
@gate_options
@old_spelling("--sample-items", "--read-items", "metadump_items", type=whole(1, 10_000_000), metavar="N")
def stats(files, servers, timeout, metadump_items, interval, since, server_args, watch, count, tls, plot, fmt):
    """Where a real memcached's memory goes, from its own stats.

    Reads `version`, `stats`, `stats slabs`, `stats items` and `stats
    settings` of each --server (never a write), or the same replies saved in
    FILEs (one node: one file per command or all in one; - is standard
    input).  Per class: pages, used chunks and bytes, requested bytes, chunk
    waste, free chunks and bytes, evictions, and its share of memory against
    its share of evictions; totals per node and for the pool.  Findings:
    which class evicts now and what to change, by the automover's own rules
    (docs/diagnosis.md), drift (the server's class table against the model of its
    release and settings, or of the flags given), and what the dump lacks.  Two
    readings (--interval, or --since an earlier saved one) say what happens
    now: evictions and sets per second per class, ages, and whether the
    automover is moving pages to the classes that evict.  --watch keeps
    reading: each reading as it comes, its rates, pages moved and what changed
    (--format json: one JSON line a reading).  --tls reads nodes started with
    -Z.  A node that cannot be read is one line on stderr;
    the others are still reported, and the exit status is 1.

    \b
    Python: analyse(parse_dump([(name, text)])) / analyse(dump_from_replies(node, read_node(...)))
    """
    from slabcalc.analysis.readings import read_stats
    from slabcalc.errors import DumpError, InputError
    from slabcalc.records.stats import class_records, gate_figures

    _check_usage(files, servers, since, interval, watch, count, metadump_items, plot)
    addresses, analyse = _addresses(servers), _analyser(server_args)
    if watch is not None:
        from slabcalc.cli.stats_watch import run_watch

        return run_watch(addresses, timeout, watch, count, tls, fmt, analyse)
    saved = input_dumps(files) if files else None
    if "-" in since and sys.stdin.isatty():     # as input_dumps says it for FILEs
        raise Refusal("reading stats from the terminal: give a FILE, or pipe one in")
    try:
        read = read_stats(analyse, saved, since, addresses, timeout, interval, tls, metadump_items, _waiting)
    except (DumpError, InputError) as exc:
        raise DataError(str(exc)) from None
    for name, error in read.failed:
        click.echo(f"Error: {name}: {error}", err=True)
    if read.nodes:
        print_stats(list(read.nodes), list(read.failed), list(read.samples), fmt,
                    pool=bool(files) + len(servers) > 1, spans=dict(read.spans))
        measured(measure(*gate_figures(read.nodes)))
        if plot:
            draw("plot_classes", [r for n in read.nodes for r in class_records(n)], plot)
    return 1 if read.failed else 0


def _check_usage(files, servers, since, interval, watch, count, metadump_items, plot) -> None:
    """The options that do not go together, each a usage error."""
    if not files and not servers:
        raise click.UsageError("give saved stats FILEs, or --server HOST:PORT (repeatable)")
    if since and not files:
        raise click.UsageError("--since is the earlier reading of the node in FILEs: give those FILEs too")
    if interval is not None and not servers:
        raise click.UsageError("--interval reads each --server twice; for saved readings give --since FILE")
    if watch is not None and (files or not servers or interval or metadump_items or plot):
        raise click.UsageError("--watch reads each --server again and again: give --server, and no FILEs, "
                               "--interval, --read-items or --plot")
    if count is not None and watch is None:
        raise click.UsageError("--count is how many readings --watch makes: give --watch SECONDS too")


def _addresses(servers):
    """The --server addresses, or a usage error naming the one that is not an address."""
    from slabcalc.inputs.client import parse_address

    try:
        return [parse_address(text) for text in servers]
    except ValueRefused as exc:
        raise click.BadParameter(str(exc), param_hint="'--server'") from None


def _analyser(server_args):
    """``analyse(dump[, name])`` under the flags given (``server_args``, memcached's command line, or None):
    a node's figures, or a refusal naming the flags the node's release refuses."""
    from slabcalc.analysis.stats import analyse
    from slabcalc.model.settings import Refused

    def node_of(dump, name=None):
        try:
            return analyse(dump, name, server_args)
        except Refused as exc:
            said = " / ".join(exc.message.splitlines()) or "it exits"
            raise Refusal(f"memcached {dump.release} refuses to start with {' '.join(server_args)} ({said})") from None
    return node_of


def _waiting(seconds) -> None:
    """Progress between the two readings of --interval: on stderr, on a terminal only."""
    if sys.stderr.isatty():
        click.echo(f"reading again in {seconds} s ...", err=True)
