"""``optimize`` against a real memcached: the recommended flags use the pages predicted.

A distribution (two small item sizes the default classes fit badly, and a few
chunked items) is optimised for the server's own release; a server is then
started with the default flags and with each space's winning flags exactly as
printed, the items are set, and ``stats slabs`` ``total_pages`` per class must
equal the prediction -- fewer pages than the defaults where predicted.

Without a server these tests skip locally and FAIL under CI.
"""

from __future__ import annotations

import shlex

from memcached_server import MemcachedServer, run_vv

from slabcalc import configure, vv_lines
from slabcalc.analysis.optimize import optimize
from slabcalc.inputs.items import Item

ITEMS = [(10, 28, 30_000), (10, 84, 15_000), (12, 700_000, 6)]   # key, value, count


def served_pages(memcached, args) -> dict[int, int]:
    """Pages per class once ITEMS are stored: sent pipelined with noreply, a megabyte at a time (one
    connection's commands run in order, so the stats after them see them all), every set stored."""
    with MemcachedServer(args, memcached=memcached) as server:
        for n, (key, value, count) in enumerate(ITEMS):
            server.set_many((f"{n}{i:09d}" + "k" * (key - 10) for i in range(count)), b"v" * value)
        assert int(server.stats()["total_items"]) == sum(count for _, _, count in ITEMS)
        per_class, _ = server.slab_stats()
    return {cls: s["total_pages"] for cls, s in per_class.items() if s.get("total_pages")}


def test_recommended_flags_use_the_predicted_pages(memcached, profile):
    settings = configure(profile, ["-m", "64"])
    found = optimize(settings, [(Item(k, v, 0, None), n) for k, v, n in ITEMS])
    default_pages = served_pages(memcached, ["-m", "64"])
    assert default_pages == {c.slab_class.id: c.pages for c in found.baseline.report.classes}
    checked = set()
    for candidate in found.candidates:
        if candidate.space in checked:
            continue
        checked.add(candidate.space)
        pages = served_pages(memcached, ["-m", "64", *shlex.split(candidate.flags)])
        assert pages == {c.slab_class.id: c.pages for c in candidate.report.classes}, candidate.flags
        if candidate.page_bytes < found.baseline.page_bytes:
            assert sum(pages.values()) < sum(default_pages.values())
    assert checked == {"n_f", "slab_sizes", "slab_chunk_max"}
    assert found.first_of("slab_sizes").page_bytes < found.baseline.page_bytes


def test_classes_one_alignment_step_apart(memcached, profile):
    """The listed numbers are checked before they are rounded up: 343-352 makes 344 and 352."""
    from slabcalc.analysis.optimize import best_slab_sizes, chunk_requests

    settings = configure(profile, [])
    # two item sizes 8 bytes apart, each filling whole pages of its own class
    requests = chunk_requests(settings, {Item(10, 275, 0, None): 3048 * 4, Item(10, 283, 0, None): 2978 * 4})
    answer = best_slab_sizes(settings, requests, 2)
    assert answer.chunk_sizes == (344, 352) and answer.listed == (343, 352)
    args = ["-o", "slab_sizes=" + "-".join(map(str, answer.listed))]
    result = run_vv(args, memcached=memcached)
    assert result.class_lines == vv_lines(configure(profile, args))
    assert result.class_lines[:2] == [profile.vv_format % (1, 344, 3048), profile.vv_format % (2, 352, 2978)]
