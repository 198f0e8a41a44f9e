"""``stats --watch``: a node (or pool) read again and again, each reading set against the one before.

:func:`watch` turns a stream of readings (``(elapsed, [(node, Dump or
error)])``, from :func:`slabcalc.inputs.client.poll`) into frozen
:class:`Reading` values as they come: per node the analysed stats, the
:class:`slabcalc.analysis.diagnosis.Interval` since that node's previous
reading (rates, pages per class, ``slabs_moved``: the same rules as ``stats
--interval``), the growth of ``stats``' own counters (:data:`COUNTERS`), and
lines saying what changed since the reading before: a class that started or
stopped evicting, pages that moved between classes and the automover's moves
since the watch began, a node that went down, came back or restarted.

Nothing here reads a socket or a clock: the times are the reader's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

from slabcalc.analysis.automover import mover_drops
from slabcalc.analysis.diagnosis import Interval, automover_started, counter_delta, interval
from slabcalc.analysis.stats import NodeStats
from slabcalc.errors import DumpError, SlabcalcError
from slabcalc.inputs.dumps import Dump

# stats' counters whose growth a reading reports, by memcached's names (1.6.18 memcached.c server_stats)
COUNTERS = ("cmd_get", "get_hits", "get_misses", "cmd_set", "evictions", "slabs_moved", "total_items")


@dataclass(frozen=True)
class NodeReading:
    """One node in one reading."""

    node: str
    stats: NodeStats | None                 # None: the node could not be read (``error``)
    span: Interval | None                   # since this node's previous reading; None for its first
    counters: tuple[tuple[str, int | None], ...] = ()   # growth of COUNTERS over the span
    error: str | None = None

    def counter(self, name: str) -> int | None:
        return dict(self.counters).get(name)


@dataclass(frozen=True)
class Reading:
    """The n-th reading of every node (``number`` from 1), ``elapsed`` seconds after the first."""

    number: int
    elapsed: float
    nodes: tuple[NodeReading, ...]
    changes: tuple[str, ...]                # what is new since the reading before, one line each


def span_seconds(elapsed: float) -> int | float:
    """The length of an interval as shown: tenths of a second, whole when it is whole."""
    seconds = round(elapsed, 1)
    return int(seconds) if seconds == int(seconds) else seconds


def watch(readings: Iterable[tuple[float, Sequence[tuple[str, Dump | SlabcalcError]]]],
          analyse: Callable[[Dump], NodeStats]) -> Iterator[Reading]:
    """Each reading of ``readings`` as a :class:`Reading`, as it comes (``analyse`` makes a node's stats)."""
    last: dict[str, tuple[float, Dump]] = {}        # node -> its previous good reading
    spans: dict[str, Interval | None] = {}          # node -> its previous interval
    down: set[str] = set()
    moved: dict[str, int] = {}                      # node -> slabs_moved since the watch began
    started: dict[str, tuple[float, float]] = {}    # node -> the readings either side of its automover's start
    for number, (elapsed, nodes) in enumerate(readings, 1):
        out, changes = [], []
        for name, dump in nodes:
            prefix = f"{name}: " if len(nodes) > 1 else ""
            began = started.get(name)
            ran = None if began is None else (elapsed - began[1], elapsed - began[0])
            reading, said = _node(name, dump, last.get(name), elapsed, analyse, ran)
            if reading.error is not None:
                if name not in down:
                    changes.append(f"{prefix}cannot be read: {reading.error}")
                down.add(name)
                last.pop(name, None)
                spans.pop(name, None)
            else:
                if name in down:
                    changes.append(f"{prefix}read again")
                    down.discard(name)
                changes += [prefix + line for line in said]
                _note_start(started, name, last.get(name) if reading.span is not None else None, elapsed,
                            reading.stats.dump)        # no span: first reading, or restarted (its window anew)
                last[name] = (elapsed, reading.stats.dump)
                if reading.span is not None:
                    moved[name] = moved.get(name, 0) + (reading.span.slabs_moved or 0)
                    changes += [prefix + line for line in changed(spans.get(name), reading.span, moved[name])]
                spans[name] = reading.span
            out.append(reading)
        yield Reading(number, elapsed, tuple(out), tuple(changes))


def _note_start(started: dict, name: str, previous: tuple[float, Dump] | None, elapsed: float, dump: Dump) -> None:
    """Keep when the node's automover started (between its previous reading and this one), for the
    readings after: its window fills from then (:func:`slabcalc.analysis.diagnosis.automover_started`)."""
    if dump.settings.get("slab_automove") != "1" or previous is None:
        started.pop(name, None)
    elif previous is not None and automover_started(previous[1].settings, dump.settings):
        started[name] = (previous[0], elapsed)


def _node(name: str, dump: Dump | SlabcalcError, previous: tuple[float, Dump] | None, elapsed: float,
          analyse: Callable[[Dump], NodeStats],
          ran: tuple[float, float] | None = None) -> tuple[NodeReading, list[str]]:
    """One node's reading against its previous one, and a line when the baseline starts again."""
    if isinstance(dump, SlabcalcError):
        return NodeReading(name, None, None, error=str(dump)), []
    try:
        stats = analyse(dump)
    except DumpError as exc:
        return NodeReading(name, None, None, error=str(exc)), []
    if previous is None:
        return NodeReading(name, stats, None), []
    before_elapsed, before = previous
    try:
        span = interval(before, stats, span_seconds(elapsed - before_elapsed), ran)
    except DumpError as exc:   # restarted (or another server on the address): start again from here
        return NodeReading(name, stats, None), [f"starts again: {exc}"]
    counters = tuple((c, counter_delta(before.general, dump.general, c)) for c in COUNTERS)
    return NodeReading(name, stats, span, counters), []


def _evicting(span: Interval | None) -> dict[int, int]:
    """Classes that evicted (or failed to allocate) in the span for sets: class -> count (the page
    mover's drops in a class no set came to are not its evictions: :func:`mover_drops`)."""
    if span is None:
        return {}
    drops = mover_drops(span)
    return {c.id: (c.evicted or 0) + (c.outofmemory or 0) for c in span.classes
            if (c.evicted or 0) + (c.outofmemory or 0) > 0 and c.id not in drops}


def _rate(count: int, seconds: float) -> str:
    rate = count / seconds
    return f"{rate:.0f}/s" if rate >= 10 else f"{rate:.1f}/s"


def changed(before: Interval | None, now: Interval, moved_since_start: int) -> list[str]:
    """What is new in ``now`` against the interval ``before`` it (None: the watch's first)."""
    lines = []
    was, evicting = _evicting(before), _evicting(now)
    first = before is None
    for cls in sorted(set(was) | set(evicting)):
        if cls in evicting and cls not in was:
            verb = "evicts" if first else "started evicting"
            lines.append(f"class {cls} {verb} ({_rate(evicting[cls], now.seconds)})")
        elif cls in was and cls not in evicting:
            lines.append(f"class {cls} stopped evicting")
    for cls, count in sorted(mover_drops(now).items()):
        lines.append(f"class {cls}: page-mover drops ({_rate(count, now.seconds)}): the page mover evicts its "
                     "items to empty the pages it takes; no set came to it")
    pages = [(c.id, c.pages_delta) for c in now.classes if c.pages_delta]
    if pages or now.slabs_moved:
        shown = ", ".join(f"class {cls} {delta:+d}" for cls, delta in pages) or "no class changed"
        moves = "" if now.slabs_moved is None else \
            f"; slabs_moved +{now.slabs_moved} ({moved_since_start} since the watch began)"
        lines.append(f"pages: {shown}{moves}")
    if first and now.automove:
        lines.append(f"automover: {now.automove}")
    return lines
