"""docs/cli.md cannot drift; README and the docs pages name every command and option; mkdocs.yml
lists every page.

After adding or changing a command: ``python scripts/gen_cli_docs.py`` rewrites docs/cli.md;
the coverage tests name each command or option no page mentions yet (docs/cli.md, which names
them all, does not count); a new docs page goes into mkdocs.yml's ``nav``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click
import yaml

ROOT = Path(__file__).resolve().parent.parent
SKIP_OPTIONS = {"--help", "--version"}
DOCS = ROOT / "docs"


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


def _names(text: str, option: str) -> bool:
    """The text names the option itself, not only a longer one it begins (--flags in --flags-col)."""
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def _missing(text: str) -> list[str]:
    missing = []
    for path, command in GEN.commands():
        name = " ".join(("slabcalc",) + path)
        if path and f"{name}" not in text:
            missing.append(f"command '{name}'")
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts + param.secondary_opts:
                    if opt.startswith("--") and opt not in SKIP_OPTIONS and not _names(text, opt):
                        missing.append(f"option {opt} of '{name}'")
    return missing


def _written_pages() -> dict[str, str]:
    """README and every docs page written by hand (docs/cli.md is generated from --help), by name."""
    pages = [ROOT / "README.md"] + [page for page in sorted(DOCS.glob("*.md")) if page.name != "cli.md"]
    return {page.relative_to(ROOT).as_posix(): page.read_text(encoding="utf-8") for page in pages}


def test_readme_and_docs_name_every_command_and_option():
    missing = _missing("\n".join(_written_pages().values()))
    assert not missing, "neither README.md nor docs/*.md (but cli.md) mentions: " + ", ".join(missing)


def _page_and_its_links(name: str, pages: dict[str, str]) -> str:
    """A command's page, the pages it links to and the options shared by every command."""
    text = pages[f"docs/{name}.md"]
    linked = set(re.findall(r"\]\(([\w.-]+\.md)(?:#[\w-]*)?\)", text)) | {"common-options.md"}
    return "\n".join([text] + [pages[f"docs/{page}"] for page in sorted(linked) if f"docs/{page}" in pages])


def _missing_on_pages(pages: dict[str, str]) -> list[str]:
    """What a command's own page (docs/COMMAND.md) and the pages it links to do not name."""
    missing = []
    for path, command in GEN.commands():
        if not path or path[0] == "help":
            continue
        if f"docs/{path[0]}.md" not in pages:
            missing.append(f"docs/{path[0]}.md")
            continue
        name = " ".join(("slabcalc",) + path)
        missing += [f"{m} on docs/{path[0]}.md or a page it links to"
                    for m in _missing(_page_and_its_links(path[0], pages))
                    if m == f"command '{name}'" or m.endswith(f" of '{name}'")]
    return sorted(set(missing))


def test_every_command_has_a_page_naming_its_options():
    missing = _missing_on_pages(_written_pages())
    assert not missing, "missing: " + ", ".join(missing)


def test_the_page_check_can_fail():
    pages = _written_pages()
    assert "docs/place.md" in _missing_on_pages({k: v for k, v in pages.items() if k != "docs/place.md"})
    unlinked = dict(pages, **{"docs/place.md": pages["docs/place.md"].replace("items-and-classes.md", "x.md")})
    assert any(m.startswith("option --flags of 'slabcalc place'") for m in _missing_on_pages(unlinked))


def _nav_pages(nav) -> list[str]:
    """Every page a mkdocs ``nav`` lists, however deep its sections."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for entry in nav for page in _nav_pages(entry)]


def _nav_problems(nav, files: set[str]) -> list[str]:
    listed = _nav_pages(nav)
    problems = [f"{page} is in nav but not in docs/" for page in listed if page not in files]
    problems += [f"docs/{page} is not in mkdocs.yml's nav" for page in sorted(files - set(listed))]
    problems += [f"{page} is in nav twice" for page in sorted({p for p in listed if listed.count(p) > 1})]
    return problems


def test_mkdocs_nav_lists_every_docs_page_and_only_those():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    problems = _nav_problems(config["nav"], {page.name for page in DOCS.glob("*.md")})
    assert not problems, "; ".join(problems)


def test_the_nav_check_can_fail():
    nav = [{"Home": "index.md"}, {"Commands": [{"place": "place.md"}, {"gone": "gone.md"}]}, "place.md"]
    assert _nav_problems(nav, {"index.md", "place.md", "new.md"}) == [
        "gone.md is in nav but not in docs/", "docs/new.md is not in mkdocs.yml's nav", "place.md is in nav twice"]


def test_the_coverage_check_can_fail():
    assert "command 'slabcalc report'" in _missing("slabcalc classes")
    assert any("--fail-over-waste" in m for m in _missing("slabcalc report slabcalc stats"))
    assert "option --flags of 'slabcalc place'" in _missing("slabcalc place --flags-col")


def _broken_links(text: str, base: Path) -> list[str]:
    """Relative links of a page (not URLs, not anchors of the same page) to files that do not exist."""
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
    return [t for t in targets if "://" not in t and not (base / t).exists()]


def test_readme_is_a_front_page_with_the_set_up_commands_first_and_links_that_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "README.md is a front page: the rest belongs in docs/"
    first_block = re.search(r"```\w*\n(.*?)```", text, flags=re.S).group(1).splitlines()
    assert first_block[0] == "pip install . && slabcalc report examples/items.csv"
    assert first_block[1].startswith("bash .ci/run ")
    assert not _broken_links(text, ROOT)
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)\)", text))
    assert linked >= {"cli.md", "classes.md", "simulate.md", "exactness.md"}


def test_docs_pages_link_only_to_pages_that_exist():
    broken = {page.name: _broken_links(page.read_text(encoding="utf-8"), DOCS) for page in DOCS.glob("*.md")}
    assert not {name: links for name, links in broken.items() if links}


def test_the_link_check_can_fail():
    assert _broken_links("[a](place.md) [b](gone.md#x) [c](https://x.org/y.md) [d](#here)", DOCS) == ["gone.md"]
