"""The flags that hold a workload in the fewest pages: ``-n``/``-f``, ``-o slab_sizes``, ``slab_chunk_max``.

Every candidate is scored by what the pages cost, class by class, exactly as
``slabcalc report`` counts them: a class of chunk size ``c`` holding ``N``
chunks takes ``ceil(N / perslab)`` pages of the release's page length.  What a
class holds does not depend on the other classes but through which chunk
*requests* reach it: an item that fits one chunk requests its ``ntotal``; a
chunked item requests its header chunk, its full ``slab_chunk_max`` chunks and
its tail (:func:`slabcalc.model.placement.place`), and each request goes to the first
class whose chunk holds it (``slabs_clsid()``).  :func:`chunk_requests` turns
a distribution into that multiset once; :func:`page_bytes` scores any class
table against it, and every winner is scored again by
:func:`slabcalc.analysis.report.build_report`, which must agree to the byte.

``-o slab_sizes`` (:func:`best_slab_sizes`) is solved exactly by dynamic
programming over candidate chunk sizes ``v``: ``f_k(v)`` is the fewest pages
holding every request ``<= v`` in at most ``k`` classes, the last of size
``v``.  Why it is exact, and fast:

* **Candidates.**  Lower any class of an optimal list to the smallest size
  memcached would take that still holds the largest request of its class; the
  requests each class holds do not change, and its pages do not grow (a
  smaller chunk has at least as many chunks per page).  So only these sizes
  occur: ``align(s)`` for a request ``s``, ``align(-n)``, and ``p + 2*align``
  where a class ``p`` is followed by a request in ``(p, p + align]``.  Where a
  page's length depends on the chunk (``chunk_size * perslab``, releases or
  options without slab_reassign) a larger chunk can cost less; there the
  smallest aligned size of every ``perslab`` value joins the candidates too.
* **Memcached's list rules.**  ``_parse_slab_sizes()`` wants each listed size
  ``>= -n``, ``<= slab_chunk_max`` and more than ``align`` bytes above the one
  before; ``slabs_init()`` then rounds each up to ``align``.  The rule applies
  to the listed numbers, so two classes ``align`` bytes apart are possible
  (``89-98`` makes 96 and 104) as long as each listed number stays inside its
  class's ``align`` window: the DP state keeps how far into that window the
  listed number had to move (``offset``), and :func:`listed_sizes` writes the
  list back with the plainest numbers (aligned wherever possible).
* **Page granularity, exactly.**  With one page length for every class (1.5+
  and any release with slab_reassign), costs are whole pages.  For one ``v``
  the new class costs ``min_u g(u) + ceil((F(v) - F(u)) / q)`` with ``g`` the
  previous layer (integers), ``F`` the prefix count of requests and ``q`` the
  chunks per page.  Each term lies in ``[x_u, x_u + 1)`` with
  ``x_u = g(u) + (F(v) - F(u)) / q``, so the minimum is the one integer in
  ``[min x, min x + 1)``: ``ceil(min_u x_u)``, reached at the argmin of
  ``x``.  The relaxed matrix ``x`` is Monge (``F`` grows with ``u``, ``1/q``
  with ``v``, and the forbidden ``u > v - 2*align`` corner keeps it so), so
  its row minima have monotone argmins and divide and conquer finds them all
  in ``O(M log M)`` per layer (:func:`_row_minima`), done level by level with
  numpy.  Where page lengths differ by class the trick does not hold, and the
  layer is computed by a full (vectorised, quadratic) scan instead -- exact,
  but slower.

``-n``/``-f`` (:func:`search_n_f`) is a grid search: ``-n`` only matters
through the aligned first chunk, ``-f`` is tried from 1.01 to 2 by 0.01, then
by 0.001 around the best.  ``slab_chunk_max`` (:func:`search_chunk_max`)
tries every power of two memcached accepts.  With ``-m``, the objective is the
number of items of this mix that fit (:func:`slabcalc.analysis.report.capacity`); the
slab_sizes DP then searches for the largest count whose pages fit.

This module is long because it holds three searches and the exact dynamic programme for ``slab_sizes``, each scored again by ``report``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Iterable, Sequence

from slabcalc.analysis.advice import class_cap_trap
from slabcalc.analysis.placement import ClassUsage, Placed, place_items
from slabcalc.analysis.report import Report, build_report, capacity
from slabcalc.errors import ValueRefused
from slabcalc.model.capacity import ChunkShape, mix_capacity
from slabcalc.model.classes import SlabClass, slab_classes
from slabcalc.model.distribution import ItemColumns
from slabcalc.model.settings import Refused, Settings, argv_words, chunk_max_value, configure

SPACES = ("n_f", "slab_sizes", "slab_chunk_max")
GAIN_THRESHOLD_PCT = 1.0          # below this the current flags are fine; within it of the best, the simpler wins
VALIDATE_DEFAULT = 0.2            # the part of the items held out, by default, to score the candidates on
THIN_SHARE_PCT = 1                # a slab size serving less than a page and this share of the items is merged
MIN_HELD_OUT = 20                 # fewer items than this expected in the held-out part: no validation
SIMPLER = ("n_f", "slab_chunk_max", "slab_sizes")   # the verdict's order of simplicity
INF = 1 << 62


# -- what a distribution asks of the classes ---------------------------------

@dataclass(frozen=True)
class Requests:
    """The chunk requests of a distribution: distinct sizes (ascending) and counts.

    ``items`` is the number of items placed (what capacity scales), ``too_large``
    those memcached refuses whatever the class list.
    """

    sizes: tuple[int, ...]
    counts: tuple[int, ...]
    items: int
    too_large: int
    # chunked items by chunk shape, and (only when there are some) the one-chunk items by size:
    # a mix with chunked items has its capacity counted item by item (slabcalc.model.capacity)
    chunked: tuple[tuple[ChunkShape, int], ...] = ()
    one_chunk: tuple[tuple[int, int], ...] = ()
    shapes: bool = True     # False: chunk shapes were not counted (chunk_requests(shapes=False)): no capacity

    def arrays(self):
        """``(sizes, prefix)``: sizes as an array and ``prefix[i]`` the requests of the first i sizes."""
        return self._arrays

    @cached_property
    def _arrays(self):
        import numpy as np

        sizes = np.asarray(self.sizes, dtype=np.int64)
        prefix = np.concatenate(([0], np.cumsum(np.asarray(self.counts, dtype=np.int64))))
        return sizes, prefix


def chunk_requests(settings: Settings, distribution: Iterable[tuple], size_key_length: int = 16,
                   shapes: bool = True) -> Requests:
    """Every chunk request of ``distribution`` under ``settings``' largest chunk and ``-I``.

    The placement pass :func:`slabcalc.analysis.report.build_report` builds from
    (:func:`slabcalc.analysis.placement.place_items`): an item within the largest chunk
    requests its ``ntotal``; a larger one is placed chunk by chunk and requests each chunk's
    size.  The class list only decides where requests go, never what they are.  ``shapes``:
    also count the chunked items by chunk shape, which only capacity (``-m``) needs.
    """
    return requests_of(place_items(settings, distribution, size_key_length, shapes))


def requests_of(placed: Placed) -> Requests:
    """The :class:`Requests` of a placement pass."""
    sizes, counts = placed.requests()
    return Requests(sizes, counts, placed.items, placed.too_large, placed.chunked,
                    placed.one_chunk if placed.chunked else (), placed.shapes)


# -- scoring a class table ---------------------------------------------------

def class_chunks(requests: Requests, classes: Sequence[SlabClass]) -> list[int]:
    """Chunks each class holds: requests go to the first class whose chunk holds them."""
    import numpy as np

    sizes, prefix = requests.arrays()
    chunk_sizes = np.fromiter((c.chunk_size for c in classes), dtype=np.int64, count=len(classes))
    reached = prefix[np.searchsorted(sizes, chunk_sizes, side="right")]
    held = np.diff(np.concatenate(([0], reached)))
    if reached[-1] != prefix[-1]:
        raise ValueRefused("a chunk request is larger than the largest class")  # cannot happen
    return held.tolist()


def usage(settings: Settings, requests: Requests, classes: Sequence[SlabClass] | None = None) -> tuple[ClassUsage, ...]:
    """Per class chunks and page length (the parts of :class:`ClassUsage` pages depend on)."""
    classes = slab_classes(settings) if classes is None else classes
    return tuple(ClassUsage(c, settings.page_length(c.chunk_size, c.perslab), chunks=n)
                 for c, n in zip(classes, class_chunks(requests, classes)) if n)


def page_bytes(settings: Settings, requests: Requests, classes: Sequence[SlabClass] | None = None) -> int:
    """Page bytes ``requests`` take under ``settings`` (what ``report`` totals as page_bytes)."""
    classes = slab_classes(settings) if classes is None else classes
    return sum(-(-n // c.perslab) * settings.page_length(c.chunk_size, c.perslab)
               for c, n in zip(classes, class_chunks(requests, classes)) if n)


def items_that_fit(settings: Settings, requests: Requests, memory_limit: int,
                   classes: Sequence[SlabClass] | None = None) -> int:
    """Items of this mix ``-m`` holds (:func:`slabcalc.analysis.report.capacity`)."""
    classes = slab_classes(settings) if classes is None else classes
    return _capacity(settings, requests, classes, usage(settings, requests, classes), memory_limit)


def _capacity(settings: Settings, requests: Requests, classes: Sequence[SlabClass], rows, memory_limit: int) -> int:
    """The report's capacity from the requests: by chunk counts, or item by item with chunked items."""
    if not requests.shapes:
        raise ValueError("capacity needs the chunk shapes chunk_requests(shapes=False) left out")
    if requests.chunked:
        return mix_capacity(settings, classes, dict(requests.one_chunk), dict(requests.chunked), memory_limit).items
    return capacity(rows, requests.items, memory_limit).items


# -- the exact slab_sizes optimum -------------------------------------------

@dataclass(frozen=True)
class SlabSizes:
    """The DP's answer: class sizes as memcached makes them, the list to give it, and the cost."""

    chunk_sizes: tuple[int, ...]   # the classes memcached creates (aligned)
    listed: tuple[int, ...]        # the -o slab_sizes numbers that create them
    page_bytes: int                # pages of every class, the largest included
    items_that_fit: int | None = None   # with -m: items of the mix that fit


def _align(size: int, align: int) -> int:
    return -(-size // align) * align


def constant_page_length(settings: Settings, chunk_sizes: Iterable[int]) -> int | None:
    """The one page length every class of these sizes takes, or None when it varies."""
    page = settings.slab_page_size
    lengths = {settings.page_length(c, page // c) for c in chunk_sizes}
    return lengths.pop() if len(lengths) == 1 else None


def candidate_sizes(settings: Settings, requests: Requests, per_perslab: bool) -> list[int]:
    """Chunk sizes an optimal list is made of (see the module docstring), ascending."""
    align = settings.profile.align
    chunk_max = settings.largest_chunk
    low = _align(max(settings.chunk_size, 1), align)
    page = settings.slab_page_size
    aligned_requests = {_align(s, align) for s in requests.sizes}
    base = {max(low, s) for s in aligned_requests} | {low}
    if per_perslab:  # the smallest aligned chunk of every perslab value
        for perslab in range(1, page // low + 1):
            start = _align(page // (perslab + 1) + 1, align)
            if page // start == perslab:
                base.add(max(low, start))
    heap = [c for c in base if c < chunk_max]
    heapq.heapify(heap)
    seen = set(heap)
    while heap:  # a class p followed by a request in (p, p + align] forces p + 2*align
        p = heapq.heappop(heap)
        forced = p + 2 * align
        if p + align in aligned_requests and forced < chunk_max and forced not in seen:
            seen.add(forced)
            heapq.heappush(heap, forced)
    return sorted(seen)


def listed_sizes(chunk_sizes: Sequence[int], chunk_size: int, align: int) -> tuple[int, ...] | None:
    """Numbers for ``-o slab_sizes`` that make exactly these classes, or None if none do.

    Each number must round up to its class, be ``>= -n`` and more than ``align``
    above the one before; aligned numbers are kept wherever the next allows.
    """
    lowest = []
    previous = None
    for c in chunk_sizes:
        raw = max(c - align + 1, chunk_size, previous + align + 1 if previous is not None else 0)
        if raw > c:
            return None
        lowest.append(raw)
        previous = raw
    listed = list(chunk_sizes)
    for j in range(len(listed) - 2, -1, -1):
        listed[j] = min(listed[j], listed[j + 1] - align - 1)
        assert listed[j] >= lowest[j]
    return tuple(listed)


def best_slab_sizes(settings: Settings, requests: Requests, max_classes: int | None = None,
                    memory_limit: int | None = None) -> SlabSizes:
    """The exact best ``-o slab_sizes`` for ``requests`` (fewest page bytes, or with
    ``memory_limit`` the most items of the mix that fit) with at most ``max_classes``
    listed sizes (default: the release's limit)."""
    p = settings.profile
    max_classes = p.max_regular if max_classes is None else max_classes
    if not 1 <= max_classes <= p.max_regular:
        raise ValueRefused(f"--max-classes must be 1 to {p.max_regular} for memcached {p.release}")
    if memory_limit is None:
        return _solve(settings, requests, max_classes, scale=None)
    return _most_items(settings, requests, max_classes, memory_limit)


def _most_items(settings: Settings, requests: Requests, max_classes: int, memory_limit: int) -> SlabSizes:
    """The list under which the most items of the mix fit ``memory_limit``.

    The first ``n`` items of the proportional mix hold ``ceil((2nN - items) / (2 items))``
    chunks (at least 0) of a class that holds ``N`` for the whole mix (as
    :func:`slabcalc.analysis.report.capacity` counts them), so "do their pages fit" is the
    page DP with requests so scaled (:func:`_solve`); it is monotone in ``n``, found by
    doubling then bisection.  The list's capacity is then counted exactly.
    """
    if not requests.items:
        best = _solve(settings, requests, max_classes, scale=None)
        return replace(best, items_that_fit=0)

    def solve(n: int) -> SlabSizes:
        return _solve(settings, requests, max_classes, scale=(n, requests.items))

    low, low_answer = 0, None
    high = 1
    while True:
        answer = solve(high)
        if answer.page_bytes > memory_limit:
            break
        low, low_answer, high = high, answer, high * 2
        if high > 1 << 50:
            break
    while high - low > 1:
        mid = (low + high) // 2
        answer = solve(mid)
        if answer.page_bytes <= memory_limit:
            low, low_answer = mid, answer
        else:
            high = mid
    if low_answer is None:   # not even one item's pages fit: fewest pages for the whole mix
        low_answer = _solve(settings, requests, max_classes, scale=None)
    whole = settings_for(settings, low_answer.listed)
    cost = page_bytes(whole, requests)
    return SlabSizes(low_answer.chunk_sizes, low_answer.listed, cost,
                     items_that_fit(whole, requests, memory_limit))


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


def _solve(settings: Settings, requests: Requests, max_classes: int, scale) -> SlabSizes:
    """The DP of the module docstring; ``scale=(n, items)`` counts the chunks of a class that holds
    ``X`` of the whole mix's as the first ``n`` items of the proportional mix hold them
    (:func:`slabcalc.model.capacity._before`, the class one kind): ``ceil((2nX - items) / (2 items))``,
    in pages ``ceil((2nX - items) / (2 items perslab))`` -- the DP's ``F`` scaled by ``2n``, its
    chunks per page by ``2 items``, and ``items`` taken off each class (``shift``)."""
    import numpy as np

    p = settings.profile
    align = p.align
    page = settings.slab_page_size
    chunk_max = settings.largest_chunk
    largest_perslab = page // chunk_max
    largest_length = settings.page_length(chunk_max, largest_perslab)
    probe = [c for c in range(_align(max(settings.chunk_size, 1), align), chunk_max, align)]
    page_length = constant_page_length(settings, probe + [chunk_max])
    candidates = candidate_sizes(settings, requests, per_perslab=page_length is None)
    sizes, prefix = requests.arrays()
    total = int(prefix[-1])
    if not candidates:
        raise ValueRefused(f"no chunk size between -n {settings.chunk_size} and the largest class "
                         f"({chunk_max}) can be listed")
    values = np.asarray(candidates, dtype=np.int64)
    m = len(values)
    covered = prefix[np.searchsorted(sizes, values, side="right")]           # F(v): requests <= v
    perslab = page // values
    n, items = (2 * scale[0], 2 * scale[1]) if scale is not None else (1, 1)
    shift = scale[1] if scale is not None else 0
    # costs are pages (one page length) or bytes (page lengths differ by class)
    unit = (np.ones(m, dtype=np.int64) if page_length is not None
            else np.fromiter((settings.page_length(int(c), int(q)) for c, q in zip(values, perslab)),
                             dtype=np.int64, count=m))
    most_pages = (-(-total * n // items) + max_classes + 2) * int(unit.max())
    bound = most_pages * int(perslab.max()) * items + total * n
    dtype = np.int64 if bound < INF >> 2 else object   # exact either way; object only for huge inputs
    f_cov = covered.astype(dtype) * n                # F scaled by n
    q = perslab.astype(dtype) * items                 # and chunks per page by items

    def cost(held, row):
        """Pages (or bytes) of ``held`` scaled requests in classes ``row``."""
        return -(-(held - shift) // q[row]) * unit[row]

    limit = np.searchsorted(values, values - 2 * align, side="right")      # u allowed: values[u] <= v - 2a
    previous = np.searchsorted(values, values - align)                      # u == v - a, if a candidate
    has_previous = (previous < m) & (values[np.minimum(previous, m - 1)] == values - align)
    # the first class: its listed number is max(v - a + 1, -n), `offset` into the window
    first_offset = np.maximum(0, settings.chunk_size - (values - align + 1))
    layer = np.full((align, m), INF, dtype=dtype)
    rows = np.arange(m)
    ok = first_offset < align
    layer[first_offset[ok], rows[ok]] = cost(f_cov[ok], rows[ok])
    history = []   # per layer: (new_mask[align, m], parent_of_offset0[m], best_offset_of_u[m])
    for _ in range(1, max_classes):
        best_offset = np.argmin(layer, axis=0)
        g = layer[best_offset, rows]
        new = layer.copy()
        taken = np.zeros((align, m), dtype=bool)
        # offset 0: any earlier class at least 2*align below
        if page_length is not None:
            value, parent = _row_minima(g, f_cov, q, limit, dtype)
            reachable = value < INF
            fresh = np.full(m, INF, dtype=dtype)
            fresh[reachable] = -(-(value[reachable] + f_cov[reachable] - shift) // q[reachable])
        else:
            fresh, parent = _row_minima_full(g, f_cov, q, unit, limit, dtype, shift)
        better = fresh < new[0]
        new[0][better] = fresh[better]
        taken[0] = better
        # offset o >= 1: a class exactly align below, whose listed number had offset o - 1
        at = np.flatnonzero(has_previous)
        u = previous[at]
        for o in range(1, align):
            base = layer[o - 1, u]
            live = base < INF
            v_live, u_live = at[live], u[live]
            step = base[live] + cost(f_cov[v_live] - f_cov[u_live], v_live)
            better = step < new[o, v_live]
            new[o, v_live[better]] = step[better]
            taken[o, v_live[better]] = True
        if not taken.any():
            break
        history.append((taken, parent, best_offset))
        layer = new
    largest = -(-(total * n - f_cov - shift) // (largest_perslab * items))
    largest = np.maximum(largest, 0) * (largest_length if page_length is None else 1)
    totals = layer + largest[None, :]
    offset, v = np.unravel_index(int(np.argmin(totals)), totals.shape)
    best = int(totals[offset, v])
    chosen = []
    for taken, parent, best_offset in reversed(history):
        if not taken[offset, v]:
            continue
        chosen.append(int(values[v]))
        if offset == 0:
            u = int(parent[v])
            offset, v = int(best_offset[u]), u
        else:
            offset, v = offset - 1, int(previous[v])
    chosen.append(int(values[v]))
    chunk_sizes = tuple(reversed(chosen))
    listed = listed_sizes(chunk_sizes, settings.chunk_size, align)
    assert listed is not None, chunk_sizes
    cost_bytes = best * (page_length if page_length is not None else 1)
    return SlabSizes(chunk_sizes, listed, cost_bytes)


def _row_minima(g, f_cov, q, limit, dtype):
    """For every row v: ``min over u < limit[v] of g[u] * q[v] - F[u]`` and its leftmost argmin.

    The argmins do not decrease with v (the matrix is Monge, see the module
    docstring), so rows are solved by divide and conquer: each level of the
    recursion is one vectorised pass over at most M + rows cells.
    """
    import numpy as np

    m = len(q)
    value = np.full(m, INF, dtype=dtype)
    parent = np.zeros(m, dtype=np.int64)
    row_lo, row_hi = np.array([0]), np.array([m - 1])
    col_lo, col_hi = np.array([0]), np.array([m - 1])
    while len(row_lo):
        mid = (row_lo + row_hi) // 2
        hi = np.minimum(col_hi, limit[mid] - 1)
        length = np.maximum(hi - col_lo + 1, 0)
        nonempty = length > 0
        argmin = col_lo.copy()
        if nonempty.any():
            starts = np.cumsum(length) - length
            segment = np.repeat(np.arange(len(mid)), length)
            cells = int(length.sum())
            cols = col_lo[segment] + np.arange(cells) - starts[segment]
            g_cols = g[cols]
            dead = g_cols >= INF
            cell_value = np.where(dead, 0, g_cols) * q[mid[segment]] - f_cov[cols]
            cell_value[dead] = INF
            at = starts[nonempty]
            minima = np.minimum.reduceat(cell_value, at)
            hit = cell_value == np.repeat(minima, length[nonempty])
            first = np.minimum.reduceat(np.where(hit, np.arange(cells), cells), at)
            argmin[nonempty] = cols[first]
            value[mid[nonempty]] = minima
        parent[mid] = argmin
        left, right = row_lo < mid, mid < row_hi
        row_lo, row_hi, col_lo, col_hi = (
            np.concatenate((row_lo[left], mid[right] + 1)),
            np.concatenate((mid[left] - 1, row_hi[right])),
            np.concatenate((col_lo[left], argmin[right])),
            np.concatenate((argmin[left], col_hi[right])))
    value[value >= INF] = INF
    return value, parent


def _row_minima_full(g, f_cov, q, unit, limit, dtype, shift=0):
    """The exact new layer when page lengths differ by class: every row scanned in full."""
    import numpy as np

    m = len(q)
    fresh = np.full(m, INF, dtype=dtype)
    parent = np.zeros(m, dtype=np.int64)
    for v in range(m):
        width = int(limit[v])
        if not width:
            continue
        term = g[:width] + -(-(f_cov[v] - f_cov[:width] - shift) // q[v]) * unit[v]
        term[g[:width] >= INF] = INF
        u = int(np.argmin(term))
        fresh[v], parent[v] = term[u], u
    return fresh, parent


# -- the -n / -f and slab_chunk_max searches ---------------------------------

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


def search_n_f(settings: Settings, requests: Requests, memory_limit: int | None = None,
               keep: int = 3) -> list[Scored]:
    """The best ``-n``/``-f`` pairs (best first, at most ``keep``).

    ``-n`` moves only the first chunk, ``align(header + n)``: one ``-n`` per
    aligned first chunk is tried (the smallest).  Classes are made by
    :func:`slabcalc.model.classes.slab_classes` itself, so the class cap and the
    duplicate classes tiny factors make count as memcached counts them.
    """
    p = settings.profile
    starts: dict[int, int] = {}
    for n in N_RANGE:
        starts.setdefault(_align(p.header + n, p.align), n)
    ns = sorted(starts.values())
    plain = replace(settings, slab_sizes=None)

    def order(c: Scored):   # best first; among equals the smallest change from the defaults
        return (c.key(), abs(c.settings.factor - p.default_factor), abs(c.settings.chunk_size - p.default_chunk_size))

    def grid(factors) -> list[Scored]:
        if memory_limit is None:
            return _fast_grid(plain, ns, factors, requests, keep)
        configs = []
        for f in factors:
            for n in ns:
                s = replace(plain, chunk_size=n, factor=f)
                classes = slab_classes(s)
                flags = " ".join(argv_words(chunk_size=n, factor=f"{f:g}"))
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
    tests/test_optimize.py)."""
    import numpy as np

    from slabcalc.model.classes import class_tables

    sizes, prefix = requests.arrays()
    page = settings.slab_page_size
    out = []
    for at in range(0, len(factors), 16):      # some factors at a time: tables of a few MB
        table = class_tables(settings, ns, factors[at:at + 16])
        reached = prefix[np.searchsorted(sizes, table, side="right")]
        held = np.diff(reached, axis=-1, prepend=0)
        perslab = page // table
        lengths = settings.page_length(table, perslab)      # the release's rule, on whole arrays
        out.append((-(-held // perslab) * lengths).sum(axis=-1))
    return np.concatenate(out) if out else np.zeros((0, len(ns)), dtype=np.int64)


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
    return [Scored(" ".join(argv_words(chunk_size=n, factor=f"{f:g}")), replace(plain, chunk_size=n, factor=f), cost)
            for cost, _, _, f, n in best]


def _with_capacity(configs, requests: Requests, memory_limit: int, keep: int, order) -> list[Scored]:
    """The configurations that can be among the ``keep`` best, with their capacity.

    Capacity (:func:`slabcalc.analysis.report.capacity`) is a bisection per configuration;
    an upper bound (:func:`capacity_bound`) skips the configurations that cannot beat the
    ``keep``-th best found.
    """
    bounded = []
    parts = _BoundParts.of(requests)
    for scored, classes in configs:
        rows = usage(scored.settings, requests, classes)
        bounded.append((capacity_bound(requests, classes, rows, memory_limit, parts), scored, classes, rows))
    bounded.sort(key=lambda b: -b[0])
    done: list[Scored] = []
    best: list[int] = []        # the ``keep`` largest capacities so far, a min-heap: best[0] is the keep-th
    for bound, scored, classes, rows in bounded:
        if len(best) >= keep and bound < best[0]:
            break
        fit = _capacity(scored.settings, requests, classes, rows, memory_limit)   # its own classes
        done.append(replace(scored, items_that_fit=fit))
        if len(best) < keep:
            heapq.heappush(best, fit)
        elif fit > best[0]:
            heapq.heapreplace(best, fit)
    return done


@dataclass(frozen=True)
class _BoundParts:
    """What :func:`capacity_bound` needs of a mix with chunked items, made once per search: the
    chunk requests of the items' chunks other than tails, those of one item of each kind, and the
    number of kinds."""

    not_tails: Requests
    one_each: Requests     # one item of each kind, tails left out (a one-chunk size counts as a kind)
    kinds: int

    @classmethod
    def of(cls, requests: Requests) -> _BoundParts | None:
        if not requests.chunked:
            return None
        not_tails: dict[int, int] = {}
        one_each: dict[int, int] = {}
        for size, n in requests.one_chunk:
            not_tails[size] = not_tails.get(size, 0) + n
            one_each[size] = one_each.get(size, 0) + 1
        for shape, n in requests.chunked:
            for size, role in shape:
                if role != "tail":
                    not_tails[size] = not_tails.get(size, 0) + n
                    one_each[size] = one_each.get(size, 0) + 1

        def as_requests(counted: dict[int, int]) -> Requests:
            sizes = tuple(sorted(counted))
            return Requests(sizes, tuple(counted[s] for s in sizes), requests.items, 0)
        return cls(as_requests(not_tails), as_requests(one_each), len(requests.one_chunk) + len(requests.chunked))


def capacity_bound(requests: Requests, classes: Sequence[SlabClass], rows, memory_limit: int,
                   parts: _BoundParts | None) -> int:
    """An upper bound of :func:`items_that_fit` for ``classes`` (``rows`` their :func:`usage`),
    cheap enough to skip the configurations that cannot win.

    The mix arrives in proportion (:mod:`slabcalc.model.capacity`): kind ``j`` of
    ``m_j`` items has its ``i``-th at ``(2i + 1) / (2 m_j)`` of the way.  Say the
    first refused item comes at ``r``.  Every item before ``r`` was stored: at
    least ``r m_j - 1/2`` of kind ``j``, so class ``c`` holds at least
    ``r H_c - A_c / 2`` chunks other than tails (``H_c`` those of the whole mix,
    ``A_c`` those of one item of each kind; tails are left out, they may fall back
    to the largest class), in at least that over ``perslab`` pages.  The pages
    granted take at most ``-m`` plus one page of each class: past ``-m`` only a
    class's first page is granted (slabs.c 384-385), and after the last page
    granted within ``-m``, each class gets at most its first.  That bounds ``r``;
    and at most ``r m_j + 1/2`` items of kind ``j`` come up to ``r``: ``N <= r T +
    K / 2`` for ``K`` kinds of ``T`` items.  One-chunk mixes are a kind a class
    (``A_c = 1``); with chunked items ``parts`` counts a kind a size, which only
    overcounts ``A_c`` and ``K``.
    """
    import numpy as np

    if parts is None:       # rows: the classes with chunks, each one kind
        held = np.fromiter((r.chunks for r in rows), dtype=np.float64, count=len(rows))
        each = np.ones(len(rows), dtype=np.float64)
        per_page = np.fromiter((r.slab_class.perslab for r in rows), dtype=np.float64, count=len(rows))
        lengths = np.fromiter((r.page_length for r in rows), dtype=np.float64, count=len(rows))
        first_pages, kinds = float(lengths.sum()), len(rows)
    else:
        held = np.asarray(class_chunks(parts.not_tails, classes), dtype=np.float64)
        each = np.asarray(class_chunks(parts.one_each, classes), dtype=np.float64)
        per_page = np.fromiter((c.perslab for c in classes), dtype=np.float64, count=len(classes))
        length = {r.slab_class.id: r.page_length for r in rows}
        lengths = np.fromiter((length.get(c.id, 0) for c in classes), dtype=np.float64, count=len(classes))
        # the largest class may get a page for tails alone: at most a page of the release's rule
        largest = max([classes[-1].chunk_size * classes[-1].perslab, *length.values()])
        first_pages, kinds = float(lengths[each > 0].sum()) + largest, parts.kinds
    unrounded = float((lengths * held / per_page).sum())
    if not unrounded:
        return 1 << 62
    slack = float((lengths * each / (2 * per_page)).sum())
    ratio = (max(memory_limit, 0) + first_pages + slack) / unrounded
    return int(ratio * requests.items * (1 + 1e-9)) + kinds // 2 + 2


def search_chunk_max(settings: Settings, distribution, memory_limit: int | None = None,
                     size_key_length: int = 16) -> list[Scored]:
    """Every ``-o slab_chunk_max`` memcached accepts from 16 KiB to a page, powers of two, best first.

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
            words = argv_words(slab_chunk_max=chunk_max_value(p, size))
        except ValueError:
            words = None
        if words is not None and size != settings.slab_chunk_max:
            flags = " ".join(words)
            try:
                candidate = configure(p, settings.as_argv() + words)
            except Refused:
                candidate = None
            if candidate is not None:
                candidate = replace(candidate, suffix=settings.suffix, slab_reassign=settings.slab_reassign)
                requests = chunk_requests(candidate, distribution, size_key_length, memory_limit is not None)
                fit = (items_that_fit(candidate, requests, memory_limit)
                       if memory_limit is not None else None)
                out.append(Scored(flags, candidate, page_bytes(candidate, requests), fit))
        size *= 2
    out.sort(key=lambda c: (c.key(), -c.settings.slab_chunk_max))
    return out


# -- the whole optimisation --------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    """A configuration as ``report`` sees it."""

    space: str          # "baseline", "n_f", "slab_sizes" or "slab_chunk_max"
    flags: str          # paste-ready memcached flags ("" for the baseline)
    report: Report      # build_report of the (training) distribution under it
    held_out: Report | None = None   # with --validate: the report of the held-back part

    @property
    def page_bytes(self) -> int:
        return self.report.total("page_bytes")


@dataclass(frozen=True)
class Optimum:
    baseline: Candidate
    candidates: tuple[Candidate, ...]     # best first within each space, spaces in SPACES order
    memory_limit: int | None
    validate: float | None = None
    seed: int | None = None
    held_out_items: int = 0               # with validate: how many items were held out
    whole_baseline: Report | None = None  # with validate: the baseline's report of every item (the gate's)

    def gain_pct(self, c: Candidate) -> float:
        """How much better ``c`` is than the baseline: page bytes saved, or with -m items gained."""
        return self._gain(c.report, self.baseline.report)

    def held_out_gain_pct(self, c: Candidate) -> float | None:
        """The same on the held-out items (``--validate``), or None."""
        if c.held_out is None or self.baseline.held_out is None:
            return None
        return self._gain(c.held_out, self.baseline.held_out)

    def _gain(self, report: Report, base: Report) -> float:
        if self.memory_limit is not None:
            items = base.capacity.items
            return 100.0 * (report.capacity.items - items) / items if items else 0.0
        pages = base.total("page_bytes")
        return 100.0 * (pages - report.total("page_bytes")) / pages if pages else 0.0

    def verdict_gain(self, c: Candidate) -> float:
        """The gain the verdict goes by: on the held-out items when there are some (they were not
        optimised for), else on the items."""
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

    def first_of(self, space: str) -> Candidate | None:
        return next((c for c in self.candidates if c.space == space), None)

    @property
    def defaults_fine(self) -> bool:
        best = self.best
        return best is None or self.verdict_gain(best) < GAIN_THRESHOLD_PCT


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


def optimize(settings: Settings, distribution: Iterable[tuple], *, memory_limit: int | None = None,
             max_classes: int | None = None, validate: float | None = None, seed: int = 0,
             size_key_length: int = 16, keep: int = 3) -> Optimum:
    """Search every space for ``distribution`` (``(Item, count[, rows])``) under ``settings``.

    Each winner is re-scored by :func:`slabcalc.analysis.report.build_report`; a
    disagreement with the search's own score is a bug and raises.
    """
    pairs = distribution.items() if isinstance(distribution, dict) else distribution
    distribution = [(t[0], t[1]) for t in pairs]
    everything = distribution
    held_out = None
    if validate is not None and sum(n for _, n in distribution) * validate < MIN_HELD_OUT:
        validate = None     # too few items to hold any out meaningfully: scored on them all (the record says so)
    if validate is not None:
        distribution, held_out = split(distribution, validate, seed)
        held_out = _as_columns(held_out)
    distribution = _as_columns(distribution)

    def candidate(space: str, flags: str, s: Settings, expected: int | None) -> Candidate:
        rep = build_report(s, distribution, memory_limit, size_key_length)
        if expected is not None and rep.total("page_bytes") != expected:
            raise AssertionError(f"optimize scored {flags} at {expected} page bytes, report counts "
                                 f"{rep.total('page_bytes')}")
        other = build_report(s, held_out, memory_limit, size_key_length) if held_out is not None else None
        return Candidate(space, flags, rep, other)

    baseline = candidate("baseline", "", settings, None)
    requests = chunk_requests(settings, distribution, size_key_length, memory_limit is not None)
    if page_bytes(settings, requests) != baseline.page_bytes:
        raise AssertionError("chunk requests disagree with the report")
    found: list[Candidate] = []
    for scored in search_n_f(settings, requests, memory_limit, keep):
        found.append(candidate("n_f", scored.flags, scored.settings, scored.page_bytes))
    p = settings.profile
    if p.slab_sizes is True and requests.sizes:
        answer = best_slab_sizes(settings, requests, max_classes, memory_limit)
        plain = replace(settings, slab_sizes=None)
        listed = merge_thin_sizes(plain, requests, answer.listed)
        flags = " ".join(argv_words(slab_sizes=listed))
        chosen = settings_for(plain, listed)
        _check_accepted(settings, listed)
        found.append(candidate("slab_sizes", flags, chosen,
                               answer.page_bytes if listed == answer.listed else page_bytes(chosen, requests)))
    if requests.sizes and requests.sizes[-1] > CHUNK_MAX_SMALLEST:   # large items: try other chunk maxima
        for scored in search_chunk_max(settings, distribution, memory_limit, size_key_length)[:keep]:
            found.append(candidate("slab_chunk_max", scored.flags, scored.settings, scored.page_bytes))
    if held_out is None:
        return Optimum(baseline, tuple(found), memory_limit)
    return Optimum(baseline, tuple(found), memory_limit, validate, seed, baseline.held_out.items,
                   build_report(settings, _as_columns(everything), memory_limit, size_key_length))


def _as_columns(distribution: list[tuple]) -> list:
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


# -- output records ----------------------------------------------------------
