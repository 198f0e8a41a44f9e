"""Does a sample's stated 95 % interval hold the full replay's figures?  (issue 39, "an error that holds")

For each seed and each ``-m``, a trace is replayed whole and at ``--rate`` through the command line
(``slabcalc simulate FILE -m M [--sample R] --format json``); the study counts how often the stated
intervals hold the full replay's hit ratio and evictions, and prints the half-widths and the signed
errors (a bias shows as misses of one sign).  Two shapes (``--shape``):

``recipe``
    issue 39's oracleGeneral trace (benchmarks/sample_bench.py ``recipe``: Zipf 0.9 over
    ``--objects``, log-normal sizes 50 B-200 KB, 20 000 requests a second; a look-aside get, and a
    set on a miss, each request).
``mixed``
    a look-aside mix with TTLs, as a workload CSV: Zipf 0.9 over ``--objects`` keys (a size each,
    log-normal 100 B-200 KB), each request a ``get``, followed by the client's ``set`` when the key
    was never set or its own TTL has run out since its last set (a third of the keys have one of 60 s
    or 300 s, the rest none); a twentieth of the requests are updates (a ``set`` alone); 5 000
    requests a second.

Each case is scored twice: by the interval ``simulate`` states now (``sample.hit_ratio`` +/-
``hit_ratio_error``, ``totals.evictions`` +/- ``evicted_error``: engines/sample.py ``errors``) and by
the one it stated before (the sample's own hit ratio with its keys' spread: ``sampled_hit_ratio``
+/- ``sampled_hit_ratio_error``; the evictions' Poisson half-width ``1.96 sqrt(E R) / R``).  Full
replays are kept in ``--cache`` (JSON) and not run again.  The issue asks for 20 seeds x 3 sizes of
1 GB or more at 5 %: coverage of at least 95 % and a hit-ratio half-width of at most 0.02.  On two
shared cores run it reduced first, niced:

    nice python benchmarks/sample_error_study.py --shape recipe --seeds 20 --sizes 1024,2048,4096 \\
        --requests 2000000 --objects 400000 --cache /tmp/full.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from sample_bench import cli_run, recipe  # noqa: E402


def write_trace(path: str, requests: int, objects: int, seed: int) -> None:
    import numpy as np

    from slabcalc.inputs.traces import RECORDS

    clocks, ids, sizes = recipe(requests, objects, seed=seed)
    records = np.zeros(requests, dtype=RECORDS)
    records["clock"], records["obj"], records["size"], records["next"] = clocks, ids, sizes, -1
    records.tofile(path)


def write_mixed(path: str, requests: int, objects: int, seed: int) -> None:
    """The ``mixed`` shape (see the module's text) as a workload CSV."""
    import numpy as np

    rng = np.random.default_rng(1000 + seed)
    cdf = np.cumsum(1.0 / np.arange(1, objects + 1) ** 0.9)
    ranks = np.searchsorted(cdf, rng.random(requests) * cdf[-1]).tolist()
    # each seed's keys drawn afresh (63-bit names): the same names in every seed (a permutation of
    # 0..objects-1) would put the same keys in every seed's sample -- 20 150 of 400 000 at 5 %, not
    # 20 000 -- and every seed's error would lean the same way (0.75 % more first misses at -m 4096)
    names = rng.integers(1, 1 << 63, size=objects, dtype=np.uint64).tolist()
    sizes = np.clip(rng.lognormal(8.0, 1.5, size=objects), 100, 200_000).astype(int).tolist()
    ttls = rng.choice([0, 0, 0, 0, 60, 300], size=objects).tolist()
    updates = (rng.random(requests) < 0.05).tolist()
    set_at: dict[int, float] = {}
    with open(path, "w") as f:
        f.write("time,op,key,value_size,ttl\n")
        lines = []
        for i, rank in enumerate(ranks):
            t = i / 5000
            key, ttl = names[rank], ttls[rank]
            stamp = f"{t:.4f}"
            if updates[i]:
                lines.append(f"{stamp},set,k{key},{sizes[rank]},{ttl}\n")
                set_at[rank] = t
            else:
                lines.append(f"{stamp},get,k{key},0,0\n")
                last = set_at.get(rank)
                if last is None or (ttl and t - last >= ttl):
                    lines.append(f"{stamp},set,k{key},{sizes[rank]},{ttl}\n")
                    set_at[rank] = t
            if len(lines) >= 1 << 16:
                f.write("".join(lines))
                lines = []
        f.write("".join(lines))


def score(full: dict, s: dict, rate: float) -> dict:
    """One case's figures: the full replay's, the sample's estimates, and whether each interval holds."""
    sample, totals = s["sample"], s["totals"]
    ratio = full["get_hits"] / max(1, full["cmd_get"])
    evicted = totals["evictions"]
    old_evicted_error = round(1.96 * math.sqrt(evicted * rate) / rate)
    row = {"ratio": ratio, "estimate": sample["hit_ratio"], "error": sample["hit_ratio_error"],
           "own": sample["sampled_hit_ratio"], "own_error": sample["sampled_hit_ratio_error"],
           "evicted": full["evictions"], "sample_evicted": evicted, "evicted_error": sample["evicted_error"],
           "old_evicted_error": old_evicted_error}
    row["ratio_in"] = abs(row["estimate"] - ratio) <= row["error"]
    row["own_in"] = abs(row["own"] - ratio) <= row["own_error"]
    row["evicted_in"] = abs(evicted - row["evicted"]) <= row["evicted_error"]
    row["old_evicted_in"] = abs(evicted - row["evicted"]) <= old_evicted_error
    return row


def summary(rows: list[dict], rate: float) -> str:
    n = len(rows)

    def count(name):
        return f"{sum(r[name] for r in rows)}/{n}"

    def spread(name):
        return f"{min(r[name] for r in rows):.4f}-{max(r[name] for r in rows):.4f}"
    signed = sorted(round(r["estimate"] - r["ratio"], 4) for r in rows)
    own = sorted(round(r["own"] - r["ratio"], 4) for r in rows)
    worst = max(abs(r["sample_evicted"] - r["evicted"]) / max(1, r["evicted"]) for r in rows)
    return (f"{n} cases at {rate:g}\n"
            f"  now:    hit ratio inside {count('ratio_in')}, evictions inside {count('evicted_in')}; "
            f"hit-ratio half-width {spread('error')}\n"
            f"  before: hit ratio inside {count('own_in')}, evictions inside {count('old_evicted_in')}; "
            f"hit-ratio half-width {spread('own_error')}\n"
            f"  estimate minus full hit ratio, now {signed[0]:+.4f} to {signed[-1]:+.4f} (median "
            f"{signed[n // 2]:+.4f}); before {own[0]:+.4f} to {own[-1]:+.4f} (median {own[n // 2]:+.4f}); "
            f"evictions at most {worst:.1%} off")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=("recipe", "mixed"), default="recipe")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--sizes", default="1024,2048,4096", help="-m values in MB")
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--requests", type=int, default=10_000_000)
    parser.add_argument("--objects", type=int, default=2_000_000)
    parser.add_argument("--cache", default=None, help="a JSON file keeping the full replays' totals")
    parser.add_argument("--tmp", default=None)
    args = parser.parse_args()
    cache = {}
    if args.cache and os.path.exists(args.cache):
        with open(args.cache) as f:
            cache = json.load(f)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            name = "oracleGeneral" if args.shape == "recipe" else "csv"
            trace = os.path.join(tmp, f"seed{seed}.{name}")
            (write_trace if args.shape == "recipe" else write_mixed)(trace, args.requests, args.objects, seed)
            sizes = list(map(int, args.sizes.split(",")))
            keys = {mb: f"{args.shape}:{args.requests}:{args.objects}:{seed}:{mb}" for mb in sizes}
            missing = [mb for mb in sizes if keys[mb] not in cache]
            if missing:         # the full replays as one curve: the trace read once, a process a core
                doc = cli_run(trace, "-m", ",".join(map(str, missing)))["doc"]
                # a curve's rows, or one -m's totals (one -m is no curve): cmd_get, get_hits, evictions
                fulls = doc["curve"] if len(missing) > 1 else [{**doc["totals"], "limit_maxbytes": missing[0] << 20}]
                for full in fulls:
                    cache[keys[full["limit_maxbytes"] >> 20]] = full
                if args.cache:
                    with open(args.cache, "w") as f:
                        json.dump(cache, f)
            for mb in sizes:
                key = keys[mb]
                s = cli_run(trace, "-m", str(mb), "--sample", f"{args.rate:g}")
                if "refused" in s:
                    print(f"seed {seed} -m {mb}: {s['refused']}", flush=True)
                    continue
                row = {"shape": args.shape, "seed": seed, "m": mb, **score(cache[key], s["doc"], args.rate)}
                rows.append(row)
                print(json.dumps(row), flush=True)
            os.remove(trace)
    if rows:
        print(summary(rows, args.rate))


if __name__ == "__main__":
    main()
