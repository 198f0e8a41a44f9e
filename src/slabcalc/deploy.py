"""Spreading a workload over N memcached nodes, and how many nodes of a size hold it.

Clients spread keys over nodes by consistent hashing, evenly enough that each
node is sized for an even share: every kind of item (one key, value and flags
length) comes ``ceil(count / N)`` times on a node -- the fullest node, which is
the one to size.  Each node is then a whole :func:`slabcalc.report.build_report`
and :func:`slabcalc.process.process_memory` of its own: per-class pages, the
first-page overshoot and the hash table do not scale linearly with N.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Mapping

from .inputs import Item, ItemColumns
from .process import Overhead, ProcessMemory, process_memory
from .report import Report, build_report
from .settings import Settings

NODES_MAX = 1 << 20


def aggregate(distribution: Mapping[Item, int] | Iterable) -> dict[Item, int]:
    """``{Item: count}`` from what :func:`build_report` takes (column blocks included)."""
    if isinstance(distribution, Mapping):
        return dict(distribution)
    total: dict[Item, int] = {}
    for entry in distribution:
        for item, count, *_ in (entry.triples() if isinstance(entry, ItemColumns) else (entry,)):
            total[item] = total.get(item, 0) + count
    return total


def node_share(distribution: Mapping[Item, int], nodes: int) -> dict[Item, int]:
    """The items of one of the fullest nodes when ``nodes`` share ``distribution`` evenly.

    Each kind of item gives every node ``count // nodes``; its ``count % nodes``
    left over go one each to the next nodes in turn, the turn carried on from
    kind to kind (kinds in size order), so nodes differ by at most one item.
    The node returned is the first of the turn: it holds ``ceil(items / nodes)``.
    """
    share: dict[Item, int] = {}
    turn = 0        # the node the next left-over item goes to
    for item in sorted(distribution, key=_order):
        count = distribution[item]
        whole, left = divmod(count, nodes)
        # node 0 gets one of the left-over items when the turn passes it
        extra = 1 if left and (turn == 0 or turn + left > nodes) else 0
        turn = (turn + left) % nodes
        if whole + extra:
            share[item] = whole + extra
    return share


def _order(item: Item) -> tuple[int, int, int, int]:
    return (item.item_size or 0, item.key or 0, item.value or 0, item.flags)


@dataclass(frozen=True)
class NodePlan:
    nodes: int
    report: Report            # one (the fullest) node
    memory: ProcessMemory     # its process


def plan_nodes(settings: Settings, distribution: Mapping[Item, int], nodes: int,
               overhead: Overhead = Overhead(), size_key_length: int = 16) -> NodePlan:
    """One node's report and process memory when ``nodes`` share the workload."""
    report = build_report(settings, node_share(distribution, nodes), size_key_length=size_key_length)
    return NodePlan(nodes, report, process_memory(report, overhead))


def usable(node_ram: int, headroom: Fraction) -> int:
    """Bytes of a node a process may take, leaving ``headroom`` (a share) free."""
    return node_ram * (headroom.denominator - headroom.numerator) // headroom.denominator


def nodes_needed(settings: Settings, distribution: Mapping[Item, int], node_ram: int,
                 headroom: Fraction = Fraction(0), overhead: Overhead = Overhead(),
                 size_key_length: int = 16) -> NodePlan | None:
    """The fewest nodes of ``node_ram`` bytes whose processes hold the workload with ``headroom``
    left free on each; None when no number of nodes does (one item kind alone is too big)."""
    room = usable(node_ram, headroom)

    def plan(n: int) -> NodePlan:
        return plan_nodes(settings, distribution, n, overhead, size_key_length)

    def fits(p: NodePlan) -> bool:
        return p.memory.total <= room and p.memory.memory_limit_mb << 20 <= room

    low, high = 0, 1     # plan(low) does not fit (0: none tried), plan(high) is the candidate
    best = plan(high)
    while not fits(best):
        if high >= NODES_MAX or best.report.items == 0:
            return None
        low, high = high, min(high * 2, NODES_MAX)
        best = plan(high)
    while high - low > 1:          # a node's memory only falls as nodes are added
        mid = (low + high) // 2
        candidate = plan(mid)
        if fits(candidate):
            high, best = mid, candidate
        else:
            low = mid
    return best
