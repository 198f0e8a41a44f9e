"""Time that passes with nothing to do: what idle stretches cost ``slabcalc simulate``.

Prints, for memcached 1.6.18, 1.6.30 and 1.6.45 defaults (maintainer, crawler, automover; from
1.6.30 the maintainer's longest sleep is 999 999 us, engines/idle.py ``_skip_drift``):

* two requests (and one item with a day's TTL) a week apart, a year apart and 2^32 s apart,
  jumping over idle stretches (the default);
* the same stepped one wake-up at a time (``Engine(fast_forward=False)``) over an hour and a
  day (``--stepped-week``: over the whole week too, which takes minutes), the counts of both
  compared;
* with extstore (``-o ext_path=...:64m``, the storage write thread, its sleep ramping by 1 us a
  pass up to 1 s over 5.8 days: engines/extstore_idle.py), an item of 10 and one of 5000 bytes
  and a get a day and a week later, jumping and stepped (stepping is what every release did
  before extstore's threads were jumped over), CPU seconds;
* an oracleGeneral trace of ``--records`` requests whose timestamps are random 32-bit values
  (records going back in time are rejected by the reader, as a trace's are), read and replayed;
  and one of ``--sorted-records`` such timestamps put in order (a request every 8 months or so).

Run: python benchmarks/idle_bench.py [--stepped-week] [--no-stepped] [--releases 1.6.45]
                                    [--records 20000] [--sorted-records 200]
                                    [--extstore-releases 1.6.18 1.6.45] [--extstore-only]
"""

from __future__ import annotations

import argparse
import io
import random
import time

from slabcalc import configure, load_profile
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.simulate import GET, SET, simulate
from slabcalc.inputs.traces import RECORD, read_oracle_general

DAY = 86400.0


def two_requests(gap: float) -> list[tuple]:
    return [(0.0, SET, "a", 1, 100, 0, 0), (1.0, SET, "b", 1, 100, 86400, 0), (gap, GET, "a", 1, 0, 0, 0)]


def replay(release: str, ops: list[tuple], fast_forward: bool):
    settings = configure(load_profile(release), ["-m", "64"])
    engine = Engine(settings, background_for(settings), fast_forward=fast_forward)
    start = time.perf_counter()
    timeline = engine.run(ops)
    return time.perf_counter() - start, engine.results(None, timeline)


def replay_extstore(release: str, gap: float, fast_forward: bool):
    """The brief's idle server with extstore: CPU seconds of the replay, its results."""
    settings = configure(load_profile(release), ["-m", "64", "-o", "ext_path=/tmp/slabcalc-bench:64m"])
    engine = Engine(settings, background_for(settings), fast_forward=fast_forward)
    ops = [(0.0, SET, "a", 1, 10, 0, 0), (0.0, SET, "b", 1, 5000, 0, 0), (gap, GET, "a", 1, 0, 0, 0)]
    start = time.process_time()
    timeline = engine.run(ops)
    return time.process_time() - start, (engine.results(None, timeline), engine.storage.counters())


def extstore_figures(releases: list[str], stepped: bool, stepped_week: bool) -> None:
    for release in releases:
        print(f"memcached {release} -m 64 -o ext_path=...:64m: a get after an idle stretch of (CPU seconds)")
        for name, gap in (("a day", DAY), ("a week", 7 * DAY)):
            jumped, sim = replay_extstore(release, gap, True)
            line = f"  {name:8} jumping {jumped:8.3f} s"
            if stepped and (gap <= DAY or stepped_week):
                took, ref = replay_extstore(release, gap, False)
                line += f"   stepping {took:8.2f} s   counts {'identical' if ref == sim else 'DIFFER'}"
            print(line)


def oracle_trace(records: int, ordered: bool = False, seed: int = 29) -> bytes:
    rng = random.Random(seed)
    clocks = [rng.getrandbits(32) for _ in range(records)]
    if ordered:
        clocks.sort()
    return b"".join(RECORD.pack(clock, rng.randrange(5000), rng.randrange(100, 5000), -1) for clock in clocks)


def replay_trace(data: bytes, what: str) -> None:
    settings = configure(load_profile("1.6.18"), ["-m", "64"])
    start = time.perf_counter()
    ops, accounting = read_oracle_general(io.BytesIO(data), "random.oracleGeneral")
    sim = simulate(settings, ops)
    elapsed = time.perf_counter() - start
    print(f"oracleGeneral, {accounting.rows:,} records with {what}: {elapsed:.2f} s "
          f"({accounting.items:,} replayed up to t={sim.end_time:,.0f} s, {accounting.rejected:,} rejected "
          f"as going back in time; {sim.totals.gets:,} gets, {sim.totals.hits:,} hits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stepped-week", action="store_true", help="also step the whole week (minutes)")
    parser.add_argument("--no-stepped", action="store_true", help="jumping only (no stepped replays)")
    parser.add_argument("--releases", nargs="+", default=["1.6.18", "1.6.30", "1.6.45"])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--sorted-records", type=int, default=200)
    parser.add_argument("--extstore-releases", nargs="+", default=["1.6.18", "1.6.45"])
    parser.add_argument("--extstore-only", action="store_true", help="only the extstore figures")
    args = parser.parse_args()
    extstore_figures(args.extstore_releases, not args.no_stepped, args.stepped_week)
    if args.extstore_only:
        return
    for release in args.releases:
        print(f"memcached {release} -m 64 (LRU maintainer, crawler, slab_automove=1): two requests apart")
        for name, gap in (("an hour", 3600.0), ("a day", DAY), ("a week", 7 * DAY), ("a year", 365 * DAY),
                          ("2^32 s", 2.0 ** 32)):
            jumped, sim = replay(release, two_requests(gap), True)
            line = f"  {name:8} jumping {jumped:8.3f} s"
            if not args.no_stepped and (gap <= DAY or (gap == 7 * DAY and args.stepped_week)):
                stepped, ref = replay(release, two_requests(gap), False)
                line += f"   stepping {stepped:8.2f} s   counts {'identical' if ref == sim else 'DIFFER'}"
            print(line)
    replay_trace(oracle_trace(args.records), "random 32-bit timestamps")
    replay_trace(oracle_trace(args.sorted_records, ordered=True), "random 32-bit timestamps in order")

if __name__ == "__main__":
    main()
