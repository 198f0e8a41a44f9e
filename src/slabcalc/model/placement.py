"""Where an item goes: its class, the chunks it occupies, and the bytes it wastes.

An item of ``ntotal`` bytes takes one chunk of the first class that holds it
(``slabs_clsid``); the rest of that chunk is waste.  Where the release chunks
large items (1.4.29+; on by default from 1.5.0) an item larger than the largest
chunk but within ``-I`` is stored as a header chunk, full ``slab_chunk_max``
chunks and a tail chunk (``items.c do_item_alloc()`` / ``do_item_alloc_chunk()``).
Beyond ``-I`` memcached answers ``SERVER_ERROR object too large for cache``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from slabcalc.errors import Unplaceable  # noqa: F401 (raised here, caught by its callers)
from slabcalc.model.classes import SlabClass, class_for, home_class, home_indexes, slab_classes
from slabcalc.model.item import ItemSize, item_size, max_value_length
from slabcalc.model.settings import Settings

STORED, CHUNKED, TOO_LARGE = "stored", "chunked", "too_large"


@dataclass(frozen=True)
class Chunk:
    """One chunk an item occupies: its role, class and the bytes asked of it."""

    role: str        # "item", "header", "body" or "tail"
    class_id: int
    chunk_size: int
    requested: int   # the size passed to slabs_alloc (what mem_requested counts)

    @property
    def waste(self) -> int:
        return self.chunk_size - self.requested


@dataclass(frozen=True)
class Placement:
    """The fate of one item under one configuration."""

    item: ItemSize
    status: str                  # STORED, CHUNKED or TOO_LARGE
    chunks: tuple[Chunk, ...]
    lru_class: SlabClass | None  # the class whose LRU and ``stats items`` count the item
    spare_value_bytes: int | None  # value bytes that could be added without a new chunk/class

    @property
    def item_size(self) -> int:
        return self.item.total

    @property
    def memory(self) -> int:
        """Slab bytes the item holds: the sum of its chunks."""
        return sum(c.chunk_size for c in self.chunks)

    @property
    def waste(self) -> int | None:
        """Bytes held beyond ``ntotal`` (chunk slack, plus chunk headers when chunked)."""
        return self.memory - self.item.total if self.chunks else None

    @property
    def waste_pct(self) -> float | None:
        return 100.0 * self.waste / self.memory if self.chunks else None


def check_placeable(settings: Settings, classes: Sequence[SlabClass]) -> None:
    """Refuse class tables memcached starts with but cannot store items in."""
    largest = classes[-1].chunk_size
    if largest > settings.slab_page_size:  # a negative slab_chunk_max, read as unsigned
        raise Unplaceable(f"the largest class's chunk of {largest} bytes is larger than a "
                          f"{settings.slab_page_size}-byte page: memcached cannot store items here")


def place(settings: Settings, key_length: int, value_length: int, flags: int = 0,
          classes: Sequence[SlabClass] | None = None) -> Placement:
    """Place one item (key and value lengths in bytes) under ``settings``."""
    classes = slab_classes(settings) if classes is None else classes
    item = item_size(settings, key_length, value_length, flags)
    ntotal = item.total
    largest = classes[-1]
    check_placeable(settings, classes)
    if ntotal > settings.item_size_max or (ntotal > largest.chunk_size and not settings.chunked_items):
        return Placement(item, TOO_LARGE, (), None, None)
    if ntotal <= largest.chunk_size:
        home = class_for(classes, ntotal)
        spare = max_value_length(settings, home.chunk_size, key_length, flags) - value_length
        chunk = Chunk("item", home.id, home.chunk_size, ntotal)
        return Placement(item, STORED, (chunk,), home, spare)
    chunks = _chunks(settings, classes, item)
    last = chunks[-1]
    spare = min(last.chunk_size - last.requested, settings.item_size_max - ntotal)
    return Placement(item, CHUNKED, chunks, largest, spare)


def _chunks(settings: Settings, classes: Sequence[SlabClass], item: ItemSize) -> tuple[Chunk, ...]:
    """The chunks of an item larger than the largest class."""
    p = settings.profile
    largest = classes[-1]
    capacity = largest.chunk_size - p.chunk_header
    if capacity <= 0:
        raise Unplaceable(f"slab_chunk_max of {largest.chunk_size} bytes leaves no room for data after "
                          f"the {p.chunk_header}-byte chunk header: memcached cannot store this item")
    if p.chunked == "eager":
        # 1.4.29-1.4.35 do_slabs_alloc_chunked(): every chunk, head included, from the
        # largest class, each holding chunk size - sizeof(item_chunk) bytes of the item.
        count = -(-item.total // capacity)
        return tuple(Chunk("header" if i == 0 else "body", largest.id, largest.chunk_size,
                           largest.chunk_size) for i in range(count))
    # 1.4.36+: a header chunk sized for the item header plus one empty item_chunk ...
    htotal = item.header + item.cas + item.key + item.suffix + p.chunk_header
    head = home_class(classes, htotal)
    chunks = [Chunk("header", head.id, head.chunk_size, htotal)]
    # ... then the value (with CRLF) in chunks asking min(remaining + header, chunk max):
    # full chunks from the largest class, the tail from the smallest class that fits.
    # (The full chunks are counted at once: every one asks for the chunk max.)
    remaining, full_size = item.value, largest.chunk_size
    if remaining + p.chunk_header >= full_size:
        full = (remaining + p.chunk_header - full_size) // capacity + 1
        body = home_class(classes, full_size)
        chunks += [Chunk("body", body.id, body.chunk_size, full_size)] * full
        remaining -= full * capacity
    if remaining > 0:
        size = remaining + p.chunk_header
        home = home_class(classes, size)
        chunks.append(Chunk("tail", home.id, home.chunk_size, size))
    return tuple(chunks)


@dataclass(frozen=True)
class SizedChunks:
    """Chunked items known only by their ``ntotal``, placed all at once: numpy columns, a row a size.

    Row ``i`` is the placement :func:`place` gives the item that
    :func:`slabcalc.analysis.report.item_for_size` makes of ``sizes[i]`` (the key
    length given, the value the rest): a header chunk asking ``header[i]`` bytes
    of class ``header_class[i]``, ``full[i]`` body chunks asking ``body`` bytes of
    class ``body_class``, and a tail asking ``tail[i]`` bytes of ``tail_class[i]``
    (``tail[i]`` 0: none).  Classes are indices into the class table.  Only the rows
    where ``exact`` is true are placed; the others (a text flags suffix that makes no
    item of that size, say) are left to :func:`place`, one by one.
    """

    exact: Any
    header: Any
    header_class: Any
    full: Any
    tail: Any
    tail_class: Any
    body: int
    body_class: int

    def select(self, mask) -> SizedChunks:
        """The rows where ``mask`` (a boolean array) is true."""
        return SizedChunks(self.exact[mask], self.header[mask], self.header_class[mask], self.full[mask],
                           self.tail[mask], self.tail_class[mask], self.body, self.body_class)


def sized_chunks_apply(settings: Settings, classes: Sequence[SlabClass], key_length: int) -> bool:
    """Whether :func:`place_sized_chunks` can place this configuration's chunked items at all:
    chunks of the 1.4.36+ shape with room for data, and a key length memcached takes."""
    p = settings.profile
    return (settings.chunked_items and p.chunked not in ("none", "eager")
            and classes[-1].chunk_size > p.chunk_header and 1 <= key_length <= p.key_max)


def place_sized_chunks(settings: Settings, classes: Sequence[SlabClass], sizes, key_length: int) -> SizedChunks:
    """:func:`place` for many items larger than the largest chunk and within ``-I``, known by size.

    ``sizes`` is an int64 array of ``ntotal`` values; the caller has checked
    :func:`sized_chunks_apply`.  The arithmetic is :func:`_chunks`' own, over columns
    (``items.c do_item_alloc()``: the header chunk holds the item header and one
    empty ``item_chunk``; the value and its CRLF fill ``slab_chunk_max`` chunks
    asking the chunk max each, then a tail asks for what is left plus its header).
    """
    import numpy as np

    from slabcalc.model.item import VALUE_MAX, digits, ntotal_array

    p = settings.profile
    chunk_sizes = np.fromiter((c.chunk_size for c in classes), dtype=np.int64, count=len(classes))

    def home(requested):   # slabs_clsid(), or the largest class when none holds it (as _chunks)
        return home_indexes(chunk_sizes, requested)

    sizes = np.asarray(sizes, dtype=np.int64)
    key = np.full(len(sizes), key_length, dtype=np.int64)
    empty = int(ntotal_array(settings, key[:1], np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))[0]
                ) if len(sizes) else 0
    # item_for_size takes the largest value whose item is no larger than the size, and wants it
    # exactly the size.  An item grows with its value, so at most one value makes the size: the
    # value of an empty item's size difference, less the digits a text suffix adds to show it
    # (`` 0 <length>\r\n``: the digits of the length, one counted in the empty item already).
    most = sizes - empty
    value = np.zeros_like(sizes)
    exact = np.zeros(len(sizes), dtype=bool)
    zeros = np.zeros_like(sizes)
    for guess in (most, most + 1 - digits(most), most + 2 - digits(most)):
        fine = (guess >= 0) & (guess <= VALUE_MAX) & ~exact
        fine &= ntotal_array(settings, key, np.where(fine, guess, 0), zeros) == sizes
        value = np.where(fine, guess, value)
        exact |= fine
    header_room = p.chunk_header
    full_size = int(chunk_sizes[-1])
    room = full_size - header_room        # value bytes a full chunk holds
    remaining = value + 2                 # the value with its CRLF
    header = sizes - remaining + header_room
    full = np.where(remaining + header_room >= full_size, (remaining + header_room - full_size) // room + 1, 0)
    remaining = remaining - full * room
    tail = np.where(remaining > 0, remaining + header_room, 0)
    return SizedChunks(exact, header, home(header), full, tail, home(tail), full_size, int(home(full_size)))
