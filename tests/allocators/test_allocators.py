"""The allocator models against every worked example of research/allocators.md.

Each figure below is quoted from the research notes (§0 quick reference, the
§1 class lists and slab tables read from real 3.6.0 / 5.3.0 builds, the §2.3
Varnish and §3.3 Redis worked examples, §4's glibc 2.36 measurements and §5's
golden values), never produced by the code under test.  The real Debian
jemalloc and glibc are checked in test_allocator_oracles.py.
"""

from __future__ import annotations

from collections import Counter

import pytest

from slabcalc.allocators import (
    GLIBC,
    JEMALLOC_3_6,
    JEMALLOC_5,
    JEMALLOC_5_REDIS,
    JEMALLOC_5_REDIS_PAD,
    Glibc,
    redis,
    varnish,
)
from slabcalc.allocators.jemalloc import LARGE_MAX_3_6, RUNS_3_6

# §0: request -> 3.6 usize, 3.6 footprint, 5.x usize, 5.x footprint, Redis build usize,
# glibc chunk, glibc usable
QUICK_REFERENCE = [
    (90, 96, "97.5", 96, 97, 96, 112, 104),
    (100, 112, "113.8", 112, 112.5, 112, 112, 104),
    (1000, 1024, "1040.3", 1024, 1056, 1024, 1008, 1000),
    (4097, 8192, "8192.0", 5120, 5152, 5120, 4112, 4104),
    (100000, 102400, "102400.0", 114688, 118784, 114688, 100016, 100008),
]


@pytest.mark.parametrize("n,u36,f36,u5,f5,ured,chunk,usable", QUICK_REFERENCE)
def test_quick_reference(n, u36, f36, u5, f5, ured, chunk, usable):
    assert JEMALLOC_3_6.usize(n) == u36
    assert f"{float(JEMALLOC_3_6.per_object(n)):.1f}" == f36
    assert JEMALLOC_5.usize(n) == u5
    if JEMALLOC_5.category(u5) == "small":       # small: usize + 128 B edata_t / nregs
        assert JEMALLOC_5.per_object(n) == f5
    else:                                         # large: usize + the 4 KiB pad page
        assert JEMALLOC_5.extent(n) == f5
        assert JEMALLOC_5.per_object(n) == f5 + 128   # footnote 2: plus the edata_t
    assert JEMALLOC_5_REDIS.usize(n) == ured
    assert JEMALLOC_5_REDIS.extent(n) == ured      # no pad in Redis's build
    assert GLIBC.chunk(n) == chunk and GLIBC.usable(n) == usable


def test_quick_reference_glibc_mmapped():
    """§0 footnote 3: 100000 served by mmap is round_up(100016 + 8, 4096) = 102400."""
    assert Glibc(mmap_threshold=64 << 10).chunk(100000) == 102400


# §5 golden values
@pytest.mark.parametrize("n,usize", [(90, 96), (100, 112), (1000, 1024), (4097, 5120), (14337, 16384),
                                     (16385, 20480), (100000, 114688), (4194305, 5242880)])
def test_jemalloc5_golden(n, usize):
    assert JEMALLOC_5.usize(n) == usize


@pytest.mark.parametrize("n,usize", [(3585, 4096), (4097, 8192), (4169729, 4194304), (4194305, 8388608),
                                     (LARGE_MAX_3_6, 4169728)])
def test_jemalloc36_golden(n, usize):
    assert JEMALLOC_3_6.usize(n) == usize


@pytest.mark.parametrize("n,usize", [(20, 24), (44, 48), (65, 80)])
def test_quantum8_golden(n, usize):
    assert JEMALLOC_5_REDIS.usize(n) == usize


@pytest.mark.parametrize("n,chunk", [(0, 32), (1, 32), (24, 32), (25, 48), (90, 112), (100, 112), (1000, 1008),
                                     (4097, 4112), (100000, 100016)])
def test_glibc_golden(n, chunk):
    assert GLIBC.chunk(n) == chunk and not GLIBC.mmapped(n)


def test_glibc_mmapped_200000():
    """§4: 200000 is an mmapped chunk of 200704 = ALIGN_UP(200016 + 8, 4096)."""
    assert GLIBC.mmapped(200000) and GLIBC.chunk(200000) == 200704


# §1.1: the 28 small classes of 3.6 (arenas.bin.<i>.size) and the first large ones
SMALL_3_6 = [8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896,
             1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584]
LARGE_3_6 = [4096, 8192, 12288, 16384, 20480, 24576, 28672, 32768, 36864, 40960, 45056, 49152]


def test_jemalloc36_class_list():
    classes = JEMALLOC_3_6.size_classes(49152)
    assert [c.size for c in classes] == SMALL_3_6 + LARGE_3_6
    assert [c.category for c in classes] == ["small"] * 28 + ["large"] * 12
    assert sorted(RUNS_3_6) == SMALL_3_6


def test_jemalloc36_categories():
    """Manual table: large up to 4072 KiB, then 4 MiB chunk multiples."""
    assert LARGE_MAX_3_6 == 4072 << 10
    assert JEMALLOC_3_6.category(4169728) == "large"
    assert [c.size for c in JEMALLOC_3_6.size_classes(12 << 20)][-3:] == [4 << 20, 8 << 20, 12 << 20]


# §1.1 run table: class -> bytes per object as the research rounds it
RUN_BYTES_PER_OBJECT_3_6 = {8: "8.18", 16: "16.25", 32: "32.51", 96: "97.52", 192: "195.05", 1024: "1040.25",
                            1792: "1832.42", 3584: "3675.90"}


@pytest.mark.parametrize("size,per_object", RUN_BYTES_PER_OBJECT_3_6.items())
def test_jemalloc36_run_share(size, per_object):
    assert f"{float(JEMALLOC_3_6.per_object(size)):.2f}" == per_object


# §1.3: the first 48 classes of 5.x (36 arenas.bin.* + arenas.lextent.*)
SMALL_5 = [8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
           1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336]
LARGE_5 = [16384, 20480, 24576, 28672, 32768, 40960, 49152, 57344, 65536, 81920, 98304, 114688, 131072,
           163840]


def test_jemalloc5_class_list():
    classes = JEMALLOC_5.size_classes(163840)
    assert [c.size for c in classes] == SMALL_5 + LARGE_5
    assert sum(c.category == "small" for c in classes) == 36


def test_quantum8_class_list():
    assert [c.size for c in JEMALLOC_5_REDIS.size_classes(160)] == [8, 16, 24, 32, 40, 48, 56, 64, 80, 96,
                                                                     112, 128, 160]


# §1.3 slab table: class, slab bytes, nregs, bytes per object with the edata_t
SLABS_5 = [(8, 4096, 512, 8.25), (16, 4096, 256, 16.5), (32, 4096, 128, 33), (48, 12288, 256, 48.5),
           (64, 4096, 64, 66), (80, 20480, 256, 80.5), (96, 12288, 128, 97), (112, 28672, 256, 112.5),
           (128, 4096, 32, 132), (160, 20480, 128, 161), (192, 12288, 64, 194), (224, 28672, 128, 225),
           (256, 4096, 16, 264), (320, 20480, 64, 322), (384, 12288, 32, 388), (448, 28672, 64, 450),
           (512, 4096, 8, 528), (640, 20480, 32, 644), (768, 12288, 16, 776), (896, 28672, 32, 900),
           (1024, 4096, 4, 1056), (1280, 20480, 16, 1288), (1536, 12288, 8, 1552), (1792, 28672, 16, 1800),
           (2048, 4096, 2, 2112), (2560, 20480, 8, 2576), (3072, 12288, 4, 3104), (3584, 28672, 8, 3600),
           (4096, 4096, 1, 4224), (5120, 20480, 4, 5152), (6144, 12288, 2, 6208), (7168, 28672, 4, 7200),
           (8192, 8192, 1, 8320), (10240, 20480, 2, 10304), (12288, 12288, 1, 12416),
           (14336, 28672, 2, 14400)]


@pytest.mark.parametrize("size,slab,nregs,per_object", SLABS_5)
def test_jemalloc5_slabs(size, slab, nregs, per_object):
    assert JEMALLOC_5.slab(size) == (slab, nregs)
    assert JEMALLOC_5.per_object(size) == per_object


@pytest.mark.parametrize("n,active", [(16384, 20480), (20480, 24576), (100000, 118784), (131072, 135168)])
def test_jemalloc5_large_pad(n, active):
    """§1.3: measured stats.active per large allocation (cache-oblivious pad page)."""
    assert JEMALLOC_5.extent(n) == active


# §2.3: Varnish worked examples, H = 400 (object header segment 528), Content-Length known
VARNISH = [  # body, counted, jemalloc 5 total, jemalloc 3.6 total, glibc total
    (90, 618, 1320, 1320, 1240),
    (100, 628, 1336, 1336, 1240),
    (1000, 1528, 2248, 2248, 2136),
    (4097, 4625, 6344, 9416, 5240),
    (100000, 100528, 120008, 103624, 101144),
]


@pytest.mark.parametrize("body,counted,je5,je36,glibc", VARNISH)
def test_varnish_worked_examples(body, counted, je5, je36, glibc):
    obj = varnish.VarnishObject(header_bytes=400)
    assert obj.segments(body)[0] == 528
    for allocator, total in ((JEMALLOC_5, je5), (JEMALLOC_3_6, je36), (GLIBC, glibc)):
        assert varnish.object_bytes(obj, body, allocator.taken) == (counted, total)


def test_varnish_outside_structs():
    """§2.2 B: 192 + 112 + 80 + 32 + 8 = 424 per object, plus 80 per segment (jemalloc 5)."""
    outside = varnish.VarnishObject().outside(2)
    assert sum(JEMALLOC_5.taken(s) * c for s, c in outside.items()) + varnish.BINHEAP_SLOT == 424 + 2 * 80


@pytest.mark.parametrize("body,segments", [
    (40000, [16384, 16384, 7232]),     # 9152 unused in the last one: trimmed to its length
    (32700, [16384, 16384]),           # 68 unused (< 512): kept at 16384
    (16384, [16384]),
    (100, [100]),
])
def test_varnish_chunked_segments(body, segments):
    """§2.2 A.2: unknown length -> fetch_chunksize segments, the last trimmed if >= 512 B unused."""
    assert varnish.VarnishObject(chunked=True).segments(body)[1:] == segments


def test_varnish_chunked_segment_costs_20k():
    """§2.3: with jemalloc >= 4 defaults each 16 KiB chunked segment costs 20 KiB."""
    assert JEMALLOC_5.taken(varnish.FETCH_CHUNKSIZE) == 20 << 10


# §3.3: Redis, key of 10 bytes, no TTL, bucket share excluded
REDIS = [(90, 152, 152), (100, 168, 168), (1000, 1080, 1080), (4097, 5176, 5176), (100000, 114744, 118840)]


@pytest.mark.parametrize("value,real72,real70", REDIS)
def test_redis_worked_examples(value, real72, real70):
    requests = redis.string_key(10, value)
    assert sum(JEMALLOC_5_REDIS.taken(n) for n in requests) == real72
    assert sum(JEMALLOC_5_REDIS_PAD.taken(n) for n in requests) == real70


@pytest.mark.parametrize("length,alloc", [(90, 94), (100, 104), (1000, 1006), (4097, 4103), (100000, 100010),
                                          (10, 12)])
def test_redis_sds_allocations(length, alloc):
    assert redis.sds_alloc(length) == alloc


def test_redis_embstr():
    """§3.2: a 20-byte value is one EMBSTR allocation of 16 + 3 + 20 + 1 = 40 (memprofiler: 16 + 24)."""
    assert redis.string_key(10, 20) == [24, 12, 40]
    assert JEMALLOC_5_REDIS.taken(40) == 40


def test_footprint_counts_slabs():
    """Objects of one class fill slabs in order: 129 objects of 96 bytes take two 12 KiB slabs."""
    fp = JEMALLOC_5.footprint(Counter({90: 129}))
    assert (fp.requested, fp.allocated, fp.overhead) == (90 * 129, 96 * 129, 2 * 12288 - 96 * 129 + 2 * 128)
