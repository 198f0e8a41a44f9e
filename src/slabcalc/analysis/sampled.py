"""``stats --read-items``: the item sizes a node's metadump listed, modelled alone under the node's
own settings, and what ``stats items`` counts that the dump did not list.  One frozen result (issue 30:
the command line read the items and built the report itself)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:      # types only
    from slabcalc.analysis.report import Report
    from slabcalc.analysis.stats import NodeStats
    from slabcalc.inputs.items import Accounting


@dataclass(frozen=True)
class SampledItems:
    """A node's sample: ``error`` says why there is none (the server's refusal, no settings, no items,
    unreadable lines); else the ``report`` of the listed items and the input's ``accounting``."""

    node: str
    error: str | None
    why: str                               # "server", "settings", "empty", "input" or "" (sampled)
    report: Report | None = None
    accounting: Accounting | None = None
    counted: int | None = None             # items stats items counts
    listed: int = 0                        # metadump lines read
    limit: int = 0                         # --read-items N
    unlisted: tuple[int, int] | None = None   # (items, bytes) counted but not listed

    @property
    def stopped(self) -> bool:
        """metadump stopped at the limit, not at the end of the items."""
        return self.listed >= self.limit


def sample_items(node: NodeStats, refusal: str | None, lines: Sequence[str], limit: int) -> SampledItems:
    """Model ``lines`` (up to ``limit`` metadump lines of ``node``; ``refusal`` is the server's error
    to the metadump) under the node's settings."""
    from slabcalc.analysis.diagnosis import unreclaimed
    from slabcalc.analysis.report import build_report
    from slabcalc.errors import InputError
    from slabcalc.inputs import sampled_items

    if refusal is not None:
        return SampledItems(node.node, refusal, "server")
    if node.settings is None:
        return SampledItems(node.node, "no model settings", "settings")
    if not lines:
        return SampledItems(node.node, "no items", "empty")
    try:
        items, accounting, key_length = sampled_items(list(lines), f"{node.node} metadump", node.settings)
        report = build_report(node.settings, items, size_key_length=key_length)
    except (InputError, ValueError) as exc:
        return SampledItems(node.node, str(exc), "input")
    missing = unreclaimed(node, {c.slab_class.id: c.items for c in report.classes})
    return SampledItems(node.node, None, "", report, accounting, node.total("items"), len(lines), limit,
                        missing if missing else None)
