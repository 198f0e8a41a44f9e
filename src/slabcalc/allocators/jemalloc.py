"""jemalloc 3.6 and 5.x: size classes, slabs/runs and metadata, in integers.

Sources (tags 3.6.0 and 5.3.0, x86_64, 4 KiB pages), from
``research/allocators.md`` §1:

- 5.x classes (``sz_s2u_compute``, ``sz.h``): 8, then for ``2^(k-1) < n <=
  2^k`` a spacing of ``max(quantum, 2^(k-3))`` -- four classes per doubling.
  Small (slab) classes are those below 4 pages (up to 14336); a slab is
  ``lcm(class, page)`` bytes (``slab_size()``, ``sc.c``) with one 128-byte
  out-of-band ``edata_t``.  Large allocations (16 KiB and up) are one extent
  each, ``usize + PAGE`` when the build is cache-oblivious (the default; Redis
  builds with ``--disable-cache-oblivious`` since 7.2), plus an ``edata_t``.
- 3.6 classes (``size_classes.sh``, ``s2u()``): the same spacing up to 3584
  (28 small classes), then every page multiple up to ``arena_maxclass`` =
  4 MiB - 6 header pages, then 4 MiB chunk multiples ("huge").  Small
  regions live in runs whose in-band header and tail are in ``RUNS_3_6``;
  every 4 MiB arena chunk keeps 6 pages of page map.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Mapping

from slabcalc.allocators.base import Footprint, SizeClass, ceil_div, round_up

PAGE = 4096
LG_TINY_MIN = 3          # the smallest class is 8 bytes
EDATA = 128              # sizeof(edata_t) in 5.3.0: one per slab and per large extent

SMALL_MAX_5 = 14336      # SC_SMALL_MAXCLASS: the largest class below 4 pages
SMALL_MAX_3_6 = 3584     # SMALL_MAXCLASS of 3.6: small classes stop below one page
CHUNK_3_6 = 4 << 20      # LG_CHUNK_DEFAULT 22
MAP_BIAS_3_6 = 6         # pages of chunk header (arena_chunk_t + 24 B of page map per page)
LARGE_MAX_3_6 = CHUNK_3_6 - MAP_BIAS_3_6 * PAGE   # arena_maxclass = 4169728

# jemalloc 3.6 small runs, class -> (run bytes, regions per run), read from a 3.6.0 build
# (arenas.bin.<i>.run_size / nregs); bin_info_run_size_calc() keeps the in-run header
# under about 1.5 % (RUN_MAX_OVRHD 0x3d / 4096), relaxed for big regions.
RUNS_3_6 = {
    8: (4096, 501), 16: (4096, 252), 32: (4096, 126), 48: (4096, 84), 64: (4096, 63),
    80: (4096, 50), 96: (8192, 84), 112: (8192, 72), 128: (8192, 63), 160: (8192, 51),
    192: (12288, 63), 224: (16384, 72), 256: (16384, 63), 320: (20480, 63), 384: (24576, 63),
    448: (28672, 63), 512: (32768, 63), 640: (32768, 51), 768: (36864, 47), 896: (40960, 45),
    1024: (65536, 63), 1280: (65536, 51), 1536: (65536, 42), 1792: (69632, 38),
    2048: (135168, 65), 2560: (135168, 52), 3072: (135168, 43), 3584: (143360, 39),
}


def _spaced(n: int, lg_quantum: int) -> int:
    """The class of ``n`` in the four-per-doubling scheme shared by 3.6 (small) and 5.x."""
    if n <= 1 << LG_TINY_MIN:
        return 1 << LG_TINY_MIN
    lg_ceil = (n - 1).bit_length()               # 2^(lg_ceil-1) < n <= 2^lg_ceil
    delta = 1 << max(lg_quantum, lg_ceil - 3)
    return round_up(n, delta)


@dataclass(frozen=True)
class Jemalloc:
    """One jemalloc build: release line, quantum and cache-oblivious large pad."""

    name: str
    version: str          # "3.6" or "5"
    lg_quantum: int = 4   # 16-byte quantum on x86_64; Redis builds with 3
    large_pad: int = 0    # bytes added to every large extent (PAGE when cache-oblivious)

    # -- request -> class ------------------------------------------------------------
    def usize(self, n: int) -> int:
        """The size class of a request of ``n`` bytes (``nallocx(n, 0)``); 0 counts as 1."""
        n = max(n, 1)
        if self.version == "5":
            return _spaced(n, self.lg_quantum)
        if n <= SMALL_MAX_3_6:
            return _spaced(n, self.lg_quantum)
        if n <= LARGE_MAX_3_6:
            return round_up(n, PAGE)
        return round_up(n, CHUNK_3_6)

    def category(self, usize: int) -> str:
        if self.version == "5":
            return "small" if usize <= SMALL_MAX_5 else "large"
        if usize <= SMALL_MAX_3_6:
            return "small"
        return "large" if usize <= LARGE_MAX_3_6 else "huge"

    def slab(self, usize: int) -> tuple[int, int]:
        """``(bytes, regions)`` of one slab (5.x) or run (3.6) of a small class."""
        if self.version == "5":
            size = lcm(usize, PAGE)
            return size, size // usize
        return RUNS_3_6[usize]

    def extent(self, n: int) -> int:
        """Bytes of the mapping of a large allocation: its class plus the pad page (5.x)."""
        usize = self.usize(n)
        return usize + self.large_pad if self.category(usize) == "large" else usize

    taken = extent   # bytes one request takes, shared metadata apart

    def per_object(self, n: int) -> Fraction:
        """Bytes one object of ``n`` bytes takes with its share of slab/run and metadata."""
        usize = self.usize(n)
        if self.category(usize) == "small":
            size, nregs = self.slab(usize)
            return Fraction(size + (EDATA if self.version == "5" else 0), nregs)
        if self.version == "5":
            return Fraction(usize + self.large_pad + EDATA)
        return Fraction(usize)

    # -- many requests -----------------------------------------------------------------
    def footprint(self, requests: Mapping[int, int]) -> Footprint:
        """The cost of ``{request size: count}``, all live at once on a fresh arena.

        Objects of one class fill slabs (runs) in order, so ``count`` objects take
        ``ceil(count / nregs)`` of them; out-of-band metadata (5.x ``edata_t``) and
        3.6's chunk headers are overhead.  Thread caches, dirty pages and external
        fragmentation after frees are not modelled.
        """
        by_class: dict[int, int] = {}
        requested = 0
        for n, count in requests.items():
            if count:
                usize = self.usize(n)
                by_class[usize] = by_class.get(usize, 0) + count
                requested += n * count
        allocated = overhead = arena_bytes = 0
        for usize, count in by_class.items():
            allocated += usize * count
            category = self.category(usize)
            if category == "small":
                size, nregs = self.slab(usize)
                slabs = ceil_div(count, nregs)
                overhead += slabs * size - usize * count
                if self.version == "5":
                    overhead += slabs * EDATA
                arena_bytes += slabs * size
            elif self.version == "5":
                overhead += count * (self.large_pad + EDATA)
            elif category == "large":
                arena_bytes += usize * count
        if self.version == "3.6" and arena_bytes:
            # runs pack into 4 MiB chunks of 1018 usable pages, each with 6 header pages
            overhead += ceil_div(arena_bytes, LARGE_MAX_3_6) * MAP_BIAS_3_6 * PAGE
        return Footprint(requested, allocated, overhead)

    # -- the class list ----------------------------------------------------------------
    def size_classes(self, up_to: int) -> list[SizeClass]:
        """Every class from the smallest to the one that serves ``up_to`` bytes."""
        classes: list[SizeClass] = []
        low = 1
        while True:
            usize = self.usize(low)
            category = self.category(usize)
            if category == "small":
                size, nregs = self.slab(usize)
                unused = size - nregs * usize
            else:
                size, nregs, unused = self.extent(usize), 1, self.extent(usize) - usize
            classes.append(SizeClass(len(classes) + 1, usize, category, low, usize, nregs, size, unused))
            if usize >= up_to:
                return classes
            low = usize + 1


JEMALLOC_3_6 = Jemalloc("jemalloc-3.6", "3.6")
# Debian/Ubuntu's libjemalloc2 (5.3.0) and jemalloc's defaults: quantum 16, cache-oblivious.
JEMALLOC_5 = Jemalloc("jemalloc-5", "5", large_pad=PAGE)
# Redis 7.2+ bundles 5.3.0 built --with-lg-quantum=3 --disable-cache-oblivious.
JEMALLOC_5_REDIS = Jemalloc("jemalloc-5-redis", "5", lg_quantum=3)
# Redis 3.2 to 7.0: quantum 8 but still cache-oblivious (commit 07c14672 removed the pad).
JEMALLOC_5_REDIS_PAD = Jemalloc("jemalloc-5-redis-pad", "5", lg_quantum=3, large_pad=PAGE)
