"""The same items under memcached's slabs and under stores that malloc each object.

memcached's side is :func:`slabcalc.analysis.report.build_report`'s own figures; the
others come from :mod:`slabcalc.allocators`.  Every store holds exactly the
items memcached stores (those over ``-I`` are left out of every row):

- ``jemalloc 3.6`` / ``jemalloc 5`` / ``glibc``: each memcached item
  (``ntotal`` bytes) malloc'd on its own -- the allocator alone;
- Varnish ``-s malloc``: one object per item, the value as its body, a header
  workspace, and its structures outside the storage limit;
- Redis: one string key per item (``SET key value``), with its dicts;
- memcached under each other configuration asked for (``compare --vs``), right after memcached: the
  items that configuration stores (a smaller ``-I`` leaves more out of its row alone).

Per store: ``requested`` (bytes asked for the stored data; for Varnish what
``-s malloc,SIZE`` counts), ``allocated`` (what the allocator hands out for
them; for memcached the slab pages ``-m`` counts; for Redis what ``maxmemory``
counts), ``overhead`` (the rest of the memory these objects take: memcached's
hash table, allocator headers, pad pages, slab tails and metadata, Varnish's
per-object structures) and ``waste`` = the share of the total not holding
requested bytes.  All objects live at once on a fresh process: thread
caches, dirty pages and fragmentation after frees are not modelled.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from slabcalc.allocators import (
    ALLOCATORS,
    GLIBC,
    JEMALLOC_3_6,
    JEMALLOC_5,
    JEMALLOC_5_REDIS,
    JEMALLOC_5_REDIS_PAD,
    redis,
    varnish,
)
from slabcalc.analysis.placement import item_for_size, place_item
from slabcalc.analysis.process import hash_table_bytes
from slabcalc.analysis.report import Report, build_report
from slabcalc.model.classes import slab_classes
from slabcalc.model.distribution import Item
from slabcalc.model.item import SIZE_KEY_LENGTH, VALUE_MAX, ntotal_function
from slabcalc.model.placement import TOO_LARGE
from slabcalc.model.settings import Settings

MIB = 1 << 20

VARNISH_STORAGE_SHARE = (3, 4)   # Varnish's advice: give -s malloc 75 % of the host's memory
REDIS_RELEASES = {"7.2": JEMALLOC_5_REDIS, "7.0": JEMALLOC_5_REDIS_PAD}


@dataclass(frozen=True)
class Store:
    """One store's memory for the whole distribution."""

    name: str
    requested: int
    allocated: int
    overhead: int

    @property
    def total(self) -> int:
        return self.allocated + self.overhead

    @property
    def waste_pct(self) -> float:
        return 100.0 * (self.total - self.requested) / self.total if self.total else 0.0


@dataclass(frozen=True)
class CompareOptions:
    """How the other stores hold an item."""

    varnish: varnish.VarnishObject = field(default_factory=varnish.VarnishObject)
    varnish_allocator: str = "jemalloc-5"     # Varnish links the system jemalloc on Linux
    redis_release: str = "7.2"                # 7.2+: no pad; 3.2 to 7.0: the 4 KiB pad
    redis_ttl: bool = False
    size_key_length: int = SIZE_KEY_LENGTH                 # key of items known only by their size


@dataclass(frozen=True)
class Comparison:
    report: Report                 # memcached's own report of the distribution
    stores: tuple[Store, ...]      # memcached first
    items: int                     # items every store holds
    too_large: int                 # items memcached refuses (left out everywhere)
    data_bytes: int                # key + value bytes of the items
    varnish_counted: int           # what -s malloc,SIZE must hold
    varnish_total: int             # what Varnish's objects take in all


def stored_items(settings: Settings, distribution: Mapping[Item, int], size_key_length: int = SIZE_KEY_LENGTH
                 ) -> tuple[list[tuple[int, int, int, int]], int]:
    """``[(key, value, ntotal, count)]`` of the items memcached stores, and how many it refuses."""
    classes = slab_classes(settings)
    largest = min(classes[-1].chunk_size, settings.item_size_max)
    ntotal = ntotal_function(settings)
    stored, refused = [], 0
    for item, count in distribution.items():
        if item.item_size is None:
            key, value, flags = item.key, item.value, item.flags
            size = ntotal(key, value, flags) if value <= VALUE_MAX else None
        else:
            size, flags = item.item_size, 0
            key, value = item_for_size(settings, size, size_key_length)
        if size is None or (size > largest and
                            place_item(settings, classes, item, size_key_length).status == TOO_LARGE):
            refused += count
        elif count:
            stored.append((key, value, size, count))
    return stored, refused


def _aggregate(pairs: Mapping[Item, int] | Iterable[tuple]) -> dict[Item, int]:
    total: dict[Item, int] = {}
    for item, count, *_ in (pairs.items() if isinstance(pairs, Mapping) else pairs):
        total[item] = total.get(item, 0) + count
    return total


def _memcached(settings: Settings, distribution: Mapping[Item, int], size_key_length: int,
               name: str) -> tuple[Report, Store]:
    """memcached's report of ``distribution`` and its row: the slab pages -m counts, and the hash table."""
    report = build_report(settings, distribution, size_key_length=size_key_length)
    return report, Store(name, report.total("requested_bytes"), report.total("page_bytes"),
                         hash_table_bytes(report.items, settings.profile.bits // 8))


def compare(settings: Settings, distribution: Mapping[Item, int] | Iterable[tuple],
            options: CompareOptions = CompareOptions(), versus: Sequence[tuple[str, Settings]] = ()) -> Comparison:
    """Every store's memory for ``distribution`` (as :func:`build_report` takes it); ``versus``: ``(flags,
    settings)`` of other memcached configurations, each a row after memcached's, named by its flags."""
    distribution = _aggregate(distribution)
    report, memcached = _memcached(settings, distribution, options.size_key_length, settings.profile.label)
    stored, too_large = stored_items(settings, distribution, options.size_key_length)
    items = sum(count for *_, count in stored)

    mallocs: Counter = Counter()
    segments: Counter = Counter()
    outside: Counter = Counter()
    redis_requests: Counter = Counter()
    data = 0
    for key, value, size, count in stored:
        data += (key + value) * count
        mallocs[size] += count
        segs = options.varnish.segments(value)
        for seg in segs:
            segments[seg] += count
        for seg, n in options.varnish.outside(len(segs)).items():
            outside[seg] += n * count
        for request in redis.string_key(key, value, options.redis_ttl):
            redis_requests[request] += count
    if items:   # an empty dict allocates no bucket array
        redis_requests[redis.bucket_array(items)] += 1 + options.redis_ttl

    stores = [memcached] + [_memcached(other, distribution, options.size_key_length,
                                       f"{other.profile.label} {text}")[1] for text, other in versus]
    for name, allocator in (("jemalloc 3.6", JEMALLOC_3_6), ("jemalloc 5", JEMALLOC_5), ("glibc", GLIBC)):
        fp = allocator.footprint(mallocs)
        stores.append(Store(name, fp.requested, fp.allocated, fp.overhead))

    allocator = ALLOCATORS[options.varnish_allocator]
    whole = allocator.footprint(segments + outside)
    counted = sum(n * c for n, c in segments.items())
    handed = sum(allocator.usize(n) * c for n, c in segments.items())
    stores.append(Store(f"varnish -s malloc ({options.varnish_allocator})", counted, handed,
                        whole.total - handed + varnish.BINHEAP_SLOT * items))

    fp = REDIS_RELEASES[options.redis_release].footprint(redis_requests)
    stores.append(Store(f"redis {options.redis_release} strings", fp.requested, fp.allocated, fp.overhead))
    return Comparison(report, tuple(stores), items, too_large, data, counted, stores[-2].total)
