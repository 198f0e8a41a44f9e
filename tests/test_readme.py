"""The examples of README and of every docs page run as written and print what they show.

Every ```console block is a list of ``$ slabcalc ...`` commands, each followed
by its exact output (stdout and stderr as a terminal shows them).  The pages are
README.md and every ``docs/*.md`` (a glob: a page added later is covered without
a change here); a test's id names its page.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from helpers import ROOT, run


README = ROOT / "README.md"
PAGES = [README] + sorted((ROOT / "docs").glob("*.md"))


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


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


# (page, command, expected output) of every page
EXAMPLES = [(page_name(page), command, expected)
            for page in PAGES for command, expected in console_examples(page.read_text(encoding="utf-8"))]

# the commands with a page of their own (docs/<command>.md); `help` prints --help and has none
COMMANDS = ("classes", "place", "report", "stats", "compare", "optimize", "simulate", "sql", "profiles")


def test_readme_has_examples():
    commands = {shlex.split(c)[1] for page, c, _ in EXAMPLES if page == "README.md"}
    assert {"classes", "place"} <= commands


def test_every_command_page_has_examples_of_its_command():
    for command in COMMANDS:
        on_page = [c for page, c, _ in EXAMPLES if page == f"docs/{command}.md"]
        assert any(shlex.split(c)[1] == command for c in on_page), f"docs/{command}.md shows no `slabcalc {command}`"


def test_the_example_parser_finds_every_command_of_a_block():
    text = "```console\n$ slabcalc a\nout 1\n\n$ slabcalc b\n```\n```sh\n$ slabcalc c\n```\n"
    assert list(console_examples(text)) == [("slabcalc a", "out 1\n"), ("slabcalc b", "")]


# an optimize that replays a workload for every candidate takes seconds: the floors run skips it
@pytest.mark.parametrize("command,expected", [
    pytest.param(c, e, marks=[pytest.mark.slow] if "--workload" in c else []) for _, c, e in EXAMPLES],
    ids=[f"{page}: {c}" for page, c, _ in EXAMPLES])
def test_readme_example(command, expected, monkeypatch):
    words = shlex.split(command)
    assert words[0] == "slabcalc"
    monkeypatch.chdir(ROOT)
    result = run(*words[1:])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.output.rstrip("\n") == expected.rstrip("\n")


def shell_examples(text: str):
    """Every ``slabcalc`` command line of ```sh blocks (comments dropped)."""
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if "slabcalc " in line and not line.startswith(("pip ", "bash ")):
                yield line


SHELL = [(page_name(page), line) for page in PAGES for line in shell_examples(page.read_text(encoding="utf-8"))]


def test_readme_shell_examples_exist():
    assert any("report -" in line for _, line in SHELL)


@pytest.mark.parametrize("line", [line for _, line in SHELL], ids=[f"{page}: {line}" for page, line in SHELL])
def test_readme_shell_example_runs(line):
    import subprocess
    import sys

    command = re.sub(r"(^|\| )slabcalc ", lambda m: f"{m.group(1)}{sys.executable} -m slabcalc ", line)
    proc = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() and "Traceback" not in proc.stderr
