#!/usr/bin/env python3
"""Rewrite the output under every ``$ slabcalc ...`` line of the console blocks of README.md
and of every docs/*.md page.

tests/test_readme.py fails when a page shows output the commands no longer
print; after a deliberate change of output, run this and read the diff.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from slabcalc.cli import cli  # noqa: E402


def run(command: str) -> str:
    result = CliRunner().invoke(cli, shlex.split(command)[1:], prog_name="slabcalc")
    return result.output.rstrip("\n")


def rewrite(block: str) -> str:
    out, command = [], None
    for line in block.splitlines():
        if line.startswith("$ "):
            command = line[2:]
            out.append(line)
            out.extend(run(command).splitlines())
        elif command is None:
            out.append(line)
    return "\n".join(out) + "\n"


def pages() -> list[Path]:
    """README and every docs page: the pages tests/test_readme.py runs the examples of."""
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def main() -> int:
    os.chdir(ROOT)
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = re.sub(r"(```console\n)(.*?)(```)", lambda m: m.group(1) + rewrite(m.group(2)) + m.group(3), text,
                     flags=re.S)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
