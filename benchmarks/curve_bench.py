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

- with ``--each``, one replay at each -m of the curve, each a child: what the curve's points would cost
  run one by one (issue 39's "a point costs its replay" is the curve against their sum);
- libCacheSim's LRU (the ``oracle`` extra) at the same sizes on the same requests (the oracleGeneral
  file; with ``--csv`` its oracleGeneral twin), one child reading the trace once a size, and at the
  largest alone: the ratios issue 39 sets (curve / LRU at the same sizes at most 3x, one replay / LRU
  at most 2x).

For each it prints the CPU (user + system) and the peak RSS of the child and everything it waited for
(its pool's workers): ``os.wait4``'s resource usage of that child, which is getrusage of its self and
its children, so one run's peak never hides in another's.  Then the curve's CPU and peak RSS over the
one replay's (issue 39's targets: CPU at most 1.2x a point, peak RSS at most 1.5x).

Run: python benchmarks/curve_bench.py [--requests 1000000] [--objects 200000] [--csv] [--held] [--before SRC]
                                      [--each] [--no-lru]
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


def write_trace(directory: str, requests: int, objects: int, csv: bool) -> tuple[str, str]:
    """The file the curve reads, and the same requests as oracleGeneral (for libCacheSim)."""
    if csv:
        trace, path = write_files(directory, requests, objects)
        return path, trace
    import numpy as np

    from slabcalc.inputs.traces import RECORDS

    clocks, ids, sizes = recipe(requests, objects)
    path = os.path.join(directory, "recipe.oracleGeneral")
    records = np.zeros(requests, dtype=RECORDS)
    records["clock"], records["obj"], records["size"], records["next"] = clocks, ids, sizes, -1
    records.tofile(path)
    return path, path


# the command line with the compact copy replaced by a list of the operations: the curve as it was before it
HELD = ("import contextlib, sys\n"
        "import slabcalc.inputs.compact as compact\n"
        "compact.compact_copy = contextlib.contextmanager(lambda ops, directory=None: (yield list(ops), None))\n"
        "from slabcalc.cli import main\n"
        "sys.argv[0] = 'slabcalc'\n"
        "main()\n")


# libCacheSim's LRU at each size (bytes, argv[2:]) on the oracleGeneral file argv[1]: its miss ratios
LRU = ("import json, sys\n"
       "import libcachesim as lcs\n"
       "ratios = [lcs.LRU(int(size)).process_trace(lcs.TraceReader(sys.argv[1], "
       "trace_type=lcs.TraceType.ORACLE_GENERAL_TRACE))[0] for size in sys.argv[2:]]\n"
       "print(json.dumps({'miss_ratios': ratios}))\n")


def measured(args: list[str], source: str | None = None, held: bool = False, command: list[str] | None = None) -> dict:
    """``slabcalc simulate ARGS --format json`` (or ``python COMMAND ARGS``) in a child: CPU seconds, wall
    seconds, peak RSS (bytes) of the child and its waited-for children (os.wait4), and its document."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = source
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        if command is None:
            command = [*(["-c", HELD] if held else ["-m", "slabcalc"]), "simulate"]
            args = [*args, "--format", "json"]
        child = subprocess.Popen([sys.executable, *command, *args], stdout=subprocess.PIPE, stderr=err, env=env)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        child.stdout.close()
        if child.returncode:
            err.seek(0)
            sys.exit(f"{' '.join(command + args)} failed: {err.read().decode().strip()}")
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
    parser.add_argument("--each", action="store_true", help="also one replay at each -m (the points one by one)")
    parser.add_argument("--no-lru", action="store_true", help="without libCacheSim's LRU")
    parser.add_argument("--tmp", default=None, help="where the trace is written")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object too")
    parser.add_argument("--write", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:          # the child that writes the trace (see written)
        print(json.dumps(write_trace(args.write, args.requests, args.objects, args.csv)))
        return
    from slabcalc.engines.simulate import engine_build

    limits = args.limits.split(",")
    largest = max(limits, key=int)
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        path, trace = written(tmp, args)
        print(f"engine build: {engine_build()}; {args.requests:,} requests over {args.objects:,} objects "
              f"({'CSV' if args.csv else 'oracleGeneral'}, {os.path.getsize(path) / 1e6:.0f} MB); "
              f"{os.cpu_count()} cores", flush=True)
        one = measured([path, "-m", largest])
        print(line(f"one replay -m {largest}", one), flush=True)
        curve = measured([path, "-m", args.limits])
        print(line(f"curve of {len(limits)}", curve), flush=True)
        figures = {"one": one, "curve": curve}
        others(args, path, figures)
        if args.each:
            each(path, limits, figures)
        if not args.no_lru:
            lru(trace, limits, largest, figures)
    summary(args, limits, figures)


def written(directory: str, args) -> tuple[str, str]:
    """The trace, written by a child process: a child's peak RSS (``os.wait4``) starts from its parent's
    at the fork (Linux keeps the high-water mark across exec), and the recipe's arrays of 10 M requests
    took this process to 440 MB, which every child then reported as its own peak."""
    child = subprocess.run([sys.executable, __file__, "--write", directory, "--requests", str(args.requests),
                            "--objects", str(args.objects), *(["--csv"] if args.csv else [])],
                           capture_output=True, text=True, check=True)
    path, trace = json.loads(child.stdout)
    return path, trace


def others(args, path: str, figures: dict) -> None:
    """The same curve from a list (``--held``) or from another source (``--before``)."""
    for name, wanted, options in (("held", args.held, {"held": True}), ("before", args.before,
                                                                          {"source": args.before})):
        if not wanted:
            continue
        other = figures[name] = measured([path, "-m", args.limits], **options)
        print(line(f"curve, --{name}", other), flush=True)
        same = [r["get_hits"] for r in other["doc"]["curve"]] == [r["get_hits"] for r in figures["curve"]["doc"]["curve"]]
        print(f"  same hits at every -m: {same}", flush=True)


def each(path: str, limits: list[str], figures: dict) -> None:
    """One replay at each -m, each a child: the curve's points one by one."""
    runs = [measured([path, "-m", limit]) for limit in limits]
    for limit, run in zip(limits, runs):
        print(line(f"  one replay -m {limit}", run), flush=True)
    figures["each"] = {"cpu": sum(r["cpu"] for r in runs), "wall": sum(r["wall"] for r in runs),
                       "rss": max(r["rss"] for r in runs)}
    print(line("one replay at each -m", figures["each"]), flush=True)


def lru(trace: str, limits: list[str], largest: str, figures: dict) -> None:
    """libCacheSim's LRU at the curve's sizes, and at the largest alone (skipped without libcachesim)."""
    try:
        import libcachesim  # noqa: F401
    except ImportError:
        print("libCacheSim's LRU: libcachesim is not installed (pip install -e '.[oracle]')")
        return
    for name, sizes in (("lru", limits), ("lru_one", [largest])):
        run = figures[name] = measured([trace, *(str(int(mb) << 20) for mb in sizes)], command=["-c", LRU])
        label = f"libCacheSim LRU at {len(sizes)} sizes" if len(sizes) > 1 else f"libCacheSim LRU -m {largest}"
        print(line(label, run) + f"  hit ratios {[round(1 - r, 4) for r in run['doc']['miss_ratios']]}", flush=True)


def summary(args, limits: list[str], figures: dict) -> None:
    one, curve = figures["one"], figures["curve"]
    held = "held in memory" in curve["stderr"]
    print(f"curve / one replay: CPU {curve['cpu'] / one['cpu']:.2f}x ({curve['cpu'] / len(limits) / one['cpu']:.2f}x "
          f"a point; target 1.2x), peak RSS {curve['rss'] / one['rss']:.2f}x (target 1.5x)"
          + ("; the workload did not fit a compact copy: held in memory" if held else ""))
    if "each" in figures:
        print(f"curve / one replay at each -m: CPU {curve['cpu'] / figures['each']['cpu']:.2f}x "
              "(a point against its own replay; target 1.2x)")
    if "lru" in figures:
        print(f"curve / libCacheSim LRU at the same {len(limits)} sizes: CPU {curve['cpu'] / figures['lru']['cpu']:.2f}x "
              f"(target 3x); one replay / libCacheSim LRU at its size: "
              f"{one['cpu'] / figures['lru_one']['cpu']:.2f}x (target 2x)")
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
