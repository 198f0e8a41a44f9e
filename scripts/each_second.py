#!/usr/bin/env python3
"""A stored random shape replayed into a real server with a snapshot every second, beside the model at
the same seconds: where within a 10 s window a miss begins (issue 38's misses of timing).

    python scripts/each_second.py tests/data/random/1.6.18/r01088.json.gz --save /tmp/r01088.json.gz
    python scripts/each_second.py tests/data/random/1.6.18/r01088.json.gz --load /tmp/r01088.json.gz --from 24 --to 46
    python scripts/each_second.py tests/data/random/1.6.45/r01036.json.gz --binary /path/to/memcached-1.6.45 --classes 38

One paced replay (tests/paced.py, 1 s snapshots) of the shape's workload into a fresh server (the installed
memcached, or ``--binary``), or a replay saved before (``--load``); then the model replayed on the same
workload with that run's start and its tick (``paced.measure_tick``), and per second: ``reclaimed``, ``crawler_reclaimed``, ``curr_items``,
``slabs_moved``, ``evictions`` and the LRU maintainer's wake-ups (``lru_maintainer_juggles``; the model's
counted from its thread when run as plain Python, ``SLABCALC_PURE=1``, else ``?``), model/server, with each ``--classes``' pages, free chunks and items.  A line
whose figures differ is marked ``*``; ``--lru`` adds each class's HOT, WARM and COLD items, ``--ext``
extstore's objects and bytes written and its free pages.  Nothing is stored in the repository: the 10 s captures stay
the record (``scripts/capture_random.py``); this is an instrument.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import random_corpus  # noqa: E402
import random_shapes  # noqa: E402


def _capture(shape: dict, rows: list, binary: str) -> dict:
    import paced

    scenario = paced.Scenario(shape["id"], tuple(random_shapes.server_args(shape)), shape["duration"],
                              lambda: rows, releases=(shape["release"],), interval=1)
    result = paced.capture(scenario, memcached=binary)
    return {"boot": result.boot, "snapshots": result.snapshots, "tick": result.tick}


def _model(shape: dict, rows: list, boot: float, times: list, tick_us: int = 1_000_000) -> tuple[list, list[int]]:
    """The model's states at ``times`` and its maintainer's wake-ups up to each (the server's tick every
    ``tick_us``: the run's measured one)."""
    from slabcalc import configure, load_profile
    from slabcalc.engines import engine, maintainer
    from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, simulate

    ops_of = {"set": SET, "get": GET, "delete": DELETE, "touch": TOUCH}
    settings = configure(load_profile(shape["release"]), random_shapes.server_args(shape))
    ops = [(t, ops_of[op], key, len(key), value, ttl, 0) for t, op, key, value, ttl in rows]
    wakes, marks = [0], []
    step, snapshot_at = maintainer.Maintainer.step, engine.Engine.snapshot_at

    def counted_step(self):         # plain Python only (SLABCALC_PURE=1): a compiled class is not patched
        wakes[0] += 1
        step(self)

    def marked_snapshot(self, when):
        out = snapshot_at(self, when)
        marks.append(wakes[0])
        return out

    try:
        maintainer.Maintainer.step, engine.Engine.snapshot_at = counted_step, marked_snapshot
    except (TypeError, AttributeError):     # compiled: its classes take no new methods
        return simulate(settings, ops, boot=boot, at=times, tick_us=tick_us).snapshots, [-1] * len(times)
    try:
        states = simulate(settings, ops, boot=boot, at=times, tick_us=tick_us).snapshots
    finally:
        maintainer.Maintainer.step, engine.Engine.snapshot_at = step, snapshot_at
    if len(marks) != len(times):            # compiled: its own calls do not go through the class's dict
        marks = [-1] * len(times)
    return states, marks


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", type=Path, help="a stored random shape (tests/data/random/RELEASE/ID.json.gz)")
    parser.add_argument("--binary", default="/usr/bin/memcached")
    parser.add_argument("--save", type=Path, help="keep the 1 s replay here (gzipped JSON)")
    parser.add_argument("--load", type=Path, help="a 1 s replay saved before: no server is started")
    parser.add_argument("--classes", default="", help="classes to show, e.g. 37,39")
    parser.add_argument("--lru", action="store_true", help="with --classes: their HOT/WARM/COLD items too")
    parser.add_argument("--ext", action="store_true", help="extstore's objects and bytes written, and its free pages")
    parser.add_argument("--from", dest="first", type=float, default=0)
    parser.add_argument("--to", dest="last", type=float, default=1e9)
    opts = parser.parse_args(argv)
    shape = random_corpus.load(opts.capture)["shape"]
    rows = random_shapes.workload(shape)
    run = random_corpus.instrument_run(opts.load, opts.save, lambda: _capture(shape, rows, opts.binary))
    times = [s["time"] for s in run["snapshots"]]
    import paced

    states, marks = _model(shape, rows, run["boot"], times, paced.tick_us([run.get("tick")]))
    classes = [c for c in opts.classes.split(",") if c]
    names = (("reclaimed", "reclaimed"), ("crawler_reclaimed", "crawler_reclaimed"), ("curr_items", "curr_items"),
             ("slabs_moved", "pages_moved"), ("evictions", "evicted"))
    before_m = before_s = 0
    print(f"{shape['id']} ({shape['release']}, {' '.join(random_shapes.server_args(shape))}), boot {run['boot']}")
    for (when, state), wakes, snap in zip(states, marks, run["snapshots"]):
        stats = snap["stats"]
        juggles = int(stats.get("lru_maintainer_juggles", 0))
        cells = [f"{name} {getattr(state.totals, attr)}/{stats.get(name, '-')}" for name, attr in names]
        differ = any(str(getattr(state.totals, attr)) != stats.get(name) for name, attr in names)
        for c in classes:
            row = next((r for r in state.classes if r.slab_class.id == int(c)), None)
            model = (row.pages, row.free_chunks, row.items) if row else (0, 0, 0)
            real = (int(snap["slabs"].get(f"{c}:total_pages", 0)), int(snap["slabs"].get(f"{c}:free_chunks", 0)),
                    int(snap["items"].get(f"items:{c}:number", 0)))
            differ |= model != real
            cells.append(f"c{c} pages {model[0]}/{real[0]} free {model[1]}/{real[1]} items {model[2]}/{real[2]}")
            if opts.lru:
                segs = [(getattr(row, f"number_{seg}", 0) if row else 0, snap["items"].get(f"items:{c}:number_{seg}", "-"))
                        for seg in ("hot", "warm", "cold")]
                cells.append("h/w/c " + " ".join(f"{m}/{r}" for m, r in segs))
        if opts.ext and state.extstore is not None:
            for name in ("extstore_objects_written", "extstore_bytes_written", "extstore_pages_free"):
                model, real = state.extstore.get(name, "-"), stats.get(name, "-")
                differ |= str(model) != real
                cells.append(f"{name[9:]} {model}/{real}")
        cells.append(f"wakes {wakes - before_m if wakes >= 0 else '?'}/{juggles - before_s}")
        before_m, before_s = wakes, juggles
        if opts.first <= when <= opts.last:
            print(f"{'*' if differ else ' '} t={when:g}  " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
