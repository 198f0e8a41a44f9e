#!/usr/bin/env python3
"""Capture random shapes on real servers, and compare the model with the captures (issue 38).

    python scripts/capture_random.py capture --release 1.6.18 --seeds 1-150 --jobs 3
    python scripts/capture_random.py capture --release 1.6.45 --binary /path/to/memcached-1.6.45 --seeds 1-50
    python scripts/capture_random.py compare                 # every stored shape, per release
    python scripts/capture_random.py compare --release 1.6.18 --misses 5
    python scripts/capture_random.py compare --release 1.6.45 --ids 1053,1088 --misses 5
    python scripts/capture_random.py again --seeds 24,30       # once more, unsaved: the server against itself
    python scripts/capture_random.py again --seeds 1053 --times 3 --keep --release 1.6.45 --binary ...

``capture`` draws each seed's shape (tests/random_shapes.py), replays its workload into a fresh server
twice with tests/paced.py's paced replay (a third time when the two runs differ beyond the tolerance),
``--jobs`` shapes at a time (each its own server on its own free port, its own process), and writes
``tests/data/random/<release>/<id>.json.gz``.  A run whose snapshot came more than ``--late`` seconds
late (a loaded machine) is run again once, then kept with its lateness recorded.  A shape the server
refuses to start with is reported, not stored.

``compare`` replays the model on every stored capture and says per shape whether it agrees (every
figure at every snapshot within tolerance of one of its real runs or between them; tests/random_corpus.py)
and how often the server disagreed with itself.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import paced  # noqa: E402
import random_corpus  # noqa: E402
import random_shapes  # noqa: E402

DEFAULT_BINARY = {"1.6.18": "/usr/bin/memcached"}


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def capture_one(seed: int, release: str, binary: str, late: float, runs: int) -> str:
    shape = random_shapes.draw(seed, release)
    if random_corpus.path_of(shape).exists():
        return f"{shape['id']}: already stored"
    rows = random_shapes.workload(shape)
    ext = bool(shape.get("ext"))
    began = time.time()
    kept: list[dict] = []
    try:
        while len(kept) < runs or (len(kept) == runs and random_corpus.self_disagreement(kept, ext)):
            run = random_corpus.capture_run(shape, binary, rows)
            worst = max(s["late"] for s in run["snapshots"])
            if worst > late:
                run = random_corpus.capture_run(shape, binary, rows)
            kept.append(run)
            if len(kept) > runs:
                break
    except Exception as exc:        # a refused configuration, a server that died: reported, not stored
        return f"{shape['id']}: not captured: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    except SystemExit:              # SIGTERM (_exit_on_term): the server is stopped, so is this worker
        paced._remove_flash_files(random_shapes.server_args(shape))
        os._exit(1)
    record = {"shape": shape, "digest": random_shapes.digest(rows), "operations": len(rows),
              "args": random_shapes.server_args(shape), "runs": kept}
    path = random_corpus.save(record)
    apart = random_corpus.self_disagreement(kept[:2], ext)
    lates = [max(s["late"] for s in r["snapshots"]) for r in kept]
    return (f"{shape['id']}: {len(rows)} ops, {len(kept)} runs in {time.time() - began:.0f} s, late "
            f"{'/'.join(f'{x:.3f}' for x in lates)}, server apart at {len(apart)} figures"
            f"{' (' + apart[0] + ')' if apart else ''} -> {path}")


def again(opts) -> int:
    """Replay stored shapes once more: how far a run is from the stored runs (timing honesty under
    concurrency: run it alone, then beside ``--jobs`` captures, and compare).  ``--keep`` adds every run
    made, whichever way it falls, to the stored record: before a miss is called jitter, the same
    workload replayed into the server again."""
    binary = opts.binary or DEFAULT_BINARY.get(opts.release)
    for seed in [seed for seed in _seeds(opts.seeds) for _ in range(opts.times)]:
        shape = random_shapes.draw(seed, opts.release)
        record = random_corpus.load(random_corpus.path_of(shape))
        run = random_corpus.capture_run(shape, binary)
        ext = bool(shape.get("ext"))
        apart = [random_corpus.self_disagreement([stored, run], ext) for stored in record["runs"]]
        print(f"{shape['id']}: late {max(s['late'] for s in run['snapshots']):.3f}; apart from the stored runs at "
              f"{'/'.join(str(len(a)) for a in apart)} figures; between the stored runs "
              f"{len(random_corpus.self_disagreement(record['runs'], ext))}", flush=True)
        for a in apart:
            for line in a[:4]:
                print("    ", line)
        if opts.keep:           # one more real run of the same workload: the record's reference grows
            record["runs"].append(run)
            print(f"    kept: {len(record['runs'])} runs -> {random_corpus.save(record)}", flush=True)
    return 0


def _exit_on_term() -> None:
    """In a worker: SIGTERM unwinds (the paced replay's server is stopped by its context manager)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def capture(opts) -> int:
    binary = opts.binary or DEFAULT_BINARY.get(opts.release)
    if not binary:
        print(f"--binary is needed for {opts.release}", file=sys.stderr)
        return 2
    seeds = _seeds(opts.seeds)
    with ProcessPoolExecutor(opts.jobs, initializer=_exit_on_term) as pool:
        workers = [p.pid for p in pool._processes.values()] if pool._processes else []

        def stop(*_):           # kill PID stops the workers too, each stopping its server and flash file
            for pid in set(workers) | {p.pid for p in (pool._processes or {}).values()}:
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            os._exit(1)
        signal.signal(signal.SIGTERM, stop)
        futures = [pool.submit(capture_one, s, opts.release, binary, opts.late, 2) for s in seeds]
        for future in as_completed(futures):
            print(time.strftime("%H:%M:%S"), future.result(), flush=True)
    return 0


def compare_one(path: Path) -> tuple:
    record = random_corpus.load(path)
    shape = record["shape"]
    rows = random_shapes.workload(shape)
    if random_shapes.digest(rows) != record["digest"]:
        return shape, record, ["the workload drawn now is not the one captured (digest)"], None
    try:
        misses = random_corpus.verdict(record, random_corpus.model_figures(record, rows))
    except Exception as exc:
        misses = [f"the model refused: {type(exc).__name__}: {exc}"]
    apart = random_corpus.self_disagreement(record["runs"], bool(shape.get("ext")))     # any two of its runs
    return shape, record, misses, apart


def compare(opts) -> int:
    paths = [p for p in random_corpus.stored() if not opts.release or p.parent.name == opts.release]
    if opts.ids:
        wanted = {f"r{int(i):05d}" for i in _seeds(opts.ids)}
        paths = [p for p in paths if p.name.split(".")[0] in wanted]
    table: dict = defaultdict(lambda: {"shapes": 0, "agree": 0, "apart": 0})
    with ProcessPoolExecutor(opts.jobs) as pool:
        for shape, record, misses, apart in pool.map(compare_one, paths):
            row = table[shape["release"]]
            row["shapes"] += 1
            row["agree"] += not misses
            row["apart"] += bool(apart)
            print(f"{shape['release']} {shape['id']}: {'agrees' if not misses else f'{len(misses)} misses'}"
                  f"; server {'apart at ' + str(len(apart)) + ' figures' if apart else 'agrees with itself'}"
                  f"  [{' '.join(record['args'])}]")
            if opts.misses:
                for line in misses[:opts.misses]:
                    print("    ", line)
    for release, row in sorted(table.items()):
        print(f"{release}: {row['agree']} of {row['shapes']} shapes agree; two of the server's runs differ "
              f"beyond the tolerance on {row['apart']}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("--release", default="1.6.18")
    cap.add_argument("--binary")
    cap.add_argument("--seeds", required=True, help="e.g. 1-150 or 3,7,9-12")
    cap.add_argument("--jobs", type=int, default=3)
    cap.add_argument("--late", type=float, default=0.05)
    more = sub.add_parser("again")
    more.add_argument("--release", default="1.6.18")
    more.add_argument("--binary")
    more.add_argument("--seeds", required=True)
    more.add_argument("--keep", action="store_true", help="add the run to the stored record (a miss's jitter)")
    more.add_argument("--times", type=int, default=1, help="replay each shape this many times")
    cmp = sub.add_parser("compare")
    cmp.add_argument("--release")
    cmp.add_argument("--jobs", type=int, default=1)
    cmp.add_argument("--misses", type=int, default=0, metavar="N", help="print each shape's first N misses")
    cmp.add_argument("--ids", help="only these shapes, by number (e.g. 1053 or 1040-1099)")
    opts = parser.parse_args(argv)
    return {"capture": capture, "again": again, "compare": compare}[opts.mode](opts)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
