"""docs/cli.md cannot drift; README and the docs pages name every command and option; mkdocs.yml
lists every page.

After adding or changing a command: ``python scripts/gen_cli_docs.py`` rewrites docs/cli.md;
the coverage tests name each command or option no page mentions yet (docs/cli.md, which names
them all, does not count); a new docs page goes into mkdocs.yml's ``nav``.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import click
import pytest
import yaml
from helpers import ROOT

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


# -- examples shown as text (they need a live node, or are memcached's own command line) ---------------

def text_lines(page: Path) -> list[str]:
    """The lines of a page's ```text blocks, a line continued with ``\\`` joined, comments dropped."""
    lines = []
    for block in re.findall(r"```text\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
        lines += [line.split("  #")[0].strip() for line in block.replace("\\\n", " ").splitlines()]
    return lines


SHOWN = [(page.relative_to(ROOT).as_posix(), line) for page in sorted(DOCS.glob("*.md")) for line in text_lines(page)]


def test_text_blocks_are_found():
    assert sum(line.startswith("slabcalc stats") for page, line in SHOWN if page == "docs/stats-watch-tls.md") == 4


@pytest.mark.parametrize("line", [line for _, line in SHOWN if line.startswith("slabcalc ")],
                         ids=[f"{page}: {line}" for page, line in SHOWN if line.startswith("slabcalc ")])
def test_a_command_shown_as_text_has_the_options_it_shows(line):
    """A command that needs a live node is shown, not run: its command exists and parses its words
    (every option known, each given the values it takes)."""
    from slabcalc.cli import cli

    words = shlex.split(line.split(" > ")[0])
    command = cli.get_command(click.Context(cli), words[1])
    assert command is not None, words[1]
    command.make_parser(click.Context(command, info_name=words[1])).parse_args(words[2:])


@pytest.mark.parametrize("line", [line for _, line in SHOWN if re.match(r"memcached -[A-Za-z]( |$)", line)])
def test_a_memcached_command_line_shown_as_text_is_one_memcached_accepts(line):
    """memcached's own flags on a page (a TLS node's, say) are refused by neither release's rules."""
    from slabcalc import configure, load_profile

    for release in ("1.6.18", None):          # the installed release, and slabcalc's default
        configure(load_profile(release), shlex.split(line)[1:])


def test_the_watch_text_example_is_what_a_watch_prints(memcached):
    """docs/stats-watch-tls.md's text output of a watch, run as it says: ``memcached -m 4 -o
    slab_automove=0``, empty; between the first and the second reading 500 items of 100 bytes, 3 gets
    and 3 000 items of 3 000 bytes; 80 columns (the node's port aside, every character)."""
    import os
    import subprocess
    import sys

    from memcached_server import MemcachedServer

    text = (DOCS / "stats-watch-tls.md").read_text(encoding="utf-8")
    shown = next(b for b in re.findall(r"```text\n(.*?)```", text, flags=re.S) if b.startswith("reading 1 "))
    # a class's age (its oldest item's, on memcached's whole-second clock) is 0 or 1 by when it ticked
    ages = re.compile(r"^( +\d+(?: +\d+){4} +)([01])$", flags=re.M)
    assert len(ages.findall(shown)) == 2
    for _ in range(3):          # again when a loaded machine let the load spill past the second reading
        with MemcachedServer(["-m", "4", "-o", "slab_automove=0"], memcached=memcached) as server:
            proc = subprocess.Popen([sys.executable, "-m", "slabcalc", "stats", "--server", f"127.0.0.1:{server.port}",
                                     "--watch", "1", "--count", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env={**os.environ, "COLUMNS": "80"})
            try:
                first = proc.stdout.readline()              # reading 1 is printed (flushed) as it is made
                server.set_many((f"small:{i}" for i in range(500)), b"s" * 100)
                server._send(b"get small:1 small:2 nothing\r\n")
                while server._readline() != "END":
                    pass
                server.set_many((f"big:{i}" for i in range(3000)), b"b" * 3000)
                out, err = proc.stdout.read(), proc.stderr.read()     # not communicate(): first's buffer
                proc.wait(timeout=10)
            finally:
                proc.kill()
                proc.wait()
        printed = ages.sub(r"\g<1>0", (first + out).replace(f"127.0.0.1:{server.port}", "127.0.0.1:11211"))
        if proc.returncode == 0 and err == "" and printed.rstrip("\n") == shown.rstrip("\n"):
            break
    assert err == "" and printed.rstrip("\n") == shown.rstrip("\n")
