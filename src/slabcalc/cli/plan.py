"""``report``'s deployment options as values for :func:`slabcalc.analysis.deployment.deployment`, and the
printing of its plans and key groups."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.common import measure
from slabcalc.cli.errors import Refusal
from slabcalc.cli.options import measured
from slabcalc.cli.tables import GROUP_COLUMNS, PLAN_NODE_COLUMNS
from slabcalc.errors import ValueRefused


def deploy_plan(settings, base, triples, deploy, key_length, source, wbuf_buckets=None, groups=None):
    """``report``'s whole-process memory, node plan and key groups (``groups``: the --group-by sums made
    as the rows were read, or None): the options parsed, one library call."""
    from slabcalc.analysis.deployment import PlanRefused, deployment
    from slabcalc.analysis.process import parse_overhead

    try:
        overhead = parse_overhead(deploy["overhead"]) if deploy["overhead"] is not None else parse_overhead("0")
    except ValueRefused as exc:
        raise click.BadParameter(str(exc), param_hint="'--overhead'") from None
    headroom = deploy["headroom"]           # a Fraction: options.share
    planning = deploy["nodes"] is not None or deploy["node_ram"] is not None
    for given, name in ((deploy["fill"] is not None, "--fill"), (deploy["spare_nodes"], "--spare-nodes"),
                        (deploy["node_names"], "--node-names")):
        if given and not planning:
            raise Refusal(f"{name} shapes a plan of nodes: give --nodes N or --node-ram SIZE too")
    if deploy["container"] is not None and base.capacity is not None:
        raise Refusal("--container finds the -m to set, so give no -m")
    if planning and base.capacity is not None:
        raise Refusal("--nodes and --node-ram size nodes for the items: they find -m, so give no -m")
    try:
        plan = deployment(settings, base, triples, overhead=overhead, connections=deploy["connections"],
                          container=deploy["container"], nodes=deploy["nodes"], node_ram=deploy["node_ram"],
                          headroom=headroom, rules=_plan_rules(deploy) if planning else None,
                          groups=groups, size_key_length=key_length, wbuf_buckets=wbuf_buckets)
    except PlanRefused as exc:     # more spare nodes than nodes, names that do not match --nodes
        raise Refusal(str(exc)) from None
    per_node = plan.per_node
    memory = (per_node or plan.process).total
    measured(measure(base.total("page_bytes") - base.total("requested_bytes"), base.total("page_bytes"),
                      memory, "process memory per node" if per_node is not None else "process memory"))
    return plan


def _plan_rules(deploy):
    """``--fill``, ``--spare-nodes``, ``--spread`` and ``--node-names`` as :class:`PlanRules`."""
    from slabcalc.analysis.deploy import PlanRules

    fill = PlanRules.fill if deploy["fill"] is None else deploy["fill"]   # a Fraction: options.share
    names = tuple(n.strip() for n in deploy["node_names"].split(",")) if deploy["node_names"] else None
    if names and deploy["nodes"] is None:
        raise Refusal("--node-names names the nodes of --nodes N: give --nodes too")
    if names and len(names) != deploy["nodes"]:
        raise Refusal(f"--node-names gives {len(names)} names for --nodes {deploy['nodes']}")
    if names and ("" in names or len(set(names)) != len(names)):   # equal names put equal points on the ring
        bad = "an empty name" if "" in names else f"{next(n for n in names if names.count(n) > 1)!r} twice"
        raise Refusal(f"--node-names has {bad}: each node needs its own name")
    return PlanRules(fill=fill, spare=deploy["spare_nodes"], spread=deploy["spread"], names=names)


def print_plan(plan, fmt):
    from slabcalc.analysis.process import MIB
    from slabcalc.records.plan import plan_lines, plan_record

    plans = [p for p in (plan.node_plan, plan.needed) if p is not None]
    if plans:
        click.echo()
        click.echo(output.render_rows([plan_record(p) for p in plans], PLAN_NODE_COLUMNS, fmt,
                                      essential=("nodes", "memory_limit_mb", "items", "process_bytes")))
    if plan.node_plan is not None:
        click.echo()
        click.echo("\n".join(output.note(line) for line in plan_lines(plan.node_plan, plan.keys)))
    if plan.node_ram is not None:
        click.echo()
        ram, usable, needed = plan.node_ram, plan.usable, plan.needed
        room = f"{usable} bytes usable ({usable / MIB:.2f} MiB, {float(plan.headroom * 100):g}% headroom)"
        if needed is None:
            click.echo(f"no number of nodes of {ram} bytes holds these items: {room}")
        else:
            m = needed.memory
            click.echo(output.note(f"{needed.nodes} nodes of {ram} bytes ({ram / MIB:.2f} MiB) hold these items: "
                                   f"each runs -m {m.memory_limit_mb} and takes {m.total} bytes of {room}"))
            click.echo("\n".join(output.note(line) for line in plan_lines(needed, plan.keys)))
    if plan.groups is not None:
        from slabcalc.records.report import group_records

        click.echo()
        click.echo(output.render_rows(group_records(plan.groups), GROUP_COLUMNS, fmt,
                                      essential=("group", "items", "used_bytes", "memory_pct")))
