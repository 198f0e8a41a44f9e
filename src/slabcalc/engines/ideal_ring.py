"""The ideal LRU's ring: one exact LRU over every object, compiled with the replay engine (setup.py).

:mod:`.ideal` says what the ideal LRU is and why; this is the LRU itself, the one place its rules
live.  Objects are linked in a ring through themselves (as the engine's items are, :mod:`.lru`):
``head.next`` the least recently used, ``head.prev`` the most; a dict finds a key's object.  Compiled,
a request is a dict lookup and a few pointer moves (the ``OrderedDict`` it replaces cost more than the
slab replay itself, issue 39).  :meth:`IdealRing.feed` takes operations in as many calls as the caller
likes (a curve feeds it each window of a compact copy as the replay reads it: one read for both).
"""

from __future__ import annotations

import gc
import math
from typing import Any, Final, Iterable

from slabcalc._native import i64, mypyc_attr
from slabcalc.model.classes import slab_classes
from slabcalc.model.ntotal import Ntotal
from slabcalc.model.ops import DELETE, FILL, GET, SET, TOUCH
from slabcalc.model.placement import TOO_LARGE, place
from slabcalc.model.settings import Settings

NEVER: Final = 1 << 62       # the exptime of an object without a TTL: no clock reaches it

Op = tuple[float, int, Any, int, int, int, int]     # time, op, key, key_size, value_size, ttl, flags


@mypyc_attr(acyclic=True)     # compiled: no collector's header; IdealRing.__del__ unties the ring
class Entry:
    """One object: its key, its size (``ITEM_ntotal``), when it expires, its neighbours in the ring."""

    __slots__ = ("key", "size", "exptime", "prev", "next")
    key: object
    size: i64
    exptime: i64
    prev: Entry
    next: Entry

    def __init__(self, key: object, size: i64, exptime: i64) -> None:
        self.key, self.size, self.exptime = key, size, exptime
        self.prev = self.next = self


_LOOSE: Final = Entry(None, 0, NEVER)     # where an untied object points (IdealRing.__del__)


class IdealRing:
    """The LRU of ``capacity`` bytes: ``gets``, ``hits`` and ``evictions`` so far."""

    def __init__(self, settings: Settings, capacity: int) -> None:
        self.settings = settings
        self.ntotal = Ntotal(settings)
        self.classes = slab_classes(settings)
        self.max_single: i64 = min(self.classes[-1].chunk_size, settings.item_size_max)
        self.refused: dict[tuple[int, int, int], bool] = {}     # (key, value, flags) above one chunk -> -I refuses it
        self.table: dict[object, Entry] = {}
        self.head = Entry(None, 0, NEVER)
        self.capacity: i64 = capacity
        self.used: i64 = 0
        self.gets: i64 = 0
        self.hits: i64 = 0
        self.evictions: i64 = 0

    def __del__(self) -> None:
        """Untie the ring: compiled, objects are acyclic to the collector, and a ring of them would never
        be freed; cut, each goes when the table does."""
        entry, head = self.head.next, self.head
        while entry is not head:
            after = entry.next
            entry.prev = entry.next = _LOOSE
            entry = after
        head.prev = head.next = _LOOSE

    def feed(self, ops: Iterable[Op]) -> None:
        """Replay ``ops`` (``(time, op, key, key_size, value_size, ttl, flags)``), after those fed before."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            for t, op, key, key_size, value_size, ttl, flags in ops:
                self.request(math.floor(t), op, key, key_size, value_size, ttl, flags)
        finally:
            if collecting:
                gc.enable()

    def request(self, now: i64, op: int, key: object, key_size: int, value_size: int, ttl: int, flags: int) -> None:
        """One request at second ``now``; a request that finds its key's object expired frees it first
        (``do_item_get``), a look-aside read that misses sets the object."""
        entry = self.table.get(key)
        if entry is not None and entry.exptime <= now:
            self.drop(key, entry)
            entry = None
        if op == GET or op == FILL:
            self.gets += 1
            if entry is not None:
                self.hits += 1
                self.touch(entry)
                return
            if op == GET:
                return
            op = SET
        if op == SET:
            if entry is not None:
                self.drop(key, entry)
            self.store(now, key, key_size, value_size, ttl, flags)
        elif op == DELETE:
            if entry is not None:
                self.drop(key, entry)
        elif op == TOUCH and entry is not None:
            self.touch(entry)
            entry.exptime = now + ttl if ttl else NEVER

    def store(self, now: i64, key: object, key_size: int, value_size: int, ttl: int, flags: int) -> None:
        """A set: nothing stored when memcached refuses it (past ``-I``:
        :func:`~slabcalc.model.placement.place`) or it is larger than the whole room; else the least
        recently used objects go until it fits."""
        size: i64 = self.ntotal.of(key_size, value_size, flags)
        if size > self.max_single:
            spec = (key_size, value_size, flags)
            refused = self.refused.get(spec)
            if refused is None:
                refused = place(self.settings, key_size, value_size, flags, self.classes).status == TOO_LARGE
                self.refused[spec] = refused
            if refused:
                return
        if size > self.capacity:
            return
        head = self.head
        while self.used + size > self.capacity:
            oldest = head.next
            self.drop(oldest.key, oldest)
            self.evictions += 1
        entry = Entry(key, size, now + ttl if ttl else NEVER)
        self.table[key] = entry
        last = head.prev
        entry.prev, entry.next = last, head
        last.next = head.prev = entry
        self.used += size

    def touch(self, entry: Entry) -> None:
        """``entry`` becomes the most recently used."""
        entry.prev.next = entry.next
        entry.next.prev = entry.prev
        head = self.head
        last = head.prev
        entry.prev, entry.next = last, head
        last.next = head.prev = entry

    def drop(self, key: object, entry: Entry) -> None:
        """``entry`` leaves the ring and the table, its bytes the room."""
        entry.prev.next = entry.next
        entry.next.prev = entry.prev
        entry.prev = entry.next = _LOOSE
        del self.table[key]
        self.used -= entry.size


__all__ = ["IdealRing"]
