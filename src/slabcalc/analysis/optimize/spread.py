"""What a fresh sample of the same mix would gain: the held-out items drawn again, at full scale, many times.

The held-out items scored at full scale (:func:`~slabcalc.analysis.optimize.front.full_scale`) are one
guess at the node's items tomorrow; a fresh sample of the same mix differs from it by chance, and
every class rounds its chunks up to a whole page, so a few pages more or less move a gain by points
on a mix of a hundred pages (issue 41).  The spread says how far: ``DRAWS`` fresh samples of the whole
mix's size are drawn from the held-out items (a draw of the held-out items again, then of the mix's
size from that: the held-out part's own chance and a fresh sample's), each scored under the baseline
and each candidate, paired (the same draw for every configuration).

Scoring a draw costs no placement: items of one ``ntotal`` go to the same chunks under a configuration
(a one-chunk item to the first class whose chunk holds it, ``slabs_clsid()``; a chunked one as
:func:`slabcalc.analysis.placement.place_item` places it), so each configuration is a matrix from
item sizes to class chunks, placed once, and a draw is counts of item sizes.  Pages per class are
``ceil(chunks / perslab)`` of the release's page length, as ``report`` counts them; at the held-out
counts at full scale the matrix gives the held-out report's page bytes
(tests/analysis/test_optimize_fresh.py, test_the_draws_count_pages_as_report_does).

The held-out fifth alone is a poor picture of a mix's rare items: a class that a fresh sample fills
with a few items (a chunk tail, a rare large value) gets none, or five times its share, when a
fifth is scaled up, and the page that class costs is lost or counted five times.  On a mix with 1 %
of 20-200 KB values the mean over draws from the held-out items was 0.67 points high on average and
up to 2.3 points off (benchmarks/optimize_claim.py).  Draws from every item (the searched ones
included) picture the rare items five times better, but a configuration fitted to the searched
items looks better on them than it is.  Each error leans one way, high: the claim is the lower of
the two means (:func:`claim`), 0.12 points high on average and at most 1.1 off on that mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.placement import CHUNKED, STORED, chunked_in_bulk, item_sizer, place_item
from slabcalc.model.classes import slab_classes
from slabcalc.model.settings import Settings

DRAWS = 200                # fresh samples drawn
LEVEL = 90                 # the interval stated: the middle LEVEL % of the draws' gains
STABLE_PCT = 80            # the recommendation is stable when it is the best in this % of the fresh draws


@dataclass(frozen=True)
class Cells:
    """The held-out items by ``ntotal``: ``sizes`` ascending, ``counts``, and one item of each size."""

    sizes: tuple[int, ...]
    counts: tuple[int, ...]
    items: tuple        # an Item of each size (placed for the chunked ones)

    @classmethod
    def of(cls, settings: Settings, pairs: Sequence[tuple]) -> Cells:
        size_of = item_sizer(settings)
        counts: dict[int, int] = {}
        first: dict[int, object] = {}
        for item, n in pairs:
            s = size_of(item)
            counts[s] = counts.get(s, 0) + n
            first.setdefault(s, item)
        sizes = tuple(sorted(counts))
        return cls(sizes, tuple(counts[s] for s in sizes), tuple(first[s] for s in sizes))


class Scorer:
    """Page bytes of item-size counts under one configuration (``report``'s count, no placement)."""

    def __init__(self, settings: Settings, cells: Cells, size_key_length: int = SIZE_KEY_LENGTH):
        import numpy as np

        classes = slab_classes(settings)
        chunk_sizes = np.asarray([c.chunk_size for c in classes], dtype=np.int64)
        self.perslab = np.asarray([c.perslab for c in classes], dtype=np.float64)
        self.lengths = np.asarray([settings.page_length(c.chunk_size, c.perslab) for c in classes],
                                  dtype=np.float64)
        largest = min(classes[-1].chunk_size, settings.item_size_max)
        sizes = np.asarray(cells.sizes, dtype=np.int64)
        matrix = np.zeros((len(sizes), len(classes)), dtype=np.float64)
        one = sizes <= largest
        rows = np.nonzero(one)[0]
        matrix[rows, np.searchsorted(chunk_sizes, sizes[one], side="left")] = 1
        at = {c.id: i for i, c in enumerate(classes)}
        rest = chunked_in_bulk(settings, classes, cells.items, cells.sizes, np.nonzero(~one)[0], matrix,
                               size_key_length)
        for row in rest:     # larger than a chunk: chunked, or refused (no chunks)
            placed = place_item(settings, classes, cells.items[row], size_key_length)
            if placed.status in (CHUNKED, STORED):
                for chunk in placed.chunks:
                    matrix[row, at[chunk.class_id]] += 1
        self.matrix = matrix

    def page_bytes(self, counts, rows=None):
        """Page bytes for each row of ``counts`` (draws x item sizes), or for one vector of counts;
        ``rows``: the counts are of these item sizes of the scorer's cells only (a subset's draws)."""
        import numpy as np

        matrix = self.matrix if rows is None else self.matrix[rows]
        chunks = np.asarray(counts, dtype=np.float64) @ matrix
        return (np.ceil(chunks / self.perslab) * self.lengths).sum(axis=-1)


def fresh_draws(cells: Cells, items: int, seed: int, n: int = DRAWS):
    """``n`` fresh samples of ``items`` items drawn from the shares of ``cells`` (n x sizes)."""
    import numpy as np

    rng = np.random.default_rng([seed, 41, 2])
    counts = np.asarray(cells.counts, dtype=np.float64)
    return rng.multinomial(items, counts / counts.sum(), size=n)


def draws(cells: Cells, items: int, seed: int, n: int = DRAWS):
    """``(fresh, twice)``: ``n`` fresh samples of ``items`` items drawn from the held-out items' shares,
    and ``n`` drawn from a redraw of the held-out items (their own chance as well), as counts per
    item size (n x sizes)."""
    import numpy as np

    rng = np.random.default_rng([seed, 41])
    counts = np.asarray(cells.counts, dtype=np.float64)
    held = int(counts.sum())
    fresh = rng.multinomial(items, counts / held, size=n)
    again = rng.multinomial(held, counts / held, size=n)
    return fresh, np.stack([rng.multinomial(items, row / held) for row in again])


def gains(base, other):
    """Per draw, the percentage of page bytes ``other`` saves on ``base``."""
    return 100.0 * (base - other) / base


@dataclass(frozen=True)
class Claim:
    """What a configuration gains on a fresh sample of the mix: ``gain`` the expected gain, page
    rounding included: the lower of ``held`` (the mean over fresh draws from the held-out items) and
    ``whole`` (the mean over fresh draws from every item), ``low``-``high`` the middle :data:`LEVEL` %
    of the draws that also redraw the held-out items, moved to centre on ``gain``."""

    gain: float
    low: float
    high: float
    held: float | None = None
    whole: float | None = None


def claim(fresh_gains, twice_gains, whole_gains=None) -> Claim:
    """The claim from the per-draw gains: on draws from the held-out items, on draws that also redraw
    them, and on draws from every item (when given: the claim is the lower mean, see the module)."""
    import numpy as np

    held = float(np.mean(fresh_gains))
    whole = None if whole_gains is None else float(np.mean(whole_gains))
    gain = held if whole is None else min(held, whole)
    middle = float(np.mean(twice_gains))
    low, high = np.percentile(twice_gains, [(100 - LEVEL) / 2, 100 - (100 - LEVEL) / 2])
    return Claim(gain, min(gain, gain - (middle - float(low))), max(gain, gain + (float(high) - middle)), held, whole)
