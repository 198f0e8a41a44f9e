"""Profiles: release resolution, in-line changes, user profiles and their validation."""

from __future__ import annotations

import re

import pytest

from slabcalc.model.profile import ProfileError, bundled_lines, load_profile, release_key


def test_release_resolution_and_inline_changes():
    old, new = load_profile("1.6.18"), load_profile("1.6.45")
    assert (old.line, new.line) == ("1.6", "1.6")
    assert (old.slab_chunk_max_unit, new.slab_chunk_max_unit) == (1, 1024)   # 1.6.24
    assert (old.chunk_size_refuse, new.chunk_size_refuse) == ("zero", "nonpositive")
    assert load_profile("1.6.16").chunked == "lazy" and load_profile("1.6.17").chunked == "lazy_fallback"
    assert load_profile("1.6.23").slab_chunk_max_unit == 1 and load_profile("1.6.24").slab_chunk_max_unit == 1024
    assert load_profile("1.6").release == "1.6.45"
    assert load_profile().release == "1.6.45"


def test_bits_choose_the_header():
    assert load_profile("1.4.24", bits=32).header == 32
    assert load_profile("1.6.45", bits=32).chunk_header == 32
    with pytest.raises(ProfileError, match="--bits must be 32 or 64"):
        load_profile("1.6.45", bits=16)


def test_unsupported_release_lists_what_is_supported():
    supported = r"supported: 1\.2\.4-1\.2\.8, 1\.4\.3-1\.4\.26, 1\.4\.27-1\.4\.28, 1\.4\.29-1\.4\.39, 1\.5\.0-1\.5\.22, 1\.6\.0-1\.6\.45$"
    for release in ("1.2.3", "1.3.3", "1.4.2", "1.4.40", "1.5.23", "1.6.46", "2.0"):
        with pytest.raises(ProfileError, match=rf"^unsupported memcached release {re.escape(release)}; " + supported):
            load_profile(release)
    with pytest.raises(ProfileError, match="not a release number"):
        load_profile("latest")


def test_bundled_lines_are_ordered():
    assert [line for line, _, _ in bundled_lines()] == ["1.2", "1.4.3", "1.4.27", "1.4.29", "1.5", "1.6"]
    assert release_key("1.6.9") < release_key("1.6.10")


def test_bundled_ranges_do_not_overlap_and_each_release_loads_from_its_own_file():
    """load_profile reads the file named nearest below a release first: that is right only while no
    two files claim one release, and every file's first and last release load from that file."""
    lines = bundled_lines()
    for (_, _, last), (_, first, _) in zip(lines, lines[1:]):
        assert release_key(last) < release_key(first)
    for line, first, last in lines:
        for release in (first, last):
            profile = load_profile(release)
            assert (profile.line, profile.release, profile.source) == (line, release,
                                                                      f"bundled:memcached-{line}.yaml")


def test_user_profile_overrides_a_base(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text('schema: 1\nbase: "1.4.24"\nitem:\n  cas: appended\n  header: {64: 56}\nclasses:\n  align: 16\n')
    p = load_profile(str(path))
    assert (p.header, p.align, p.suffix, p.release) == (56, 16, "text_signed", "1.4.24")
    assert p.source == str(path)


REPLAY = 'schema: 1\nbase: "1.6.45"\nextstore:\n  replay:\n    '


@pytest.mark.parametrize("body,field", [
    ('schema: 1\nbase: "1.6.45"\nitem:\n  suffix: hex\n', "item.suffix"),
    ('schema: 1\nbase: "1.6.45"\nclasses:\n  max_regular: many\n', "classes.max_regular"),
    ('schema: 1\nbase: "1.6.45"\ndefaults:\n  factor: 1\n', "defaults.factor"),
    ('schema: 2\nbase: "1.6.45"\n', "schema"),
    ('schema: 1\nbase: "1.6.45"\nitem:\n  header: {64: -1}\n', "item.header"),
    ('schema: 1\nbase: "1.6.45"\noptions:\n  suboptions:\n    fast: {set: {hashpower: 1}}\n', "options.suboptions.fast.set.hashpower"),
    ('schema: 1\nbase: "1.6.45"\noptions:\n  item_size_max:\n    checks: [{rule: maybe, message: x, exit: 1}]\n', "options.item_size_max.checks[0].rule"),
    ('schema: 1\nreleases: {first: "1.0.0", last: "1.0.0"}\n', "line"),
    # extstore.replay picks a release's storage threads by name: a typo is refused, not the other variant
    (REPLAY + 'write_target: pool_deficts\n', "extstore.replay.write_target"),
    (REPLAY + 'automove: "1.6.39"\n', "extstore.replay.automove"),
    (REPLAY + 'write_wlak: down\n', "extstore.replay.write_wlak"),
    (REPLAY + 'recache_rate: often\n', "extstore.replay.recache_rate"),
])
def test_user_profile_errors_name_the_field(tmp_path, body, field):
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(ProfileError) as err:
        load_profile(str(path))
    assert f"field {field}:" in str(err.value)
    assert "\n" not in str(err.value)


def test_user_profile_that_is_not_yaml(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("schema: [1\n")
    with pytest.raises(ProfileError, match="not valid YAML"):
        load_profile(str(path))


def test_a_suboption_can_switch_the_flags_rule(tmp_path):
    # 1.4.39 stores flags as text unless -o modern / no_inline_ascii_resp switch to binary:
    # a profile expresses that as data, and item sizes follow.
    from slabcalc import configure, item_size

    path = tmp_path / "textual.yaml"
    path.write_text('schema: 1\nbase: "1.6.45"\nitem:\n  suffix: text_unsigned\n'
                    'options:\n  suboptions:\n    modern: {set: {suffix: binary}}\n')
    p = load_profile(str(path))
    text, binary = configure(p), configure(p, ["-o", "modern"])
    assert item_size(text, 3, 10, 0).suffix == len(" 0 10\r\n")
    assert item_size(binary, 3, 10, 0).suffix == 0 and item_size(binary, 3, 10, 5).suffix == 4


def test_cas_inside_the_header_cannot_offer_dash_c(tmp_path):
    # 1.2.x keeps CAS in the header and has no -C: a profile cannot claim both
    path = tmp_path / "inside.yaml"
    path.write_text('schema: 1\nbase: "1.6.45"\nitem:\n  cas: inside\n')
    with pytest.raises(ProfileError, match="field options.getopt: offers -C"):
        load_profile(str(path))
    path.write_text('schema: 1\nbase: "1.6.45"\nitem:\n  cas: inside\noptions:\n  getopt: "f:n:I:m:o:"\n')
    from slabcalc import Refused, configure

    with pytest.raises(Refused) as refused:
        configure(load_profile(str(path)), ["-C"])
    assert refused.value.message.endswith('Illegal argument "?"')


# -- the parsed-profile cache -----------------------------------------------------------

def _fresh(monkeypatch, folder):
    from slabcalc.model.profile import loader as module

    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    module._bundled_file.cache_clear()
    return module


def test_cached_profiles_are_the_yaml_itself(tmp_path, monkeypatch):
    """Every bundled file read back from the cache is what PyYAML parses from it, and a profile
    loads the same from the cache as from the YAML."""
    import os

    import yaml

    module = _fresh(monkeypatch, tmp_path)
    first = {name: module._bundled_file(name) for name in module._bundled_names()}      # parsed, then kept
    kept = sorted(os.listdir(tmp_path / "slabcalc"))
    assert kept == sorted(f"{name}.{__import__('sys').implementation.cache_tag}.marshal"
                          for name in module._bundled_names())
    module._bundled_file.cache_clear()
    for name in module._bundled_names():
        with open(os.path.join(module._FOLDER, name), encoding="utf-8") as f:
            assert module._bundled_file(name) == yaml.safe_load(f) == first[name]
    assert load_profile("1.6.18") == _fresh(monkeypatch, tmp_path / "other").load_profile("1.6.18")


def test_a_stale_or_broken_cache_is_parsed_again(tmp_path, monkeypatch):
    import marshal

    module = _fresh(monkeypatch, tmp_path)
    name = "memcached-1.6.yaml"
    module._bundled_file(name)
    cached = next((tmp_path / "slabcalc").iterdir())
    (stamp, data) = marshal.loads(cached.read_bytes())
    data["line"] = "9.9"                                       # kept under another text's stamp: not used
    cached.write_bytes(marshal.dumps(((stamp[0] + 1, stamp[1]), data)))
    module._bundled_file.cache_clear()
    assert module._bundled_file(name)["line"] == "1.6"
    assert marshal.loads(cached.read_bytes())[0] == stamp      # and written again
    cached.write_bytes(b"\x00garbage")
    module._bundled_file.cache_clear()
    assert module._bundled_file(name)["line"] == "1.6"


def test_profiles_load_where_no_cache_can_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    module = _fresh(monkeypatch, blocker)                      # $XDG_CACHE_HOME/slabcalc cannot be made
    assert module.load_profile("1.6.18").release == "1.6.18"
    assert not (tmp_path / "slabcalc").exists()
