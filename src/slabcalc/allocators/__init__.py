"""General-purpose allocators beside memcached's slabs: data plus small pure functions.

A cache that calls ``malloc(exact_size)`` per object (Varnish ``-s malloc``,
Redis) pays the allocator's size-class rounding and metadata instead of
memcached's chunk and page waste.  One module per allocator or store:

- :mod:`.jemalloc`: jemalloc 3.6 and 5.x (default build, and Redis's build
  with quantum 8 and no cache-oblivious pad);
- :mod:`.glibc`: glibc malloc (ptmalloc2), 64-bit;
- :mod:`.varnish`: the mallocs of one object in Varnish's ``-s malloc``;
- :mod:`.redis`: the mallocs of one Redis string key.

Facts and sources: ``research/allocators.md`` (jemalloc 3.6.0 / 5.3.0,
glibc 2.36, Varnish 7.6, Redis 7.2 source).  x86_64, 4 KiB pages.
"""

from __future__ import annotations

from slabcalc.allocators.base import Footprint, SizeClass
from slabcalc.allocators.glibc import GLIBC, Glibc
from slabcalc.allocators.jemalloc import JEMALLOC_3_6, JEMALLOC_5, JEMALLOC_5_REDIS, JEMALLOC_5_REDIS_PAD, Jemalloc

ALLOCATORS = {
    "jemalloc-3.6": JEMALLOC_3_6,
    "jemalloc-5": JEMALLOC_5,
    "jemalloc-5-redis": JEMALLOC_5_REDIS,
    "glibc": GLIBC,
}

__all__ = ["ALLOCATORS", "Footprint", "GLIBC", "Glibc", "JEMALLOC_3_6", "JEMALLOC_5", "JEMALLOC_5_REDIS",
           "JEMALLOC_5_REDIS_PAD", "Jemalloc", "SizeClass"]
