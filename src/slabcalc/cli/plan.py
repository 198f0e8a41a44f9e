"""``report``'s deployment part: whole-process memory, node plans, key groups (library calls and their printing)."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.common import measure
from slabcalc.cli.errors import Refusal
from slabcalc.cli.options import measured
from slabcalc.cli.tables import GROUP_COLUMNS, PLAN_NODE_COLUMNS
from slabcalc.errors import ValueRefused


def deploy_plan(settings, base, triples, deploy, key_length, source, wbuf_buckets=None):
    """``report``'s whole-process memory, node plan and key groups (library calls only)."""
    from slabcalc.analysis.process import parse_overhead, parse_pct, process_memory

    try:
        overhead = parse_overhead(deploy["overhead"]) if deploy["overhead"] is not None else parse_overhead("0")
    except ValueRefused as exc:
        raise click.BadParameter(str(exc), param_hint="'--overhead'") from None
    try:
        headroom = parse_pct(deploy["headroom"], "--headroom")
    except ValueRefused as exc:
        raise click.BadParameter(str(exc), param_hint="'--headroom'") from None
    planning = deploy["nodes"] is not None or deploy["node_ram"] is not None
    for given, name in ((deploy["fill"] is not None, "--fill"), (deploy["spare_nodes"], "--spare-nodes"),
                        (deploy["node_names"], "--node-names")):
        if given and not planning:
            raise Refusal(f"{name} shapes a plan of nodes: give --nodes N or --node-ram SIZE too")
    plan = {"overhead": overhead, "process": process_memory(base, overhead, deploy["connections"], wbuf_buckets),
            "node_plan": None, "node_ram": deploy["node_ram"], "headroom": headroom, "needed": None, "groups": None,
            "container": None}
    if deploy["container"] is not None:
        from slabcalc.analysis.deploy import container_plan

        if base.capacity is not None:
            raise Refusal("--container finds the -m to set, so give no -m")
        plan["container"] = container_plan(settings, triples, deploy["container"], overhead, deploy["connections"],
                                           key_length)
    if deploy["nodes"] is not None or deploy["node_ram"] is not None:
        from slabcalc.analysis.deploy import aggregate, nodes_needed, plan_nodes, usable   # only for plans

        if base.capacity is not None:
            raise Refusal("--nodes and --node-ram size nodes for the items: they find -m, so give no -m")
        distribution = aggregate(triples)
        plan["keys"] = sum(distribution.values())
        rules = _plan_rules(deploy)
        try:
            if deploy["nodes"] is not None:
                plan["node_plan"] = plan_nodes(settings, distribution, deploy["nodes"], overhead, key_length,
                                               rules)
            if deploy["node_ram"] is not None:
                plan["needed"] = nodes_needed(settings, distribution, deploy["node_ram"], headroom, overhead,
                                              key_length, rules)   # it plans fleets of unknown names
                plan["usable"] = usable(deploy["node_ram"], headroom)
        except ValueRefused as exc:     # more spare nodes than nodes, names that do not match --nodes
            raise Refusal(str(exc)) from None
    if deploy.get("groups") is not None:   # the report's own rows (G2), summed per group as they were read
        plan["groups"] = deploy["groups"].breakdown(settings, key_length)
    gauge = plan["needed"] or plan["node_plan"]
    memory = (gauge.memory if gauge is not None else plan["process"]).total
    measured(measure(base.total("page_bytes") - base.total("requested_bytes"), base.total("page_bytes"),
                      memory, "process memory per node" if gauge is not None else "process memory"))
    return plan


def _plan_rules(deploy):
    """``--fill``, ``--spare-nodes``, ``--spread`` and ``--node-names`` as :class:`PlanRules`."""
    from fractions import Fraction

    from slabcalc.analysis.deploy import PlanRules
    from slabcalc.analysis.process import parse_pct

    fill = PlanRules.fill
    if deploy["fill"] is not None:
        try:   # a share of -m above 0, up to 100%
            fill = 1 - parse_pct(100 - Fraction(str(deploy["fill"]).strip().removesuffix("%")), "--fill")
        except (ValueError, ZeroDivisionError):
            raise click.BadParameter(f"{deploy['fill']!r} is not a share above 0 and up to 100 (e.g. 80 or 80%)",
                                     param_hint="'--fill'") from None
    names = tuple(n.strip() for n in deploy["node_names"].split(",")) if deploy["node_names"] else None
    if names and deploy["nodes"] is None:
        raise Refusal("--node-names names the nodes of --nodes N: give --nodes too")
    if names and len(names) != deploy["nodes"]:
        raise Refusal(f"--node-names gives {len(names)} names for --nodes {deploy['nodes']}")
    if names and ("" in names or len(set(names)) != len(names)):   # equal names put equal points on the ring
        bad = "an empty name" if "" in names else f"{next(n for n in names if names.count(n) > 1)!r} twice"
        raise Refusal(f"--node-names has {bad}: each node needs its own name")
    return PlanRules(fill=fill, spare=deploy["spare_nodes"], spread=deploy["spread"], names=names)


def add_plan(record, plan):
    """Whole-process lines in the summary, and the plan's JSON fields."""
    from slabcalc.analysis.process import MIB
    from slabcalc.records.report import container_lines, container_record, group_records, process_record

    m = plan["process"]
    record["process"] = process_record(m)
    summary = record["summary"]
    if m.overshoot:
        summary["past -m"] = f"{m.overshoot} bytes of slab pages (a class's first page is granted past -m)"
    summary["hash table"] = f"{m.hash_bytes} bytes (2^{m.hashpower} buckets for {m.items} items)"
    if m.overhead:
        summary["overhead"] = f"{m.overhead} bytes ({plan['overhead']})"
    runtime = "".join(f" + {size} {name.replace('_', ' ')}" for name, size in m.runtime)
    summary["process memory"] = (f"{m.total} bytes ({m.total / MIB:.2f} MiB) = {m.slab_bytes} slab pages + "
                                 f"{m.hash_bytes} hash table{runtime} + {m.overhead} overhead")
    container = plan.get("container")
    if container is not None:
        record["container"] = container_record(container)
        summary.update(container_lines(container, record["settings"]["release"]))
    if m.limit_bytes:
        summary["headroom"] = (f"{m.limit_headroom} bytes ({100.0 * m.limit_headroom / m.limit_bytes:.2f}%) "
                               f"of -m {m.memory_limit_mb} free")
    from slabcalc.records.plan import plan_record

    if plan["node_plan"] is not None:
        record["nodes"] = plan_record(plan["node_plan"])
    if plan["node_ram"] is not None:
        needed = plan["needed"]
        record["node_ram"] = {"node_ram": plan["node_ram"], "headroom_pct": float(plan["headroom"] * 100),
                              "usable_bytes": plan["usable"], "needed": plan_record(needed) if needed else None}
    if plan["groups"] is not None:
        record["groups"] = group_records(plan["groups"])


def print_plan(plan, fmt):
    from slabcalc.analysis.process import MIB
    from slabcalc.records.plan import plan_lines, plan_record

    plans = [p for p in (plan["node_plan"], plan["needed"]) if p is not None]
    if plans:
        click.echo()
        click.echo(output.render_rows([plan_record(p) for p in plans], PLAN_NODE_COLUMNS, fmt,
                                      essential=("nodes", "memory_limit_mb", "items", "process_bytes")))
    if plan["node_plan"] is not None:
        click.echo()
        click.echo("\n".join(output.note(line) for line in plan_lines(plan["node_plan"], plan["keys"])))
    if plan["node_ram"] is not None:
        click.echo()
        ram, usable, needed = plan["node_ram"], plan["usable"], plan["needed"]
        room = f"{usable} bytes usable ({usable / MIB:.2f} MiB, {float(plan['headroom'] * 100):g}% headroom)"
        if needed is None:
            click.echo(f"no number of nodes of {ram} bytes holds these items: {room}")
        else:
            m = needed.memory
            click.echo(output.note(f"{needed.nodes} nodes of {ram} bytes ({ram / MIB:.2f} MiB) hold these items: "
                                   f"each runs -m {m.memory_limit_mb} and takes {m.total} bytes of {room}"))
            click.echo("\n".join(output.note(line) for line in plan_lines(needed, plan["keys"])))
    if plan["groups"] is not None:
        from slabcalc.records.report import group_records

        click.echo()
        click.echo(output.render_rows(group_records(plan["groups"]), GROUP_COLUMNS, fmt,
                                      essential=("group", "items", "used_bytes", "memory_pct")))
