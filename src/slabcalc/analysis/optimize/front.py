"""The whole optimisation: every space searched, each winner scored again by ``report``, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.advice import class_cap_trap
from slabcalc.analysis.optimize.grid import CHUNK_MAX_SMALLEST, search_chunk_max, search_n_f
from slabcalc.analysis.optimize.requests import chunk_requests, page_bytes
from slabcalc.analysis.optimize.spread import Claim
from slabcalc.analysis.optimize.slab_sizes import best_slab_sizes, merge_thin_sizes, settings_for
from slabcalc.analysis.report import Report, build_report
from slabcalc.errors import ValueRefused
from slabcalc.model.distribution import ItemColumns
from slabcalc.model.settings import Settings, configure

SPACES = ("n_f", "slab_sizes", "slab_chunk_max")
GAIN_THRESHOLD_PCT = 1.0          # below this the current flags are fine; within it of the best, the simpler wins
VALIDATE_DEFAULT = 0.2            # the part of the items held out, by default, to score the candidates on
MIN_HELD_OUT = 20                 # fewer items than this expected in the held-out part: no validation
SIMPLER = ("n_f", "slab_chunk_max", "slab_sizes")   # the verdict's order of simplicity


@dataclass(frozen=True)
class Candidate:
    """A configuration as ``report`` sees it."""

    space: str          # "baseline", "n_f", "slab_sizes" or "slab_chunk_max"
    flags: str          # paste-ready memcached flags ("" for the baseline)
    report: Report      # build_report of the (training) distribution under it
    held_out: Report | None = None   # with --validate: the report of the held-back part at full scale
    fresh: Claim | None = None       # with --validate, fewest page bytes: the gain on fresh samples of the
                                     # mix and its interval (:mod:`.spread`)
    wins: float | None = None        # with fresh: the share of the fresh draws in which it is the best

    @property
    def page_bytes(self) -> int:
        return self.report.total("page_bytes")


@dataclass(frozen=True)
class Score:
    """One configuration counted by ``report`` on a set of items: what a gain compares."""

    page_bytes: int
    capacity: int | None       # with -m: the items of the set that fit

    @classmethod
    def of(cls, report: Report) -> Score:
        return cls(report.total("page_bytes"), report.capacity.items if report.capacity else None)


def gain(score: Score, base: Score, memory_limit: int | None) -> float:
    """How much better ``score`` is than ``base`` (the same items): page bytes saved, or with -m
    items gained, in percent."""
    if memory_limit is not None:
        items = base.capacity
        return 100.0 * (score.capacity - items) / items if items else 0.0
    return 100.0 * (base.page_bytes - score.page_bytes) / base.page_bytes if base.page_bytes else 0.0


@dataclass(frozen=True)
class Optimum:
    baseline: Candidate
    candidates: tuple[Candidate, ...]     # best first within each space, spaces in SPACES order
    memory_limit: int | None
    validate: float | None = None
    seed: int | None = None
    held_out_items: int = 0               # with validate: how many items were held out (each Candidate's
                                          # held_out report counts them at full scale: :func:`full_scale`)
    whole_baseline: Report | None = None  # with validate: the baseline's report of every item (the gate's)
    stability: object | None = None       # with resamples: a :class:`.stability.Stability` (not imported here:
                                          # that module imports this one)

    def gain_pct(self, c: Candidate) -> float:
        """How much better ``c`` is than the baseline: page bytes saved, or with -m items gained."""
        return self._gain(c.report, self.baseline.report)

    def held_out_gain_pct(self, c: Candidate) -> float | None:
        """The same on the held-out items (``--validate``), or None."""
        if c.held_out is None or self.baseline.held_out is None:
            return None
        return self._gain(c.held_out, self.baseline.held_out)

    def _gain(self, report: Report, base: Report) -> float:
        return gain(Score.of(report), Score.of(base), self.memory_limit)

    def verdict_gain(self, c: Candidate) -> float:
        """The gain the verdict goes by: on fresh samples of the mix drawn from the held-out items when
        there are some (page bytes: :mod:`.spread`), else on the held-out items (they were not
        optimised for), else on the items."""
        if c.fresh is not None:
            return c.fresh.gain
        held = self.held_out_gain_pct(c)
        return self.gain_pct(c) if held is None else held

    @property
    def best(self) -> Candidate | None:
        """The simplest first candidate within :data:`GAIN_THRESHOLD_PCT` of the largest gain.

        Simplest: ``-n``/``-f`` before ``slab_chunk_max`` before a ``slab_sizes`` list, but a
        ``-n``/``-f`` caught in the class cap (:func:`slabcalc.analysis.advice.class_cap_trap`: larger
        items would take the largest chunk) is simple no more; the gain is :meth:`verdict_gain`
        (held-out items first)."""
        firsts = [c for c in self.candidates if c is self.first_of(c.space)]
        if not firsts:
            return None
        top = max(self.verdict_gain(c) for c in firsts)
        close = [c for c in firsts if self.verdict_gain(c) >= top - GAIN_THRESHOLD_PCT]
        return min(close, key=lambda c: (class_cap_trap(c.report.settings) is not None, SIMPLER.index(c.space),
                                         -self.verdict_gain(c)))

    @property
    def recommended(self) -> Candidate | None:
        """The change recommended: :attr:`best`, unless the defaults are fine (None)."""
        return None if self.defaults_fine else self.best

    def first_of(self, space: str) -> Candidate | None:
        return next((c for c in self.candidates if c.space == space), None)

    @property
    def defaults_fine(self) -> bool:
        """No change gains the margin; with fresh samples, none gains it on all but the lowest
        ``(100 - LEVEL) / 2`` % of them (a claim whose interval reaches under the margin is no claim)."""
        best = self.best
        return (best is None or self.verdict_gain(best) < GAIN_THRESHOLD_PCT
                or (best.fresh is not None and best.fresh.low < GAIN_THRESHOLD_PCT))


def split(distribution: Sequence[tuple], fraction: float, seed: int) -> tuple[list, list]:
    """``(kept, held_out)``: each item's count split at random, ``fraction`` held out."""
    import numpy as np

    if not 0 < fraction < 1:
        raise ValueRefused("--validate takes a fraction between 0 and 1 (exclusive)")
    rng = np.random.default_rng(seed)
    counts = np.fromiter((t[1] for t in distribution), dtype=np.int64, count=len(distribution))
    held = rng.binomial(counts, fraction)
    kept_part, held_part = [], []
    for t, n, h in zip(distribution, counts.tolist(), held.tolist()):
        if n - h:
            kept_part.append((t[0], n - h))
        if h:
            held_part.append((t[0], h))
    return kept_part, held_part


def full_scale(part: Sequence[tuple], items: int) -> list:
    """``part`` (pairs ``(Item, count)``) with its counts scaled to ``items`` items in all, in the same
    proportions (largest remainders): the held-out items as a fresh sample of the whole mix's size.

    A fifth of the items fills a fifth of the pages, and every class used rounds its chunks up to a
    whole page: scored at a fifth of the scale, a page's rounding weighs five times what it weighs on
    the node, and one page more or less in a class moves the gain by points (issue 41).  Scaled, each
    class is counted at the size the recommendation will meet.
    """
    import numpy as np

    counts = np.fromiter((t[1] for t in part), dtype=object, count=len(part))   # Python ints: no overflow
    held = int(counts.sum()) if len(part) else 0
    if not held or held == items:
        return list(part)
    exact = counts * items
    base, rest = exact // held, exact % held
    short = items - int(base.sum())
    order = np.argsort(-rest.astype(np.float64), kind="stable")[:short]
    base[order] += 1
    return [(t[0], int(n)) for t, n in zip(part, base.tolist()) if n]


def optimize(settings: Settings, distribution: Iterable[tuple], *,
             max_classes: int | None = None, validate: float | None = None, seed: int = 0,
             size_key_length: int = SIZE_KEY_LENGTH, keep: int = 3) -> Optimum:
    """Search every space for ``distribution`` (``(Item, count[, rows])``) under ``settings``: for the
    fewest page bytes, or, when the settings were given -m (``settings.memory_limit``), the most items.

    Each winner is re-scored by :func:`slabcalc.analysis.report.build_report`; a
    disagreement with the search's own score is a bug and raises.  (The package's ``optimize`` is
    :func:`slabcalc.analysis.optimize.stability.optimize`: this, and the search again on resamples.)
    """
    memory_limit = settings.memory_limit
    with_capacity = memory_limit is not None
    pairs = distribution.items() if isinstance(distribution, dict) else distribution
    distribution = [(t[0], t[1]) for t in pairs]
    everything = distribution
    held_out = None
    if validate is not None and sum(n for _, n in distribution) * validate < MIN_HELD_OUT:
        validate = None     # too few items to hold any out meaningfully: scored on them all (the record says so)
    if validate is not None:
        distribution, held_pairs = split(distribution, validate, seed)
        held_out_items = sum(n for _, n in held_pairs)
        held_out = as_columns(full_scale(held_pairs, sum(n for _, n in everything)))
    distribution = as_columns(distribution)

    def candidate(space: str, flags: str, s: Settings, expected: int | None) -> Candidate:
        rep = build_report(s, distribution, capacity=with_capacity, size_key_length=size_key_length)
        if expected is not None and rep.total("page_bytes") != expected:
            raise AssertionError(f"optimize scored {flags} at {expected} page bytes, report counts "
                                 f"{rep.total('page_bytes')}")
        other = (build_report(s, held_out, capacity=with_capacity, size_key_length=size_key_length)
                 if held_out is not None else None)
        return Candidate(space, flags, rep, other)

    baseline = candidate("baseline", "", settings, None)
    requests = chunk_requests(settings, distribution, size_key_length, with_capacity)
    if page_bytes(settings, requests) != baseline.page_bytes:
        raise AssertionError("chunk requests disagree with the report")
    found: list[Candidate] = []
    for scored in search_n_f(settings, requests, keep=keep):
        found.append(candidate("n_f", scored.flags, scored.settings, scored.page_bytes))
    p = settings.profile
    if p.slab_sizes is True and requests.sizes:
        answer = best_slab_sizes(settings, requests, max_classes)
        plain = replace(settings, slab_sizes=None)
        listed = merge_thin_sizes(plain, requests, answer.listed)
        flags = " ".join(Settings.argv(slab_sizes=listed))
        chosen = settings_for(plain, listed)
        _check_accepted(settings, listed)
        found.append(candidate("slab_sizes", flags, chosen,
                               answer.page_bytes if listed == answer.listed else page_bytes(chosen, requests)))
    if requests.sizes and requests.sizes[-1] > CHUNK_MAX_SMALLEST:   # large items: try other chunk maxima
        for scored in search_chunk_max(settings, distribution, size_key_length=size_key_length)[:keep]:
            found.append(candidate("slab_chunk_max", scored.flags, scored.settings, scored.page_bytes))
    if held_out is None:
        return Optimum(baseline, tuple(found), memory_limit)
    if not with_capacity:
        baseline, found = _with_spread(baseline, found, held_pairs, everything, seed, size_key_length)
    return Optimum(baseline, tuple(found), memory_limit, validate, seed, held_out_items,
                   build_report(settings, as_columns(everything), capacity=with_capacity,
                                size_key_length=size_key_length))


def _with_spread(baseline: Candidate, found: list[Candidate], held_pairs, everything, seed: int,
                 size_key_length: int) -> tuple[Candidate, list[Candidate]]:
    """Each candidate with its claim and the interval of its gain on fresh samples of the mix's size,
    drawn from the held-out items and from every item (:mod:`slabcalc.analysis.optimize.spread`)."""
    import numpy as np

    from slabcalc.analysis.optimize.spread import Cells, Scorer, claim, draws, fresh_draws, gains

    items = sum(n for _, n in everything)
    cells = Cells.of(baseline.report.settings, held_pairs)
    whole = Cells.of(baseline.report.settings, everything)
    fresh, twice = draws(cells, items, seed)
    from_all = fresh_draws(whole, items, seed)
    rows = np.searchsorted(whole.sizes, cells.sizes)      # the held-out sizes among every item's

    def scored(settings):
        scorer = Scorer(settings, whole, size_key_length)  # placed once for both kinds of draw
        return (scorer.page_bytes(fresh, rows), scorer.page_bytes(twice, rows), scorer.page_bytes(from_all))

    base, base_twice, base_all = scored(baseline.report.settings)
    out, per_draw = [], []
    for c in found:
        on_fresh, on_twice, on_all = scored(c.report.settings)
        gained = gains(base, on_fresh)
        per_draw.append(gained)
        out.append(replace(c, fresh=claim(gained, gains(base_twice, on_twice), gains(base_all, on_all))))
    firsts = [i for i, c in enumerate(out) if c.space not in {d.space for d in out[:i]}]
    if firsts:      # in each fresh draw, the first of a space that gains most (the simpler on a tie)
        table = np.stack([per_draw[i] for i in firsts])
        order = sorted(range(len(firsts)), key=lambda j: SIMPLER.index(out[firsts[j]].space))
        winner = np.asarray(order)[np.argmax(table[order], axis=0)]
        for j, i in enumerate(firsts):
            out[i] = replace(out[i], wins=float(np.mean(winner == j)))
    return replace(baseline, fresh=Claim(0.0, 0.0, 0.0)), out


def as_columns(distribution: list[tuple]) -> list:
    """The pairs whose items are known by size as one :class:`ItemColumns` (what the report and
    :func:`chunk_requests` sum in bulk: optimize scores the same items a dozen times), then the
    other pairs.  A short list, or counts whose int64 sums could overflow, stay pairs."""
    import numpy as np

    sized = [(item.item_size, n) for item, n in distribution if item.item_size is not None]
    if len(sized) < 64 or sum(n for _, n in sized) >= 1 << 62:
        return distribution
    sizes = np.fromiter((s for s, _ in sized), dtype=np.int64, count=len(sized))
    counts = np.fromiter((n for _, n in sized), dtype=np.int64, count=len(sized))
    return [ItemColumns(None, None, None, sizes, counts),
            *((item, n) for item, n in distribution if item.item_size is None)]


def _check_accepted(settings: Settings, listed: Sequence[int]) -> None:
    """memcached must start with the list (refusals are memcached's own checks)."""
    argv = replace(settings, slab_sizes=tuple(listed)).as_argv()
    made = configure(settings.profile, argv)
    if made.slab_sizes != tuple(listed):
        raise AssertionError(f"memcached would read slab_sizes as {made.slab_sizes}, not {tuple(listed)}")
