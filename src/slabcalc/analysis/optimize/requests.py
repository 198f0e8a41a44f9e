"""What a distribution asks of the classes, and a class table scored against it.

A class holds what the chunk requests reaching it ask for: :func:`chunk_requests` turns a
distribution into that multiset once (the one placement pass,
:func:`slabcalc.analysis.placement.place_items`); :func:`page_bytes` and :func:`items_that_fit`
score any class table against it, and :func:`capacity_bound` bounds the second cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Sequence

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.placement import ClassUsage, Placed, place_items
from slabcalc.analysis.report import capacity
from slabcalc.errors import ValueRefused
from slabcalc.model.capacity import ChunkShape, mix_capacity
from slabcalc.model.classes import SlabClass, slab_classes
from slabcalc.model.settings import Settings


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


def chunk_requests(settings: Settings, distribution: Iterable[tuple], size_key_length: int = SIZE_KEY_LENGTH,
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
                    tuple(placed.one_chunk.items()) if placed.chunked else (), placed.shapes)


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


def items_that_fit(settings: Settings, requests: Requests, *, classes: Sequence[SlabClass] | None = None) -> int:
    """Items of this mix the ``-m`` of the settings holds (:func:`slabcalc.analysis.report.capacity`)."""
    classes = slab_classes(settings) if classes is None else classes
    return capacity_of(settings, requests, classes, usage(settings, requests, classes))


def capacity_of(settings: Settings, requests: Requests, classes: Sequence[SlabClass], rows) -> int:
    """The report's capacity from the requests under the -m the settings were given: by chunk
    counts, or item by item with chunked items."""
    if not requests.shapes:
        raise ValueError("capacity needs the chunk shapes chunk_requests(shapes=False) left out")
    memory_limit = settings.memory_limit
    if memory_limit is None:
        raise ValueError("capacity needs settings given -m")
    if requests.chunked:
        return mix_capacity(settings, classes, dict(requests.one_chunk), dict(requests.chunked), memory_limit).items
    return capacity(rows, requests.items, memory_limit).items


@dataclass(frozen=True)
class BoundParts:
    """What :func:`capacity_bound` needs of a mix with chunked items, made once per search: the
    chunk requests of the items' chunks other than tails, those of one item of each kind, and the
    number of kinds."""

    not_tails: Requests
    one_each: Requests     # one item of each kind, tails left out (a one-chunk size counts as a kind)
    kinds: int

    @classmethod
    def of(cls, requests: Requests) -> BoundParts | None:
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
                   parts: BoundParts | None) -> int:
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
