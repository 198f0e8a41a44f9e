"""Tables laid out without tabulate equal tabulate's "simple" layout, cell for cell.

``simple_table`` spares a command tabulate's import (a third of its
start-up); tabulate is the oracle: on generated tables of the cells the
commands make -- ints, numbers as text, human units, words, blanks, the
memory bars -- and of cells made to trip it (thousands separators,
exponents, inf, True, padding, wide characters), ``simple_table`` either
gives tabulate's text exactly or declines (None) and tabulate lays it out.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from slabcalc.cli import output
from slabcalc.cli.output import simple_table

COMMON = st.one_of(
    st.integers(-10**12, 10**12),
    st.integers(0, 10**6).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: f"{f:.2f}"),
    st.sampled_from(["", "1.50 MiB", "12 B", "3.00 GiB", "yes", "no", "total", "class 1", "-m 64", "1.6.18",
                     "\u2588\u2588\u258d", "\u258f", "n/a", "(none)", "a,b", "x y", " padded ", "-", "."]),
)
TRICKY = st.sampled_from(["1,000", "1e5", "inf", "-inf", "nan", "True", "False", "1_000", " 5", "5 ", "+7",
                          "007", "1.", ".5", "0x10", "\u00e9t\u00e9", "\u4e2d\u6587", "a\tb", "a\nb",
                          "\x1b[31m1\x1b[0m", "1" * 20, "9" * 16 + ".5", "--", "1-2", "1.2.3", "e", "E5"])


TEXT = st.text(st.sampled_from("ab -,.5"), max_size=40)      # words, hyphens and spaces to wrap

# Twice the profile's examples: 200 in the suite; 40 in the floors' run (.ci/run, profile "floors"),
# where the oldest tabulate is held to the same layout in plain Python beside the suite.
EXAMPLES = 2 * settings.default.max_examples


def _tables(cells):
    return st.integers(1, 5).flatmap(
        lambda width: st.tuples(
            st.lists(st.sampled_from(["class", "chunk_size", "pages", "memory", "x", "ratio", "why"]),
                     min_size=width, max_size=width),
            st.lists(st.lists(cells, min_size=width, max_size=width), min_size=1, max_size=8),
            st.one_of(st.none(), st.lists(st.sampled_from(["left", "right", "decimal"]),
                                          min_size=width, max_size=width)),
            st.one_of(st.none(), st.tuples(st.integers(0, width - 1), st.integers(1, 12)))))


def _mine(headers, table, align, wrap=None) -> str | None:
    """``simple_table``'s layout of a table (None: declined, left to tabulate)."""
    return simple_table([list(row) for row in table], list(headers), align, wrap)


def _tabulates(headers, table, align, wrap=None) -> str:
    widths = [wrap[1] if wrap and i == wrap[0] else None for i in range(len(headers))]
    return tabulate(table, headers=list(headers), tablefmt="simple", colalign=align,
                    maxcolwidths=widths if wrap else None)


@settings(max_examples=EXAMPLES, deadline=None)
@given(_tables(COMMON))
def test_tables_of_the_cells_commands_make_are_tabulates(case):
    """Laid out here, never declined (None would not equal tabulate's text): the commands' own cells
    are never left to tabulate."""
    assert _mine(*case) == _tabulates(*case)


@settings(max_examples=EXAMPLES, deadline=None)
@given(_tables(st.one_of(COMMON, TRICKY)))
def test_tricky_cells_are_laid_out_as_tabulate_does_or_left_to_it(case):
    mine = _mine(*case)
    assert mine is None or mine == _tabulates(*case)


@settings(max_examples=EXAMPLES, deadline=None)
@given(_tables(st.one_of(COMMON, TEXT)))
def test_wrapped_text_is_wrapped_as_tabulate_wraps_it(case):
    """render_pairs wraps its value column to the terminal (tabulate's maxcolwidths)."""
    mine = _mine(*case)
    assert mine is None or mine == _tabulates(*case)


@pytest.mark.parametrize("cell", ["1,000", "1e5", "inf", "nan", "True", "1_000", " 5", "\u4e2d", "a\nb",
                                  "\x1b[31m1\x1b[0m", "1" * 20])
def test_what_tabulate_reads_its_own_way_is_left_to_it(cell):
    assert simple_table([[cell, 1]], ["a", "b"], None) is None


def test_the_commands_tables_are_laid_out_without_tabulate():
    """The cells of a report (human units, bars, ratios) are all of the kinds laid out here."""
    rows = [{"class": 1, "chunk_size": 96, "page_bytes": 1 << 20, "memory_pct": 3.7, "memory": output.bar(3.7),
             "why": "class 1 (chunk 96)"},
            {"class": "total", "chunk_size": None, "page_bytes": 3 << 20, "memory_pct": 100.0,
             "memory": output.bar(100.0), "why": ""}]
    columns = ["class", "chunk_size", "page_bytes", "memory_pct", "memory", "why"]
    table = [[output.human(r[c]) if output.is_byte_column(c) else output._cell(r[c]) for c in columns]
             for r in rows]
    align = ["decimal", "decimal", "right", "decimal", "left", "left"]
    text = simple_table(table, columns, align)
    assert text is not None and "1.00 MiB" in text and "\u2588" * 10 in text
    assert text == tabulate(table, headers=columns, tablefmt="simple", colalign=align)
