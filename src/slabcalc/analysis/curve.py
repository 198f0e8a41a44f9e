"""Hit-ratio curves: one workload replayed at several ``-m``, beside an ideal LRU of the same bytes.

"How much ``-m`` for 95 % hits?" is a curve.  Each point is the whole :func:`simulate` replay at
that ``-m`` (counter for counter what ``slabcalc simulate -m N`` prints) and the
:func:`~slabcalc.engines.ideal.ideal_lru` of ``-m`` bytes: the hits slab classes and
calcification cost are the gap between the two.  The replays are independent, so they run one
process per core (``concurrent.futures``), the workload read once and handed to each worker as
it starts.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from slabcalc.engines.ideal import IdealLru, ideal_lru
from slabcalc.engines.results import Simulation
from slabcalc.engines.sample import room_for
from slabcalc.engines.simulate import simulate
from slabcalc.model.settings import Settings


@dataclass(frozen=True)
class CurvePoint:
    """One ``-m``: the slab model's replay and the ideal LRU's."""

    simulation: Simulation
    ideal: IdealLru

    @property
    def limit_maxbytes(self) -> int:
        return self.simulation.settings.maxbytes

    @property
    def hit_ratio(self) -> float | None:
        t = self.simulation.totals
        return t.hits / t.gets if t.gets else None


@dataclass(frozen=True)
class Curve:
    points: tuple[CurvePoint, ...]     # in the order of the settings given
    workers: int                       # processes the replays ran in (1: this one)


def hit_ratio_curve(settings: Sequence[Settings], ops: Iterable[tuple], *, boot: float = 0.0,
                    sample: float | None = None, workers: int | None = None,
                    progress: Callable[[CurvePoint, int, int], None] | None = None) -> Curve:
    """Replay ``ops`` under each of ``settings`` (typically one ``-m`` each) and through the ideal
    LRU of each one's ``-m``.

    ``boot`` and ``sample`` are :func:`simulate`'s (a sample replays every ``-m`` on the same keys,
    the ideal LRU in the sample's share of the bytes); a rate too small for the smallest ``-m``
    (:class:`~slabcalc.engines.sample.Room`) raises ``TooCoarse`` before any replay.  ``workers``
    bounds the processes (default ``os.cpu_count()``; 1 replays here, one ``-m`` after
    another).  ``progress(point, done, total)`` is called as each ``-m`` finishes, in the order
    they finish.
    """
    ops = ops if isinstance(ops, (list, tuple)) else list(ops)
    if sample is not None and sample < 1 and settings:        # the smallest -m has the least room: it decides
        room_for(min(settings, key=lambda s: s.maxbytes or float("inf")), ops, sample).check()
    total = len(settings)
    workers = max(1, min(total, workers or os.cpu_count() or 1))
    points: list[CurvePoint | None] = [None] * total
    if workers == 1:
        for i, s in enumerate(settings):
            points[i] = point(s, ops, boot, sample)
            if progress is not None:
                progress(points[i], i + 1, total)
        return Curve(tuple(points), 1)
    with ProcessPoolExecutor(max_workers=workers, initializer=_receive, initargs=(ops,)) as pool:
        futures = {pool.submit(_point_of_received, s, boot, sample): i for i, s in enumerate(settings)}
        for done, future in enumerate(as_completed(futures), 1):
            i = futures[future]
            points[i] = future.result()
            if progress is not None:
                progress(points[i], done, total)
    return Curve(tuple(points), workers)


def point(settings: Settings, ops: Sequence[tuple], boot: float = 0.0, sample: float | None = None) -> CurvePoint:
    """One point of the curve: the slab model's replay and the ideal LRU's, at ``settings``' ``-m``."""
    return CurvePoint(simulate(settings, ops, boot=boot, sample=sample), ideal_lru(settings, ops, sample=sample))


_received: Sequence[tuple] = ()      # a worker's copy of the workload (set once, as it starts)


def _receive(ops: Sequence[tuple]) -> None:
    global _received
    _received = ops


def _point_of_received(settings: Settings, boot: float, sample: float | None) -> CurvePoint:
    return point(settings, _received, boot, sample)


__all__ = ["Curve", "CurvePoint", "hit_ratio_curve", "point"]
