"""One home for each rule (issue 40): the fast copies held to the one they copy.

* ``slabs_clsid``: :func:`slabs_clsid` against memcached's own walk (slabs.c 90-99 at 1.6.18, 77-86
  at 1.6.45: 0 for 0 or above -I, the largest class above every chunk), written out here; the numpy
  :func:`home_indexes` against :func:`home_class`; extstore's ``min_class`` is it;
* ``ITEM_ntotal``: the breakdown (:func:`item_size`), the compiled sum (:class:`Ntotal`) and the
  numpy sum (:func:`ntotal_array`) equal; its inverse (``item_for_size``) gives the lengths back;
* a class's first page: :func:`page_granted` against the replay engine's ``Slabs.newslab``;
* a class's used/waste/free bytes: one :class:`ClassBytes` for a distribution and a server's stats.
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from helpers import settings as configured_as

from slabcalc.analysis.extstore import min_flush_class
from slabcalc.analysis.placement import ClassUsage, item_for_size
from slabcalc.analysis.stats import ClassStats
from slabcalc.engines.slabs import Slabs
from slabcalc.model.capacity import page_granted
from slabcalc.model.classes import SlabClass, home_class, home_indexes, slab_classes, slabs_clsid
from slabcalc.model.item import SIZE_KEY_LENGTH, item_size, ntotal_array, size_key
from slabcalc.model.ntotal import Ntotal

RELEASES = ["1.4.20", "1.4.39", "1.5.22", "1.6.18", "1.6.45"]
FLAGS = [[], ["-C"], ["-n", "150", "-f", "1.15"], ["-o", "slab_chunk_max=128"], ["-I", "2m"]]


def memcached_clsid(chunk_sizes: list[int], item_size_max: int, size: int) -> int:
    """slabs.c's walk, as memcached writes it: ``res`` from POWER_SMALLEST (1) up while the size is
    above the class's chunk, the largest class when it runs past it."""
    if size == 0 or size > item_size_max:
        return 0
    res, largest = 1, len(chunk_sizes)
    while size > chunk_sizes[res - 1]:
        if res == largest:
            return largest
        res += 1
    return res


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("args", FLAGS, ids=" ".join)
def test_slabs_clsid_walks_as_memcached(release, args):
    if release == "1.4.20" and "-o" in args:
        pytest.skip("no slab_chunk_max before 1.4.27")
    settings = configured_as(*args, release=release)
    classes = slab_classes(settings)
    chunk_sizes = [c.chunk_size for c in classes]
    rng = random.Random(f"{release}{args}")
    edges = [0, 1, settings.item_size_max, settings.item_size_max + 1, chunk_sizes[-1], chunk_sizes[-1] + 1]
    edges += [c + d for c in chunk_sizes for d in (-1, 0, 1)]
    sizes = edges + [rng.randrange(1, settings.item_size_max * 2) for _ in range(500)]
    for size in sizes:
        assert slabs_clsid(settings, classes, size) == memcached_clsid(chunk_sizes, settings.item_size_max, size), size
    found = home_indexes(np.array(chunk_sizes, dtype=np.int64), np.array(sizes, dtype=np.int64))
    assert [classes[i] for i in found.tolist()] == [home_class(classes, s) for s in sizes]


def test_ext_item_size_above_every_chunk_is_the_largest_class():
    """-I 1m, slab_chunk_max 512 KiB (1.6's default, -I / 2): an ext_item_size between the two is the
    largest class (flushed from it only), one above -I is 0 (every class), 0 is 0."""
    settings = configured_as("-o", "ext_path=/tmp/x:64m", release="1.6.18")
    classes = slab_classes(settings)
    largest = classes[-1]
    assert largest.chunk_size == 512 * 1024 and settings.item_size_max == 1024 * 1024
    for size, expected in [(largest.chunk_size + 1, largest.id), (settings.item_size_max, largest.id),
                           (settings.item_size_max + 1, 0), (0, 0), (512, memcached_clsid(
                               [c.chunk_size for c in classes], settings.item_size_max, 512))]:
        ext = replace(settings.extstore, item_size=size)
        assert min_flush_class(settings, ext, classes) == expected, size


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("args", [[], ["-C"]], ids=" ".join)
def test_ntotal_three_ways_and_its_inverse(release, args):
    settings = configured_as(*args, release=release)
    rng = random.Random(release + " ".join(args))
    keys = [rng.randrange(1, 251) for _ in range(300)]
    values = [rng.choice([0, 1, 9, 10, 99, 100, 9999, rng.randrange(0, 1 << 21)]) for _ in range(300)]
    flags = [rng.choice([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, rng.randrange(1 << 32)]) for _ in range(300)]
    sums = [item_size(settings, k, v, f).total for k, v, f in zip(keys, values, flags)]
    compiled = Ntotal(settings)
    assert [compiled.of(k, v, f) for k, v, f in zip(keys, values, flags)] == sums
    arrays = [np.array(x, dtype=np.int64) for x in (keys, values, flags)]
    assert ntotal_array(settings, *arrays).tolist() == sums
    for k, v in zip(keys, values):          # flags 0: what item_for_size assumes
        assert item_for_size(settings, item_size(settings, k, v).total, k) == (k, v)


def test_first_page_rule_is_the_engines():
    """Random page requests against a small -m: the engine's ``newslab`` grants exactly what
    :func:`page_granted` says (a class's first page past the limit, no later one)."""
    sizes, perslab, page_len = [0, 96, 1024, 8192], [0, 10, 4, 2], [0, 960, 4096, 16384]
    rng = random.Random(40)
    for limit in (0, 5000, 20000, 40000):
        slabs = Slabs(list(sizes), list(perslab), list(page_len), limit)
        granted = 0
        for _ in range(60):
            cls = rng.randrange(1, 4)
            expected = page_granted(limit, slabs.malloced, page_len[cls], len(slabs.pages[cls]), len(slabs.pool))
            assert slabs.newslab(cls) == expected
            granted += expected
        assert granted >= 3 and (limit == 0) == (granted == 60)     # every first page; all without -m


def test_class_bytes_one_rule_for_both_views():
    """10 chunks a page, 25 in use of 96 bytes, 2000 bytes requested, 1 MiB pages: 3 pages."""
    usage = ClassUsage(SlabClass(1, 96, 10), 1 << 20, items=25, chunks=25, requested_bytes=2000)
    stats = ClassStats("n", 1, 96, 10, 3, 25, 5, 1 << 20, 2000, 25, 0, 0)
    for view in (usage, stats):
        assert (view.pages, view.used_bytes, view.chunk_waste) == (3, 2400, 400)
        assert (view.page_bytes, view.free_bytes) == (3 << 20, (3 << 20) - 2400)
    unknown = ClassStats("n", 1, 96, 10, 3, 25, 5, 1 << 20, None, 25, 0, 0)
    assert unknown.chunk_waste is None


def test_default_key_length():
    assert SIZE_KEY_LENGTH == 16 and size_key(None) == 16 and size_key(0) == 16 and size_key(40) == 40
