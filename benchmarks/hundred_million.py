"""A hit-ratio curve of 100 M requests on this machine (issue 39: "100 M requests on this machine").

Writes issue 39's trace at 100 M requests (``sample_bench.recipe``: Zipf 0.9 over ``--objects``
objects, log-normal sizes 50 B-200 KB, 20 000 requests a second) as an oracleGeneral file (24 bytes a
request: 2.4 GB) in ``--tmp``, then runs through the command line, each a child of its own:

- the curve at ``--rate`` (1 % by default): ``slabcalc simulate FILE -m L1,...,L8 --sample 0.01`` --
  the reader draws the sample as it reads (the ids' hash, on numpy columns), the compact copy holds
  the sample alone and every -m replays it (issue 39's target: under 2 minutes);
- with ``--full``, the same curve without a sample, under a pseudo-terminal so that its progress
  (each -m as it finishes, with an estimate of the time left) is on stderr as an operator sees it;
  its last progress lines are printed (issue 39: it completes under 4 GB).

For each it prints the wall time, the CPU (user + system) and the peak RSS of the child and every
process it waited for (``os.wait4``), and the hit ratio at each -m; with ``--full`` each sampled
point's hit ratio against the full replay's, and whether the stated 95 % interval holds it.

Run (about 2 minutes, and with --full about 40 more on two cores: 38 min measured):
    python benchmarks/hundred_million.py [--requests 100000000] [--objects 20000000] [--rate 0.01] [--full]
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from curve_bench import line, measured, written  # noqa: E402

LIMITS = "2048,3072,4096,6144,8192,12288,16384,24576"


def on_a_terminal(args: list[str]) -> dict:
    """``slabcalc simulate ARGS --format json`` with stderr on a pseudo-terminal (the progress an operator
    sees), stdout a pipe: the figures of :func:`curve_bench.measured`, and the last lines of stderr."""
    leader, follower = pty.openpty()
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "slabcalc", "simulate", *args, "--format", "json"],
                             stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    said = bytearray()
    out = bytearray()
    os.set_blocking(child.stdout.fileno(), False)
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:             # the terminal closed: the child has ended
            break
        if not chunk:
            break
        said += chunk
        out += child.stdout.read() or b""
    out += child.stdout.read() or b""
    _, status, usage = os.wait4(child.pid, 0)
    os.close(leader)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"simulate {' '.join(args)} failed: {said.decode(errors='replace')[-2000:]}")
    lines = said.decode(errors="replace").replace("\r", "\n").split("\n")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": time.perf_counter() - start,
            "rss": usage.ru_maxrss * 1024, "doc": json.loads(out), "progress": [x for x in lines if x.strip()]}


def ratios(doc: dict) -> list[tuple[int, float]]:
    return [(row["limit_maxbytes"] >> 20, round(row["hit_ratio"], 4)) for row in doc["curve"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000_000)
    parser.add_argument("--objects", type=int, default=20_000_000)
    parser.add_argument("--limits", default=LIMITS)
    parser.add_argument("--rate", default="0.01")
    parser.add_argument("--full", action="store_true", help="also the curve without a sample")
    parser.add_argument("--tmp", default=None, help="where the trace is written (2.4 GB at 100 M requests)")
    parser.add_argument("--trace", default=None, help="an oracleGeneral file written before (by curve_bench.py "
                                                        "--write DIR --requests N --objects M): not written again")
    args = parser.parse_args()
    args.csv = False
    from slabcalc.engines.simulate import engine_build

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        start = time.perf_counter()
        path = args.trace or written(tmp, args)[0]
        how = "given" if args.trace else f"written in {time.perf_counter() - start:.0f} s"
        print(f"engine build: {engine_build()}; {os.path.getsize(path) // 24:,} requests (oracleGeneral, "
              f"{os.path.getsize(path) / 1e9:.2f} GB, {how}); {os.cpu_count()} cores", flush=True)
        sampled = measured([path, "-m", args.limits, "--sample", args.rate])
        print(line(f"curve of 8, --sample {args.rate}", sampled), flush=True)
        print(f"  sampled ops {sampled['doc']['sample']['sampled_ops']:,} of {sampled['doc']['sample']['ops']:,}; "
              f"hit ratio by -m: {ratios(sampled['doc'])}", flush=True)
        if not args.full:
            return
        full = on_a_terminal([path, "-m", args.limits])
        print(line("curve of 8, whole trace", full), flush=True)
        print(f"  hit ratio by -m: {ratios(full['doc'])}")
        print("  its last progress lines on stderr (a terminal):")
        for said in full["progress"][-4:]:
            print(f"    {said}")
        inside = 0
        for s, f in zip(sampled["doc"]["curve"], full["doc"]["curve"]):
            error = s.get("hit_ratio_error")
            held = error is not None and abs(s["hit_ratio"] - f["hit_ratio"]) <= error
            inside += held
            print(f"  -m {s['limit_maxbytes'] >> 20}: sample {s['hit_ratio']:.4f} +/- {error}, whole "
                  f"{f['hit_ratio']:.4f}: {'inside' if held else 'OUTSIDE'}")
        print(f"the whole trace's hit ratio inside the sample's stated interval at {inside} of "
              f"{len(full['doc']['curve'])} limits")


if __name__ == "__main__":
    main()
