"""Does optimize's claim hold on fresh samples of the mix?  (issue 41; a sweep, not a test)

For each mix and seed: ``optimize`` (held-out fifth, ``--seed 0``) on one sample of 100 000 items, then
four fresh samples of the same mix counted by ``report`` (equal to the real server's pages:
tests/analysis/test_optimize_fresh.py checks one in memcached 1.6.18) under the defaults and each space's best.
Prints the claim (mean over fresh draws from the held-out items, and its interval), the share of the
draws in which it is the best, the four fresh gains, how many fall in the interval and the largest
distance from the claim.

    python benchmarks/optimize_claim.py [release] [items]
"""

from __future__ import annotations

import math
import random
import sys
import time

from slabcalc import configure, load_profile
from slabcalc.analysis.optimize import optimize
from slabcalc.analysis.report import build_report
from slabcalc.inputs.items import Item


def issue(r):      # issue 41: 60 % ~300 B, 30 % ~2 KB, 10 % ~15 KB (normal, 10 % spread)
    u, k = r.random(), r.randint(10, 40)
    m = 300 if u < .6 else 2048 if u < .9 else 15360
    return k, max(1, int(r.gauss(m, m * 0.1)))


def issue_uniform(r):
    u, k = r.random(), r.randint(10, 40)
    return k, (r.randint(250, 350) if u < .6 else r.randint(1700, 2300) if u < .9 else r.randint(13000, 17000))


def bimodal(r):
    return r.randint(10, 40), (r.randint(180, 260) if r.random() < 60 / 72 else r.randint(2800, 3400))


def log_uniform(r):
    return r.randint(8, 64), int(math.exp(r.uniform(math.log(50), math.log(100000))))


def wide(r):       # rare large items: 1 % of 20-200 KB
    u, k = r.random(), r.randint(20, 60)
    return k, (r.randint(250, 350) if u < .8 else r.randint(2000, 8000) if u < .99 else r.randint(20000, 200000))


MIXES = {"issue": issue, "issue_uniform": issue_uniform, "bimodal": bimodal, "log_uniform": log_uniform,
         "wide": wide}


def sample(draw, seed, n):
    r, counts = random.Random(seed), {}
    for _ in range(n):
        kv = draw(r)
        counts[kv] = counts.get(kv, 0) + 1
    return [(Item(k, v, 0, None), c) for (k, v), c in counts.items()]


def main(release="1.6.18", n=100_000):
    settings = configure(load_profile(release), [])
    for name, draw in MIXES.items():
        fresh = [sample(draw, s, n) for s in range(200, 204)]
        base = [build_report(settings, f).total("page_bytes") for f in fresh]
        for seed in (1, 3, 5):
            started = time.perf_counter()
            found = optimize(settings, sample(draw, seed, n), validate=0.2)
            took = time.perf_counter() - started
            for c in [x for x in found.candidates if x is found.first_of(x.space)]:
                gains = [100 * (b - build_report(c.report.settings, f).total("page_bytes")) / b
                         for b, f in zip(base, fresh)]
                claim = c.fresh
                inside = sum(claim.low <= g <= claim.high for g in gains)
                mark = "*" if c is found.best and not found.defaults_fine else " "
                print(f"{name:13} s{seed} {mark}{c.space:14} claim {claim.gain:5.2f} [{claim.low:5.2f},"
                      f"{claim.high:5.2f}] best in {100 * c.wins:3.0f}%  fresh "
                      f"{' '.join(f'{g:5.2f}' for g in gains)}  in {inside}/4  off {max(abs(claim.gain - g) for g in gains):.2f}"
                      f"  ({took:.1f} s)", flush=True)


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["1.6.18"]), *(int(a) for a in sys.argv[2:3]))
