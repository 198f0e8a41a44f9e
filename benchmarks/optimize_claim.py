"""Does optimize's claim hold on fresh samples of the mix?  (issue 41; a sweep, not a test)

For each mix and seed: ``optimize`` (held-out fifth, ``--seed 0``) on one sample of 100 000 items, then
four fresh samples of the same mix counted by ``report``, under the defaults and each space's best.
The first fresh sample is also loaded into the real memcached (``$MEMCACHED`` or /usr/bin/memcached;
skipped when there is none) under the defaults and under the recommendation, its pages counted from
``stats slabs``: the ``real`` column is the gain the server delivers (``report`` must agree).
Prints the claim (the lower of the means over fresh draws from the held-out items and from every
item, and its interval), the share of the draws in which it is the best, the four fresh gains, how
many fall in the interval and the largest distance from the claim.  Mixes: issue 41's (normal and
uniform spreads), bimodal, log-uniform 50 B-100 KB, lognormal, rare large items (1 % of 20-200 KB
values) and rare chunked items (0.5 % of 530 KB-1 MB, over the 512 KB chunk maximum).

    python benchmarks/optimize_claim.py [release] [items] [mix,mix...]
"""

from __future__ import annotations

import math
import os
import random
import shlex
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


def lognormal(r):
    return r.randint(10, 40), min(900_000, int(r.lognormvariate(math.log(800), 1.0)))


def huge(r):       # rare chunked items: 0.5 % of 530 KB-1 MB, over 1.6.18's 512 KB chunk maximum
    u, k = r.random(), r.randint(20, 60)
    return k, (r.randint(250, 350) if u < .8 else r.randint(2000, 8000) if u < .995 else r.randint(530_000, 1_000_000))


MIXES = {"issue": issue, "issue_uniform": issue_uniform, "bimodal": bimodal, "log_uniform": log_uniform,
         "wide": wide, "lognormal": lognormal, "huge": huge}


def rows(draw, seed, n):
    r = random.Random(seed)
    return [draw(r) for _ in range(n)]


def pairs(rs):
    counts = {}
    for kv in rs:
        counts[kv] = counts.get(kv, 0) + 1
    return [(Item(k, v, 0, None), c) for (k, v), c in counts.items()]


def served(memcached, args, rs, page):
    """Page bytes of ``rs`` loaded into a real memcached started with ``args`` (``stats slabs``)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from memcached_server import MemcachedServer

    with MemcachedServer(["-m", "4096", *args], memcached=memcached) as server:
        server.set_items((f"{i:x}".rjust(k, "k"), v) for i, (k, v) in enumerate(rs))
        assert int(server.stats()["total_items"]) == len(rs)
        per_class, _ = server.slab_stats()
    return sum(s.get("total_pages", 0) for s in per_class.values()) * page


def main(release="1.6.18", n=100_000, names=None):
    settings = configure(load_profile(release), [])
    memcached = os.environ.get("MEMCACHED", "/usr/bin/memcached")
    memcached = memcached if os.access(memcached, os.X_OK) else None
    page = settings.slab_page_size
    for name in names or MIXES:
        draw = MIXES[name]
        fresh_rows = rows(draw, 200, n)
        fresh = [pairs(fresh_rows)] + [pairs(rows(draw, s, n)) for s in range(201, 204)]
        base = [build_report(settings, f).total("page_bytes") for f in fresh]
        real_base = served(memcached, [], fresh_rows, page) if memcached else None
        assert real_base in (None, base[0]), (name, real_base, base[0])
        for seed in (1, 3, 5):
            started = time.perf_counter()
            found = optimize(settings, pairs(rows(draw, seed, n)), validate=0.2)
            took = time.perf_counter() - started
            for c in [x for x in found.candidates if x is found.first_of(x.space)]:
                gains = [100 * (b - build_report(c.report.settings, f).total("page_bytes")) / b
                         for b, f in zip(base, fresh)]
                claim = c.fresh
                inside = sum(claim.low <= g <= claim.high for g in gains)
                chosen = c is found.best and not found.defaults_fine
                real = ""
                if chosen and memcached:
                    ours = served(memcached, shlex.split(c.flags), fresh_rows, page)
                    real = f"  real {100 * (real_base - ours) / real_base:5.2f}"
                mark = "*" if chosen else " "
                print(f"{name:13} s{seed} {mark}{c.space:14} claim {claim.gain:5.2f} [{claim.low:5.2f},"
                      f"{claim.high:5.2f}] (held {claim.held:5.2f}, all {claim.whole:5.2f}) best in "
                      f"{100 * c.wins:3.0f}%  fresh {' '.join(f'{g:5.2f}' for g in gains)}  in {inside}/4  off "
                      f"{max(abs(claim.gain - g) for g in gains):.2f}{real}  ({took:.1f} s)", flush=True)


if __name__ == "__main__":
    main(*(sys.argv[1:2] or ["1.6.18"]), *(int(a) for a in sys.argv[2:3] or [100_000]),
         *(a.split(",") for a in sys.argv[3:4]))
