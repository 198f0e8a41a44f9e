"""glibc malloc (ptmalloc2) on 64-bit Linux: chunk sizes and the mmap threshold.

Source: ``malloc/malloc.c`` of glibc 2.36 (the same formulas in 2.17, 2.28
and 2.42), from ``research/allocators.md`` §4:

- ``request2size``: a chunk is ``max(MINSIZE, (n + SIZE_SZ + 15) & ~15)``,
  i.e. the request plus the 8-byte size field, rounded up to 16, at least 32.
  The next chunk's ``prev_size`` field is usable while the chunk is in use,
  so ``malloc_usable_size`` is the chunk minus 8.
- A chunk of at least ``mmap_threshold`` bytes is mapped on its own (when no
  free chunk or top space serves it): ``ALIGN_UP(chunk + 8, page)`` bytes,
  of which all but a 16-byte header are usable.  The threshold starts at
  128 KiB and rises, up to 32 MiB, each time an mmapped chunk is freed (to
  that chunk's size); a fixed ``M_MMAP_THRESHOLD`` stops that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from slabcalc.allocators.base import Footprint, SizeClass, round_up

SIZE_SZ = 8
MALLOC_ALIGNMENT = 16
MINSIZE = 32
PAGE = 4096
MMAP_THRESHOLD = 128 << 10       # DEFAULT_MMAP_THRESHOLD_MIN
MMAP_THRESHOLD_MAX = 32 << 20    # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit


def request2size(n: int) -> int:
    """The heap chunk of a request of ``n`` bytes."""
    return max(MINSIZE, (n + SIZE_SZ + MALLOC_ALIGNMENT - 1) & ~(MALLOC_ALIGNMENT - 1))


@dataclass(frozen=True)
class Glibc:
    """glibc malloc with a given mmap threshold (bytes of chunk)."""

    name: str = "glibc"
    mmap_threshold: int = MMAP_THRESHOLD

    def mmapped(self, n: int) -> bool:
        return request2size(n) >= self.mmap_threshold

    def chunk(self, n: int) -> int:
        """Bytes taken by a request of ``n``: its heap chunk, or its own mapping."""
        nb = request2size(n)
        return round_up(nb + SIZE_SZ, PAGE) if nb >= self.mmap_threshold else nb

    def usable(self, n: int) -> int:
        """``malloc_usable_size`` of the pointer ``malloc(n)`` returns."""
        return self.chunk(n) - (2 * SIZE_SZ if self.mmapped(n) else SIZE_SZ)

    usize = usable
    taken = chunk    # bytes one request takes

    def footprint(self, requests: Mapping[int, int]) -> Footprint:
        requested = allocated = overhead = 0
        for n, count in requests.items():
            requested += n * count
            allocated += self.usable(n) * count
            overhead += (self.chunk(n) - self.usable(n)) * count
        return Footprint(requested, allocated, overhead)

    def size_classes(self, up_to: int) -> list[SizeClass]:
        """Every chunk size from 32 to the one that serves ``up_to`` bytes."""
        classes: list[SizeClass] = []
        low = 1
        while True:
            usable, chunk = self.usable(low), self.chunk(low)
            classes.append(SizeClass(len(classes) + 1, usable, "mmap" if self.mmapped(low) else "heap",
                                     low, usable, 1, chunk, chunk - usable))
            if usable >= up_to:
                return classes
            low = usable + 1


GLIBC = Glibc()
