"""Why a node evicts, and what to change: memcached's slab automover's own rules, read against stats.

One reading (:func:`from_reading`) or two (:func:`from_interval`) become a
:class:`View`: per class its pages, free chunks, the age of its COLD LRU's tail
(``stats items`` ``age``, 1.6.18 items.c:790) and how recently its last victim
had been used (``evicted_time``, items.c:798), and the node's automover settings.
:func:`diagnose` turns it into one :class:`Finding` that ends with an action.

**Which classes evict now, from one reading.**  A class evicts from its COLD
tail, so while it evicts its tail is no older than its last victim was: the tail
now is younger than that victim, plus the time since.  A class whose ``age``
exceeds its ``evicted_time`` by more than :data:`NOW_SLACK` seconds has not
evicted for at least that difference: its counter is history (a class that
evicted while it was being filled, say).  Two readings know it exactly: the
``evicted`` counter grew or it did not.

**The automover's rules** (1.6.18 slab_automove.c:74-168, run once a second by
the LRU maintainer, items.c:1674-1695):

* no decision until its window (``slab_automove_window`` runs, a second each)
  has filled once since it started with the server (slab_automove.c:162);
* the destination is the youngest class whose window saw evictions in more than
  half its runs, or more than a quarter of all evictions on average
  (slab_automove.c:148), and which evicted in the last run;
* the source is the class with the oldest tail among those with more than
  ``MIN_PAGES_FOR_SOURCE`` (2) pages (slab_automove.c:140: it keeps a class's
  last two pages), and only when the destination's age is under
  ``slab_automove_ratio`` times the source's (slab_automove.c:163);
* one page at a time: ``slabs_reassign`` answers "busy" while a page moves
  (slabs.c:1266).

Inside that window the finding says when the automover should move a page;
once its rules allow no more, it names the real limit: ``-m`` too small, or a
class that needs more pages.  Without the automover (``slab_automove=0``) pages
that sit idle while a class evicts are calcification, and the action turns it
on.  Each action is labelled with the release it was checked on: the flags and
commands it prints are started or sent on that release by
tests/fidelity/test_automover_fidelity.py.

This module is long because each of the automover's rules is a case with its own words and
action (off, window, moving, stuck, mode 2, too small), and one and two readings are read into one view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

NOW_SLACK = 2          # seconds: a tail older than its last victim by more has not evicted since
MIB = 1 << 20

# Every flag and command a finding can print (besides ``-m N``), each started or sent on 1.6.18 by
# tests/fidelity/test_automover_fidelity.py: "slabs automove 1" sets settings.slab_automove (1.6.18 proto_text.c:2228),
# "slabs reassign A B" moves one page (proto_text.c:2539, slabs.c:1298).
TURN_ON = "-o slab_automove=1"
TURN_ON_REASSIGN = "-o slab_reassign,slab_automove=1"
AUTOMOVE_NOW = "slabs automove 1"
REASSIGN = "slabs reassign {source} {dest}"
FLAGS = (TURN_ON, TURN_ON_REASSIGN)
COMMANDS = (AUTOMOVE_NOW, REASSIGN)


@dataclass(frozen=True)
class ClassView:
    """One class as the diagnosis needs it."""

    id: int
    perslab: int
    pages: int
    free_chunks: int
    items: int | None
    age: int | None              # the COLD tail's age (s)
    evicted_time: int | None     # the last victim had been used this long before (s)
    evicted: int | None          # since boot
    evicting: bool | None        # evicts now (None: one reading cannot tell)
    evict_rate: float | None     # evictions a second over two readings
    set_rate: float | None       # cmd_set a second over two readings
    pages_delta: int | None      # pages gained over two readings
    evicted_share: float | None = None   # evictions per set (over two readings, else since boot)


@dataclass(frozen=True)
class View:
    """A node as the diagnosis needs it: its classes and its automover."""

    release: str | None
    classes: tuple[ClassView, ...]
    uptime: int | None
    pool_pages: int
    reassign: bool | None         # slab_reassign (None: unknown)
    automove: int | None          # slab_automove mode
    ratio: float                  # slab_automove_ratio
    window: int                   # slab_automove_window
    source_pages: int             # MIN_PAGES_FOR_SOURCE of this release
    maxbytes: int | None          # -m in bytes
    page_size: int                # slab_page_size
    seconds: int | None = None    # the interval of two readings
    moved: int | None = None      # slabs_moved in the interval
    # seconds the automover has run, at least and at most, when readings saw it start; None: unknown
    automove_for: tuple[float, float] | None = None
    modelled: bool = True         # the release's profile models this automove mode (background.automove_modes)


@dataclass(frozen=True)
class Action:
    """What to do: ``words`` to start a server with (``flag``) or to send a live node (``command``)."""

    kind: str        # "flag", "command" or "none"
    words: str
    when: str = ""   # "now", "at the next start"

    def text(self) -> str:
        return self.words + (f" ({self.when})" if self.when else "")


NOTHING = Action("none", "nothing to change")


@dataclass(frozen=True)
class Finding:
    """One diagnosis: what happens (``text``), its ``kind`` and the actions, for ``release``."""

    kind: str     # calcification | automover-pending | automover-moving | automover-stuck | too-small |
    #               stopped | unknown | quiet
    text: str
    actions: tuple[Action, ...]
    release: str | None

    @property
    def line(self) -> str:
        label = f"memcached {self.release}" if self.release else "this node"
        return f"{self.text}; action for {label}: " + ", or ".join(a.text() for a in self.actions)

    def record(self) -> dict:
        return {"kind": self.kind, "finding": self.line, "release": self.release,
                "actions": [{"kind": a.kind, "words": a.words, "when": a.when} for a in self.actions]}


# -- building a view ------------------------------------------------------------------------

def _int(table: Mapping[str, str], name: str) -> int | None:
    value = table.get(name, "")
    return int(value) if value.isdigit() else None


def _node(node, **extra) -> View:
    """The node-level half of a view: release, uptime, pool and the automover's settings."""
    s, g = node.dump.settings, node.dump.general
    profile = node.settings.profile if node.settings is not None else None
    background = getattr(profile, "background", None)
    defaults = background.defaults if background is not None else {}
    source_pages = background.constants.get("automove_source_pages", 2) if background is not None else 2
    mode = _int(s, "slab_automove")
    ratio_text = s.get("slab_automove_ratio")
    try:
        ratio = float(ratio_text) if ratio_text else float(defaults.get("slab_automove_ratio", 0.8))
    except ValueError:
        ratio = 0.8
    window = _int(s, "slab_automove_window") or int(defaults.get("slab_automove_window", 30))
    reassign = {"yes": True, "no": False}.get(s.get("slab_reassign", ""))
    maxbytes = _int(s, "maxbytes") or _int(g, "limit_maxbytes")
    page_size = node.settings.slab_page_size if node.settings is not None else MIB
    modelled = background is None or mode is None or mode in background.automove_modes
    return View(node.dump.release, extra.pop("classes"), _int(g, "uptime"), node.pool_pages or 0, reassign, mode,
                ratio, window, source_pages, maxbytes, page_size, modelled=modelled, **extra)


def from_reading(node) -> View:
    """A view of one reading (:class:`slabcalc.analysis.stats.NodeStats`)."""
    items = node.dump.items
    classes = []
    for c in node.classes:
        stat = items.get(c.id, {})
        age, victim = _int(stat, "age"), _int(stat, "evicted_time")
        evicting = None
        if c.evicted is not None and not c.evicted:
            evicting = False
        elif c.evicted and age is not None and victim is not None:
            evicting = age <= victim + NOW_SLACK
        sets = _int(node.dump.slabs.get(c.id, {}), "cmd_set")
        share = c.evicted / sets if sets and c.evicted is not None else None
        classes.append(ClassView(c.id, c.perslab, c.pages, c.free_chunks, c.items, age, victim, c.evicted,
                                 evicting, None, None, None, share))
    return _node(node, classes=tuple(classes))


def mover_drops(span) -> dict[int, int]:
    """Classes whose evictions in the interval are the page mover's, not sets': class -> items dropped.

    A class that received no set (``cmd_set`` did not grow) evicts only when the page mover empties a
    page it takes from it and finds no free chunk to rescue an item into: on 1.6.45 it pulls the
    class's LRU tail with LRU_PULL_EVICT (slabs_mover.c:214-219), counted in the class's ``evicted``
    (items.c:1194) like a set's eviction; 1.6.18 counts such drops apart, in
    ``slab_reassign_evictions_nomem`` (slabs.c:985).  The class lost pages, or the interval moved some."""
    moved = (span.slabs_moved or 0) > 0
    return {c.id: c.evicted for c in span.classes
            if c.sets == 0 and c.evicted and ((c.pages_delta or 0) < 0 or moved)}


def from_interval(span, node) -> View:
    """A view of two readings (:class:`slabcalc.analysis.diagnosis.Interval` and the later reading)."""
    since_boot = {c.id: c.evicted for c in node.classes}
    drops = mover_drops(span)       # the page mover's, in a class no set came to: not a class starved of pages
    classes = tuple(ClassView(
        c.id, c.perslab, c.pages, c.free_chunks, c.items, c.age, c.evicted_time, since_boot.get(c.id),
        None if c.evicted is None else (c.evicted or 0) + (c.outofmemory or 0) > 0 and c.id not in drops,
        None if c.evicted is None else c.evicted / span.seconds,
        None if c.sets is None else c.sets / span.seconds, c.pages_delta,
        c.evicted / c.sets if c.sets and c.evicted is not None else None) for c in span.classes)
    return _node(node, classes=classes, seconds=span.seconds, moved=span.slabs_moved, automove_for=span.automove_for)


# -- the diagnosis ----------------------------------------------------------------------------

def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _ids(classes: Sequence[ClassView]) -> str:
    return ("class " if len(classes) == 1 else "classes ") + ", ".join(str(c.id) for c in classes)


def _rate(c: ClassView) -> float | None:
    """Evictions a second: measured over two readings, else the class's items over its tail's age
    (a class that evicts replaces its whole LRU in about ``age`` seconds)."""
    if c.evict_rate is not None:
        return c.evict_rate
    if c.items and c.age:
        return c.items / c.age
    return None


def _evicts(c: ClassView) -> str:
    victims = f", victims last used {c.evicted_time} s before" if c.evicted_time is not None else ""
    return f"class {c.id} evicts now ({_plural(c.pages, 'page')}{victims})"


def _holders(view: View, evicting: Sequence[ClassView]) -> list[ClassView]:
    """Classes that do not evict and hold a page of free chunks, or items older than the victims."""
    victim = max((c.evicted_time for c in evicting if c.evicted_time is not None), default=None)
    return [c for c in view.classes if c not in evicting and c.pages and not c.evicting
            and ((c.perslab and c.free_chunks >= c.perslab)
                 or (c.items and c.age is not None and victim is not None and c.age > victim))]


def _held(view: View, holders: Sequence[ClassView]) -> str:
    parts = []
    if holders:
        pages = sum(c.pages for c in holders)
        free = sum(c.free_chunks // c.perslab for c in holders if c.perslab)
        oldest = max((c.age for c in holders if c.age is not None and c.items), default=None)
        what = [f"about {free} of them free chunks" if free else "",
                f"items up to {oldest} s old" if oldest is not None else ""]
        parts.append(f"{_ids(holders)} hold{'s' if len(holders) == 1 else ''} {_plural(pages, 'page')}"
                     + (f" ({', '.join(w for w in what if w)})" if any(what) else ""))
    if view.pool_pages:
        parts.append(f"the global page pool holds {_plural(view.pool_pages, 'page')}")
    return " and ".join(parts)


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def diagnose(view: View) -> Finding | None:
    """The one finding of a node (None: it never evicted and two readings were not taken).

    Over two readings the text leaves out which classes evict and what holds pages: the
    interval's first finding says it (:func:`slabcalc.analysis.diagnosis.now_findings`)."""
    evicting = [c for c in view.classes if c.evicting]
    if not evicting:
        return _quiet(view)
    # the automover's destination: the youngest evicting class (slab_automove.c:148)
    dest = min(evicting, key=lambda c: (c.age if c.age is not None else 0, -(c.evicted or 0)))
    holders = _holders(view, evicting)
    held = _held(view, holders)
    said = ""
    if view.seconds is None:
        said = "; ".join(_evicts(c) for c in sorted(evicting, key=lambda c: -(_rate(c) or 0)))
        said += f" while {held}" if held else ""
    if view.reassign is False or view.automove == 0:
        if not held:
            return _too_small(view, dest, evicting, said)
        return _calcified(view, dest, holders, said)
    if view.automove is None:
        return Finding("unknown", _join(said, "the automover's settings are unknown (no 'stats settings')"),
                       (NOTHING,), view.release)
    if not view.modelled:
        return Finding("unknown", _join(said, f"slab_automove={view.automove}: the automover of memcached "
                       f"{view.release} is not modelled here, so what it will do is not said"), (NOTHING,),
                       view.release)
    if view.automove == 2:
        return _aggressive(view, dest, evicting, said)
    source = _source(view, dest)
    if source is not None:
        return _pending(view, source, dest, evicting, said)
    return _too_small(view, dest, evicting, said)


def _aggressive(view: View, dest: ClassView, evicting: Sequence[ClassView], said: str) -> Finding:
    """``slab_automove=2``: every eviction asks for a page from any class of 2 or more pages
    (1.6.18 items.c:1238, slabs.c:1248 ``slabs_reassign_pick_any``); no window, no ratio."""
    givers = [c for c in view.classes if c not in evicting and c.pages >= 2]
    if not givers:
        return _too_small(view, dest, evicting, said)
    return Finding("automover-moving", _join(said, f"slab_automove=2 takes a page for class {dest.id} from any "
                   f"class of 2 or more pages ({_ids(givers)}) on each eviction, one at a time"), (NOTHING,),
                   view.release)


def _quiet(view: View) -> Finding | None:
    if view.seconds is not None:
        moved = "" if view.moved is None else f"; the automover moved {_plural(view.moved, 'page')}"
        return Finding("quiet", f"no class evicts (over {view.seconds} s){moved}", (NOTHING,), view.release)
    past = [c for c in view.classes if c.evicted]
    if not past:
        return None
    known = [c for c in past if c.evicting is False and c.age is not None and c.evicted_time is not None]
    if len(known) < len(past):
        unknown = [c for c in past if c not in known]
        return Finding("unknown", f"{_ids(unknown)} evicted since boot ({sum(c.evicted for c in unknown)} items); "
                       "one reading without item ages cannot tell whether it evicts now: read it twice "
                       "(stats --interval)", (NOTHING,), view.release)
    since = min(c.age - c.evicted_time for c in known)
    return Finding("stopped", f"no class evicts now: {_ids(known)} evicted {sum(c.evicted for c in known)} items "
                   f"since boot, none in the last {since} s or more (the oldest item is that much older than "
                   "the last victim)", (NOTHING,), view.release)


def _calcified(view: View, dest: ClassView, holders: Sequence[ClassView], said: str) -> Finding:
    """Pages sit idle while a class evicts and nothing will move them."""
    if view.reassign is False:
        return Finding("calcification", "calcification: " + _join(said, "slab_reassign is off, so no page ever moves"),
                       (Action("flag", TURN_ON_REASSIGN, "at the next start"),), view.release)
    actions = [Action("command", AUTOMOVE_NOW, "now"), Action("flag", TURN_ON, "at the next start")]
    givers = [c for c in holders if c.pages >= 2]      # slabs.c:1284: a class of one page gives none
    if givers:
        source = max(givers, key=lambda c: (c.age or 0, c.pages))
        actions.append(Action("command", REASSIGN.format(source=source.id, dest=dest.id), "one page now"))
    return Finding("calcification", "calcification: " + _join(said, "slab_automove is 0, so no page moves"),
                   tuple(actions), view.release)


def _source(view: View, dest: ClassView) -> ClassView | None:
    """The automover's source for ``dest``: the oldest tail among classes of more than
    ``source_pages`` pages (slab_automove.c:140), if ``dest`` is under the ratio of it (:163)."""
    candidates = [c for c in view.classes if c is not dest and c.pages > view.source_pages and c.age is not None]
    if not candidates or dest.age is None:
        return None
    source = max(candidates, key=lambda c: c.age)
    return source if dest.age < source.age * view.ratio else None


def _evicting_for(view: View, dest: ClassView) -> int:
    """About how long ``dest`` has evicted: its evictions since boot at its current rate."""
    rate = _rate(dest)
    if not dest.evicted or not rate:
        return 0
    return int(dest.evicted / rate)


def _pending(view: View, source: ClassView, dest: ClassView, evicting: Sequence[ClassView], said: str) -> Finding:
    """The automover's rules allow a move from ``source`` to ``dest``: it is moving, or will soon."""
    rules = (f"slab_automove=1, window {view.window} s, ratio {view.ratio:g}: class {dest.id}'s oldest item is "
             f"{dest.age} s old, under {view.ratio:g} x class {source.id}'s {source.age} s")
    spare = source.pages - view.source_pages
    if view.moved and (dest.pages_delta or 0) > 0:
        return Finding("automover-moving", _join(said, f"the automover is moving pages from class {source.id} to "
                       f"class {dest.id} ({_plural(view.moved, 'page')} in {view.seconds} s; class {source.id} "
                       f"can give {spare} more) ({rules})"), (NOTHING,), view.release)
    wait, when = _wait(view, dest, evicting)
    if view.seconds is not None and not view.moved and view.seconds > wait + view.window:
        return Finding("automover-stuck", _join(said, f"the automover's rules allow a move from class {source.id} "
                       f"to class {dest.id}, yet none happened in {view.seconds} s ({rules})"),
                       (Action("command", REASSIGN.format(source=source.id, dest=dest.id), "one page now"),),
                       view.release)
    return Finding("automover-pending", _join(said, f"inside the automover's window: it should move a page from "
                   f"class {source.id} to class {dest.id} {when}, then at most one a second while "
                   f"its rules hold ({rules})"), (NOTHING,), view.release)


def _wait(view: View, dest: ClassView, evicting: Sequence[ClassView]) -> tuple[int, str]:
    """When the automover's first move should come: the latest wait in seconds, and the words.

    slab_automove.c:162: no decision before its window has filled once (``window_cur >
    window_size``: window + 1 runs, one a second, items.c:1674) since the automover started --
    with the server when ``slab_automove`` was 1 at start, else at ``slabs automove 1`` (or a new
    ratio), when its window starts empty; :148: the class must have evicted in over half the
    window's runs, or a quarter of all its evictions.  Readings that saw it start bound how long
    it has run; one that did not cannot tell a start at boot from one at run time, and says both."""
    need = view.window // 4 + 1 if len(evicting) == 1 else view.window // 2 + 1
    evicted_for = _evicting_for(view, dest)
    full = view.window + 1
    if view.automove_for is not None:
        least, most = view.automove_for
        latest = max(full - int(least), need - min(evicted_for, int(least)), 0) + 1
        # its first run comes at once (last_automove_check != current_time, items.c:1674), the next one
        # at each tick of the server's clock: window + 1 runs take a little over window - 1 s
        soonest = max(view.window - 1 - math.ceil(most), 0)
        return latest, (f"within about {latest} s (no sooner than {soonest} s: it started at most "
                        f"{_seconds(most)} s ago and its window of {view.window} s fills from then)")
    fill = max(0, full - view.uptime) if view.uptime is not None else full
    wait = max(fill, need - evicted_for, 0) + 1     # + the move itself
    if fill >= full:                   # up less than a second (or uptime unknown): the whole window
        return wait, f"within about {wait} s"
    late = max(full, need) + 1
    return late, (f"within about {wait} s if slab_automove has been 1 since the server started, up to {late} s if "
                  f"'slabs automove 1' (or a new ratio) came later: its window of {view.window} s fills from then")


def _seconds(value: float) -> str:
    return f"{value:g}" if value != int(value) else str(int(value))


def _working_set(dest: ClassView) -> int | None:
    """The keys the load sets in ``dest``: a set whose key is held replaces it, any other evicts, so
    with keys drawn evenly from K the share of sets that evict is 1 - items/K (None: every set evicts)."""
    share = dest.evicted_share
    if share is None or share >= 1 or not dest.items:
        return None
    return math.ceil(dest.items / (1 - share))


def _too_small(view: View, dest: ClassView, evicting: Sequence[ClassView], said: str) -> Finding:
    """No page the automover may take could serve ``dest``: the real limit, in pages and ``-m``."""
    kept = [c for c in view.classes if c not in evicting and c.pages and c.age is not None and c.items]
    why = []
    if view.automove in (1, 2) and view.reassign is not False:
        small = [c for c in kept if c.pages <= view.source_pages]
        if small:
            why.append(f"{_ids(small)} keep{'s' if len(small) == 1 else ''} the last {view.source_pages} pages "
                       "the automover leaves a class")
    keys = _working_set(dest)
    span = "since boot" if view.seconds is None else f"over {view.seconds} s"
    if keys is not None:
        need = math.ceil(keys / dest.perslab) - dest.pages
        goal = (f"hold the {keys} keys its sets come from ({dest.evicted_share:.0%} of its sets evict {span}: "
                f"{dest.items} of them are held, if keys are drawn evenly)")
    else:
        oldest = max(kept, key=lambda c: c.age, default=None)
        rate = dest.set_rate if dest.set_rate else _rate(dest)
        need = None
        if oldest is not None and rate and dest.perslab:
            target = oldest.age * view.ratio       # the age the automover's ratio asks of dest (slab_automove.c:163)
            need = math.ceil(rate * target / dest.perslab) - dest.pages
            goal = (f"keep its items {target:.0f} s ({view.ratio:g} x class {oldest.id}'s {oldest.age} s, the "
                    "automover's ratio; every set evicts, so the keys that come back do so later than that, if ever)")
        if need is None or need <= 0:
            need, goal = dest.pages, "keep its items twice as long (every class keeps items about as long)"
    because = "; ".join(why)
    text = _join(said, because, f"class {dest.id} needs {_plural(need, 'more page')} to {goal}")
    if need <= 0:
        return Finding("too-small", _join(said, because, f"class {dest.id}'s keys fit its pages: its evictions "
                       "should stop"), (NOTHING,), view.release)
    if view.maxbytes is None:
        return Finding("too-small", text, (NOTHING,), view.release)
    memory = math.ceil((view.maxbytes + need * view.page_size) / MIB)
    return Finding("too-small", f"{text}: -m is too small for this load: -m {memory} holds it (the other classes "
                   "keeping the pages they have)",
                   (Action("flag", f"-m {memory}", "at the next start"),), view.release)
