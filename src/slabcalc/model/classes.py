"""Slab classes exactly as ``slabs_init()`` makes them, and ``slabs_clsid()``.

The loop, in memcached's words: start at ``sizeof(item) + chunk_size`` (``-n``);
while the release's bound allows and fewer than the class cap exist, round
``size`` up to ``CHUNK_ALIGN_BYTES``, record it with ``perslab = page / size``,
and grow it with ``size *= factor`` -- an ``unsigned int`` times a ``double``,
truncated.  The largest class comes last.  With ``-o slab_sizes`` the listed
sizes replace the geometric series.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

from slabcalc.errors import Refused
from slabcalc.model.settings import Settings

UINT_MAX = 0xFFFFFFFF


class SlabClass(NamedTuple):
    """One slab class: its id, chunk size and chunks per page (``stats slabs`` names).

    An immutable value like the frozen dataclasses elsewhere, as a NamedTuple because the
    optimizer builds millions of them (a tuple is made several times faster)."""

    id: int
    chunk_size: int
    perslab: int

    @property
    def page_used(self) -> int:
        """Bytes of a page its chunks cover."""
        return self.chunk_size * self.perslab


class ClassBytes:
    """A class's bytes, one home for both views of it: ``used`` (chunks in use times the chunk size,
    as ``stats slabs``' used_chunks and chunk_size), ``waste`` (used less the bytes the items asked
    for, mem_requested), ``page_bytes`` and ``free`` (page bytes no item uses).  A subclass has
    ``pages``, ``page_length`` and ``requested_bytes`` (None when unknown) and says
    :meth:`chunks_in_use` (analysis/placement.ClassUsage for a distribution,
    analysis/stats.ClassStats for a server's stats)."""

    pages: int
    page_length: int
    requested_bytes: int | None

    def chunks_in_use(self) -> tuple[int, int]:
        """``(chunk size, chunks in use)``."""
        raise NotImplementedError

    @property
    def used_bytes(self) -> int:
        size, chunks = self.chunks_in_use()
        return size * chunks

    @property
    def chunk_waste(self):
        return None if self.requested_bytes is None else self.used_bytes - self.requested_bytes

    @property
    def page_bytes(self) -> int:
        return self.pages * self.page_length

    @property
    def free_bytes(self) -> int:
        """Page bytes no item uses: the unused chunks of the last page and every page tail."""
        return self.page_bytes - self.used_bytes


def loop_bound(rule: str, settings: Settings) -> tuple[float, bool]:
    """The release's loop bound, tested on the unaligned size in double precision: ``(bound,
    inclusive)`` -- the loop goes on while ``size < bound`` (or ``<=``)."""
    factor = settings.factor
    if rule == "chunk_max_exclusive":      # 1.4.27+: break when size >= chunk_max / factor
        limit = settings.slab_chunk_max if settings.slab_chunk_max is not None else settings.item_size_max
        return limit / factor, False
    if rule == "item_size_max_inclusive":  # 1.4.3-1.4.26: while size <= item_size_max / factor
        return settings.item_size_max / factor, True
    return settings.profile.page_bytes / 2, True  # 1.2.x: while size <= POWER_BLOCK / 2


def slab_classes(settings: Settings) -> tuple[SlabClass, ...]:
    """Every slab class, smallest first; the last one is the largest class."""
    p = settings.profile
    page = settings.slab_page_size
    size = (p.header + settings.chunk_size) & UINT_MAX  # size_t sum stored in an unsigned int
    if p.factor2_min_start is not None and settings.factor == 2.0 and size < p.factor2_min_start:
        size = p.factor2_min_start
    classes: list[SlabClass] = []
    listed: Sequence[int] | None = settings.slab_sizes
    bound, inclusive = loop_bound(p.loop, settings)
    align, factor, cap = p.align, settings.factor, p.max_regular
    while len(classes) < cap:
        if listed is not None:
            if len(classes) >= len(listed):
                break
            size = listed[len(classes)]
        elif not (size <= bound if inclusive else size < bound):
            break
        if size % align:
            size += align - size % align
        classes.append(SlabClass(len(classes) + 1, size, page // size))
        if listed is None:
            size = int(size * factor) & UINT_MAX
    # slab_chunk_size_max is a C int: a negative one (accepted before 1.6.24) becomes a
    # huge unsigned chunk size, and perslab is a signed int division stored unsigned.
    largest = settings.largest_chunk
    perslab = abs(page) // abs(largest) * (1 if (page < 0) == (largest < 0) else -1)
    classes.append(SlabClass(len(classes) + 1, largest & UINT_MAX, perslab & UINT_MAX))
    table = tuple(classes)
    if settings.preallocate and p.process is not None:
        _check_prealloc(settings, table)
    return table


def _check_prealloc(settings: Settings, classes: Sequence[SlabClass]) -> None:
    """``-L``: ``slabs_init()`` gives every class a page from the -m block (``slabs_preallocate``)
    and exits when they do not fit (slabs.c 305-330), naming the class count as megabytes."""
    if sum(settings.page_length(c.chunk_size, c.perslab) for c in classes) > settings.maxbytes:
        raise Refused(settings.profile.process.prealloc_message.format(classes=classes[-1].id), 1)


def class_for(classes: Sequence[SlabClass], size: int) -> SlabClass | None:
    """``slabs_clsid()``: the first class whose chunk holds ``size`` bytes, else None."""
    low, high = 0, len(classes)
    while low < high:  # chunk sizes never decrease: bisect for the first that fits
        mid = (low + high) // 2
        if classes[mid].chunk_size >= size:
            high = mid
        else:
            low = mid + 1
    return classes[low] if low < len(classes) else None


def home_class(classes: Sequence[SlabClass], size: int) -> SlabClass:
    """:func:`class_for`, or the largest class for a size above every chunk: where a chunk of that
    size is allocated (a chunked item's header, body and tail requests, a placement's home)."""
    return class_for(classes, size) or classes[-1]


def slabs_clsid(settings: Settings, classes: Sequence[SlabClass], size: int) -> int:
    """``slabs_clsid()`` exactly (slabs.c 90-99 at 1.6.18, 77-86 at 1.6.45): 0 for a size of 0 or
    above ``-I`` (item_size_max); the largest class for a size above every chunk but within -I;
    else the first class whose chunk holds it.  extstore's ``min_class`` is this of
    ``ext_item_size`` (storage.c 594 at 1.6.18, 622 at 1.6.45)."""
    if size == 0 or size > settings.item_size_max:
        return 0
    return home_class(classes, size).id


def home_indexes(chunk_sizes, sizes):
    """:func:`home_class` of each of ``sizes`` (a numpy array) as an index into the classes whose
    chunk sizes (ascending) are ``chunk_sizes``: the numpy twin, held to it by
    tests/model/test_class_rules.py."""
    import numpy as np

    return np.minimum(np.searchsorted(chunk_sizes, sizes, side="left"), len(chunk_sizes) - 1)


def class_by_size(classes: Sequence[SlabClass], limit: int) -> bytes:
    """``slabs_clsid`` of every size from 0 to ``limit``, a byte each: the first class whose chunk
    holds it (:func:`class_for`; chunk sizes ascend, class ids are below 64): the replay
    engine finds a set's class by an index, not in a dict of boxed sizes."""
    parts, start = [], 0
    for c in classes:
        end = min(c.chunk_size, limit)
        if end >= start:
            parts.append(bytes([c.id]) * (end - start + 1))
            start = end + 1
    return b"".join(parts)


def classes_for(classes: Sequence[SlabClass], sizes: Sequence[int]) -> list[SlabClass]:
    """:func:`class_for` of each of ``sizes`` (ascending), the largest class for a size above every
    chunk: one walk up the classes instead of a bisection a size."""
    found, at, last = [], 0, len(classes) - 1
    for size in sizes:
        while at < last and classes[at].chunk_size < size:
            at += 1
        found.append(classes[at])
    return found


def vv_lines(settings: Settings, classes: Sequence[SlabClass] | None = None) -> list[str]:
    """The ``slab class`` lines ``memcached -vv`` prints at start-up for these settings."""
    p = settings.profile
    classes = slab_classes(settings) if classes is None else classes
    shown = classes if p.vv_prints_largest else classes[:-1]
    return [p.vv_format % (c.id, c.chunk_size, c.perslab) for c in shown]


@dataclass(frozen=True)
class ClassInfo:
    """A class as ``slabcalc classes`` shows it.

    ``max_data`` is the most key+value bytes the chunk holds for a 1-byte key
    and flags 0 (the convention of published tables), ``min_data`` the previous
    class's ``max_data`` + 1; ``page_length`` is what one page of the class
    takes from ``-m`` and ``page_unused`` the bytes of it no chunk covers.
    ``duplicate_of`` names an earlier class with the same chunk size (tiny
    factors make them); items never land in such a class.
    """

    slab_class: SlabClass
    max_data: int | None
    min_data: int | None
    page_length: int
    duplicate_of: int | None

    @property
    def page_unused(self) -> int:
        return self.page_length - self.slab_class.page_used


def describe_classes(settings: Settings, classes: Sequence[SlabClass] | None = None) -> tuple[ClassInfo, ...]:
    """Every class with its data range and page use."""
    from slabcalc.model.item import max_value_length  # item sizing is only needed for this table

    classes = slab_classes(settings) if classes is None else classes
    rows: list[ClassInfo] = []
    previous_max: int | None = None
    first_of_size: dict[int, int] = {}
    for c in classes:
        value = max_value_length(settings, c.chunk_size, key_length=1, flags=0)
        max_data = None if value is None else value + 1
        min_data = (previous_max + 1 if previous_max is not None else 1) if max_data is not None else None
        duplicate = first_of_size.setdefault(c.chunk_size, c.id)
        rows.append(ClassInfo(c, max_data, min_data, settings.page_length(c.chunk_size, c.perslab),
                              duplicate if duplicate != c.id else None))
        if max_data is not None:
            previous_max = max(max_data, previous_max or 0)
    return tuple(rows)


def class_tables(settings: Settings, starts, factors):
    """Many class tables at once, for the optimizer's -n/-f grid: the chunk sizes of
    ``slab_classes(replace(settings, chunk_size=n, factor=f))`` for every ``f`` of ``factors`` and
    ``n`` of ``starts``, as a numpy array indexed ``[f, n, class]`` (each table's classes, then
    its largest class repeated to the end).  The numpy twin of :func:`slab_classes`'s loop for
    generated tables -- the same double multiply, truncation, alignment, bound and cap -- held
    equal to it by tests/analysis/test_optimize.py."""
    import numpy as np
    from dataclasses import replace

    p = settings.profile
    probe = replace(settings, slab_sizes=None)
    factor = np.asarray(factors, dtype=np.float64)[:, None]            # a row per factor
    bounds = [loop_bound(p.loop, replace(probe, factor=float(f))) for f in factors]
    bound = np.array([b for b, _ in bounds], dtype=np.float64)[:, None]
    inclusive = bounds[0][1] if bounds else True
    size = np.repeat(((p.header + np.asarray(starts, dtype=np.int64)) & UINT_MAX)[None, :], len(factor), axis=0)
    if p.factor2_min_start is not None:
        size = np.where((factor == 2.0) & (size < p.factor2_min_start), p.factor2_min_start, size)
    largest = probe.largest_chunk & UINT_MAX
    table = np.full((len(factor), size.shape[1], p.max_regular + 1), largest, dtype=np.int64)
    alive = np.ones(size.shape, dtype=bool)
    align = p.align
    for k in range(p.max_regular):
        alive &= (size <= bound) if inclusive else (size < bound)
        if not alive.any():
            break
        aligned = size + (-size) % align
        table[:, :, k][alive] = aligned[alive]
        size = np.where(alive, (aligned * factor).astype(np.int64) & UINT_MAX, size)
    return table
