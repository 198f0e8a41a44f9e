"""The random-shape corpus of issue 38: captures of real servers, and the model replayed against them.

A stored capture (``tests/data/random/<release>/<id>.json.gz``) holds the shape (tests/random_shapes.py),
the digest of the workload it was replayed from, and two or three *runs* of a fresh server, each the
paced replay of tests/paced.py (the workload on its own clock, a snapshot every 10 s right before the
operations of that second): per snapshot the server's ``stats``, ``total_pages`` per class and
``number``/``evicted`` per class of ``stats items``.

A figure agrees (:func:`verdict`) when, at every snapshot, it is within tolerance of one of the real
runs or between them: pages per class +-1; ``evictions``, ``curr_items``, ``get_hits`` (and, with
extstore, ``extstore_objects_written``) within 3 % or 300; ``slabs_moved`` +-2.  The server disagrees
with itself (:func:`self_disagreement`) where two of its runs are further apart than that.

Capturing needs a real server (``capture``: stdlib only); the comparison imports slabcalc.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import random_shapes

DATA = Path(__file__).parent / "data" / "random"
COUNTERS = ("evictions", "curr_items", "get_hits")
EXT_COUNTERS = ("extstore_objects_written",)
KEPT_ITEMS = ("number", "evicted", "outofmemory", "reclaimed")


# -- capture (real server) -------------------------------------------------------------------

def _trim(snapshot: dict) -> dict:
    pages = {k.split(":")[0]: int(v) for k, v in snapshot["slabs"].items() if k.endswith(":total_pages")}
    items: dict = {}
    for name, value in snapshot["items"].items():
        _, cls, field = name.split(":", 2)
        if field in KEPT_ITEMS:
            items.setdefault(cls, {})[field] = int(value)
    return {"time": snapshot["time"], "late": snapshot["late"], "uptime": snapshot["uptime"],
            "stats": snapshot["stats"], "pages": pages, "items": items}


def capture_run(shape: dict, binary: str, rows: list | None = None) -> dict:
    """One paced replay of ``shape`` into a fresh server at ``binary``."""
    import paced

    rows = rows if rows is not None else random_shapes.workload(shape)
    scenario = paced.Scenario(shape["id"], tuple(random_shapes.server_args(shape)), shape["duration"],
                              lambda: rows, releases=(shape["release"],))
    result = paced.capture(scenario, memcached=binary)
    return {"boot": result.boot, "version": result.version, "snapshots": [_trim(s) for s in result.snapshots],
            "tick": result.tick}


def instrument_run(saved: Path | None, save_to: Path | None, make) -> dict:
    """An instrument's replay (scripts/each_second.py, scripts/poll_maintainer.py): the one ``saved``
    before (read as :func:`load` reads a capture), or ``make()``'s, kept at ``save_to`` when given."""
    if saved:
        return load(saved)
    run = make()
    if save_to:
        with gzip.open(save_to, "wt", encoding="utf-8") as out:
            json.dump(run, out)
    return run


def path_of(shape: dict, directory: Path = DATA) -> Path:
    return directory / shape["release"] / f"{shape['id']}.json.gz"


def save(record: dict, directory: Path = DATA) -> Path:
    path = path_of(record["shape"], directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as out:
        json.dump(record, out, separators=(",", ":"))
    tmp.rename(path)
    return path


def stored(directory: Path = DATA) -> list[Path]:
    return sorted(directory.glob("*/*.json.gz"))


def drawn(record: dict) -> list:
    """``record``'s workload drawn again from its shape's seed, held to the digest the capture stored."""
    rows = random_shapes.workload(record["shape"])
    assert random_shapes.digest(rows) == record["digest"], "the generator no longer draws the captured workload"
    return rows


def load(path: Path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as src:
        return json.load(src)


# -- agreement -------------------------------------------------------------------------------

def _near(model: int, real: int, pct: float, floor: int) -> bool:
    return abs(model - real) <= max(floor, real * pct / 100)


def _agrees(model: int, reals: list[int], pct: float, floor: int) -> bool:
    return min(reals) <= model <= max(reals) or any(_near(model, r, pct, floor) for r in reals)


def _figures(snapshot: dict, ext: bool) -> dict[str, tuple[int, float, int]]:
    """The compared figures of one real snapshot: name -> (value, pct, floor)."""
    stats = snapshot["stats"]
    out = {name: (int(stats[name]), 3, 300) for name in COUNTERS}
    out["slabs_moved"] = (int(stats["slabs_moved"]), 0, 2)
    if ext:
        out.update({name: (int(stats[name]), 3, 300) for name in EXT_COUNTERS if name in stats})
    for cls, pages in snapshot["pages"].items():
        out[f"class {cls} pages"] = (pages, 0, 1)
    return out


def self_disagreement(runs: list[dict], ext: bool = False) -> list[str]:
    """Where two real runs are further apart than the tolerance (``t=N: figure a vs b``): of the first pair
    of ``runs`` that is (in order: the first two, then the first and the third, ...), empty when none is.
    A third run is made where the first two disagree, or kept where a later replay disagreed with both
    (1.6.18 r01129: its two runs agreed, two more did not)."""
    for first in range(len(runs)):
        for second in range(first + 1, len(runs)):
            out = _apart(runs[first], runs[second], ext)
            if out:
                return out
    return []


def _apart(one: dict, other: dict, ext: bool) -> list[str]:
    """Where ``one`` run and the ``other`` are further apart than the tolerance."""
    out = []
    for i, snap in enumerate(one["snapshots"]):
        figs = [_figures(r["snapshots"][i], ext) for r in (one, other)]
        for name in sorted(set(figs[0]) | set(figs[1])):
            a, pct, floor = figs[0].get(name, (0, 0, 1))
            b = figs[1].get(name, (0, pct, floor))[0]
            if not _near(a, b, pct, floor):
                out.append(f"t={snap['time']}: {name} {a} vs {b}")
    return out


def model_states(record: dict, rows: list | None = None) -> list:
    """The model's state at each snapshot of ``record``: ``(time, Simulation)`` each."""
    import paced
    from slabcalc import configure, load_profile
    from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, simulate

    ops_of = {"set": SET, "get": GET, "delete": DELETE, "touch": TOUCH}
    shape = record["shape"]
    rows = rows if rows is not None else random_shapes.workload(shape)
    settings = configure(load_profile(shape["release"]), random_shapes.server_args(shape))
    ops = [(t, ops_of[op], key, len(key), value, ttl, 0) for t, op, key, value, ttl in rows]
    times = [s["time"] for s in record["runs"][0]["snapshots"]]
    boot = sum(r["boot"] for r in record["runs"]) / len(record["runs"])
    tick = paced.tick_us([r.get("tick") for r in record["runs"]])     # older captures measured none
    return simulate(settings, ops, boot=boot, at=times, tick_us=tick).snapshots


def model_figures(record: dict, rows: list | None = None) -> list[dict]:
    """The model's figures at each snapshot of ``record`` (name -> value)."""
    return figures(model_states(record, rows))


def figures(states: list) -> list[dict]:
    """The figures :func:`verdict` compares of each of :func:`model_states` (name -> value)."""
    out = []
    for _, state in states:
        t = state.totals
        figs = {"evictions": t.evicted, "curr_items": t.curr_items, "get_hits": t.hits, "slabs_moved": t.pages_moved}
        if state.extstore is not None:
            figs["extstore_objects_written"] = state.extstore["extstore_objects_written"]
        for row in state.classes:
            figs[f"class {row.slab_class.id} pages"] = row.pages
        out.append(figs)
    return out


def verdict(record: dict, model: list[dict] | None = None) -> list[str]:
    """Every figure of the model outside the tolerance of all real runs, at every snapshot (empty: agrees)."""
    model = model if model is not None else model_figures(record)
    ext = bool(record["shape"].get("ext"))
    misses = []
    for i, figs in enumerate(model):
        reals = [_figures(r["snapshots"][i], ext) for r in record["runs"]]
        names = set(figs) | {n for r in reals for n in r}
        for name in sorted(names):
            if name.startswith("extstore") and not ext:
                continue
            values = [r.get(name, (0, 0, 1))[0] for r in reals]
            pct, floor = next((r[name][1:] for r in reals if name in r), (0, 1))
            m = figs.get(name, 0)
            if not _agrees(m, values, pct, floor):
                misses.append(f"t={record['runs'][0]['snapshots'][i]['time']}: {name}: model {m}, "
                              f"server {'/'.join(map(str, values))}")
    return misses


def filled(record: dict) -> bool:
    """Whether the server was short of memory in some run: it evicted, moved a page, or failed a set
    for memory.  A shape that never is puts items in pages as they come, and the model agrees with the
    server on it whatever its rules for a full cache."""
    for run in record["runs"]:
        last = run["snapshots"][-1]
        stats = last["stats"]
        if (int(stats["evictions"]) or int(stats["slabs_moved"])
                or any(row.get("outofmemory", 0) for row in last["items"].values())):
            return True
    return False


def smaller_memory(record: dict) -> dict:
    """``record`` with a shape whose ``-m`` is three quarters as large: a model replayed with it should
    miss the server where the comparison can tell a model's memory apart at all."""
    import copy

    other = copy.deepcopy(record)
    other["shape"]["memory"] = max(1, record["shape"]["memory"] * 3 // 4)
    return other


# -- the stratified subset CI replays --------------------------------------------------------

def stratum(shape: dict) -> str:
    """The feature a shape stands for in the subset (the first that applies)."""
    opts = shape["options"]
    if shape.get("ext"):
        return "extstore"
    if opts.get("slab_automove") == 2:
        return "automove=2"
    if any(v >= 300_000 for p in shape["phases"] if p["sizes"]["kind"] == "fixed" for v in p["sizes"]["values"]):
        return "chunked"
    if "slab_sizes" in opts:
        return "slab_sizes"
    if "temporary_ttl" in opts:
        return "temporary_ttl"
    if len(shape["phases"]) > 1:
        return "size shift"
    if any(0 < ttl <= 10 for p in shape["phases"] for ttl, _ in p["ttls"]):
        return "short TTL"
    return "other"


def subset(shapes: list[dict], max_operations: int = 30_000, budget: int = 100_000) -> list[dict]:
    """Per release and stratum, the recorded agreeing shape and missing shape with the fewest operations
    (at most ``max_operations`` each; shapes with a flag simulate refuses left out), taken in turn
    across strata, smallest first, while a release's operations stay within ``budget``: the shapes CI
    replays.  ``shapes`` are agreement.json's entries."""
    firsts: dict = {}
    for s in sorted(shapes, key=lambda s: (s["operations"], s["id"])):
        if s["operations"] <= max_operations and not s.get("refused"):
            firsts.setdefault((s["release"], s["stratum"], s["agree"]), s)
    out = []
    for release in sorted({key[0] for key in firsts}):
        mine = sorted((s for key, s in firsts.items() if key[0] == release), key=lambda s: (s["operations"], s["id"]))
        # the smallest agreeing and the smallest missing shape first, whatever the budget
        first = [next(s for s in mine if s["agree"] is verdict) for verdict in (True, False)
                 if any(s["agree"] is verdict for s in mine)]
        spent = sum(s["operations"] for s in first)
        for s in mine:
            if s in first or spent + s["operations"] <= budget:
                out.append(s)
                spent += 0 if s in first else s["operations"]
    return out
