"""Would another sample of the same mix choose the same flags?  The search run again on resamples of the items.

Issue 41: optimize's ``-n``/``-f`` answer changed between two samples of one distribution, and
nothing said so.  The fresh draws of :mod:`.spread` score the candidates found on *this* sample;
they cannot say whether a search on another sample would find the same flags.  So the whole
search (the same ``--validate``, seed and limits) is run again on ``K`` bootstrap resamples of the
items: each a draw, with replacement, of as many items as the input holds, from the input's own
items (a multinomial draw of the counts, seeded by ``--seed`` and the resample's number, so the same
seed gives the same resamples).  Each resample's recommendation (its flags, or no change) is set
beside the recommendation's, and both, and the configuration given (the baseline), are counted by
``report`` on the resample (below): page bytes, or with ``-m`` the items that fit.

* **stable**: every resample chose the same flag string.
* **holds** on a resample: the recommended flags gain at least that resample's own choice's gain
  less :data:`~slabcalc.analysis.optimize.front.GAIN_THRESHOLD_PCT` (1 point, the margin the verdict
  already calls noise).  When every resample holds, the exact flags vary but their gain does not.
* **prefer**: when not stable, the simplest configuration (no change first, then ``-n``/``-f``,
  ``slab_chunk_max``, a ``slab_sizes`` list; a ``-n``/``-f`` caught in the class cap is simple no
  more) that is simpler than the recommendation and holds on every resample and on the items
  themselves (within the margin of the recommendation's gain on every item), among the baseline,
  each space's best on the items and each resample's choice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from slabcalc.analysis.optimize.front import (GAIN_THRESHOLD_PCT, SIMPLER, Optimum, Score, as_columns, full_scale,
                                              gain, split)
from slabcalc.analysis.optimize.front import optimize as search
from slabcalc.analysis.report import build_report
from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.model.settings import Settings


@dataclass(frozen=True)
class Resampled:
    """One resample: what its own search chose, and the recommendation counted on it."""

    items: int
    space: str                 # its recommendation's space; "baseline" when it keeps the flags given
    flags: str                 # its recommendation's flags ("" for no change)
    baseline: Score
    chosen: Score              # its own choice, counted on its items
    recommended: Score         # the recommendation's flags, counted on its items
    chosen_gain: float
    recommended_gain: float
    same_flags: bool

    @property
    def holds(self) -> bool:
        return self.same_flags or self.recommended_gain >= self.chosen_gain - GAIN_THRESHOLD_PCT


@dataclass(frozen=True)
class Preferred:
    """A simpler configuration that holds on the items and on every resample."""

    space: str
    flags: str
    gain: float                     # on the items the search held out (every item without --validate)
    recommended_gain: float         # the recommendation's, on the same items
    resample_gains: tuple[float, ...]


@dataclass(frozen=True)
class Stability:
    space: str                      # the recommendation's space ("baseline": no change)
    flags: str                      # the recommendation's flags
    seed: int
    resamples: tuple[Resampled, ...]
    prefer: Preferred | None = None

    @property
    def same_flags(self) -> int:
        return sum(r.same_flags for r in self.resamples)

    @property
    def stable(self) -> bool:
        return self.same_flags == len(self.resamples)

    @property
    def holds(self) -> bool:
        return all(r.holds for r in self.resamples)


def optimize(settings: Settings, distribution, *, max_classes: int | None = None, validate: float | None = None,
             seed: int = 0, size_key_length: int = SIZE_KEY_LENGTH, keep: int = 3, resamples: int = 0) -> Optimum:
    """:func:`slabcalc.analysis.optimize.front.optimize` (every space searched, the verdict), then with
    ``resamples`` the same search run again on that many resamples of the items: the result's
    ``stability`` (0: not run, None)."""
    pairs = list(distribution.items() if isinstance(distribution, dict) else distribution)   # read once
    found = search(settings, pairs, max_classes=max_classes, validate=validate, seed=seed,
                   size_key_length=size_key_length, keep=keep)
    everything = [(t[0], t[1]) for t in pairs]
    if not resamples or not 0 < sum(n for _, n in everything) < 1 << 62:    # a multinomial draw's int64 counts
        return found
    with_capacity = settings.memory_limit is not None
    columns: dict[int, list] = {}

    def scorer(s: Settings, items: list) -> Score:       # the same items are counted under several settings
        if id(items) not in columns:
            columns[id(items)] = as_columns(items)
        return Score.of(build_report(s, columns[id(items)], capacity=with_capacity, size_key_length=size_key_length))

    def research(items: list) -> tuple[Optimum, list]:
        again = search(settings, items, max_classes=max_classes, validate=validate, seed=seed,
                       size_key_length=size_key_length, keep=keep)
        return again, _unseen(items, again)

    return replace(found, stability=stability(found, _unseen(everything, found), research, resamples, seed,
                                              scorer, everything))


def _unseen(items: list, found: Optimum) -> list:
    """The items a search's answer is judged on: its held-out part at the mix's full size (the same
    split the search made), or every item when nothing was held out."""
    if found.validate is None:
        return items
    _, held = split(items, found.validate, found.seed)
    return full_scale(held, sum(n for _, n in items))


def resample(distribution: Sequence[tuple], seed: int, number: int) -> list:
    """Resample ``number`` of ``distribution`` (pairs ``(Item, count)``): as many items as it holds,
    drawn with replacement from its items (a multinomial draw of the counts), items drawn 0 times
    left out; the same ``seed`` and ``number`` give the same resample."""
    import numpy as np

    counts = np.fromiter((t[1] for t in distribution), dtype=np.float64, count=len(distribution))
    total = sum(t[1] for t in distribution)
    rng = np.random.default_rng([seed & (1 << 64) - 1, 41, 3, number])
    drawn = rng.multinomial(total, counts / counts.sum())
    return [(t[0], n) for t, n in zip(distribution, drawn.tolist()) if n]


def simplicity(space: str, settings: Settings) -> tuple[int, int]:
    """Smaller is simpler: no change, then the verdict's order (:data:`.front.SIMPLER`), a
    ``-n``/``-f`` in the class cap after every other."""
    from slabcalc.analysis.advice import class_cap_trap

    if space == "baseline":
        return (0, 0)
    return (2 if class_cap_trap(settings) is not None else 1, SIMPLER.index(space))


def stability(optimum, unseen: Sequence[tuple], research: Callable, count: int, seed: int, scorer: Callable,
              distribution: Sequence[tuple]) -> Stability:
    """The recommendation of ``optimum`` against ``research`` (the same search) on ``count`` resamples
    of ``distribution``.  ``research(pairs)`` gives the search's :class:`Optimum` of the pairs and the
    pairs its answer is judged on (the part it held out, at full scale); ``unseen`` is that part of
    ``distribution``; ``scorer(settings, pairs)`` counts a configuration on items as a :class:`Score`."""
    limit = optimum.memory_limit
    mine = optimum.recommended
    base_settings = optimum.baseline.report.settings
    space, flags = (mine.space, mine.flags) if mine else ("baseline", "")
    settings = mine.report.settings if mine else base_settings
    pool = {"": ("baseline", base_settings)}
    pool.update({c.flags: (c.space, c.report.settings) for c in optimum.candidates
                 if c is optimum.first_of(c.space)})
    rows, judged = [], []
    for number in range(1, count + 1):
        pairs = resample(distribution, seed, number)
        again, on = research(pairs)
        theirs = again.recommended
        their = (theirs.space, theirs.flags, theirs.report.settings) if theirs else ("baseline", "", base_settings)
        base, chosen, ours = (scorer(s, on) for s in (base_settings, their[2], settings))
        rows.append(Resampled(sum(n for _, n in pairs), their[0], their[1], base, chosen, ours,
                              gain(chosen, base, limit), gain(ours, base, limit), their[1] == flags))
        judged.append(on)
    result = Stability(space, flags, seed, tuple(rows))
    if result.stable:
        return result
    return Stability(space, flags, seed, tuple(rows),
                     _prefer(pool, (space, settings), unseen, judged, rows, scorer, limit))


def _prefer(pool, mine, distribution, scored, rows, scorer, limit) -> Preferred | None:
    """The simplest configuration of ``pool`` simpler than ``mine`` that holds on the items and on
    every resample (module docstring); None if none does."""

    simpler = sorted((simplicity(space, s), flags) for flags, (space, s) in pool.items()
                     if simplicity(space, s) < simplicity(*mine))
    if not simpler:
        return None
    base = scorer(pool[""][1], distribution)
    ours = gain(scorer(mine[1], distribution), base, limit)
    found = []
    for rank, flags in simpler:
        space, s = pool[flags]
        on_items = gain(scorer(s, distribution), base, limit)
        if on_items < ours - GAIN_THRESHOLD_PCT:
            continue
        on_each = tuple(gain(scorer(s, pairs), r.baseline, limit) for pairs, r in zip(scored, rows))
        if all(g >= r.chosen_gain - GAIN_THRESHOLD_PCT for g, r in zip(on_each, rows)):
            found.append((rank, -min(on_each), flags, Preferred(space, flags, on_items, ours, on_each)))
    return min(found)[-1] if found else None
