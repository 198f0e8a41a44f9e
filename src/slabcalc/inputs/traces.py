"""Public cache traces for ``slabcalc simulate`` beyond CSV: libCacheSim's *oracleGeneral* binary.

oracleGeneral (libCacheSim ``traceReader/customizedReader/oracle/oracleGeneralBin.h``) is a flat
file of 24-byte little-endian records: ``uint32 clock_time`` (seconds), ``uint64 obj_id``, ``uint32
obj_size``, ``int64 next_access_vtime`` (ignored).  It names no command: each record is a request,
replayed as a look-aside client does it -- a get, and on a miss a set (``FILL``, model/ops.py).
``obj_size`` is the key and value together: ``--key N`` (16 when not given) is taken as the key and
the rest as the value, and the report says so.  A record whose size is below the key is rejected.

MetaKV (Meta's CacheLib kvcache traces) and twitter/cache-trace are CSV: the CSV reader
(inputs/workload.py) takes them by their column names.
"""

from __future__ import annotations

import struct
from itertools import chain, repeat
from typing import Any, BinaryIO, Iterator, NamedTuple

from slabcalc.errors import InputError
from slabcalc.inputs.rows import COMPRESSED_SUFFIXES, FIRST_REJECTIONS, Accounting, Rejection
from slabcalc.model.item import VALUE_MAX, size_key
from slabcalc.model.ops import FILL, TIME_MAX
from slabcalc.model.sampling import HASH_SPACE, id_hash, keep_ids, threshold

RECORD = struct.Struct("<IQIq")          # 24 bytes
RECORDS = [("clock", "<u4"), ("obj", "<u8"), ("size", "<u4"), ("next", "<i8")]     # the same, as a numpy dtype
BATCH = 65536       # records read at a time
SUFFIXES = (".oraclegeneral", ".oraclegeneral.bin", ".oracle_general", ".oraclegeneralbin")


def is_oracle_general(path: str) -> bool:
    """By its name, compressed (``.gz``, ``.bz2``, ``.xz``: read by the standard library) or not."""
    lowered = path.lower()
    for compressed in COMPRESSED_SUFFIXES:
        lowered = lowered.removesuffix(compressed)
    return lowered.endswith(SUFFIXES)


def read_oracle_general(stream: BinaryIO, source: str, *, key_length: int | None = None,
                        strict: bool = False, sample: float | None = None) -> tuple[Requests, Accounting]:
    """The requests of an oracleGeneral file as ``(time, FILL, obj_id, key, value, 0, 0)``.

    ``sample`` (a rate below 1): only the records of the ids a sample of that rate keeps
    (:func:`slabcalc.model.sampling.keep_ids`), chosen over each batch's records with numpy before
    any Python object is made for them; every record is still checked, and the others are counted
    in the accounting's ``left_out``."""
    key = size_key(key_length)
    accounting = Accounting(source, f"oracleGeneral, obj_size split as a {key}-byte key (--key) + value")
    limit = -1
    if sample is not None and threshold(sample) < HASH_SPACE and _numpy() is not None:
        limit, accounting.sample = threshold(sample), sample

    records = _OracleRecords(stream, source, key, limit, strict, accounting)
    return Requests(records.batches()), accounting


class _OracleRecords:
    """The records of one oracleGeneral stream, a batch at a time: a batch with no record to reject
    read as a whole with numpy (``_clean_batch``), any other record by record."""

    def __init__(self, stream: BinaryIO, source: str, key: int, limit: int, strict: bool,
                 accounting: Accounting) -> None:
        self.stream = stream
        self.source = source
        self.key = key
        self.limit = limit
        self.strict = strict
        self.accounting = accounting
        self.last = 0           # the last good record's clock
        self.read = 0           # the records read so far

    def batches(self) -> Iterator[Columns | Iterator[tuple]]:
        accounting = self.accounting
        while True:
            chunk = self._chunk()
            if not chunk:
                return
            batch = _clean_batch(chunk, self.last, self.key, self.limit)
            if batch is None:
                yield self._one_by_one(chunk)
                continue
            count, last, columns = batch        # every record good: the batch as a whole
            self.read += count
            accounting.rows += count
            accounting.items += len(columns.objs)
            accounting.left_out += count - len(columns.objs)
            accounting.left_out_gets += count - len(columns.objs)      # every record a look-aside read
            self.last = last
            yield columns

    def _chunk(self) -> bytes:
        """The next batch's bytes, whole records (empty at the end); a truncated last record is an error."""
        chunk = self.stream.read(RECORD.size * BATCH)
        if len(chunk) % RECORD.size:
            chunk += self.stream.read(RECORD.size - len(chunk) % RECORD.size)
            if len(chunk) % RECORD.size:
                where = (self.read + len(chunk) // RECORD.size) * RECORD.size
                raise InputError(f"{self.source}: truncated oracleGeneral record at byte {where} "
                                 f"({len(chunk) % RECORD.size} of {RECORD.size} bytes)")
        return chunk

    def _one_by_one(self, chunk: bytes) -> Iterator[tuple]:
        accounting, key = self.accounting, self.key
        for clock, obj, size, _ in RECORD.iter_unpack(chunk):
            self.read += 1
            accounting.rows += 1
            reason = _wrong(clock, size, self.last, key)
            if reason is not None:
                _reject(accounting, self.read, reason, f"time {clock} obj {obj} size {size}", self.source,
                        self.strict)
                continue
            self.last = clock
            if self.limit >= 0 and id_hash(obj) >= self.limit:
                accounting.left_out += 1
                accounting.left_out_gets += 1
                continue
            accounting.items += 1
            yield float(clock), FILL, obj, key, size - key, 0, 0


def _wrong(clock: int, size: int, last: int, key: int) -> str | None:
    """Why a record is rejected (``_clean_batch`` checks the same on a whole batch), None when it is not."""
    if clock < last:
        return f"time goes backwards (after {last})"
    if clock >= TIME_MAX:
        return f"time past {TIME_MAX - 1} s (66 years: the replay's clock)"
    if size < key:
        return f"obj_size {size} is below the key length {key} (--key)"
    if size - key > VALUE_MAX:
        return f"obj_size {size} is above memcached's largest value"
    return None


class Columns(NamedTuple):
    """A batch of good records as numpy columns: times (float64: the clocks, exactly), object ids
    (uint64), value sizes (int64: ``obj_size`` less the key); every request a ``FILL`` of a ``key``-byte
    key, no TTL, no flags."""

    times: Any
    objs: Any
    values: Any
    key: int

    def rows(self) -> Iterator[tuple]:
        """The batch as the reader's operations, ``(time, FILL, obj_id, key, value, 0, 0)``."""
        return zip(self.times.tolist(), repeat(FILL), self.objs.tolist(), repeat(self.key), self.values.tolist(),
                   repeat(0), repeat(0))


def _rows(batch: Columns | Iterator[tuple]) -> Iterator[tuple]:
    return batch.rows() if isinstance(batch, Columns) else batch


class Requests:
    """A trace's requests: iterated, the operations one at a time (the batches' iterators chained in C:
    no Python frame is resumed per record of a good batch); or, read once through :meth:`batches`
    instead, a batch at a time, a batch of good records as its :class:`Columns` (the compact copy
    takes them so, and no Python object is made for a record)."""

    def __init__(self, batches: Iterator[Columns | Iterator[tuple]]):
        self._batches = batches
        self._ops: Iterator[tuple] | None = None

    def __iter__(self) -> Iterator[tuple]:
        if self._ops is None:
            self._ops = chain.from_iterable(map(_rows, self._batches))
        return self._ops

    def __next__(self) -> tuple:
        return next(iter(self))

    def batches(self) -> Iterator[Columns | Iterator[tuple]]:
        """Each batch as it is read: :class:`Columns`, or an iterator of operations (a batch with a
        record to reject, read record by record)."""
        return self._batches


def _numpy():
    try:
        import numpy as np      # imported by a trace's first batch, not by the CLI's start-up
    except ImportError:
        return None
    return np


def _clean_batch(chunk: bytes, last: int, key: int, limit: int = -1) -> tuple[int, int, Columns] | None:
    """The count, the last clock, and the :class:`Columns` of whole records ``chunk`` when none of them
    would be rejected (the checks of the record-by-record path, on every record at once), else None (and
    without numpy: every record is then read by itself).  ``limit`` (not -1): only the records whose
    id's sampling hash is under it are listed."""
    np = _numpy()
    if np is None:
        return None
    records = np.frombuffer(chunk, dtype=RECORDS)
    clocks, sizes = records["clock"], records["size"]
    if int(clocks[0]) < last or (len(clocks) > 1 and bool((clocks[1:] < clocks[:-1]).any())):
        return None
    if int(clocks.max()) >= TIME_MAX:
        return None
    if int(sizes.min()) < key or int(sizes.max()) - key > VALUE_MAX:
        return None
    count, end, objs = len(clocks), int(clocks[-1]), records["obj"]
    if limit >= 0:
        kept = keep_ids(objs, limit)
        clocks, sizes, objs = clocks[kept], sizes[kept], objs[kept]
    # uint32 -> float64 is exact: the floats float() would make, converted in bulk
    return count, end, Columns(clocks.astype(np.float64), objs, sizes.astype(np.int64) - key, key)


def _reject(accounting: Accounting, record: int, reason: str, text: str, source: str, strict: bool) -> None:
    accounting.rejected += 1
    if strict:
        raise InputError(f"{source}: record {record}: {reason}")
    if len(accounting.first_rejections) < FIRST_REJECTIONS:
        accounting.first_rejections.append(Rejection(record, reason, text))
