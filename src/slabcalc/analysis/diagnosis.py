"""What a node is doing *now*: rates over an interval, item ages, and the automover at work.

Counters since boot cannot tell a node that evicts now from one that evicted an
hour ago and healed.  Two readings of the same node (``stats --interval`` or a
saved dump given with ``--since``) can: per class, the evictions, failed
allocations and sets per second between them, the change in pages, and
``slabs_moved`` in between; from the second reading, the age of each class's
oldest item (``stats items`` ``age``), how recently the last evicted item had
been used (``evicted_time``), free chunks and the global page pool; and the
automover's settings (``stats settings``); expired items reclaimed in the
interval, at LRU tails and by the crawler (``reclaimed``, ``crawler_reclaimed``).

The findings (:func:`now_findings`) say which classes evict now and how young
their victims are, which classes hold pages of items older than that (or free
chunks, or pool pages) that could serve them, and whether ``slabs_moved`` grew;
then the diagnosis of :mod:`slabcalc.analysis.automover`, whose rules decide it
(moving, about to move within its window, or stopped by its rules with ``-m``
too small; calcification only when nothing will move the pages), with an action.

Items counted in ``stats items`` but absent from a metadump are expired items
not yet reclaimed (``lru_crawler metadump`` skips them, 1.6.18 crawler.c
``crawler_metadump_eval``), or items that came and went during the dump:
:func:`unreclaimed` estimates the memory they hold.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from slabcalc.analysis.automover import mover_drops
from slabcalc.analysis.stats import DumpError, NodeStats
from slabcalc.inputs.dumps import GENERAL, ITEMS, SLABS, Dump


@dataclass(frozen=True)
class ClassNow:
    """One class over the interval (rates per second) and as the second reading shows it."""

    id: int
    chunk_size: int
    perslab: int
    pages: int
    pages_delta: int
    free_chunks: int
    items: int | None
    evicted: int | None          # evictions in the interval
    outofmemory: int | None
    sets: int | None             # cmd_set in the interval (stats slabs)
    age: int | None              # seconds: the oldest item in the class's LRU
    evicted_time: int | None     # seconds since the last evicted item had been used
    reclaimed: int | None = None          # expired items reclaimed in the interval (at an LRU tail)
    crawler_reclaimed: int | None = None  # ... and by the LRU crawler

    def rate(self, count: int | None, seconds: float) -> float | None:
        return None if count is None else count / seconds


@dataclass(frozen=True)
class Interval:
    """Two readings of one node."""

    node: str
    seconds: int | float         # a live reading: measured by the reader's clock, in tenths (--watch, --interval)
    classes: tuple[ClassNow, ...]
    slabs_moved: int | None
    pool_pages: int | None
    automove: str | None         # "slab_automove=1 (ratio 0.8, window 30)" as stats settings says
    evictions: int | None        # all evictions in the interval (stats)
    finding: object = None       # the automover-aware finding (slabcalc.analysis.automover.Finding)
    # seconds the automover has run, at least and at most, when the readings saw it start (slab_automove
    # 0 -> 1, or a new ratio, which starts its window again: 1.6.18 items.c:1674-1679); None: unknown
    automove_for: tuple[float, float] | None = None


def _number(table: Mapping[str, str], name: str) -> int | None:
    value = table.get(name)
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def _clock(dump: Dump) -> tuple[int | None, int | None, int | None]:
    g = dump.general
    return _number(g, "pid"), _number(g, "time"), _number(g, "uptime")


def counter_delta(before: Mapping[str, str], after: Mapping[str, str], name: str) -> int | None:
    """How much counter ``name`` grew from ``before`` to ``after`` (one table of stats); None when
    ``after`` lacks it, and counted from 0 when ``before`` does (a class born in between)."""
    new = _number(after, name)
    return None if new is None else new - (_number(before, name) or 0)


def automover_started(before: Mapping[str, str], now: Mapping[str, str]) -> bool:
    """Whether the automover started between two readings' ``stats settings``: ``slab_automove`` went to 1
    (``slabs automove 1`` at run time), or its ratio changed while on (the LRU maintainer frees and inits
    it again, 1.6.18 items.c:1675-1679).  Either way its window starts empty (slab_automove.c:34-52)."""
    if now.get("slab_automove") != "1" or "slab_automove" not in before:
        return False
    return before.get("slab_automove") != "1" or before.get("slab_automove_ratio") != now.get("slab_automove_ratio")


def interval(before: Dump, after: NodeStats, seconds: float | None = None,
             automove_for: tuple[float, float] | None = None) -> Interval:
    """The interval between ``before`` and ``after``'s dump, or a DumpError naming what is wrong.

    Its length is the servers' ``time`` (whole seconds) unless ``seconds`` says it,
    measured by the reader's clock (live readings, ``--interval`` and ``--watch``: a
    second apart, ``time`` may move by 0 or 2).  ``automove_for`` is how long the automover has
    run, at least and at most, when earlier readings saw it start (``--watch``); readings that
    see it start between them know it ran at most the interval.
    """
    now = after.dump
    for dump in (before, now):
        if GENERAL not in dump.given or SLABS not in dump.given:
            raise DumpError(f"{dump.source}: a reading for --interval/--since needs 'stats' and 'stats slabs'")
    (pid0, time0, up0), (pid1, time1, up1) = _clock(before), _clock(now)
    if pid0 is not None and pid1 is not None and pid0 != pid1:
        raise DumpError(f"{before.source} and {now.source} come from different servers (pid {pid0} and {pid1})")
    if before.release != now.release:
        raise DumpError(f"{before.source} and {now.source} come from different servers "
                        f"(memcached {before.release} and {now.release})")
    if up0 is not None and up1 is not None and up1 < up0:
        if pid0 is not None and pid0 == pid1:
            raise DumpError(f"{before.source} is the later reading (uptime {up0} s, {now.source} {up1} s): "
                            "give the earlier one as the first reading")
        raise DumpError(f"{now.source}: the server restarted after {before.source} (uptime {up1} s, was {up0} s)")
    start, end = (time0, time1) if time0 is not None and time1 is not None else (up0, up1)
    if seconds is None and (start is None or end is None):
        raise DumpError(f"{before.source}: no 'time' or 'uptime' in stats: the interval is unknown")
    seconds = end - start if seconds is None else seconds
    if seconds <= 0:
        raise DumpError(f"{before.source} and {now.source} are {seconds} s apart: "
                        "the earlier reading must come first, at least a second before")

    def delta(table0: Mapping[int, Mapping[str, str]], table1: Mapping[int, Mapping[str, str]], cls: int,
              name: str) -> int | None:
        return counter_delta(table0.get(cls, {}), table1.get(cls, {}), name)

    items_given = ITEMS in now.given
    classes = []
    for c in after.classes:
        pages_before = _number(before.slabs.get(c.id, {}), "total_pages") or 0
        stat = now.items.get(c.id, {})
        classes.append(ClassNow(
            c.id, c.chunk_size, c.perslab, c.pages, c.pages - pages_before, c.free_chunks, c.items,
            delta(before.items, now.items, c.id, "evicted") if items_given else None,
            delta(before.items, now.items, c.id, "outofmemory") if items_given else None,
            delta(before.slabs, now.slabs, c.id, "cmd_set"),
            _number(stat, "age") if items_given else None,
            _number(stat, "evicted_time") if items_given else None,
            delta(before.items, now.items, c.id, "reclaimed") if items_given else None,
            delta(before.items, now.items, c.id, "crawler_reclaimed") if items_given else None))
    if automover_started(before.settings, now.settings):
        automove_for = (0, seconds)
    span = Interval(after.node, seconds, tuple(classes), counter_delta(before.general, now.general, "slabs_moved"),
                    after.pool_pages, _automove(now.settings),
                    counter_delta(before.general, now.general, "evictions"), automove_for=automove_for)
    from slabcalc.analysis.automover import diagnose, from_interval

    return replace(span, finding=diagnose(from_interval(span, after)))


def _automove(settings: Mapping[str, str]) -> str | None:
    if "slab_automove" not in settings:
        return None
    if settings.get("slab_reassign") == "no":
        return "slab_reassign off (no page ever moves)"
    mode = settings["slab_automove"]
    extra = [f"{name} {settings[key]}" for name, key in (("ratio", "slab_automove_ratio"),
                                                        ("window", "slab_automove_window")) if key in settings]
    return f"slab_automove={mode}" + (f" ({', '.join(extra)})" if extra and mode != "0" else "")


def _ids(ids: Sequence[int]) -> str:
    """``5, 6, 7, 8, 12`` -> ``5-8, 12``."""
    runs: list[list[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def _per_second(count: int, seconds: int) -> str:
    rate = count / seconds
    return f"{rate:.0f}/s" if rate >= 10 else f"{rate:.1f}/s"


def now_findings(span: Interval) -> list[str]:
    """What happens in the interval: which classes evict, what could serve them, what the automover does."""
    seconds = span.seconds
    drops = mover_drops(span)
    starving = [c for c in span.classes if (c.evicted or 0) + (c.outofmemory or 0) > 0 and c.id not in drops]
    dropped = "".join(f"; class {cls} loses {_per_second(count, seconds)} to the page mover (page-mover drops: no "
                      f"set came to it, items evicted to empty the pages it gives)"
                      for cls, count in sorted(drops.items()))
    moved = span.slabs_moved
    automove = span.automove or "the automover's settings unknown (no 'stats settings')"
    moved_text = f"{automove} moved {moved} page{'s' if moved != 1 else ''} in the interval" \
        if moved is not None else automove
    action = f"; action for memcached {span.finding.release}: " + ", or ".join(
        a.text() for a in span.finding.actions) if span.finding is not None else ""
    if not starving:
        return [f"now: no class evicts (over {seconds} s){dropped}; {moved_text}{action}"]
    parts = []
    for c in sorted(starving, key=lambda c: -((c.evicted or 0) + (c.outofmemory or 0))):
        text = f"class {c.id} evicts {_per_second(c.evicted or 0, seconds)}"
        if c.outofmemory:
            text += f" ({_per_second(c.outofmemory, seconds)} out of memory)"
        details = [f"{c.pages} page{'s' if c.pages != 1 else ''}"]
        if c.evicted_time is not None:
            details.append(f"victims last used {c.evicted_time} s before")
        parts.append(f"{text} ({', '.join(details)})")
    youngest_victim = max((c.evicted_time for c in starving if c.evicted_time is not None), default=None)
    # classes that do not evict and hold pages that could serve: free pages, or items older than
    # what the starving classes throw away
    held = []
    for c in span.classes:
        if c in starving or c.id in drops or not c.pages:
            continue
        free_pages = c.free_chunks // c.perslab if c.perslab else 0
        old = c.age is not None and youngest_victim is not None and c.age > youngest_victim
        if free_pages or old:
            held.append((c, free_pages, old))
    serving = ""
    if held:
        pages = sum(c.pages for c, _, old in held if old) + sum(f for _, f, old in held if not old)
        oldest = max((c.age for c, _, old in held if old), default=None)
        what = (f"items up to {oldest} s old" if oldest is not None else "free chunks")
        serving = (f" while class{'es' if len(held) > 1 else ''} {_ids([c.id for c, _, _ in held])} "
                   f"hold{'' if len(held) > 1 else 's'} {pages} page{'s' if pages != 1 else ''} of {what}")
    if span.pool_pages:
        serving += f"{' and' if serving else ' while'} the global page pool holds {span.pool_pages} pages"
    lines = [f"now (over {seconds} s): {'; '.join(parts)}{serving}{dropped}; {moved_text}"]
    if span.finding is not None:
        # the automover's rules decide the words (slabcalc.analysis.automover): within its window
        # it is not yet calcification; past what its rules allow, the real limit
        lines.append(f"now: {span.finding.line}")
    return lines


def unreclaimed(node: NodeStats, listed: Mapping[int, int]) -> tuple[int, int] | None:
    """``(items, bytes)`` that ``stats items`` counts but a metadump did not list (``listed`` per class):
    expired items not yet reclaimed, at one chunk each (chunked items: their largest-class chunk)."""
    if any(c.items is None for c in node.classes):
        return None
    items = held = 0
    for c in node.classes:
        missing = max(0, (c.items or 0) - listed.get(c.id, 0))
        items += missing
        held += missing * c.chunk_size
    return items, held
