"""Item sizes and placement: memcached's own test-suite figures, and properties.

The figures come from memcached's ``t/*.t`` tests (cited per test); the
properties hold for any key, value and flags under any accepted configuration.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from slabcalc import configure, item_size, load_profile, place, slab_classes
from slabcalc.model.classes import class_by_size, class_for, classes_for


def test_issue_42_mem_requested_of_ten_small_items():
    # t/issue_42.t: ten items "key0".."key9" with 10-byte values; 1.4.x reports
    # 1:mem_requested 800 on 64-bit and 640 on 32-bit (80 and 64 bytes per item)
    for bits, expected in ((64, 800), (32, 640)):
        s = configure(load_profile("1.4.24", bits=bits))
        sizes = [place(s, len(f"key{i}"), 10).chunks[0] for i in range(10)]
        assert sum(c.requested for c in sizes) == expected
        assert {c.class_id for c in sizes} == {1}


def test_cas_bytes_are_the_eight_of_t_issue_42_and_none_with_minus_c():
    # t/issue_42.t's 80 bytes per item on 64-bit 1.4 hold 8 of CAS (memcached.h ITEM_ntotal);
    # -C takes them off; 1.2 keeps its CAS inside the header (56 bytes on 64-bit), so it adds nothing there
    s = configure(load_profile("1.4.24"))
    assert s.cas_bytes == 8 and item_size(s, 4, 10).total == 80
    no_cas = configure(load_profile("1.4.24"), ["-C"])
    assert no_cas.cas_bytes == 0 and item_size(no_cas, 4, 10).total == 72
    assert configure(load_profile("1.2.8")).cas_bytes == 0


def test_evictions_t_values_go_to_class_31():
    # t/evictions.t (1.4.2+): 66560-byte values are counted in items:31
    for release in ("1.4.24", "1.6.18", "1.6.45"):
        s = configure(load_profile(release), ["-m", "3"])
        assert place(s, len("key1"), 66560).lru_class.id == 31


def test_slabs_cas_t_values_go_to_class_31():
    # t/slabs-cas.t (1.6.24+): 70000-byte values are counted in items:31
    s = configure(load_profile("1.6.45"))
    assert place(s, len("key1"), 70000).lru_class.id == 31


def test_lru_t_values_fill_the_largest_class():
    # t/lru.t (1.4.x): 1048326-byte values land in the 1 MiB largest class, one per page,
    # and a value three times larger is too large for the cache
    s = configure(load_profile("1.4.24"))
    got = place(s, len("key100"), 1048326)
    assert got.lru_class.id == 42 and got.lru_class.chunk_size == 1048576 and got.lru_class.perslab == 1
    assert place(s, len("key100"), 3 * 1048326).status == "too_large"


def test_issue_29_empty_value_goes_to_class_1():
    # t/issue_29.t: a zero-length value is stored in class 1
    for release in ("1.4.24", "1.6.45"):
        assert place(configure(load_profile(release)), len("issue29"), 0).lru_class.id == 1


CONFIGS = [
    ("1.6.45", []), ("1.6.18", ["-C"]), ("1.6.45", ["-I", "4m", "-f", "1.1"]), ("1.6.18", ["-o", "slab_chunk_max=16384"]),
    ("1.6.45", ["-o", "slab_sizes=96-200-1024-4096"]), ("1.4.24", []), ("1.4.24", ["-I", "2m", "-n", "5", "-f", "1.05"]),
    ("1.6.45", ["-o", "no_modern"]), ("1.6.45", ["-f", "1.01"]),
]
SETTINGS = [(configure(load_profile(rel), args)) for rel, args in CONFIGS]


@hsettings(max_examples=400, deadline=None)
@given(st.sampled_from(range(len(SETTINGS))), st.integers(1, 250), st.integers(0, 4 << 20),
       st.sampled_from([0, 1, 9, 10, 99, 65535, 2**31 - 1, 2**31, 2**32 - 1]))
def test_placement_properties(which, key, value, flags):
    s = SETTINGS[which]
    classes = slab_classes(s)
    got = place(s, key, value, flags, classes)
    size = item_size(s, key, value, flags).total
    assert got.item_size == size
    if size > s.item_size_max:
        assert got.status == "too_large" and not got.chunks
        return
    if got.status == "stored":
        (chunk,) = got.chunks
        assert chunk.chunk_size >= size
        # the first class that fits: no earlier class holds it
        assert all(c.chunk_size < size for c in classes[:chunk.class_id - 1])
        assert got.waste == chunk.chunk_size - size >= 0
        # one more spare byte would not fit the same chunk
        assert item_size(s, key, value + got.spare_value_bytes, flags).total <= chunk.chunk_size
        assert item_size(s, key, value + got.spare_value_bytes + 1, flags).total > chunk.chunk_size
    else:
        assert got.status == "chunked" and size > classes[-1].chunk_size
        header = got.chunks[0]
        body = got.chunks[1:]
        # the value and its CRLF fit in the chunks' capacity (request size less the chunk header)
        assert sum(c.requested - s.profile.chunk_header for c in body) == value + 2
        assert all(c.requested <= c.chunk_size for c in got.chunks)
        assert all(c.chunk_size == classes[-1].chunk_size for c in body[:-1])
        assert class_for(classes, header.requested).id == header.class_id
        assert got.waste == got.memory - size > 0


@given(st.integers(1, 250), st.integers(0, 10**6))
def test_cas_costs_eight_bytes(key, value):
    on = configure(load_profile("1.6.45"))
    off = configure(load_profile("1.6.45"), ["-C"])
    assert item_size(on, key, value).total - item_size(off, key, value).total == 8


def test_text_suffix_prints_flags_signed_in_1_4_24():
    s = configure(load_profile("1.4.24"))
    # " -1 5\r\n" for 4294967295 (printed as a signed int), " 10 5\r\n" for 10
    assert item_size(s, 1, 5, 2**32 - 1).suffix == len(" -1 5\r\n")
    assert item_size(s, 1, 5, 2**31).suffix == len(" -2147483648 5\r\n")
    assert item_size(s, 1, 5, 10).suffix == len(" 10 5\r\n")


@hsettings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(SETTINGS))), st.integers(1, 250), st.integers(0, 4 << 20),
       st.sampled_from([0, 1, 10, 2**31, 2**32 - 1]))
def test_fast_ntotal_equals_the_breakdown(which, key, value, flags):
    from slabcalc.model.item import ntotal_function

    s = SETTINGS[which]
    assert ntotal_function(s)(key, value, flags) == item_size(s, key, value, flags).total


SUFFIX_CASES = [("1.2.8", []), ("1.4.24", []), ("1.4.27", []), ("1.4.39", []), ("1.6.18", []),
                ("1.6.18", ["-C"]), ("1.4.35", ["-o", "modern"])]


def test_suffix_cases_cover_every_rule():
    rules = {configure(load_profile(release), args).suffix_rule for release, args in SUFFIX_CASES}
    assert rules == {"text_signed", "text_unsigned", "binary", "binary_always"}


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 250),
                          st.one_of(st.integers(0, (1 << 31) - 3), st.sampled_from([0, 9, 10, 99, 100, 999999, 10 ** 9])),
                          st.one_of(st.integers(0, 0xFFFFFFFF),
                                    st.sampled_from([0, 1, 9, 10, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]))),
                min_size=1, max_size=40))
def test_ntotal_array_equals_item_size(rows):
    import numpy as np

    from slabcalc.model.item import ntotal_array

    key, value, flags = (np.array(column, dtype=np.int64) for column in zip(*rows))
    for release, args in SUFFIX_CASES:
        s = configure(load_profile(release), args)
        expected = [item_size(s, k, v, f).total for k, v, f in rows]
        assert ntotal_array(s, key, value, flags).tolist() == expected, (release, args)


@given(st.lists(st.integers(1, 1_200_000), max_size=60), st.sampled_from([[], ["-f", "1.01"], ["-n", "900", "-f", "2"],
                                                                        ["-o", "slab_sizes=96-200-300-9000"]]))
def test_classes_for_walks_to_the_class_for_each_size(sizes, args):
    # the walk over ascending sizes gives slabs_clsid()'s class (class_for), or the largest class above
    # every chunk, as placement does -- duplicate chunk sizes (tiny factors) included
    classes = slab_classes(configure(load_profile("1.6.18"), args))
    sizes = sorted(sizes + [c.chunk_size + d for c in classes for d in (-1, 0, 1)])   # every edge
    assert classes_for(classes, sizes) == [class_for(classes, s) or classes[-1] for s in sizes]


@pytest.mark.parametrize("release, args", [("1.6.18", []), ("1.6.18", ["-f", "1.01"]), ("1.6.18", ["-n", "900", "-f", "2"]),
                                           ("1.6.18", ["-o", "slab_sizes=96-200-300-9000"]), ("1.4.31", ["-I", "2m"])])
def test_the_class_by_size_table_is_class_for(release, args):
    # the replay engine's table of every size's class (engines/engine.py's sets) is slabs_clsid()'s
    # class_for at every chunk's edges and at random sizes, to its limit (cut below the largest chunk
    # or not); equal chunk sizes (-f 1.01) go to the first of them, as class_for's bisection does
    classes = slab_classes(configure(load_profile(release), args))
    rng = random.Random(7)
    for limit in (classes[-1].chunk_size, min(classes[-1].chunk_size, 5_000)):
        table = class_by_size(classes, limit)
        assert len(table) == limit + 1
        sizes = [s for c in classes for s in (c.chunk_size - 1, c.chunk_size, c.chunk_size + 1) if 0 <= s <= limit]
        sizes += [0, 1, limit] + [rng.randrange(limit + 1) for _ in range(2_000)]
        assert [table[s] for s in sizes] == [class_for(classes, s).id for s in sizes], (release, args, limit)
