"""Every release line: resolution, fixed points from memcached's docs and tests, profiles
listing, and a sweep of 10 000 configurations through the model's invariants."""

from __future__ import annotations

import json
import random

import pytest
import yaml
from helpers import run

from slabcalc import Refused, configure, load_profile, place, slab_classes, vv_lines
from slabcalc.model.profile import ProfileError, bundled_segments, release_key, resolved_rules


def every_release() -> list[str]:
    """Each release number the bundled profiles claim, oldest first."""
    releases = []
    for segment in bundled_segments():
        major, minor, first = release_key(segment.first)
        for patch in range(first, release_key(segment.last)[2] + 1):
            releases.append(f"{major}.{minor}.{patch}")
    return releases


RELEASES = every_release()




# -- what is claimed -------------------------------------------------------------------

def test_every_release_from_1_2_4_to_1_6_45_is_claimed_once():
    expected = ([f"1.2.{p}" for p in range(4, 9)] + [f"1.4.{p}" for p in range(3, 40)]
                + [f"1.5.{p}" for p in range(0, 23)] + [f"1.6.{p}" for p in range(0, 46)])
    assert RELEASES == expected
    for release in ("1.2.3", "1.3.3", "1.4.2", "1.4.40", "1.5.23", "1.6.46"):
        with pytest.raises(ProfileError, match="unsupported memcached release"):
            load_profile(release)


@pytest.mark.parametrize("boundary", ["1.2.4", "1.4.3", "1.4.23", "1.4.27", "1.4.29", "1.4.30", "1.4.31",
                                      "1.4.35", "1.4.36", "1.4.39", "1.5.0", "1.5.4", "1.5.15", "1.5.17",
                                      "1.6.0", "1.6.17", "1.6.24", "1.6.40"])
def test_each_rule_change_starts_a_listed_run(boundary):
    assert boundary in [s.first for s in bundled_segments()]


def test_runs_are_nonempty_and_start_once():
    """Two changes entries of one release (kept apart by topic in the YAML) make one run, not a
    run that ends before it starts (1.6.25-1.6.24 once did)."""
    segments = bundled_segments()
    assert all(release_key(s.first) <= release_key(s.last) for s in segments)
    firsts = [(s.profile, s.first) for s in segments]
    assert len(firsts) == len(set(firsts))


def test_profiles_command_lists_the_runs():
    result = run("profiles", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["profiles"]
    assert (rows[0]["first"], rows[0]["last"], rows[-1]["last"]) == ("1.2.4", "1.2.8", "1.6.45")
    assert {"profile": "memcached-1.4.29", "first": "1.4.36", "last": "1.4.36", "changes": ["chunked"]} in rows
    table = run("profiles").output
    assert table.splitlines()[0].split() == ["profile", "first", "last", "changes"]


@pytest.mark.parametrize("release", ["1.2.6", "1.4.24", "1.4.28", "1.4.33", "1.4.35", "1.4.39", "1.5.10",
                                     "1.5.20", "1.6.20", "1.6.45"])
def test_profiles_show_prints_a_profile_that_loads_as_the_release(tmp_path, release):
    result = run("profiles", "show", release)
    assert result.exit_code == 0, result.output
    path = tmp_path / "copy.yaml"
    path.write_text(result.output)
    shown, bundled = load_profile(str(path)), load_profile(release)
    for bits in (32, 64):
        shown, bundled = load_profile(str(path), bits=bits), load_profile(release, bits=bits)
        assert {**vars(shown), "source": None} == {**vars(bundled), "source": None}
    assert yaml.safe_load(result.output)["release"] == release


def test_profiles_show_refuses_unknown_releases():
    result = run("profiles", "show", "1.3.0")
    assert result.exit_code == 2
    assert result.output.startswith("Error: unsupported memcached release 1.3.0; supported: 1.2.4-1.2.8,")


def test_a_misspelt_field_is_named(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("base: 1.4.24\nitem: {headr: 50}\n")
    with pytest.raises(ProfileError, match=r"^profile .*typo.yaml: field item.headr: unknown field"):
        load_profile(str(path))


def test_resolved_rules_of_a_user_profile_name_their_base():
    rules = resolved_rules("examples/wide-header.yaml")
    assert rules["item"]["header"] == {64: 56, 32: 40}
    assert rules["release"] == "1.6.18"


# -- fixed points from memcached's documentation and test suite ---------------------------

@pytest.mark.parametrize("release", ["1.2.4", "1.2.5", "1.2.6", "1.2.7", "1.2.8"])
def test_1_2_first_class(release):
    # published 1.2.x -vv: "chunk size 104 perslab 10082" (64-bit), "88 perslab 11915" (32-bit)
    assert vv_lines(configure(load_profile(release)))[0] == "slab class   1: chunk size    104 perslab 10082"
    first = slab_classes(configure(load_profile(release, bits=32)))[0]
    assert (first.chunk_size, first.perslab) == (88, 11915)


def issue_42_size(release: str, bits: int, args=()) -> int:
    """t/issue_42.t: key "keyN", a 10-byte value, flags 0."""
    settings = configure(load_profile(release, bits=bits), list(args))
    return place(settings, 4, 10, 0).item_size


@pytest.mark.parametrize("release", [r for r in RELEASES if "1.4.3" <= r and release_key(r) < (1, 5, 0)])
def test_issue_42_text_flags(release):
    assert (issue_42_size(release, 64), issue_42_size(release, 32)) == (80, 64)


@pytest.mark.parametrize("release", ["1.4.35", "1.4.36", "1.4.37", "1.4.38"])
def test_issue_42_four_byte_binary_flags(release):
    # 1.4.35-1.4.38 -o no_inline_ascii_resp: flags stored as 4 bytes even when 0 (mem_requested 770)
    assert issue_42_size(release, 64, ["-o", "no_inline_ascii_resp"]) == 77
    assert issue_42_size(release, 64, ["-o", "modern"]) == 77


@pytest.mark.parametrize("release", ["1.4.39", "1.5.0", "1.5.14", "1.5.22", "1.6.0", "1.6.45"])
def test_issue_42_zero_flags_cost_nothing(release):
    args = ["-o", "no_inline_ascii_resp"] if release == "1.4.39" else []
    # 1.5.17+ checks items:1:mem_requested in (500, 10 x chunk_size): 10 x 73
    assert issue_42_size(release, 64, args) == 73


@pytest.mark.parametrize("release", ["1.2.4", "1.2.8", "1.4.3", "1.4.24", "1.4.28", "1.4.29", "1.4.33",
                                     "1.4.36", "1.4.39", "1.5.0", "1.5.22", "1.6.18", "1.6.45"])
def test_lru_t_capacity(release):
    # t/lru.t: default -m 64, values of 1048326 bytes (573440 on 1.2.x) fill one 1 MiB page each:
    # 64 fit, so 101 sets make 37 evictions. 1.5+ runs it with -o no_modern.
    value = 573440 if release.startswith("1.2.") else 1048326
    args = ["place", "--profile", release, "-m", "64m", "--key", "5", "--value", str(value), "--format", "json"]
    if release_key(release) >= (1, 5, 0):
        args += ["-o", "no_modern"]
    result = run(*args)
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["capacity"] == 64
    assert 101 - record["capacity"] == 37


@pytest.mark.parametrize("release", ["1.4.29", "1.4.30", "1.4.31", "1.4.35"])
def test_eager_chunks_all_come_from_the_largest_class(release):
    settings = configure(load_profile(release), ["-o", "slab_chunk_max=16384"])
    placement = place(settings, 10, 100000, 0)
    largest = slab_classes(settings)[-1]
    assert placement.status == "chunked"
    assert {c.class_id for c in placement.chunks} == {largest.id}
    # chunks_req = ceil(ntotal / (chunk_size - sizeof(item_chunk)))
    csize = largest.chunk_size - 48
    assert len(placement.chunks) == -(-placement.item_size // csize)


def test_modern_in_1_4_29_sets_chunk_max_and_factor():
    settings = configure(load_profile("1.4.29"), ["-o", "modern"])
    assert (settings.slab_chunk_max, settings.factor, settings.slab_reassign) == (16384, 1.08, True)
    later = configure(load_profile("1.4.31"), ["-o", "modern"])
    assert (later.slab_chunk_max, later.factor) == (524288, 1.25)
    explicit = configure(load_profile("1.4.31"), ["-o", "slab_chunk_max=16384,modern"])
    assert explicit.slab_chunk_max == 16384


def test_1_5_0_to_1_5_3_decide_the_big_item_chunk_max_at_the_option():
    # -I 2m then no_modern: in 1.5.0-1.5.3 -I lowered the chunk max first, then no_modern
    # raised it to a page again; from 1.5.4 the -I rule runs last and wins.
    args = ["-I", "2m", "-o", "no_modern"]
    assert configure(load_profile("1.5.3"), args).slab_chunk_max == 1048576
    assert configure(load_profile("1.5.4"), args).slab_chunk_max == 524288


@pytest.mark.parametrize("release", ["1.4.31", "1.4.39", "1.5.0", "1.5.16"])
def test_slab_sizes_read_from_a_freed_buffer(release):
    # 1.4.31-1.5.16 parse slab_sizes after freeing their copy of the -o argument: glibc
    # overwrites its first 16 bytes, so a value starting there reads as 0 (the 1.4.39 capture
    # refuses every first-token slab_sizes this way); a value further in survives
    with pytest.raises(Refused, match="^slab size 0 is out of valid range$"):
        configure(load_profile(release), ["-o", "slab_sizes=96-200-1024"])
    later = configure(load_profile(release), ["-o", "slab_reassign,slab_sizes=96-200-1024"])
    assert later.slab_sizes == (96, 200, 1024)


@pytest.mark.parametrize("release", ["1.4.27", "1.4.30", "1.5.17", "1.5.22", "1.6.18"])
def test_slab_sizes_work_where_the_value_is_kept(release):
    classes = slab_classes(configure(load_profile(release), ["-o", "slab_sizes=96-200-1024"]))
    assert [c.chunk_size for c in classes][:3] == [96, 200, 1024]


@pytest.mark.parametrize("release", ["1.4.29", "1.4.39", "1.5.22", "1.6.18"])
def test_worker_logbuf_size_falls_through_into_slab_sizes(release):
    # memcached issue #1245: no break after case WORKER_LOGBUF_SIZE
    settings = configure(load_profile(release), ["-o", "worker_logbuf_size=4096"])
    assert settings.slab_sizes == (4096,)
    with pytest.raises(Refused, match="^slab size 16 is out of valid range$"):
        configure(load_profile(release), ["-o", "worker_logbuf_size=16"])


def test_suboptions_arrive_release_by_release():
    with pytest.raises(Refused, match="invalid option -- 'o'"):
        configure(load_profile("1.4.7"), ["-o", "maxconns_fast"])
    configure(load_profile("1.4.8"), ["-o", "maxconns_fast,hashpower=16"])
    with pytest.raises(Refused, match='^Illegal suboption "slab_reassign"$') as refused:
        configure(load_profile("1.4.10"), ["-o", "maxconns_fast,slab_reassign,x"])
    assert (refused.value.stream, refused.value.exit_status) == ("stdout", 1)
    assert configure(load_profile("1.4.11"), ["-o", "slab_reassign,"]).slab_reassign
    with pytest.raises(Refused, match='^Illegal suboption "no_modern"$'):
        configure(load_profile("1.4.39"), ["-o", "no_modern"])
    with pytest.raises(Refused, match="invalid option -- 'X'"):
        configure(load_profile("1.4.33"), ["-X"])
    configure(load_profile("1.4.34"), ["-X"])


def test_1_2_refuses_options_it_does_not_have():
    for flag in (["-C"], ["-I", "2m"], ["-o", "modern"]):
        with pytest.raises(Refused) as refused:
            configure(load_profile("1.2.8"), flag)
        assert refused.value.message == f"memcached: invalid option -- '{flag[0][1]}'\nIllegal argument \"?\""


# -- a sweep of configurations through the model's invariants ------------------------------

def random_args(rng: random.Random, release: str) -> list[str]:
    args = []
    if rng.random() < 0.7:
        args += ["-n", str(rng.choice([1, 5, 16, 48, 72, 100, 500, rng.randint(1, 2000)]))]
    if rng.random() < 0.8:
        args += ["-f", str(rng.choice([1.01, 1.05, 1.08, 1.1, 1.25, 1.5, 2.0, 3.0, round(rng.uniform(1.001, 4), 3)]))]
    if rng.random() < 0.3:
        args += ["-I", rng.choice(["512k", "1m", "2m", "4m", "1024k", str(rng.randint(1024, 1 << 22))])]
    if rng.random() < 0.3:
        args += ["-m", str(rng.choice([8, 64, 1024, 8192]))]
    if rng.random() < 0.3:
        args += ["-C"]
    if rng.random() < 0.3:
        kib = release_key(release) >= (1, 6, 24)
        size = rng.choice([1, 2, 4, 16, 64, 256, 512, 1024]) * (1 if kib else 1024)
        args += ["-o", rng.choice([f"slab_chunk_max={size}", "modern", "no_modern", "no_chunked_items",
                                   "slab_reassign", "slab_sizes=96-200-1024-4096"])]
    return args


@pytest.mark.slow        # the engine's replays, in plain Python in the floors run
def test_ten_thousand_configurations_keep_the_invariants():
    rng = random.Random(20261121)
    accepted = refused = 0
    profiles = {(release, bits): load_profile(release, bits=bits) for release in RELEASES for bits in (32, 64)}
    while accepted < 10_000:
        release, bits = rng.choice(RELEASES), rng.choice([32, 64])
        profile = profiles[release, bits]
        args = random_args(rng, release)
        try:
            settings = configure(profile, args)
        except Refused:
            refused += 1
            continue
        accepted += 1
        classes = slab_classes(settings)
        where = f"{release} {bits}-bit {args}"
        regular, largest = classes[:-1], classes[-1]
        sizes = [c.chunk_size for c in regular]
        assert sizes == sorted(sizes), where                             # non-decreasing
        assert all(size % profile.align == 0 for size in sizes), where   # aligned
        assert [c.id for c in classes] == list(range(1, len(classes) + 1)), where
        assert len(regular) <= profile.max_regular, where                # the release's cap
        assert largest.chunk_size == settings.largest_chunk, where       # ends with the largest class
        assert all(c.perslab == settings.slab_page_size // c.chunk_size for c in regular), where
        assert not sizes or sizes[-1] <= largest.chunk_size or settings.slab_sizes, where
        for _ in range(3):
            key = rng.randint(1, 250)
            value = rng.choice([0, 1, rng.randint(0, 5000), rng.randint(0, 600000), rng.randint(0, 2 << 20)])
            flags = rng.choice([0, 1, 2 ** 31, 2 ** 32 - 1])
            placement = place(settings, key, value, flags, classes)
            if placement.status == "too_large":
                assert placement.item_size > min(settings.item_size_max, largest.chunk_size)
                continue
            assert placement.chunks, where
            for chunk in placement.chunks:                                # every chunk holds its bytes
                assert chunk.requested <= chunk.chunk_size, (where, key, value, flags)
                assert classes[chunk.class_id - 1].chunk_size == chunk.chunk_size
    assert accepted == 10_000 and refused > 0


def test_example_user_profiles():
    aligned = slab_classes(configure(load_profile("examples/align4-build.yaml"), ["-n", "2", "-f", "2"]))
    stock = slab_classes(configure(load_profile("1.4.24"), ["-n", "2", "-f", "2"]))
    assert (aligned[0].chunk_size, stock[0].chunk_size) == (52, 56)
    managed = load_profile("examples/managed-service.yaml")
    settings = configure(managed)
    assert (settings.use_cas, settings.chunk_size, settings.factor, settings.item_size_max,
            settings.maxbytes) == (False, 72, 1.07, 2 << 20, 1 << 30)
    assert settings.slab_chunk_max == 524288            # -I above a page halves the chunk max
    assert configure(managed, ["-n", "48"]).chunk_size == 48
    assert managed.line == "managed-1.6.18" and managed.release == "1.6.18"
