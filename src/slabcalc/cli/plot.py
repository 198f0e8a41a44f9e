"""Pictures of where the memory goes: per-class bars, a simulation timeline and hit-ratio curves.

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


TOP_CLASSES = 8        # classes of the timeline drawn each on its own; the rest are summed as one


def _ranked(timeline: Sequence[Mapping], top: int) -> tuple[list, list]:
    """The ``top`` classes by the most pages they held at any step (ties: the lower id), and the rest."""
    most: dict = {}
    for s in timeline:
        most[s["class"]] = max(most.get(s["class"], 0), s["pages"])
    ranked = sorted(most, key=lambda c: (-most[c], c))
    if len(ranked) <= top + 1:          # one class left over is drawn as itself, not as "1 other"
        return sorted(ranked), []
    return sorted(ranked[:top]), sorted(ranked[top:])


def plot_timeline(timeline: Sequence[Mapping], path: str, title: str | None = None,
                  hit_ratio: Sequence[tuple] | None = None, top: int = TOP_CLASSES) -> None:
    """A simulation over time: pages held per class, items and evictions per class, and the hit ratio.

    ``timeline`` is a list of samples, one per class per time step, each a
    mapping with:

    * ``time`` -- a number (seconds, or requests so far): the x axis;
    * ``class`` -- the slab class id;
    * ``pages`` -- pages the class holds at that time;
    * ``items`` -- items stored in the class at that time;
    * ``evicted`` -- evictions from the class so far (cumulative).

    Classes missing from a step are drawn as holding nothing then.  The ``top`` classes by the
    most pages they held are drawn each in its own colour, the others summed as one grey series
    ("N other classes"), so that many classes stay readable; a legend names them.  The upper
    panel stacks pages per class; the next draws items (solid) and evictions (dashed).
    ``hit_ratio`` (``(time, gets, hits)`` per step, :func:`slabcalc.analysis.curve.hit_ratio_steps`)
    adds a panel of each step's hits over its gets (a step without gets is left out).
    """
    fmt = _format(path)
    plt = _pyplot()
    times, groups, others = _timeline_groups(timeline, top)
    palette = [plt.get_cmap("tab10")(i) for i in (0, 1, 2, 3, 4, 5, 6, 8, 9)]     # tab10 without its grey
    shown = len(groups) - (1 if others else 0)
    colours = [palette[i % len(palette)] for i in range(shown)] + (["#9a9a9a"] if others else [])
    panels = 3 if hit_ratio else 2
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(9, 2.6 * panels + 1))
    try:
        _draw_pages(axes[0], times, groups, colours, title)
        _draw_items(axes[1], times, groups, colours)
        if hit_ratio:
            _draw_hit_ratio(axes[2], hit_ratio)
        axes[-1].set_xlabel("time")
        fig.tight_layout()
        fig.savefig(path, format=fmt)
    finally:
        plt.close(fig)


def _timeline_groups(timeline: Sequence[Mapping], top: int) -> tuple[list, list[tuple], list]:
    """The steps' times, the series drawn -- ``(label, pages, items, evicted)`` each, one value a step: the
    ``top`` classes each on its own, then the others summed as one -- and those other classes."""
    times = sorted({s["time"] for s in timeline})
    shown, others = _ranked(timeline, top)
    at = {(s["time"], s["class"]): s for s in timeline}

    def series(classes, name):
        return [sum(at[(t, c)][name] if (t, c) in at else 0 for c in classes) for t in times]

    groups = [([c], f"class {c}") for c in shown]
    if others:
        groups.append((others, f"{len(others)} other classes"))
    return times, [(label, series(classes, "pages"), series(classes, "items"), series(classes, "evicted"))
                   for classes, label in groups], others


def _draw_pages(ax, times: list, groups: list[tuple], colours: list, title: str | None) -> None:
    """The upper panel: pages per class, stacked, and the legend naming the classes."""
    if groups:
        ax.stackplot(times, *[pages for _, pages, _, _ in groups], labels=[label for label, *_ in groups],
                     colors=colours)
    ax.set_ylabel("pages")
    ax.set_title(title or "simulated memory per slab class")
    if groups:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="slab class", title_fontsize=7)


def _draw_items(ax, times: list, groups: list[tuple], colours: list) -> None:
    """The next panel: items per class (solid) and its evictions so far (dashed, where it evicted)."""
    for (label, _, items, evicted), colour in zip(groups, colours):
        ax.plot(times, items, label=label, color=colour)
        if any(evicted):
            ax.plot(times, evicted, linestyle="--", color=colour, label=f"{label} evicted")
    ax.set_ylabel("items (evicted dashed)")


def _draw_hit_ratio(ax, hit_ratio: Sequence[tuple]) -> None:
    """The lower panel: each step's hits over its gets (a step without gets left out)."""
    steps = [(t, hits / gets) for t, gets, hits in hit_ratio if gets]
    ax.plot([t for t, _ in steps], [r for _, r in steps], "o-", color="#2a7f3f", markersize=3,
            label="hits / gets of each step")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("hit ratio")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


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
