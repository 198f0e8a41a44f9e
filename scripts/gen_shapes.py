#!/usr/bin/env python3
"""Print random workload shapes for issue 38's differential campaign, one line of JSON a shape.

    python scripts/gen_shapes.py --release 1.6.18 --first 1 --count 150 > shapes.jsonl
    python scripts/gen_shapes.py --seed 17 --csv r00017.csv     # one shape's workload as simulate's CSV
    python scripts/gen_shapes.py --seed 17 --args               # and its server arguments

A shape is a pure function of its seed and release (tests/random_shapes.py): the server's flags
(-m 8-512, -f/-n or slab_sizes, slab_automove 0/1/2 with window and ratio, hot/warm_lru_pct, the
crawler off/tocrawl/sleep, temporary_ttl, extstore where the release has it) and 60-90 s of
workload (50 B-900 KB values, 50-3 000 ops/s steady or in bursts, phases that shift sizes, TTLs of
1 s to none, gets/deletes/touches over fresh, uniform or Zipf keys).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import random_shapes  # noqa: E402


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--release", default="1.6.18")
    parser.add_argument("--first", type=int, default=1, help="the first seed")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--seed", type=int, help="one shape (with --csv or --args)")
    parser.add_argument("--csv", help="write the shape's workload here (time,op,key,value_size,ttl)")
    parser.add_argument("--args", action="store_true", help="print the shape's server arguments")
    opts = parser.parse_args(argv)
    if opts.seed is None and (opts.csv or opts.args):
        parser.error("--csv and --args need --seed")
    if opts.seed is not None:
        shape = random_shapes.draw(opts.seed, opts.release)
        if opts.args:
            print(" ".join(random_shapes.server_args(shape)))
        if opts.csv:
            with open(opts.csv, "w", newline="") as out:
                writer = csv.writer(out)
                writer.writerow(("time", "op", "key", "value_size", "ttl"))
                writer.writerows(random_shapes.workload(shape))
        if not (opts.args or opts.csv):
            print(random_shapes.dumps(shape))
        return 0
    for seed in range(opts.first, opts.first + opts.count):
        print(random_shapes.dumps(random_shapes.draw(seed, opts.release)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
