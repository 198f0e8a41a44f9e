"""Redis string keys: the mallocs of ``SET key value`` (Redis 7.2, jemalloc build).

Source: redis 7.2.0, from ``research/allocators.md`` §3.2:

- a ``dictEntry`` (24 bytes) in the keyspace dict, pointing at an sds copy of
  the key (``db.c`` ``sdsdup``);
- the value: up to 44 bytes an EMBSTR, one allocation of robj (16) + sdshdr8
  (3) + len + NUL (``object.c``: "fit into the 64 byte arena of jemalloc");
  longer, a 16-byte ``robj`` plus an sds of header + len + NUL;
- sds headers by length (``sdsReqType``): 1 byte below 32, 3 below 2^8, 5
  below 2^16, 9 below 2^32, else 17;
- a key with a TTL adds a ``dictEntry`` in the expires dict (which reuses the
  key and keeps the time inside the entry);
- each dict's bucket array: 8 bytes × a power of two of at least 4 that is
  at least the number of keys (it doubles when a key is added to a full table).

Redis links jemalloc with no malloc prefix, so ``used_memory`` (what
``maxmemory`` limits) is the sum of the usable sizes.  Values that look like
integers (shared or stored in the robj) and Redis 8 / Valkey 8 layouts are
not modelled.
"""

from __future__ import annotations

ROBJ = 16
DICT_ENTRY = 24
EMBSTR_MAX = 44
SDSHDR8 = 3
BUCKET = 8
DICT_INITIAL = 4


def sds_header(length: int) -> int:
    """Bytes of the sds header for a string of ``length`` bytes (sdshdr5/8/16/32/64)."""
    if length < 1 << 5:
        return 1
    if length < 1 << 8:
        return 3
    if length < 1 << 16:
        return 5
    if length < 1 << 32:
        return 9
    return 17


def sds_alloc(length: int) -> int:
    """The malloc request of an sds of ``length`` bytes: header, bytes, NUL."""
    return sds_header(length) + length + 1


def string_key(key: int, value: int, ttl: bool = False) -> list[int]:
    """Malloc requests of one string key (bucket arrays apart)."""
    requests = [DICT_ENTRY, sds_alloc(key)]
    if value <= EMBSTR_MAX:
        requests.append(ROBJ + SDSHDR8 + value + 1)
    else:
        requests += [ROBJ, sds_alloc(value)]
    if ttl:
        requests.append(DICT_ENTRY)
    return requests


def bucket_array(keys: int) -> int:
    """Bytes requested for the bucket array of a dict holding ``keys`` keys."""
    size = DICT_INITIAL
    while size < keys:
        size *= 2
    return BUCKET * size
