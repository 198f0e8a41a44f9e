"""The one sampling hash: which keys a sample of rate ``R`` keeps, computed the same way by the
replay's readers (``simulate --sample``) and by a warehouse (``slabcalc sql --workload --sample``).

A string key is kept when the first four bytes of the MD5 digest of its UTF-8 bytes, read as a
big-endian unsigned 32-bit integer, are under ``threshold(R) = floor(R * 2^32)``.  MD5 is the one
digest DuckDB (``md5``), Spark SQL (``md5``), BigQuery (``MD5``, bytes: ``TO_HEX``) and Trino
(``md5(to_utf8(..))``, ``to_hex`` in capitals) all have; each prints it as hex, and the first eight
lowercase hex digits compared as text with the threshold's eight are that integer compared with it
(fixed width, so the order of the text is the order of the numbers): no dialect has to turn hex into
a number, which they spell four ways.  ``tests/inputs/test_sql_sample.py`` checks each dialect's
expression, parsed by sqlglot and run by DuckDB, against :func:`key_hash`.

An integer key (libCacheSim oracleGeneral's 64-bit ``obj_id``) is not turned into text: hashing its
digits with MD5 costs more per request than the replay of a 5 % sample.  Its hash is multiplicative
(Knuth, *TAOCP* 6.4): ``(x * 2654435761) mod 2^32`` for ``x`` the id's low 31 bits (``id mod 2^31``,
the id read as unsigned: a signed BIGINT column's negative ids give the same ``x``), whose top bits
spread ids, consecutive ones too, evenly over ``[0, 2^32)``; ``x`` below 2^31 keeps the product
under 2^63, in every dialect's BIGINT.  numpy computes it over a whole batch of records at once
(:func:`keep_ids`), before any Python object is made for them.  A warehouse table of such ids is
sampled with ``sql --workload --id-keys``.
"""

from __future__ import annotations

import hashlib

HASH_SPACE = 1 << 32
ID_MULTIPLIER = 2654435761       # Knuth's multiplicative constant: an odd number near 2^32 / golden ratio
ID_BITS = 31                      # the id's bits that are hashed: x * ID_MULTIPLIER stays under 2^63


def threshold(rate: float) -> int:
    """The hashes a sample of ``rate`` keeps are those below this (``floor(rate * 2^32)``)."""
    return min(int(rate * HASH_SPACE), HASH_SPACE)


try:        # CPython's own MD5: the same digest as OpenSSL's, made for a short key in half the time
    from _md5 import md5
except ImportError:         # pragma: no cover - a Python built without it
    md5 = hashlib.md5


def text_hash(key: str | bytes) -> int:
    """A string key's sampling hash: the first 4 bytes of MD5 of its UTF-8 bytes, big-endian."""
    data = key.encode() if isinstance(key, str) else key
    return int.from_bytes(md5(data).digest()[:4], "big")


def id_hash(obj_id: int) -> int:
    """An integer key's sampling hash: ``((id mod 2^31) * 2654435761) mod 2^32``."""
    return ((obj_id % (1 << ID_BITS)) * ID_MULTIPLIER) % HASH_SPACE


def key_hash(key) -> int:
    """The sampling hash of a replay's key: :func:`id_hash` of an int, :func:`text_hash` of a string."""
    if isinstance(key, int):
        return id_hash(key)
    return text_hash(key)


def keep(key, limit: int) -> bool:
    """Whether a sample whose :func:`threshold` is ``limit`` keeps ``key``."""
    return key_hash(key) < limit


def keep_ids(ids, limit: int):
    """The numpy boolean mask of the ids (a ``uint64`` array) a sample of threshold ``limit`` keeps:
    :func:`id_hash` on every element at once (uint64 products wrap mod 2^64; the low 32 bits are kept)."""
    import numpy as np

    x = ids & np.uint64((1 << ID_BITS) - 1)
    return ((x * np.uint64(ID_MULTIPLIER)) & np.uint64(HASH_SPACE - 1)) < np.uint64(limit)


def threshold_hex(rate: float) -> str:
    """The threshold as the eight lowercase hex digits a warehouse compares MD5's first eight with
    (``ffffffff`` and above: a rate of 1 keeps every key, and is written without a comparison)."""
    return f"{threshold(rate):08x}"


__all__ = ["HASH_SPACE", "ID_BITS", "ID_MULTIPLIER", "id_hash", "keep", "keep_ids", "key_hash", "md5", "text_hash",
           "threshold", "threshold_hex"]
