"""README's examples run as written and print what README shows.

Every ```console block is a list of ``$ slabcalc ...`` commands, each followed
by its exact output (stdout and stderr as a terminal shows them).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from slabcalc.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def console_examples(text: str):
    """``(command, expected output)`` for every ``$ slabcalc`` line of console blocks."""
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        command, lines = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    yield command, "\n".join(lines)
                command, lines = line[2:], []
            else:
                lines.append(line)
        if command:
            yield command, "\n".join(lines)


EXAMPLES = list(console_examples(README.read_text()))


def test_readme_has_examples_for_every_command():
    commands = {shlex.split(c)[1] for c, _ in EXAMPLES}
    assert {"classes", "place"} <= commands


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example(command, expected, monkeypatch):
    words = shlex.split(command)
    assert words[0] == "slabcalc"
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, words[1:], prog_name="slabcalc")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.output.rstrip("\n") == expected.rstrip("\n")
