"""The ``-n``/``-f`` grid and the ``slab_chunk_max`` powers of two, each configuration scored exactly.

``-n``/``-f`` (:func:`search_n_f`) is a grid search: ``-n`` only matters
through the aligned first chunk, ``-f`` is tried from 1.01 to 2 by 0.01, then
by 0.001 around the best; every table of the grid is scored at once
(:func:`grid_page_bytes`).  ``slab_chunk_max`` (:func:`search_chunk_max`)
tries every power of two memcached accepts.  With ``-m``, the objective is the
number of items of this mix that fit (:func:`slabcalc.analysis.report.capacity`),
and an upper bound (:func:`~slabcalc.analysis.optimize.requests.capacity_bound`)
skips the configurations that cannot win.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.optimize.requests import (
    BoundParts,
    Requests,
    capacity_bound,
    capacity_of,
    chunk_requests,
    items_that_fit,
    page_bytes,
    usage,
)
from slabcalc.analysis.optimize.dp import align_up
from slabcalc.model.classes import slab_classes
from slabcalc.model.settings import Refused, Settings, chunk_max_value, configure


@dataclass(frozen=True)
class Scored:
    """One configuration of a search: its flags and what it costs."""

    flags: str
    settings: Settings
    page_bytes: int
    items_that_fit: int | None = None

    def key(self):
        fit = -(self.items_that_fit or 0)
        return (fit, self.page_bytes)


CHUNK_MAX_SMALLEST = 16 << 10
FACTORS = tuple(round(1 + i / 100, 2) for i in range(1, 101))   # 1.01 .. 2.00
N_RANGE = range(1, 1025)                                         # memcached takes any -n > 0; 1-1024 searched


def search_n_f(settings: Settings, requests: Requests, *, keep: int = 3) -> list[Scored]:
    """The best ``-n``/``-f`` pairs (best first, at most ``keep``): the fewest page bytes, or with
    the -m the settings were given (``settings.memory_limit``) the most items of the mix.

    ``-n`` moves only the first chunk, ``align(header + n)``: one ``-n`` per
    aligned first chunk is tried (the smallest).  Classes are made by
    :func:`slabcalc.model.classes.slab_classes` itself, so the class cap and the
    duplicate classes tiny factors make count as memcached counts them.
    """
    p = settings.profile
    starts: dict[int, int] = {}
    for n in N_RANGE:
        starts.setdefault(align_up(p.header + n, p.align), n)
    ns = sorted(starts.values())
    plain = replace(settings, slab_sizes=None)
    memory_limit = settings.memory_limit

    def order(c: Scored):   # best first; among equals the smallest change from the defaults
        return (c.key(), abs(c.settings.factor - p.default_factor), abs(c.settings.chunk_size - p.default_chunk_size))

    def grid(factors) -> list[Scored]:
        if memory_limit is None:
            return _fast_grid(plain, ns, factors, requests, keep)
        if not (plain.preallocate and p.process is not None):     # -L checks each table (slab_classes)
            return _capacity_grid(plain, ns, list(factors), requests, keep)
        configs = []
        for f in factors:
            for n in ns:
                s = replace(plain, chunk_size=n, factor=f)
                classes = slab_classes(s)
                flags = " ".join(Settings.argv(chunk_size=n, factor=f"{f:g}"))
                configs.append((Scored(flags, s, page_bytes(s, requests, classes)), classes))
        if memory_limit is None:
            return [c for c, _ in configs]
        return _with_capacity(configs, requests, memory_limit, keep, order)

    scored = sorted(grid(FACTORS), key=order)
    fine = {round(scored[0].settings.factor + i / 1000, 3) for i in range(-9, 10)} - set(FACTORS) if scored else set()
    scored = sorted(scored + grid(sorted(f for f in fine if f > 1)), key=order)
    return scored[:keep]


def grid_page_bytes(settings: Settings, ns, factors, requests: Requests):
    """Page bytes of ``requests`` under -n ``n`` -f ``f`` for every ``f`` of ``factors`` and ``n`` of
    ``ns`` at once, indexed ``[f, n]`` (what :func:`page_bytes` gives for each, held equal by
    tests/analysis/test_optimize.py)."""
    import numpy as np

    out = [(-(-held // perslab) * lengths).sum(axis=-1)
           for _, held, perslab, lengths in _grid_tables(settings, ns, factors, requests)]
    return np.concatenate(out) if out else np.zeros((0, len(ns)), dtype=np.int64)


def _grid_tables(settings: Settings, ns, factors, requests: Requests):
    """The grid's tables some factors at a time (a few MB each): ``(table, held, perslab, lengths)``,
    each indexed ``[f, n, class]``: the chunk sizes (:func:`slabcalc.model.classes.class_tables`), the
    requests each class holds, its chunks per page and its page length (``lengths`` broadcast)."""
    import numpy as np

    from slabcalc.model.classes import class_tables

    sizes, prefix = requests.arrays()
    page = settings.slab_page_size
    for at in range(0, len(factors), 16):
        table = class_tables(settings, ns, factors[at:at + 16])
        held = _held(table, sizes, prefix)
        perslab = page // table
        lengths = settings.page_length(table, perslab)      # the release's rule, on whole arrays
        yield table, held, perslab, np.broadcast_to(lengths, table.shape)


def _held(table, sizes, prefix):
    """What each class of ``table`` holds of requests ``sizes`` (``prefix``: their running counts):
    :func:`~slabcalc.analysis.optimize.requests.class_chunks` of every table at once."""
    import numpy as np

    return np.diff(prefix[np.searchsorted(sizes, table, side="right")], axis=-1, prepend=0)


def _fast_grid(plain: Settings, ns, factors, requests: Requests, keep: int) -> list[Scored]:
    """The -n/-f grid scored by page bytes alone: every table at once; Scored values made only for
    the configurations that can be among the ``keep`` best."""
    found = []
    p = plain.profile
    for f, costs in zip(factors, grid_page_bytes(plain, ns, list(factors), requests).tolist()):
        for n, cost in zip(ns, costs):
            # search_n_f's order; equal ones in the grid's order (factor, then -n)
            found.append((cost, abs(f - p.default_factor), abs(n - p.default_chunk_size), f, n))
    best = heapq.nsmallest(max(keep, 1), found)
    return [Scored(" ".join(Settings.argv(chunk_size=n, factor=f"{f:g}")), replace(plain, chunk_size=n, factor=f), cost)
            for cost, _, _, f, n in best]


def _capacity_grid(plain: Settings, ns, factors, requests: Requests, keep: int) -> list[Scored]:
    """The -n/-f grid with -m: the ``keep`` best configurations by items that fit, in
    :func:`search_n_f`'s order (what :func:`_with_capacity` finds, and in the same order, but with
    the tables built and costed for the whole grid at once and capacities counted only where they can
    change the answer).

    The answer is the ``keep`` smallest of the key ``(-fit, page bytes, |f - default|, |n - default|,
    -capacity_bound, place in the grid)`` (the order :func:`_with_capacity` sorts by, its ties in the
    order it meets the configurations).  A configuration's fit is at most :func:`_rough_bounds`'
    bound (:func:`capacity_bound`'s, or whole pages' where they bound it closer: only the order of
    the search, never the key); met largest bound first, one whose key cannot be under the
    ``keep``-th best, even with its bound for its fit, is skipped, and once the bound is under the
    ``keep``-th best fit, so is every other.  A one-size mix fits as many items under hundreds of
    tables: the page bytes and distances to the defaults skip most of them."""
    import numpy as np

    p = plain.profile
    memory_limit = plain.memory_limit
    parts = BoundParts.of(requests)
    costs, bounds, tables = [], [], []
    for table, held, perslab, lengths in _grid_tables(plain, ns, factors, requests):
        costs.append((-(-held // perslab) * lengths).sum(axis=-1).ravel())
        bounds.append(_rough_bounds(table, held, perslab, lengths, requests, parts, memory_limit,
                                    plain.preallocate).ravel())
        tables.append(np.stack(np.broadcast_arrays(perslab, lengths, held), axis=-1).reshape(-1, table.shape[-1], 3))
    if not costs:
        return []
    cost, rough, rows_of = np.concatenate(costs).tolist(), np.concatenate(bounds), np.concatenate(tables)
    counted: dict = {}   # one-chunk mixes: (fit, bound) by the used classes' (perslab, page length, chunks)
    best: list = []      # (key, Settings), the keep smallest keys, sorted
    keep = max(keep, 1)
    for i in np.argsort(-rough, kind="stable").tolist():
        f, n = factors[i // len(ns)], ns[i % len(ns)]
        most = float(rough[i])
        hope = (-most, cost[i], abs(f - p.default_factor), abs(n - p.default_chunk_size))
        if len(best) >= keep and hope > best[-1][0][:4]:
            if most < -best[-1][0][0]:
                break           # every bound from here is under the keep-th best fit
            continue
        s = replace(plain, chunk_size=n, factor=f)
        seen = None if parts is not None else counted.get(_used(rows_of[i]))
        if seen is None:
            classes = slab_classes(s)
            rows = usage(s, requests, classes)
            seen = (capacity_of(s, requests, classes, rows), capacity_bound(requests, classes, rows, memory_limit, parts))
            counted[tuple((r.slab_class.perslab, r.page_length, r.chunks) for r in rows)] = seen
        best.append(((-seen[0], *hope[1:], -seen[1], i), s))
        best.sort(key=lambda b: b[0])       # keys differ (the place in the grid): no Settings is compared
        del best[keep:]
    return [Scored(" ".join(Settings.argv(chunk_size=s.chunk_size, factor=f"{s.factor:g}")), s, cost[key[-1]], -key[0])
            for key, s in best]


def _used(rows) -> tuple:
    """The (perslab, page length, chunks) of a grid table's classes with chunks: with no chunked items,
    all a configuration's capacity and its bound depend on (:func:`slabcalc.analysis.report.capacity`
    counts the classes in their order, each one kind)."""
    return tuple(map(tuple, rows[rows[:, 2] > 0].tolist()))


def _rough_bounds(table, held, perslab, lengths, requests: Requests, parts: BoundParts | None, memory_limit: int,
                  preallocated: bool = False):
    """A bound of the items that fit for every table of the grid at once: :func:`capacity_bound`, as
    floats and a little above it (its sums are not added in its order), or, for a one-chunk mix
    without ``-L`` whose first pages are sure to be granted within ``-m``, the closer bound of whole
    pages (:func:`_reach_within`): ``[f, n]``."""
    import numpy as np

    sizes = lengths.astype(np.float64)
    per = np.where(perslab > 0, perslab, 1).astype(np.float64)
    used = held > 0
    if parts is None:       # the classes with chunks, each one kind
        each, chunks = used, held
        first_pages = np.where(used, sizes, 0.0).sum(axis=-1)
        kinds = used.sum(axis=-1)
    else:
        not_tails, one_each = parts.not_tails.arrays(), parts.one_each.arrays()
        chunks, each = _held(table, *not_tails), _held(table, *one_each)
        sizes = np.where(used, sizes, 0.0)           # a page length only for the classes with chunks
        largest = np.maximum(table[..., -1] * perslab[..., -1], sizes.max(axis=-1))
        first_pages = np.where(each > 0, sizes, 0.0).sum(axis=-1) + largest
        kinds = parts.kinds
    unrounded = np.where(used | (parts is not None), sizes * chunks / per, 0.0).sum(axis=-1)
    slack = np.where(each > 0, sizes * each / (2 * per), 0.0).sum(axis=-1)
    ratio = (max(memory_limit, 0) + first_pages + slack) / np.where(unrounded > 0, unrounded, 1.0)
    if parts is None and not preallocated:
        ratio = np.minimum(ratio, _reach_within(held, per, sizes, memory_limit) * (1 + 4e-9))
    return np.where(unrounded > 0, np.floor(ratio * requests.items * (1 + 4e-9)) + kinds // 2 + 3, float(1 << 62))


def _reach_within(held, per_page, lengths, memory_limit: int):
    """How far through a one-chunk mix its first refused page can come, as a share ``r`` of the mix,
    when every class's first page is sure to be granted within ``-m``; infinity where that is not
    sure.  ``held`` the chunks of the mix in each class, ``per_page`` its chunks a page, ``lengths``
    its page length, ``[f, n, class]`` (a class with no chunk counts nothing): ``[f, n]``.

    :func:`capacity_bound` counts the mix's pages as its share of each class's chunks: a class of a
    few chunks counts a few chunks' worth, where it takes a whole page.  Under ``-m 6`` with five
    classes the bound was twice the fit, and the grid counted the capacity of half its tables.  Whole
    pages bound it closer, once the first pages are sure: a first page is granted past ``-m`` only to
    a class with none when ``-m`` is reached (slabs.c 384-385).  By ``r0``, the latest of the classes'
    first arrivals (``1 / (2 H_c)``: :mod:`slabcalc.model.capacity`'s order), class ``c`` holds at
    most ``r0 H_c + 1/2`` chunks; when their pages fit ``-m`` (counted a whole page more, so that
    float error never counts one less) no page is refused before ``r0``, each class has its first
    page within ``-m``, and none is granted past it after.  At ``r`` a class then holds at least
    ``r H_c - 1/2`` chunks and at least one page: ``g(r) = sum_c max(L_c, L_c (r H_c - 1/2) / perslab_c)
    <= -m``.  ``g`` is the largest of the lines that take the second term for a set ``S`` of classes
    and the first for the rest; each line bounds ``r``, and at the largest ``r`` the line of the
    classes whose second term is the larger (those of the smallest ``(perslab_c + 1/2) / H_c``) is
    ``g`` itself: the least of the bounds of those sets, the classes taken in that order, is ``r``'s
    bound (and the kinds' rounding adds at most half an item a kind, as in :func:`capacity_bound`)."""
    import numpy as np

    used = held > 0
    some = np.where(used, held, 1)
    r0 = np.where(used, 0.5 / some, 0.0).max(axis=-1, initial=0.0)
    pages = np.where(used, np.floor((r0[..., None] * held + 0.5) / per_page) + 1, 0.0)
    within = (memory_limit > 0) & ((pages * lengths).sum(axis=-1) <= memory_limit * (1 - 1e-9))
    order = np.argsort(np.where(used, (per_page + 0.5) / some, np.inf), axis=-1, kind="stable")

    def ranked(values):
        return np.take_along_axis(np.where(used, values, 0.0), order, axis=-1)
    length = ranked(lengths)
    slope = np.cumsum(ranked(lengths * held / per_page), axis=-1)
    below = np.cumsum(ranked(lengths / (2 * per_page)), axis=-1)
    rest = length.sum(axis=-1)[..., None] - np.cumsum(length, axis=-1)
    reach = np.where(slope > 0, (memory_limit + below - rest) / np.where(slope > 0, slope, 1.0), np.inf)
    return np.where(within, reach.min(axis=-1, initial=np.inf), np.inf)


def _with_capacity(configs, requests: Requests, memory_limit: int, keep: int, order) -> list[Scored]:
    """The configurations that can be among the ``keep`` best, with their capacity.

    Capacity (:func:`slabcalc.analysis.report.capacity`) is a bisection per configuration;
    an upper bound (:func:`capacity_bound`) skips the configurations that cannot beat the
    ``keep``-th best found.
    """
    bounded = []
    parts = BoundParts.of(requests)
    for scored, classes in configs:
        rows = usage(scored.settings, requests, classes)
        bounded.append((capacity_bound(requests, classes, rows, memory_limit, parts), scored, classes, rows))
    bounded.sort(key=lambda b: -b[0])
    done: list[Scored] = []
    best: list[int] = []        # the ``keep`` largest capacities so far, a min-heap: best[0] is the keep-th
    for bound, scored, classes, rows in bounded:
        if len(best) >= keep and bound < best[0]:
            break
        fit = capacity_of(scored.settings, requests, classes, rows)   # its own classes (and the same -m)
        done.append(replace(scored, items_that_fit=fit))
        if len(best) < keep:
            heapq.heappush(best, fit)
        elif fit > best[0]:
            heapq.heapreplace(best, fit)
    return done


def search_chunk_max(settings: Settings, distribution, *, size_key_length: int = SIZE_KEY_LENGTH) -> list[Scored]:
    """Every ``-o slab_chunk_max`` memcached accepts from 16 KiB to a page, powers of two, best first
    (with the -m the settings were given, by the items of the mix that fit).

    (16 KiB is the smallest memcached's own tests run chunked items with; a smaller
    chunk max splits a large item into hundreds of chunks.)
    """
    p = settings.profile
    if not p.has_slab_chunk_max:
        return []
    out = []
    size = CHUNK_MAX_SMALLEST
    while size <= settings.slab_page_size:
        try:   # a size the release's unit cannot say is no candidate
            words = Settings.argv(slab_chunk_max=chunk_max_value(p, size))
        except ValueError:
            words = None
        if words is not None and size != settings.slab_chunk_max:
            flags = " ".join(words)
            try:
                candidate = configure(p, settings.as_argv() + words)
            except Refused:
                candidate = None
            if candidate is not None:
                # as_argv writes -m even when it was not given: the candidate keeps the settings' own -m
                candidate = replace(candidate, suffix=settings.suffix, slab_reassign=settings.slab_reassign,
                                    maxbytes=settings.maxbytes, memory_limit_given=settings.memory_limit_given)
                with_capacity = candidate.memory_limit is not None
                requests = chunk_requests(candidate, distribution, size_key_length, with_capacity)
                fit = items_that_fit(candidate, requests) if with_capacity else None
                out.append(Scored(flags, candidate, page_bytes(candidate, requests), fit))
        size *= 2
    out.sort(key=lambda c: (c.key(), -c.settings.slab_chunk_max))
    return out
