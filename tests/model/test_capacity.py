"""Capacity under ``-m`` with chunked items: ``report``/``place`` and the ``simulate`` engine agree.

Capacity is the number of items of a mix stored before the first set that
evicts (or fails).  ``slabcalc.model.capacity`` counts it item by item for mixes with
chunked items; the replay engine allocates real chunks with its own code.  For
single sizes and small mixes over several releases and flag sets, both must
give the same count and name the same class.  (``test_report_fidelity`` holds
both to a real server.)
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from helpers import o_words, settings as configured_as

from slabcalc.analysis.report import build_report
from slabcalc.engines.simulate import SET, simulate
from slabcalc.inputs.items import Item
from slabcalc.model.placement import STORED, place
from slabcalc.model.settings import Refused

FLAG_SETS = [[], ["-C"], ["-n", "150", "-f", "1.15"], ["-f", "1.5"], ["-I", "2m"],
             ["-o", "slab_chunk_max=128"], ["-o", "slab_chunk_max=131072"], ["-o", "no_modern"]]


def replay(settings, args, kinds, n):
    """The first ``n`` items of the mix, each kind's i-th item (from 0) at (2i + 1) / (2 count) of the
    way (ties: smaller first).  Items of one chunk are a kind a class (the allocator cannot tell them
    apart): a class's items are its sizes' items one after another."""
    kinds = sorted(kinds, key=lambda kind: kind[0][1])  # by value: the keys here are too short to reorder
    groups: dict[object, list] = {}
    for (key, value, flags), count in kinds:
        placed = place(settings, key, value, flags)
        home = placed.chunks[0].class_id if placed.status == STORED else ("chunked", key, value, flags)
        groups.setdefault(home, []).extend([(key, value, flags)] * count)
    members = list(groups.values())
    ranked = sorted((Fraction(2 * i + 1, 2 * len(items)), j) for j, items in enumerate(members)
                    for i in range(len(items)))
    taken = [0] * len(members)
    ops = []
    for serial, (_, j) in enumerate(ranked[:n]):
        key, value, flags = members[j][taken[j]]
        taken[j] += 1
        name = f"{serial:07d}{'k' * (key - 7)}"
        ops.append((0, SET, name, key, value, 0, flags))
    return simulate(settings, ops, suboptions=o_words(args))


def trouble(sim):
    """(items that could not be stored without evicting, the class that evicted first)."""
    evicting = [r.slab_class.id for r in sim.classes if r.evicted]
    return sim.totals.evicted + sim.totals.chunk_failures + sim.totals.outofmemory, evicting


def configured(release, args):
    """The settings, or None where the release refuses the flags (e.g. slab_chunk_max's unit)."""
    try:
        return configured_as(*args, release=release)
    except Refused:
        return None


def check(release, args, kinds):
    settings = configured(release, args)
    if settings is None:
        return None
    distribution = {Item(k, v, f, None): count for (k, v, f), count in kinds}
    report = build_report(settings, distribution, capacity=True)   # every case gives -m
    capacity = report.capacity
    assert capacity.items < sum(c for _, c in kinds), "the mix must overflow -m for the test to mean anything"
    full = replay(settings, args, kinds, capacity.items)
    assert trouble(full) == (0, []), (release, args, kinds)
    over = replay(settings, args, kinds, capacity.items + 1)
    failures, evicting = trouble(over)
    assert failures >= 1, (release, args, kinds)
    if evicting:
        assert evicting == [capacity.limiting_class], (release, args, kinds)
    return capacity


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
@pytest.mark.parametrize("release", ["1.6.18", "1.6.45", "1.5.22"])
def test_single_chunked_sizes_agree_with_the_engine(release):
    rng = random.Random(release)
    checked = 0
    for args in FLAG_SETS:
        for _ in range(6):
            key = rng.randint(7, 250)
            value = rng.randint(530_000, 1_040_000)
            flags = rng.choice((0, 5, 4294967295))
            megabytes = rng.randint(4, 24)
            checked += check(release, ["-m", str(megabytes), *args], [((key, value, flags), 200)]) is not None
    assert checked >= 30


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_mixes_with_chunked_items_agree_with_the_engine(release):
    rng = random.Random(7)
    for args in FLAG_SETS[:4]:
        for _ in range(4):
            kinds = [((rng.randint(7, 60), rng.randint(530_000, 1_000_000), 0), rng.randint(20, 60)),
                     ((rng.randint(7, 60), rng.randint(200_000, 520_000), 0), rng.randint(20, 60)),
                     ((rng.randint(7, 60), rng.randint(100, 5_000), 0), rng.randint(500, 3000))]
            check(release, ["-m", str(rng.randint(4, 16)), *args], kinds)


def test_the_issue_cases():
    """Issue 16 item 6, measured on Debian's 1.6.18: 15 items (class 39), 13 (class 39), 10 (class 56)."""
    cases = [(["-m", "16"], (183, 877228, 0), 15, 39),
             (["-m", "12", "-o", "slab_chunk_max=524288,no_modern"], (220, 812408, 5), 13, 39),
             (["-m", "8", "-n", "150", "-f", "1.15", "-C"], (99, 691758, 4294967295), 10, 56)]
    for args, item, items, cls in cases:
        capacity = check("1.6.18", args, [(item, 100)])
        assert (capacity.items, capacity.limiting_class) == (items, cls)


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_mixes_of_many_kinds_agree_with_the_engine(release):
    # from 32 kinds on, the search for the last item whose pages fit runs over numpy columns
    rng = random.Random(release + "many")
    for args in FLAG_SETS[:3]:
        kinds = {}
        while len(kinds) < 40:
            value = rng.choice([rng.randint(100, 20_000), rng.randint(530_000, 900_000)])
            kinds[(rng.randint(7, 60), value, 0)] = rng.randint(3, 12) if value > 520_000 else rng.randint(20, 80)
        check(release, ["-m", str(rng.randint(6, 12)), *args], list(kinds.items()))


def test_the_column_search_answers_as_the_python_one():
    # _column_fit is chunked_capacity's fit test over numpy columns: the same answer for every n,
    # past its int64 guard included (where it hands n to the Python test)
    import slabcalc.model.capacity as cap

    rng = random.Random(5)
    classes = {c: (rng.randint(1, 40), rng.choice([1 << 20, rng.randint(1 << 19, 1 << 20)])) for c in range(1, 12)}
    for trial in range(20):
        kinds = [cap.Kind(rng.choice([1, 7, rng.randint(1, 10 ** 6), 1 << 40]),
                          tuple((rng.randint(1, 11), "body") for _ in range(rng.randint(1, 5))), 11)
                 for _ in range(rng.randint(1, 40))]
        per_class = []
        for k in kinds:
            counted = {}
            for c, _ in k.chunks:
                counted[c] = counted.get(c, 0) + 1
            per_class.append(tuple(counted.items()))
        limit = rng.choice([1, rng.randint(2, 64)]) << 20     # 1 MiB: one page each may not fit
        calls = []

        def exact(n, kinds=kinds, per_class=per_class, limit=limit):
            calls.append(n)
            total = sum(k.count for k in kinds)
            chunks = {}
            for k, shape in zip(kinds, per_class):
                for c, many in shape:
                    # kind j's items that come before n / total: (2i + 1) / (2 m_j) < n / total
                    arrived = max(0, -(-(2 * n * k.count - total) // (2 * total)))
                    if n <= 3:   # the rule itself, counted
                        arrived = sum(1 for i in range(2 * n * k.count // total + 2)
                                      if (2 * i + 1) * total < 2 * n * k.count)
                    chunks[c] = chunks.get(c, 0) + arrived * many
            return sum(-(-n // classes[c][0]) * classes[c][1] for c, n in chunks.items()) <= limit   # all pages

        fit = cap._column_fit(kinds, per_class, sum(k.count for k in kinds), classes, limit, exact)
        for n in [0, 1, 2, 3, 10, 999, 10 ** 5, 10 ** 9, 1 << 40, (1 << 61) - 1] + [rng.randint(0, 1 << 30)
                                                                                   for _ in range(30)]:
            assert fit(n) == exact(n), (trial, n)
    assert calls


def test_the_arrival_order_is_exact_where_floats_tie():
    # chunked_capacity orders arrivals by _arrival: c / m as a float, then exactly where floats tie:
    # ratios a float cannot tell apart must still come in their exact order
    from fractions import Fraction

    from slabcalc.model.capacity import _arrival

    big = (1 << 53) + 1
    pairs = [(big, big + 2), (big + 1, big + 3), (1, 1), (big - 1, big + 1), (3, 4), (big, big + 1)]
    keyed = sorted((*_arrival(c, m), j) for j, (c, m) in enumerate(pairs))
    assert [j for *_, j in keyed] == [j for _, j in sorted((Fraction(c, m), j) for j, (c, m) in enumerate(pairs))]
    assert len({c / m for c, m in pairs[:2] + pairs[3:4]}) == 1     # the floats do tie
