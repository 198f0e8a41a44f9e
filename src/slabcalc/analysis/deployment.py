"""``report``'s deployment part as one frozen result: the whole process, a container's -m, a plan of
nodes, key groups.

The command line parses ``--overhead``, ``--headroom``, ``--fill``, ``--nodes`` ... into values and calls
:func:`deployment` once; :func:`slabcalc.records.report.report_record` builds the JSON from what it
returns (issue 30: the command line ran this analysis itself and changed the record afterwards).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.process import Overhead, ProcessMemory, process_memory
from slabcalc.errors import ValueRefused

if TYPE_CHECKING:      # types only: plans and key groups are loaded only when asked for
    from slabcalc.analysis.deploy import ContainerPlan, NodePlan, PlanRules
    from slabcalc.analysis.keyspace import Group, KeyGroups
    from slabcalc.analysis.report import Report
    from slabcalc.model.settings import Settings


class PlanRefused(ValueRefused):
    """A plan of nodes that cannot be made as asked (more spare nodes than nodes, names that do not
    match ``--nodes``): the command line refuses it (exit 2)."""


@dataclass(frozen=True)
class Deployment:
    """What ``report`` says of a deployment, beside the slab classes."""

    overhead: Overhead
    process: ProcessMemory                    # the process holding the report's items (or a full cache)
    container: ContainerPlan | None = None    # --container: the -m to set
    node_plan: NodePlan | None = None         # --nodes N: one (the fullest) node
    node_ram: int | None = None               # --node-ram: the bytes of a node
    headroom: Fraction = Fraction(0)          # --headroom: the share of a node left free
    needed: NodePlan | None = None            # --node-ram: the fewest nodes that hold the items
    usable: int | None = None                 # --node-ram: bytes of a node a process may take
    keys: int | None = None                   # items planned over the nodes
    groups: tuple[Group, ...] | None = None   # --group-by: per group, the most memory first

    @property
    def per_node(self) -> ProcessMemory | None:
        """The process memory of one planned node, when nodes were planned."""
        gauge = self.needed or self.node_plan
        return gauge.memory if gauge is not None else None


def deployment(settings: Settings, base: Report, distribution, *, overhead: Overhead = Overhead(),
               connections: int | None = None, container: int | None = None, nodes: int | None = None,
               node_ram: int | None = None, headroom: Fraction = Fraction(0), rules: PlanRules | None = None,
               groups: KeyGroups | None = None, size_key_length: int = SIZE_KEY_LENGTH,
               wbuf_buckets: int | None = None) -> Deployment:
    """The process of ``base`` (:func:`slabcalc.analysis.report.build_report`'s report of
    ``distribution`` under ``settings``) and what was asked beside it: a ``container`` of so many bytes,
    ``nodes`` sharing the items or nodes of ``node_ram`` bytes under ``rules``, key ``groups``."""
    process = process_memory(base, overhead, connections, wbuf_buckets)
    found: dict = {}
    if container is not None:
        from slabcalc.analysis.deploy import container_plan

        found["container"] = container_plan(settings, distribution, container, overhead, connections,
                                            size_key_length)
    if nodes is not None or node_ram is not None:
        from slabcalc.analysis.deploy import PlanRules, aggregate, nodes_needed, plan_nodes, usable

        rules = rules or PlanRules()
        items = aggregate(distribution)
        found["keys"] = sum(items.values())
        try:
            if nodes is not None:
                found["node_plan"] = plan_nodes(settings, items, nodes, overhead, size_key_length, rules)
            if node_ram is not None:     # it plans fleets of unknown names
                found["needed"] = nodes_needed(settings, items, node_ram, headroom, overhead, size_key_length,
                                               rules)
                found["usable"] = usable(node_ram, headroom)
        except PlanRefused:
            raise
        except ValueRefused as exc:
            raise PlanRefused(str(exc)) from None
    if groups is not None:     # the report's own rows, summed per group as they were read
        found["groups"] = tuple(groups.breakdown(settings, size_key_length))
    return Deployment(overhead, process, node_ram=node_ram, headroom=headroom, **found)
