"""The op loop: sets, gets, deletes and touches on the workload's clock, background threads between them.

Requests run memcached's synchronous paths (1.6.18 ``proto_text.c``,
``items.c``): a set allocates first (which may evict, even the key's own old
item) and then replaces the old item; an item with ``exptime <=
current_time`` is freed when a request finds it; a hit marks FETCHED, then
ACTIVE (segmented), or moves an item last bumped more than 60 s ago to its
LRU's head (compat).  A set memcached cannot store deletes the key's old item.

memcached's clock (``current_time``) has one-second resolution: the workload
time ``t`` is second ``floor(t)`` of the server's clock.  A TTL is a duration:
``exptime = current_time + ttl``.

Between requests, the background threads run at the instants the real ones
wake (:mod:`.maintainer`, :mod:`.crawler`, :mod:`.automove`, :mod:`.mover`),
on the same clock, from the server's start (``boot`` seconds before the
workload's time 0); the idle stretches between them, where the threads only
repeat themselves, are jumped over to the next instant anything can change
(:mod:`.idle`; ``fast_forward=False`` steps every wake-up).  A page move
asked for during a request is carried out when the request is done (the
mover is a thread of its own that needs milliseconds for a page).

This module is long because memcached's request paths (set, get, touch, delete, the chunked set) run in its one
loop beside the clock that wakes the threads; the item operations they share with the threads are the store's
(:mod:`.store`: link, unlink, bump, the tail's eviction), the threads are modules of their own.
"""

from __future__ import annotations

import gc
import math
from typing import TYPE_CHECKING, Any, Callable, Final, Iterable

from slabcalc._native import mypyc_attr
from slabcalc.engines.background import Background
from slabcalc.engines.config import replay_config
from slabcalc.engines.crawler import Crawler
from slabcalc.engines.lru import GONE, TEMP, Chunked, Item, Lrus, new_item
from slabcalc.engines.maintainer import Maintainer
from slabcalc.engines.readout import simulation, timeline_row, timeline_rows
from slabcalc.engines.results import Model, Simulation, TimelineRow
from slabcalc.engines.slabs import Slabs
from slabcalc.engines.store import COUNTERS, Store
from slabcalc.engines.table import Table, key_hash
from slabcalc.errors import SimulationError
from slabcalc.model.classes import class_by_size, class_for, slab_classes
from slabcalc.model.ntotal import Ntotal
from slabcalc.model.ops import (CLOCK_MAX, DELETE, FILL, GET, OP_NAMES, SET, TIME_MAX,  # noqa: F401 (re-exported)
                                TOUCH, UPTIME_MAX)
from slabcalc.model.placement import CHUNKED, TOO_LARGE, check_placeable, place
from slabcalc.model.settings import Settings

if TYPE_CHECKING:
    from slabcalc.engines.temp_lru import TempLru

CLOCK_START: Final = 62        # memcached.c: process_started = time(0) - ITEM_UPDATE_INTERVAL - 2
US: Final = 1_000_000
SIZE_TABLE_MAX: Final = 1 << 20     # sizes up to 1 MB find their class in a table (class_by_size), larger in a dict
IDLE_AHEAD: Final = 2 * US     # look for an idle stretch to jump over only with this much time before the next request
COMPILED: Final = not __file__.endswith(".py")     # built by mypyc (setup.py): Item holds its ints unboxed
LOST_MAX: Final = 1 << 20      # keys lost (evicted, expired) remembered for misses by class: the newest ~1 M


Shape = tuple[int, "tuple[tuple[int, int], ...] | None"]     # a set's chunk plan: header class, body chunks
Op = tuple[float, int, Any, int, int, int, int]     # time, op, key, key_size, value_size, ttl, flags

def server_start(boot: float) -> int:
    """Whole seconds from the server's start to the workload's time 0 (its clock ticks this many
    times before the workload begins; the fraction of a second left is the engine's ``phase``).

    memcached's clock ticks at its start + k s (memcached.c clock_handler, re-armed a second after it
    runs: 1.6.18 memcached.c 3925-3954, current_time from whole seconds 3966-3968): a server started
    0.5 s before a client's whole-second bursts ticks half a second into each, and an item set at the
    burst expires half a second before the burst of its last second,
    early enough for the LRU maintainer to free its chunk first.  The engine's clock runs ``phase`` =
    ``boot - server_start(boot)`` seconds ahead of the workload's, so that its ticks fall on its whole
    seconds (:meth:`Engine.clock`).  Rounding the start to a whole second instead put every tick on the
    bursts: at -m 256, 2 000 sets a second of 15 s items, the sets of second 16 took new chunks ahead of
    the maintainer and class 12 held 39 pages where two real 1.6.18 runs held 37 (tests/data/fidelity)."""
    return math.floor(boot)


def _next_wake(actor: Any) -> float:
    return actor.next_wake


@mypyc_attr(allow_interpreted_subclasses=True)       # compiled (setup.py), tests still subclass it
class Engine:
    """memcached's memory, changed one request at a time, with its background threads."""

    def __init__(self, settings: Settings, background: Background, boot: float = 0.0, share: float = 1.0,
                 fast_forward: bool = True, tick_us: int = US):
        classes = slab_classes(settings)
        check_placeable(settings, classes)
        self.settings, self.classes, self.bg = settings, classes, background
        self.config = config = replay_config(background, settings.profile.release)      # read once, shared: frozen
        lead: int = server_start(boot)
        if not 0 <= lead <= UPTIME_MAX:
            raise SimulationError(f"an uptime of {boot:g} s at the workload's start is past {UPTIME_MAX} s "
                                  f"(388 days: the replay's clock holds 31 bits)")
        self.epoch = CLOCK_START + lead
        self.phase: float = boot - lead     # the engine's clock is the workload's plus this (server_start)
        if tick_us <= 0:
            raise SimulationError(f"a tick of {tick_us} us: the server's clock must tick forward")
        # the microseconds from one of the server's ticks to the next (US: on the engine's whole seconds;
        # more: a real server's tick, measured late: simulate's tick_us)
        self.tick_us: int = tick_us
        page_len = [0] + [settings.page_length(c.chunk_size, c.perslab) for c in classes]
        slabs = Slabs([0] + [c.chunk_size for c in classes], [0] + [c.perslab for c in classes], page_len,
                      settings.maxbytes, share)
        # the memory the request paths and the threads share (engines/store.py); the engine's own
        # names for its parts are the store's objects, never copies
        self.store = store = Store(config, slabs, settings.slab_page_size, LOST_MAX, self.epoch)
        self.slabs, self.lrus, self.table, self.tally = slabs, store.lrus, store.table, store.tally
        self.size, self.perslab, self.chunked = store.size, store.perslab, store.chunked
        self.moved_in, self.moved_out, self.link_seg = store.moved_in, store.moved_out, store.link_seg
        self.temp: TempLru | None = None    # -o temporary_ttl: which items link in TEMP (engines/temp_lru.py)
        if background.temp_lru:
            from slabcalc.engines.temp_lru import TempLru

            self.temp = TempLru(store, background)
        self.largest = classes[-1].id
        # told each get's key and whether it hit (a sampled replay counts reads: engines.sample)
        self.on_get: Callable[[str | int, bool], None] | None = None
        self.chunk_fallback = settings.profile.chunk_tail_fallback
        self.ntotal = Ntotal(settings)      # compiled with the engine: a native call per set
        self.max_single = min(classes[-1].chunk_size, settings.item_size_max)
        self._class_of: dict[int, int] = {}
        self._class_by_size = class_by_size(classes, min(self.max_single, SIZE_TABLE_MAX))
        self._sizes: dict[int, int] | None = None if COMPILED else {}
        self._shapes: dict[tuple[int, int, int], Shape | None] = {}
        self.actors: list = []          # the threads that wake on the clock, each with next_wake and step()
        self.maintainer = self._maintainer(background, lead)
        self.mover_thread: Any = None    # 1.6.34+: the page mover's own thread (automove.MoverThread)
        if background.automover_runs and background.automover_thread == "mover":
            from slabcalc.engines.automove import MoverThread

            self.mover_thread = MoverThread(self, start=-lead)
            self.actors.append(self.mover_thread)
        if settings.extstore is not None:
            from slabcalc.engines.extstore_attach import attach

            attach(self, lead)
        self.next_wake: float = float(min((a.next_wake for a in self.actors), default=math.inf))
        self.idle = None                # fast_forward: idle stretches jumped over, not stepped (.idle)
        if fast_forward and self.actors and tick_us == US:      # idle.py's seconds are whole ones
            from slabcalc.engines.idle import Idle

            self.idle = Idle(self)
        if background.slab_reassign and background.slab_automove == 2:
            from slabcalc.engines.automove import PickAny

            store.evictions.pick_any = PickAny(self)    # slab_automove=2: the class to take a page from

    def _maintainer(self, background: Background, lead: int) -> Maintainer:
        """The LRU maintainer, with the crawler and the automover it runs: always one, without
        ``-o lru_maintainer`` a null one (no thread, no crawler, no automover)."""
        runs = background.lru_maintainer
        crawler = Crawler(self.store, background, self.temp) if runs and background.crawls else None
        automover = None
        if runs and background.automover_runs and background.automover_thread == "maintainer":
            from slabcalc.engines.automove import WindowedAutomover

            automover = WindowedAutomover(self)
        maintainer = Maintainer(self.store, self.temp, start=-lead, runs=runs, crawler=crawler, automover=automover)
        if runs:
            self.actors.append(maintainer)
        return maintainer

    # -- the store's state, by the engine's names (for the threads in plain Python, and tests) -----

    @property
    def now(self) -> int:
        """``current_time`` (the store's clock)."""
        return self.store.now

    @now.setter
    def now(self, value: int) -> None:
        self.store.now = value

    @property
    def time(self) -> float | None:
        return self.store.time

    @property
    def bumps(self) -> list:
        return self.store.bumps

    @bumps.setter
    def bumps(self, value: list) -> None:
        self.store.bumps = value

    @property
    def pending_move(self) -> tuple[int, int, bool] | None:
        return self.store.pending_move

    @pending_move.setter
    def pending_move(self, value: tuple[int, int, bool] | None) -> None:
        self.store.pending_move = value

    @property
    def storage(self) -> Any:
        """-o ext_path: the storage write thread and flash (.extstore; None without), the store's."""
        return self.store.storage

    @storage.setter
    def storage(self, value: Any) -> None:
        self.store.storage = value

    @property
    def peak(self) -> tuple[int, float | None, int | None]:
        """Free bytes elsewhere at an eviction, time, class (the store's :class:`.store.Evictions`)."""
        return self.store.evictions.peak

    # -- items -------------------------------------------------------------------------

    @property
    def counts(self) -> dict[str, int]:
        """The engine's counters by name, as they stand (a copy: they are bumped in ``tally``)."""
        return {name: getattr(self.tally, name) for name in COUNTERS}

    @property
    def index(self) -> dict[object, Item]:
        """The items held, by key (built at each call: for inspection; the request path reads ``table``)."""
        return {item.key: item for item in self.table.values() if item.seg != GONE}

    def curr_items(self) -> int:
        return self.table.n - self.table.lost.n

    def class_of(self, ntotal: int) -> int:
        """``slabs_clsid`` of an item that fits one chunk: from the table of sizes up to 1 MB, past it
        from ``class_for`` (once a size)."""
        by_size = self._class_by_size
        if ntotal < len(by_size):
            return by_size[ntotal]
        cls = self._class_of.get(ntotal)
        if cls is None:
            found = class_for(self.classes, ntotal)
            assert found is not None            # ntotal <= max_single: the largest class holds it
            cls = self._class_of[ntotal] = found.id
        return cls

    def shape(self, key_size: int, value_size: int, flags: int) -> Shape | None:
        """A larger item's chunk plan ``(header class, [(class, requested), ...])``, or None if too large."""
        spec = (key_size, value_size, flags)
        if spec in self._shapes:
            return self._shapes[spec]
        placement = place(self.settings, key_size, value_size, flags, self.classes)
        shape: Shape | None
        if placement.status == TOO_LARGE:
            shape = None
        elif placement.status == CHUNKED:
            head, *body = placement.chunks
            shape = (head.class_id, tuple((c.class_id, c.requested) for c in body))
        else:
            shape = (placement.chunks[0].class_id, None)
        self._shapes[spec] = shape
        return shape

    def store_item(self, key, cls: int, ttl: int, ntotal: int, addr: int, chunks) -> None:
        """``do_store_item`` for a set: the old item (if any) goes, the new one is linked."""
        hv = key_hash(key)
        old = self.table.at(hv, key)
        now = self.store.now
        if old is not None:
            if old.seg == GONE:             # a lost key's marker
                self.table.unlose(old)
            else:
                if old.exptime and old.exptime <= now:
                    self.tally.get_expired += 1
                self.store.unlink(old, lost=False)
        exptime = self.store.exptime(ttl)
        seg = self.link_seg
        if self.temp is not None and self.temp.holds(exptime, now):
            seg = TEMP                  # do_item_alloc: id |= TEMP_LRU (items.c 325-327)
        self.store.link(new_item(key, hv, cls, seg, exptime, now, ntotal, addr) if chunks is None
                        else Chunked(key, hv, cls, seg, exptime, now, ntotal, chunks))
        if self.store.storage is not None:
            self.store.storage.stored(key)

    def set(self, key, key_size: int, value_size: int, ttl: int, flags: int) -> None:
        self.tally.sets += 1
        size = self.ntotal.of(key_size, value_size, flags)
        if self.store.storage is not None:
            self.store.storage.noted(key, key_size, flags)
        if size > self.max_single:
            self.set_large(key, key_size, value_size, flags, ttl, size)
            return
        size = self._sizes.setdefault(size, size) if self._sizes is not None else size     # plain: one int a size
        cls = self.class_of(size)
        slabs = self.slabs
        free = slabs.free[cls]
        if free and (self.config.segmented or self.store.tail_live(cls)):
            addr = free.pop()           # do_item_alloc_pull's first round, when it can only do this
        elif not free and slabs.refuses(cls):        # no chunk, and no page to be had
            addr = self.store.evict_tail(cls)
        else:
            addr = self.store.alloc_pull(cls)
        if addr < 0:
            self.lrus.counts[cls].outofmemory += 1
            self.store.forget(key)
            return
        self.store_item(key, cls, ttl, size, addr, None)

    def set_large(self, key, key_size: int, value_size: int, flags: int, ttl: int, size: int) -> None:
        """A set of an item above the largest chunk: chunked (``do_item_alloc_chunk``), or too large."""
        shape = self.shape(key_size, value_size, flags)
        if shape is None:
            self.tally.too_large += 1
            self.store.forget(key)
            return
        head, body = shape
        alloc_pull = self.store.alloc_pull
        if body is None:                       # one chunk after all (e.g. the largest class)
            addr = alloc_pull(head)
            if addr < 0:
                self.lrus.counts[head].outofmemory += 1
                self.store.forget(key)
                return
            self.store_item(key, head, ttl, size, addr, None)
            return
        largest = self.largest
        addr = alloc_pull(head)
        if addr < 0:
            self.lrus.counts[largest].outofmemory += 1     # counted on the item's own class (the LRU's)
            self.store.forget(key)
            return
        chunks = [(head, addr)]
        chunk_max = self.size[largest]
        for cls, requested in body:
            addr = alloc_pull(cls)
            if addr < 0 and self.chunk_fallback and requested != chunk_max:
                cls, addr = largest, alloc_pull(largest)   # 1.6.17+: a full chunk instead of the tail
            if addr >= 0:
                chunks.append((cls, addr))
                continue
            # "SERVER_ERROR Out of memory during read": the partial item is freed, the old kept
            free = self.slabs.free
            for c, a in chunks:
                free[c].append(a)
            self.tally.chunk_failures += 1
            return
        self.store_item(key, largest, ttl, size, -1, chunks)

    def fetch(self, key, op: int, ttl: int) -> bool:
        """get, touch or delete: ``do_item_get`` (expired items freed), then the op's own rule;
        whether the key was found."""
        counts = self.tally
        item = self.table.find(key)
        lost = 0
        if item is not None and item.seg == GONE:
            lost, item = item.cls, None
        elif item is not None and item.exptime and item.exptime <= self.store.now:
            counts.get_expired += 1
            lost = item.cls
            self.store.unlink(item)
            item = None
        if op == DELETE:
            counts.deletes += 1
            if item is not None:
                counts.delete_hits += 1
                self.store.unlink(item, lost=False)
            return item is not None
        if op == GET:
            counts.gets += 1
            if self.on_get is not None:
                self.on_get(key, item is not None)
            if item is None:
                counts.misses += 1
                if lost:
                    self.lrus.counts[lost].misses += 1
                return False
            counts.hits += 1
            self.lrus.counts[item.cls].hits += 1
        else:
            counts.touches += 1
            if item is None:
                return False
            counts.touch_hits += 1
        self.store.bump(item)
        if op == TOUCH:
            item.exptime = self.store.exptime(ttl)
            self.lrus.version[item.cls].n += 1
        elif self.store.storage is not None and not self.store.storage.read(item):     # a header: read from flash
            counts.hits -= 1
            counts.misses += 1
            self.lrus.counts[item.cls].hits -= 1
            return False
        return True

    # -- the clock -----------------------------------------------------------------------

    def clock(self, t: float) -> None:
        """The workload reached time ``t``: background wake-ups before it, then its second."""
        if t >= TIME_MAX:
            raise SimulationError(f"workload time {t:g} s is past {TIME_MAX - 1} s (66 years: the replay's clock)")
        ticks = t + self.phase          # the server's clock: its ticks on whole seconds (server_start)
        if self.next_wake <= ticks * US:
            self._background_until(ticks * US)
        if self.tick_us == US:
            self.store.now = self.epoch + math.floor(ticks)
        else:                           # each tick tick_us after the one before (simulate's tick_us)
            self.store.now = self.epoch + math.floor(ticks * US) // self.tick_us
        self.store.time = t

    def _background_until(self, t_us: float) -> None:
        """Every thread's wake-ups at or before ``t_us``, in time order (idle seconds jumped over)."""
        actors, epoch, idle, tick_us = self.actors, self.epoch, self.idle, self.tick_us
        # declared: `actors[0] is self.maintainer` narrows it to actors' Any, and the calls would be Python's
        lone: Maintainer | None = self.maintainer if len(actors) == 1 and actors[0] is self.maintainer else None
        while True:
            if lone is not None:        # the maintainer alone (1.6.18's defaults): typed, native calls
                wake: int = lone.next_wake
            else:
                actor = min(actors, key=_next_wake) if len(actors) > 1 else actors[0]
                wake = actor.next_wake          # typed: compiled, the clock's arithmetic is native
            if wake > t_us:
                break
            if idle is not None and wake + IDLE_AHEAD <= t_us and idle.skip(wake, t_us):
                continue
            self.store.now = epoch + wake // tick_us     # whole microseconds: exact at any time
            if lone is not None:
                lone.step()
            else:
                actor.step()
            if self.store.pending_move is not None:
                self.move_pending(wake)
        if lone is not None:
            self.next_wake = float(lone.next_wake)
        else:
            self.next_wake = float(actors[0].next_wake if len(actors) == 1 else min(map(_next_wake, actors)))

    def move_pending(self, now_us: int) -> None:
        """A page move asked for (``slabs_reassign``) at ``now_us`` on the server's clock: carried out
        at once, or handed to the mover's own thread, which the request wakes (1.6.34+)."""
        if self.store.pending_move is not None:
            source, dest, allow_evictions = self.store.pending_move
            self.store.pending_move = None
            if self.mover_thread is not None:
                self.mover_thread.begin(source, dest, allow_evictions, now_us, asked=True)
                self.next_wake = min(self.next_wake, float(self.mover_thread.next_wake))
                return
            from slabcalc.engines.mover import move_page

            move_page(self.store, source, dest)     # a mover that drops: the request's evictions mean nothing

    # -- the workload ------------------------------------------------------------------------

    def run(self, ops: Iterable[Op], every: float | None = None, at: Iterable[float] = ()) -> list:
        """Apply ``(time, op, key, key_size, value_size, ttl, flags)`` operations in order.

        ``every`` adds a timeline row per class at every multiple of that many
        seconds; ``at`` lists workload times at which to keep the whole state
        (:attr:`snapshots`: ``(time, Simulation)``, before that time's
        operations).  Returns the timeline.
        """
        timeline: list[TimelineRow] = []
        marks = sorted(at)
        self.snapshots: list = []
        next_row, step = (-1.0, every) if every else (math.inf, 1.0)
        last_evicted = [0] * len(self.size)
        counts = self.tally
        collecting = gc.isenabled()
        gc.disable()            # item records are many and hold no garbage: the collector would only rescan them
        try:
            for t, op, key, key_size, value_size, ttl, flags in ops:
                counts.ops += 1
                while marks and t >= marks[0]:
                    self.snapshot_at(marks.pop(0))
                if t >= next_row:
                    if next_row < 0:
                        next_row = (t // step + 1) * step
                    else:
                        next_row = timeline_rows(self, timeline, next_row, step, t, last_evicted)
                self.clock(t)       # self.x(): a direct call when compiled (a bound method is a Python call)
                if op == FILL:      # a look-aside read: get, and set on a miss
                    if self.fetch(key, GET, ttl):
                        continue
                    op = SET
                if op == SET:
                    self.set(key, key_size, value_size, ttl, flags)
                    if self.store.pending_move is not None:
                        self.move_pending(math.floor((t + self.phase) * US))
                else:
                    self.fetch(key, op, ttl)
            for mark in marks:
                self.snapshot_at(mark)
        finally:
            if collecting:
                gc.enable()
        if every and self.store.time is not None:     # the state after the last operation
            end = next_row if next_row > 0 else (self.store.time // every + 1) * every
            timeline_row(self, timeline, end, last_evicted)
        return timeline

    def snapshot_at(self, when: float) -> None:
        """The state just before workload time ``when`` (background work before it included)."""
        self.clock(when - 1e-6)
        self.snapshots.append((when, self.results(None)))

    # -- results ------------------------------------------------------------------------------

    def results(self, model: Model | None, timeline=()) -> Simulation:
        """The state now, as memcached's counters (:func:`.readout.simulation`)."""
        return simulation(self, model, timeline)
