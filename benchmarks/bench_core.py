"""Figures for the core model: class generation, placement throughput, CLI start-up.

Run: python benchmarks/bench_core.py   (prints one line per figure)
"""

from __future__ import annotations

import random
import subprocess
import sys
import time

from slabcalc import configure, load_profile, place, slab_classes


def rate(label: str, unit: str, count: int, func) -> None:
    start = time.perf_counter()
    func()
    elapsed = time.perf_counter() - start
    print(f"{label}: {count / elapsed:,.0f} {unit}/s ({elapsed * 1000:.1f} ms for {count:,})")


def main() -> None:
    profile = load_profile("1.6.45")
    settings = configure(profile, ["-f", "1.01"])
    rate("class tables (-f 1.01, 63 classes)", "tables", 2_000, lambda: [slab_classes(settings) for _ in range(2_000)])

    settings = configure(profile)
    classes = slab_classes(settings)
    rng = random.Random(1)
    items = [(rng.randint(1, 250), int(rng.lognormvariate(6, 2)) % 1_000_000, rng.choice((0, 1))) for _ in range(200_000)]
    rate("placements (1.6.45 defaults, values up to 1 MB)", "items", len(items),
         lambda: [place(settings, k, v, f, classes) for k, v, f in items])

    runs = 10
    start = time.perf_counter()
    for _ in range(runs):
        subprocess.run([sys.executable, "-m", "slabcalc", "place", "--key", "16", "--value", "100"],
                       check=True, capture_output=True)
    print(f"CLI start-up + one place: {(time.perf_counter() - start) / runs * 1000:.0f} ms per run")


if __name__ == "__main__":
    main()
