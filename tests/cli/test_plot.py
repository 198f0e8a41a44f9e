"""--plot: each plot kind draws what its data says (read back from matplotlib's own objects: bars, series,
legend texts, labels) into a PNG or SVG; a clear message without matplotlib."""

from __future__ import annotations

import builtins
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import ROOT, run

from slabcalc.cli.plot import PlotUnavailable, plot_classes, plot_timeline

DATA = Path(__file__).resolve().parents[1] / "data" / "stats"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MIB = 1 << 20


@pytest.fixture
def figures(monkeypatch):
    """Every figure saved while the test runs, as matplotlib's object (its axes, artists and texts)."""
    from matplotlib.figure import Figure

    saved = []
    real = Figure.savefig

    def keep(self, *args, **kwargs):
        saved.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return saved


def written(path: Path) -> None:
    """The file is the image its suffix names (what is in it: the figure checks below)."""
    data = path.read_bytes()
    if path.suffix == ".png":
        assert data.startswith(PNG_MAGIC)
    else:
        assert ET.fromstring(data).tag.endswith("svg")


def legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


def bar_heights(ax, label: str) -> list[float]:
    container = next(c for c in ax.containers if c.get_label() == label)
    return [round(p.get_height(), 6) for p in container.patches]


def stacked(ax) -> list[list[float]]:
    """Each stackplot layer's thickness at every x (a layer is a PolyCollection from fill_between: a start
    point, the bottom edge left to right, the top edge right to left, the closing point)."""
    from matplotlib.collections import PolyCollection

    layers = []
    for poly in (c for c in ax.collections if isinstance(c, PolyCollection)):
        vertices = poly.get_paths()[0].vertices
        n = (len(vertices) - 3) // 2
        bottom, top = vertices[1:n + 1, 1], vertices[-1 - n:-1, 1][::-1]
        layers.append([round(float(t - b), 6) for t, b in zip(top, bottom)])
    return layers


def check_classes(fig, rows) -> None:
    """plot_classes' figure: one bar a class, its parts the rows' bytes in MiB, a legend naming them."""
    ax, = fig.axes
    names = [str(r["class"]) if r["class"] else "pool" for r in rows]
    assert [t.get_text() for t in ax.get_xticklabels()] == names
    assert ax.get_xlabel() == "slab class" and ax.get_ylabel() == "MiB"
    assert legend_texts(ax)[:2] == ["requested bytes", "chunk waste"] and legend_texts(ax)[-1] == "free page bytes"
    assert bar_heights(ax, "free page bytes") == [round(r["free_bytes"] / MIB, 6) for r in rows]
    known = [round((r["requested_bytes"] or 0) / MIB, 6) for r in rows]
    assert bar_heights(ax, "requested bytes") == known


ROWS = [
    {"class": 1, "requested_bytes": 600_000, "chunk_waste": 100_000, "free_bytes": 348_576, "used_bytes": 700_000},
    {"class": 5, "requested_bytes": None, "chunk_waste": None, "free_bytes": 48_576, "used_bytes": 1_000_000},
]
TIMELINE = [{"time": t, "class": c, "pages": t // c, "items": 100 * t, "evicted": max(0, t - 5) * c}
            for t in range(12) for c in (1, 3)]


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_classes(tmp_path, suffix, figures):
    plot_classes(ROWS, str(tmp_path / f"c{suffix}"))
    written(tmp_path / f"c{suffix}")
    fig, = figures
    check_classes(fig, ROWS)
    # the row of unknown requested bytes is one grey "used" part: its used bytes, nothing else
    assert bar_heights(fig.axes[0], "used (requested unknown)") == [0, round(1_000_000 / MIB, 6)]


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_timeline(tmp_path, suffix, figures):
    plot_timeline(TIMELINE, str(tmp_path / f"t{suffix}"))
    written(tmp_path / f"t{suffix}")
    fig, = figures
    pages_ax, items_ax = fig.axes
    assert legend_texts(pages_ax) == ["class 1", "class 3"]
    assert stacked(pages_ax) == [[t // 1 for t in range(12)], [t // 3 for t in range(12)]]
    lines = {line.get_label(): list(line.get_ydata()) for line in items_ax.get_lines()}
    assert lines["class 1"] == [100 * t for t in range(12)]
    assert lines["class 3 evicted"] == [max(0, t - 5) * 3 for t in range(12)]
    assert items_ax.get_xlabel() == "time"


def many_classes() -> list[dict]:
    """24 classes over 5 steps: class c holds c pages (class 30 and up 1 each), 10 c items, c evictions."""
    return [{"time": t, "class": c, "pages": c if c < 30 else 1, "items": 10 * c, "evicted": c * t}
            for t in range(5) for c in list(range(1, 13)) + list(range(30, 42))]


def test_a_timeline_of_many_classes_draws_the_largest_and_sums_the_rest(tmp_path, figures):
    plot_timeline(many_classes(), str(tmp_path / "many.png"), top=8)
    fig, = figures
    pages_ax, items_ax = fig.axes
    # the 8 classes of the most pages (12 down to 5), then the other 16 summed as one series
    assert legend_texts(pages_ax) == [f"class {c}" for c in range(5, 13)] + ["16 other classes"]
    others = sum(range(1, 5)) + 12          # classes 1-4, and 12 classes of 1 page
    assert stacked(pages_ax) == [[c] * 5 for c in range(5, 13)] + [[others] * 5]
    colours = [tuple(p.get_facecolor()[0]) for p in pages_ax.collections]
    assert len(set(colours[:8])) == 8        # each shown class a colour of its own, none recycled
    lines = {line.get_label(): list(line.get_ydata()) for line in items_ax.get_lines()}
    assert lines["16 other classes"] == [10 * (sum(range(1, 5)) + sum(range(30, 42)))] * 5
    assert lines["16 other classes evicted"] == [(sum(range(1, 5)) + sum(range(30, 42))) * t for t in range(5)]


def test_the_hit_ratio_of_each_step_is_a_panel_of_its_own(tmp_path, figures):
    steps = [(0, 0, 0), (1, 10, 5), (2, 4, 4), (3, 8, 2), (4, 0, 0)]     # (time, gets, hits); no gets: no point
    plot_timeline(TIMELINE, str(tmp_path / "h.svg"), hit_ratio=steps)
    fig, = figures
    ratio_ax = fig.axes[2]
    line, = ratio_ax.get_lines()
    assert list(line.get_xdata()) == [1, 2, 3] and list(line.get_ydata()) == [0.5, 1.0, 0.25]
    assert ratio_ax.get_ylabel() == "hit ratio" and ratio_ax.get_ylim() == (0, 1.02)
    assert legend_texts(ratio_ax) == ["hits / gets of each step"]


def test_unknown_suffix(tmp_path):
    with pytest.raises(PlotUnavailable, match=r"\.png or \.svg"):
        plot_classes(ROWS, str(tmp_path / "c.pdf"))


def test_stats_and_report_plot(tmp_path, figures):
    from slabcalc.analysis.stats import analyse
    from slabcalc.inputs.dumps import parse_dump
    from slabcalc.records.stats import class_records

    path = DATA / "1.6.18-mixed.txt"
    result = run("stats", str(path), "--plot", str(tmp_path / "s.png"))
    assert result.exit_code == 0, result.output
    written(tmp_path / "s.png")
    check_classes(figures[0], [r for r in class_records(analyse(parse_dump([(str(path), path.read_text())])))
                               if isinstance(r.get("class"), int)])
    result = run("report", str(ROOT / "examples" / "items.csv"), "--plot", str(tmp_path / "r.svg"))
    assert result.exit_code == 0, result.output
    written(tmp_path / "r.svg")
    report = json.loads(run("report", str(ROOT / "examples" / "items.csv"), "--format", "json").stdout)
    check_classes(figures[1], report["classes"])


def test_missing_matplotlib_is_one_line(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    result = run("stats", str(DATA / "1.6.18-mixed.txt"), "--plot", str(tmp_path / "s.png"))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "Error: --plot needs matplotlib: pip install 'slabcalc[plot]'"
    assert not (tmp_path / "s.png").exists()


def test_simulate_plot_of_the_classes(tmp_path: Path, figures) -> None:
    out = tmp_path / "simulate.png"
    args = ("simulate", str(ROOT / "examples" / "calcification.csv"), "-m", "2")
    result = run(*args, "--plot", str(out))
    assert result.exit_code == 0, result.output
    written(out)
    from slabcalc import configure, load_profile
    from slabcalc.engines.simulate import simulate
    from slabcalc.inputs.workload import read_workload
    from slabcalc.records.simulate import memory_records

    with open(args[1]) as f:
        ops = list(read_workload(f, args[1])[0])
    # memory_records' split of each page: test_simulate_memory_records_split_each_class_page_bytes
    check_classes(figures[0], memory_records(simulate(configure(load_profile("1.6.45"), ["-m", "2"]), ops)))


def test_simulate_plot_of_the_timeline_has_each_steps_hit_ratio(tmp_path: Path, figures) -> None:
    out = tmp_path / "simulate.png"
    args = ("simulate", str(ROOT / "examples" / "calcification.csv"), "-m", "2", "--every", "10")
    result = run(*args, "--plot", str(out))
    assert result.exit_code == 0, result.output
    written(out)
    pages_ax, _, ratio_ax = figures[0].axes
    timeline = json.loads(run(*args, "--format", "json").stdout)["timeline"]
    assert legend_texts(pages_ax) == [f"class {c}" for c in sorted({r["class"] for r in timeline})]
    # each step's hits over gets, counted by an independent pass: simulate stopped at the step's end
    # (the replay of the workload's operations before that time, as a shorter file)
    ops = (ROOT / "examples" / "calcification.csv").read_text().splitlines()
    header, rows = ops[0], ops[1:]
    ends = sorted({r["time"] for r in timeline})
    before = (0, 0)
    expected = []
    for end in ends:
        part = tmp_path / "part.csv"
        part.write_text("\n".join([header] + [r for r in rows if float(r.split(",")[0]) < end]) + "\n")
        totals = json.loads(run("simulate", str(part), "-m", "2", "--format", "json").stdout)["totals"]
        now = (totals["cmd_get"], totals["get_hits"])
        if now[0] > before[0]:
            expected.append((end, (now[1] - before[1]) / (now[0] - before[0])))
        before = now
    line, = ratio_ax.get_lines()
    assert [float(x) for x in line.get_xdata()] == [t for t, _ in expected]
    assert [float(y) for y in line.get_ydata()] == pytest.approx([r for _, r in expected])
    assert len(expected) >= 3


def test_simulate_memory_records_split_each_class_page_bytes() -> None:
    import io

    from slabcalc import configure, load_profile
    from slabcalc.engines.simulate import simulate
    from slabcalc.inputs.workload import read_workload
    from slabcalc.records.simulate import memory_records

    settings = configure(load_profile("1.6.18"), ["-m", "2", "-o", "no_modern"])
    ops, _ = read_workload(io.StringIO("time,key,value_size\n0,a,100\n0,b,100\n0,c,5000\n"), "w.csv")
    rows = memory_records(simulate(settings, ops))
    # 48 header + 8 cas + 2 key + 102 value = 160 bytes: class 4 (192); 5060 bytes: class 19 (5680)
    assert [r["class"] for r in rows] == [4, 19]
    # no_modern: no slab_reassign, so a page is chunk_size x perslab bytes, not 1 MiB
    assert rows[0]["used_bytes"] == 2 * 192 and rows[0]["free_bytes"] == 192 * (2 ** 20 // 192) - 2 * 192
    assert rows[1]["used_bytes"] == 5680 and rows[1]["free_bytes"] == 5680 * (2 ** 20 // 5680) - 5680


def test_the_global_page_pool_is_a_bar_of_its_own(tmp_path):
    # a saved 1.6.18 reading, its global page pool (class 0 in stats' records) given 3 pages: none of
    # the saved readings has pages in the pool, so the test used to skip its check with an if
    from slabcalc.analysis.stats import analyse
    from slabcalc.inputs.dumps import parse_dump
    from slabcalc.records.stats import class_records

    path = ROOT / "tests" / "data" / "stats" / "pairs" / "1.6.18-healed-after.txt"
    text = path.read_text()
    assert "STAT slab_global_page_pool 0\n" in text
    text = text.replace("STAT slab_global_page_pool 0", "STAT slab_global_page_pool 3")
    node = analyse(parse_dump([(str(path), text)]))
    rows = class_records(node)
    assert node.pool_pages == 3
    assert rows[-1]["class"] == 0 and rows[-1]["free_bytes"] == 3 << 20 and rows[-1]["used_bytes"] == 0
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none"}):      # text as text, to be read back
        plot_classes(rows, str(tmp_path / "pool.svg"))
    labels = [t.text for t in ET.parse(tmp_path / "pool.svg").iter() if t.tag.endswith("text")]
    assert labels[:3] == ["6", "12", "pool"]          # the x tick labels come first
