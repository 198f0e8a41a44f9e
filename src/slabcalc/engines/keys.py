"""Keys kept as 60-bit hashes (``simulate --hash-keys``): a resident item without its key's text.

A replay only ever asks of a key whether it equals another, so a hash of it
serves wherever the key did (the hash table and its lost-key markers, extstore's tables) and
its text can go as soon as its request is read.  A key string of 13
characters costs 64 bytes (pymalloc's 16-byte blocks) and the item that holds
it 8 more (a ``Keyed``, 96 bytes where 88 are used); a hash under 2**60 is its
own hash in the replay's hash table (engines/table.py), held as a native
field of the item: 80 bytes less for every resident item (80 in all,
compiled).  Sixty bits: any int under 2**61 - 1 is its own hash.  The hash is BLAKE2b of the key's UTF-8
bytes, the same on every run and machine (Python's own ``hash`` of a string
is not), so a replay that meets a collision meets it every time.

Two distinct keys share a hash with probability 2**-60; among ``n`` keys,
some two do with probability at most ``n(n-1)/2 * 2**-60`` (the union bound),
and ``n`` is at most the operations replayed: :func:`collision_bound`.
Integer keys (oracleGeneral's object ids) are kept as they are: they are not
text, and stay exact.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import Iterable, Iterator

KEY_HASH_BITS = 60
_MASK = (1 << KEY_HASH_BITS) - 1


def key_digest(key: str) -> int:
    """``key``'s 60-bit hash: BLAKE2b's 8-byte digest of its UTF-8 bytes, its top 4 bits cleared.  A mask,
    not a shift: CPython's right shift keeps the 3-digit block of the 64-bit int (48 bytes), the mask
    allocates the 2 digits of 60 bits (32)."""
    return int.from_bytes(blake2b(key.encode(), digest_size=8).digest(), "little") & _MASK


def hashed(ops: Iterable[tuple]) -> Iterator[tuple]:
    """``(time, op, key, ...)`` operations with each string key replaced by :func:`key_digest`."""
    digest = key_digest
    for op in ops:
        key = op[2]
        if type(key) is str:
            yield (op[0], op[1], digest(key), *op[3:])
        else:
            yield op


def collision_bound(keys: int) -> float:
    """An upper bound on the probability that some two of ``keys`` distinct keys share a hash."""
    return keys * (keys - 1) / 2 ** (KEY_HASH_BITS + 1)
