"""docs/cli.md cannot drift, and README names every command and option.

After adding or changing a command: ``python scripts/gen_cli_docs.py`` rewrites docs/cli.md;
the README test names each command or option neither README nor a page of docs/ mentions yet.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
SKIP_OPTIONS = {"--help", "--version"}


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def test_cli_md_is_what_the_script_writes():
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == GEN.render(), "docs/cli.md is stale: run python scripts/gen_cli_docs.py"


def test_cli_md_has_every_command_including_subcommands():
    paths = [" ".join(path) for path, _ in GEN.commands()]
    assert "profiles show" in paths and "report" in paths
    text = GEN.render()
    for path in paths:
        assert f"## `{' '.join(('slabcalc', path)).rstrip()}`" in text


def _missing(text: str) -> list[str]:
    missing = []
    for path, command in GEN.commands():
        name = " ".join(("slabcalc",) + path)
        if path and f"{name}" not in text:
            missing.append(f"command '{name}'")
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts + param.secondary_opts:
                    if opt.startswith("--") and opt not in SKIP_OPTIONS and opt not in text:
                        missing.append(f"option {opt} of '{name}'")
    return missing


def _guides() -> str:
    """README and the pages of docs/ written by hand (docs/cli.md is generated: it names everything)."""
    pages = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "cli.md")]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def test_readme_names_every_command_and_option():
    missing = _missing(_guides())
    assert not missing, "README.md and docs/*.md do not mention: " + ", ".join(missing)


def test_the_coverage_check_can_fail():
    assert "command 'slabcalc report'" in _missing("slabcalc classes")
    assert any("--fail-over-waste" in m for m in _missing("slabcalc report slabcalc stats"))
