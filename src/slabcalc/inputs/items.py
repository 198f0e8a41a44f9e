"""Item-size distributions read from files: what ``slabcalc report`` sizes up.

Five forms, told apart by the first non-blank line (a UTF-8 BOM, CRLF line
ends and blank lines are accepted anywhere):

``csv``
    A header naming columns (any case; extra columns are not read, and
    named in ``Accounting.unused``; a misspelt one is an error): the key
    length (``key``, ``key_size``, ``key_len``, ``key_length``, ``keylen``,
    ``klen``), the value length (``value``, ``value_size``, ``value_len``,
    ``value_length``, ``vlen``, ``size``), ``flags`` (``flag``) and a ``count``
    (``n``, ``items``, ``freq``, ``frequency``: the row stands for that many
    identical items).  Comma-separated, or tab- or semicolon-separated when
    the header has no comma.  Without a key column every row takes
    ``key_length`` (``--key N``), or, with a ``key_name`` (``name``) column of the keys
    themselves, the UTF-8 length of each key.
``item_size``
    The same CSV with a column of full item sizes (``item_size``, ``ntotal``,
    ``total_size``): memcached's own ``ntotal``, which already holds the key,
    the flags and the value, so those columns are not read.
``values``
    One bare number per line and no header: value lengths, all with the key
    length ``key_length``.
``metadump``
    ``lru_crawler metadump`` output, ``key=user%3A1001 exp=-1 la=1763700000
    cas=12 fetch=no cls=1 size=72`` (later 1.6 releases add ``flags=``), and
    its ``END``: one item of ``ntotal`` ``size=`` per line.  The (URL-encoded)
    keys are not kept; items are counted by size.
``stats_sizes``
    ``stats sizes`` output: ``STAT 96 1234`` is 1234 items in the bucket 96,
    then ``END``.  memcached counts an item in the bucket of its ``ntotal``
    rounded *up* to a multiple of 32 (``item_stats_sizes_add()``), so these
    sizes are up to 31 bytes over the real ones and place items in a class
    at or above their own.  1.6 keeps the histogram only when started with
    ``-o track_sizes``; otherwise it answers ``STAT sizes_status disabled``.

Every data row is accepted or rejected and counted once (:mod:`slabcalc.inputs.rows`); the input is
read once, in blocks, plain numeric blocks counted by numpy (:mod:`slabcalc.inputs.blocks`).  Commands
do not call this module: they open their input with :func:`slabcalc.inputs.open_items`, which picks
this reader, DuckDB's or a trace's.
"""

from __future__ import annotations

from typing import Callable, Iterator, TextIO

from slabcalc.errors import InputError
from slabcalc.inputs.aliases import ITEM_COLUMNS, by_alias
from slabcalc.inputs.blocks import BLANK, IGNORED, BlockReader
from slabcalc.inputs.metadump import METADUMP_FRAME, metadump_key_name, size_key
from slabcalc.inputs.rows import (FIRST_REJECTIONS, NUMBERISH, Accounting, Rejected, Rejection, cell_number,
                                  first_line, header_columns, key_max_of, number, open_input, split_cells,
                                  unused_columns)
from slabcalc.model.distribution import Item, ItemColumns, new_items
from slabcalc.model.item import FLAGS_MAX

# what read_items hands out and reports with, importable from here with it
__all__ = ["read_items", "FORMATS", "Accounting", "Rejection", "FIRST_REJECTIONS", "InputError", "Item",
           "ItemColumns", "new_items", "open_input"]

BLOCK_SIZE = 1 << 20     # characters read at a time (then to the end of that line)
FAST = True              # offer blocks to the column counter (numpy); tests turn it off
CACHE_MAX = 1 << 20      # distinct lines held before the items counted so far are handed out

FORMATS = ("csv", "values", "item_size", "metadump", "stats_sizes")

_ALIASES = ITEM_COLUMNS
_COLUMN = by_alias(ITEM_COLUMNS)
_FLAGS = range(FLAGS_MAX + 1)
_SIZES_DISABLED = "memcached's size tracking is disabled (start it with -o track_sizes)"


def read_items(stream: TextIO, source: str, *, key_length: int | None = None, strict: bool = False,
               progress: Callable[[int], None] | None = None, columns: bool = False,
               arrivals: Callable[[object], None] | None = None, key_max: int | None = None,
               names: Callable[[Iterator[tuple[str, Item, int]]], None] | None = None
               ) -> tuple[Iterator[tuple[Item, int, int]], Accounting]:
    """The items of ``stream`` as ``(Item, count, rows)``, and their :class:`Accounting`.

    The form is read from the first non-blank line at once (an unusable
    header raises :class:`InputError` here); the rows are read as the
    iterator is consumed.  A triple sums the rows of one Item over one or
    more blocks: ``count`` items from ``rows`` rows (a histogram row of count
    0 is a row of no items) -- and the same Item may come again later: the
    caller sums.  The Accounting counts
    rows; it is filled in block by block and final when the iterator is
    exhausted.  The stream is not closed.

    ``key_length`` is the key of rows that give only a value length; ``key_max`` the longest key
    (the profile's, :func:`~slabcalc.inputs.rows.key_max_of`); ``progress(rows_so_far)`` is called after
    each block; ``strict`` raises :class:`InputError` at the first rejected row.  With ``columns``, the
    rows the column counter read (large plain inputs) come last as one
    :class:`ItemColumns` instead of as triples: cheaper by far to size and
    place in bulk (:func:`slabcalc.analysis.report.build_report` takes both).

    ``arrivals``, when given, is called with the accepted rows of each block in
    the input's order (a list of Items, or an :class:`ItemColumns` of counts 1)
    as they are read: what a capacity in the file's order walks.  Rows that
    carry a count (a histogram) have no order and are not passed.

    ``names``, when given, is called with each block's accepted rows as
    ``(key name, Item, count)`` while the same single pass counts them:
    ``--group-by`` groups the rows the report reads without reading the input
    twice or holding it.  An input without key names (a metadump, or a CSV with
    a ``key_name`` column) is then an :class:`InputError` here.
    """
    reader = _ItemReader(stream, source, key_length, strict, progress, columns, key_max)
    reader.arrivals = None if reader.weighted else arrivals
    if names is not None:
        reader.check_named()
        reader.names, reader.fast = names, False    # names are read line by line
    return reader.items(), reader.acct


class _ItemReader(BlockReader):
    """One item input: its form and columns, read from the first line, and how a line is parsed.

    Where lines have a *layout* (CSV whose every column is read and no count, or a column of
    values), blocks are offered to the column counter; the cache maps a distinct line (for metadump:
    its ``size=`` text) to what it is (see :class:`~slabcalc.inputs.blocks.BlockReader`).
    """

    def __init__(self, stream: TextIO, source: str, key_length: int | None, strict: bool,
                 progress: Callable[[int], None] | None, hand_out_columns: bool = False,
                 key_max: int | None = None):
        super().__init__(stream, source, strict, progress, block_size=BLOCK_SIZE, cache_max=CACHE_MAX, fast=FAST)
        self.key_length = key_length
        self.keys = range(1, key_max_of(key_max) + 1)      # the key lengths memcached takes
        self.hand_out_columns = hand_out_columns
        self.key_name_at: int | None = None                # the key_name column of a CSV
        self.unused: tuple[str, ...] = ()                  # the header's columns not read

        first, self.base = first_line(stream, source)
        self.eol = "\r\n" if first.endswith("\r\n") else "\n"
        text = first.strip()
        if text.startswith("STAT "):
            fmt = "stats_sizes"
            self._check_stats(text)
            self.parse, self.weighted = self._parse_stat, True
        elif text.startswith("key=") or text == "END" or METADUMP_FRAME.fullmatch(text):
            fmt = "metadump"
            self.parse, self.keyfunc = self._parse_metadump, size_key
        elif NUMBERISH.fullmatch(text):
            fmt = "values"
            self.key = self._given_key("a column of value sizes needs --key N")
            self.parse, self.layout = self._parse_value, ("value",)
        else:
            fmt = self._read_header(first.rstrip("\r\n"))
        self.first = first
        self.first_is_data = fmt in ("stats_sizes", "metadump", "values")
        if self.first_is_data:
            self.base -= 1
        self.fast = self.layout is not None and self.fast
        self.acct = Accounting(source, fmt, keys_named=fmt == "metadump", unused=self.unused)

    # -- the first line ----------------------------------------------------

    def _read_header(self, text: str) -> str:
        here = f"{self.source}:{self.base}"
        self.delimiter = next((d for d in ",\t;" if d in text), ",")
        names = split_cells(text, self.delimiter)
        columns = header_columns(names, _COLUMN, here)
        if "value" not in columns and "item_size" not in columns:
            if all(NUMBERISH.fullmatch(name.strip()) for name in names):
                raise InputError(f"{here}: no header: the first line must name the columns "
                                 f"(key,value,count,...), not {text!r}")
            raise InputError(f"{here}: no value or item_size column in the header {text!r} (a value column is "
                             f"one of {', '.join(_ALIASES['value'])}; an item_size column one of "
                             f"{', '.join(_ALIASES['item_size'])})")
        self.count_at = columns.get("count")
        self.weighted = self.count_at is not None
        if "item_size" in columns:
            # ntotal already holds the key, the flags and the value: those columns are not read
            read = {"item_size": columns["item_size"]}
            self.size_at = columns["item_size"]
            self.parse = self._parse_sized_row
            fmt = "item_size"
        else:
            read = {name: columns[name] for name in ("key", "value", "flags") if name in columns}
            self.key_at, self.value_at, self.flags_at = read.get("key"), read["value"], read.get("flags")
            self.key_name_at = columns.get("key_name") if self.key_at is None else None
            if self.key_at is None and self.key_name_at is None:
                self.key = self._given_key("no key column; give --key N")
            if self.key_name_at is not None:   # every named line is distinct: cache what it is without its name
                self.read_at = tuple(at for at in (self.value_at, self.flags_at, self.count_at) if at is not None)
                self.keyfunc = self._named_row_key
            self.parse = self._parse_row
            fmt = "csv"
        if not self.weighted and len(read) == len(names):   # every column is read: lines can be plain
            self.layout = tuple(sorted(read, key=read.__getitem__))
        used = set(read.values()) | {at for at in (self.count_at, self.key_name_at) if at is not None}
        self.unused = unused_columns(names, used)
        return fmt

    def _given_key(self, missing: str) -> int:
        if self.key_length is None:
            raise InputError(f"{self.source}: {missing}")
        if self.key_length not in self.keys:
            raise InputError(f"{self.source}: key length must be 1..{self.keys[-1]}, not {self.key_length}")
        return self.key_length

    def _check_stats(self, text: str) -> None:
        parts = text.split()
        if parts[1:] == ["sizes_status", "disabled"]:
            raise InputError(f"{self.source}: {_SIZES_DISABLED}")
        if parts[1] != "sizes_status" and not NUMBERISH.fullmatch(parts[1]):
            raise InputError(f"{self.source}:{self.base}: not 'stats sizes' output "
                             f"(STAT <size> <count>): {text!r}")

    # -- one line ---------------------------------------------------------------

    def _cells(self, line: str) -> list[str]:
        return split_cells(line.rstrip("\r\n"), self.delimiter)

    def _named_row_key(self, line: str) -> str:
        """A key_name CSV line's cache key: the cells read, with the name as its length in bytes
        (``\1`` and cells joined by ``\x1f``), so the cache and the counts grow with the distinct
        sizes, not with the keys; ``\2`` and the line itself when it holds a ``\x1f``."""
        if not line.strip():
            return line
        if "\x1f" in line:
            return "\2" + line
        cells = self._cells(line)
        kept = [""] * len(cells)
        for at in self.read_at:
            if at < len(cells):
                kept[at] = cells[at]
        if self.key_name_at < len(cells):
            kept[self.key_name_at] = str(len(cells[self.key_name_at].strip().encode()))
        return "\1" + "\x1f".join(kept)

    def _parse_row(self, line: str) -> object:
        if not line.strip():
            return BLANK
        sized = line.startswith("\1") and self.keyfunc is not None    # see _named_row_key
        if sized:
            cells = line[1:].split("\x1f")
        else:
            cells = self._cells(line[1:] if line.startswith("\2") and self.keyfunc is not None else line)
        if self.key_name_at is not None:
            if self.key_name_at >= len(cells):
                key = 0
            else:
                key = int(cells[self.key_name_at]) if sized else len(cells[self.key_name_at].strip().encode())
        else:
            key = self.key if self.key_at is None else cell_number(cells, self.key_at, "key")
        if key not in self.keys:
            raise Rejected(f"key length must be 1..{self.keys[-1]}", str(key))
        value = cell_number(cells, self.value_at, "value")
        flags = 0 if self.flags_at is None else cell_number(cells, self.flags_at, "flags")
        if flags not in _FLAGS:
            raise Rejected(f"flags must be 0..{FLAGS_MAX}", str(flags))
        return self._weigh(Item(key, value, flags, None), cells)

    def _parse_sized_row(self, line: str) -> object:
        if not line.strip():
            return BLANK
        cells = self._cells(line)
        item = Item(None, None, 0, cell_number(cells, self.size_at, "item_size"))
        return self._weigh(item, cells)

    def _weigh(self, item: Item, cells: list[str]) -> object:
        if self.count_at is None:
            return item
        return item, cell_number(cells, self.count_at, "count")

    def _parse_value(self, line: str) -> object:
        text = line.strip()
        if not text:
            return BLANK
        return Item(self.key, number(text, "value"), 0, None)

    def _parse_metadump(self, key: str) -> object:
        if key.startswith("\0"):
            return Item(None, None, 0, number(key[1:], "size"))
        text = key.strip()
        if not text:
            return BLANK
        if text == "END" or METADUMP_FRAME.fullmatch(text):
            return IGNORED      # the echoed command, 1.6.45's OK before the items, the END after
        if text.startswith("key="):
            raise Rejected("missing column size", text)
        if text.startswith("BUSY"):
            raise Rejected("the crawler was busy when this was saved (BUSY): the dump may lack items", text)
        raise Rejected("not a metadump line", text)

    def _parse_stat(self, line: str) -> object:
        parts = line.split()
        if not parts:
            return BLANK
        if parts == ["END"]:
            return IGNORED
        if parts[0] != "STAT":
            raise Rejected("not a STAT line", line.strip())
        if parts[1:2] == ["sizes_status"]:
            if parts[2:] == ["disabled"]:
                raise InputError(f"{self.source}: {_SIZES_DISABLED}")
            return IGNORED
        size = cell_number(parts, 1, "size")
        return Item(None, None, 0, size), cell_number(parts, 2, "count")

    def check_named(self) -> None:
        """InputError unless the rows name their keys (a metadump, or a CSV with a key_name column)."""
        if self.acct.format != "metadump" and self.key_name_at is None:
            raise InputError(f"{self.source}: --group-by needs key names: lru_crawler metadump lines, or a "
                             f"CSV header with a key_name column and value (or item_size)")

    def _named(self, lines: list[str]) -> Iterator[tuple[str, Item, int]]:
        """``(key name, Item, count)`` of the accepted rows of ``lines``, already counted by :meth:`_sort`
        (for ``names``: the cache says what each line is; rejected and blank lines are left out)."""
        name_at = self.key_name_at
        for line in lines:
            what = self.what(line)
            if type(what) is tuple:
                item, weight = what
            elif type(what) is Item:
                item, weight = what, 1
            else:
                continue
            name = metadump_key_name(line) if name_at is None else self._cells(line)[name_at].strip()
            yield name, item, weight
