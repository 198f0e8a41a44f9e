"""``simulate --hash-keys``: string keys kept as 60-bit hashes replay counter for counter as their text,
cost a 32-byte int each, and the model states the bound on a collision (issue 29)."""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tracemalloc
from dataclasses import asdict

import pytest
from click.testing import CliRunner

from slabcalc import configure, load_profile
from slabcalc.cli import cli
from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.keys import hashed, key_digest
from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, simulate
from slabcalc.records.simulate import simulation_record

PROFILE = load_profile("1.6.18")


def workload(seed: int, n: int = 400) -> list[tuple]:
    """Sets (chunked ones too), gets, deletes and touches with TTLs, over idle seconds: every path."""
    rng = random.Random(seed)
    ops, t = [], 0.0
    for _ in range(n):
        t += rng.choice([0, 0.001, 0.5, 3])
        op = rng.choice([SET, SET, GET, GET, DELETE, TOUCH])
        key = f"k{rng.randrange(120)}"
        value = rng.choice([40_000, 10, 100, 900, 5_000, 600_000]) if op == SET else 0
        ops.append((t, op, key, len(key), value, rng.choice([0, 2, 30]), 0))
    return ops


@pytest.mark.parametrize("argv", [["-m", "2"], ["-m", "3", "-o", "slab_automove=2"], ["-m", "2", "-o", "no_modern"]])
def test_hashed_keys_replay_counter_for_counter_as_their_text(argv):
    settings = configure(PROFILE, argv)
    for seed in (1, 2):
        ops = workload(seed)
        text, hashed_ = simulate(settings, ops), simulate(settings, ops, hash_keys=True)
        assert text.totals.evicted and text.totals.hits        # the workload reaches evictions and hits
        assert asdict(hashed_.totals) == asdict(text.totals)
        assert [asdict(r) for r in hashed_.classes] == [asdict(r) for r in text.classes]


def test_a_sampled_replay_samples_on_the_key_text_before_hashing():
    settings = configure(PROFILE, ["-m", "64"])
    ops = workload(3, 800)
    text, hashed_ = simulate(settings, ops, sample=0.5), simulate(settings, ops, sample=0.5, hash_keys=True)
    assert asdict(hashed_.totals) == asdict(text.totals) and hashed_.sample == text.sample


def test_resident_keys_are_60_bit_ints_and_integer_keys_stay_as_they_are():
    settings = configure(PROFILE, ["-m", "64"])
    engine = Engine(settings, background_for(settings))
    engine.run(hashed([(0.0, SET, f"key:{i:09d}", 13, 100, 0, 0) for i in range(1000)]
                      + [(1.0, SET, 2**63 + 5, 16, 100, 0, 0)]))
    keys = set(engine.index)
    assert 2**63 + 5 in keys and len(keys) == 1001
    assert all(type(k) is int and k < 2**60 for k in keys - {2**63 + 5})


def test_a_hashed_key_is_allocated_in_32_bytes():
    """What tracemalloc sees allocated, not ``sys.getsizeof`` (a right shift of a 64-bit int keeps its
    36-byte block, which pymalloc rounds to 48, while getsizeof says 32)."""
    names = [f"key:{i:09d}" for i in range(1000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        keys = [key_digest(name) for name in names]
        allocated = tracemalloc.get_traced_memory()[0] - before - sys.getsizeof(keys)
    finally:
        tracemalloc.stop()
    # 32 bytes a key, give or take the few blocks the interpreter allocates on the way (runs saw 8 to
    # 348 bytes more); 48 bytes a key, what a shift allocates, is 16 000 more
    assert allocated <= 32 * len(keys) + 2048


def test_the_hash_is_blake2b_of_the_utf8_bytes_the_same_in_every_process():
    for key in ("a", "key:000000001", "ключ"):
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
        assert key_digest(key) == int.from_bytes(digest, "little") % 2**60


def test_the_model_states_the_bound_only_when_keys_are_hashed():
    settings = configure(PROFILE, ["-m", "2"])
    ops = workload(4, 1000)
    plain = simulation_record(simulate(settings, ops))["model"]
    assert "key_hash_bits" not in plain and "hashes" not in plain["text"]
    model = simulation_record(simulate(settings, ops, hash_keys=True))["model"]
    assert model["key_hash_bits"] == 60
    assert model["key_collision_bound"] == pytest.approx(1000 * 999 / 2**61)
    assert "string keys kept as 60-bit hashes" in model["text"] and "4.3e-13" in model["text"]


def test_the_cli_hashes_one_replay_and_refuses_a_curve(tmp_path):
    path = tmp_path / "ops.csv"
    path.write_text("time,op,key,key_size,value_size,ttl\n" + "".join(
        f"{t},{'set' if op == SET else 'get'},{key},{ks},{vs},{ttl}\n"
        for t, op, key, ks, vs, ttl, _ in workload(5, 300) if op in (SET, GET)))
    runner = CliRunner()
    done = runner.invoke(cli, ["simulate", str(path), "-m", "2", "--hash-keys", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["model"]["key_hash_bits"] == 60
    refused = runner.invoke(cli, ["simulate", str(path), "-m", "2,4", "--hash-keys"])
    assert refused.exit_code == 2 and "--hash-keys" in refused.output


def test_extstore_replays_hashed_keys_as_their_text():
    """extstore keeps its own tables by key (headers, flash references): they take the hashes too."""
    settings = configure(PROFILE, ["-m", "16", "-o", "ext_path=/tmp/ext.data:1g"])
    rng = random.Random(6)
    ops = [(i / 1000, SET, f"key:{i}", 8, rng.randrange(2_000, 20_000), 0, 0) for i in range(3000)]
    ops += [(3 + i / 1000, GET, f"key:{rng.randrange(3000)}", 8, 0, 0, 0) for i in range(3000)]
    text, hashed_ = simulate(settings, ops), simulate(settings, ops, hash_keys=True)
    assert text.extstore["extstore_objects_written"] and text.totals.hits
    assert dict(hashed_.extstore) == dict(text.extstore) and asdict(hashed_.totals) == asdict(text.totals)
