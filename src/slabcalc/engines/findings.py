"""Calcification: classes evicting while other classes hold memory they cannot use (data: the words
that say it to people are :mod:`slabcalc.records.simulate`'s)."""

from __future__ import annotations

from typing import Sequence

from slabcalc.engines.results import ClassResult, Finding, Totals


def finding(rows: Sequence[ClassResult], peak, totals: Totals) -> Finding | None:
    """Classes that evicted while other classes held free chunks or expired items.

    None when nothing evicted, or when no other class holds idle memory at the
    end.  ``peak`` (the most free chunk bytes elsewhere seen at an eviction,
    checked once per second of the workload) only adds to a finding: alone it
    is no calcification -- while classes still fill their newest page every
    eviction sees free chunks elsewhere, and a class that later evicts used
    them (issue 30: a Zipf trace whose every class evicted was reported as
    evicting "while other classes held 0 bytes").
    """
    evicting = tuple(r.slab_class.id for r in rows if r.evicted)
    if not evicting:
        return None
    others = [r for r in rows if r.slab_class.id not in evicting]
    idle = {r.slab_class.id: r.free_chunks * r.slab_class.chunk_size + r.expired_bytes for r in others}
    holders = tuple(sorted((c for c in idle if idle[c]), key=lambda c: (-idle[c], c)))
    free_bytes = sum(r.free_chunks * r.slab_class.chunk_size for r in others)
    expired_bytes = sum(r.expired_bytes for r in others)
    if not free_bytes and not expired_bytes:
        return None
    return Finding(evicting, sum(r.evicted for r in rows), free_bytes, expired_bytes, holders, peak[0], peak[1],
                   peak[2], totals.pages_moved, totals.global_page_pool)
