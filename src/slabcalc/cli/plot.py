"""Pictures of where the memory goes: per-class bars and a simulation timeline.

matplotlib is an optional extra (``pip install 'slabcalc[plot]'``), imported
only when a plot is drawn, with the Agg backend (no display needed).  The
format follows the file's suffix: ``.png`` or ``.svg``.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping, Sequence

from slabcalc.errors import PlotUnavailable  # noqa: F401 (raised here, caught by its callers)

FORMATS = (".png", ".svg")
MIB = 1 << 20


NEEDS = "--plot needs matplotlib: pip install 'slabcalc[plot]'"


def check_available() -> None:
    """:class:`PlotUnavailable` now, without importing it, when matplotlib is not installed: ``--plot``
    is refused before the work whose result it would draw (a whole replay) is done."""
    import importlib.util

    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise PlotUnavailable(NEEDS)


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable(NEEDS) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _format(path: str) -> str:
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in FORMATS:
        raise PlotUnavailable(f"{path}: the plot is written as .png or .svg, by the file's suffix")
    return suffix[1:]


def plot_classes(rows: Iterable[Mapping], path: str, title: str | None = None) -> None:
    """Memory per class as stacked bars: requested bytes, chunk waste and free page bytes.

    ``rows`` are the class records of ``slabcalc report`` or ``slabcalc
    stats`` (``class``, ``requested_bytes``, ``chunk_waste``, ``free_bytes``;
    a ``node`` field labels the bars of a pool ``node/class``).  An unknown
    requested size (``None``) draws the used bytes as one grey part.
    """
    fmt = _format(path)
    rows = [r for r in rows if isinstance(r.get("class"), int)]
    plt = _pyplot()
    nodes = {r.get("node") for r in rows}
    names = [str(r["class"]) if r["class"] else "pool" for r in rows]    # class 0: the global page pool
    labels = [f"{r['node']}/{name}" if len(nodes) > 1 else name for r, name in zip(rows, names)]
    known = [r.get("requested_bytes") is not None for r in rows]
    requested = [r["requested_bytes"] / MIB if k else 0 for r, k in zip(rows, known)]
    waste = [r["chunk_waste"] / MIB if k else 0 for r, k in zip(rows, known)]
    unknown = [0 if k else r.get("used_bytes", 0) / MIB for r, k in zip(rows, known)]
    free = [r["free_bytes"] / MIB for r in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(rows) + 2), 4.5))
    try:
        x = range(len(rows))
        ax.bar(x, requested, label="requested bytes", color="#4c72b0")
        ax.bar(x, waste, bottom=requested, label="chunk waste", color="#dd8452")
        if any(unknown):
            ax.bar(x, unknown, label="used (requested unknown)", color="#8c8c8c")
        bottom = [a + b + c for a, b, c in zip(requested, waste, unknown)]
        ax.bar(x, free, bottom=bottom, label="free page bytes", color="#c7d3e8")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=90 if len(nodes) > 1 or len(rows) > 20 else 0, fontsize=8)
        ax.set_xlabel("slab class")
        ax.set_ylabel("MiB")
        ax.set_title(title or "memory per slab class")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format=fmt)
    finally:
        plt.close(fig)


def plot_timeline(timeline: Sequence[Mapping], path: str, title: str | None = None) -> None:
    """A simulation over time: pages held per class, and items and evictions per class.

    ``timeline`` is a list of samples, one per class per time step, each a
    mapping with:

    * ``time`` -- a number (seconds, or requests so far): the x axis;
    * ``class`` -- the slab class id;
    * ``pages`` -- pages the class holds at that time;
    * ``items`` -- items stored in the class at that time;
    * ``evicted`` -- evictions from the class so far (cumulative).

    Classes missing from a step are drawn as holding nothing then.  The
    upper panel stacks pages per class; the lower one draws items (solid)
    and evictions (dashed) of each class.
    """
    fmt = _format(path)
    plt = _pyplot()
    times = sorted({s["time"] for s in timeline})
    classes = sorted({s["class"] for s in timeline})
    at = {(s["time"], s["class"]): s for s in timeline}

    def series(cls, name):
        return [at[(t, cls)][name] if (t, cls) in at else 0 for t in times]

    fig, (pages_ax, items_ax) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    try:
        if classes:
            pages_ax.stackplot(times, *[series(c, "pages") for c in classes], labels=[f"class {c}" for c in classes])
        pages_ax.set_ylabel("pages")
        pages_ax.set_title(title or "simulated memory per slab class")
        for c in classes:
            line, = items_ax.plot(times, series(c, "items"), label=f"class {c}")
            evicted = series(c, "evicted")
            if any(evicted):
                items_ax.plot(times, evicted, linestyle="--", color=line.get_color())
        items_ax.set_ylabel("items (evicted dashed)")
        items_ax.set_xlabel("time")
        if classes and len(classes) <= 20:
            pages_ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        fig.savefig(path, format=fmt)
    finally:
        plt.close(fig)


def plot_curve(points: Sequence[Mapping], path: str, title: str | None = None) -> None:
    """Hit ratio against the memory limit: the slab model's and the ideal LRU's of the same bytes.

    ``points`` are the records of ``slabcalc simulate -m A,B,C`` (``limit_maxbytes``,
    ``hit_ratio``, ``ideal_lru_hit_ratio``; a ratio of None, no gets, is left out).  The gap
    between the lines is what slab classes and calcification cost in hits.
    """
    fmt = _format(path)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for name, label, style in (("hit_ratio", "memcached (slab classes)", "o-"),
                                   ("ideal_lru_hit_ratio", "ideal LRU of the same bytes", "s--")):
            shown = [(p["limit_maxbytes"] / MIB, p[name]) for p in points if p.get(name) is not None]
            if shown:
                ax.plot([x for x, _ in shown], [y for _, y in shown], style, label=label)
        ax.set_xlabel("-m (MiB)")
        ax.set_ylabel("hit ratio")
        ax.set_ylim(0, 1.02)
        ax.set_title(title or "hit ratio by memory limit")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
        fig.tight_layout()
        fig.savefig(path, format=fmt)
    finally:
        plt.close(fig)
