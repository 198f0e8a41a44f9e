"""The replay's memory, shared by the request paths and the background threads (1.6.18 ``items.c``).

One :class:`Store` holds what memcached's threads share: the hash table, the slab allocator, the
LRUs, the items whose chunks span classes, the clock (``current_time``) and the counters.  Its
methods are the item operations every part runs the same way: ``do_item_link``/``do_item_unlink``
(and the page mover's relink), the one ``lru_pull_tail``, ``do_item_alloc_pull`` (and its eviction of
a full class's COLD tail), a hit's ``do_item_bump`` and the queued bump's ``do_item_update``, and an
exptime on the clock.  The engine (:mod:`.engine`: the op loop) and each background part --
the LRU maintainer, the crawler, the page mover, the extstore threads -- are given the store, never
one another: none reaches into the engine for its state.

An eviction is reported through a concrete hook, :class:`Evictions` (a compiled class: its call is
native, where a ``typing.Protocol`` would be a Python attribute lookup): the calcification peak, and
``slab_automove=2``'s page request.

Compiled by mypyc with the engine (setup.py): every field a native one.
"""

from __future__ import annotations

from typing import Any, Final

from slabcalc._native import i32, i64
from slabcalc.engines.config import ReplayConfig
from slabcalc.engines.lru import COLD, GONE, HOT, WARM, Item, Lrus
from slabcalc.engines.slabs import Slabs
from slabcalc.engines.table import Table
from slabcalc.model.ops import CLOCK_MAX

NEVER: Final = -1        # a second never checked (current_time starts at 62: engine.py CLOCK_START)
EXPTIME_MAX: Final = CLOCK_MAX     # an Item holds exptime in 31 bits: the clock never reaches it (model/ops.py)
COMPILED: Final = not __file__.endswith(".py")     # built by mypyc (setup.py): Item holds its ints unboxed
COUNTERS = ("sets", "gets", "hits", "misses", "deletes", "touches", "delete_hits", "touch_hits", "too_large",
            "chunk_failures", "get_expired", "ops", "total_items", "slabs_moved", "rescues", "evictions_nomem",
            "inline_reclaim", "chunk_rescues")      # the store's own counters (Engine.counts)


class Tally:
    """The replay's own counters (``COUNTERS``), each a native int when compiled: bumped on every request."""

    def __init__(self) -> None:
        self.sets = self.gets = self.hits = self.misses = self.deletes = self.touches = self.delete_hits = 0
        self.touch_hits = self.too_large = self.chunk_failures = self.get_expired = self.ops = self.total_items = 0
        self.slabs_moved = self.rescues = self.evictions_nomem = self.inline_reclaim = self.chunk_rescues = 0


class Evictions:
    """Told of every eviction (:meth:`Store.evict`): the calcification peak -- the free chunk bytes
    outside the evicting class, looked at once a second -- and, with ``slab_automove=2``
    (``pick_any``: :class:`.automove.PickAny`), a page asked for the evicting class."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pick_any: Any = None
        self.peak: tuple[int, float | None, int | None] = (0, None, None)   # bytes, workload time, class
        self.checked: int = NEVER

    def evicted(self, cls: int) -> None:
        store = self.store
        if self.checked != store.now:
            self._note_peak(cls)
        if self.pick_any is not None and store.pending_move is None and not store.moving:   # REASSIGN_RUNNING
            source = self.pick_any.source(cls)     # slabs_reassign(-1, id): items.c 1238
            if source > 0:
                store.pending_move = (source, cls, True)     # 1.6.45: SLABS_REASSIGN_ALLOW_EVICTIONS

    def _note_peak(self, cls: int) -> None:
        store = self.store
        self.checked = store.now
        size, free = store.size, store.slabs.free
        elsewhere = sum(size[c] * len(free[c]) for c in range(1, len(size)) if c != cls)
        if elsewhere > self.peak[0]:
            self.peak = (elsewhere, store.time, cls)


class Store:
    """The table, the slabs, the LRUs, the chunked items, the clock and the counters."""

    def __init__(self, config: ReplayConfig, slabs: Slabs, page_size: int, lost_max: int, epoch: int) -> None:
        self.config = config
        self.page_size = page_size      # -o slab_chunk_max's page: what the global pool frees (engines/mover.py)
        self.link_seg = HOT if config.segmented else COLD
        self.slabs = slabs
        self.size, self.perslab = slabs.size, slabs.perslab
        n = len(slabs.size)
        self.lrus = Lrus(n)
        # memcached's hash table, key -> item, with the markers of keys lost (engines/table.py)
        self.table = Table(self.lrus.lost, lost_max)
        self.chunked: dict[object, Item] = {}    # key -> item, for the items whose chunks span classes
        self.tally = Tally()
        self.moved_in, self.moved_out = [0] * n, [0] * n
        self.epoch = epoch
        self.now: int = epoch           # current_time
        self.time: float | None = None  # the workload's time of the request under way
        self.bumps: list = []           # items queued by lru_bump_async
        self.pending_move: tuple[int, int, bool] | None = None     # source, destination, evictions allowed
        self.moving = False             # the page mover is at work (it holds its lock)
        self.mover_page: Any = None     # 1.6.45: the page a resumed move waits on, told of items linked (mover.py)
        self.storage: Any = None        # -o ext_path: told of every unlink (engines/extstore.py)
        self.evictions = Evictions(self)
        self._exp_second: int | None = None     # plain Python: the exptimes of this second, by TTL
        self._exp: dict[int, int] = {}

    def exptime(self, ttl: int) -> int:
        """``current_time + ttl`` (0: never); plain Python, one int object per second and TTL for all
        items (compiled, an item holds it as a native int: nothing to share, no dict to look in)."""
        if not ttl:
            return 0
        exp = min(self.now + ttl, EXPTIME_MAX)
        if COMPILED:
            return exp
        if self._exp_second != self.now:
            self._exp_second, self._exp = self.now, {}
        return self._exp.setdefault(ttl, exp)

    # -- linking -------------------------------------------------------------------------

    def unlink(self, item: Item, lost: bool = True, keep_chunk: bool = False) -> None:
        """``do_item_unlink`` + free: out of its LRU and the hash table, its chunks freed (``keep_chunk``:
        handed on by the caller instead).  ``lost``: evicted or expired: a later miss is this class's."""
        self.lrus.unlink(item)
        item.seg = GONE                         # unlinked: a marker in the table if lost, else gone
        if lost:
            self.table.lose(item)
        else:
            self.table.remove(item)
        if self.storage is not None:
            self.storage.unlinked(item, lost)
        free = self.slabs.free
        if item.chunks is None:
            if not keep_chunk:
                free[item.cls].append(item.addr)
        else:
            del self.chunked[item.key]
            for cls, addr in item.chunks:
                free[cls].append(addr)

    def link(self, item: Item) -> None:
        """``do_item_link``: into the hash table and the head of its LRU, its time now."""
        item.time = self.now
        self.lrus.link(item)
        self.table.insert(item)                 # its key absent: store() took out a lost key's marker
        if item.chunks is not None:
            self.chunked[item.key] = item
        self.tally.total_items += 1
        if self.mover_page is not None:
            self.mover_page.linked(item)

    def relink(self, item: Item) -> None:
        """``do_item_replace`` of an item by its copy in another chunk (the page mover): to its LRU's
        head, its time now; its key keeps its place in the table."""
        self.lrus.unlink(item)
        item.time = self.now
        self.lrus.link(item)
        self.tally.total_items += 1

    def forget(self, key: object) -> None:
        """A set memcached could not store deletes the key's old item (``do_item_get`` first)."""
        item = self.table.find(key)
        if item is not None and item.seg != GONE:
            expired = bool(item.exptime and item.exptime <= self.now)
            self.tally.get_expired += expired
            self.unlink(item, lost=expired)

    def bump(self, item: Item) -> None:
        """``do_item_bump`` (items.c 1063): the hit markers, and the bump they ask for."""
        config = self.config
        if config.segmented:
            if item.active:
                return
            self.lrus.version[item.cls].n += 1
            if not item.fetched:
                item.fetched = True
                return
            item.active = True
            if item.seg != COLD:
                # "only need to bump time" (1.5.19+); before, do_item_update: once a minute
                if config.every_hit or item.time < self.now - config.update_interval:
                    item.time = self.now
            else:
                self.bumps.append(item)              # lru_bump_async: the maintainer moves it
            return
        item.fetched = True
        if item.time < self.now - config.update_interval:     # do_item_update, compat
            item.time = self.now
            self.lrus.q[item.seg][item.cls].to_head(item)
            self.lrus.version[item.cls].n += 1

    def update(self, item: Item) -> None:
        """``do_item_update`` of a queued bump (segmented): an ACTIVE COLD item to WARM."""
        if item.seg == GONE:        # unlinked since
            return
        item.time = self.now
        lrus = self.lrus
        lrus.version[item.cls].n += 1
        if item.seg == COLD and item.active:
            item.active = False
            lrus.relink(item, WARM)
            lrus.counts[item.cls].moves_to_warm += 1

    # -- the tails ---------------------------------------------------------------------------

    def evict(self, item: Item, cls: int, keep_chunk: bool = False) -> None:
        """Evict a live COLD tail item (items.c 1224-1240): its counters, then the unlink (``keep_chunk``:
        its chunk goes straight to the caller's new item, not through the free list)."""
        counts = self.lrus.counts[cls]
        counts.evicted += 1
        if item.exptime:
            counts.evicted_nonzero += 1
        if not item.fetched:
            counts.evicted_unfetched += 1
        self.unlink(item, True, keep_chunk)
        self.evictions.evicted(cls)

    def reclaim(self, item: Item, cls: int) -> None:
        """An expired tail item freed by ``lru_pull_tail`` (items.c 1179-1192): ``reclaimed``."""
        counts = self.lrus.counts[cls]
        counts.reclaimed += 1
        if not item.fetched:
            counts.expired_unfetched += 1
        self.unlink(item)

    def reclaim_tail(self, cls: int, seg: int) -> int:
        """``lru_pull_tail``'s search (items.c 1144-1192), the one copy: up to ``tail_tries`` expired
        tail items of ``seg`` (``exptime < current_time``) reclaimed; how many.  Fewer than
        ``tail_tries`` and the LRU not empty: its tail is live."""
        lru = self.lrus.q[seg][cls]
        now: i32 = self.now
        reclaimed = 0
        for _try in range(self.config.tail_tries):     # named: mypyc boxes `_` (an object) at every turn
            if not lru.n:
                break
            item = lru.next
            exptime = item.exptime
            if not exptime or exptime >= now:
                break
            self.reclaim(item, cls)
            reclaimed += 1
        return reclaimed

    def pull_tail(self, cls: int, seg: int, total_bytes: i64 = 0, evict: bool = False, max_age: int = 0) -> int:
        """``lru_pull_tail`` (items.c 1121-1290): items removed or moved at the tail of ``seg``.

        Up to ``tail_tries`` tail items: an expired one (``exptime <
        current_time``) is reclaimed and the walk goes on; the first live one
        ends it -- in HOT/WARM an ACTIVE item is kept (HOT: moved to WARM,
        WARM: to its head), else moved to COLD when the segment holds more than
        its share of ``total_bytes`` or the item is older than ``max_age``; in
        COLD it is evicted when ``evict``, else moved to WARM if ACTIVE.
        """
        config = self.config
        lrus = self.lrus
        lru = lrus.q[seg][cls]
        removed = self.reclaim_tail(cls, seg)
        if removed >= config.tail_tries or not lru.n:
            return removed
        item = lru.next
        now: i32 = self.now
        if seg == COLD:
            if evict:
                self.evict(item, cls)
                removed += 1
            elif item.active and config.segmented:
                item.active = False
                lrus.relink(item, WARM)
                lrus.counts[cls].moves_to_warm += 1
                removed += 1
            return removed
        if seg == HOT:
            limit = total_bytes * config.hot_lru_pct // 100
        else:
            limit = 0
        if limit == 0:          # a HOT limit of 0 falls through to WARM's (items.c 1199)
            limit = total_bytes * config.warm_lru_pct // 100
        if item.active:
            item.active = False
            removed += 1
            if seg == WARM:
                # 1.5.19+ relinks it; before, do_item_update_nolock: only when its time is a
                # minute old, with the time bumped (1.5.18 items.c 1178-1179, 550-562)
                if config.every_hit:
                    lru.to_head(item)
                elif item.time < now - config.update_interval:
                    item.time = now
                    lru.to_head(item)
                lrus.version[cls].n += 1
            else:
                lrus.relink(item, WARM)
                lrus.counts[cls].moves_to_warm += 1
        elif lru.bytes > limit or now - item.time > max_age:
            lrus.relink(item, COLD)
            lrus.counts[cls].moves_to_cold += 1
            removed += 1
        return removed

    def alloc_pull(self, cls: int, rounds: int | None = None) -> int:
        """``do_item_alloc_pull`` (items.c 170-210): a chunk of ``cls``, or -1 (out of memory).

        Up to ``alloc_rounds`` rounds.  The compat LRU first reclaims expired
        COLD tail items; then ``slabs_alloc``; when that fails, evict from the
        COLD tail, and when that removed nothing, the segmented LRU pushes its
        HOT tail down (the compat one gives up).
        """
        slabs = self.slabs
        segmented = self.config.segmented
        # self.pull_tail(), slabs.alloc(): direct calls when compiled (a bound method is a Python call)
        for _round in range(self.config.alloc_rounds if rounds is None else rounds):
            if not segmented:
                self.pull_tail(cls, COLD)
            addr = slabs.alloc(cls)
            if addr >= 0:
                return addr
            if self.pull_tail(cls, COLD, 0, True) <= 0:
                if not segmented:
                    break
                self.pull_tail(cls, HOT)
        return -1

    def evict_tail(self, cls: int) -> int:
        """``do_item_alloc_pull`` when no chunk and no page can be had: the common eviction of a
        live COLD tail written out (it runs for every set of a full cache), else the long way."""
        lru = self.lrus.q[COLD][cls]
        if not lru.n:
            return self.alloc_pull(cls)
        victim = lru.next
        exptime = victim.exptime
        if (exptime and exptime < self.now) or victim.chunks is not None:
            return self.alloc_pull(cls)
        segmented = self.config.segmented
        if segmented and self.storage is None:     # the victim's chunk, not pushed and popped
            self.evict(victim, cls, True)
            return victim.addr
        self.evict(victim, cls)
        if not segmented and not self.tail_live(cls):
            return self.alloc_pull(cls, self.config.alloc_rounds - 1)     # round two reclaims first
        return self.slabs.free[cls].pop()                          # the victim's chunk

    def tail_live(self, cls: int) -> bool:
        """The compat LRU's pre-allocation pull would reclaim nothing: the COLD tail is live."""
        lru = self.lrus.q[COLD][cls]
        if not lru.n:
            return True
        exptime = lru.next.exptime
        return not exptime or exptime >= self.now
