"""The JSON and the words of a capacity plan (``report --nodes``/``--node-ram``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:      # the plan's type only: importing the planner costs a report its start-up
    from slabcalc.analysis.deploy import NodePlan


def plan_record(plan: NodePlan) -> dict:
    """The JSON of a node plan (one row of ``report --nodes``/``--node-ram``)."""
    m = plan.memory
    spread = plan.spread
    return {"nodes": plan.nodes, "spare_nodes": plan.rules.spare, "serving_nodes": plan.serving,
            "memory_limit_mb": m.memory_limit_mb, "fill_pct": float(plan.rules.fill * 100),
            "items": plan.report.items, "items_at_full": m.items, "pages": plan.report.total("pages"),
            "slab_bytes": m.slab_bytes, "hash_bytes": m.hash_bytes, "hash_peak_bytes": m.hash_peak_bytes,
            "hashpower": m.hashpower, "overhead_bytes": m.overhead, "process_bytes": m.total,
            "spread": plan.rules.spread,
            "fullest_share_pct": None if spread is None else round(100 * spread.share, 4),
            "fullest_share_all_up_pct": None if spread is None else round(100 * spread.share_all_up, 4),
            "spread_factor": None if spread is None else round(spread.factor, 4),
            "down": None if spread is None else list(spread.down),
            "release": plan.settings.profile.release if plan.settings else None,
            "memcached_args": plan.settings.as_argv() if plan.settings else None}


def plan_lines(plan: NodePlan, keys: int) -> list[str]:
    """What a team signs: the fleet, the fullest node and why, the hash table, the flags per node."""
    m, rules, spread = plan.memory, plan.rules, plan.spread
    lines = []
    fleet = f"{plan.nodes} nodes" + (f" ({plan.serving} serving + {rules.spare} spare: any {rules.spare} may be "
                                     "down)" if rules.spare else "")
    if spread is None:
        lines.append(f"{fleet}; keys spread evenly: the fullest node holds {plan.report.items} items")
    else:
        down = (f"; with {', '.join(spread.down)} down (the worst found) {100 * spread.share:.2f}%"
                if spread.down else "")
        named = "" if rules.names else " named node1:11211, ... (--node-names for yours)"
        lines.append(f"{fleet}; on a ketama ring (160 points a node{named}) the fullest node takes "
                     f"{100 * spread.share_all_up:.2f}% of the keys{down}, {spread.factor:.3f} x an even share: "
                     f"sized for {plan.report.items} of {keys} items (that share + 3 standard deviations)")
    if rules.fill < 1:
        lines.append(f"they fill {float(rules.fill * 100):g}% of -m {m.memory_limit_mb}: room for {m.items} "
                     f"items of this mix before evictions, all of -m budgeted")
    expand = m.hash_peak_bytes - m.hash_bytes
    if plan.settings is not None and plan.settings.hashpower_init == m.hashpower:
        lines.append(f"hash table: 2^{m.hashpower} buckets ({m.hash_bytes} bytes) from the start "
                     f"(-o hashpower={m.hashpower}): it never doubles")
    elif expand:
        lines.append(f"hash table: doubles up to 2^{m.hashpower} buckets ({m.hash_bytes} bytes), holding "
                     f"{m.hash_peak_bytes} bytes while the last doubling runs")
    if plan.settings is not None:
        lines.append(f"each node, for memcached {plan.settings.profile.release}: "
                     + " ".join(plan.settings.as_argv()))
    return lines
