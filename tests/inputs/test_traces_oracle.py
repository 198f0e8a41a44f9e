"""oracleGeneral files written by libCacheSim itself, the format's reference implementation.

libCacheSim (PyPI ``libcachesim``, the bindings of the C library that defines the format:
``traceReader/customizedReader/oracle/oracleGeneralBin.h``, written by
``traceConv/traceConvOracleGeneral.cpp``) converts a CSV trace into an oracleGeneral file; slabcalc
must read from that file exactly the requests of the CSV, and replay it as the same look-aside
requests.  Without libcachesim the test skips, and fails when ``CI`` is set (.ci/run installs
the ``oracle`` extra).
"""

from __future__ import annotations

import io
import random

from memcached_server import missing

from slabcalc import configure, load_profile
from slabcalc.engines.simulate import simulate
from slabcalc.inputs.traces import read_oracle_general
from slabcalc.model.ops import FILL


def _libcachesim():
    try:
        import libcachesim
    except ImportError as exc:
        missing(f"libcachesim is not installed (pip install -e '.[oracle]'): {exc}")
    return libcachesim


def _requests(n: int, seed: int = 14, jump: int = 3600) -> list[tuple[int, int, int]]:
    """``(clock_time, obj_id, obj_size)``: ids up to 2**64 - 1, sizes from 17 bytes to 1 MB, a
    clock that stays put and jumps (by up to ``jump`` s), and objects asked for again (some at
    another size)."""
    rng = random.Random(seed)
    ids = [rng.randrange(1, 2**64) for _ in range(n // 4)] + [1, 2**64 - 1]
    size = {}
    out, clock = [], rng.randrange(0, 2**30)      # the replay's clock ends at 2**31 - 2**26 (model/ops.py)
    for i in range(n):
        clock += rng.choice((0, 0, 1, 2, jump))
        obj = rng.choice(ids)
        if obj not in size or rng.random() < 0.05:
            size[obj] = rng.choice((17, 100, 1000, rng.randrange(17, 1 << 20)))
        out.append((clock, obj, size[obj]))
    return out


def _write_with_libcachesim(lcs, requests, tmp_path) -> bytes:
    source = tmp_path / "trace.csv"
    source.write_text("time,obj,size\n" + "".join(f"{t},{o},{s}\n" for t, o, s in requests))
    params = lcs.ReaderInitParam(has_header=True, has_header_set=True, delimiter=",",
                                 obj_id_is_num=True, obj_id_is_num_set=True)
    params.time_field, params.obj_id_field, params.obj_size_field = 1, 2, 3
    reader = lcs.TraceReader(str(source), trace_type=lcs.TraceType.CSV_TRACE, reader_init_params=params)
    target = tmp_path / "trace.oracleGeneral"
    lcs.Util.convert_to_oracleGeneral(reader._reader, str(target))
    return target.read_bytes()


def test_a_file_libcachesim_wrote_reads_as_its_requests(tmp_path):
    lcs = _libcachesim()
    requests = _requests(2000)
    data = _write_with_libcachesim(lcs, requests, tmp_path)
    assert len(data) == 24 * len(requests)                 # the 24-byte records this reader expects
    ops, accounting = read_oracle_general(io.BytesIO(data), "trace.oracleGeneral", key_length=16)
    read = [(t, obj, key + value) for t, op, obj, key, value, _, _ in ops if op == FILL]
    assert read == [(float(t), obj, size) for t, obj, size in requests]
    assert (accounting.rows, accounting.items, accounting.rejected) == (len(requests), len(requests), 0)


def test_libcachesim_reads_what_this_reader_reads(tmp_path):
    """The other way round: libCacheSim's own reader, on the file it wrote, gives the fields
    slabcalc takes (so neither side merely agrees with itself)."""
    lcs = _libcachesim()
    requests = _requests(500, seed=3)
    _write_with_libcachesim(lcs, requests, tmp_path)
    reader = lcs.TraceReader(str(tmp_path / "trace.oracleGeneral"), trace_type=lcs.TraceType.ORACLE_GENERAL_TRACE)
    theirs = [(r.clock_time, r.obj_id, r.obj_size) for r in reader]
    with open(tmp_path / "trace.oracleGeneral", "rb") as f:
        ops, _ = read_oracle_general(f, "trace.oracleGeneral", key_length=16)
        mine = [(int(t), obj, key + value) for t, _, obj, key, value, _, _ in ops]
    assert mine == theirs == requests


def test_a_libcachesim_trace_replays_as_the_same_requests_in_csv(tmp_path):
    """simulate on libCacheSim's file = simulate on the requests as look-aside reads, key 16."""
    lcs = _libcachesim()
    # the background threads run on the workload's clock: jumps of seconds, not hours
    requests = [(t, o, min(s, 60_000)) for t, o, s in _requests(1500, seed=5, jump=5)]
    start = requests[0][0]
    requests = [(t - start, o, s) for t, o, s in requests]       # a workload clock from 0
    data = _write_with_libcachesim(lcs, requests, tmp_path)
    settings = configure(load_profile("1.6.18"), ["-m", "4"])
    ops, _ = read_oracle_general(io.BytesIO(data), "trace.oracleGeneral", key_length=16)
    from_file = simulate(settings, ops)
    direct = simulate(settings, [(float(t), FILL, o, 16, s - 16, 0, 0) for t, o, s in requests])
    assert from_file.totals == direct.totals and from_file.classes == direct.classes
    assert from_file.totals.gets == len(requests) and from_file.totals.evicted > 0
