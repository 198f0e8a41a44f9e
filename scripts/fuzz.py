"""A seeded fuzzer of slabcalc's command line: no traceback, hang or unbounded memory on any input.

Each case is a command (classes, place, report, simulate, optimize, compare, stats, profiles) with
random and mutated arguments -- numeric options (NaN, infinity, huge, negative, empty, text),
memcached's flags and ``-o`` words with random values, ``-m`` lists and ranges -- and an input file
made of known and misspelt CSV headers, cells (NaN, huge counts, negative, text), binary junk and
compressed junk.  Each runs in its own process under a timeout and an address-space limit
(``resource.setrlimit``); a traceback, a hang, running out of memory or an exit status other than
0, 1, 2 or 3 is a finding.

    python scripts/fuzz.py --seed 1 --runs 300            # prints each finding, exit 1 if any
    python scripts/fuzz.py --seed 1 --runs 300 --jobs 2 --timeout 20 --memory 1024

``cases(seed, n)`` gives the same cases to tests/cli/test_robust.py, which runs a short pass in-process.

Known and left out: workload gaps of a day or more (the idle jump on 1.6.30+ is stepped a second at
a time, issue 41, its own fix); ``--big-gaps`` puts them back.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import os
import random
import resource
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

NUMBERS = ["nan", "NaN", "inf", "-inf", "1e400", "-1", "0", "1", "2", "0.5", "1e-9", "3.5", "", "abc", "1,5",
           "99999999999999999999", "2147483647", "2147483648", "-2147483648", "4294967296", "1e9", "0x10",
           "64", "1024", "1m", "1g", "16k", " 7 ", "1_000"]
RELEASES = ["1.2.8", "1.4.5", "1.4.24", "1.4.39", "1.5.1", "1.5.22", "1.6.9", "1.6.18", "1.6.29", "1.6.45"]
O_WORDS = ["hashpower", "hot_max_factor", "warm_max_factor", "slab_automove_ratio", "slab_automove_window",
           "slab_automove", "hot_lru_pct", "warm_lru_pct", "temporary_ttl", "lru_crawler_tocrawl", "lru_crawler_sleep",
           "slab_chunk_max",
           "slab_sizes", "no_modern", "modern", "no_chunked_items", "no_lru_maintainer", "no_lru_crawler",
           "worker_logbuf_size", "ext_path", "ext_page_size", "ext_wbuf_size", "ext_item_size", "ext_max_frag",
           "ext_item_age", "ext_low_ttl", "ext_recache_rate", "ext_compact_under", "ext_drop_under",
           "ext_max_sleep", "tail_repair_time", "idle_timeout", "no_hashexpand", "bogus"]
COLUMNS = ["time", "op", "key", "key_size", "value_size", "ttl", "flags", "op_count", "value", "size", "count",
           "tme", "tll", "kye", "vaule_size", "timestamp", "key_name", ""]
CELLS = ["0", "1", "10", "100", "-1", "nan", "inf", "1e400", "", "a", "set", "get", "delete", "touch",
         "99999999999999999999", "1000000000000", "2592001", "1e3", "3.7", "\x00", "é", "key:1", "250", "251",
         "1048576", "2147483647"]
OPTIONS = {   # an option and the commands that take it
    "--uptime": ("simulate",), "--every": ("simulate",), "--sample": ("simulate",), "--key": ("simulate", "report",
                                                                                          "optimize", "place"),
    "--validate": ("optimize",), "--seed": ("optimize",), "--max-classes": ("optimize",), "--resamples": ("optimize",),
    "--flags": ("place",),
    "--value": ("place",), "--rate": ("place", "report"), "--varnish-headers": ("compare",),
    "--fetch-chunksize": ("compare",), "--nodes": ("report",), "--connections": ("report",),
    "--headroom": ("report",), "--fill": ("report",), "--overhead": ("report",), "--spare-nodes": ("report",),
    "--node-ram": ("report",), "--container": ("report",), "--fail-over-waste": ("report", "optimize"),
    "--fail-over-memory": ("report", "optimize"), "--hot": ("optimize",),
    "-n": ("all",), "-f": ("all",), "-I": ("all",), "-m": ("all",), "-t": ("all",), "-c": ("all",),
    "--slab-chunk-max": ("all",), "--slab-sizes": ("all",),
}
COMMANDS = ["classes", "place", "report", "simulate", "optimize", "compare", "stats", "profiles"]
OK_STATUSES = (0, 1, 2, 3)


@dataclass
class Case:
    """One run: its arguments (``{input}`` stands for the input file's path) and the input's bytes."""

    args: list[str]
    data: bytes = b""
    notes: list[str] = field(default_factory=list)

    def argv(self, path: str) -> list[str]:
        return [path if a == "{input}" else a for a in self.args]


def _csv(rnd: random.Random, big_gaps: bool) -> bytes:
    header = rnd.sample(COLUMNS[:8], rnd.randint(2, 7)) if rnd.random() < 0.7 else rnd.sample(COLUMNS, 4)
    if rnd.random() < 0.3:
        header[rnd.randrange(len(header))] = rnd.choice(COLUMNS)
    lines = [",".join(header)]
    t = 0
    for _ in range(rnd.randint(0, 40)):
        row = []
        for name in header:
            if name == "time" and rnd.random() < 0.8:
                t += rnd.choice([0, 1, 2, 5, 30]) + (rnd.choice([0, 86400 * 8]) if big_gaps else 0)
                row.append(str(t))
            elif name == "op" and rnd.random() < 0.8:
                row.append(rnd.choice(["set", "get", "delete", "touch"]))
            elif name in ("value_size", "value", "size", "key_size") and rnd.random() < 0.7:
                row.append(str(rnd.choice([1, 10, 100, 1000, 5000, 100000, 2000000])))
            elif name == "op_count" and rnd.random() < 0.8:
                row.append(str(rnd.choice([1, 2, 3])))
            else:
                row.append(rnd.choice(CELLS))
        lines.append(",".join(row))
    text = "\n".join(lines) + rnd.choice(["\n", "", "\r\n"])
    return text.encode("utf-8", "surrogatepass")


def _input(rnd: random.Random, big_gaps: bool) -> bytes:
    roll = rnd.random()
    data = _csv(rnd, big_gaps)
    if roll < 0.6:
        return data
    if roll < 0.7:
        return gzip.compress(data)
    if roll < 0.75:
        return bz2.compress(data)
    if roll < 0.8:
        return b"\x1f\x8b\x08" + rnd.randbytes(rnd.randint(0, 200))       # a gzip's magic, then junk
    if roll < 0.85:
        return b"BZh9" + rnd.randbytes(rnd.randint(0, 200))
    if roll < 0.92:
        return rnd.randbytes(rnd.randint(0, 400))
    cut = bytearray(data)     # a good file with bytes flipped
    for _ in range(rnd.randint(1, 5)):
        if cut:
            cut[rnd.randrange(len(cut))] = rnd.randrange(256)
    return bytes(cut)


def _o_value(rnd: random.Random, word: str) -> str:
    if word == "ext_path" and rnd.random() < 0.7:
        return f"/tmp/slabcalc-fuzz-ext:{rnd.choice(['64m', '1g', '0', 'x', '99999999t'])}"
    if word == "slab_sizes" and rnd.random() < 0.5:
        return "-".join(str(rnd.randint(1, 600000)) for _ in range(rnd.randint(1, 6)))
    return rnd.choice(NUMBERS)


def _memory(rnd: random.Random) -> str:
    return rnd.choice(["1", "4", "8", "64", "0", "nan", "16,32", "1..100000000:1", "4..64:4", "1..4097:1",
                       "16,,32", "99999999999999999999", "1g", "1.5g", "-5", "8..4:1", "1..2:0"])


def case(rnd: random.Random, big_gaps: bool = False) -> Case:
    """One random case."""
    command = rnd.choice(COMMANDS)
    args: list[str] = [command]
    data = b""
    if command in ("report", "simulate", "optimize", "compare", "stats"):
        args.append("{input}")
        data = _input(rnd, big_gaps)
    elif command == "profiles":
        args += rnd.choice([["list"], ["show", rnd.choice(RELEASES + ["9.9", "", "nan"])]])
        return Case(args, data)
    if command == "place":
        args += ["--key", rnd.choice(["1", "10", "250", "251", "0", "nan"]), "--value", rnd.choice(NUMBERS)]
    if command == "stats" and rnd.random() < 0.5:
        data = b"".join(f"STAT {rnd.choice(['pid', 'uptime', 'limit_maxbytes', 'curr_items', 'version'])} "
                        f"{rnd.choice(CELLS)}\r\n".encode("utf-8", "surrogatepass") for _ in range(rnd.randint(0, 30)))
        data += rnd.choice([b"END\r\n", b"", b"STAT 1:chunk_size nan\r\nEND\r\n"])
    if command != "stats" and rnd.random() < 0.7:
        args += ["--profile", rnd.choice(RELEASES)]
    if command == "simulate" and "--profile" not in args and not big_gaps:
        args += ["--profile", rnd.choice(RELEASES)]
    for _ in range(rnd.randint(0, 3)):
        option = rnd.choice([o for o, cmds in OPTIONS.items() if command in cmds or "all" in cmds])
        if command == "stats" and option.startswith("-") and len(option) == 2:
            continue
        args += [option, _memory(rnd) if option == "-m" else rnd.choice(NUMBERS)]
    if command != "stats" and rnd.random() < 0.5:
        words = [w if rnd.random() < 0.2 else f"{w}={_o_value(rnd, w)}"
                 for w in rnd.sample(O_WORDS, rnd.randint(1, 3))]
        args += ["-o", ",".join(words)]
    if command == "simulate" and "-m" not in args and rnd.random() < 0.3:
        args += ["-m", _memory(rnd)]
    if rnd.random() < 0.3:
        args += ["--format", rnd.choice(["json", "csv", "table", "github", "bogus"])]
    return Case(args, data)


def cases(seed: int, n: int, big_gaps: bool = False) -> list[Case]:
    rnd = random.Random(seed)
    return [case(rnd, big_gaps) for _ in range(n)]


@dataclass
class Finding:
    kind: str         # traceback, hang, out of memory, exit status
    case: Case
    said: str


def run_one(one: Case, timeout: float, memory_mb: int) -> Finding | None:
    """``one`` in its own process; its finding, or None.  A hang is tried once more with three times
    the time (a loaded machine starts Python slowly) before it counts."""
    found = _run_one(one, timeout, memory_mb)
    if found is not None and found.kind == "hang":
        found = _run_one(one, 3 * timeout, memory_mb)
    return found


def _run_one(one: Case, timeout: float, memory_mb: int) -> Finding | None:
    with tempfile.TemporaryDirectory(prefix="slabcalc-fuzz-") as tmp:
        path = os.path.join(tmp, "input.csv")
        with open(path, "wb") as f:
            f.write(one.data)

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

        env = {**os.environ, "COLUMNS": "120"}
        try:
            done = subprocess.run([sys.executable, "-m", "slabcalc", *one.argv(path)], capture_output=True,
                                  timeout=timeout, preexec_fn=limit, env=env, cwd=tmp, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return Finding("hang", one, f"over {timeout:g} s")
    err = done.stderr.decode("utf-8", "replace")
    if "MemoryError" in err or done.returncode in (-9, -6) and "Traceback" not in err:
        return Finding("out of memory", one, err.strip().splitlines()[-1] if err.strip() else str(done.returncode))
    if "Traceback" in err:
        return Finding("traceback", one, err.strip().splitlines()[-1])
    if done.returncode not in OK_STATUSES:
        return Finding("exit status", one, f"{done.returncode}: {err.strip()[-200:]}")
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds a run may take")
    parser.add_argument("--memory", type=int, default=1024, help="MiB of address space a run may take")
    parser.add_argument("--big-gaps", action="store_true", help="workloads with gaps of days (see above)")
    options = parser.parse_args(argv)
    todo = cases(options.seed, options.runs, options.big_gaps)
    with ThreadPoolExecutor(options.jobs) as pool:
        findings = [f for f in pool.map(lambda c: run_one(c, options.timeout, options.memory), todo) if f]
    for finding in findings:
        print(f"{finding.kind}: slabcalc {' '.join(finding.case.args)}  (input {finding.case.data[:80]!r}"
              f"{'...' if len(finding.case.data) > 80 else ''}): {finding.said}")
    kinds = {k: sum(f.kind == k for f in findings) for k in ("traceback", "hang", "out of memory", "exit status")}
    print(f"{len(todo)} runs (seed {options.seed}): " + ", ".join(f"{v} {k}" for k, v in kinds.items()))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
