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
from typing import BinaryIO, Iterator

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
                        strict: bool = False, sample: float | None = None) -> tuple[Iterator[tuple], Accounting]:
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

    at = [0, 0]         # the last good record's clock, and the records read so far

    def batches() -> Iterator[Iterator[tuple]]:
        while True:
            chunk = stream.read(RECORD.size * BATCH)
            if not chunk:
                return
            if len(chunk) % RECORD.size:
                tail = stream.read(RECORD.size - len(chunk) % RECORD.size)
                chunk += tail
                if len(chunk) % RECORD.size:
                    where = (at[1] + len(chunk) // RECORD.size) * RECORD.size
                    raise InputError(f"{source}: truncated oracleGeneral record at byte {where} "
                                     f"({len(chunk) % RECORD.size} of {RECORD.size} bytes)")
            batch = _clean_batch(chunk, at[0], key, limit)
            if batch is None:
                yield one_by_one(chunk)
                continue
            count, last, times, objs, values = batch        # every record good: the batch as a whole
            at[1] += count
            accounting.rows += count
            accounting.items += len(objs)
            accounting.left_out += count - len(objs)
            accounting.left_out_gets += count - len(objs)       # every record a look-aside read
            at[0] = last
            yield zip(times, repeat(FILL), objs, repeat(key), values, repeat(0), repeat(0))

    def one_by_one(chunk: bytes) -> Iterator[tuple]:
        last, record = at
        for clock, obj, size, _ in RECORD.iter_unpack(chunk):
            record += 1
            at[1] = record
            accounting.rows += 1
            reason = None
            if clock < last:
                reason = f"time goes backwards (after {last})"
            elif clock >= TIME_MAX:
                reason = f"time past {TIME_MAX - 1} s (66 years: the replay's clock)"
            elif size < key:
                reason = f"obj_size {size} is below the key length {key} (--key)"
            elif size - key > VALUE_MAX:
                reason = f"obj_size {size} is above memcached's largest value"
            if reason is not None:
                _reject(accounting, record, reason, f"time {clock} obj {obj} size {size}", source, strict)
                continue
            last = at[0] = clock
            if limit >= 0 and id_hash(obj) >= limit:
                accounting.left_out += 1
                accounting.left_out_gets += 1
                continue
            accounting.items += 1
            yield float(clock), FILL, obj, key, size - key, 0, 0

    # the batches' iterators chained in C: no Python frame is resumed per record of a good batch
    return chain.from_iterable(batches()), accounting


def _numpy():
    try:
        import numpy as np      # imported by a trace's first batch, not by the CLI's start-up
    except ImportError:
        return None
    return np


def _clean_batch(chunk: bytes, last: int, key: int,
                 limit: int = -1) -> tuple[int, int, list[float], list[int], list[int]] | None:
    """The count, the last clock, and the clocks (as floats), objects and value sizes of whole records
    ``chunk`` when none of them would be rejected (the checks of the record-by-record path, on every
    record at once), else None (and without numpy: every record is then read by itself).  ``limit``
    (not -1): only the records whose id's sampling hash is under it are listed."""
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
    return count, end, clocks.astype(np.float64).tolist(), objs.tolist(), (sizes.astype(np.int64) - key).tolist()


def _reject(accounting: Accounting, record: int, reason: str, text: str, source: str, strict: bool) -> None:
    accounting.rejected += 1
    if strict:
        raise InputError(f"{source}: record {record}: {reason}")
    if len(accounting.first_rejections) < FIRST_REJECTIONS:
        accounting.first_rejections.append(Rejection(record, reason, text))
