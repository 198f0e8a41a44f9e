"""Extstore on the workload's clock: the storage write thread, header items, reads from flash.

This module is long because its rules are one thread's: the write thread's pass, the header items
it leaves and the reads that meet them share the class state it walks (the later releases' thread,
compaction and automover are modules of their own).

Rules read from 1.6.18's source (the release's constants are profile data,
``extstore.replay``; the option values are :class:`slabcalc.model.extstore.Extstore`'s), as
below; what later releases changed (1.6.45's source, each change placed at its tag:
docs/extstore-releases.md) is ``extstore.replay`` data too -- 1.6.20's write thread is
:class:`.extstore_write.LaterStorage`, 1.6.25's compaction :mod:`.extstore_compact`, 1.6.34's and
1.6.38's automovers :class:`.LaterExtstoreAutomover` and :class:`.NowAgeExtstoreAutomover` (each chosen
by its name in the profile: :mod:`.extstore_attach`):

The write thread (``storage_write_thread``, storage.c 588-663)
    Sleeps ``to_sleep`` microseconds (500 at least, ``ext_max_sleep`` at most;
    one more after each pass, halved by each item written).  Each pass walks
    the classes from ``slabs_clsid(ext_item_size)`` up, skipping a class by
    its backoff (a pass that wrote nothing from it raises the backoff by one,
    one that wrote resets it to 1; a sleep over 5 ms halves it).  In a class it
    writes items until one write fails: while the class has fewer free chunks
    than 3 pages' worth (``MIN_PAGES_FREE``, counting each item written as one
    more) and the global page pool holds at most ``ext_global_pool_min``
    pages, any item goes (age 0); otherwise only an item idle longer than
    ``ext_item_age`` (by default no age is long enough: nothing goes).
``storage_write`` (storage.c 476-570)
    Takes the COLD tail (``lru_pull_tail`` with ``LRU_PULL_RETURN_ITEM``:
    expired tail items are reclaimed on the way, items.c 1144-1192); a header
    item is never written again.  A header item of ``sizeof(item_hdr)`` value
    bytes is allocated for the key in the class its size picks -- evicting
    from that class like any set (so headers compete with small items for
    pages) -- and the whole item is copied to its bucket's write buffer
    (``chunked`` for chunked items, ``lowttl`` when its TTL left is under
    ``ext_low_ttl``); the header replaces the item (``item_replace``: linked
    anew, at its LRU's head).  A failed write frees the header.
Gets (proto_text.c ``process_get_command``, storage.c 240-300, 380-432)
    A header found is bumped like any item, then read: a read buffer of the
    item's size is taken from its class (``do_item_alloc_pull``: it may evict; none to be had is
    ``get_oom_extstore``, a miss)
    and given back after the response -- the model holds a class's last one
    until the write thread's next pass, which sees it: the real thread, waking
    every half millisecond, sees one of the many buffers held while reads are
    under way and flushes one item more to keep its margin (two captures of
    ``ext-issue`` end with exactly one free chunk over the margin in every
    class read from).  ``get_extstore`` counts the reads; an
    object whose page was evicted is a miss to the client
    (``miss_from_extstore``; ``get_hits`` still counts it, as the server's does) and its header is
    unlinked.  Every ``ext_recache_rate``-th read of a header hit
    twice (FETCHED and ACTIVE) within the last 60 s keeps the read buffer as the
    item again (``recache_from_extstore``).
Compaction and page eviction (storage.c 926-983, extstore.c 928-1000)
    Once a second the compaction thread checks for a page to compact, and
    compacts it a write buffer every 10 ms (:mod:`.extstore_compact`); before
    each sleep it wakes the maintenance thread, which evicts the oldest page
    when none is free (:mod:`.flash`).
Memory (memcached.c 6016-6030, slabs.c 298-313)
    With extstore the whole of ``-m`` is allocated at start into the global
    page pool (``slabs_prefill_global``), and ``slab_automove=1`` runs
    :class:`ExtstoreAutomover` (items.c 1574-1580).
"""

from __future__ import annotations

import math

from slabcalc.engines import extstore_idle
from slabcalc.engines.extstore_compact import Compactor
from slabcalc.engines.flash import CHUNKED, DEFAULT, LOWTTL, Flash
from slabcalc.engines.lru import COLD, GONE, Item, new_item
from slabcalc.model.classes import slabs_clsid

US = 1_000_000
# the -o words read here (through model/extstore.py's Extstore), besides those that shape the flash
READ_WORDS = frozenset({"ext_item_age", "ext_low_ttl", "ext_max_sleep", "ext_recache_rate", "slab_automove_freeratio",
                        "ext_compact_under", "ext_drop_under", "ext_max_frag", "ext_drop_unread"})
NO_AGE = None           # ext_item_age unset: UINT_MAX, never exceeded (storage.c 1121)


class FlashRef:
    """A header item in RAM and where its value is on flash: page, version and offset in the page
    (``item_hdr``, memcached.h; the offset tells compaction which buffer's read brings it back)."""

    __slots__ = ("header", "page", "version", "ntotal", "cls", "offset")

    def __init__(self, header: Item, page: int, version: int, ntotal: int, cls: int, offset: int):
        self.header, self.page, self.version, self.ntotal, self.cls = header, page, version, ntotal, cls
        self.offset = offset


class Storage:
    """The storage write thread, the header items and the flash they point into."""

    def __init__(self, engine, start: float):
        e = self.e = engine
        self.store = engine.store           # the memory it writes out of (engines/store.py)
        ext = e.settings.extstore
        replay = e.settings.profile.extstore.replay
        self.ext, self.replay = ext, replay
        self.flash = Flash(ext.page_count, ext.reserved_pages, ext.page_size, ext.wbuf_size, ext.wbuf_count)
        self.min_class = self._min_class(ext.item_size)
        self.item_age = ext.item_age
        self.low_ttl = ext.low_ttl
        self.margin = ext.write_margin_pages
        self.recache_rate = replay["recache_rate"] if ext.recache_rate is None else ext.recache_rate
        self.max_sleep = replay["max_sleep_us"] if ext.max_sleep is None else ext.max_sleep
        self.sleep_min = replay["write_sleep_min_us"]
        self.halve_over = replay["backoff_halve_over_us"]     # None: a long sleep halves no backoff (1.6.20)
        # where releases differ (profile extstore.replay; docs/extstore-releases.md)
        self.down = replay["write_walk"] == "down"
        self.at_minimum = replay["write_target_at_minimum"]
        self.small_caps = [tuple(cap) for cap in replay["write_small_class_pages"]]
        self.sleep_after_moves = replay["write_sleep_after_moves"]
        self.reset_on_sleep = replay["backoff_reset_on_sleep"]
        self.compact_on_writes = replay["compact_wake"] == "written"
        self.maint_evicts = replay["flash_evict"] == "maintenance_thread"
        self.keeps_fetched = replay["header_keeps_fetched"]
        self.check_compact = e.settings.slab_page_size       # storage.c (1.6.25+) check_compact
        self.slept = True
        self.pool_min = replay["pool_min_start"]          # settings.ext_global_pool_min
        self.hdr_value = ext.header - 2                    # sizeof(item_hdr) less the ntotal's "\r\n"
        self.refs: dict = {}                               # key -> FlashRef, while its header is linked
        self.hdr_size: dict = {}                           # key -> the ntotal of its header item
        self.pending = 0                                   # the header size of the set under way
        self.headers_lost = 0                              # header items evicted, their value on flash
        self.headers_lost_flash_free = 0                   # the most free flash pages at such a loss
        self.backoff = [0] * len(e.size)
        self.counter = 0
        self.to_sleep = self.sleep_min
        self.next_wake = math.floor(start * US)
        self.next_maint = self.next_wake                   # the compact thread's wake (see step)
        self.compactor = Compactor(self)
        self.get_extstore = self.miss_from_extstore = self.recache_from_extstore = 0
        self.get_oom_extstore = self.recache_counter = 0
        self._walk_key: tuple | None = None
        self._walk_list: list[int] = []
        self.held: dict = {}                               # class -> the read buffer of a get in flight

    def _min_class(self, size: int) -> int:
        """``slabs_clsid(ext_item_size)`` (storage.c 594 at 1.6.18): the model's one rule, so a size
        above the largest chunk but within -I is the largest class, as the report has it."""
        return slabs_clsid(self.e.settings, self.e.classes, size)

    # -- hooks from the engine ----------------------------------------------------------------

    def noted(self, key, key_size: int, flags: int) -> None:
        """A set begins: the size its header item would have (``do_item_alloc(key, nkey, flags, ...,
        sizeof(item_hdr))``, storage.c 494), kept once the item is stored (:meth:`stored`)."""
        self.pending = self.e.ntotal.of(key_size, self.hdr_value, flags)

    def stored(self, key) -> None:
        """The set's item is linked (after its allocation, which may have evicted the key's old one)."""
        self.hdr_size[key] = self.pending

    def unlinked(self, item: Item, lost: bool) -> None:
        """``STORAGE_delete``: a header item left RAM (evicted, replaced, deleted, expired).  An item
        evicted or expired no longer needs its header's size (a set notes it again)."""
        if lost:
            self.hdr_size.pop(item.key, None)
        ref = self.refs.get(item.key)
        if ref is not None and ref.header is item:
            del self.refs[item.key]
            if (lost and self.flash.valid(ref.page, ref.version)
                    and not (item.exptime and item.exptime <= self.e.now)):
                self.headers_lost += 1                     # evicted, its value on flash now unreachable
                self.headers_lost_flash_free = max(self.headers_lost_flash_free, len(self.flash.free))
            self.flash.delete(ref.page, ref.version, ref.ntotal)

    def invalid(self, item: Item) -> bool:
        """Whether ``item`` is a header whose value's flash page was reused since it was written
        (``storage_validate_item``, storage.c 40-47 at 1.6.18): the crawler reclaims it."""
        ref = self.refs.get(item.key)
        return ref is not None and ref.header is item and not self.flash.valid(ref.page, ref.version)

    def read(self, item: Item) -> bool:
        """A get found ``item``: whether it is a hit (a header's value read from flash, or not a header)."""
        ref = self.refs.get(item.key)
        if ref is None or ref.header is not item:
            return True
        e = self.e
        store = self.store
        addr = store.alloc_pull(ref.cls)           # the read buffer (storage.c 260)
        if addr < 0:
            self.get_oom_extstore += 1
            return False
        self.get_extstore += 1
        if not self.flash.valid(ref.page, ref.version):
            # the page was evicted: the client gets a miss, the header goes (storage.c 398-408);
            # get_hits and get_extstore still count it, as the server's do
            self.miss_from_extstore += 1
            store.unlink(item, lost=True)
            self._hold(ref.cls, addr)
            return True
        if (item.fetched and item.active and item.time > e.now - e.config.update_interval
                and self.recache_rate):
            count = self.recache_counter
            self.recache_counter += 1
            if count % self.recache_rate == 0:           # storage.c 418-431: the buffer is the item again
                self.recache_from_extstore += 1
                store.unlink(item, lost=False)
                back = new_item(item.key, item.hv, ref.cls, e.link_seg, item.exptime, e.now, ref.ntotal, addr)
                back.fetched = self.keeps_fetched            # 1.6.40+ storage.c 453: the header's FETCHED
                store.link(back)
                self.hdr_size[item.key] = item.ntotal     # it may be written again, as the same header
                return True
        self._hold(ref.cls, addr)                       # freed once the response is sent
        return True

    def _hold(self, cls: int, addr: int) -> None:
        """A read buffer in flight: the class's previous one was answered (freed) before it."""
        before = self.held.get(cls)
        if before is not None:
            self.e.slabs.free[cls].append(before)
        self.held[cls] = addr

    # -- the write thread --------------------------------------------------------------------

    def step(self) -> None:
        """One pass of 1.6.18's ``storage_write_thread``, then its sleep (1.6.20's and later:
        :class:`.extstore_write.LaterStorage`)."""
        e = self.e
        self.flash.io_done()
        if self.next_wake >= self.next_maint:
            # storage_compact_thread (storage.c 926-983) wakes every ext_max_sleep, every 10 ms while
            # it compacts a page (engines/extstore_compact.py), and before each sleep wakes the
            # maintenance thread, which evicts the oldest page when none is free (extstore.c 941-999)
            self.next_maint += self.compactor.wake()
            if not self.flash.free:
                self.flash.maintain()
        self.counter += 1
        counter = self.counter
        if self.to_sleep > self.max_sleep:
            self.to_sleep = self.max_sleep
        pool = len(e.slabs.pool)
        free, backoff = e.slabs.free, self.backoff
        cold = e.lrus.q[COLD]
        for x in self._walk():
            b = backoff[x]
            if b and counter % b:
                if self.halve_over is not None and self.to_sleep > self.halve_over:
                    backoff[x] = b // 2
                continue
            if not cold[x].n:                   # storage_write finds no tail: nothing written
                backoff[x] = b + 1
                continue
            chunks_free = len(free[x])
            moved = False
            while True:
                if not self.write(x, self._age(x, chunks_free, pool)):
                    break
                chunks_free += 1
                moved = True
                if self.to_sleep > self.sleep_min:
                    self.to_sleep //= 2
            if not moved:
                backoff[x] = b + 1
            elif b:
                backoff[x] = 1
        self.next_wake += self.to_sleep
        self.to_sleep += 1
        self.free_held()

    def _age(self, x: int, chunks_free: int, pool: int):
        """The age a write from class ``x`` asks (storage.c 617-624): 0 -- any item -- while the class
        has fewer free chunks than ``write_margin_pages`` pages' worth and the global pool holds at
        most ``ext_global_pool_min`` pages, else ``ext_item_age``."""
        if chunks_free < self.e.perslab[x] * self.margin and pool <= self.pool_min:
            return 0
        return self.item_age

    def first_age(self, x: int):
        """The age the next pass's first write from class ``x`` would ask."""
        return self._age(x, len(self.e.slabs.free[x]), len(self.e.slabs.pool))

    def free_held(self) -> None:
        """The end of a pass: the read buffers held through it (``_hold``) answered, freed to their classes."""
        free = self.e.slabs.free
        for cls, addr in self.held.items():
            free[cls].append(addr)
        self.held.clear()

    def stall(self, until: float) -> None:
        """The thread not scheduled before ``until`` seconds of the workload: the operating system's
        doing, not memcached's (a loaded machine; a client whose sets outrun the thread's copies).
        Its sleep (storage.c 647 ``usleep(to_sleep)``) simply ends late; nothing else changes.  For
        report's capacity range (analysis/extstore_fill.py), which asks what a thread that falls
        behind once leaves the header class."""
        self.next_wake = max(self.next_wake, math.floor((until + self.e.phase) * US))

    def _walk(self) -> list[int]:
        """The classes a pass walks: from ``slabs_clsid(ext_item_size)`` up, those holding a page.
        (A class without one holds no item; the model starts its backoff when it gets its first,
        where the server's has grown with every empty pass -- a delay of at most its backoff's
        passes before the class is first flushed.)"""
        slabs = self.e.slabs
        key = (len(slabs.pool), slabs.malloced)
        if key != self._walk_key:
            pages = slabs.pages
            self._walk_key = key
            self._walk_list = [x for x in range(max(self.min_class, 1), len(pages)) if pages[x]]
        return self._walk_list

    def _tail(self, cls: int) -> Item | None:
        """``lru_pull_tail(cls, COLD_LRU, 0, LRU_PULL_RETURN_ITEM)``: expired tail items reclaimed,
        then the tail."""
        store = self.store
        lru = store.lrus.q[COLD][cls]
        if store.reclaim_tail(cls, COLD) >= store.config.tail_tries or not lru.n:     # the one search
            return None
        return lru.next

    def write(self, cls: int, age) -> bool:
        """``storage_write``: whether an item of ``cls`` went to flash."""
        e = self.e
        item = self._tail(cls)
        if item is None:
            return False
        key = item.key
        ref = self.refs.get(key)
        if ref is not None and ref.header is item:
            return False                                   # ITEM_HDR
        if age != 0 and (age is NO_AGE or not e.now - item.time > age):
            return False
        hdr_ntotal = self.hdr_size.pop(key, None)        # a header is never written again
        if hdr_ntotal is None:
            return False
        hcls = e.class_of(hdr_ntotal)
        store = self.store
        addr = store.alloc_pull(hcls)
        if addr < 0:
            e.lrus.counts[hcls].outofmemory += 1
            self.hdr_size[key] = hdr_ntotal
            return False
        if item.seg == GONE:                   # the header's allocation evicted the item
            e.slabs.free[hcls].append(addr)
            return False
        bucket = CHUNKED if item.chunks is not None else DEFAULT
        exptime = item.exptime
        if exptime and 0 <= exptime - e.now < self.low_ttl:
            bucket = LOWTTL
        where = self.flash.write(bucket, item.ntotal)
        if where is None:
            e.slabs.free[hcls].append(addr)                # slabs_free(hdr_it)
            self.hdr_size[key] = hdr_ntotal
            return False
        header = new_item(key, item.hv, hcls, e.link_seg, exptime, e.now, hdr_ntotal, addr)
        if self.keeps_fetched:                             # 1.6.40+ storage.c 574: ITEM_PRESERVE_FLAGS
            header.fetched = item.fetched
        store.unlink(item, lost=False)                     # item_replace
        store.link(header)
        self.refs[key] = FlashRef(header, where[0], where[1], item.ntotal, item.cls, where[2])
        self.compactor.written(where, key, item.ntotal)
        return True

    # -- idle stretches (engines/idle.py; the rules: engines/extstore_idle.py) -----------------

    def idle_key(self, ref: int):
        """None unless a pass would write nothing; then what the other threads' jumps must see
        unchanged -- not the thread's clock, which :meth:`.Idle.skip` moves in closed form."""
        return extstore_idle.idle_key(self)

    def quiet_through(self) -> float:
        return extstore_idle.quiet_through(self)

    def skip(self, seconds: int) -> None:
        """Nothing: the passes of the seconds skipped are taken by :func:`.extstore_idle.catch_up`
        (Idle.skip), up to the other threads' next wake-up."""

    # -- results ---------------------------------------------------------------------------------

    def counters(self) -> dict[str, int]:
        """``stats``' extstore lines, memcached's names."""
        f = self.flash
        return {
            "get_extstore": self.get_extstore, "miss_from_extstore": self.miss_from_extstore,
            "recache_from_extstore": self.recache_from_extstore, "get_oom_extstore": self.get_oom_extstore,
            "extstore_compact_lost": self.compactor.lost, "extstore_compact_rescues": self.compactor.rescues,
            "extstore_compact_skipped": self.compactor.skipped,
            "extstore_page_allocs": f.page_allocs, "extstore_page_evictions": f.page_evictions,
            "extstore_page_reclaims": f.page_reclaims,
            "extstore_objects_evicted": f.objects_evicted, "extstore_bytes_evicted": f.bytes_evicted,
            "extstore_pages_free": len(f.free), "extstore_pages_used": f.pages_used,
            "extstore_objects_written": f.objects_written, "extstore_bytes_written": f.bytes_written,
            "extstore_objects_used": f.objects_used, "extstore_bytes_used": f.bytes_used,
            "extstore_bytes_fragmented": f.pages_used * f.page_size - f.bytes_used,
            "extstore_limit_maxbytes": f.page_count * f.page_size,
            # not memcached's: header items lost while their value was on flash, and the most
            # flash pages free at one such loss (header items starved of RAM, not flash full)
            "header_items_lost": self.headers_lost, "header_items_lost_flash_free": self.headers_lost_flash_free,
        }


def prefill(slabs, page_size: int) -> None:
    """``slabs_prefill_global``: all of ``-m`` into the global pool at start (the slabs' own:
    :meth:`.slabs.Slabs.prefill`; a name of its own here, which a test replaces)."""
    slabs.prefill(page_size)


def check_extstore_replayable(settings) -> None:
    """Refuse (exit 2) a release whose storage threads were not read (profile ``extstore.replay``)."""
    from slabcalc.engines.background import SimulationError

    rules = settings.profile.extstore
    if rules is not None and rules.refusal:
        raise SimulationError(f"simulate does not model -o ext_path on {settings.profile.release}: {rules.refusal}")
    if rules is None or rules.replay is None:
        raise SimulationError(f"simulate does not model -o ext_path on {settings.profile.release}: its storage "
                              f"threads were not read (1.6.18's are: --profile 1.6.18)")
    if settings.extstore is not None and settings.extstore.max_sleep == 0:
        # 1.6.18 storage.c 598-599, 647: each pass sleeps ext_max_sleep at most, 0 us here: the write thread never
        # waits, and a replay, which steps its passes, would never move its clock
        raise SimulationError("simulate does not model -o ext_max_sleep=0: memcached's write thread then never "
                              "sleeps, and a replay steps each of its passes; give ext_max_sleep=1 or more")
