"""The best ``-o slab_sizes`` for a workload: the fewest page bytes, or with ``-m`` the most items.

The exact search is the dynamic programme of :mod:`slabcalc.analysis.optimize.dp`; here it is
asked for the fewest pages, or, with ``-m``, searched for the largest share of the mix whose pages
fit, and its list is then rid of the sizes that serve too few items (:func:`merge_thin_sizes`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from slabcalc.analysis.optimize.dp import SlabSizes, solve
from slabcalc.analysis.optimize.requests import Requests, class_chunks, items_that_fit, page_bytes
from slabcalc.errors import ValueRefused
from slabcalc.model.classes import slab_classes
from slabcalc.model.settings import Settings

THIN_SHARE_PCT = 1                # a slab size serving less than a page and this share of the items is merged


def best_slab_sizes(settings: Settings, requests: Requests, max_classes: int | None = None) -> SlabSizes:
    """The exact best ``-o slab_sizes`` for ``requests`` (fewest page bytes, or with the -m the
    settings were given, ``settings.memory_limit``, the most items of the mix that fit) with at most
    ``max_classes`` listed sizes (default: the release's limit)."""
    p = settings.profile
    max_classes = p.max_regular if max_classes is None else max_classes
    if not 1 <= max_classes <= p.max_regular:
        raise ValueRefused(f"--max-classes must be 1 to {p.max_regular} for memcached {p.release}")
    if settings.memory_limit is None:
        return solve(settings, requests, max_classes, scale=None)
    return _most_items(settings, requests, max_classes)


def _most_items(settings: Settings, requests: Requests, max_classes: int) -> SlabSizes:
    """The list under which the most items of the mix fit the settings' -m.

    The first ``n`` items of the proportional mix hold ``ceil((2nN - items) / (2 items))``
    chunks (at least 0) of a class that holds ``N`` for the whole mix (as
    :func:`slabcalc.analysis.report.capacity` counts them), so "do their pages fit" is the
    page DP with requests so scaled (:func:`~slabcalc.analysis.optimize.dp.solve`); it is monotone in
    ``n``, found by doubling then bisection.  The list's capacity is then counted exactly.
    """
    if not requests.items:
        best = solve(settings, requests, max_classes, scale=None)
        return replace(best, items_that_fit=0)

    def first(n: int) -> SlabSizes:   # the DP for the first n items of the mix
        return solve(settings, requests, max_classes, scale=(n, requests.items))

    memory_limit = settings.memory_limit
    low, low_answer = 0, None
    high = 1
    while True:
        answer = first(high)
        if answer.page_bytes > memory_limit:
            break
        low, low_answer, high = high, answer, high * 2
        if high > 1 << 50:
            break
    while high - low > 1:
        mid = (low + high) // 2
        answer = first(mid)
        if answer.page_bytes <= memory_limit:
            low, low_answer = mid, answer
        else:
            high = mid
    if low_answer is None:   # not even one item's pages fit: fewest pages for the whole mix
        low_answer = solve(settings, requests, max_classes, scale=None)
    whole = settings_for(settings, low_answer.listed)
    cost = page_bytes(whole, requests)
    return SlabSizes(low_answer.chunk_sizes, low_answer.listed, cost,
                     items_that_fit(whole, requests))


def merge_thin_sizes(settings: Settings, requests: Requests, listed: Sequence[int]) -> tuple[int, ...]:
    """``listed`` with every size whose class the requests fill less than one page of, for fewer than
    :data:`THIN_SHARE_PCT` of the items, merged into the next larger size, the thinnest first; the
    largest listed size stays.

    The page DP is exact for the items it is given, so it will spend a class on a handful of items
    whose size happens to fit a chunk snugly (issue 31: 144 session items in 2 320-byte chunks);
    items of the same kind that were not in the sample land elsewhere and pay for it.  A class
    whose chunks fill less than a page costs a whole page for those few items anyway.
    """
    listed = list(listed)
    while len(listed) > 1:
        classes = slab_classes(settings_for(settings, listed))
        chunks = dict(zip((c.chunk_size for c in classes), zip(class_chunks(requests, classes), classes)))
        thin = []
        for j, size in enumerate(listed[:-1]):
            n, cls = chunks[min(c for c in chunks if c >= size)]
            if n < cls.perslab and n * 100 < requests.items * THIN_SHARE_PCT:
                thin.append((n, j))
        if not thin:
            break
        del listed[min(thin)[1]]
    return tuple(listed)


def settings_for(settings: Settings, listed: Sequence[int]) -> Settings:
    """``settings`` with ``-o slab_sizes`` set to ``listed``."""
    return replace(settings, slab_sizes=tuple(listed))
