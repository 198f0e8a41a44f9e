"""Spreading a workload over N memcached nodes, and how many nodes of a size hold it.

Clients spread keys over nodes by consistent hashing, evenly enough that each
node is sized for an even share: every kind of item (one key, value and flags
length) comes ``ceil(count / N)`` times on a node -- the fullest node, which is
the one to size.  Each node is then a whole :func:`slabcalc.analysis.report.build_report`
and :func:`slabcalc.analysis.process.process_memory` of its own: per-class pages, the
first-page overshoot and the hash table do not scale linearly with N.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Iterable, Mapping

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.process import HASHPOWER_DEFAULT, MIB, Overhead, ProcessMemory, planned_process
from slabcalc.analysis.report import Report, build_report
from slabcalc.analysis.spread import Spread, default_names, fullest_share, keys_on_fullest
from slabcalc.errors import ValueRefused
from slabcalc.model.distribution import Item, ItemColumns
from slabcalc.model.settings import Settings

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
class PlanRules:
    """What a capacity plan allows for, besides the items.

    ``fill``: the share of ``-m`` the planned items take (room to grow inside
    ``-m``); ``spare``: nodes that may be down while the rest still hold every
    item (N+1 is ``spare=1``); ``spread``: ``"ketama"`` sizes each node for the
    fullest node of a ketama continuum of ``names`` (:mod:`slabcalc.analysis.spread`),
    ``"even"`` for an even share; ``hashpower``: start the hash table at the
    size the items need (``-o hashpower``), so that it never doubles -- a
    doubling holds the old and the new table at once.
    """

    fill: Fraction = Fraction(1)
    spare: int = 0
    spread: str = "ketama"
    names: tuple[str, ...] | None = None
    hashpower: bool = True


@dataclass(frozen=True)
class NodePlan:
    nodes: int                # the fleet, spare nodes included
    report: Report            # one (the fullest) node
    memory: ProcessMemory     # its process at the planned -m
    rules: PlanRules = PlanRules()
    spread: Spread | None = None
    settings: Settings | None = None   # the flags each node runs with

    @property
    def serving(self) -> int:
        return self.nodes - self.rules.spare


def fullest_node(distribution: Mapping[Item, int], nodes: int, rules: PlanRules
                 ) -> tuple[dict[Item, int], Spread | None]:
    """The items of the fullest node of ``nodes`` (with ``rules.spare`` of them down)."""
    serving = nodes - rules.spare
    if serving < 1:
        raise ValueRefused(f"{rules.spare} spare nodes of {nodes}: none would be left to serve")
    if rules.spread == "even":
        return node_share(distribution, serving), None
    names = list(rules.names) if rules.names else default_names(nodes)
    if len(names) != nodes:
        raise ValueRefused(f"{len(names)} node names for {nodes} nodes")
    spread = fullest_share(names, rules.spare)
    keys = sum(distribution.values())
    on_node = keys_on_fullest(keys, spread.share)
    # every kind of item in the fullest node's proportion, rounded up
    share = {item: min(count, -(-count * on_node // keys)) for item, count in distribution.items()}
    return {item: n for item, n in share.items() if n}, spread


def plan_nodes(settings: Settings, distribution: Mapping[Item, int], nodes: int,
               overhead: Overhead = Overhead(), size_key_length: int = SIZE_KEY_LENGTH,
               rules: PlanRules = PlanRules()) -> NodePlan:
    """One node's report, process and flags when ``nodes`` share the workload under ``rules``."""
    share, spread = fullest_node(distribution, nodes, rules)
    report = build_report(settings, share, size_key_length=size_key_length)
    memory = planned_process(report, overhead, rules.fill, rules.hashpower)
    flags = replace(settings, maxbytes=memory.memory_limit_mb * MIB, memory_limit_given=True,
                    hashpower_init=memory.hashpower if rules.hashpower and memory.hashpower != HASHPOWER_DEFAULT
                    else settings.hashpower_init)
    return NodePlan(nodes, report, memory, rules, spread, flags)


def usable(node_ram: int, headroom: Fraction) -> int:
    """Bytes of a node a process may take, leaving ``headroom`` (a share) free."""
    return node_ram * (headroom.denominator - headroom.numerator) // headroom.denominator


def nodes_needed(settings: Settings, distribution: Mapping[Item, int], node_ram: int,
                 headroom: Fraction = Fraction(0), overhead: Overhead = Overhead(),
                 size_key_length: int = SIZE_KEY_LENGTH, rules: PlanRules = PlanRules()) -> NodePlan | None:
    """The fewest nodes of ``node_ram`` bytes whose processes hold the workload with ``headroom``
    left free on each, under ``rules``; None when no number of nodes does (one item kind alone
    is too big).

    With an even spread a node only gets lighter as nodes are added: a bisection finds the
    fewest.  A ketama ring's fullest share does not fall smoothly with the count, so from the
    even answer (a lower bound) the counts are tried one by one.
    """
    room = usable(node_ram, headroom)

    def plan(n: int, how: PlanRules) -> NodePlan:
        return plan_nodes(settings, distribution, n, overhead, size_key_length, how)

    def fits(p: NodePlan) -> bool:
        return p.memory.total <= room and p.memory.memory_limit_mb << 20 <= room

    even = replace(rules, spread="even", names=None)
    low, high = rules.spare, rules.spare + 1     # plan(low) does not fit (spare only: none serve)
    best = plan(high, even)
    while not fits(best):
        if high >= NODES_MAX or best.report.items == 0:
            return None
        low, high = high, min(high * 2, NODES_MAX)
        best = plan(high, even)
    while high - low > 1:          # a node's memory only falls as nodes are added
        mid = (low + high) // 2
        candidate = plan(mid, even)
        if fits(candidate):
            high, best = mid, candidate
        else:
            low = mid
    if rules.spread == "even":
        return best
    for n in range(high, min(NODES_MAX, 2 * high + 8) + 1):
        candidate = plan(n, replace(rules, names=None))   # the names of a fleet of n are not known
        if fits(candidate):
            return candidate
    return None


RULE_OF_THUMB = Fraction(6, 5)   # the common advice: a container of -m x 1.2


@dataclass(frozen=True)
class ContainerPlan:
    """The largest ``-m`` whose full process fits a container, and what the -m x 1.2 rule gives."""

    limit: int                       # the container's memory, bytes
    memory_limit_mb: int | None      # None: not even -m 1 fits
    memory: ProcessMemory | None
    rule_mb: int                     # limit / 1.2, in whole megabytes
    rule_memory: ProcessMemory | None
    flags: tuple[str, ...] = ()      # the memcached command line with that -m (empty: none fits)


def container_plan(settings: Settings, distribution, limit: int, overhead: Overhead = Overhead(),
                   connections: int | None = None, size_key_length: int = SIZE_KEY_LENGTH) -> ContainerPlan:
    """The ``-m`` to set for a container of ``limit`` bytes: a full cache of this mix, its hash table
    and the runtime (analysis/process.py) within the limit; and the -m x 1.2 rule's -m, for comparison."""
    from slabcalc.analysis.ram import ram_report
    from slabcalc.analysis.process import process_memory

    def process_at(megabytes: int) -> ProcessMemory:
        sized = replace(settings, maxbytes=megabytes * MIB, memory_limit_given=True)
        report, ext = ram_report(sized, distribution, size_key_length=size_key_length)
        return process_memory(report, overhead, connections,
                              ext.flash.buckets if ext is not None else None)

    rule_mb = limit * RULE_OF_THUMB.denominator // RULE_OF_THUMB.numerator // MIB
    best = None
    if process_at(1).total <= limit:
        low, high = 1, max(1, limit // MIB)     # process_at(low) fits
        while low < high:
            mid = (low + high + 1) // 2
            if process_at(mid).total <= limit:
                low = mid
            else:
                high = mid - 1
        best = low
    flags = tuple(replace(settings, maxbytes=best * MIB).as_argv()) if best else ()
    return ContainerPlan(limit, best, process_at(best) if best else None, rule_mb,
                         process_at(rule_mb) if rule_mb else None, flags)
