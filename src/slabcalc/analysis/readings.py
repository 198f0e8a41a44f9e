"""``stats``'s readings: one node's saved replies and live nodes, each read once or twice (``--interval``,
``--since``), analysed node by node, with ``--read-items``.  One frozen result the command prints
(issue 30: the command read and analysed them itself)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from slabcalc.errors import DumpError, NodeError

if TYPE_CHECKING:      # types only
    from slabcalc.analysis.diagnosis import Interval
    from slabcalc.analysis.sampled import SampledItems
    from slabcalc.analysis.stats import NodeStats
    from slabcalc.inputs.client import Address
    from slabcalc.inputs.dumps import Dump


@dataclass(frozen=True)
class StatsReadings:
    """The nodes read and analysed, in order (the saved node first), the nodes that could not be read
    ``(node, why)``, the samples of ``--read-items`` and, per node, what happened between two readings."""

    nodes: tuple[NodeStats, ...]
    failed: tuple[tuple[str, str], ...] = ()
    samples: tuple[SampledItems, ...] = ()
    spans: Mapping[str, Interval] = field(default_factory=dict)


def read_stats(analyse: Callable[..., NodeStats], saved: Dump | None = None, since: Sequence[str] = (),
               addresses: Sequence[Address] = (), timeout: float = 2.0, interval: int | None = None,
               tls=None, sample_items: int | None = None,
               waiting: Callable[[int], None] | None = None) -> StatsReadings:
    """``saved`` (one node's replies; ``since``: the files of an earlier reading of it) and the nodes at
    ``addresses``, read once, or twice ``interval`` seconds apart (``waiting`` is told before the wait).

    ``analyse(dump[, name])`` makes a node's :class:`NodeStats` (:func:`slabcalc.analysis.stats.analyse`
    under the flags the command was given, ``server_args``).  A saved node that cannot be analysed is a
    :class:`DumpError` (``since`` unreadable: its reader's error); a live node that cannot be read or
    analysed is one entry of ``failed`` and the others are still read."""
    from slabcalc.analysis.diagnosis import interval as interval_of

    nodes, spans = [], {}
    if saved is not None:
        nodes.append(analyse(saved))
        if since:
            from slabcalc.inputs import read_dumps

            spans[nodes[-1].node] = interval_of(read_dumps(since), nodes[-1])
    live, failed, samples = _read_live(analyse, addresses, timeout, interval, tls, sample_items, waiting, spans)
    return StatsReadings(tuple(nodes + live), failed, samples, spans)


def _read_live(analyse, addresses, timeout, interval, tls, sample_items, waiting, spans):
    """The nodes at ``addresses``: ``(nodes, failed, samples)``, their spans added to ``spans``."""
    from slabcalc.analysis.diagnosis import interval as interval_of
    from slabcalc.analysis.sampled import sample_items as sampled
    from slabcalc.analysis.watch import span_seconds
    from slabcalc.inputs.client import poll
    from slabcalc.inputs.dumps import dump_from_replies

    nodes, failed, samples, first = [], [], [], {}
    readings = poll(addresses, timeout, interval or 0, 1 if interval is None else 2, tls, sample_items or 0)
    if interval is not None:   # the same reader and clock as --watch, read twice
        for address, replies in zip(addresses, next(readings)[1]):
            if not isinstance(replies, NodeError):
                first[str(address)] = dump_from_replies(str(address), replies)
        if waiting is not None:
            waiting(interval)
    elapsed, replied = next(readings) if addresses else (0.0, [])
    for address, replies in zip(addresses, replied):
        try:
            if isinstance(replies, NodeError):
                raise replies
            node = analyse(dump_from_replies(str(address), replies))
            if interval is not None:
                if str(address) not in first:
                    raise NodeError(f"{address}: the first reading failed")
                spans[node.node] = interval_of(first[str(address)], node, span_seconds(elapsed))
        except (NodeError, DumpError) as exc:
            failed.append((str(address), str(exc).removeprefix(f"{address}: ")))
            continue
        nodes.append(node)
        if sample_items:
            samples.append(sampled(node, replies.get("metadump_error", [None])[0], replies.get("metadump", []),
                                   sample_items))
    return nodes, tuple(failed), tuple(samples)
