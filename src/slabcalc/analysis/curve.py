"""Hit-ratio curves: one workload replayed at several ``-m``, beside an ideal LRU of the same bytes.

"How much ``-m`` for 95 % hits?" is a curve.  Each point is the whole :func:`simulate` replay at
that ``-m`` (counter for counter what ``slabcalc simulate -m N`` prints) and the
:func:`~slabcalc.engines.ideal.ideal_lru` of ``-m`` bytes: the hits slab classes and
calcification cost are the gap between the two.  The replays are independent, so they run one
process per core (``concurrent.futures``).  The workload is best given as its compact copy
(:func:`slabcalc.inputs.compact.compact_copy`: 24 bytes a request in a temporary file): each worker is
handed its path and reads it a window at a time, so a curve holds about what one replay holds,
whatever the workload's length.  Operations in a list are handed to each worker whole, as it starts.

"Which ``-m`` for 95 % hits?" is :func:`target_limit`: the first point of the curve that reaches the
hit ratio, then a bisection on ``-m`` (whole megabytes, memcached's unit) between it and the point
before, each step a whole replay, down to two limits a megabyte apart: the one that reaches the
ratio and the one below that does not, both replayed.
"""

from __future__ import annotations

import operator
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from slabcalc.engines.ideal import IdealLru, ideal_lru, ideal_result, ideal_ring
from slabcalc.engines.results import Simulation
from slabcalc.engines.sample import room_for
from slabcalc.engines.simulate import simulate
from slabcalc.model.settings import Settings

if TYPE_CHECKING:
    from slabcalc.inputs.compact import CompactOps


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


def hit_ratio_curve(settings: Sequence[Settings], ops: Iterable[tuple] | CompactOps, *, boot: float = 0.0,
                    sample: float | None = None, workers: int | None = None,
                    progress: Callable[[CurvePoint, int, int], None] | None = None,
                    left_out: tuple[int, int] | None = None) -> Curve:
    """Replay ``ops`` under each of ``settings`` (typically one ``-m`` each) and through the ideal
    LRU of each one's ``-m``.

    ``boot`` and ``sample`` are :func:`simulate`'s (a sample replays every ``-m`` on the same keys,
    the ideal LRU in the sample's share of the bytes); a rate too small for the smallest ``-m``
    (:class:`~slabcalc.engines.sample.Room`) raises ``TooCoarse`` before any replay.  ``workers``
    bounds the processes (default ``os.cpu_count()``; 1 replays here, one ``-m`` after
    another).  ``progress(point, done, total)`` is called as each ``-m`` finishes, in the order
    they finish.  ``ops``: a compact copy (read again by each replay, in each worker), or operations
    (held in a list when they are not one).  ``left_out``: ``ops`` are the sample the reader kept as it
    read (``open_workload(sample=)``), and these are the operations and gets it left out: each replay
    reads the sample alone, and adjusts as ``simulate``'s ``left_out`` does.
    """
    from slabcalc.inputs.compact import CompactOps

    ops = ops if isinstance(ops, (list, tuple, CompactOps)) else list(ops)
    if sample is not None and sample < 1 and settings:        # the smallest -m has the least room: it decides
        room_for(min(settings, key=lambda s: s.maxbytes or float("inf")), ops, sample).check()
    total = len(settings)
    workers = max(1, min(total, workers or os.cpu_count() or 1))
    points: list[CurvePoint | None] = [None] * total
    if workers == 1:
        for i, s in enumerate(settings):
            points[i] = point(s, ops, boot, sample, left_out)
            if progress is not None:
                progress(points[i], i + 1, total)
        return Curve(tuple(points), 1)
    # a process a point, each forked for its point and ended after it: a worker that replayed one -m
    # kept that replay's heap (Python's allocator returns little of it) under the next, and a curve's
    # peak RSS grew with the points a worker ran (10 M requests, 6 points on 2 workers: 1.63x one replay)
    waiting = list(enumerate(settings))
    running: dict = {}              # future -> (index, its executor)
    try:
        for done in range(1, total + 1):
            while waiting and len(running) < workers:
                i, s = waiting.pop(0)
                alone = ProcessPoolExecutor(max_workers=1, initializer=_receive, initargs=(ops,))
                running[alone.submit(_point_of_received, s, boot, sample, left_out)] = (i, alone)
            future = next(iter(wait(running, return_when=FIRST_COMPLETED)[0]))
            i, alone = running.pop(future)
            alone.shutdown()            # its point is done, or failed: either way its process is ended
            points[i] = future.result()
            if progress is not None:
                progress(points[i], done, total)
    finally:
        for _, alone in running.values():
            alone.shutdown(cancel_futures=True)
    return Curve(tuple(points), workers)


def point(settings: Settings, ops: Iterable[tuple] | CompactOps, boot: float = 0.0,
          sample: float | None = None, left_out: tuple[int, int] | None = None) -> CurvePoint:
    """One point of the curve: the slab model's replay and the ideal LRU's, at ``settings``' ``-m``.

    From a compact copy, without a sample, one read feeds both: the ideal LRU takes each window of
    operations as the replay reads it, and both see each key as its id (:meth:`CompactOps.read`)."""
    from slabcalc.inputs.compact import CompactOps

    if isinstance(ops, CompactOps) and sample is None:
        ring = ideal_ring(settings)
        simulation = simulate(settings, ops.read(by_id=True, beside=ring.feed), boot=boot)
        return CurvePoint(simulation, ideal_result(ring))
    return CurvePoint(simulate(settings, _replayed(ops, sample), boot=boot, sample=sample, **_left_out(left_out)),
                      ideal_lru(settings, _replayed(ops, sample), sample=sample))


def _left_out(left_out: tuple[int, int] | None) -> dict:
    """``simulate``'s ``left_out`` and ``left_out_gets`` (callables, read once the sample is read) of
    the counts a reader left out: picklable, for the workers."""
    if left_out is None:
        return {}
    return {"left_out": partial(operator.index, left_out[0]), "left_out_gets": partial(operator.index, left_out[1])}


def _replayed(ops: Iterable[tuple] | CompactOps, sample: float | None) -> Iterable[tuple]:
    """``ops`` to replay: a compact copy's keys as their ids, unless a sample chooses keys by their hash."""
    from slabcalc.inputs.compact import CompactOps

    return ops.read(by_id=True) if isinstance(ops, CompactOps) and sample is None else ops


_received: Iterable[tuple] = ()      # a worker's workload: a compact copy's paths, or a list (set once, as it starts)


def _receive(ops: Iterable[tuple]) -> None:
    global _received
    _received = ops


def _point_of_received(settings: Settings, boot: float, sample: float | None,
                       left_out: tuple[int, int] | None) -> CurvePoint:
    return point(settings, _received, boot, sample, left_out)


def hit_ratio_steps(settings: Settings, ops: Sequence[tuple], times: Sequence[float], *, boot: float = 0.0,
                    hash_keys: bool = False) -> tuple[tuple[float, int, int], ...]:
    """``(time, gets, hits)`` of the steps of a timeline (``simulate(..., every=...)``'s row times):
    the gets and hits of the operations after the step before and before ``time``.

    One more replay of ``ops``, keeping the state at each time up to the last operation (``at``:
    the counts before that time's operations, as a timeline row reads them); a time after the
    last operation (the timeline's last row) gets the replay's end.  The snapshots catch the
    background up to each time, which changes none of the replay's counts (the hits a get makes
    depend on the operations before it)."""
    if not ops:
        return ()
    last = max(op[0] for op in ops)
    marks = sorted({t for t in times if t <= last})
    sim = simulate(settings, ops, boot=boot, at=marks, hash_keys=hash_keys)
    counts = {t: (s.totals.gets, s.totals.hits) for t, s in sim.snapshots}
    steps, before = [], (0, 0)
    for t in sorted(set(times)):
        now = counts.get(t, (sim.totals.gets, sim.totals.hits))
        steps.append((t, now[0] - before[0], now[1] - before[1]))
        before = now
    return tuple(steps)


class TargetError(ValueError):
    """A hit ratio no search can look for: outside (0, 1], or a workload without a get."""


@dataclass(frozen=True)
class Target:
    """The smallest ``-m`` (MB) that reaches a hit ratio, searched between the curve's points.

    ``limit_mb`` reaches ``hit_ratio`` (its replay: ``reached``) and ``limit_mb - 1`` does not
    (``below``; None when ``limit_mb`` is 1, the smallest limit there is, or when the release refuses
    to start with ``limit_mb - 1``).  None: not even the
    largest ``-m`` of the curve reaches it (``reached`` is then that replay, the best there is).
    The search takes the first point of the curve that reaches the ratio and the point before it
    as the bracket: a hit ratio that falls as ``-m`` grows inside the bracket (calcification can
    do that) may hide a smaller limit that reaches it, but the two replays always hold."""

    hit_ratio: float
    limit_mb: int | None
    reached: Simulation
    below: Simulation | None
    replays: int                 # replays the search made beyond the curve's own points


def _ratio(simulation: Simulation) -> Fraction | None:
    t = simulation.totals
    return Fraction(t.hits, t.gets) if t.gets else None


def reaches(simulation: Simulation, target: float) -> bool:
    """Hits over gets at or above ``target``, exactly (the ratio as written: 0.95 is 19/20)."""
    ratio = _ratio(simulation)
    return ratio is not None and ratio >= Fraction(repr(target))


def target_limit(curve: Curve, target: float, settings_at: Callable[[int], Settings | None],
                 ops: Sequence[tuple] | CompactOps, *,
                 boot: float = 0.0, sample: float | None = None, left_out: tuple[int, int] | None = None) -> Target:
    """The smallest ``-m`` (MB) whose replay of ``ops`` reaches hit ratio ``target``, searched by
    bisection between the first point of ``curve`` that reaches it and the point before (or -m 1).

    ``settings_at(mb)`` makes the settings of one ``-m`` (every other setting the curve's own), None
    for a limit the release refuses to start with (``-I`` over half of ``-m``): no replay, and below
    the answer when the answer is above it;
    ``boot``, ``sample`` and ``left_out`` are the curve's.  Raises :class:`TargetError` for a target outside
    (0, 1] or a workload without a get."""
    if not 0 < target <= 1:
        raise TargetError(f"a hit ratio is above 0 and at most 1, not {target}")
    points = sorted(curve.points, key=lambda p: p.limit_maxbytes)
    if all(p.simulation.totals.gets == 0 for p in points):
        raise TargetError("the workload has no get: there is no hit ratio to reach")
    first = next((i for i, p in enumerate(points) if reaches(p.simulation, target)), None)
    if first is None:
        return Target(target, None, points[-1].simulation, None, 0)
    high, reached = points[first].limit_maxbytes >> 20, points[first].simulation
    low, below = (points[first - 1].limit_maxbytes >> 20, points[first - 1].simulation) if first else (0, None)
    replays = 0
    while high - low > 1:
        middle = (low + high) // 2
        settings = settings_at(middle)
        if settings is None:           # refused by the release: no server runs with it, nor smaller
            low, below = middle, None
            continue
        run = simulate(settings, _replayed(ops, sample), boot=boot, sample=sample, **_left_out(left_out))
        replays += 1
        if reaches(run, target):
            high, reached = middle, run
        else:
            low, below = middle, run
    return Target(target, high, reached, below, replays)


__all__ = ["Curve", "CurvePoint", "Target", "TargetError", "hit_ratio_curve", "hit_ratio_steps", "point", "reaches",
           "target_limit"]
