"""The one way tests run the command line: ``run("report", "examples/items.csv", input=...)``.

stdout and stderr come apart (``result.stdout``, ``result.stderr``; ``result.output`` has both,
as a terminal shows them); ``env`` sets variables such as ``COLUMNS`` for the run.
"""

from __future__ import annotations

from click.testing import CliRunner, Result

from slabcalc.cli import cli


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(cli, list(args), input=input, prog_name="slabcalc")
