"""The models against the real allocators: Debian's libjemalloc2 (5.3.0) and the system glibc.

Every request size from 1 to 70 000 and a seeded random sample up to 1 GiB
(jemalloc: nallocx() allocates nothing) or 256 MiB (glibc: mapped, untouched
and freed at once).  Without libjemalloc the jemalloc tests skip locally and
FAIL under CI (``.ci/run`` installs it).  jemalloc 3.6 and the Redis build
have no library here: test_allocators.py checks them against the research's
class lists and examples.
"""

from __future__ import annotations

import random
import sys

import pytest
from allocator_oracles import ask_glibc, ask_jemalloc, require_jemalloc

from slabcalc.allocators import GLIBC, JEMALLOC_5, Glibc
from slabcalc.allocators.glibc import MMAP_THRESHOLD

EXHAUSTIVE = list(range(1, 70001))
JE_SAMPLE = sorted(random.Random(8).randrange(70001, (1 << 30) + 1) for _ in range(40000))
GLIBC_SAMPLE = sorted(random.Random(8).randrange(70001, (256 << 20) + 1) for _ in range(3000))
LARGE = [16384, 16385, 20480, 100000, 131072, 1 << 20, 5 << 20]

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and Debian's jemalloc")


@pytest.fixture(scope="module")
def jemalloc():
    return ask_jemalloc(require_jemalloc(), EXHAUSTIVE + JE_SAMPLE, LARGE)


@linux_only
def test_debian_jemalloc_build_is_the_modelled_one(jemalloc):
    """Debian's libjemalloc2: 5.3.0, quantum 16, 4 KiB pages, cache-oblivious (the 4 KiB pad)."""
    assert jemalloc["version"].startswith("5.")
    assert jemalloc["quantum"] == 1 << JEMALLOC_5.lg_quantum
    assert jemalloc["page"] == 4096
    assert jemalloc["cache_oblivious"] is True and JEMALLOC_5.large_pad == 4096


@linux_only
def test_nallocx_every_size(jemalloc):
    sizes = EXHAUSTIVE + JE_SAMPLE
    wrong = [(n, real, JEMALLOC_5.usize(n)) for n, real in zip(sizes, jemalloc["nallocx"])
             if real != JEMALLOC_5.usize(n)]
    assert not wrong, f"{len(wrong)} sizes differ, first: {wrong[:5]}"


@linux_only
def test_bins_are_the_small_classes(jemalloc):
    """arenas.bin.<i>.size / slab_size / nregs against the model's slabs."""
    model = [(c.size, c.page_length, c.perslab) for c in JEMALLOC_5.size_classes(14336)]
    assert [tuple(b) for b in jemalloc["bins"]] == model


@linux_only
def test_large_allocation_takes_its_class_plus_a_page(jemalloc):
    """stats.active grows by usize + 4096 per large allocation (tcache off)."""
    assert jemalloc["active"] == [JEMALLOC_5.extent(n) for n in LARGE]


@linux_only
def test_glibc_every_size():
    sizes = [0] + EXHAUSTIVE + GLIBC_SAMPLE
    real = ask_glibc(sizes, MMAP_THRESHOLD)
    model = [(GLIBC.chunk(n), GLIBC.mmapped(n), GLIBC.usable(n)) for n in sizes]
    wrong = [(n, r, m) for n, r, m in zip(sizes, real, model) if r != m]
    assert not wrong, f"{len(wrong)} sizes differ, first: {wrong[:5]}"
    assert sum(m for _, m, _ in real) > 2000     # the mmap rule was exercised


@linux_only
def test_glibc_dynamic_mmap_threshold():
    """Freeing an mmapped chunk raises the threshold to its size: the same request then
    comes from the heap (§4)."""
    first, second = ask_glibc([200000, 200000], None)
    assert first == (GLIBC.chunk(200000), True, GLIBC.usable(200000)) == (200704, True, 200688)
    raised = Glibc(mmap_threshold=first[0])
    assert second == (raised.chunk(200000), False, raised.usable(200000)) == (200016, False, 200008)
