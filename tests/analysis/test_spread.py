"""The ketama spread: the ring's points by hand, shares against keys hashed here, failures against
a ring rebuilt without the failed nodes."""

from __future__ import annotations

import bisect
import hashlib
import math

from slabcalc.analysis.spread import continuum, default_names, fullest_share, keys_on_fullest, shares


def test_the_ring_is_md5_points_of_name_dash_index():
    points, owners = continuum(["a:11211", "b:11211"])
    assert len(points) == 320 and list(points) == sorted(points)
    digest = hashlib.md5(b"b:11211-7").digest()
    for h in range(4):
        point = digest[4 * h] | digest[4 * h + 1] << 8 | digest[4 * h + 2] << 16 | digest[4 * h + 3] << 24
        i = list(points).index(point)
        assert owners[i] == 1


def test_shares_are_where_hashed_keys_land():
    names = default_names(6)
    points, owners = continuum(names)
    ring = [int(p) for p in points]
    counts = [0] * 6
    keys = 120_000
    for k in range(keys):
        h = int.from_bytes(hashlib.md5(f"user:{k}".encode()).digest()[:4], "little")
        i = bisect.bisect_left(ring, h) % len(ring)     # the first point at or after the key's hash
        counts[int(owners[i])] += 1
    for share, count in zip(shares(points, owners, 6), counts):
        # a binomial count: within 4 standard deviations of the share
        assert abs(count - keys * share) < 4 * math.sqrt(keys * share * (1 - share))


def test_failures_match_a_ring_rebuilt_without_them():
    names = default_names(9)

    def fullest_without(down):
        kept = [n for n in names if n not in down]
        p, o = continuum(kept)
        return float(shares(p, o, len(kept)).max())

    one = fullest_share(names, 1)
    worst = max(fullest_without({n}) for n in names)        # every single failure, rebuilt
    assert math.isclose(one.share, worst, rel_tol=1e-12)
    assert math.isclose(one.share, fullest_without(set(one.down)), rel_tol=1e-12)
    two = fullest_share(names, 2)
    assert two.down[0] == one.down[0]                        # greedy: the worst single failure first
    assert math.isclose(two.share, fullest_without(set(two.down)), rel_tol=1e-12)
    assert two.share >= one.share >= one.share_all_up > 1 / 9


def test_keys_on_the_fullest_node():
    assert keys_on_fullest(10_000, 0.25) == math.ceil(2500 + 3 * math.sqrt(10_000 * 0.25 * 0.75))
    assert keys_on_fullest(3, 0.9) == 3
