"""How unevenly consistent hashing spreads keys over nodes: the share of the fullest node.

Clients spread keys over a pool with a ketama continuum: each node puts 160
points on a 32-bit ring (40 MD5 digests of ``"NAME-i"``, ``i`` = 0..39, four
little-endian 32-bit points from each), and a key belongs to the first point at
or after the first four bytes of its own MD5 (wrapping round).  A node's share
of the keys is the length of the arcs that end at its points.  With 160 points
the arcs are uneven: a few per cent above ``1/N`` for the fullest node.

When nodes fail, their arcs pass to the next point of another node.  With
``spare`` nodes planned for, :func:`fullest_share` takes them down one at a
time, each time the one whose loss raises the fullest survivor's share most
(greedy: the worst single failure exactly, the worst pair and beyond as that
order finds it), and reports the fullest share after all of them.

On top of the share, ``K`` keys land on a node of share ``s`` as a binomial
count: :func:`keys_on_fullest` adds three standard deviations,
``3 * sqrt(K * s * (1 - s))``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Sequence

from slabcalc.errors import ValueRefused

POINTS_PER_NODE = 160          # 40 digests x 4 points
RING = 1 << 32


def default_names(nodes: int) -> list[str]:
    """Placeholder node names when the real ones are not given."""
    return [f"node{i + 1}:11211" for i in range(nodes)]


def continuum(names: Sequence[str]):
    """``(points, owners)``: the ring's points, ascending, and the node index owning each."""
    import numpy as np

    points, owners = [], []
    for index, name in enumerate(names):
        for i in range(POINTS_PER_NODE // 4):
            digest = hashlib.md5(f"{name}-{i}".encode()).digest()
            for h in range(4):
                points.append(int.from_bytes(digest[4 * h:4 * h + 4], "little"))
                owners.append(index)
    points = np.asarray(points, dtype=np.int64)
    owners = np.asarray(owners, dtype=np.int64)
    order = np.argsort(points, kind="stable")
    return points[order], owners[order]


def shares(points, owners, nodes: int):
    """Each node's share of the ring (arcs ``(previous point, point]``, the first wrapping round)."""
    import numpy as np

    arcs = np.diff(points, prepend=points[-1] - RING)
    return np.bincount(owners, weights=arcs, minlength=nodes) / RING


@dataclass(frozen=True)
class Spread:
    """The fullest node's share with every node up, and with ``spare`` nodes down."""

    nodes: int
    spare: int
    share_all_up: float
    share: float                   # after the spare nodes are down (the one to size for)
    down: tuple[str, ...]          # the nodes taken down, in order

    @property
    def factor(self) -> float:
        """The fullest node's load against an even share of the nodes serving."""
        return self.share * (self.nodes - self.spare)


def fullest_share(names: Sequence[str], spare: int = 0) -> Spread:
    """The fullest node's share of keys on the ring of ``names``, with ``spare`` of them down."""
    import numpy as np

    if spare >= len(names):
        raise ValueRefused(f"{spare} spare nodes of {len(names)}: none would be left to serve")
    points, owners = continuum(names)
    n = len(names)
    first = float(shares(points, owners, n).max())
    down: list[int] = []
    for _ in range(spare):
        keep = ~np.isin(owners, down)
        p, o = points[keep], owners[keep]
        base = shares(p, o, n)
        arcs = np.diff(p, prepend=p[-1] - RING) / RING
        # the owner of the next point of another node: who takes each point's arc when its node fails
        nxt = np.empty_like(o)
        different = np.flatnonzero(o != np.roll(o, -1))     # points whose successor is another node
        # for point i, the first j >= i (cyclically) with o[j] != o[i] ... its successor o[j+1]
        idx = np.searchsorted(different, np.arange(len(o)), side="left") % len(different)
        nxt[:] = o[(different[idx] + 1) % len(o)]
        gained = np.bincount(o * n + nxt, weights=arcs, minlength=n * n).reshape(n, n)
        after = base[None, :] + gained
        after[np.arange(n), np.arange(n)] = -1.0        # the failed node itself
        after[:, down] = -1.0
        worst = after.max(axis=1)
        worst[down] = -1.0
        victim = int(worst.argmax())
        down.append(victim)
    keep = ~np.isin(owners, down)
    final = float(shares(points[keep], owners[keep], n).max()) if down else first
    return Spread(n, spare, first, final, tuple(names[i] for i in down))


def keys_on_fullest(keys: int, share: float) -> int:
    """Keys on a node of ``share``: the expected count and three standard deviations, rounded up."""
    return min(keys, math.ceil(keys * share + 3 * math.sqrt(keys * share * (1 - share))))
