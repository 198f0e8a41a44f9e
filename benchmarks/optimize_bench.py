"""How long ``slabcalc optimize`` takes for 10^4 and 10^5 distinct item sizes, 62 classes.

Prints, per size: the exact slab_sizes DP alone (``best_slab_sizes``), the
-n/-f search, the whole ``optimize()`` call (all spaces, every winner
re-scored by ``report``), and ``slabcalc optimize FILE`` end to end in a
process of its own (start-up and reading the file included); then the same
command on a 4-row file.  Targets (issue 18), end to end: 10^4 distinct sizes
under 2 s, 10^5 under 15 s, a 4-row file under 0.5 s.  Then the cost of the
resamples (issue 41): ``optimize()`` as the command runs it (a fifth held out,
``--validate 0.2``), CPU seconds with ``resamples=0`` and with the command's
default (``--resamples 3``: the whole search three times more, and the counts).  Last, one search
with ``-m`` (items that fit) on a one-size mix and on examples/bimodal.csv.

    python benchmarks/optimize_bench.py
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
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


def end_to_end(items, where: str, profile: str = "1.6.18") -> float:
    """``slabcalc optimize FILE --profile ...`` as its own process: wall seconds."""
    path = os.path.join(where, f"sizes-{len(items)}.csv")
    with open(path, "w") as out:
        out.write("item_size,count\n" + "".join(f"{item.item_size},{count}\n" for item, count in items))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "slabcalc", "optimize", path, "--profile", profile],
                   check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    settings = configure(load_profile("1.6.18"), [])
    where = tempfile.mkdtemp()
    print(f"{'distinct sizes':>14}  {'candidates':>10}  {'DP (62 classes)':>15}  {'-n/-f search':>12}  "
          f"{'optimize()':>10}  {'end to end':>10}  {'DP saves':>8}")
    for distinct in (10_000, 100_000):
        items = workload(distinct)
        requests = chunk_requests(settings, items)
        answer, dp = timed(best_slab_sizes, settings, requests, 62)
        _, nf = timed(search_n_f, settings, requests)
        found, whole = timed(optimize, settings, items)
        from slabcalc.analysis.optimize import candidate_sizes
        candidates = len(candidate_sizes(settings, requests, per_perslab=False))
        saved = found.gain_pct(found.first_of("slab_sizes"))
        total = end_to_end(items, where)
        print(f"{distinct:>14,}  {candidates:>10,}  {dp:>13.2f} s  {nf:>10.2f} s  {whole:>8.2f} s  "
              f"{total:>8.2f} s  {saved:>7.2f}%")
    four = [(Item(None, None, 0, size), 1) for size in (126, 1106, 5116, 417)]
    print(f"a 4-row file, end to end: {end_to_end(four, where):.2f} s")
    resamples_cost(settings)
    memory_limit_cost()


def memory_limit_cost() -> None:
    """CPU seconds of one search with ``-m`` (the -n/-f grid by items that fit, the slab_sizes DP
    bisected on the share of the mix that fits), ``--resamples 0``: a one-size mix and
    examples/bimodal.csv."""
    from slabcalc.inputs.items import read_items

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "examples", "bimodal.csv")) as stream:
        bimodal = [(item, count) for item, count, _ in read_items(stream, "bimodal.csv")[0]]
    one = [(Item(None, None, 0, 1000), 500)]
    for name, items, megabytes in (("one size, -m 6", one, 6), ("bimodal.csv, -m 256", bimodal, 256)):
        settings = configure(load_profile("1.6.18"), ["-m", str(megabytes)])
        start = time.process_time()
        optimize(settings, items, validate=0.2, resamples=0)
        print(f"{name}: {time.process_time() - start:.2f} s of CPU")


def resamples_cost(settings) -> None:
    """CPU seconds of ``optimize()`` validated as the command runs it, without and with the resamples."""
    from slabcalc.cli.options import RESAMPLES_DEFAULT

    print(f"{'distinct sizes':>14}  {'--resamples 0':>13}  {f'--resamples {RESAMPLES_DEFAULT}':>13}  {'same flags':>10}")
    for distinct in (10_000, 100_000):
        items = workload(distinct)
        costs = []
        for k in (0, RESAMPLES_DEFAULT):
            start = time.process_time()
            found = optimize(settings, items, validate=0.2, resamples=k)
            costs.append(time.process_time() - start)
        st = found.stability
        print(f"{distinct:>14,}  {costs[0]:>11.2f} s  {costs[1]:>11.2f} s  {st.same_flags:>5} of {len(st.resamples)}")


if __name__ == "__main__":
    main()
