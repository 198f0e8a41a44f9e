"""Items and their LRUs: linking, the one ``lru_pull_tail``, and the allocation path (1.6.18 ``items.c``).

Each class has three LRUs, HOT, WARM and COLD.  The compat LRU (1.4, or 1.5+
with ``-o no_modern``) links every item in COLD and never moves it between
them (``do_item_alloc``: "There is only COLD in compat-mode"), so one walk,
:meth:`.store.Store.pull_tail`, serves both, as ``lru_pull_tail`` does in memcached.
An LRU is a ring of its items, doubly linked through them as memcached links
``it->prev``/``it->next`` (items.c ``do_item_link_q``): :attr:`Lru.next` is
the tail (oldest), :attr:`Lru.prev` the head (newest).  Linked through the
items, an LRU costs 16 bytes an item and a look at its tail is one attribute
(an ``OrderedDict`` cost about 120 bytes an item, and its tail was found
through an iterator).
"""

from __future__ import annotations

from typing import Final, Iterator

from slabcalc._native import i32, i64, mypyc_attr, u8

# items.c lru_type_map: HOT_LRU, WARM_LRU, COLD_LRU, TEMP_LRU (Final: constants when compiled, not lookups)
HOT: Final = 0
WARM: Final = 1
COLD: Final = 2
TEMP: Final = 3
GONE: Final = 4     # no LRU: the marker the hash table keeps for a key memcached lost (engine.py)
SEGMENTS = ("hot", "warm", "cold", "temp")      # TEMP holds items only with -o temporary_ttl (temp_lru.py)


@mypyc_attr(acyclic=True)     # compiled: no collector's header (16 B); Lrus.__del__ unties the rings
class Item:
    """A linked item: its LRU class and segment, times, hit markers, size, chunk and key.

    ``addr`` is its chunk (``page << 32 | slot``) in class ``cls``.  ``hv`` is its key's hash as the
    hash table keeps it (:func:`.table.key_hash`); ``hnext`` the next item of its hash chain.  An
    item whose key is an int under 2**61 - 1 holds it as ``hv`` alone; any other key is held by a
    :class:`Keyed`.  An item whose chunks span classes is a :class:`Chunked`; every other item's
    ``chunks`` is None, and costs no field.
    """

    __slots__ = ("cls", "seg", "fetched", "active", "ntotal", "exptime", "time", "hv", "addr", "prev", "next",
                 "hnext")
    # declared for mypyc (setup.py): a compiled Item holds its ints unboxed, the class, segment, flags
    # and size packed in one word (declared first, so laid out first), its two times in another:
    # 80 bytes an item (was 128 with the collector's header, a dict entry and a key object beside it)
    # (every field set in __init__, Lru's too, so that mypyc needs no bitmap of the unset ones)
    cls: u8
    seg: u8
    fetched: bool
    active: bool
    ntotal: i32         # at most -I (1 GiB): read it into an int before adding it up
    exptime: i32        # memcached's rel_time_t, in 31 bits: model/ops.py CLOCK_MAX
    time: i32
    hv: i64
    addr: i64
    prev: Item
    next: Item
    hnext: Item | None

    def __init__(self, hv: i64, cls: int, seg: int, exptime: int, time: int, ntotal: int, addr: int) -> None:
        self.hv, self.cls, self.seg, self.exptime, self.time = hv, cls, seg, exptime, time
        self.fetched = self.active = False
        self.ntotal, self.addr = ntotal, addr
        self.hnext = None

    @property
    def key(self) -> object:
        """The key: here, the int that is its own hash."""
        return self.hv

    @property
    def chunks(self) -> list[tuple[int, int]] | None:
        """A chunked item's ``[(class, chunk), ...]``; None here."""
        return None


@mypyc_attr(acyclic=True)     # compiled: no collector's header (16 B); Lrus.__del__ unties the rings
class Keyed(Item):
    """An item whose key is not its own hash (text, an int past 2**61 - 2): the key held beside it."""

    __slots__ = ("_key",)
    _key: object

    def __init__(self, key: object, hv: i64, cls: int, seg: int, exptime: int, time: int, ntotal: int,
                 addr: int) -> None:
        super().__init__(hv, cls, seg, exptime, time, ntotal, addr)
        self._key = key

    @property
    def key(self) -> object:
        return self._key


@mypyc_attr(acyclic=True)     # compiled: no collector's header (16 B); Lrus.__del__ unties the rings
class Chunked(Item):
    """An item whose chunks span classes: ``addr`` -1 and ``chunks`` ``[(class, chunk), ...]``,
    header first (its header lives in a small class, its LRU is the largest class's); its key held."""

    __slots__ = ("_key", "_chunks")
    _key: object
    _chunks: list[tuple[int, int]]

    def __init__(self, key: object, hv: i64, cls: int, seg: int, exptime: int, time: int, ntotal: int,
                 chunks: list[tuple[int, int]]) -> None:
        super().__init__(hv, cls, seg, exptime, time, ntotal, -1)
        self._key = key
        self._chunks = chunks

    @property
    def key(self) -> object:
        return self._key

    @property
    def chunks(self) -> list[tuple[int, int]] | None:
        return self._chunks


def new_item(key: object, hv: i64, cls: int, seg: int, exptime: int, time: int, ntotal: int, addr: int) -> Item:
    """An item of one chunk for ``key``, whose table hash is ``hv``: the key held only when it is
    not its own hash (``hv`` negative: :func:`.table.key_hash`)."""
    if hv >= 0:
        return Item(hv, cls, seg, exptime, time, ntotal, addr)
    return Keyed(key, hv, cls, seg, exptime, time, ntotal, addr)


_LOOSE: Final = Item(0, 0, GONE, 0, 0, 0, -1)     # where an untied item's links point (Lrus.__del__)


@mypyc_attr(acyclic=True)     # compiled: no collector's header (16 B); Lrus.__del__ unties the rings
class Lru(Item):
    """One LRU: the ring's anchor.  ``next`` is its tail (oldest item), ``prev`` its head (newest),
    the anchor itself when it is empty; ``n`` counts its items.  The anchor is an :class:`Item` of
    no key (only its links are used), so that every link is an Item to the type checker and to mypyc."""

    __slots__ = ("n", "bytes")
    n: i64
    bytes: i64      # the ntotal of its items (compiled: a machine int, bumped without boxing or tag checks)

    def __init__(self) -> None:
        super().__init__(0, 0, 0, 0, 0, 0, -1)
        self.prev = self.next = self
        self.n = self.bytes = 0

    def append(self, item: Item) -> None:
        """Link ``item`` at the head."""
        head = self.prev
        item.prev, item.next = head, self
        head.next = self.prev = item
        self.n += 1
        self.bytes += i64(item.ntotal)

    def remove(self, item: Item) -> None:
        """Unlink ``item``, its own links cut (pointed at ``_LOOSE``): a removed item that outlives its
        ring (held by extstore, a caller) would otherwise hold its old neighbours, they theirs, and
        their release would be a chain of deallocations deep enough for CPython's trashcan, which
        mypyc (2.4, emitclass.py ``generate_dealloc_for_class``) calls for acyclic classes too and
        which on CPython 3.11 writes into the collector's header an acyclic object does not have:
        memory corrupted, a crash later (tests/engines/test_dealloc.py)."""
        before, after = item.prev, item.next
        before.next, after.prev = after, before
        item.prev = item.next = _LOOSE
        self.n -= 1
        self.bytes -= i64(item.ntotal)

    def to_head(self, item: Item) -> None:
        """Move ``item`` (linked here) to the head: memcached's unlink and relink in the same LRU."""
        self.remove(item)
        self.append(item)

    def values(self) -> list[Item]:
        """The items, tail (oldest) first."""
        items: list[Item] = []
        item = self.next
        while item is not self:
            items.append(item)
            item = item.next
        return items

    def __iter__(self) -> Iterator[object]:
        """The items' keys, tail first (as the ``OrderedDict`` it replaced)."""
        return (item.key for item in self.values())

    def __len__(self) -> int:
        return self.n


@mypyc_attr(acyclic=True)
class Counts:
    """A class's counters, the ones ``stats items`` shows (and the tail pulls' moves): compiled, native
    ints bumped in place, where a list of counters boxed a new int at every bump past 256."""

    __slots__ = ("evicted", "evicted_nonzero", "evicted_unfetched", "reclaimed", "expired_unfetched",
                 "crawler_reclaimed", "outofmemory", "moves_to_cold", "moves_to_warm", "hits", "misses")
    evicted: i64
    evicted_nonzero: i64
    evicted_unfetched: i64
    reclaimed: i64
    expired_unfetched: i64
    crawler_reclaimed: i64
    outofmemory: i64
    moves_to_cold: i64
    moves_to_warm: i64
    hits: i64           # get_hits of the class (stats slabs)
    misses: i64         # gets of a key lost from the class (an eviction or an expiry)

    def __init__(self) -> None:
        self.evicted = self.evicted_nonzero = self.evicted_unfetched = self.reclaimed = 0
        self.expired_unfetched = self.crawler_reclaimed = self.outofmemory = 0
        self.moves_to_cold = self.moves_to_warm = self.hits = self.misses = 0


class Tick:
    """A class's version: bumped by every change of its LRUs or of an item in them (compiled, a native
    int in an object of its own: a bump allocates no int, as one in a list of ints would)."""

    __slots__ = ("n",)
    n: i64

    def __init__(self) -> None:
        self.n = 0


class Lrus:
    """Every class's HOT/WARM/COLD LRUs, their item bytes, and the counters ``stats items`` shows
    (what frees an item -- a reclaim, an eviction -- is the store's: :mod:`.store`)."""

    def __init__(self, n: int) -> None:
        self.q = [[Lru() for _ in range(n)] for _ in SEGMENTS]
        self.counts = [Counts() for _ in range(n)]      # per class
        # per class, bumped by every change of its LRUs or of an item in them: the maintainer
        # need not look again at a class that has not changed within the same second
        self.version = [Tick() for _ in range(n)]
        self.lost = Lru()       # the lost keys' items, kept in the table as markers, oldest first (engine.py)

    def __del__(self) -> None:
        """Untie every ring: compiled, items are acyclic to the collector (no header), and a ring of
        them would never be freed; cut, each item goes when the last reference to it does."""
        for ring in [lru for seg in self.q for lru in seg] + [self.lost]:
            item = ring.next
            while item is not ring:
                after = item.next
                item.prev = item.next = _LOOSE
                item = after
            ring.prev = ring.next = _LOOSE

    def column(self, name: str) -> list[int]:
        """One of :class:`Counts`' counters, every class's (by class id)."""
        return [getattr(counts, name) for counts in self.counts]

    def count(self, cls: int) -> int:
        q = self.q
        return q[HOT][cls].n + q[WARM][cls].n + q[COLD][cls].n + q[TEMP][cls].n

    def link(self, item: Item) -> None:
        cls = item.cls
        self.q[item.seg][cls].append(item)
        self.version[cls].n += 1

    def unlink(self, item: Item) -> None:
        cls = item.cls
        self.q[item.seg][cls].remove(item)
        self.version[cls].n += 1

    def relink(self, item: Item, seg: int) -> None:
        """``item_unlink_q`` + ``item_link_q``: to the head of ``seg`` (its own, or another)."""
        cls = item.cls
        self.q[item.seg][cls].remove(item)
        item.seg = seg
        self.q[seg][cls].append(item)
        self.version[cls].n += 1
