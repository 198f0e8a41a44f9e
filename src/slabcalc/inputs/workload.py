"""Workloads read from files: the operations ``slabcalc simulate`` replays, in time order.

Two forms, told apart by the first non-blank line:

``csv``
    A header naming columns (any case; others not read, and named in
    :attr:`Accounting.unused`; a misspelt one is an error): ``time`` (seconds,
    not decreasing; ``timestamp``, ``ts``), ``op`` (``set`` when absent or
    empty, ``get``/``gets``, ``delete``, ``touch``; ``operation``, ``cmd``),
    ``key`` (a string; when absent every set is a new distinct key),
    ``key_size`` (the key's length when ``key`` is absent, or overriding its
    length: ``key_len``, ``klen``), ``value_size`` (``value``, ``vlen``,
    ``size``), ``ttl`` (the exptime a client sends: seconds, 0 = never, over 30 days a unix time, as
    memcached reads it: :func:`read_workload`; ``exptime``) and ``flags``.
    Comma-separated, or tab- or semicolon-separated when the header has no
    comma.  Without a time column every operation happens at time 0.
``twitter``
    The public twitter/cache-trace format, no header:
    ``timestamp,key,key_size,value_size,client_id,operation,ttl``.

Row accounting is that of :mod:`slabcalc.inputs.items`: every data row is
accepted or rejected (counted, the first few kept with their line numbers),
blank lines and the header are not rows, and ``strict=True`` makes the first
rejection an :class:`~slabcalc.inputs.items.InputError` naming the file and line.
Operations the engine does not replay (``add``, ``incr``, ``append``, ...)
are rejected rows, never guessed at.

This module is long because its compiled reader (mypyc: setup.py) reads the text itself, a block of
lines and a cell's digits at a time, where the stream and int()/float() would cost twice as much,
beside the careful reading of a row that names its fault: the two read in one place, alike.
"""

from __future__ import annotations

import io
import re
from typing import Callable, Final, Iterator, TextIO

from slabcalc._native import i64
from slabcalc.inputs.aliases import WORKLOAD_COLUMNS, by_alias
from slabcalc.inputs.key_sample import TEXT_KEYS, Known, kept_rows
from slabcalc.errors import InputError
from slabcalc.inputs.rows import (
    FIRST_REJECTIONS,
    TEXT_MAX,
    Accounting,
    Rejection,
    first_line,
    header_columns,
    key_max_of,
    unused_columns,
)
from slabcalc.inputs.rows import split_cells as _split
from slabcalc.model.exptime import REALTIME_MAXDELTA, UnknownClock, replay_ttl, unix_time_of
from slabcalc.model.item import FLAGS_MAX, VALUE_MAX
from slabcalc.model.ops import DELETE, GET, SET, TIME_MAX, TOUCH
from slabcalc.model.sampling import HASH_SPACE, text_hash, threshold

# The most operations one row (MetaKV's op_count) stands for.  Each is replayed: the same request
# twice at one second is not the same state as once (counters, LRU bumps, the maintainer's wake-ups),
# so they are not folded into one; 10**12 on a row replayed for days before.
OP_COUNT_MAX: Final = 1 << 20

FORMATS = ("csv", "twitter")

OPS = {"set": SET, "get": GET, "gets": GET, "delete": DELETE, "touch": TOUCH}

_ALIASES = WORKLOAD_COLUMNS
_COLUMN = by_alias(WORKLOAD_COLUMNS)
_TWITTER = ("time", "key", "key_size", "value_size", None, "op", "ttl")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


class _Bad(Exception):
    def __init__(self, reason: str, value: str):
        super().__init__(reason)
        self.reason, self.value = reason, value


def read_workload(stream: TextIO, source: str, *, key_length: int | None = None, strict: bool = False,
                  progress: Callable[[int], None] | None = None, form: str | None = None,
                  key_max: int | None = None, time_zero: int | None = None,
                  sample: float | None = None) -> tuple[Iterator[tuple], Accounting]:
    """The operations of ``stream`` as ``(time, op, key, key_size, value_size, ttl, flags)``.

    The form is read from the first non-blank line at once (an unusable
    header raises :class:`InputError` here); rows are read as the iterator is
    consumed, and the :class:`Accounting` is final when it is exhausted.
    ``key_length`` is the key size of sets when the input has neither a key
    nor a key_size column; ``key_max`` the longest key (the profile's: :func:`key_max_of`);
    ``progress(rows)`` is called every 65 536 rows; ``form`` (``csv`` or
    ``twitter``) overrides telling the form from the first line.

    A ``ttl`` is the exptime a client sends, read as memcached reads it (:mod:`slabcalc.model.exptime`):
    over 30 days it is a unix time, replayed as the seconds left until it at the row's unix time --
    ``time_zero + time``, or the time itself when it is a unix time (10^9 or more) and ``time_zero`` is
    None; with neither, such a row is an :class:`InputError` naming the file, the line and the value.  A
    negative ttl, and a unix time already past, is an item stored already expired.

    ``sample`` (a rate below 1) and a key column: only the rows of the keys a sample of that rate
    keeps (:func:`slabcalc.model.sampling.text_hash` of the key cell's text), told from the key's
    cell before the rest of the row is read; the others are counted in the accounting's
    ``left_out``, not checked (the accounting's ``sample`` says so).  Without a key column the
    rows are all read (their keys are the sets' serials: the replay samples them).
    """
    reader = _WorkloadReader(stream, source, key_length, strict, progress, form, key_max, time_zero)
    if sample is not None and threshold(sample) < HASH_SPACE and "key" in reader.at:
        reader.limit, reader.acct.sample = threshold(sample), sample
    return reader.ops(), reader.acct


class _WorkloadReader:
    at: dict[str, int]          # column -> its position in a row
    delimiter: str
    key_length: int             # the key size of sets without a key or key_size column (0: not needed)
    key_max: int
    line: int                   # the number of the first non-blank line
    first: str | None           # that line when it is a row (twitter), None when it is the header
    unused: tuple[str, ...]     # the header's columns not read
    limit: int                  # a sample's threshold (model/sampling.py): rows of keys hashing at or above it are left out; -1: all
    log_cells: tuple[str, str]  # a drawn sample's log_ops and log_gets cells as its first row has them ("\n": none
    #                             read yet, a text no cell holds: a row's cells hold no line end)
    log_line: int               # that row's line

    def __init__(self, stream, source, key_length, strict, progress, form=None, key_max=None, time_zero=None):
        self.key_max = key_max_of(key_max)
        self.time_zero = time_zero
        self.limit = -1
        self.log_cells, self.log_line = ("\n", "\n"), 0
        self.stream, self.source, self.strict, self.progress = stream, source, strict, progress
        self.rereadable = _at_start(stream)             # before first_line reads it
        first, self.line = first_line(stream, source)
        text = first.strip()
        cells = [c.strip() for c in text.split(",")]
        twitter = len(cells) == 7 and _NUMBER.fullmatch(cells[0]) and cells[5].lower() in _TWITTER_OPS
        if form is not None and (form == "twitter") != bool(twitter):
            raise InputError(f"{source}:{self.line}: --input-format {form}, but the first line "
                             f"{text[:60]!r} is {'a twitter/cache-trace row' if twitter else 'not one'}")
        if twitter:
            fmt, self.delimiter, columns = "twitter", ",", {n: i for i, n in enumerate(_TWITTER) if n}
            self.first = first
            self.unused = ()
        else:
            fmt, columns = "csv", self._read_header(text)
            self.first = None
        self.at = columns
        self.key_length = key_length or 0
        if "key" not in columns and "key_size" not in columns:
            if key_length is None:
                raise InputError(f"{source}: no key or key_size column; give --key N")
            if not 1 <= key_length <= self.key_max:
                raise InputError(f"{source}: key length must be 1..{self.key_max}, not {key_length}")
        if "value_size" not in columns:
            raise InputError(f"{source}:{self.line}: no value_size column in the header {text!r} (one of "
                             f"{', '.join(_ALIASES['value_size'])})")
        if fmt == "csv" and "count" in columns and "key_size" in columns:
            fmt = "csv (MetaKV)"
        self.acct = Accounting(source, fmt, keys_named="key" in columns, unused=self.unused)

    def _read_header(self, text: str) -> dict[str, int]:
        self.delimiter = next((d for d in ",\t;" if d in text), ",")
        names = _split(text, self.delimiter)
        if all(_NUMBER.fullmatch(n.strip()) for n in names):
            raise InputError(f"{self.source}:{self.line}: no header: the first line must name the columns "
                             f"(time,op,key,value_size,ttl,...), not {text!r}")
        columns = header_columns(names, _COLUMN, f"{self.source}:{self.line}")
        if not columns:
            raise InputError(f"{self.source}:{self.line}: no header: the first line must name the columns "
                             f"(time,op,key,value_size,ttl,...), not {text!r}")
        self.unused = unused_columns(names, set(columns.values()))
        if ("log_ops" in columns) != ("log_gets" in columns):
            raise InputError(f"{self.source}:{self.line}: log_ops and log_gets come together (a sample's log's "
                             f"operations and gets: sql --workload --sample writes both), not one: {text!r}")
        return columns

    def ops(self) -> Iterator[tuple]:
        i_time, i_op, i_key, i_ksize, i_vsize, i_ttl, i_flags, i_count = self._indexes()
        i_log, i_log_gets = self.at.get("log_ops", -1), self.at.get("log_gets", -1)     # both or neither
        delimiter, ops, key_max, key_length = self.delimiter, OPS, self.key_max, self.key_length
        progress, native = self.progress, NATIVE      # native: _whole where compiled, int() where not
        # locals, not lookups per row; a ttl above maxdelta (or below 0) is read by _row, as memcached reads it
        set_op, get_op, value_max, flags_max, maxdelta = SET, GET, VALUE_MAX, FLAGS_MAX, REALTIME_MAXDELTA
        width, last, serial, rows, accepted = max(self.at.values()) + 1, 0.0, 0, 0, 0
        line = self.line - (1 if self.first is not None else 0)
        t_text, t_read = "0", 0.0       # the last time cell read and its value: rows at one instant share it
        key: str | int
        try:
            for lines, quoted, all_ascii, before in self._blocks() if self.limit < 0 else self._sampled(line):
                line = before if before >= 0 else line      # a sample's rows: the number of the line before
                for raw in lines:
                    line += 1
                    cells = _split(raw, delimiter) if quoted and '"' in raw else raw.split(delimiter)
                    if len(cells) < width:
                        if raw.strip():
                            rows += 1
                            self._reject(line, raw, "missing columns", raw.strip())
                        continue
                    rows += 1
                    # The fast path: a well-formed row read once.  At any doubt (a cell int() or float() refuses, an op
                    # not known at once, a value out of range, log counts not the first row's) _row reads it again.
                    careful = i_log >= 0 and (cells[i_log] != self.log_cells[0]
                                              or cells[i_log_gets] != self.log_cells[1])
                    try:
                        if i_time < 0:
                            t = last
                        elif cells[i_time] == t_text:
                            t = t_read
                        else:
                            t = t_read = _seconds(cells[i_time]) if native else float(cells[i_time])
                            t_text = cells[i_time]     # only once read: a refused cell is no instant
                        if i_op < 0:
                            op = set_op
                        else:
                            name = cells[i_op]         # set and get as they are, the rest as _row reads them
                            op = (set_op if name == "set" else get_op if name == "get"
                                  else ops.get(name.strip().lower() or "set", -1))
                        if i_key >= 0:         # a key's length is its bytes' (ASCII: its length)
                            text = cells[i_key]
                            size = (int(cells[i_ksize]) if i_ksize >= 0 else len(text) if all_ascii or text.isascii()
                                    else len(text.encode()))
                            key, careful = text, careful or not text
                        elif op == set_op:
                            key, size = serial + 1, key_length if i_ksize < 0 else int(cells[i_ksize])
                        else:
                            key, size, careful = 0, 0, True
                        value = 0 if op != set_op else _whole(cells[i_vsize]) if native else int(cells[i_vsize])
                        ttl = (0 if i_ttl < 0 or not cells[i_ttl] else _whole(cells[i_ttl]) if native
                               else int(cells[i_ttl]))
                        flags = (0 if i_flags < 0 or not cells[i_flags] else _whole(cells[i_flags]) if native
                                 else int(cells[i_flags]))
                        repeat = int(cells[i_count]) if i_count >= 0 else 1
                        careful = careful or op < 0 or not (
                            last <= t < TIME_MAX and 0 < size <= key_max and 0 <= ttl <= maxdelta
                            and 0 <= value <= value_max and 0 <= flags <= flags_max and 1 <= repeat <= OP_COUNT_MAX)
                    except ValueError:
                        careful = True
                    if careful:
                        serial, row = self._row(line, raw, cells, last, serial)
                        if row is None:
                            continue
                        t, op, key, size, value, ttl, flags, repeat = row
                    elif i_key < 0:
                        serial += 1
                    last = t
                    accepted += repeat
                    if progress is not None and not accepted & 0xFFFF:
                        progress(rows)
                    for _ in range(repeat):          # MetaKV: a row of op_count operations
                        yield t, op, key, size, value, ttl, flags
        except UnicodeDecodeError as exc:
            raise self._not_utf8(line, exc.reason) from None
        finally:
            self.acct.rows += rows
            self.acct.items += accepted

    def _sampled(self, line: int) -> Iterator[tuple[list[str], bool, bool, int]]:
        """The lines of the rows of the keys a sample keeps (their key cell's MD5 under ``self.limit``:
        model/sampling.py), each block with the number of the line before its first (``line``: before the
        first of all); the rows left out are counted as rows and as ``left_out``.  A block without quotes
        or carriage returns is told at once by :func:`~slabcalc.inputs.key_sample.kept_rows`; any other
        is split into cells a line at a time."""
        limit, i_key, delimiter, left_out, gets = self.limit, self.at["key"], self.delimiter, 0, 0
        i_op = self.at.get("op", -1)
        width = max(i_key, i_op) + 1
        known: dict[str, bool] = {}     # a key's membership, met before (MD5 costs more than the lookup)
        fingerprints: Known | None = None      # kept_rows' memory of the keys
        try:
            for text, universal, whole in self._texts(SAMPLED_BLOCK):
                if not whole and '"' not in text and "\r" not in text:
                    found = kept_rows(text if text.endswith("\n") else text + "\n", delimiter, i_key, limit,
                                      fingerprints, i_op)
                    if found is not None:
                        rows, kept_lines, dropped, fingerprints, dropped_gets = found
                        gets += dropped_gets
                        for row, raw in zip(rows, kept_lines):
                            yield [raw], False, raw.isascii(), line + row
                        line += len(rows) + dropped          # every line of the block kept or left out
                        left_out += dropped
                        continue
                for lines, quoted, all_ascii, _ in self._split(text, universal, whole):
                    kept: list[str] = []
                    for raw in lines:
                        cells = _split(raw, delimiter) if quoted and '"' in raw else raw.split(delimiter, width)
                        out = False
                        if len(cells) > i_key and cells[i_key] and raw.strip():
                            key = cells[i_key]
                            member = known.get(key)
                            if member is None:
                                if len(known) >= TEXT_KEYS:
                                    known.clear()
                                member = known[key] = text_hash(key) >= limit
                            out = member
                        if out:
                            kept.append("")
                            left_out += 1
                            gets += i_op >= 0 and len(cells) > i_op and cells[i_op].strip().lower() in ("get", "gets")
                        else:
                            kept.append(raw)
                    yield kept, quoted, all_ascii, line
                    line += len(lines)
        finally:
            self.acct.rows += left_out
            self.acct.left_out += left_out
            self.acct.left_out_gets += gets

    def _blocks(self) -> Iterator[tuple[list[str], bool, bool, int]]:
        """The rows' lines after the header (from the twitter form's first), without their ends, a block at
        a time (:meth:`_texts`), each with whether it has a quote, whether it is all ASCII (keys' lengths are
        their own) and -1 (the lines follow the last: :meth:`_sampled` gives a line's number instead)."""
        for text, universal, whole in self._texts():
            yield from self._split(text, universal, whole)

    @staticmethod
    def _split(text: str, universal: bool, whole: bool) -> Iterator[tuple[list[str], bool, bool, int]]:
        """One text of :meth:`_texts` as :meth:`_blocks` gives it."""
        if whole:               # one line of an iterable of lines
            yield [text.rstrip("\r\n")], '"' in text, text.isascii(), -1
            return
        pieces = text.split("\n")
        last = pieces.pop()          # "" after a \n; the lines a lone \r ended after it
        lines = _ends(pieces, universal) if "\r" in text else pieces
        yield (lines + _ends([last], universal) if last else lines), '"' in text, text.isascii(), -1

    def _texts(self, size: int = 0) -> Iterator[tuple[str, bool, bool]]:
        """The text after the header, whole lines at a time: a stream with ``read`` is read ``BLOCK``
        characters at a time and cut after its last line end (a third of the cost of its own line by line
        reading; ``size`` of them, or ``BLOCK``), the text after it carried over; the lines are the stream's own (``_ends``).  Any other
        iterable of lines is taken a line at a time.  With each text, whether a lone carriage return ends
        a line in it (``universal``) and whether it is one line of an iterable (or the twitter form's first)."""
        first = self.first
        if first is not None:
            yield first, False, True
        stream = self.stream
        read = getattr(stream, "read", None)
        if read is None:
            for raw in stream:
                yield raw, False, True
            return
        pending: list[str] = []        # the text read after the last line end, in pieces: never copied twice
        universal, told = False, False
        while True:
            block = read(size or BLOCK)
            if not block:
                break
            if not told and "\r" in block:
                universal, told = getattr(stream, "newlines", None) is not None, True
            end = block.rfind("\n")
            if universal:                # a lone \r ends a line too, but not one last: it may begin a \r\n
                end = max(end, block.rfind("\r", 0, len(block) - 1))
            if end < 0:
                pending.append(block)
                continue
            text = "".join(pending) + block[:end + 1] if pending else block[:end + 1]
            pending = [block[end + 1:]] if end + 1 < len(block) else []
            yield text, universal, False
        if pending:
            yield "".join(pending), universal, False

    def _not_utf8(self, line: int, reason: str) -> InputError:
        """The error of text that is not UTF-8, met by reading the block after ``line``: it names the line
        after those the stream's own line by line reading gives before the fault (blocks meet it up to a
        block sooner or later than its 8 KiB chunks do), counted by reading a file again from its start."""
        stream = self.stream
        if self.rereadable:
            again = io.TextIOWrapper(stream.buffer, encoding=stream.encoding, errors=stream.errors,
                                     newline="" if getattr(stream, "newlines", None) is not None else "\n")
            count = 0
            try:
                stream.buffer.seek(0)
                for _ in again:
                    count += 1
            except UnicodeDecodeError:
                line = count
            except (OSError, ValueError):
                pass
            finally:
                again.detach()                          # the file stays the caller's to close
        return InputError(f"{self.source}: not UTF-8 text (line {line + 1} or after: {reason})")

    def _indexes(self) -> tuple[int, int, int, int, int, int, int, int]:
        """Where a row's time, op, key, key_size, value_size, ttl, flags and count are: -1 when absent."""
        at = self.at
        return (at.get("time", -1), at.get("op", -1), at.get("key", -1), at.get("key_size", -1), at["value_size"],
                at.get("ttl", -1), at.get("flags", -1), at.get("count", -1))

    def _row(self, line: int, raw: str, cells: list[str], last: float,
             serial: int) -> tuple[int, tuple[float, int, str | int, int, int, int, int, int] | None]:
        """A row the fast path in :meth:`ops` did not take, read the careful way: the keyless sets'
        serial after it, and its ``(time, op, key, size, value, ttl, flags, repeat)``, or None
        when it is rejected (counted; with ``strict`` an InputError naming file, line and value)."""
        i_time, i_op, i_key, i_ksize, i_vsize, i_ttl, i_flags, i_count = self._indexes()
        if "log_ops" in self.at:
            self._logged(line, cells)
        op = SET
        key: str | int
        try:
            t = last if i_time < 0 else float(cells[i_time])
            named = SET if i_op < 0 else OPS.get(cells[i_op].strip().lower() or "set")
            if named is None:
                raise _Bad("unsupported op", cells[i_op].strip())
            op = named
            if i_key >= 0:
                key = text = cells[i_key]
                size = int(cells[i_ksize]) if i_ksize >= 0 else len(text.encode())
                if not key:
                    raise _Bad("missing column key", "")
            elif op == SET:
                serial += 1
                key = serial
                size = self.key_length if i_ksize < 0 else int(cells[i_ksize])
            else:
                raise _Bad("a get, delete or touch needs a key column", cells[i_op].strip())
            value = int(cells[i_vsize]) if op == SET else 0
            ttl = int(cells[i_ttl]) if i_ttl >= 0 and cells[i_ttl].strip() else 0
            flags = int(cells[i_flags]) if i_flags >= 0 and cells[i_flags].strip() else 0
            if not (last <= t < TIME_MAX and 0 < size <= self.key_max and 0 <= value <= VALUE_MAX
                    and 0 <= flags <= FLAGS_MAX):
                raise _Bad(*self._why(t, last, size, value, flags))
            repeat = int(cells[i_count]) if i_count >= 0 else 1
            if repeat < 1:
                raise _Bad("op_count must be 1 or more", cells[i_count].strip())
        except _Bad as bad:
            reason, text = bad.reason, bad.value
        except ValueError:
            reason, text = self._which(cells, op)
        else:
            if repeat > OP_COUNT_MAX:       # a data error, not a row to skip: its operations would be the replay
                raise InputError(f"{self.source}:{line}: op_count must be 1 to {OP_COUNT_MAX} (a row's operations "
                                 f"are replayed one by one): {cells[i_count].strip()!r}")
            if not 0 <= ttl <= REALTIME_MAXDELTA:      # an InputError, not a rejected row (outside the try)
                ttl = self._exptime(line, ttl, t) if op in (SET, TOUCH) else 0
            return serial, (t, op, key, size, value, ttl, flags, repeat)
        self._reject(line, raw, reason, text)
        return serial, None

    def _logged(self, line: int, cells: list[str]) -> None:
        """A drawn sample's statement of its whole log (``sql --workload --sample`` writes its operations and
        gets as ``log_ops`` and ``log_gets`` on every row): read from the first row into the accounting, and
        the same on every other, or an InputError naming the line and the values (a file of two exports, or
        edited, states no one log: its correction would be wrong)."""
        cells_now = cells[self.at["log_ops"]], cells[self.at["log_gets"]]
        texts = f"log_ops {cells_now[0].strip()!r}, log_gets {cells_now[1].strip()!r}"
        try:
            ops, gets = int(cells_now[0]), int(cells_now[1])
        except ValueError:
            raise InputError(f"{self.source}:{line}: {texts}: the log's operations and gets are whole "
                             f"numbers") from None
        acct = self.acct
        if acct.log_ops is None:
            if not 0 <= gets <= ops:
                raise InputError(f"{self.source}:{line}: {texts}: the log's gets are 0 to its operations")
            self.log_cells, self.log_line, acct.log_ops, acct.log_gets = cells_now, line, ops, gets
        elif (ops, gets) != (acct.log_ops, acct.log_gets):
            raise InputError(f"{self.source}:{line}: {texts}, not line {self.log_line}'s {acct.log_ops}, "
                             f"{acct.log_gets}: one sample states one log's counts on every row")

    def _exptime(self, line: int, exptime: int, t: float) -> int:
        """The replay's TTL of a set's or touch's ``exptime`` over 30 days or negative: memcached reads it
        as a unix time (:func:`~slabcalc.model.exptime.replay_ttl`); InputError when the row's unix time
        is not known."""
        try:
            return replay_ttl(exptime, unix_time_of(t, self.time_zero))
        except UnknownClock:
            raise InputError(f"{self.source}:{line}: ttl {exptime} is over 30 days: memcached reads it as a "
                             f"unix time (memcached.c realtime()); give --time-zero UNIX, the unix time of the "
                             f"workload's time 0") from None

    def _why(self, t, last, size, value, flags) -> tuple[str, str]:
        if not 0 <= t < TIME_MAX:
            return f"time must be a number of seconds, 0 to {TIME_MAX} (66 years: the replay's clock)", str(t)
        if t < last:
            return f"time goes backwards (after {last:g})", f"{t:g}"
        if not 0 < size <= self.key_max:
            return f"key length must be 1..{self.key_max}", str(size)
        if not 0 <= value <= VALUE_MAX:
            return f"value_size must be 0..{VALUE_MAX}", str(value)
        return f"flags must be 0..{FLAGS_MAX}", str(flags)

    def _which(self, cells: list[str], op: int) -> tuple[str, str]:
        """The column whose text is not a number (the slow path of a rejected row)."""
        at = self.at
        checks = [("time", False), ("key_size", True), ("value_size", True), ("ttl", True), ("flags", True)]
        for name, whole in checks:
            i = at.get(name)
            if i is None or (name == "value_size" and op != SET) or (name == "key_size" and "key" not in at
                                                                     and op != SET):
                continue
            text = cells[i].strip()
            if not text and name in ("ttl", "flags"):
                continue
            if not text:
                return f"missing column {name}", text
            try:
                float(text) if not whole else int(text)
            except ValueError:
                if whole and _NUMBER.fullmatch(text.lstrip("+-")):
                    return f"{name} is not a whole number", text
                return f"{name} is not a number", text
        return "bad row", ",".join(cells)[:TEXT_MAX]

    def _reject(self, line: int, raw: str, reason: str, value: str) -> None:
        acct = self.acct
        acct.rejected += 1
        if self.strict:
            raise InputError(f"{self.source}:{line}: {reason}: {value!r}")
        if len(acct.first_rejections) < FIRST_REJECTIONS:
            acct.first_rejections.append(Rejection(line, reason, raw.rstrip("\r\n")[:TEXT_MAX]))


def _whole(text: str) -> int:
    """``int(text)``.  Compiled, a cell of up to 18 ASCII digits is summed digit by digit in a machine
    integer (i64: 18 digits fit), a fraction of int()'s cost (which first copies the text to ASCII and
    allocates); any other text goes to int() itself (signs, spaces, underscores, and what int() refuses:
    the careful path names it).  As plain Python the loop costs more than int(): :meth:`_WorkloadReader.ops`
    calls int() there."""
    n: i64 = len(text)
    if 0 < n <= 18:
        value: i64 = 0
        for i in range(n):
            d: i64 = ord(text[i]) - 48
            if d < 0 or d > 9:
                return int(text)
            value = value * 10 + d
        return value
    return int(text)


def _seconds(text: str) -> float:
    """``float(text)``.  Compiled, a cell of 1 to 15 ASCII digits with at most one ``.`` is read as the
    integer n of its digits over 10**k, k its decimals: both are exact doubles (n < 2**53; 10**k for
    k <= 22, each product by 10.0 exact) and IEEE division rounds correctly as float() does, so the result
    is float()'s to the bit, at a fraction of its cost; 16 digits without a point are an integer, whose
    conversion rounds correctly too.  Any other text goes to float() itself (signs, exponents, spaces,
    ``nan``, ``1_0``, more digits, and what float() refuses: the careful path names it).  As plain Python
    the loop costs more than float(): :meth:`_WorkloadReader.ops` calls float() there."""
    n: i64 = len(text)
    if 0 < n <= 16:
        whole: i64 = 0
        scale = 1.0
        point: i64 = 0
        for i in range(n):
            d: i64 = ord(text[i]) - 48
            if 0 <= d <= 9:
                whole = whole * 10 + d
                if point:
                    scale *= 10.0
            elif d == -2 and not point:                 # the one "."
                point = 1
            else:
                return float(text)
        if n - point > 0:
            return float(whole) / scale
    return float(text)


def _at_start(stream: TextIO) -> bool:
    """Whether ``stream`` is a seekable text file at its start, bytes below: one its lines can be read again."""
    try:
        return getattr(stream, "buffer", None) is not None and stream.seekable() and stream.tell() == 0
    except (AttributeError, OSError, ValueError):
        return False


def _ends(pieces: list[str], universal: bool) -> list[str]:
    """The lines of text split at its newlines (each piece newline-ended but the text's last), without
    their ends, as the stream's own line reading gives them.  A stream opened with ``newline=""`` (as
    :func:`~slabcalc.inputs.rows.open_input` opens: ``universal``, told by its ``newlines`` once it has
    seen one) also ends a line at a lone carriage return; one opened with ``newline="\\n"`` (a StringIO)
    keeps it in the line; one that translates newlines (``newline=None``) reads none."""
    if not universal:
        return [piece.rstrip("\r") for piece in pieces]
    lines: list[str] = []
    for piece in pieces:
        parts = piece.split("\r")
        if len(parts) > 1 and not parts[-1]:
            parts.pop()                 # a carriage return before the newline or the end: no line after it
        lines += parts
    return lines


BLOCK: Final = 1 << 16           # characters read at a time: 64 KiB, a few hundred rows
SAMPLED_BLOCK: Final = 1 << 20   # by a sample (key_sample.py): a MiB, numpy's calls a block paid for by more rows

NATIVE: Final = not __file__.endswith(".py")     # this module compiled (mypyc), as engine.py's COMPILED


_TWITTER_OPS = ("get", "gets", "set", "add", "replace", "cas", "append", "prepend", "delete", "incr", "decr",
                "touch")
