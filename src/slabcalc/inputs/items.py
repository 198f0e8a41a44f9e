"""Item-size distributions read from files: what ``slabcalc report`` sizes up.

Five forms, told apart by the first non-blank line (a UTF-8 BOM, CRLF line
ends and blank lines are accepted anywhere):

``csv``
    A header naming columns (any case; extra columns are ignored): the key
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

Numbers are plain non-negative decimal integers, spaces around them allowed.
A row that cannot be used is *rejected* (counted, and the first few kept with
their line numbers), never guessed at: every data row is accepted or
rejected, blank lines and the header are not rows, and a row with count N
is N items.  ``strict=True`` makes the first rejection an :class:`InputError`.

Speed: the input is read in blocks of about :data:`BLOCK_SIZE` characters,
cut at line ends.  Where every column is read (a CSV of just the key,
value and flags columns, or of item sizes, or a column of values) and the
input is at least a block long, a block whose every line is plain numbers is
checked, parsed and counted in C by :class:`slabcalc.inputs.columns.ColumnCounter`
(numpy), at about the cost of splitting it with the ``csv`` module.  Other blocks, and the other forms,
go line by line: lines are counted by their text, and each distinct line
is parsed once and remembered.  Memory is bounded by a block, the distinct
items and :data:`CACHE_MAX` distinct lines, whatever the number of rows.
Lines are physical lines (``\n``, ``\r\n`` or ``\r`` ends one): no quoted
field may span lines.

This module is long because it reads five input forms with one accounting of every row, and its hot paths (a line cache, numpy blocks) are written for speed.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, compress, count, islice
from typing import Callable, Iterator, Sequence, TextIO

from slabcalc.errors import InputError  # noqa: F401 (raised here, caught by its callers)
from slabcalc.inputs.aliases import ITEM_COLUMNS, by_alias
from slabcalc.model.distribution import Item, ItemColumns, new_items  # noqa: F401 (Item, ItemColumns re-exported)
from slabcalc.model.item import FLAGS_MAX

BLOCK_SIZE = 1 << 20     # characters read at a time (then to the end of that line)
FAST = True              # offer blocks to the column counter (numpy); tests turn it off
CACHE_MAX = 1 << 20      # distinct lines held before the items counted so far are handed out
FIRST_REJECTIONS = 5     # rejections kept, with their lines, in Accounting.first_rejections
TEXT_MAX = 80            # characters of a rejected line kept

FORMATS = ("csv", "values", "item_size", "metadump", "stats_sizes")
# the lines around a saved metadump that are not items: the command echoed by a terminal
# session, and the OK that 1.6.45 sends before the first item
_METADUMP_FRAME = re.compile(r"lru_crawler metadump( \S+)*|OK")

_ALIASES = ITEM_COLUMNS
_COLUMN = by_alias(ITEM_COLUMNS)

# A number, whole or not: a first line that is one makes the "values" form.
_NUMBERISH = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Rejection:
    """A row that was not used."""

    line: int        # 1-based physical line number in the input
    reason: str      # e.g. "value is not a number", "negative key", "missing column value"
    text: str        # the offending line, truncated to 80 characters


@dataclass
class Accounting:
    """Where the rows of one input went; final once its items are all read."""

    source: str            # file name or "<stdin>"
    format: str            # one of FORMATS
    rows: int = 0          # data rows read (blank lines and the header are not rows)
    items: int = 0         # items accepted (a row with count 5 is 5 items)
    rejected: int = 0      # rows rejected
    first_rejections: list[Rejection] = field(default_factory=list)   # the first 5
    keys_named: bool = False   # the input names its keys (metadump)


def open_input(path: str) -> tuple[TextIO, str]:
    """``path`` opened for :func:`read_items`, and the name to report it by; ``-`` is stdin."""
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:          # stdin is already text without bytes below (a test harness)
            return sys.stdin, "<stdin>"
        return io.TextIOWrapper(buffer, encoding="utf-8-sig", newline=""), "<stdin>"
    try:
        return open(path, encoding="utf-8-sig", newline=""), path
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def key_max_of(key_max: int | None) -> int:
    """The longest key a row may give: ``key_max`` (the caller's profile's ``key_max``, memcached's
    KEY_MAX_LENGTH), or the default release's when the caller has no profile."""
    if key_max is not None:
        return key_max
    from slabcalc.model.profile import load_profile

    return load_profile().key_max


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
    (the profile's, :func:`key_max_of`); ``progress(rows_so_far)`` is called after each block; ``strict`` raises
    :class:`InputError` at the first rejected row.  With ``columns``, the
    rows the column counter read (large plain inputs) come last as one
    :class:`ItemColumns` instead of as triples: cheaper by far to size and
    place in bulk (:func:`slabcalc.analysis.report.build_report` takes both).

    ``arrivals``, when given, is called with the accepted rows of each block in
    the input's order (a list of Items, or an :class:`ItemColumns` of counts 1)
    as they are read: what a capacity in the file's order walks.  Rows that
    carry a count (a histogram) have no order and are not passed.

    ``names``, when given, is called with each block's accepted rows as
    ``(key name, Item, count)`` (what :func:`read_named_items` yields) while the
    same single pass counts them: ``--group-by`` groups the rows the report
    reads without reading the input twice or holding it.  An input without key
    names is then an :class:`InputError` here.
    """
    reader = _ItemReader(stream, source, key_length, strict, progress, columns, key_max)
    reader.arrivals = None if reader.weighted else arrivals
    if names is not None:
        reader.check_named()
        reader.names, reader.fast = names, False    # names are read line by line
    return reader.items(), reader.acct


def read_named_items(stream: TextIO, source: str, *, key_length: int | None = None, strict: bool = False,
                     key_max: int | None = None) -> tuple[Iterator[tuple[str, Item, int]], Accounting]:
    """``(key name, Item, count)`` for every accepted row of a metadump or of a CSV with a
    ``key_name`` column, and their :class:`Accounting`.

    The same header, aliases and row rules as :func:`read_items` (a row
    ``read_items`` rejects is rejected here, counted, and fatal only with
    ``strict``), line by line, with the names ``--group-by`` needs.
    """
    reader = _ItemReader(stream, source, key_length, strict, None, key_max=key_max)
    return reader.named(), reader.acct


# -- what a line is ---------------------------------------------------------

class _Bad:
    """Why a line was rejected, and the text a strict error quotes."""

    __slots__ = ("reason", "value")

    def __init__(self, reason: str, value: str):
        self.reason, self.value = reason, value


class _Rejected(Exception):
    def __init__(self, reason: str, value: str):
        super().__init__(reason)
        self.reason, self.value = reason, value


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


_BLANK = _Marker("blank")        # a blank line: not a row
_IGNORED = _Marker("ignored")    # END, STAT sizes_status enabled: not a row either

_FLAGS = range(FLAGS_MAX + 1)
_SIZES_DISABLED = "memcached's size tracking is disabled (start it with -o track_sizes)"


class _Cache(dict):
    """Distinct line -> what it is; a line not seen before is parsed on its own."""

    def __init__(self, parse: Callable[[str], object]):
        super().__init__()
        self.parse = parse

    def __missing__(self, key: str) -> object:
        value = self[key] = self.parse(key)
        return value


class _ItemReader:
    """One input being read: its form, its columns, what was counted and the accounting.

    Accepted rows are counted by line text in ``pending`` and handed out as
    Items when ``pending`` or the cache grows past :data:`CACHE_MAX`, and at
    the end; rows with a count are summed per block instead.

    Where lines have a *layout* (CSV whose every column is read and no
    count, or a column of values), each block is first offered whole to a
    :class:`~slabcalc.inputs.columns.ColumnCounter`, which takes it when every line
    is plain numbers and counts it in C.  Any other block is read line by
    line through the cache, which maps a distinct line (for metadump: its
    ``size=`` text) to what it is: an :class:`Item`, an ``(Item, count)``
    pair, a marker (blank, ignored), a :class:`_Bad`, or the *canonical*
    spelling of the same item, under which it is then counted.
    """

    def __init__(self, stream: TextIO, source: str, key_length: int | None, strict: bool,
                 progress: Callable[[int], None] | None, hand_out_columns: bool = False,
                 key_max: int | None = None):
        self.source, self.key_length, self.strict, self.progress = source, key_length, strict, progress
        self.keys = range(1, key_max_of(key_max) + 1)      # the key lengths memcached takes
        self.keyfunc: Callable[[str], str] | None = None   # line -> cache key (metadump)
        self.weighted = False                              # rows carry a count
        self.layout: tuple[str, ...] | None = None         # the columns of a plain line, in order
        self.delimiter = ","
        self.key: int | None = None                        # the key length of rows without one
        self.cache = _Cache(self._parse_checked)
        self.pending: Counter[str] = Counter()
        self.stream = stream
        self.hand_out_columns = hand_out_columns           # see read_items(columns=...)
        self.arrivals: Callable[[object], None] | None = None   # see read_items(arrivals=...)
        self.names: Callable[[Iterator[tuple[str, Item, int]]], None] | None = None   # read_items(names=...)
        self.base = 0                                      # physical lines before the next block

        first, self.base = first_line(stream, source)
        self.eol = "\r\n" if first.endswith("\r\n") else "\n"
        text = first.strip()
        if text.startswith("STAT "):
            fmt = "stats_sizes"
            self._check_stats(text)
            self.parse, self.weighted = self._parse_stat, True
        elif text.startswith("key=") or text == "END" or _METADUMP_FRAME.fullmatch(text):
            fmt = "metadump"
            self.parse, self.keyfunc = self._parse_metadump, _metadump_key
        elif _NUMBERISH.fullmatch(text):
            fmt = "values"
            self.key = self._given_key("a column of value sizes needs --key N")
            self.parse, self.layout = self._parse_value, ("value",)
        else:
            fmt = self._read_header(first.rstrip("\r\n"))
        self.first = first
        self.first_is_data = fmt in ("stats_sizes", "metadump", "values")
        if self.first_is_data:
            self.base -= 1
        self.columns = None               # the column counter of plain blocks, made by the first whole block
        self.fast = self.layout is not None and FAST
        self.acct = Accounting(source, fmt, keys_named=fmt == "metadump")

    # -- the first line ----------------------------------------------------

    def _read_header(self, text: str) -> str:
        here = f"{self.source}:{self.base}"
        self.delimiter = next((d for d in ",\t;" if d in text), ",")
        names = _split(text, self.delimiter)
        columns = header_columns(names, _COLUMN, here)
        if "value" not in columns and "item_size" not in columns:
            if all(_NUMBERISH.fullmatch(name.strip()) for name in names):
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
        if parts[1] != "sizes_status" and not _NUMBERISH.fullmatch(parts[1]):
            raise InputError(f"{self.source}:{self.base}: not 'stats sizes' output "
                             f"(STAT <size> <count>): {text!r}")

    # -- one distinct line ----------------------------------------------------

    def _parse_checked(self, key: str) -> object:
        try:
            result = self.parse(key)
        except _Rejected as why:
            return _Bad(why.reason, why.value)
        if type(result) is Item:
            canonical = self._canonical(result)
            if canonical != key:       # another spelling: counted under the canonical one
                self.cache.setdefault(canonical, result)
                return canonical
        return result

    def _canonical(self, item: Item) -> str:
        """The cache key of ``item``'s plainest spelling in this input."""
        if item.item_size is not None:
            return f"\0{item.item_size}"
        return f"\0{item.key},{item.value},{item.flags}"

    def _cells(self, line: str) -> list[str]:
        return _split(line.rstrip("\r\n"), self.delimiter)

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
            return _BLANK
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
            key = self.key if self.key_at is None else _cell_number(cells, self.key_at, "key")
        if key not in self.keys:
            raise _Rejected(f"key length must be 1..{self.keys[-1]}", str(key))
        value = _cell_number(cells, self.value_at, "value")
        flags = 0 if self.flags_at is None else _cell_number(cells, self.flags_at, "flags")
        if flags not in _FLAGS:
            raise _Rejected(f"flags must be 0..{FLAGS_MAX}", str(flags))
        return self._weigh(Item(key, value, flags, None), cells)

    def _parse_sized_row(self, line: str) -> object:
        if not line.strip():
            return _BLANK
        cells = self._cells(line)
        item = Item(None, None, 0, _cell_number(cells, self.size_at, "item_size"))
        return self._weigh(item, cells)

    def _weigh(self, item: Item, cells: list[str]) -> object:
        if self.count_at is None:
            return item
        return item, _cell_number(cells, self.count_at, "count")

    def _parse_value(self, line: str) -> object:
        text = line.strip()
        if not text:
            return _BLANK
        return Item(self.key, _number(text, "value"), 0, None)

    def _parse_metadump(self, key: str) -> object:
        if key.startswith("\0"):
            return Item(None, None, 0, _number(key[1:], "size"))
        text = key.strip()
        if not text:
            return _BLANK
        if text == "END" or _METADUMP_FRAME.fullmatch(text):
            return _IGNORED      # the echoed command, 1.6.45's OK before the items, the END after
        if text.startswith("key="):
            raise _Rejected("missing column size", text)
        if text.startswith("BUSY"):
            raise _Rejected("the crawler was busy when this was saved (BUSY): the dump may lack items", text)
        raise _Rejected("not a metadump line", text)

    def _parse_stat(self, line: str) -> object:
        parts = line.split()
        if not parts:
            return _BLANK
        if parts == ["END"]:
            return _IGNORED
        if parts[0] != "STAT":
            raise _Rejected("not a STAT line", line.strip())
        if parts[1:2] == ["sizes_status"]:
            if parts[2:] == ["disabled"]:
                raise InputError(f"{self.source}: {_SIZES_DISABLED}")
            return _IGNORED
        size = _cell_number(parts, 1, "size")
        return Item(None, None, 0, size), _cell_number(parts, 2, "count")

    # -- blocks -----------------------------------------------------------------

    def _blocks(self) -> Iterator[str]:
        """The rest of the input in blocks of whole lines, about :data:`BLOCK_SIZE` characters each."""
        stream = self.stream
        try:
            if self.first_is_data:
                yield self.first
            while True:
                block = stream.read(BLOCK_SIZE)
                if not block:
                    return
                yield block + stream.readline()        # up to the end of the line read into
        except UnicodeDecodeError as exc:
            raise self._not_utf8(exc) from None

    def items(self) -> Iterator[tuple[Item, int, int]]:
        acct = self.acct
        for block in self._blocks():
            if not block.endswith(("\n", "\r")):
                block += self.eol                      # the last line of the input, without its end
            taken = self._take(block)
            if taken is not None and self.arrivals is not None:
                self.arrivals(self.columns.latest())
            if taken is not None:
                self.base += taken
                acct.rows += taken
                acct.items += taken
                totals = None
            else:
                lines = list(io.StringIO(block, newline=""))
                totals = self._sort(lines)
                self.base += len(lines)
                if self.arrivals is not None:
                    self.arrivals(self._in_order(lines))
                if self.names is not None:
                    self.names(self._named(lines))
            if self.progress is not None:
                self.progress(acct.rows)
            if totals:
                yield from ((item, n, rows) for item, (n, rows) in totals.items())
            if len(self.pending) > CACHE_MAX or len(self.cache) > CACHE_MAX:
                yield from self._hand_out()
        yield from self._hand_out(last=True)

    def check_named(self) -> None:
        """InputError unless the rows name their keys (a metadump, or a CSV with a key_name column)."""
        if self.acct.format != "metadump" and getattr(self, "key_name_at", None) is None:
            raise InputError(f"{self.source}: --group-by needs key names: lru_crawler metadump lines, or a "
                             f"CSV header with a key_name column and value (or item_size)")

    def named(self) -> Iterator[tuple[str, Item, int]]:
        """Every row with its key name, one at a time (see :func:`read_named_items`)."""
        self.check_named()
        fmt = self.acct.format
        name_at = getattr(self, "key_name_at", None)
        acct = self.acct
        for block in self._blocks():
            for line in io.StringIO(block, newline=""):
                self.base += 1
                try:
                    what = self.parse(self.keyfunc(line) if self.keyfunc is not None else line)
                except _Rejected as why:
                    acct.rows += 1
                    acct.rejected += 1
                    self._rejection(self.base, why.reason, why.value, line)
                    continue
                if type(what) is tuple:
                    item, weight = what
                elif type(what) is Item:
                    item, weight = what, 1
                else:
                    continue                 # blank, END
                acct.rows += 1
                acct.items += weight
                if fmt == "metadump":
                    name = metadump_key_bytes(line).decode("utf-8", errors="replace")
                else:
                    name = self._cells(line)[name_at].strip()
                yield name, item, weight

    def _named(self, lines: list[str]) -> Iterator[tuple[str, Item, int]]:
        """``(key name, Item, count)`` of the accepted rows of ``lines``, already counted by :meth:`_sort`
        (for ``names``: the cache says what each line is; rejected and blank lines are left out)."""
        cache, keyfunc = self.cache, self.keyfunc
        name_at = None if self.acct.format == "metadump" else self.key_name_at
        for line in lines:
            what = cache[line if keyfunc is None else keyfunc(line)]
            if type(what) is str:
                what = cache[what]
            if type(what) is tuple:
                item, weight = what
            elif type(what) is Item:
                item, weight = what, 1
            else:
                continue
            if name_at is None:
                name = metadump_key_bytes(line).decode("utf-8", errors="replace")
            else:
                name = self._cells(line)[name_at].strip()
            yield name, item, weight

    def _in_order(self, lines: list[str]) -> list[Item]:
        """The Items of ``lines`` that were accepted, in their order (for ``arrivals``)."""
        cache = self.cache
        found = []
        for key in (lines if self.keyfunc is None else map(self.keyfunc, lines)):
            what = cache[key]
            if type(what) is str:
                what = cache[what]
            if type(what) is Item:
                found.append(what)
        return found

    def _take(self, block: str) -> int | None:
        """The rows of ``block`` if the column counter took it whole; None if it is read line by line."""
        if self.columns is None:
            # numpy costs a start-up of about a megabyte of rows read line by line: an input
            # shorter than one block is read so, and a longer one is offered from its first block
            if not self.fast or len(block) < BLOCK_SIZE:
                return None
            try:
                from slabcalc.inputs.columns import ColumnCounter
            except ImportError:           # without numpy every block is read line by line
                self.fast = False
                return None
            self.columns = ColumnCounter(self.layout, self.delimiter, self.key, self.keys[-1], FLAGS_MAX)
        if "\r" in block:
            block = block.replace("\r\n", "\n")     # a lone \r is not plain: the counter refuses it
        return self.columns.take(block)

    def _sort(self, lines: list[str]) -> dict[Item, list[int]] | None:
        """Count a block line by line: accepted, rejected or not a row; the totals of counted rows."""
        acct, pending = self.acct, self.pending
        keys = lines if self.keyfunc is None else list(map(self.keyfunc, lines))
        counts = Counter(keys)
        totals: dict[Item, list[int]] | None = {} if self.weighted else None
        accepted = skipped = rejected = items = 0
        bad = []
        for key, what in zip(counts, map(self.cache.__getitem__, counts)):
            n = counts[key]
            kind = type(what)
            if kind is Item:
                pending[key] += n
            elif kind is str:
                pending[what] += n
            elif kind is tuple:
                item, weight = what
                entry = totals.setdefault(item, [0, 0])  # items, rows (a count-0 row is a row)
                entry[0] += weight * n
                entry[1] += n
                items += weight * n
            elif kind is _Bad:
                rejected += n
                bad.append(key)
                continue
            else:
                skipped += n
                continue
            accepted += n
        if bad:
            self._reject(bad, keys, lines)
        acct.rows += accepted + rejected
        acct.rejected += rejected
        acct.items += items if self.weighted else accepted
        return totals

    def _hand_out(self, last: bool = False) -> Iterator[tuple[Item, int, int]]:
        """The items counted line by line (and, at the end, by the column counter), each once;
        then forget them (and the cache, when full)."""
        keys, counts = list(self.pending), list(self.pending.values())
        self.pending.clear()
        items = list(map(self.cache.__getitem__, keys))
        if len(self.cache) > CACHE_MAX:
            self.cache.clear()
        triples = zip(items, counts, counts)          # one row per item: rows == items
        if not last or self.columns is None:
            return triples
        columns, column_counts = self.columns.arrays()
        if not len(column_counts):
            return triples
        get = columns.get
        bulk = ItemColumns(get("key"), get("value"), get("flags"), get("item_size"), column_counts)
        if self.hand_out_columns:
            return chain(triples, [bulk])
        if not items:
            return bulk.triples()
        totals: dict[Item, int] = {}                  # some blocks were read line by line: merge
        for item, n, _ in chain(bulk.triples(), triples):
            totals[item] = totals.get(item, 0) + n
        return ((item, n, n) for item, n in totals.items())

    def _reject(self, bad: list[str], keys: list[str], lines: list[str]) -> None:
        """Keep the first rejections with their line numbers; raise the first if strict."""
        first = self.acct.first_rejections
        wanted = 1 if self.strict else FIRST_REJECTIONS - len(first)
        if wanted <= 0:
            return
        if len(bad) == 1:
            positions = _positions(keys, bad[0], wanted)
        else:
            is_bad = frozenset(bad).__contains__
            positions = list(islice(compress(count(), map(is_bad, keys)), wanted))
        for at in positions:
            what = self.cache[keys[at]]
            self._rejection(self.base + at + 1, what.reason, what.value, lines[at])

    def _rejection(self, line: int, reason: str, value: str | None, text: str) -> None:
        """One rejected row: the error with ``strict``, else kept among the first few
        (``value`` None: the row itself, as a missing column is quoted)."""
        if value is None:
            value = text.rstrip("\r\n")
        if self.strict:
            raise InputError(f"{self.source}:{line}: {reason}: {value!r}")
        if len(self.acct.first_rejections) < FIRST_REJECTIONS:
            self.acct.first_rejections.append(Rejection(line, reason, text.rstrip("\r\n")[:TEXT_MAX]))

    def _not_utf8(self, exc: UnicodeDecodeError) -> InputError:
        return InputError(f"{self.source}: not UTF-8 text (line {self.base + 1} or after: {exc.reason})")


def _positions(keys: list[str], key: str, wanted: int) -> list[int]:
    """The first ``wanted`` indexes of ``key`` in ``keys`` (``list.index``: C speed)."""
    found: list[int] = []
    at = -1
    while len(found) < wanted:
        try:
            at = keys.index(key, at + 1)
        except ValueError:
            break
        found.append(at)
    return found


def first_line(stream: TextIO, source: str) -> tuple[str, int]:
    """The first non-blank line of ``stream`` (a UTF-8 BOM dropped) and its line number;
    InputError for an empty input or one that is not UTF-8."""
    number = 0
    try:
        for raw in stream:
            number += 1
            if number == 1:
                raw = raw.lstrip("\ufeff")
            if raw.strip():
                return raw, number
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (line {number + 1} or after: {exc.reason})") from None
    raise InputError(f"{source}: empty input")


def header_columns(names: list[str], aliases: dict[str, str], here: str) -> dict[str, int]:
    """``{column: position}`` of a header's cells that ``aliases`` knows (case, spaces and dashes
    ignored); two cells naming one column are an :class:`InputError` at ``here`` (file:line)."""
    columns: dict[str, int] = {}
    for i, name in enumerate(names):
        column = aliases.get(re.sub(r"[\s-]+", "_", name.strip().lower()))
        if column is None:
            continue
        if column in columns:
            raise InputError(f"{here}: two {column} columns: "
                             f"{names[columns[column]].strip()!r} and {name.strip()!r}")
        columns[column] = i
    return columns


def _split(text: str, delimiter: str) -> list[str]:
    """A row's cells: a plain split, or the csv module's reading when there are quotes."""
    if '"' not in text:
        return text.split(delimiter)
    try:
        return next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error:
        return text.split(delimiter)


def metadump_key_bytes(line: str) -> bytes:
    """The key of a metadump line as the bytes memcached holds: ``key=`` is the key URL-encoded
    (1.6.18 crawler.c:249 prints it with ``uriencode``), so ``user%FF%FE`` is 6 bytes.
    The one decoder of metadump keys: key lengths and key names both come from here."""
    from urllib.parse import unquote_to_bytes   # only key names need it: keep start-up light

    return unquote_to_bytes(line.split(None, 1)[0][4:])


def metadump_key_length(lines: Sequence[str]) -> int:
    """The most common key length, in bytes, of metadump ``lines``: metadump gives sizes, not the
    key/value split a chunked item's chunks depend on, so a sample's items are split with it."""
    return Counter(len(metadump_key_bytes(line)) for line in lines).most_common(1)[0][0]


def _metadump_key(line: str) -> str:
    """A metadump line's cache key: NUL and its ``size=`` text (the keys make every line unique)."""
    if not line.startswith("key="):
        return line
    at = line.find(" size=")
    if at < 0:
        return line
    end = line.find(" ", at + 6)
    return "\0" + (line[at + 6:end] if end >= 0 else line[at + 6:].rstrip("\r\n"))


def _cell_number(cells: list[str], at: int, name: str) -> int:
    if at >= len(cells) or not cells[at].strip():
        raise _Rejected(f"missing column {name}", None)   # the line itself: _rejection quotes it
    return _number(cells[at], name)


def _number(text: str, name: str) -> int:
    """A plain non-negative decimal integer, or the reason it is not one."""
    text = text.strip()
    if text.isdigit() and text.isascii():
        return int(text)
    if not text:
        raise _Rejected(f"missing column {name}", text)
    if text.isascii() and text[0] in "+-" and text[1:].isdigit():
        number = int(text)
        if number < 0:
            raise _Rejected(f"negative {name}", text)
        return number
    if _NUMBERISH.fullmatch(text):     # 1.5, 1e3, -2.0: a number, but not a plain integer
        raise _Rejected(f"negative {name}" if text[0] == "-" else f"{name} is not a whole number", text)
    raise _Rejected(f"{name} is not a number", text)
