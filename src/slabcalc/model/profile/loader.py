"""Loading the release rules: the YAML profiles shipped in ``model/profiles/`` (parsed once and cached),
a line's ``changes`` merged up to a release, a user file merged onto its ``base``, and the runs of
releases that share every rule.

A profile describes one memcached release line (``memcached-1.6.yaml`` covers
1.6.0 to 1.6.45).  A rule that changed inside a line is a ``changes`` entry
(``from: "1.6.24"``) merged over the line's base rules, so resolving
``"1.6.18"`` and ``"1.6.45"`` gives two different :class:`Profile` values from
one file.  A user profile is a YAML file that names a ``base`` release and
overrides fields.

This is the only module that compares release numbers; everything downstream
reads the resolved :class:`Profile` (each field checked by ``profile/validate.py``).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
from typing import Mapping

from slabcalc.errors import ProfileError
from slabcalc.model.profile.data import DEFAULT_RELEASE, Profile, Segment
from slabcalc.model.profile.fields import RELEASE, check_release, leaf_paths
from slabcalc.model.profile.validate import validate


def release_key(release: str) -> tuple[int, ...]:
    """``"1.6.18"`` -> ``(1, 6, 18)``; raises ProfileError for anything else."""
    return tuple(int(part) for part in check_release(release).split("."))


def _yaml_loader(yaml):
    """libyaml's safe loader where PyYAML was built with it (ten times faster), else PyYAML's own."""
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# the YAML beside this package (os.path: pathlib costs start-up)
_FOLDER = os.path.join(os.path.dirname(os.path.dirname(__file__)), "profiles")


@functools.lru_cache(maxsize=None)
def _bundled_names() -> tuple[str, ...]:
    return tuple(sorted(name for name in os.listdir(_FOLDER) if name.endswith(".yaml")))


@functools.lru_cache(maxsize=None)
def measured_agreement() -> dict:
    """What the random-shape corpus measured per release (issue 38): ``{release: {"shapes", "agree",
    "apart", "strata": {stratum: [shapes, agree]}}}``, shipped beside the profiles as
    ``agreement.json`` and written from the corpus by scripts/gen_exactness.py (docs/exactness.md)."""
    with open(os.path.join(_FOLDER, "agreement.json"), encoding="utf-8") as handle:
        return dict(json.load(handle)["releases"])


def _cache_folder() -> str:
    """Where parsed bundled profiles are kept: ``$XDG_CACHE_HOME/slabcalc`` (``~/.cache/slabcalc``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "slabcalc")


@functools.lru_cache(maxsize=None)
def _bundled_file(name: str) -> dict:
    """One bundled profile file, parsed once.

    Importing PyYAML costs a ``slabcalc`` process a tenth of its start-up, so,
    as Python keeps compiled modules, the parsed mapping is kept in a cache
    folder (marshal, stamped with the YAML text's length and CRC-32) and read
    from there while the text is unchanged.  Where the cache cannot be read or
    written, the YAML is parsed as usual: the cache changes only the speed.
    """
    import marshal
    import sys
    import zlib

    with open(os.path.join(_FOLDER, name), "rb") as f:
        text = f.read()
    stamp = (len(text), zlib.crc32(text))
    cached = os.path.join(_cache_folder(), f"{name}.{sys.implementation.cache_tag}.marshal")
    try:
        with open(cached, "rb") as f:
            kept, data = marshal.load(f)
        if tuple(kept) == stamp and isinstance(data, dict):
            return data
    except (OSError, EOFError, ValueError, TypeError):
        pass
    import yaml  # imported lazily: keep start-up light

    data = yaml.load(text.decode("utf-8"), Loader=_yaml_loader(yaml))
    scratch = f"{cached}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        with open(scratch, "wb") as f:
            marshal.dump((stamp, data), f)
        os.replace(scratch, cached)      # whole or not at all, for processes reading it meanwhile
    except (OSError, ValueError):        # ValueError: a value marshal cannot keep (none in the bundle)
        with contextlib.suppress(OSError):
            os.remove(scratch)
    return data


def _bundled() -> tuple[tuple[str, dict], ...]:
    """Every bundled profile file, parsed: ``(file name, raw mapping)``."""
    return tuple((name, _bundled_file(name)) for name in _bundled_names())


def _likeliest_first(wanted: tuple[int, ...]) -> list[str]:
    """The bundled file names, the one named for the nearest release at or below ``wanted``
    first (``memcached-1.6.yaml`` for 1.6.45), so a release's own file is usually the only one
    parsed; the files' ranges do not overlap, so the order does not change which one covers it."""
    names = _bundled_names()
    digits = {n: n.removeprefix("memcached-").removesuffix(".yaml") for n in names}
    named = {n: release_key(d) for n, d in digits.items() if RELEASE.fullmatch(d)}
    below = sorted((n for n in named if named[n] <= wanted), key=named.get, reverse=True)
    return below + [n for n in names if n not in below]


def bundled_lines() -> list[tuple[str, str, str]]:
    """``(line, first, last)`` for every bundled profile, oldest first."""
    lines = [(d["line"], d["releases"]["first"], d["releases"]["last"]) for _, d in _bundled()]
    return sorted(lines, key=lambda t: release_key(t[1]))


def supported_text() -> str:
    return ", ".join(f"{first}" if first == last else f"{first}-{last}"
                     for _, first, last in bundled_lines())


def _deep_merge(base: dict, over: Mapping) -> dict:
    """``base`` with ``over``'s fields laid on it at every depth, sharing nothing with either."""
    return _merge_into(copy.deepcopy(base), over)


def _merge_into(target: dict, over: Mapping) -> dict:
    """Lay ``over``'s fields on ``target`` (changed in place) at every depth; ``over`` is copied."""
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge_into(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def _changes(data: Mapping) -> list[dict]:
    """A line's ``changes``, oldest first."""
    return sorted(data.get("changes") or (), key=lambda change: release_key(change["from"]))


def _raw_for_release(release: str) -> tuple[str, dict]:
    """The merged raw rules of a bundled release: its line plus the changes up to it."""
    wanted = release_key(release)
    if len(wanted) == 2:  # "1.6" means the newest release of that line
        for name, data in _bundled():
            if release_key(data["line"])[:2] == wanted or release_key(data["releases"]["first"])[:2] == wanted:
                release = data["releases"]["last"]
        wanted = release_key(release)
    for name in _likeliest_first(wanted):
        data = _bundled_file(name)
        first, last = release_key(data["releases"]["first"]), release_key(data["releases"]["last"])
        if first <= wanted <= last:
            merged = copy.deepcopy({k: v for k, v in data.items() if k != "changes"})
            for change in _changes(data):    # copied once above, then each change laid on in place
                if release_key(change["from"]) <= wanted:
                    _merge_into(merged, {k: v for k, v in change.items() if k != "from"})
            return f"bundled:{name}", {**merged, "release": release}
    raise ProfileError(f"unsupported memcached release {release}; supported: {supported_text()}")


def _previous(release: str) -> str:
    """The release before ``release`` in its minor line (``1.4.30`` -> ``1.4.29``)."""
    parts = release_key(release)
    return ".".join(map(str, (*parts[:-1], parts[-1] - 1)))


def bundled_segments() -> list[Segment]:
    """Every bundled release run with constant rules, oldest first (``slabcalc profiles``)."""
    segments = []
    for name, data in sorted(_bundled(), key=lambda nd: release_key(nd[1]["releases"]["first"])):
        starts = [(str(data["releases"]["first"]), ())]
        for change in _changes(data):
            rest = {k: v for k, v in change.items() if k != "from"}
            fields = tuple(".".join(path.split(".")[:3]) for path in leaf_paths(rest))
            if starts[-1][0] == str(change["from"]):    # entries of one release (kept apart by topic)
                starts[-1] = (starts[-1][0], starts[-1][1] + fields)
            else:
                starts.append((str(change["from"]), fields))
        starts = [(first, tuple(dict.fromkeys(changed))) for first, changed in starts]
        ends = [_previous(first) for first, _ in starts[1:]] + [str(data["releases"]["last"])]
        for (first, changed), last in zip(starts, ends):
            segments.append(Segment(name.removesuffix(".yaml"), first, last, changed))
    return segments


def other_segments(profile: "Profile") -> list[Segment]:
    """The runs of releases in ``profile``'s line other than its own release's (oldest first);
    none for a profile from a file."""
    if not profile.source.startswith("bundled"):
        return []
    mine, first, last = release_key(profile.release), release_key(profile.first), release_key(profile.last)
    return [s for s in bundled_segments()
            if release_key(s.first) <= release_key(s.last) and first <= release_key(s.first) <= last
            and not release_key(s.first) <= mine <= release_key(s.last)]


def resolved_rules(spec: str | None = None) -> dict:
    """The rules ``load_profile(spec)`` reads, as one mapping: a line merged with its changes
    up to the release, or a user file merged onto its base (``slabcalc profiles show``)."""
    source, raw = _raw(spec or DEFAULT_RELEASE)
    validate(raw, 64, source)   # only what would load is shown
    return {"release": raw.get("release"), "source": source,
            **{k: v for k, v in raw.items() if k not in ("release", "changes")}}


def load_profile(spec: str | None = None, bits: int = 64) -> Profile:
    """Resolve ``spec`` (a release such as ``"1.4.24"``, or a YAML file path) to a Profile.

    A YAML file either is a complete profile or names ``base: RELEASE`` and
    overrides some fields (deep-merged).
    """
    spec = spec or DEFAULT_RELEASE
    if bits not in (32, 64):
        raise ProfileError(f"--bits must be 32 or 64, not {bits}")
    if _is_file(spec):
        source, raw = _raw_from_file(spec)
        return validate(raw, bits, source)
    return _bundled_profile(spec, bits)


@functools.lru_cache(maxsize=None)
def _bundled_profile(spec: str, bits: int) -> Profile:
    """A bundled release's Profile, made once: its files do not change while we run, and a
    Profile is a frozen value (optimize's advice loads every other segment of the line for
    each candidate)."""
    source, raw = _raw(spec)
    return validate(raw, bits, source)


def _is_file(spec: str) -> bool:
    return spec.endswith((".yaml", ".yml")) or "/" in spec or os.path.isfile(spec)


def _raw(spec: str) -> tuple[str, dict]:
    """``(source, raw rules)`` of a YAML file path or a bundled release."""
    if _is_file(spec):
        return _raw_from_file(spec)
    # "memcached-1.6.18" as a tarball names it, "memcached-1.6" as `slabcalc profiles` lists it
    return _raw_for_release(spec.removeprefix("memcached-"))


def _raw_from_file(path: str) -> tuple[str, dict]:
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.load(f.read(), Loader=_yaml_loader(yaml))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ProfileError(f"{path}:{where} not valid YAML") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a profile is a YAML mapping")
    stem = os.path.splitext(os.path.basename(path))[0]
    if "base" in data:
        base = str(data.pop("base"))
        _, raw = _raw_for_release(base)
        raw = _deep_merge(raw, data)
        raw.setdefault("release", base)
        raw["line"] = str(data.get("line", f"{base}+{stem}"))
    else:
        raw = data
        raw.setdefault("release", raw.get("releases", {}).get("last", stem))
    return str(path), raw


