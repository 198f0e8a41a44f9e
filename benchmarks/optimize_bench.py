"""How long ``slabcalc optimize`` takes for 10^4 and 10^5 distinct item sizes, 62 classes.

Prints, per size: the exact slab_sizes DP alone (``best_slab_sizes``), the
-n/-f search, and the whole ``optimize()`` call (all spaces, every winner
re-scored by ``report``).  Targets from issue 5: the DP under 2 s for 10^4
distinct sizes and under 30 s for 10^5.

    python benchmarks/optimize_bench.py
"""

from __future__ import annotations

import random
import time

from slabcalc import configure, load_profile
from slabcalc.inputs.items import Item
from slabcalc.analysis.optimize import best_slab_sizes, chunk_requests, optimize, search_n_f


def workload(distinct: int, seed: int = 1) -> list[tuple[Item, int]]:
    """``distinct`` different item sizes (a long-tailed mix up to 512 KiB), counts 1-10 000."""
    rng = random.Random(seed)
    sizes: set[int] = set()
    while len(sizes) < distinct:
        sizes.add(min(524_288, 60 + int(rng.paretovariate(0.6) * 40)) if rng.random() < 0.9
                  else rng.randint(60, 524_288))
    return [(Item(None, None, 0, s), rng.randint(1, 10_000)) for s in sorted(sizes)]


def timed(what, *args, **kwargs):
    start = time.perf_counter()
    result = what(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    settings = configure(load_profile("1.6.18"), [])
    print(f"{'distinct sizes':>14}  {'candidates':>10}  {'DP (62 classes)':>15}  {'-n/-f search':>12}  "
          f"{'optimize()':>10}  {'DP saves':>8}")
    for distinct in (10_000, 100_000):
        items = workload(distinct)
        requests = chunk_requests(settings, items)
        answer, dp = timed(best_slab_sizes, settings, requests, 62)
        _, nf = timed(search_n_f, settings, requests)
        found, whole = timed(optimize, settings, items)
        from slabcalc.analysis.optimize import candidate_sizes
        candidates = len(candidate_sizes(settings, requests, per_perslab=False))
        saved = found.gain_pct(found.first_of("slab_sizes"))
        print(f"{distinct:>14,}  {candidates:>10,}  {dp:>13.2f} s  {nf:>10.2f} s  {whole:>8.2f} s  {saved:>7.2f}%")


if __name__ == "__main__":
    main()
