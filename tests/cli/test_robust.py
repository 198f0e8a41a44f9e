"""No crash, hang or unbounded memory on any input (issue 41): every numeric option a finite number
in its range, -m ranges counted before they are expanded, -o values checked as memcached checks
them, op_count bounded, a server's reply bounded; each refusal one line with its exit status."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest
from helpers import ROOT, run

WORKLOAD = str(ROOT / "examples" / "calcification.csv")
ITEMS = str(ROOT / "examples" / "items.csv")


def _one_line(result, status: int, says: str = "") -> None:
    assert result.exit_code == status, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert says in result.stderr, result.stderr


# -- numeric options: NaN, infinity and values past any sensible bound are usage errors ---------------

NUMBERS = [
    (["simulate", WORKLOAD, "--uptime"], "nan"),           # a traceback (int(nan)) before
    (["simulate", WORKLOAD, "--uptime"], "inf"),
    (["simulate", WORKLOAD, "--every"], "nan"),            # exit 0 with NaN in the JSON before
    (["simulate", WORKLOAD, "--every"], "inf"),
    (["simulate", WORKLOAD, "--every"], "-inf"),
    (["simulate", WORKLOAD, "--sample"], "nan"),
    (["simulate", WORKLOAD, "--uptime"], "1e400"),         # float() reads it as infinity
    (["optimize", ITEMS, "--validate"], "nan"),
    (["stats", "--server", "127.0.0.1:1", "--timeout"], "nan"),    # ValueError from the socket before
    (["stats", "--server", "127.0.0.1:1", "--timeout"], "inf"),    # OverflowError before
    (["stats", "--server", "127.0.0.1:1", "--watch"], "inf"),
    (["stats", "--server", "127.0.0.1:1", "--watch"], "nan"),
    (["stats", "--server", "127.0.0.1:1", "--interval"], "100000000000000000000"),  # sleep() overflowed
    (["stats", "--server", "127.0.0.1:1", "--count"], "100000000000000000000"),
    (["place", "--key", "10", "--value", "10", "--flags"], "99999999999999999999"),
    (["compare", ITEMS, "--varnish-headers"], "99999999999999999999"),
    (["report", ITEMS, "--nodes", "2", "--connections"], "99999999999999999999"),
    (["optimize", ITEMS, "--seed"], "99999999999999999999999999"),
]


@pytest.mark.parametrize("args,value", NUMBERS)
def test_a_number_out_of_range_or_not_finite_is_one_line_and_exit_2(args, value):
    _one_line(run(*args, value), 2, value)


def test_a_finite_number_in_range_still_runs():
    result = run("simulate", WORKLOAD, "--uptime", "3600", "--every", "0.5", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "NaN" not in result.stdout and "Infinity" not in result.stdout


def test_a_required_key_is_asked_for():
    """``place`` without ``--key``: click 8.3+ took the explicit default None as given (a traceback)."""
    _one_line(run("place", "--value", "10"), 2, "--key")


# -- -m ranges: counted before they are expanded ------------------------------------------------------

def _limited(*args: str, mib: int = 512) -> subprocess.CompletedProcess:
    """slabcalc ARGS in a process of at most ``mib`` MiB of address space."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return subprocess.run([sys.executable, "-m", "slabcalc", *args], capture_output=True, text=True,
                          timeout=60, preexec_fn=limit)


@pytest.mark.parametrize("limits", ["1..100000000:1", "1..4097:1", "5000,1..4096:1", "1..1000000000000000000:1"])
def test_a_curve_of_too_many_limits_is_counted_not_expanded(limits):
    done = _limited("simulate", WORKLOAD, "-m", limits)       # MemoryError before (10**8 limits in a set)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert "at most 4096" in done.stderr and limits in done.stderr


def test_a_curve_of_4096_limits_is_counted_as_4096():
    from slabcalc.cli.common import memory_limits

    assert len(memory_limits("1..4096:1,2..4096:2")) == 4096


# -- -o values: as memcached checks them, and what it takes but the replay cannot represent ----------

@pytest.mark.parametrize("word,says", [
    ("hashpower=65", "Initial hashtable multiplier of 65 is too high"),      # accepted before
    ("hashpower=33", "Initial hashtable multiplier of 33 is too high"),      # 12..32 since 1.5.2
    ("hashpower=2147483647", "Initial hashtable multiplier of 2147483647 is too high"),   # a traceback before
    ("hashpower=11", "Initial hashtable multiplier of 11 is too low"),
    ("hashpower", "Missing numeric argument for hashpower"),
])
def test_hashpower_is_checked_as_memcached_checks_it(word, says):
    for command in (["report", ITEMS], ["classes"], ["simulate", WORKLOAD]):
        _one_line(run(*command, "--profile", "1.6.18", "-o", word), 2, says)


def test_hashpower_64_is_taken_before_1_5_2():
    assert run("classes", "--profile", "1.5.1", "-o", "hashpower=64").exit_code == 0
    _one_line(run("classes", "--profile", "1.5.2", "-o", "hashpower=64"), 2, "is too high")


@pytest.mark.parametrize("word", ["hot_max_factor=1e9", "warm_max_factor=1e9",
                                  "hot_max_factor=nan", "warm_max_factor=inf", "slab_automove_ratio=nan"])
def test_simulate_refuses_a_value_memcached_takes_but_the_replay_cannot_represent(word):
    """1e9 crashed the compiled maintainer ("int too large to convert to i32"), nan a traceback.
    NaN and infinity make every juggle's age undefined (0 x inf is NaN); 1e9 makes the COLD tail's
    age x 1e9 leave rel_time_t once that tail is 5 s old: refused there (exit 2), naming the release
    and the arithmetic."""
    _one_line(run("simulate", WORKLOAD, "--profile", "1.6.18", "-o", word), 2, word.split("=")[0])
    if "1e9" in word:
        said = run("simulate", WORKLOAD, "--profile", "1.6.45", "-o", word).stderr
        assert f"memcached 1.6.45 computes {word.split('_')[0]}_age = cold_age x {word[:-4]} = " in said
        assert "into a 32-bit rel_time_t" in said and "undefined in C" in said
    assert run("report", ITEMS, "--profile", "1.6.18", "-o", word).exit_code == 0    # no bearing on a layout


@pytest.mark.parametrize("release", ["1.6.18", "1.6.45"])
def test_a_factor_above_2_that_keeps_every_age_in_rel_time_t_is_replayed(release):
    # memcached takes any factor > 0 (1.6.18 memcached.c 5370-5391); the product stays a defined
    # rel_time_t while cold_age x factor < 2^32 (the calcification workload's COLD tails stay under
    # 3 hours old: x 1000 is far inside), and it was refused above 2 before
    result = run("simulate", WORKLOAD, "--profile", release, "-o", "hot_max_factor=3,warm_max_factor=1000",
                 "--format", "json")
    assert result.exit_code == 0, result.output


def test_memcached_takes_the_values_simulate_refuses(memcached):
    """The real server starts with them: the refusal is the model's, and says so (not memcached's)."""
    from memcached_server import run_vv

    for word in ("hot_max_factor=1e9", "warm_max_factor=nan", "slab_automove_ratio=nan"):
        assert run_vv(["-o", word], memcached=memcached).started, word
    for word in ("hashpower=33", "hashpower=65", "hashpower=11"):
        assert not run_vv(["-o", word], memcached=memcached).started, word


# -- a server's reply: bounded in lines and bytes, not kept to the deadline ---------------------------

def _endless_stats(conn, line=b"STAT curr_items 1\r\n"):
    """Answers version, then a stats reply that never ends (no real memcached does this)."""
    from test_stats_faults import REPLIES

    conn.recv(4096)
    conn.sendall(REPLIES["version"])
    conn.recv(4096)
    block = line * 4096
    while True:
        conn.sendall(block)


@pytest.mark.parametrize("line", [b"STAT curr_items 1\r\n", b"STAT x " + b"9" * 60000 + b"\r\n"])
def test_a_stats_reply_that_never_ends_is_cut_off_at_a_bound(line):
    """Kept line by line until --timeout before: 2.8 GB in 45 s."""
    import time

    from test_stats_faults import FakeServer

    server = FakeServer(lambda conn: _endless_stats(conn, line))
    try:
        started = time.monotonic()
        result = run("stats", "--server", server.address, "--timeout", "60")
        assert time.monotonic() - started < 20                  # long before the deadline
    finally:
        server.close()
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.count("\n") == 1 and "without its END: not memcached" in result.stderr, result.stderr



# -- op_count: a stated bound, a data error past it --------------------------------------------------

@pytest.mark.parametrize("count", ["1000000000000", "1048577"])
@pytest.mark.parametrize("limits", ["8", "4,8"])
def test_an_op_count_past_its_bound_is_a_data_error_naming_file_line_and_value(tmp_path, count, limits):
    """10**12 on one row replayed for days (or aborted with SIGABRT in a curve) before."""
    path = tmp_path / "w.csv"
    path.write_text(f"time,op,key,value_size,ttl,op_count\n0,set,a,10,0,1\n1,get,a,,,{count}\n")
    _one_line(run("simulate", str(path), "-m", limits, "--profile", "1.6.29"), 1, f"w.csv:3: op_count")
    assert repr(count) in run("simulate", str(path), "-m", limits, "--profile", "1.6.29").stderr


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
def test_an_op_count_at_its_bound_is_replayed_in_full(tmp_path):
    from slabcalc.inputs.workload import OP_COUNT_MAX

    path = tmp_path / "w.csv"
    path.write_text(f"time,op,key,value_size,ttl,op_count\n0,set,a,10,0,1\n1,get,a,,,{OP_COUNT_MAX}\n")
    result = run("simulate", str(path), "--profile", "1.6.29", "--format", "json")
    assert result.exit_code == 0, result.output
    assert f'"get_hits": {OP_COUNT_MAX}' in result.stdout


# -- a short seeded pass of the fuzzer (scripts/fuzz.py), in-process ----------------------------------

def _fuzz():
    import importlib.util

    spec = importlib.util.spec_from_file_location("slabcalc_fuzz", ROOT / "scripts" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_seeded_fuzz_pass_finds_no_traceback_hang_or_bad_status(tmp_path, monkeypatch):
    import signal

    from click.testing import CliRunner

    from slabcalc.cli import cli

    fuzz = _fuzz()
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "input.csv"

    def hang(signum, frame):
        raise TimeoutError("hang")

    previous = signal.signal(signal.SIGALRM, hang)
    found = []
    try:
        for case in fuzz.cases(seed=41, n=60):
            path.write_bytes(case.data)
            signal.alarm(20)
            try:
                result = CliRunner(env={"COLUMNS": "120"}).invoke(cli, case.argv(str(path)), prog_name="slabcalc")
            finally:
                signal.alarm(0)
            crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
            if crashed or result.exit_code not in fuzz.OK_STATUSES:
                found.append(f"{case.args}: {result.exit_code} {result.exception!r}")
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not found, found
