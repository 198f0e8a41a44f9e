"""What every row reader shares: one accounting of the rows of an input, the input opened, its first
line and header, cells split and numbers read.

Every data row is accepted or rejected, blank lines and a header are not rows, and a row with count N
is N items.  A rejected row is counted, the first few kept with their line numbers
(:data:`FIRST_REJECTIONS`), and with ``strict`` the first is an :class:`InputError` naming the file,
the line and the value.  Numbers are plain non-negative decimal integers, spaces around them allowed.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO

from slabcalc.errors import InputError

FIRST_REJECTIONS = 5     # rejections kept, with their lines, in Accounting.first_rejections
TEXT_MAX = 80            # characters of a rejected line kept

# A number, whole or not: a first line that is one makes the "values" form.
NUMBERISH = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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
    format: str            # the form read: items.FORMATS, or a workload's or a warehouse file's
    rows: int = 0          # data rows read (blank lines and the header are not rows)
    items: int = 0         # items accepted (a row with count 5 is 5 items)
    rejected: int = 0      # rows rejected
    first_rejections: list[Rejection] = field(default_factory=list)   # the first 5
    keys_named: bool = False   # the input names its keys (metadump)
    left_out: int = 0          # lines a filter (optimize --hot) kept from the reader: not rows
    unused: tuple[str, ...] = ()   # the header's columns the reader does not read, as the header names them
    sample: float | None = None    # the reader kept only the keys of this sample (model/sampling.py); the
    #                                rows (oracleGeneral: records) of the others are counted in left_out
    left_out_gets: int = 0     # the gets (a trace's look-aside reads) among the rows a sample left out
    log_ops: int | None = None    # a sample drawn before (sql --workload --sample): its whole log's operations
    log_gets: int | None = None   # and gets, as its log_ops and log_gets columns state them on every row


class Rejected(Exception):
    """A row that cannot be used: why, and the value quoted (None: the line itself)."""

    def __init__(self, reason: str, value: str | None):
        super().__init__(reason)
        self.reason, self.value = reason, value


def open_input(path: str) -> tuple[TextIO, str]:
    """``path`` opened for a row reader, and the name to report it by; ``-`` is stdin.  A gzip, bzip2 or
    xz stream (told by its first bytes, from a file or a pipe alike) is read through the standard
    library's decompressor as it is read: a block at a time, never whole."""
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:          # stdin is already text without bytes below (a test harness)
            return sys.stdin, "<stdin>"
        return _text(_decompressed(buffer, "<stdin>", None)), "<stdin>"
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return _text(_decompressed(raw, path, raw)), path


# the first bytes of each compressed stream the standard library reads (RFC 1952 2.3.1; bzip2's "BZh" and
# block size digit; the xz format 2.1.1.1), and its module
MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "lzma"))
KINDS = {"gzip": "gzip", "bz2": "bzip2", "lzma": "xz"}
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")    # names a compressed file goes by: what a name-told form strips


def compression_of(head: bytes) -> str | None:
    """The standard library module that reads a stream beginning with ``head`` (gzip, bz2, lzma), or None."""
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[3:4] != b"0":
        return "bz2"
    return next((module for magic, module in MAGIC if head.startswith(magic)), None)


def open_binary(path: str) -> tuple[BinaryIO, str]:
    """``path`` (``-``: stdin) opened for a binary reader (an oracleGeneral trace), decompressed as
    :func:`open_input` does, and the name to report it by."""
    if path == "-":
        return _decompressed(sys.stdin.buffer, "<stdin>", None), "<stdin>"
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return _decompressed(raw, path, raw), path


def open_text(path: str, errors: str = "strict") -> TextIO:
    """``path`` (``-``: stdin) as UTF-8 text, decompressed as :func:`open_input` does (saved replies)."""
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        return sys.stdin if buffer is None else io.TextIOWrapper(_decompressed(buffer, "<stdin>", None),
                                                                  encoding="utf-8", errors=errors, newline="")
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return io.TextIOWrapper(_decompressed(raw, path, raw), encoding="utf-8", errors=errors, newline="")


def _decompressed(buffer, source: str, owned) -> io.BufferedIOBase:
    """``buffer`` (a buffered binary stream), decompressed as it is read when its first bytes say so."""
    if not hasattr(buffer, "peek"):          # a BytesIO (a test harness's stdin): peek needs a buffered reader
        buffer = io.BufferedReader(buffer)
    module = compression_of(buffer.peek(8)[:8])
    if module is None:
        return buffer
    import importlib

    opened = importlib.import_module(module).open(buffer, "rb")
    return io.BufferedReader(_Decompressing(opened, source, KINDS[module], owned), 1 << 16)


def _text(buffer) -> TextIO:
    return io.TextIOWrapper(buffer, encoding="utf-8-sig", newline="")


class _Decompressing(io.RawIOBase):
    """A decompressing reader whose faults (corrupt or cut short) are an :class:`InputError` naming the
    input, not a traceback; closing it closes the file it owns."""

    def __init__(self, inner, source: str, kind: str, owned):
        super().__init__()
        self.inner, self.source, self.kind, self.owned = inner, source, kind, owned

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        import lzma
        import zlib

        try:
            return self.inner.readinto(b)
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:     # zlib: a gzip stream's bad block
            raise InputError(f"{self.source}: not whole {self.kind} data ({exc})") from None

    def seekable(self) -> bool:
        return self.inner.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.inner.seek(offset, whence)

    def tell(self) -> int:
        return self.inner.tell()

    def close(self) -> None:
        if not self.closed:
            try:
                self.inner.close()
            finally:
                if self.owned is not None:
                    self.owned.close()
        super().close()


def key_max_of(key_max: int | None) -> int:
    """The longest key a row may give: ``key_max`` (the caller's profile's ``key_max``, memcached's
    KEY_MAX_LENGTH), or the default release's when the caller has no profile."""
    if key_max is not None:
        return key_max
    from slabcalc.model.profile import load_profile

    return load_profile().key_max


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
    ignored); two cells naming one column are an :class:`InputError` at ``here`` (file:line), and so
    is a cell whose name no reader knows but is a letter or two from one of ``aliases`` (``tme`` for
    ``time``) whose column no other cell gives: read as an unknown column, it would change the answer
    without a word (issue 41).  The other cells are the reader's to name as not used
    (:attr:`Accounting.unused`)."""
    columns: dict[str, int] = {}
    unknown: list[tuple[int, str]] = []
    for i, name in enumerate(names):
        spelt = _spelling(name)
        column = aliases.get(spelt)
        if column is None:
            unknown.append((i, spelt))
            continue
        if column in columns:
            raise InputError(f"{here}: two {column} columns: "
                             f"{names[columns[column]].strip()!r} and {name.strip()!r}")
        columns[column] = i
    if unknown:
        from slabcalc.inputs.aliases import every_alias

        known = every_alias()
        for i, spelt in unknown:
            if spelt in known:
                continue
            near = near_name(spelt, [a for a in aliases if aliases[a] not in columns])
            if near is not None:
                raise InputError(f"{here}: unknown column {names[i].strip()!r}: is it {near!r}? rename it "
                                 f"(a misspelt column is not guessed at)")
    return columns


def _spelling(name: str) -> str:
    return re.sub(r"[\s-]+", "_", name.strip().lower())


def near_name(name: str, known: list[str]) -> str | None:
    """The name of ``known`` that ``name`` is a slip from -- one letter left out, added, changed or two
    swapped (two such for a name of 6 or more letters; none for a name of 1 or 2) -- or None.  The
    nearest wins, the first of ``known`` on a tie."""
    if len(name) < 3:
        return None
    most = 1 if len(name) < 6 else 2
    best, found = most + 1, None
    for candidate in known:
        if abs(len(candidate) - len(name)) > most or len(candidate) < 2:
            continue
        distance = _slips(name, candidate)
        if distance < best:
            best, found = distance, candidate
    return found


def _slips(a: str, b: str) -> int:
    """The edit distance of ``a`` and ``b`` where a swap of two neighbouring letters is one edit
    (optimal string alignment)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def unused_columns(names: list[str], used: set[int]) -> tuple[str, ...]:
    """The header's cells at positions not in ``used``: columns the reader does not read."""
    return tuple(name.strip() for i, name in enumerate(names) if i not in used and name.strip())


def split_cells(text: str, delimiter: str) -> list[str]:
    """A row's cells: a plain split, or the csv module's reading when there are quotes."""
    if '"' not in text:
        return text.split(delimiter)
    try:
        return next(csv.reader([text], delimiter=delimiter), [])
    except csv.Error:
        return text.split(delimiter)


def cell_number(cells: list[str], at: int, name: str) -> int:
    """The number in cell ``at``, or :class:`Rejected` (a missing cell quotes the whole line)."""
    if at >= len(cells) or not cells[at].strip():
        raise Rejected(f"missing column {name}", None)
    return number(cells[at], name)


def number(text: str, name: str) -> int:
    """A plain non-negative decimal integer, or :class:`Rejected` saying why it is not one."""
    text = text.strip()
    if text.isdigit() and text.isascii():
        return int(text)
    if not text:
        raise Rejected(f"missing column {name}", text)
    if text.isascii() and text[0] in "+-" and text[1:].isdigit():
        value = int(text)
        if value < 0:
            raise Rejected(f"negative {name}", text)
        return value
    if NUMBERISH.fullmatch(text):     # 1.5, 1e3, -2.0: a number, but not a plain integer
        raise Rejected(f"negative {name}" if text[0] == "-" else f"{name} is not a whole number", text)
    raise Rejected(f"{name} is not a number", text)
