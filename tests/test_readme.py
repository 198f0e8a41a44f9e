"""README's examples run as written and print what README shows.

Every ```console block is a list of ``$ slabcalc ...`` commands, each followed
by its exact output (stdout and stderr as a terminal shows them).
"""

from __future__ import annotations

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


# an optimize that replays a workload for every candidate takes seconds: the floors run skips it
@pytest.mark.parametrize("command,expected", [
    pytest.param(c, e, marks=[pytest.mark.slow] if "--workload" in c else []) for c, e in EXAMPLES],
    ids=[c for c, _ in EXAMPLES])
def test_readme_example(command, expected, monkeypatch):
    words = shlex.split(command)
    assert words[0] == "slabcalc"
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(cli, words[1:], prog_name="slabcalc")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.output.rstrip("\n") == expected.rstrip("\n")


def shell_examples(text: str):
    """Every ``slabcalc`` command line of ```sh blocks (comments dropped)."""
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if "slabcalc " in line and not line.startswith(("pip ", "bash ")):
                yield line


SHELL = list(shell_examples(README.read_text()))


def test_readme_shell_examples_exist():
    assert any("report -" in line for line in SHELL)


@pytest.mark.parametrize("line", SHELL)
def test_readme_shell_example_runs(line):
    import subprocess
    import sys

    command = re.sub(r"(^|\| )slabcalc ", lambda m: f"{m.group(1)}{sys.executable} -m slabcalc ", line)
    proc = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() and "Traceback" not in proc.stderr
