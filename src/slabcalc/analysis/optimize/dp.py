"""The exact ``-o slab_sizes`` optimum: a dynamic programme over candidate chunk sizes.

``-o slab_sizes`` (:func:`solve`) is solved exactly by dynamic
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


With ``-m``, :func:`slabcalc.analysis.optimize.slab_sizes.best_slab_sizes` runs the DP with the
requests scaled to the first ``n`` items of the mix (:func:`solve`'s ``scale``).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from slabcalc.analysis.optimize.requests import Requests
from slabcalc.errors import ValueRefused
from slabcalc.model.settings import Settings

INF = 1 << 62


@dataclass(frozen=True)
class SlabSizes:
    """The DP's answer: class sizes as memcached makes them, the list to give it, and the cost."""

    chunk_sizes: tuple[int, ...]   # the classes memcached creates (aligned)
    listed: tuple[int, ...]        # the -o slab_sizes numbers that create them
    page_bytes: int                # pages of every class, the largest included
    items_that_fit: int | None = None   # with -m: items of the mix that fit


def align_up(size: int, align: int) -> int:
    return -(-size // align) * align


def constant_page_length(settings: Settings, chunk_sizes: Iterable[int]) -> int | None:
    """The one page length every class of these sizes takes, or None when it varies.

    The release's rule on the whole array at once (:meth:`Settings.page_length` takes arrays, as
    the -n/-f grid gives it): a chunk of every aligned size up to a page is 65 536 sizes, and the
    ``-m`` search asks this of each of its two dozen DPs."""
    import numpy as np

    sizes = np.fromiter(chunk_sizes, dtype=np.int64)
    if not len(sizes):
        return None
    lengths = settings.page_length(sizes, settings.slab_page_size // sizes)
    if np.ndim(lengths) == 0:       # a rule that does not depend on the chunk: one length
        return int(lengths)
    first = int(lengths[0])
    return first if bool((lengths == first).all()) else None


def candidate_sizes(settings: Settings, requests: Requests, per_perslab: bool) -> list[int]:
    """Chunk sizes an optimal list is made of (see the module docstring), ascending."""
    align = settings.profile.align
    chunk_max = settings.largest_chunk
    low = align_up(max(settings.chunk_size, 1), align)
    page = settings.slab_page_size
    aligned_requests = {align_up(s, align) for s in requests.sizes}
    base = {max(low, s) for s in aligned_requests} | {low}
    if per_perslab:  # the smallest aligned chunk of every perslab value
        for perslab in range(1, page // low + 1):
            start = align_up(page // (perslab + 1) + 1, align)
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


@dataclass(frozen=True)
class _Columns:
    """The DP's fixed columns for one solve, indexed by candidate chunk size ``v``: ``f_cov`` the
    requests ``<= v`` (scaled), ``q`` its chunks per page (scaled), ``unit`` a page's cost, ``limit``
    how many candidates lie at least ``2 * align`` below, ``previous`` the one exactly ``align`` below
    (where ``has_previous``)."""

    values: Any
    f_cov: Any
    q: Any
    unit: Any
    limit: Any
    previous: Any
    has_previous: Any
    shift: int
    align: int
    page_length: int | None   # the one page length of every class, or None (costs in bytes)
    dtype: Any

    def cost(self, held, row):
        """Pages (or bytes) of ``held`` scaled requests in classes ``row``."""
        return -(-(held - self.shift) // self.q[row]) * self.unit[row]


def solve(settings: Settings, requests: Requests, max_classes: int, scale) -> SlabSizes:
    """The DP of the module docstring; ``scale=(n, items)`` counts the chunks of a class that holds
    ``X`` of the whole mix's as the first ``n`` items of the proportional mix hold them
    (:func:`slabcalc.model.capacity._before`, the class one kind): ``ceil((2nX - items) / (2 items))``,
    in pages ``ceil((2nX - items) / (2 items perslab))`` -- the DP's ``F`` scaled by ``2n``, its
    chunks per page by ``2 items``, and ``items`` taken off each class (``shift``)."""
    import numpy as np

    n, items = (2 * scale[0], 2 * scale[1]) if scale is not None else (1, 1)
    cols = _columns(settings, requests, max_classes, n, items, scale[1] if scale is not None else 0)
    m = len(cols.values)
    # the first class: its listed number is max(v - a + 1, -n), `offset` into the window
    first_offset = np.maximum(0, settings.chunk_size - (cols.values - cols.align + 1))
    layer = np.full((cols.align, m), INF, dtype=cols.dtype)
    rows = np.arange(m)
    ok = first_offset < cols.align
    layer[first_offset[ok], rows[ok]] = cols.cost(cols.f_cov[ok], rows[ok])
    history = []   # per layer: (new_mask[align, m], parent_of_offset0[m], best_offset_of_u[m])
    for _ in range(1, max_classes):
        step = _next_layer(cols, layer)
        if step is None:
            break
        layer, *taken = step
        history.append(tuple(taken))
    return _best_list(settings, requests, cols, layer, history, n, items)


def _columns(settings: Settings, requests: Requests, max_classes: int, n: int, items: int, shift: int) -> _Columns:
    """The candidates of ``requests`` and the DP's columns over them (requests scaled by ``n``, chunks
    per page by ``items``, ``shift`` taken off each class)."""
    import numpy as np

    align = settings.profile.align
    page = settings.slab_page_size
    chunk_max = settings.largest_chunk
    probe = range(align_up(max(settings.chunk_size, 1), align), chunk_max, align)
    page_length = constant_page_length(settings, [*probe, chunk_max])
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
    # costs are pages (one page length) or bytes (page lengths differ by class)
    unit = (np.ones(m, dtype=np.int64) if page_length is not None
            else np.fromiter((settings.page_length(int(c), int(q)) for c, q in zip(values, perslab)),
                             dtype=np.int64, count=m))
    most_pages = (-(-total * n // items) + max_classes + 2) * int(unit.max())
    bound = most_pages * int(perslab.max()) * items + total * n
    dtype = np.int64 if bound < INF >> 2 else object   # exact either way; object only for huge inputs
    previous = np.searchsorted(values, values - align)                      # u == v - a, if a candidate
    return _Columns(values, covered.astype(dtype) * n,                     # F scaled by n
                    perslab.astype(dtype) * items,                         # and chunks per page by items
                    unit, np.searchsorted(values, values - 2 * align, side="right"),   # u: values[u] <= v - 2a
                    previous, (previous < m) & (values[np.minimum(previous, m - 1)] == values - align),
                    shift, align, page_length, dtype)


def _next_layer(cols: _Columns, layer):
    """One more class: ``(layer, taken, parent, best_offset)``, or None when no list gains by it."""
    import numpy as np

    m = len(cols.values)
    rows = np.arange(m)
    best_offset = np.argmin(layer, axis=0)
    g = layer[best_offset, rows]
    new = layer.copy()
    taken = np.zeros((cols.align, m), dtype=bool)
    # offset 0: any earlier class at least 2*align below
    if cols.page_length is not None:
        value, parent = _row_minima(g, cols.f_cov, cols.q, cols.limit, cols.dtype)
        reachable = value < INF
        fresh = np.full(m, INF, dtype=cols.dtype)
        fresh[reachable] = -(-(value[reachable] + cols.f_cov[reachable] - cols.shift) // cols.q[reachable])
    else:
        fresh, parent = _row_minima_full(g, cols.f_cov, cols.q, cols.unit, cols.limit, cols.dtype, cols.shift)
    better = fresh < new[0]
    new[0][better] = fresh[better]
    taken[0] = better
    # offset o >= 1: a class exactly align below, whose listed number had offset o - 1
    at = np.flatnonzero(cols.has_previous)
    u = cols.previous[at]
    for o in range(1, cols.align):
        base = layer[o - 1, u]
        live = base < INF
        v_live, u_live = at[live], u[live]
        step = base[live] + cols.cost(cols.f_cov[v_live] - cols.f_cov[u_live], v_live)
        better = step < new[o, v_live]
        new[o, v_live[better]] = step[better]
        taken[o, v_live[better]] = True
    if not taken.any():
        return None
    return new, taken, parent, best_offset


def _best_list(settings: Settings, requests: Requests, cols: _Columns, layer, history, n: int,
               items: int) -> SlabSizes:
    """The cheapest list of the last layer, the largest class's pages added, traced back."""
    import numpy as np

    chunk_max = settings.largest_chunk
    largest_perslab = settings.slab_page_size // chunk_max
    largest_length = settings.page_length(chunk_max, largest_perslab)
    total = int(requests.arrays()[1][-1])
    largest = -(-(total * n - cols.f_cov - cols.shift) // (largest_perslab * items))
    largest = np.maximum(largest, 0) * (largest_length if cols.page_length is None else 1)
    totals = layer + largest[None, :]
    offset, v = np.unravel_index(int(np.argmin(totals)), totals.shape)
    best = int(totals[offset, v])
    chosen = []
    for taken, parent, best_offset in reversed(history):
        if not taken[offset, v]:
            continue
        chosen.append(int(cols.values[v]))
        if offset == 0:
            u = int(parent[v])
            offset, v = int(best_offset[u]), u
        else:
            offset, v = offset - 1, int(cols.previous[v])
    chosen.append(int(cols.values[v]))
    chunk_sizes = tuple(reversed(chosen))
    listed = listed_sizes(chunk_sizes, settings.chunk_size, cols.align)
    assert listed is not None, chunk_sizes
    cost_bytes = best * (cols.page_length if cols.page_length is not None else 1)
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
