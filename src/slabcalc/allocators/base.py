"""What every allocator model returns: its size classes and the cost of a set of requests."""

from __future__ import annotations

from dataclasses import dataclass


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def round_up(n: int, multiple: int) -> int:
    return ceil_div(n, multiple) * multiple


@dataclass(frozen=True)
class SizeClass:
    """One size class, in the columns of ``slabcalc classes`` where they apply.

    ``perslab`` objects share one ``page_length``-byte slab (jemalloc 5),
    run (jemalloc 3.6) or mapping; ``page_unused`` bytes of it hold no object
    (jemalloc 3.6's in-run header and tail).
    """

    id: int
    size: int            # bytes handed out (usable size)
    category: str        # small / large / huge (jemalloc); heap / mmap (glibc)
    min_request: int     # smallest request served by this class
    max_request: int     # largest request served by this class
    perslab: int
    page_length: int
    page_unused: int


@dataclass(frozen=True)
class Footprint:
    """What a multiset of ``malloc`` requests costs.

    ``allocated`` is what the allocator hands out (the usable sizes, what
    ``malloc_usable_size`` / ``nallocx`` say); ``overhead`` is the rest of the
    memory it takes for them: headers, pad pages, slab/run tails and
    headers, out-of-band metadata.
    """

    requested: int = 0
    allocated: int = 0
    overhead: int = 0

    @property
    def total(self) -> int:
        return self.allocated + self.overhead

    def __add__(self, other: "Footprint") -> "Footprint":
        return Footprint(self.requested + other.requested, self.allocated + other.allocated,
                         self.overhead + other.overhead)
