"""What a hit-ratio curve costs against one replay (issue 39: curves in bounded memory).

Writes issue 39's trace (``sample_bench.recipe``: Zipf 0.9 over ``--objects`` objects, log-normal sizes
50 B-200 KB, 20 000 requests a second; ``--requests``, 1 M by default) as an oracleGeneral file, or with
``--csv`` as a workload CSV (each request a get, an object's first a set before it), then runs, each as
a child process of its own through the command line:

- one replay: ``slabcalc simulate FILE -m LARGEST`` (the curve's largest -m);
- the curve: ``slabcalc simulate FILE -m 64,128,256,512,1024,2048`` (``--limits``);
- with ``--held``, the same curve with the workload held in a list and handed to each worker whole (the
  path before the compact copy, ``compact_copy`` replaced for that run), on the same engine;
- with ``--before SRC`` (another checkout's ``src``), the same curve run from that source.

For each it prints the CPU (user + system) and the peak RSS of the child and everything it waited for
(its pool's workers): ``os.wait4``'s resource usage of that child, which is getrusage of its self and
its children, so one run's peak never hides in another's.  Then the curve's CPU and peak RSS over the
one replay's (issue 39's targets: CPU at most 1.2x a point, peak RSS at most 1.5x).

Run: python benchmarks/curve_bench.py [--requests 1000000] [--objects 200000] [--csv] [--held] [--before SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sample_bench import recipe, write_files  # noqa: E402

LIMITS = "64,128,256,512,1024,2048"


def write_trace(directory: str, requests: int, objects: int, csv: bool) -> str:
    if csv:
        return write_files(directory, requests, objects)[1]
    import numpy as np

    from slabcalc.inputs.traces import RECORDS

    clocks, ids, sizes = recipe(requests, objects)
    path = os.path.join(directory, "recipe.oracleGeneral")
    records = np.zeros(requests, dtype=RECORDS)
    records["clock"], records["obj"], records["size"], records["next"] = clocks, ids, sizes, -1
    records.tofile(path)
    return path


# the command line with the compact copy replaced by a list of the operations: the curve as it was before it
HELD = ("import contextlib, sys\n"
        "import slabcalc.inputs.compact as compact\n"
        "compact.compact_copy = contextlib.contextmanager(lambda ops, directory=None: (yield list(ops), None))\n"
        "from slabcalc.cli import main\n"
        "sys.argv[0] = 'slabcalc'\n"
        "main()\n")


def measured(args: list[str], source: str | None = None, held: bool = False) -> dict:
    """``slabcalc simulate ARGS --format json`` in a child: CPU seconds, wall seconds, peak RSS (bytes) of the
    child and its waited-for children (os.wait4), and its document."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = source
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        command = ["-c", HELD] if held else ["-m", "slabcalc"]
        child = subprocess.Popen([sys.executable, *command, "simulate", *args, "--format", "json"],
                                 stdout=subprocess.PIPE, stderr=err, env=env)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        child.stdout.close()
        if child.returncode:
            err.seek(0)
            sys.exit(f"simulate {' '.join(args)} failed: {err.read().decode().strip()}")
        err.seek(0)
        said = err.read().decode()
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss": usage.ru_maxrss * 1024,
            "doc": json.loads(out), "stderr": said}


def line(name: str, run: dict) -> str:
    return f"{name:<24} {run['cpu']:8.1f} s CPU {run['wall']:8.1f} s wall {run['rss'] / 1e6:8.0f} MB peak RSS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--objects", type=int, default=200_000)
    parser.add_argument("--limits", default=LIMITS)
    parser.add_argument("--csv", action="store_true", help="a workload CSV instead of an oracleGeneral trace")
    parser.add_argument("--held", action="store_true", help="also the curve from a list (the path before)")
    parser.add_argument("--before", default=None, help="another checkout's src: its curve, for comparison")
    parser.add_argument("--tmp", default=None, help="where the trace is written")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object too")
    args = parser.parse_args()
    from slabcalc.engines.simulate import engine_build

    limits = args.limits.split(",")
    largest = max(limits, key=int)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        path = write_trace(tmp, args.requests, args.objects, args.csv)
        print(f"engine build: {engine_build()}; {args.requests:,} requests over {args.objects:,} objects "
              f"({'CSV' if args.csv else 'oracleGeneral'}, {os.path.getsize(path) / 1e6:.0f} MB); "
              f"{os.cpu_count()} cores", flush=True)
        one = measured([path, "-m", largest])
        print(line(f"one replay -m {largest}", one), flush=True)
        curve = measured([path, "-m", args.limits])
        print(line(f"curve of {len(limits)}", curve), flush=True)
        held = "held in memory" in curve["stderr"]
        figures = {"one": one, "curve": curve}
        for name, wanted, options in (("held", args.held, {"held": True}), ("before", args.before,
                                                                              {"source": args.before})):
            if not wanted:
                continue
            other = figures[name] = measured([path, "-m", args.limits], **options)
            print(line(f"curve, --{name}", other), flush=True)
            same = [r["get_hits"] for r in other["doc"]["curve"]] == [r["get_hits"] for r in curve["doc"]["curve"]]
            print(f"  same hits at every -m: {same}", flush=True)
    print(f"curve / one replay: CPU {curve['cpu'] / one['cpu']:.2f}x ({curve['cpu'] / len(limits) / one['cpu']:.2f}x "
          f"a point; target 1.2x), peak RSS {curve['rss'] / one['rss']:.2f}x (target 1.5x)"
          + ("; the workload did not fit a compact copy: held in memory" if held else ""))
    for name in ("held", "before"):
        if name in figures:
            other = figures[name]
            print(f"--{name} / one replay: CPU {other['cpu'] / one['cpu']:.2f}x, peak RSS "
                  f"{other['rss'] / one['rss']:.2f}x")
    hits = [(row["limit_maxbytes"] >> 20, round(row["hit_ratio"], 4)) for row in curve["doc"]["curve"]]
    print(f"hit ratio by -m: {hits}; the one replay's: "
          f"{one['doc']['totals']['get_hits'] / max(1, one['doc']['totals']['cmd_get']):.4f}")
    if args.json:
        print(json.dumps({k: {f: v[f] for f in ("cpu", "wall", "rss")} for k, v in figures.items()}))


if __name__ == "__main__":
    main()
