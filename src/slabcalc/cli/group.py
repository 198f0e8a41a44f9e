"""The ``slabcalc`` group, ``slabcalc help``, and the console entry point."""

from __future__ import annotations

import importlib
import sys

import click

from slabcalc.cli.errors import OneLineErrors

# Each command's module, imported only when that command runs (or help lists them all): a
# `slabcalc report` pays for report's imports, not for the optimizer's or the engines'.
COMMANDS = {name: f"slabcalc.cli.commands.{name}"
            for name in ("classes", "compare", "optimize", "place", "profiles", "report", "simulate", "sql", "stats")}


class Slabcalc(OneLineErrors):
    """The ``slabcalc`` group: commands registered by their modules, each module loaded lazily."""

    def list_commands(self, ctx):
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx, name):
        if name not in self.commands and name in COMMANDS:
            importlib.import_module(COMMANDS[name])      # its @cli.command registers it
        return self.commands.get(name)


@click.group(cls=Slabcalc, context_settings={"help_option_names": ["-h", "--help"]})
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
    except SystemExit as done:
        # click meets the closed pipe first: it quiets stdout (wrapping it) and exits 1; the reader
        # having had all it wanted is no error
        if done.code == 1 and type(sys.stdout).__name__.lstrip("_") == "PacifyFlushWrapper":  # 8.2: no "_"
            sys.exit(0)
        raise
