"""What a change of classes does to hits, not only to bytes (issue W7).

Fewer page bytes or more items under ``-m`` is not more hits: a class table that
fits the mix better can shrink the classes that hold the items read most, and
a full cache then evicts them sooner.  Two ways to see it:

* a **workload** (``simulate``'s input) replayed under each candidate's
  settings: :func:`predicted_hits` runs the engine of ``slabcalc simulate``
  (the release's LRU, maintainer, crawler and automover) and counts get hits;
* a **metadump's** ``la=``/``fetch=``: :func:`hot_lines` keeps the items that
  were fetched, or used within some seconds of the dump's newest access, so
  that the search sizes the classes for what is read, not for what only sits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

from slabcalc.model.settings import Settings

_LA = re.compile(r"(?:^|\s)la=(\d+)")
_FETCH = re.compile(r"(?:^|\s)fetch=(\w+)")


@dataclass(frozen=True)
class Hits:
    """Get hits of a workload replayed under one configuration."""

    hits: int
    gets: int
    evicted: int

    @property
    def ratio(self) -> float:
        return self.hits / self.gets if self.gets else 0.0


def predicted_hits(settings: Settings, ops: Sequence[tuple]) -> Hits:
    """Replay ``ops`` (``(time, op, key, key_size, value_size, ttl, flags)``) under ``settings``."""
    from slabcalc.engines.simulate import simulate

    result = simulate(settings, ops)
    t = result.totals
    return Hits(t.hits, t.gets, t.evicted)


def change_pct(new: Hits, base: Hits) -> float:
    return 100.0 * (new.hits - base.hits) / base.hits if base.hits else 0.0


def hot_lines(lines: Sequence[str], rule: str) -> tuple[list[str], int]:
    """The metadump lines of items in use, and how many were left out.

    ``rule`` is ``"fetched"`` (``fetch=yes``: read at least once) or a number of
    seconds: items whose ``la=`` (last access) is within that many seconds of the
    newest ``la=`` in the dump.  Lines that are not items (``END``, the echoed
    command) are kept for the reader to account for.
    """
    keep = hot_rule(rule, newest_access(lines) if rule != "fetched" else None)
    kept = [line for line in lines if keep(line)]
    return kept, len(lines) - len(kept)


def newest_access(lines: Iterable[str]) -> int:
    """The newest ``la=`` of metadump ``lines`` (0 when none has one): what ``--hot SECONDS`` counts back from."""
    return max((int(m[1]) for line in lines for m in [_LA.search(line)] if m), default=0)


def hot_rule(rule: str, newest: int | None = None) -> Callable[[str], bool]:
    """Whether :func:`hot_lines` keeps a line, one line at a time (``newest``: :func:`newest_access`,
    for a number of seconds); lines that are not items are kept."""
    if rule == "fetched":
        def keep(line: str) -> bool:
            found = _FETCH.search(line)
            return found is None or found[1] == "yes"
    else:
        seconds = int(rule)

        def keep(line: str) -> bool:
            found = _LA.search(line)
            return found is None or int(found[1]) >= newest - seconds
    return lambda line: not line.startswith("key=") or keep(line)


class HotLines:
    """The lines :func:`hot_rule` keeps, one at a time as they are read; ``left_out`` counts the others
    read so far (final once every line is read).  What :func:`hot_lines` keeps, without a list."""

    def __init__(self, lines: Iterable[str], rule: str, newest: int | None = None):
        self._lines, self._keep, self.left_out = iter(lines), hot_rule(rule, newest), 0

    def __iter__(self) -> Iterator[str]:
        keep = self._keep
        for line in self._lines:
            if keep(line):
                yield line
            else:
                self.left_out += 1


@dataclass(frozen=True)
class HotItems:
    """``optimize --hot``: the rule (``fetched`` or a number of seconds) and the metadump items it left out."""

    rule: str
    left_out: int


@dataclass(frozen=True)
class WorkloadHits:
    """``optimize --workload``: get hits of the workload replayed under the baseline and each space's best."""

    source: str
    ops: int
    memory_limit_mb: int
    hits: tuple[tuple[str, Hits], ...]     # (flags, hits); the baseline's flags are ""

    @property
    def base(self) -> Hits:
        return dict(self.hits)[""]

    def of(self, flags: str) -> Hits | None:
        return dict(self.hits).get(flags)


def workload_hits(optimum, ops: Sequence[tuple], source: str) -> WorkloadHits:
    """Replay ``ops`` under ``optimum``'s baseline and the first candidate of each space
    (:class:`slabcalc.analysis.optimize.Optimum`) by simulate's engine."""
    rows = {"": optimum.baseline, **{c.flags: c for c in optimum.candidates if c is optimum.first_of(c.space)}}
    hits = tuple((flags, predicted_hits(c.report.settings, ops)) for flags, c in rows.items())
    return WorkloadHits(source, len(ops), optimum.baseline.report.settings.maxbytes >> 20, hits)
