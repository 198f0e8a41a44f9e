"""Reading rows a block at a time, with one accounting: the engine under :mod:`slabcalc.inputs.items`.

The input is read in blocks of about ``block_size`` characters, cut at line ends.  Where every column
is read (a reader's ``layout``: a CSV of just the key, value and flags columns, or of item sizes, or a
column of values) and the input is at least a block long, a block whose every line is plain numbers is
checked, parsed and counted in C by :class:`slabcalc.inputs.columns.ColumnCounter` (numpy), at about the
cost of splitting it with the ``csv`` module.  Other blocks go line by line: lines are counted by their
text, and each distinct line is parsed once and remembered in a :class:`LineCache`.  Memory is bounded
by a block, the distinct items and ``cache_max`` distinct lines, whatever the number of rows.  Lines
are physical lines (``\\n``, ``\\r\\n`` or ``\\r`` ends one): no quoted field may span lines.
"""

from __future__ import annotations

import io
from collections import Counter
from itertools import chain, compress, count, islice
from typing import Callable, Iterator, TextIO

from slabcalc.errors import InputError
from slabcalc.inputs.rows import FIRST_REJECTIONS, TEXT_MAX, Accounting, Rejected, Rejection
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.item import FLAGS_MAX


class Bad:
    """Why a line was rejected, and the text a strict error quotes."""

    __slots__ = ("reason", "value")

    def __init__(self, reason: str, value: str | None):
        self.reason, self.value = reason, value


class Marker:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


BLANK = Marker("blank")        # a blank line: not a row
IGNORED = Marker("ignored")    # END, STAT sizes_status enabled: not a row either


class LineCache(dict):
    """Distinct line -> what it is; a line not seen before is parsed on its own."""

    def __init__(self, parse: Callable[[str], object]):
        super().__init__()
        self.parse = parse

    def __missing__(self, key: str) -> object:
        value = self[key] = self.parse(key)
        return value


class BlockReader:
    """One input being read block by block: what was counted, and the accounting.

    A subclass reads the first line and sets ``parse`` (a line, or its cache key, to an
    :class:`Item`, an ``(Item, count)`` pair, a :class:`Marker`, or :class:`Rejected` raised), and may
    set ``keyfunc`` (line -> cache key), ``weighted`` (rows carry a count), ``layout`` (the columns of
    a plain line, in order, for the column counter), ``delimiter``, ``key`` (the key length of rows
    without one) and ``keys`` (the key lengths taken); ``_named`` when it gives key names.

    Accepted rows are counted by line text in ``pending`` and handed out as Items when ``pending`` or
    the cache grows past ``cache_max``, and at the end; rows with a count are summed per block
    instead.  The cache maps a distinct line to what it is, a :class:`Bad`, or the *canonical*
    spelling of the same item, under which it is then counted.
    """

    def __init__(self, stream: TextIO, source: str, strict: bool, progress: Callable[[int], None] | None, *,
                 block_size: int, cache_max: int, fast: bool):
        self.stream, self.source, self.strict, self.progress = stream, source, strict, progress
        self.block_size, self.cache_max, self.fast = block_size, cache_max, fast
        self.keyfunc: Callable[[str], str] | None = None
        self.weighted = False
        self.layout: tuple[str, ...] | None = None
        self.delimiter = ","
        self.key: int | None = None
        self.keys = range(0)
        self.cache = LineCache(self._parse_checked)
        self.pending: Counter[str] = Counter()
        self.columns = None               # the column counter of plain blocks, made by the first whole block
        self.hand_out_columns = False     # the column counter's rows come last as one ItemColumns
        self.arrivals: Callable[[object], None] | None = None   # accepted rows of each block, in order
        self.names: Callable[[Iterator[tuple[str, Item, int]]], None] | None = None   # and with key names
        self.base = 0                     # physical lines before the next block
        self.first = ""                   # the first non-blank line, when it is data
        self.first_is_data = False
        self.eol = "\n"
        self.acct: Accounting

    def parse(self, line: str) -> object:
        raise NotImplementedError

    def _named(self, lines: list[str]) -> Iterator[tuple[str, Item, int]]:
        raise NotImplementedError

    # -- one distinct line ----------------------------------------------------

    def _parse_checked(self, key: str) -> object:
        try:
            result = self.parse(key)
        except Rejected as why:
            return Bad(why.reason, why.value)
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

    def what(self, line: str) -> object:
        """What ``line`` is, once its block was counted (an Item, a pair, a Marker or a Bad)."""
        what = self.cache[line if self.keyfunc is None else self.keyfunc(line)]
        return self.cache[what] if type(what) is str else what

    # -- blocks -----------------------------------------------------------------

    def _blocks(self) -> Iterator[str]:
        """The rest of the input in blocks of whole lines, about ``block_size`` characters each."""
        stream = self.stream
        try:
            if self.first_is_data:
                yield self.first
            while True:
                block = stream.read(self.block_size)
                if not block:
                    return
                yield block + stream.readline()        # up to the end of the line read into
        except UnicodeDecodeError as exc:
            raise self._not_utf8(exc) from None

    def items(self) -> Iterator[tuple[Item, int, int]]:
        """``(Item, count, rows)`` of every accepted row, the accounting filled in as they are read."""
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
            if len(self.pending) > self.cache_max or len(self.cache) > self.cache_max:
                yield from self._hand_out()
        yield from self._hand_out(last=True)

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
            if not self.fast or self.layout is None or len(block) < self.block_size:
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
            elif kind is Bad:
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
        if len(self.cache) > self.cache_max:
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

    # -- rejections -------------------------------------------------------------

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
            self.rejection(self.base + at + 1, what.reason, what.value, lines[at])

    def rejection(self, line: int, reason: str, value: str | None, text: str) -> None:
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
