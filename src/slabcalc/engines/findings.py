"""Calcification: classes evicting while other classes hold memory they cannot use."""

from __future__ import annotations

from typing import Sequence

from slabcalc.engines.results import ClassResult, Finding, Model, Totals


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


def why(model: Model, pages_moved: int) -> str:
    """Why pages did (not) follow the evictions, from what ran -- never a cause the setup rules out."""
    if model.automove == 1 and model.extstore:
        text = (f"the extstore automover moved {pages_moved} page{'s' if pages_moved != 1 else ''}: it sends "
                f"pages only to the global pool, never to a class that evicts -- from a class with spare free "
                f"chunks over its {model.automove_window}-run window, or from the class of large items with the "
                f"oldest COLD tail when the pool is below slab_automove_freeratio of all pages; the write thread "
                f"keeps 3 pages of free chunks in each class it flushes, and header items get pages only from "
                f"that pool")
    elif model.automove == 1:
        text = (f"slab automover 1 moved {pages_moved} page{'s' if pages_moved != 1 else ''}: it moves at most "
                f"one a second, from the class with the oldest items (more than 2 pages) to one that evicts "
                f"with items younger than {model.automove_ratio:g} of those, once its {model.automove_window}-run "
                f"window has filled; a class with over 2.5 pages of free chunks and no eviction or new page in "
                f"the window gives pages to the global pool")
    elif model.automove == 2:
        text = (f"slab_automove=2 moved {pages_moved} page{'s' if pages_moved != 1 else ''}: one for each "
                f"eviction, from the next class with more than one page")
    else:
        text = "no page moves (slab_automove=0 or no slab_reassign): a page serves its first class for good"
    return text + "; a chunk freed by expiry or delete is reused only by its own class"


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
