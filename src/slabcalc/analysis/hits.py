"""What a change of classes does to hits, not only to bytes (issue W7).

Fewer page bytes or more items under ``-m`` is not more hits: a class table that
fits the mix better can shrink the classes that hold the items read most, and
a full cache then evicts them sooner.  Two ways to see it:

* a **workload** (``simulate``'s input) replayed under each candidate's
  settings: :func:`predicted_hits` runs the engine of ``slabcalc simulate``
  (the release's LRU, maintainer, crawler and automover) and counts get hits;
* a **metadump's** ``la=``/``fetch=``: :func:`slabcalc.inputs.metadump.hot_lines` keeps the
  items that were fetched, or used within some seconds of the dump's newest access, so
  that the search sizes the classes for what is read, not for what only sits
  (``optimize --hot``, read through :func:`slabcalc.inputs.open_items`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from slabcalc.model.settings import Settings


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
