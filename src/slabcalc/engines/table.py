"""memcached's hash table (1.6.18 ``assoc.c``): key -> item, chained through the items themselves.

As memcached chains items through ``it->h_next`` (1.6.18 assoc.c 70-91 find, 153-170 insert) and
doubles its buckets when the items exceed one and a half a bucket (assoc.c 145,
``assoc_start_expand``), the replay's table is a list of buckets, each the head of a chain linked
through :attr:`.Item.hnext`, doubled at the same load.  An entry costs the item one field (8 bytes) and its bucket's share: 5-11 bytes an item, where
a ``dict`` cost 31-42 bytes an entry and kept every key as an object of its own.

Each item holds its key's 64-bit hash ``hv`` (:func:`key_hash`): a key that is an int under 2**61 - 1
(oracleGeneral's object ids, ``--hash-keys``' hashes) is its own hash and is held as nothing else;
any other key (text, larger ints) is held by the item (:class:`.Keyed`) beside its Python hash, whose
top bit is set so that the two kinds never share a hash.  Equal hashes of held keys are compared by
key, so the table is exact either way.  Which bucket a key lands in decides nothing the replay
reports: only the chain walked to find it.

Compiled by mypyc (setup.py) with the LRUs: a lookup is native code over native ints.
"""

from __future__ import annotations

from typing import Final

from slabcalc._native import i64
from slabcalc.engines.lru import Item, Lru

SMALL: Final = (1 << 61) - 1    # Python's hash of an int 0 <= k < 2**61 - 1 is k (sys.hash_info.modulus)
HELD: Final = -(1 << 63)        # or'ed into a held key's hash: the top bit, which no small key has
START: Final = 10               # 1 024 buckets to begin with (memcached starts at 2**16: memcached.h 89)


def key_hash(key: object) -> i64:
    """``key``'s hash as the table keeps it: the key itself for an int under 2**61 - 1, else its
    Python hash with the top bit set (negative)."""
    if isinstance(key, int) and 0 <= key < SMALL:
        return key
    h: i64 = hash(key)
    return h | HELD


def _bucket(h: i64, mask: i64) -> i64:
    """A hash's bucket: its low bits with the higher ones folded in (object ids in strides of a
    power of two would otherwise share a few buckets)."""
    return (h ^ (h >> 21) ^ (h >> 42)) & mask


class Table:
    """The hash table: ``find`` a key's item, ``insert`` an item whose key is absent, ``remove`` one.

    A key lost (evicted, expired) keeps its item here as its marker (``lose``; the engine has set its
    segment GONE, its class kept: misses by class, one lookup serving both), the markers on the ring
    ``lost`` in the order lost, the oldest half forgotten past ``lost_max``.
    """

    __slots__ = ("buckets", "mask", "n", "lost", "lost_max")
    buckets: list[Item | None]
    mask: i64
    n: i64          # the items chained, live and lost
    lost: Lru
    lost_max: int

    def __init__(self, lost: Lru, lost_max: int) -> None:
        self.buckets = [None] * (1 << START)
        self.mask = (1 << START) - 1
        self.n = 0
        self.lost, self.lost_max = lost, lost_max

    def lose(self, item: Item) -> None:
        """``item`` (chained here, unlinked from its LRU) stays as its key's marker."""
        self.lost.append(item)
        if self.lost.n > self.lost_max:
            keep = self.lost.n // 2     # forget the older half: their later misses count in no class
            while self.lost.n > keep:
                self.unlose(self.lost.next)

    def unlose(self, item: Item) -> None:
        """A lost key's marker goes (the key is stored again, or forgotten)."""
        self.lost.remove(item)
        self.remove(item)

    def find(self, key: object) -> Item | None:
        """The item of ``key``, or None."""
        return self.at(key_hash(key), key)

    def at(self, h: i64, key: object) -> Item | None:
        """The item of ``key``, whose hash is ``h``, or None."""
        item = self.buckets[_bucket(h, self.mask)]
        while item is not None:
            if item.hv == h and (h >= 0 or item.key == key):
                return item
            item = item.hnext
        return None

    def insert(self, item: Item) -> None:
        """Chain ``item`` at its bucket's head (its key must be absent); double the buckets past 1.5
        an item a bucket (assoc.c 145)."""
        at = _bucket(item.hv, self.mask)
        item.hnext = self.buckets[at]
        self.buckets[at] = item
        self.n += 1
        if self.n > (self.mask + 1) * 3 // 2:
            self._expand()

    def remove(self, item: Item) -> None:
        """Take ``item`` (chained here) out of its chain."""
        at = _bucket(item.hv, self.mask)
        here = self.buckets[at]
        if here is item:
            self.buckets[at] = item.hnext
        else:
            while here is not None and here.hnext is not item:
                here = here.hnext
            assert here is not None, "the item is not in the table"
            here.hnext = item.hnext
        item.hnext = None
        self.n -= 1

    def _expand(self) -> None:
        """``assoc_expand``: twice the buckets, every item rechained (at once, where memcached moves a
        bucket at a time in a thread of its own: no lookup can tell)."""
        old = self.buckets
        size = 2 * len(old)
        self.buckets = [None] * size
        self.mask = size - 1
        buckets, mask = self.buckets, self.mask
        for head in old:
            item = head
            while item is not None:
                after = item.hnext
                at = _bucket(item.hv, mask)
                item.hnext = buckets[at]
                buckets[at] = item
                item = after

    def values(self) -> list[Item]:
        """Every item chained, bucket by bucket."""
        out: list[Item] = []
        for head in self.buckets:
            item = head
            while item is not None:
                out.append(item)
                item = item.hnext
        return out

    def __len__(self) -> int:
        return self.n

    def __del__(self) -> None:
        """Cut every chain before the buckets go: a chain freed whole is a nest of deallocations as
        deep as it is long (lru.py ``Lru.remove``: no acyclic item may be freed that deep)."""
        for head in self.buckets:
            item = head
            while item is not None:
                after = item.hnext
                item.hnext = None
                item = after
