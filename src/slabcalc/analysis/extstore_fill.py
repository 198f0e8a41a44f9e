"""Extstore capacity from the replay (issue 28 item 2): the input's items set one after another,
through the same engine ``simulate`` runs (``engines/extstore.py``, ``flash.py``,
``extstore_automove.py``), until the first eviction.

The static picture (:mod:`slabcalc.analysis.extstore`) counts every flushable item once on flash
and fills all of ``-m`` with header items; a real 1.6.18 does not get there: with extstore all of
``-m`` is handed to the global pool at start (memcached.c 6023), the large classes take pages while
the storage write thread catches up, and the header class is left with the pages it had when the
pool ran dry (memcached issues #541, #794).  So the capacity is what the engine holds when it
starts evicting items (``evictions``: a whole item or a header) -- the first eviction it goes on
from (:data:`SUSTAINED`), not one the write thread recovers from -- or when a flash page is first
evicted, or all the items when none is evicted, with the pages each class ended with.  The hash
table is then sized for those items (assoc.c 2^16 buckets, doubled when items > 1.5 x buckets:
:func:`slabcalc.analysis.process.hashpower_for`).

The items arrive at ``rate`` sets a second (``--rate``; :data:`FILL_RATE` by default, the pace of the
``ext-issue`` paced capture, 20 000 items in 10 s), at most :data:`RATE_KEPT`.  Once the global pool
is down to the write thread's floor, which class gets its last pages is a race the write thread wins
only if it keeps pace: the fill is replayed twice, the thread keeping pace and the thread falling
behind once (:func:`_replay`), and both figures are given, the range ``capacity_behind``
(:attr:`Fill.low`) to ``capacity`` (docs/extstore-capacity.md).

Why not the first eviction (issue 41): the write thread skips a class for ``backoff`` passes, one
more after each pass that wrote nothing from it (1.6.18 storage.c 606-610, 637-641; 1.6.45
storage.c 643-645, 704-708, where a pass that sleeps sets them all back to 1: 714-718).  On 1.6.18
that is thousands of passes before the pool reaches its floor, so a class is visited about every
70th pass (30-200 ms) when flushing starts.  A large class that runs out of free chunks between two
visits, the pool empty, evicts two or three items until the thread comes (items.c 184-205
``do_item_alloc_pull``), then never again; whether it does depends on where the server's clock puts
the passes (a boot 20 ms later in the replay and it does not).  In issue 41's fill neither real
server made them; at ``-m 32`` with values up to 100 KB the real 1.6.18 did.  Such evictions are
counted (``passing``), not taken for ``capacity``; a thread that falls behind is what makes them,
so ``capacity_behind`` counts the first eviction of its replay, passing or not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Iterator

from slabcalc.errors import ValueRefused
from slabcalc.model.distribution import Item
from slabcalc.model.settings import Settings

FILL_RATE = 2000          # sets a second: the ext-issue capture's pace (tests/paced.py ext_issue_case)
BOOT = 1.0                # seconds the server has run at the first set: its threads settled (a set sent the
#                           instant it listens can leave the header class one page fewer: the measure script)
RATE_KEPT = 4000          # sets a second: the fastest pace the real 1.6.18's write thread was measured to keep
#                           (tests/data/extstore-fill: 20 of 20 runs at 500-4 000 a second first evicted where
#                           the replay does); asked for 5 000-8 000 the client here fell behind its schedule and
#                           caught up in bursts, and 4 of 9 runs first evicted with 641-7 294 items, below both
#                           of the replay's figures
RATE_SLOWEST = 500        # sets a second: the slowest pace checked against the real 1.6.18 (-m 16 and -m 64: at
#                           -m 64 the automover's 30 s window then hands the header class 6 pages, and the
#                           replay holds all 60 000 items as the server did, 58 018 written on both)
FILL_LIMIT = 100_000      # sets replayed at most (about 12 s of CPU here): larger inputs keep the static figure
SUSTAINED = (0.5, 1.0)    # seconds: an eviction starts the server evicting when another follows it between
#                           half a second and a second later (the evicting header class: one about every other
#                           set; the write thread's passing misses: two or three within 50 ms, then none for
#                           thousands of sets); one with none after it before the input ends is passing (the
#                           real 1.6.45 held all 40 000 of issue 41's items; the replay made one at set 38 801)


@dataclass(frozen=True)
class Fill:
    """What the replayed fill ended with."""

    items: int                            # curr_items at the first eviction (RAM or a flash page), or at the end
    loaded: int                           # sets sent until then
    total: int                            # sets in the input
    evicted: str | None                   # what ran out first: "RAM" (an item, whole or a header, evicted),
    #                                       "flash" (its oldest page evicted), None (nothing evicted)
    pages: tuple[tuple[int, int], ...]    # (class, total_pages) at the end
    page_bytes: int                       # total_malloced: slab memory malloc'd (with extstore, all of -m)
    written: int                          # extstore_objects_written
    rate: int = FILL_RATE
    in_order: bool = True                 # the file's rows in order; False: distinct items, each its
    #                                       count in a row, in the order they first came
    behind: Fill | None = None            # the write thread fallen behind once as the pool ran dry
    #                                       (_replay's stall), where that ends otherwise; None: the same
    passing: int = 0                      # items evicted before: misses the write thread recovered from
    #                                       (SUSTAINED), which a real server makes or not by its threads' timing
    first: int | None = None              # curr_items at the first eviction, a passing one included (None: none)

    @property
    def low(self) -> int:
        """The range's lower end: the items held when a write thread that falls behind first evicts -- a
        passing miss included, as ``stats`` counts it (the thread late for a class is what makes one) --
        never above ``items``."""
        low = self.behind if self.behind is not None else self
        return min(self.items, low.items, low.first if low.first is not None else low.items)


def _sets(pairs: Iterable[tuple[Item, int]], rate: int, total: int) -> Iterator[tuple]:
    """One set per item, ``count`` in a row for a pair, ``rate`` a second, each a new key, the
    input again from its start until ``total`` sets: the engine's ops."""
    from slabcalc.engines.engine import SET

    n = 0
    while n < total:
        for item, count in pairs:
            for _ in range(min(count, total - n)):
                yield (n / rate, SET, n, item.key, item.value, 0, item.flags or 0)
                n += 1


def check_rate(rate: int) -> int:
    """``rate`` (sets a second), or :class:`ValueRefused` where the replay was not checked (below
    :data:`RATE_SLOWEST`) or cannot answer for it: above
    :data:`RATE_KEPT` the real server's write thread fell further behind than :func:`_replay`'s one
    stall (its first eviction came earlier than either of the replay's ends), by how much depending on
    the machine's CPU."""
    if rate < RATE_SLOWEST:
        raise ValueRefused(f"{rate}: below {RATE_SLOWEST} sets a second the replayed fill was not checked against "
                           f"the real 1.6.18 (docs/extstore-capacity.md): give {RATE_SLOWEST} to {RATE_KEPT}")
    if rate > RATE_KEPT:
        raise ValueRefused(f"{rate}: above {RATE_KEPT} sets a second the real 1.6.18's write thread fell behind "
                           f"further than the replay answers for (docs/extstore-capacity.md); the items held "
                           f"depend on the machine's CPU: give {RATE_KEPT} or less")
    return rate


def fill(settings: Settings, pairs: list[tuple[Item, int]], until: int | None = None,
         rate: int = FILL_RATE, limit: int = FILL_LIMIT, in_order: bool = True) -> Fill | None:
    """Replay ``pairs`` (items and counts, in order) as sets at ``rate`` a second until the first
    eviction -- ``until``: the input again and again, up to that many sets (``place``'s full server of
    one item) -- and None when that is more than ``limit`` sets, an item is known only by its size, or
    ``simulate`` would refuse the settings.  ``behind`` is the same fill with the write thread falling
    behind once, as the pool runs dry (:func:`_replay`); the returned figure is the kept-pace one (the
    range's upper end: :attr:`Fill.low` the lower)."""
    total = sum(count for _, count in pairs) if until is None else until
    if not total or total > limit or any(item.key is None or item.value is None for item, _ in pairs):
        return None
    check_rate(rate)
    from slabcalc.engines.background import SimulationError, background_for
    from slabcalc.engines.simulate import describe_model

    try:        # what simulate refuses (a release whose storage threads were not read, an option) is not replayed
        background = background_for(settings, None)
        describe_model(settings, background)
    except SimulationError:
        return None
    kept, floor = _replay(settings, background, pairs, total, rate, in_order, stall=False)
    if not floor:           # the pool never came down to the thread's floor: no race for its last pages
        return kept
    behind, _ = _replay(settings, background, pairs, total, rate, in_order, stall=True)
    return replace(kept, behind=behind if behind != kept else None)


def _replay(settings, background, pairs, total: int, rate: int, in_order: bool, stall: bool) -> tuple[Fill, bool]:
    """One replay until the server starts evicting (:data:`SUSTAINED`) or evicts a flash page, and
    whether the pool came down to the thread's floor.
    Not ``stall``: the write thread keeps pace -- from the set at which the pool first holds no more
    than the thread's floor until it is empty, the thread's pass skips no class for its backoff
    (:func:`_keep_pace`), the scheduling under which the real 1.6.18 gave the header class the pool's
    last page (23 756 items of issue 41's mix: the replay 23 755-23 757 at any boot offset).
    ``stall``: the storage write thread is not scheduled from the set at which the global pool first
    holds no more than the thread's floor
    (``ext_global_pool_min``, where it starts flushing with age 0: storage.c 618-620) until the pool
    is empty -- the pool's last pages then go to classes whose items were not flushed in time, not to
    the header class, which keeps the pages it had (at least its first, granted past -m: slabs.c 377).
    The real 1.6.18 did this on a loaded machine at 2 000 sets a second, and with a client sending as
    fast as replies come from the moment the pool reached its floor (``tests/data/extstore-fill/``
    ``m16-burst*.json``); a thread that stays behind longer leaves fewer items still."""
    from slabcalc.engines.engine import Engine

    engine = Engine(settings, background, boot=BOOT)
    counts = engine.lrus.counts
    storage = engine.storage
    flash = storage.flash if storage is not None else None
    pool = engine.slabs.pool
    # watch: the pool not yet empty; floor: it came down to the write thread's floor with pages left
    state = {"loaded": 0, "items": 0, "watch": storage is not None, "floor": False}
    watch = _Evictions(counts, flash, rate)

    def evicted() -> bool:
        return watch.evicting(state["loaded"], state["items"])

    def until_evicted():
        for op in _sets(pairs, rate, total):
            if evicted():
                return
            if state["watch"]:
                if not pool:
                    state["watch"] = False                 # the pool is empty: the thread runs again
                elif len(pool) <= storage.pool_min:
                    state["floor"] = True
                    if stall:
                        storage.stall(op[0] + 1 / rate)    # asleep through the next set too
                    else:
                        _keep_pace(storage)
            state["items"] = engine.curr_items()
            state["loaded"] += 1
            yield op

    engine.run(until_evicted())
    gone = watch.gone       # an eviction in the input's last second, none after it: not known to go on
    loaded, items = watch.first if gone else (state["loaded"], engine.curr_items())
    passing = watch.seen if not gone else watch.passing
    result = engine.results(None)
    pages = tuple((c.slab_class.id, c.pages) for c in result.classes if c.pages)
    page_bytes = result.totals.total_malloced      # all of -m: prefilled into the pool at start
    written = storage.counters().get("extstore_objects_written", 0) if storage else 0
    return (Fill(items, loaded, total, gone, pages, page_bytes, written, rate, in_order, passing=passing,
                 first=watch.any[1] if watch.any else None),
            state["floor"])


class _Evictions:
    """Whether the server has started evicting, read before each set: a flash page evicted with its values
    (``extstore_page_evictions``), or an item evicted from RAM that another follows between
    :data:`SUSTAINED` seconds later; the evictions of episodes that stop before are ``passing``."""

    def __init__(self, counts, flash, rate: int):
        self.counts, self.flash = counts, flash
        self.least, self.most = (int(rate * s) for s in SUSTAINED)      # in sets
        self.first: tuple[int, int] | None = None    # (sets, items) at an eviction not yet known to go on
        self.any: tuple[int, int] | None = None      # (sets, items) at the first eviction of all
        self.seen = self.passing = 0
        self.gone: str | None = None

    def evicting(self, loaded: int, items: int) -> bool:
        if self.flash is not None and self.flash.page_evictions > 0:
            self.gone, self.first = "flash", (loaded, items)
            return True
        seen = sum(c.evicted for c in self.counts)
        first = self.first
        if first is not None and loaded - first[0] > self.most:        # none came: the thread recovered
            self.passing = self.seen
            self.first = first = None
        if seen > self.seen:
            self.seen = seen
            self.any = self.any or (loaded, items)
            if first is None:
                self.first = (loaded, items)
            elif loaded - first[0] >= self.least:
                self.gone = "RAM"
                return True
        return False


def _keep_pace(storage) -> None:
    """The write thread visits every class at its next pass: each class's backoff (the passes it is
    skipped for, 1.6.18 storage.c 606-610; 1.6.45 643-645) brought down to 1, as if the passes that
    found nothing to write had come as the flushing began -- the scheduling under which a thread keeps
    pace.  Not a rule of memcached: one of the two orders the race for the pool's last pages can take."""
    backoff = storage.backoff
    for x, b in enumerate(backoff):
        if b > 1:
            backoff[x] = 1


class InputOrder:
    """The rows of an item file in their order, for :func:`fill` (an ``arrivals`` callback, as
    :class:`slabcalc.analysis.arrival.FileOrder` is): each block of rows (a list of :class:`Item` or
    an :class:`ItemColumns`) appended, until more than ``limit`` rows came (``pairs`` is then None:
    too long to replay).  ``result`` is None: the capacity is the extstore report's."""

    result = None

    def __init__(self, limit: int = FILL_LIMIT):
        self.limit = limit
        self.rows: list[tuple[Item, int]] | None = []

    def __call__(self, rows) -> None:
        from slabcalc.model.distribution import ItemColumns

        if self.rows is None:
            return
        if isinstance(rows, ItemColumns):
            self.rows.extend((item, count) for item, count, _ in rows.triples())
        else:
            self.rows.extend((item, 1) for item in rows)
        if len(self.rows) > self.limit:
            self.rows = None

    @property
    def pairs(self) -> list[tuple[Item, int]] | None:
        return self.rows
