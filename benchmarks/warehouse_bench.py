"""A warehouse-sized item file through DuckDB: time and peak RSS of ``slabcalc report FILE.parquet``.

    python benchmarks/warehouse_bench.py [--rows 50000000]

Writes a Parquet file of ROWS cache writes (key_size, value_size, flags: a skewed mix of small
sessions, mid-size pages and a tail of large objects), then runs, each as its own process:
DuckDB alone computing the histogram (the floor), and ``slabcalc report`` on the file (start-up,
the same aggregation in DuckDB, placing the groups).  Prints wall seconds and peak RSS of each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

GENERATE = """
COPY (
  SELECT 8 + (i * 7919) % 40 AS key_size,
         CASE WHEN i % 10 < 6 THEN 50 + (i * 104729) % 400
              WHEN i % 10 < 9 THEN 1000 + (i * 1299709) % 9000
              ELSE 20000 + (i * 15485863) % 400000 END AS value_size,
         CASE WHEN i % 4 = 0 THEN 1 ELSE 0 END AS flags
  FROM range({rows}) t(i)
) TO '{path}' (FORMAT parquet)
"""
DUCKDB_ALONE = ("import duckdb; print(len(duckdb.connect().execute(\"SELECT key_size, value_size, flags <> 0, "
                "count(*) FROM read_parquet('{path}') GROUP BY ALL\").fetchall()))")


PEAK = ("import resource, runpy, sys\n"
        "sys.argv = sys.argv[1:]\n"
        "try:\n    runpy.run_path(sys.argv[0], run_name='__main__') if sys.argv[0].endswith('.py') else "
        "runpy.run_module(sys.argv[0], run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")


def timed(args: list[str]) -> tuple[float, int, str]:
    """Run ``python -m args`` (or a -c program) in a process of its own: wall seconds, its own peak
    RSS in bytes, its standard output."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    return wall, int(done.stderr.strip().splitlines()[-1]) * 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=50_000_000)
    args = parser.parse_args()
    import duckdb

    with tempfile.TemporaryDirectory() as where:
        path = os.path.join(where, "writes.parquet")
        start = time.perf_counter()
        duckdb.connect().execute(GENERATE.format(rows=args.rows, path=path))
        print(f"wrote {args.rows} rows, {os.path.getsize(path)} bytes of Parquet in "
              f"{time.perf_counter() - start:.1f} s")
        alone = os.path.join(where, "alone.py")
        with open(alone, "w") as script:
            script.write(DUCKDB_ALONE.format(path=path))
        wall, peak, groups = timed([alone])
        print(f"duckdb alone:     {wall:6.2f} s  peak RSS {peak / 2**20:6.0f} MiB  ({groups.strip()} groups)")
        wall, peak, out = timed(["slabcalc", "report", path, "--format", "json"])
        import json

        totals = json.loads(out)["totals"]
        print(f"slabcalc report:  {wall:6.2f} s  peak RSS {peak / 2**20:6.0f} MiB  "
              f"({totals['rows']} rows = {totals['placed_rows']} placed + {totals['too_large_rows']} too large "
              f"+ {totals['rejected']} rejected)")


if __name__ == "__main__":
    main()
