"""Speed and memory of ``slabcalc report`` against merely reading the CSV.

Generates 1 M- and 10 M-row ``key,value`` CSVs (key lengths 8-64, values
log-normal around 300 bytes, as an application's item log looks), then prints
for each: the time Python's csv module takes just to iterate the file, the
time ``slabcalc report`` takes on it (a separate process, start-up included),
their ratio, and the report's peak memory (max RSS).  Times are given by the
wall clock and as CPU time (user + system), which a busy machine disturbs less;
each is the best of seven runs, taken in alternation, and the median ratio
of the seven pairs is printed too (the machine's speed drifts).  Targets:
ratio <= 1.5 at 1 M rows (issue 18) and peak memory independent of the row
count.

Peak memory grows with the number of *distinct* items (each is held once),
not with rows; the last line shows it: the 1 M-row file repeated ten times,
10 M rows of the same distinct items, should peak where the 1 M file does.

It also prints the fixed start-up of a ``slabcalc report`` process (the same
command on a one-row file: Python, click, PyYAML, the profile, numpy) and the
ratio of the rest, the work that grows with the input, to the csv iteration.

Run: python benchmarks/report_bench.py [--rows 1000000,10000000] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import subprocess
import sys
import time


def generate(path: str, rows: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    lognorm, randint = rng.lognormvariate, rng.randint
    with open(path, "w", newline="") as f:
        f.write("key,value\n")
        chunk = 100_000
        for start in range(0, rows, chunk):
            f.write("".join(f"{randint(8, 64)},{int(lognorm(5.7, 0.8))}\n"
                            for _ in range(min(chunk, rows - start))))


# Python compiles a module's source on every start when it may not write bytecode
# (PYTHONDONTWRITEBYTECODE, set on some machines); an installed slabcalc has its
# bytecode (pip compiles it), so measure that: the warm-up run below writes it.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# The command users type: the console script pip installed beside this Python, else ``python -m``
# (which also loads runpy, about 7 ms of start-up the installed command does not pay).
_SCRIPT = os.path.join(os.path.dirname(sys.executable), "slabcalc")
COMMAND = [_SCRIPT] if os.access(_SCRIPT, os.X_OK) else [sys.executable, "-m", "slabcalc"]


def repeat(source: str, path: str, times: int) -> None:
    """``source``'s rows ``times`` over under its header, written without holding them: a child
    forked while this process held them would carry their pages into its peak RSS (ru_maxrss)."""
    with open(source) as f, open(path, "w") as out:
        out.write(f.readline())
        body = f.read()
        for _ in range(times):
            out.write(body)


def csv_iterate(path: str) -> tuple[float, float]:
    """Wall and CPU seconds of iterating ``path`` with the csv module."""
    start, cpu = time.perf_counter(), time.process_time()
    with open(path, newline="") as f:
        for _ in csv.reader(f):
            pass
    return time.perf_counter() - start, time.process_time() - cpu


def run_report(path: str) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (KiB) of one ``slabcalc report``
    process."""
    start = time.perf_counter()
    proc = subprocess.Popen([*COMMAND, "report", path, "--format", "json"], stdout=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"slabcalc report failed on {path} (status {status})")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--dir", default="/tmp")
    parser.add_argument("--pairs", type=int, default=7, help="csv/report runs alternated (default 7)")
    args = parser.parse_args()
    tiny = os.path.join(args.dir, "slabcalc-bench-1.csv")
    generate(tiny, 1)
    run_report(tiny)                                       # warm-up: bytecode, disk cache
    startup = min(run_report(tiny)[:2] for _ in range(5))
    print(f"start-up of a report process (1-row file): {startup[0]:.3f}s wall, {startup[1]:.3f}s CPU")
    print(f"{'rows':>10}  {'':>5}  {'csv iterate':>11}  {'report':>8}  {'ratio':>5}  {'paired ratio':>12}  "
          f"{'ratio less start-up':>19}  {'peak RSS':>9}")
    for rows in (int(r) for r in args.rows.split(",")):
        path = os.path.join(args.dir, f"slabcalc-bench-{rows}.csv")
        if not os.path.exists(path):
            generate(path, rows)
        # csv iteration and report alternate, so each ratio compares runs of one moment: on a
        # machine whose speed drifts, best-of-N of each taken apart may pair a fast moment with a
        # slow one; the median of the pairs' ratios is printed beside the best-of ratio
        runs, reports = [], []
        for _ in range(args.pairs):
            runs.append(csv_iterate(path))
            reports.append(run_report(path))
        rss = min(r[2] for r in reports)
        for i, clock in enumerate(("wall", "CPU")):     # best of N by each clock
            base, elapsed = min(r[i] for r in runs), min(r[i] for r in reports)
            paired = statistics.median(r[i] / c[i] for r, c in zip(reports, runs))
            print(f"{rows:>10,}  {clock:>5}  {base:>10.2f}s  {elapsed:>7.2f}s  {elapsed / base:>5.2f}  "
                  f"{paired:>12.2f}  {(elapsed - startup[i]) / base:>19.2f}  {rss / 1024:>7.0f} MB")
    first = int(args.rows.split(",")[0])
    source = os.path.join(args.dir, f"slabcalc-bench-{first}.csv")
    repeated = os.path.join(args.dir, f"slabcalc-bench-{first}x10.csv")
    if not os.path.exists(repeated):
        repeat(source, repeated, 10)
    elapsed, cpu, rss = min(run_report(repeated) for _ in range(2))
    print(f"{first:,} rows x 10 (same distinct items): report {elapsed:.2f}s wall, {cpu:.2f}s CPU, "
          f"peak RSS {rss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
