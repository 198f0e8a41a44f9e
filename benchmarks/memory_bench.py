"""Peak memory of ``slabcalc report FILE --group-by prefix`` on a large key-named CSV (issue 30).

Run: python benchmarks/memory_bench.py [ROWS [COMMAND]]   (default 3 000 000 rows, ``report``; one line)

X

The CSV (``key_name,value``, five key prefixes, values of 50..4999 bytes) is written to a
temporary directory; the report runs in a child process and its peak resident set size is
``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` (KiB on Linux).  Not a timed test: run it
before and after a change to the readers and compare the figures.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import tempfile
import time

PREFIXES = ("user", "session", "cart", "feed", "blob")


def write_csv(path: str, rows: int) -> None:
    rng = random.Random(30)
    with open(path, "w") as out:
        out.write("key_name,value\n")
        chunk = []
        for i in range(rows):
            chunk.append(f"{PREFIXES[i % 5]}:{i},{rng.randrange(50, 5000)}\n")
            if len(chunk) == 100_000:
                out.writelines(chunk)
                chunk.clear()
        out.writelines(chunk)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 3_000_000
    command = sys.argv[2] if len(sys.argv) > 2 else "report"
    args = ["report", "--group-by", "prefix"] if command == "report" else [command]
    slabcalc = os.environ.get("SLABCALC") or os.path.join(os.path.dirname(sys.executable), "slabcalc")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "keys.csv")
        write_csv(path, rows)
        size = os.path.getsize(path)
        start = time.perf_counter()
        done = subprocess.run([slabcalc, args[0], path, *args[1:], "--format", "json"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"slabcalc {command} failed ({done.returncode}): {done.stderr.strip()}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"{' '.join(args)}, {rows:,} rows ({size / 2**20:.0f} MiB CSV): "
          f"peak RSS {peak_kib / 1024:.0f} MiB, {elapsed:.1f} s")


if __name__ == "__main__":
    main()
