"""Blocks of plain numeric rows, read and counted column by column with numpy.

The fast path of :mod:`slabcalc.inputs.items`: an item log of millions of
``key,value`` rows is mostly rows of plain decimal numbers.  Python cannot
even hash that many lines in twice the time the ``csv`` module takes to
split them, so such a block is handed to numpy whole: checked (every row is
the header's columns of 1 to 18 digits, separated by the delimiter, ended
by a line end), parsed, range-checked (key 1..key_max, flags at most
2**32 - 1) and reduced to its distinct rows and their counts, all in C.  A
block that fails any check is not taken, and the caller reads it line by
line, where every row is accepted or rejected with a reason.

numpy is imported only when this module is, i.e. when an input has such a
layout; importing it costs about as much as reading 300 000 rows.
"""

from __future__ import annotations

import math

import numpy as np

CELL_DIGITS_MAX = 18       # longer cells may overflow int64: read line by line instead
COMPACT_ROWS = 1 << 17     # distinct rows held from many blocks before they are merged
RAW_ROWS = 1 << 18         # rows held as read, from several blocks, before their distinct rows are counted
DENSE_MIN = 1 << 20        # rows are counted in a table of every possible row when it is this small


class ColumnCounter:
    """Counts the distinct rows of blocks whose every line is plain numbers.

    ``layout`` names the columns of a line in order, from ``key``,
    ``value``, ``flags`` and ``item_size``; ``key`` is the key length of
    rows without a key column.
    """

    def __init__(self, layout: tuple[str, ...], delimiter: str, key: int | None,
                 key_max: int, flags_max: int):
        self.layout, self.width = layout, len(layout)
        self.key, self.key_max, self.flags_max = key, key_max, flags_max
        self.names = ("item_size",) if "item_size" in layout else ("key", "value", "flags")
        sep = delimiter.encode("ascii")
        self.expected = np.frombuffer(sep * (self.width - 1) + b"\n", dtype=np.uint8)
        self.held: list[tuple[list[np.ndarray], np.ndarray]] = []   # distinct rows and counts
        self.held_rows = 0
        # rows of the latest blocks, counted together once they add up to RAW_ROWS: counting a
        # block's 140 000 rows costs about what counting a quarter of a million costs (a table of every
        # possible row is built and scanned either way)
        self.raw: list[list[np.ndarray]] = []
        self.raw_rows = 0

    def take(self, block: str) -> int | None:
        """Count ``block`` (whole lines ending in ``\\n``) and return its rows, or None if any
        line is not plain: then nothing is counted."""
        if not block.isascii():
            return None
        data = block.encode("ascii")
        chars = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero((chars - np.uint8(48)) > 9)       # every byte that is not a digit
        if len(ends) == 0 or len(ends) % self.width:
            return None
        if not (chars[ends].reshape(-1, self.width) == self.expected).all():
            return None
        lengths = np.diff(ends, prepend=-1) - 1                   # digits of each cell
        if lengths.min() < 1 or lengths.max() > CELL_DIGITS_MAX:
            return None
        cells = _numbers(chars, ends, lengths).reshape(-1, self.width)
        given = {name: cells[:, i] for i, name in enumerate(self.layout)}
        rows = len(cells)
        if "key" in given and ((given["key"] < 1).any() or (given["key"] > self.key_max).any()):
            return None
        if "flags" in given and (given["flags"] > self.flags_max).any():
            return None
        if self.names == ("item_size",):
            columns = [given["item_size"]]
        else:
            columns = [given["key"] if "key" in given else np.full(rows, self.key, dtype=np.int64),
                       given["value"],
                       given["flags"] if "flags" in given else np.zeros(rows, dtype=np.int64)]
        self.raw.append(columns)
        self.raw_rows += rows
        self._latest = columns
        if self.raw_rows >= RAW_ROWS:
            self._count_raw()
        return rows

    def latest(self):
        """The rows of the block :meth:`take` took last, in their order, as an ItemColumns of counts 1."""
        from slabcalc.model.distribution import ItemColumns

        columns = dict(zip(self.names, self._latest))
        rows = len(self._latest[0])
        return ItemColumns(columns.get("key"), columns.get("value"), columns.get("flags"), columns.get("item_size"),
                           np.ones(rows, dtype=np.int64))

    def _count_raw(self) -> None:
        """The rows held as read, reduced to their distinct rows and counts."""
        if not self.raw:
            return
        columns = self.raw[0] if len(self.raw) == 1 else \
            [np.concatenate([block[i] for block in self.raw]) for i in range(len(self.names))]
        self.raw, self.raw_rows = [], 0
        self.held.append(_distinct(columns, None))
        self.held_rows += len(self.held[-1][1])
        if self.held_rows > COMPACT_ROWS and len(self.held) > 1:
            self._compact()

    def _compact(self) -> None:
        columns = [np.concatenate([held[0][i] for held in self.held]) for i in range(len(self.names))]
        counts = np.concatenate([held[1] for held in self.held])
        self.held = [_distinct(columns, counts)]
        self.held_rows = len(counts)

    def arrays(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Each distinct row counted so far, once: ``({column: int64 array}, counts)``; then
        forget them.

        The columns are ``key``, ``value`` and ``flags`` (each row's key
        length filled in when the input has no key column), or ``item_size``.
        """
        self._count_raw()
        if not self.held:
            return {name: np.zeros(0, dtype=np.int64) for name in self.names}, np.zeros(0, dtype=np.int64)
        if len(self.held) > 1:
            self._compact()
        (columns, counts), = self.held
        self.held, self.held_rows = [], 0
        return dict(zip(self.names, columns)), counts


def _numbers(chars: np.ndarray, ends: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The value of each cell, given the bytes, each cell's end (the byte after its last digit)
    and its digits (1 to CELL_DIGITS_MAX, all checked to be digits): the cells of each length
    are read digit by digit together, which takes half the time numpy's own text parser does."""
    digits = chars - np.uint8(48)
    starts = ends - lengths
    numbers = np.empty(len(ends), dtype=np.int64)
    for length in range(1, int(lengths.max()) + 1):
        which = np.flatnonzero(lengths == length)
        if not len(which):
            continue
        at = starts[which]
        value = digits[at].astype(np.int64)
        for offset in range(1, length):
            value *= 10
            value += digits[at + offset]
        numbers[which] = value
    return numbers


def _distinct(columns: list[np.ndarray], counts: np.ndarray | None) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct rows of ``columns`` (non-negative int64, equally long) and the count of each:
    how often it occurs, or the sum of its ``counts``."""
    lows = [int(c.min()) for c in columns]
    spans = [int(c.max()) - low + 1 for c, low in zip(columns, lows)]
    cells = math.prod(spans)
    if counts is None and cells <= 2 * len(columns[0]) + DENSE_MIN:   # few possible rows: a dense table
        code = columns[0] - lows[0]
        for column, low, span in zip(columns[1:], lows[1:], spans[1:]):
            code *= span
            code += column - low
        table = np.bincount(code)
        found = np.flatnonzero(table)
        n = table[found]
        out = []
        for low, span in zip(reversed(lows), reversed(spans)):
            out.append(found % span + low)
            found = found // span
        out.reverse()
        return out, n
    widths = [max(int(c.max()).bit_length(), 1) for c in columns]
    if sum(widths) <= 62:                           # pack each row into one int64 and sort those
        code = np.zeros(len(columns[0]), dtype=np.int64)
        for column, width in zip(columns, widths):
            code <<= width
            code |= column
        if counts is None:
            code.sort()
            order = None
        else:
            order = np.argsort(code, kind="stable")
            code = code[order]
        starts = np.flatnonzero(np.diff(code, prepend=-1))
        code = code[starts]
        out = []
        for width in reversed(widths):
            out.append(code & ((1 << width) - 1))
            code = code >> width
        out.reverse()
    else:                                           # too wide to pack: sort the rows by every column
        order = np.lexsort(columns[::-1])
        ordered = [c[order] for c in columns]
        changed = np.zeros(len(order), dtype=bool)
        changed[0] = True
        for column in ordered:
            changed[1:] |= column[1:] != column[:-1]
        starts = np.flatnonzero(changed)
        out = [column[starts] for column in ordered]
    if counts is None:
        n = np.diff(starts, append=len(columns[0]))
    else:
        n = np.add.reduceat(counts[order], starts)
    return out, n
