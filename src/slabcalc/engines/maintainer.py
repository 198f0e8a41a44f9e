"""The LRU maintainer thread on the workload's clock (1.6.18 ``items.c`` 1440-1700).

The thread sleeps, wakes, and for every class whose own wait is over runs
``lru_maintainer_juggle``; a class's wait doubles down to nothing while it
finds work and grows by an eighth (from 1 ms up to 1 s) while it does not.
The thread sleeps for the shortest wait left (at most 1 s; 1 ms after it
moved queued bumps, or after the automover sent a page to the global pool);
a sleep of zero is no sleep.  Once per second of ``current_time`` it also
checks the LRU crawler's schedule (:mod:`.crawler`) and, with
``slab_automove=1``, runs the automover (:mod:`.automove`).

The model runs each wake-up at its instant of workload time, between the
requests before and after it; a zero sleep runs the next wake-up at the same
instant.  The real thread's start is not the workload's: its phase against
the requests, and how long each wake-up takes, are the timing jitter the
paced tests' tolerances absorb.

``lru_maintainer_juggle(cls)``: ``cold_age`` is the age of the COLD tail,
``hot_age = cold_age * hot_max_factor`` and ``warm_age = cold_age *
warm_max_factor`` (truncated), ``total_bytes`` the item bytes in HOT, WARM
and COLD; up to ``juggles`` passes each pull the HOT tail (or, when that did
nothing, the WARM tail) and then the COLD tail, until a pass does nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from slabcalc._native import i32, i64
from slabcalc.engines.config import ReplayConfig
from slabcalc.engines.lru import COLD, HOT, TEMP, WARM, Lru, Lrus
from slabcalc.engines.store import NEVER, Store
from slabcalc.errors import AgeUndefined
from slabcalc.model.ops import CLOCK_MAX

if TYPE_CHECKING:        # the type only, for mypyc's direct calls
    from slabcalc.engines.temp_lru import TempLru

US: Final = 1_000_000
PHANTOM: Final = 64        # the classes past the largest (MAX_NUMBER_OF_SLAB_CLASSES is 64)


class Wait:
    """One class's place in the thread's schedule (items.c 1627-1651): its wait (``backoff``), the
    point of the countdown clock at which it is next due, and the second and LRU version at which it
    was last seen idle (-1: never).  An object a class, its ints native fields when compiled: a
    wake-up reads and writes them without boxing (they outgrow the small ints Python caches)."""

    __slots__ = ("cls", "backoff", "due", "idle_second", "idle_version")
    cls: i64
    backoff: i64
    due: i64
    idle_second: i64
    idle_version: i64

    def __init__(self, cls: int) -> None:
        self.cls = cls
        self.backoff = self.due = 0
        self.idle_second = self.idle_version = -1


class Maintainer:
    """Compiled with the engine (setup.py): its fields are declared so that mypyc holds them unboxed,
    and it holds the store (:mod:`.store`), typed, so that what a wake-up reads of it (about one
    wake-up per replayed operation) is a native field, not a Python attribute lookup.  It is given
    the store, the temporary LRU, the crawler and the automover it runs: never the engine.

    A server without the thread (``-o no_lru_maintainer``, 1.4) has a null one (``runs`` False): no
    crawler, no automover, no juggles, and never among the engine's threads on the clock."""

    store: Store
    lrus: Lrus
    temp: TempLru | None
    config: ReplayConfig
    next_wake: i64
    to_sleep: i64
    clock: i64
    waits: list[Wait]
    slots: list[int]
    queue: list[Wait]
    earliest: i64
    last_crawler_check: i64     # the second of the last check, NEVER before the first: native, not an
    last_automove_check: i64    # int-or-None an object compare would read at every wake-up
    crawler: Any
    automover: Any
    juggling: bool
    runs: bool          # False: the null maintainer of a server without one (never on the clock)

    def __init__(self, store: Store, temp: TempLru | None, start: float, runs: bool = True, crawler: Any = None,
                 automover: Any = None) -> None:
        self.store = store
        self.runs = runs
        self.lrus, self.temp = store.lrus, temp
        self.config = config = store.config
        self.next_wake = round(start * US)     # the thread starts with the server (whole microseconds)
        self.to_sleep = config.min_sleep
        # Every class memcached has (1..63), used or not, keeps its own wait, counted down by the
        # thread's last sleep at each wake-up (a zero sleep counts as 1 ms).  Held as the point of
        # that countdown clock (``self.clock``) at which each class is due (``Wait.due``), and the
        # earliest of them, so a wake-up with no class due looks at none; the classes past this
        # table's largest never hold items and share one entry (PHANTOM).  ``queue`` holds the
        # classes' waits sorted by (due, class), the earliest last: a wake-up takes the few classes
        # due off its end, in that order, and looks at no other (a scan of all 63 and a sort at
        # each wake-up cost more than the juggles); a wait put back goes in by binary search.
        self.clock = 0
        self.waits = [Wait(cls) for cls in range(PHANTOM + 1)]
        self.slots = list(range(1, len(store.size))) + ([PHANTOM] if len(store.size) <= 63 else [])
        self.queue = [self.waits[cls] for cls in reversed(self.slots)]     # all due at 0: class 1 last
        self.earliest = 0
        self.last_crawler_check = NEVER
        self.last_automove_check = NEVER
        self.crawler, self.automover = crawler, automover     # run once a second (the engine's: .crawler, .automove)
        self.juggling = runs

    def step(self) -> None:
        """The wake-up due at :attr:`next_wake` (the engine set the clock to it)."""
        self.next_wake += self.wake()

    def wake(self) -> int:
        """``lru_maintainer_thread``'s loop body; the microseconds it then sleeps."""
        e = self.store
        to_sleep = self.to_sleep
        counted: i64 = 1000             # a sleep counts as 1 ms at least (not a ternary: mypyc boxes i64-or-int)
        if to_sleep > counted:
            counted = to_sleep
        self.clock = clock = self.clock + counted
        max_sleep = self.config.max_sleep
        if self.earliest <= clock:
            self._juggle_due(clock)
        to_sleep = self.earliest - clock
        if to_sleep > max_sleep:
            to_sleep = max_sleep
        if e.bumps:                             # lru_maintainer_bumps(): queued COLD hits to WARM
            bumps, e.bumps = e.bumps, []
            for item in bumps:
                e.update(item)
            if to_sleep > 1000:
                to_sleep = 1000
        now = e.now
        # The thread checks the crawler's schedule, then runs the automover (items.c 1668-1694); a crawl
        # it starts is the crawler thread's, woken by lru_crawler_start, and frees its items after this
        # run has read the classes' free chunks: the automover sees them a second later.  (Run first,
        # the model's instant crawl gave r01135 of the random corpus its storm of moves to the pool a
        # second early, a page more from each class and the later classes' windows out of phase.)
        if self.automover is not None and self.last_automove_check != now:
            source, dest = self.automover.run()
            if source != -1 and dest != -1 and e.pending_move is None:
                e.pending_move = (source, dest, False)  # slabs_reassign(src, dst)
            if dest != 0:
                self.last_automove_check = now
            else:
                to_sleep = 1000
        if self.crawler is not None and self.last_crawler_check != now:
            self.crawler.check()
            self.last_crawler_check = now
        self.to_sleep = to_sleep
        return to_sleep

    @property
    def backoff(self) -> list[int]:
        """Every class's wait, by class (0 for the classes past the largest, PHANTOM's theirs)."""
        return [wait.backoff for wait in self.waits]

    def _juggle_due(self, clock: i64) -> None:
        """Every class due at ``clock``, in the order of (due, class), juggled; each one's wait after
        it (items.c 1627-1651), and the earliest due of all classes."""
        queue = self.queue
        rest: i64 = len(queue)          # queue[:rest]: the classes not due, and those put back
        while rest > 0 and queue[rest - 1].due <= clock:
            rest -= 1
        min_sleep, max_sleep = self.config.min_sleep, self.config.max_sleep
        e = self.store
        now, version = e.now, self.lrus.version
        juggling = self.juggling
        for _due in range(len(queue) - rest):      # named: mypyc boxes `_` (an object) at every turn
            wait = queue.pop()          # the earliest due left
            cls = wait.cls
            b = wait.backoff
            if (not juggling or cls == PHANTOM or (wait.idle_second == now and wait.idle_version == version[cls].n)
                    or not self.juggle(cls)):
                if b:
                    b += b >> 3
                    if b > max_sleep:
                        b = max_sleep
                else:
                    b = min_sleep
            elif b > 0:
                b >>= 1
                if b < min_sleep:
                    b = 0
            wait.backoff = b
            wait.due = clock + b
            _insert(queue, rest, wait)  # among queue[:rest] only: a wait of 0 is due now, not again
            rest += 1
        self.earliest = queue[-1].due

    def juggle(self, cls: int) -> int:
        """``lru_maintainer_juggle``: passes over the class's LRU tails that moved something."""
        e = self.store
        lrus = self.lrus
        now: i32 = e.now
        q = lrus.q
        hot, warm, cold = q[HOT][cls], q[WARM][cls], q[COLD][cls]
        cold_age: int = now - cold.next.time if cold.n else 0      # an int: i64 * float is not typed
        config = self.config
        hot_age, warm_age = int(cold_age * config.hot_max_factor), int(cold_age * config.warm_max_factor)
        if hot_age > CLOCK_MAX or warm_age > CLOCK_MAX:
            hot_age, warm_age = self._past_the_clock(cold_age, hot_age, warm_age)
        total = cold.bytes + hot.bytes + warm.bytes
        temp = self.temp
        reclaimed = temp.juggle(cls) if temp is not None else 0     # items.c 1406-1415 (TEMP moves no age or byte count)
        if self._idle(hot, warm, cold, now, total, hot_age, warm_age):
            if not reclaimed:
                # nothing changes the answer until the class's LRUs or the second do (wake() checks)
                wait = self.waits[cls]
                wait.idle_second, wait.idle_version = i64(now), lrus.version[cls].n
            return reclaimed
        did = reclaimed
        segmented = config.segmented
        for _pass in range(config.juggles):
            more = 1 if (e.pull_tail(cls, HOT, total, False, hot_age)
                         or e.pull_tail(cls, WARM, total, False, warm_age)) else 0
            if segmented:
                more += e.pull_tail(cls, COLD, total)
            if not more:
                break
            did += 1
        return did

    def _past_the_clock(self, cold_age: int, hot_age: int, warm_age: int) -> tuple[int, int]:
        """Ages above any the replay's clock holds (a factor above 2): C's double to rel_time_t is
        defined up to ``rel_time_max`` (logger.h 14, C11 6.3.1.4) and no item's age (at most
        CLOCK_MAX) is above such an age, so CLOCK_MAX compares the same; past it, a refusal."""
        config = self.config
        for name, age, factor in (("hot", hot_age, config.hot_max_factor), ("warm", warm_age, config.warm_max_factor)):
            if age > config.rel_time_max:
                raise AgeUndefined(
                    f"memcached {config.release} computes {name}_age = cold_age x "
                    f"{name}_max_factor = {cold_age} x {factor:g} into a 32-bit rel_time_t (items.c "
                    f"lru_maintainer_juggle): {age} is past {config.rel_time_max}, undefined in C; give "
                    f"-o {name}_max_factor at most {config.rel_time_max / max(cold_age, 1):g} for a COLD tail "
                    f"{cold_age} s old")
        return min(hot_age, CLOCK_MAX), min(warm_age, CLOCK_MAX)

    def _idle(self, hot: Lru, warm: Lru, cold: Lru, now: int, total: int, hot_age: int, warm_age: int) -> bool:
        """Whether a juggle's first pass would find nothing to do (its tails as ``lru_pull_tail``
        sees them): then the juggle is 0 moves, and the pulls need not run."""
        config = self.config
        if hot.n:
            limit = total * config.hot_lru_pct // 100
            if limit == 0:          # a HOT limit of 0 falls through to WARM's (items.c 1199)
                limit = total * config.warm_lru_pct // 100
            item = hot.next
            if ((item.exptime and item.exptime < now) or item.active or hot.bytes > limit
                    or now - item.time > hot_age):
                return False
        if warm.n:
            item = warm.next
            if ((item.exptime and item.exptime < now) or item.active
                    or warm.bytes > total * config.warm_lru_pct // 100 or now - item.time > warm_age):
                return False
        if cold.n and config.segmented:
            item = cold.next
            if (item.exptime and item.exptime < now) or item.active:
                return False
        return True

    # -- idle stretches (engines/idle.py) ----------------------------------------------------
    # Once every class's wait is at its longest (a juggle that finds nothing grows it by an eighth
    # up to MAX_LRU_MAINTAINER_SLEEP, 1.6.18 items.c 1645-1651) and no juggle finds work, a second
    # of the thread is the second before it moved on by 1 s: the same wake-ups at the same offsets,
    # the same waits, and one crawler check and one automover run in each second of current_time
    # (items.c 1669, 1674).

    def idle_key(self, ref: int):
        """The thread's state relative to ``ref`` (microseconds), or None while it has queued bumps."""
        if self.store.bumps:
            return None
        second = ref // US
        return (self.next_wake - ref, self.clock - self.next_wake, self.to_sleep, tuple(self.backoff),
                tuple(sorted((self.waits[cls].due - self.clock, cls) for cls in self.slots)),
                None if self.last_crawler_check == NEVER else self.last_crawler_check - second,
                None if self.last_automove_check == NEVER else self.last_automove_check - second)

    def quiet_through(self) -> float:
        """The last second of ``current_time`` through which this thread's wake-ups, the LRUs left
        as they are, juggle nothing and the automover moves nothing (the crawler: :mod:`.crawler`)."""
        bound = math.inf
        if self.juggling:
            for cls in range(1, len(self.store.size)):
                bound = min(bound, self.juggle_quiet_through(cls))
                if bound == -math.inf:
                    return bound
        if self.automover is not None:
            last = self.last_automove_check
            first = (self.store.epoch + self.next_wake // US) if last == NEVER else last + 1
            bound = min(bound, first - 1 + self.automover.quiet_runs(first))
        return bound

    def skip(self, seconds: int) -> None:
        """``seconds`` whole seconds of an idle stretch pass: every wake-up as it was, 1 s later each
        second; the automover's runs of those seconds fill its window."""
        d = seconds * US
        if self.automover is not None:
            last = self.last_automove_check
            self.automover.skip((self.store.epoch + self.next_wake // US) if last == NEVER else last + 1, seconds)
        self.next_wake += d
        self.clock += d
        for wait in self.queue:         # every class's, all moved: the same order
            wait.due += d
        self.earliest += d
        if self.last_crawler_check != NEVER:
            self.last_crawler_check += seconds
        if self.last_automove_check != NEVER:
            self.last_automove_check += seconds

    def juggle_quiet_through(self, cls: int) -> float:
        """The last second through which :meth:`_idle` of ``cls`` stays true, its LRUs left as they
        are: only ``current_time`` changes what it reads -- an expired tail (``exptime <
        current_time``) and a HOT or WARM tail older than its share of the COLD tail's age."""
        q = self.lrus.q
        hot, warm, cold = q[HOT][cls], q[WARM][cls], q[COLD][cls]
        bound: float = math.inf
        cold_time = cold.next.time if cold.n else None
        config = self.config
        for lru, factor in ((hot, config.hot_max_factor), (warm, config.warm_max_factor)):
            if lru.n:
                item = lru.next
                exptime: int = item.exptime     # an int: compiled, i64 and float neither compare nor mix
                if exptime and exptime < bound:
                    bound = float(exptime)
                bound = min(bound, _young_through(item.time, cold_time, factor, self.store.now))
        if cold_time is not None:       # the second a product passes rel_time_max is stepped (_past_the_clock)
            factor = max(config.hot_max_factor, config.warm_max_factor)
            # in floats: compiled, cold_time is the item's i32 and the sum would wrap (exact below 2^53)
            bound = min(bound, float(cold_time) + float(math.floor(config.rel_time_max / factor)) - 2.0)
        exptime = cold.next.exptime if cold.n and config.segmented else 0
        if exptime and exptime < bound:
            bound = float(exptime)
        if self.temp is not None:     # the TEMP pulls free an expired tail (engines/temp_lru.py)
            temp = q[TEMP][cls]
            exptime = temp.next.exptime if temp.n else 0
            if exptime and exptime < bound:
                bound = float(exptime)
        return bound


def _insert(queue: list[Wait], end: i64, wait: Wait) -> None:
    """``wait`` put in its place in ``queue[:end]``, sorted by (due, class) from the latest to the
    earliest (no two alike: one a class)."""
    due, cls = wait.due, wait.cls
    lo: i64 = 0
    hi: i64 = end
    while lo < hi:
        mid = (lo + hi) >> 1
        other = queue[mid].due          # read off the list, not held: compiled, no reference counted
        if other > due or (other == due and queue[mid].cls > cls):
            lo = mid + 1
        else:
            hi = mid
    queue.insert(lo, wait)


def _young_through(time: int, cold_time: int | None, factor: float, now: int) -> float:
    """The last second from ``now`` on at which ``now - time > int((now - cold_time) * factor)`` is
    certainly false (``cold_time`` None: a cold age of 0): a closed form for the age rule of ``_idle``.

    With ``x = now - cold_time``, ``int(x * factor)`` is above ``x * factor - 1.5`` (float
    rounding included), so the rule can hold only when ``x * (1 - factor) > time - cold_time - 1.5``:
    a bound, not the exact second -- the wake-ups from there on are stepped.
    """
    if cold_time is None:
        return time
    slack = time - cold_time - 1.5
    if factor < 1:
        return cold_time + math.floor(slack / (1 - factor)) - 1
    if factor == 1:                     # x * 1.0 is exact: the rule is cold_time > time, for good
        return math.inf if cold_time <= time else -math.inf
    if slack >= 0:                      # the left side only falls as x grows
        return math.inf
    # the rule can hold only while x < -slack / (factor - 1): after that, never again
    return math.inf if now - cold_time > -slack / (factor - 1) + 1 else -math.inf

