"""A workload's compact copy: its operations as 24-byte records in a temporary file, read back memory-mapped.

A curve (``simulate -m A,B,C``) replays one workload many times, in several processes.  Held as Python
tuples a request costs about 230 bytes, and each process held its own copy; here one streaming pass
over the reader's operations writes each as a fixed-width record (:data:`RECORD`: the time, the key's
id, the value size, the ttl, the op, the key size and the flags' id; an oracleGeneral trace's good
records go in as the numpy columns its reader read them as, no tuple made:
:class:`~slabcalc.inputs.traces.Requests`), and each replay maps the file read-only a window at a
time (:data:`WINDOW` records: mapped, turned into tuples, unmapped), so a process holds one window
whatever the workload's length.  The file's path is all a process is handed.

Keys are interned as they are read, once each: a key's id is its rank among the distinct keys, and
the key table (a file beside the records) keeps each distinct key once -- an integer key (an
oracleGeneral object id, a keyless set's serial) as 8 bytes, a string key as its UTF-8 bytes and a
newline (and, when no key is longer than :data:`UNICODE_WIDTH` characters, again as fixed-width UCS-4,
from which numpy makes a window's strings at half the cost).  Fields of one value throughout are kept
once, not read per record.  Flags are interned the same way (at most :data:`FLAGS_IDS` distinct values).  Reading
back yields exactly the tuples the reader yielded: ``(time, op, key, key_size, value_size, ttl,
flags)``, each field of the same type and value (a string key is the same text, decoded again: the
replay asks of keys only whether they are equal; an integer time stays an integer).

What does not fit -- a field outside its record's range, a value of another type, string and integer keys
in one workload, a key holding a newline, more distinct flags than the table holds -- is never cut:
:func:`compact_copy` gives the operations back as a list (the path curves took before), and says why.
The temporary directory (under ``TMPDIR``) is removed when the ``with`` block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from itertools import chain, islice, repeat
from typing import Callable, Iterable, Iterator

import numpy as np

from slabcalc.inputs.intern import IntKeys
from slabcalc.inputs.traces import Columns, Requests
from slabcalc.model.ops import FILL

RECORD = np.dtype([("time", "<f8"), ("key", "<u4"), ("value", "<u4"), ("ttl", "<i4"), ("op", "u1"),
                   ("key_size", "u1"), ("flags", "<u2")])           # 24 bytes, packed
BATCH = 1 << 13          # tuples written at a time (65 536: 24 MB more at a CSV curve's peak, docs/speed.md)
KEYS_CHUNK = 1 << 16     # string keys decoded at a time for the UCS-4 table
WINDOW = 1 << 14         # records mapped at a time when read back
FLAGS_IDS = 1 << 16      # distinct flags values the u2 id holds
KEYS_MAX = 1 << 32       # distinct keys the u4 id holds
EXACT_INT_TIME = 1 << 53     # an integer time a double holds exactly
UNICODE_WIDTH = 32           # string keys this long at most are also kept as UCS-4 (4 bytes a character)

# field -> (column of the operation tuple, lowest, highest): the integer fields stored as they are
_RANGES = {"op": (1, 0, 255), "key_size": (3, 0, 255), "value": (4, 0, (1 << 32) - 1),
           "ttl": (5, -(1 << 31), (1 << 31) - 1)}


class Unfit(Exception):
    """An operation the compact record cannot hold exactly (the reason says which field and value)."""


@dataclass(frozen=True)
class CompactOps:
    """The compact copy: iterating it reads the operations back, in order, from its files (any number of
    times, in any process: it pickles as its paths and small tables, never its data)."""

    directory: str
    count: int                   # operations
    keys: int                    # distinct keys
    key_kind: str                # "int", "str", or "" (no operation)
    int_times: bool              # every time was an int (yielded as ints again)
    flags: tuple[int, ...]       # the flags table: id -> value
    constant: tuple[tuple[str, int], ...] = ()    # fields of one value throughout (op, key_size, value, ttl)
    key_width: int = 0           # string keys also in a table of this many UCS-4 characters a key (0: not)

    @property
    def records(self) -> str:
        return os.path.join(self.directory, "records")

    @property
    def key_table(self) -> str:
        return os.path.join(self.directory, "keys")

    @property
    def key_offsets(self) -> str:
        return os.path.join(self.directory, "key_offsets")

    @property
    def key_unicode(self) -> str:
        return os.path.join(self.directory, "keys_unicode")

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple]:
        return chain.from_iterable(self._windows())

    def read(self, *, by_id: bool = False, beside: Callable[[list[tuple]], object] | None = None) -> Iterator[tuple]:
        """The operations, in order, as iterating the copy reads them; ``by_id``: each key as its id (its
        rank among the distinct keys, an int under 2**32) instead of the key itself -- the same key the
        same id, another key another, its length kept in ``key_size``: all a replay asks of a key, and
        no string made again on each pass; ``beside(window)``: called with each window of operations
        (a list) before they are yielded, so that a second consumer (a curve point's ideal LRU) takes
        them from the same read."""
        windows = self._windows(by_id)
        if beside is None:
            return chain.from_iterable(windows)

        def fed(window: list[tuple]) -> list[tuple]:
            beside(window)
            return window
        return chain.from_iterable(map(fed, map(list, windows)))

    def _windows(self, by_id: bool = False) -> Iterator[Iterator[tuple]]:
        if not self.count:
            return
        keys_of = (lambda ids: ids.tolist()) if by_id else self._key_reader()
        flags = np.array(self.flags, dtype=np.int64)
        constant = {field: repeat(value) for field, value in self.constant}     # read once, not per record
        same = constant.get
        for start in range(0, self.count, WINDOW):
            n = min(WINDOW, self.count - start)
            window = np.memmap(self.records, dtype=RECORD, mode="r", offset=start * RECORD.itemsize, shape=(n,))
            times = (window["time"].astype(np.int64) if self.int_times else window["time"]).tolist()
            keys = keys_of(window["key"])
            flag = repeat(self.flags[0]) if len(self.flags) == 1 else flags[window["flags"]].tolist()
            columns = (times, same("op") or window["op"].tolist(), keys,
                       *(same(f) or window[f].tolist() for f in ("key_size", "value", "ttl")), flag)
            del window                   # unmapped before its tuples are replayed
            yield zip(*columns)

    def _key_reader(self):
        if self.key_kind == "int":
            table = np.memmap(self.key_table, dtype="<u8", mode="r", shape=(self.keys,))
            return lambda ids: table[ids].tolist()
        if self.key_width:           # numpy makes the strings of a window itself: twice as fast as from UTF-8
            unicode = np.memmap(self.key_unicode, dtype=f"<U{self.key_width}", mode="r", shape=(self.keys,))
            return lambda ids: unicode[ids].tolist()
        offsets = np.memmap(self.key_offsets, dtype="<u8", mode="r", shape=(self.keys + 1,))
        blob = np.memmap(self.key_table, dtype=np.uint8, mode="r", shape=(int(offsets[-1]),))

        def strings(ids) -> list[str]:
            ids = ids.astype(np.int64)
            starts = offsets[ids].astype(np.int64)
            lengths = offsets[ids + 1].astype(np.int64) - starts      # each key's bytes and its newline
            ends = np.cumsum(lengths)
            at = np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]), dtype=np.int64)
            return blob[at].tobytes().decode("utf-8", "surrogatepass").split("\n")[:-1]
        return strings


@contextlib.contextmanager
def compact_copy(ops: Iterable[tuple], directory: str | None = None) -> Iterator[tuple[CompactOps | list, str | None]]:
    """``ops`` read once into a compact copy in a temporary directory (under ``directory``, by default
    ``TMPDIR``'s), removed when the block ends: ``(copy, None)``; or, when an operation does not fit
    the record, ``(list of every operation, why)`` -- the same operations, in order, held in memory."""
    where = tempfile.mkdtemp(prefix="slabcalc-compact-", dir=directory)
    try:
        try:
            yield write_compact(ops, where), None
        except _Fallback as fallback:
            yield fallback.ops, fallback.reason
    finally:
        shutil.rmtree(where, ignore_errors=True)


class _Fallback(Exception):
    def __init__(self, ops: list, reason: str):
        super().__init__(reason)
        self.ops, self.reason = ops, reason


def write_compact(ops: Iterable[tuple], directory: str) -> CompactOps:
    """One pass over ``ops`` writing the compact copy's files into ``directory``; an operation that does
    not fit raises :class:`_Fallback` holding every operation (those written read back, the rest as
    given) and the reason."""
    batches = _batches(ops)
    writer = _Writer(directory)
    with open(writer.records, "wb") as records, open(writer.key_table, "wb") as keys:
        offsets = open(writer.key_offsets, "wb")
        try:
            for batch in batches:
                try:
                    writer.add(batch, records, keys, offsets)
                except Unfit as exc:
                    records.flush(), keys.flush(), offsets.flush()
                    written = list(writer.copy()) if writer.count else []
                    rest = chain.from_iterable(map(_rows, batches))
                    raise _Fallback(written + list(_rows(batch)) + list(rest), str(exc)) from None
        finally:
            offsets.close()
    copy = writer.copy()
    writer.table.clear()          # the keys are in the key table now: not held beside its UCS-4 copy
    return replace(copy, key_width=_unicode_table(copy)) if copy.key_kind == "str" else copy


def _batches(ops: Iterable[tuple]) -> Iterator[list[tuple] | Columns]:
    """``ops`` a batch at a time: a trace's batches as its reader read them (good records as numpy
    :class:`~slabcalc.inputs.traces.Columns`, never made into tuples), else lists of :data:`BATCH`."""
    if isinstance(ops, Requests):
        yield from (batch if isinstance(batch, Columns) else list(batch) for batch in ops.batches())
        return
    it = iter(ops)
    while batch := list(islice(it, BATCH)):
        yield batch


def _rows(batch: list[tuple] | Columns) -> Iterable[tuple]:
    return batch.rows() if isinstance(batch, Columns) else batch


def _unicode_table(copy: CompactOps) -> int:
    """The string keys again, as fixed-width UCS-4 (numpy's ``U``), when each is at most
    :data:`UNICODE_WIDTH` characters and none ends with a NUL (numpy drops trailing NULs): the width,
    or 0 (the keys are read from UTF-8); read :data:`KEYS_CHUNK` keys at a time, twice."""
    width = 0
    for keys in _key_chunks(copy):
        width = max(width, max(map(len, keys)))
        if width > UNICODE_WIDTH or any(key.endswith("\0") for key in keys):
            return 0
    if width:
        with open(copy.key_unicode, "wb") as out:
            for keys in _key_chunks(copy):
                np.array(keys, dtype=f"<U{width}").tofile(out)
    return width


def _key_chunks(copy: CompactOps) -> Iterator[list[str]]:
    """The key table's keys, in id order, :data:`KEYS_CHUNK` at a time."""
    offsets = np.fromfile(copy.key_offsets, dtype="<u8")
    with open(copy.key_table, "rb") as table:
        for start in range(0, copy.keys, KEYS_CHUNK):
            text = table.read(int(offsets[min(start + KEYS_CHUNK, copy.keys)]) - int(offsets[start]))
            yield text.decode("utf-8", "surrogatepass").split("\n")[:-1]


class _Writer:
    def __init__(self, directory: str):
        self.directory = directory
        self.records = os.path.join(directory, "records")
        self.key_table = os.path.join(directory, "keys")
        self.key_offsets = os.path.join(directory, "key_offsets")
        self.count, self.kind, self.int_times, self.at = 0, "", None, 0
        self.table: dict = {}                           # string keys -> id
        self.ints = IntKeys()                          # integer keys -> id
        self.flag_ids: dict[int, int] = {}
        self.span: dict[str, tuple[int, int]] = {}     # field -> its lowest and highest value so far

    def copy(self) -> CompactOps:
        flags = tuple(self.flag_ids) or (0,)
        constant = tuple((field, low) for field, (low, high) in self.span.items() if low == high)
        return CompactOps(self.directory, self.count, self._distinct(), self.kind, bool(self.int_times), flags,
                          constant)

    def add(self, batch: list[tuple] | Columns, records, keys, offsets) -> None:
        if isinstance(batch, Columns):
            return self._add_columns(batch, records, keys, offsets)
        if set(map(len, batch)) != {7}:
            raise Unfit("an operation is not (time, op, key, key_size, value_size, ttl, flags)")
        columns = list(zip(*batch))
        out = np.zeros(len(batch), dtype=RECORD)
        out["time"] = self._times(columns[0])
        for field, (i, low, high) in _RANGES.items():
            out[field] = self._spanned(field, _whole(columns[i], low, high, field))
        out["key"] = self._keys(columns[2], keys, offsets)
        out["flags"] = self._flags(columns[6])
        out.tofile(records)
        self.count += len(batch)

    def _add_columns(self, batch: Columns, records, keys, offsets) -> None:
        """A trace's batch of good records, from its numpy columns: the records :meth:`add` writes from
        their tuples (:meth:`Columns.rows`), the same checks made on whole columns."""
        out = np.zeros(len(batch.times), dtype=RECORD)
        self._time_kind({float})
        out["time"] = batch.times
        for field, values in (("op", FILL), ("key_size", batch.key), ("value", batch.values), ("ttl", 0)):
            _, low, high = _RANGES[field]
            lowest, highest = (int(values.min()), int(values.max())) if isinstance(values, np.ndarray) else (values,) * 2
            if lowest < low or highest > high:
                raise Unfit(f"{field} {lowest if lowest < low else highest} is outside {low}..{high}")
            out[field] = self._spanned(field, values)
        out["key"] = self._int_keys(batch.objs, keys)
        out["flags"] = self._flags((0,))[0]
        out.tofile(records)
        self.count += len(batch.times)

    def _spanned(self, field: str, values):
        """``values`` (an array or one value) of ``field``, its lowest and highest so far widened by them."""
        low, high = (int(values.min()), int(values.max())) if isinstance(values, np.ndarray) else (values, values)
        before = self.span.get(field, (low, high))
        self.span[field] = (min(before[0], low), max(before[1], high))
        return values

    def _time_kind(self, kinds: set) -> bool:
        """Whether the times of ``kinds`` are ints; :class:`Unfit` for a mix, or another kind than before."""
        int_times = kinds == {int}
        if not (int_times or kinds == {float}) or self.int_times not in (None, int_times):
            before = set() if self.int_times is None else {int if self.int_times else float}
            raise Unfit(f"times of {_names(kinds | before)} (a compact copy holds all floats or all ints)")
        self.int_times = int_times
        return int_times

    def _times(self, times: tuple) -> np.ndarray:
        int_times = self._time_kind(set(map(type, times)))
        if int_times:
            values = _whole(times, -EXACT_INT_TIME, EXACT_INT_TIME, "time")
            return values.astype(np.float64)
        return np.array(times, dtype=np.float64)

    def _keys(self, column: tuple, keys, offsets) -> np.ndarray:
        kinds = set(map(type, column))
        kind = "int" if kinds == {int} else "str" if kinds == {str} else None
        if kind is None or self.kind not in ("", kind):
            raise Unfit(f"keys of {_names(kinds | ({self.kind} if self.kind else set()))} (a compact copy holds "
                        "all strings or all integers)")
        if kind == "int":
            return self._int_keys(_whole(column, 0, (1 << 64) - 1, "key", np.uint64), keys)
        if not self.kind:
            offsets.write(np.zeros(1, dtype="<u8").tobytes())
        self.kind = kind
        before = len(self.table)
        ids = self._interned(column)
        fresh = np.flatnonzero(ids >= before)
        if len(fresh):
            _, first = np.unique(ids[fresh], return_index=True)       # each new key's first place, in id order
            new = [column[i] for i in fresh[first].tolist()]
            if any("\n" in key for key in new):      # a key is checked once, as it is met
                self._forget(before)
                raise Unfit("a key holds a newline (the key table ends each key with one)")
            text = [key.encode("utf-8", "surrogatepass") + b"\n" for key in new]
            ends = self.at + np.cumsum([len(t) for t in text], dtype=np.uint64)
            keys.write(b"".join(text))
            offsets.write(ends.astype("<u8").tobytes())
            self.at = int(ends[-1])
        return ids.astype(np.uint32)

    def _int_keys(self, objs: np.ndarray, keys) -> np.ndarray:
        """The ids of a column of integer keys (uint64), each new key the next id in the order of its
        first place (ranks of first appearance, as from tuples); the new keys written to the key table."""
        if self.kind not in ("", "int"):
            raise Unfit(f"keys of {_names({int, self.kind})} (a compact copy holds all strings or all integers)")
        self.kind = "int"
        before = self.ints.count
        ids, new = self.ints.intern(objs)
        if self.ints.count > KEYS_MAX:
            self.ints.forget(before)
            raise Unfit(f"more than {KEYS_MAX} distinct keys")
        keys.write(new.astype("<u8").tobytes())
        return ids.astype(np.uint32)

    def _distinct(self) -> int:
        return self.ints.count if self.kind == "int" else len(self.table)

    def _interned(self, column) -> np.ndarray:
        """Each key's id, a new key the next one; :class:`Unfit` (the table as it was) past :data:`KEYS_MAX`."""
        table = self.table
        before = len(table)
        ids = np.fromiter(map(table.setdefault, column, map(len, repeat(table))), dtype=np.int64, count=len(column))
        if len(table) > KEYS_MAX:
            self._forget(before)
            raise Unfit(f"more than {KEYS_MAX} distinct keys")
        return ids

    def _forget(self, before: int) -> None:
        """The keys interned after the first ``before`` taken out again: an operation that did not fit left
        no key the key table does not hold (the operations written are read back from it)."""
        for key in list(islice(self.table, before, None)):
            del self.table[key]

    def _flags(self, column: tuple) -> np.ndarray:
        _whole(column, -(1 << 63), (1 << 63) - 1, "flags")
        table = self.flag_ids
        ids = np.fromiter(map(table.setdefault, column, map(len, repeat(table))), dtype=np.int64, count=len(column))
        if len(table) > FLAGS_IDS:
            raise Unfit(f"more than {FLAGS_IDS} distinct flags values")
        return ids.astype(np.uint16)


def _whole(column: tuple, low: int, high: int, field: str, dtype=np.int64) -> np.ndarray:
    """``column`` as integers, each an ``int`` from ``low`` to ``high``; else :class:`Unfit` naming the field."""
    kinds = set(map(type, column))
    if kinds != {int}:
        raise Unfit(f"{field} of {_names(kinds - {int})}, not int")
    try:
        values = np.fromiter(column, dtype=dtype, count=len(column))
    except OverflowError:
        values = None
    if values is None or int(values.min()) < low or int(values.max()) > high:
        wrong = next(v for v in column if not low <= v <= high)
        raise Unfit(f"{field} {wrong} is outside {low}..{high}")
    return values


def _names(kinds: set) -> str:
    return " and ".join(sorted(k if isinstance(k, str) else k.__name__ for k in kinds))


__all__ = ["RECORD", "CompactOps", "Unfit", "compact_copy", "write_compact"]
