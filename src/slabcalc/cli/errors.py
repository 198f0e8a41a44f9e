"""One-line errors and exit statuses of the command line: 2 usage and refusals, 1 data."""

from __future__ import annotations

import sys

import click


class Refusal(click.ClickException):
    """A configuration memcached refuses, or input slabcalc cannot use: one line, exit 2."""

    exit_code = 2


class DataError(click.ClickException):
    """Valid options, but the model cannot answer (one line, exit 1)."""

    exit_code = 1


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
