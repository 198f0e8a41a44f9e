"""Release rules: load, validate and resolve the YAML profiles shipped in ``profiles/``.

A profile describes one memcached release line (``memcached-1.6.yaml`` covers
1.6.0 to 1.6.45).  A rule that changed inside a line is a ``changes`` entry
(``from: "1.6.24"``) merged over the line's base rules, so resolving
``"1.6.18"`` and ``"1.6.45"`` gives two different :class:`Profile` values from
one file.  A user profile is a YAML file that names a ``base`` release and
overrides fields.

This is the only module that knows release numbers; everything downstream
reads the resolved :class:`Profile`.

This module is long because it validates every field of the release rules with a one-line error naming it; the rules themselves are data (``profiles/*.yaml``).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from slabcalc.errors import ProfileError  # noqa: F401 (raised here, caught by its callers)

DEFAULT_RELEASE = "1.6.45"

SUFFIX_RULES = ("text_signed", "text_unsigned", "binary", "binary_always")
CAS_RULES = ("appended", "inside")
LOOP_RULES = ("chunk_max_exclusive", "item_size_max_inclusive", "half_page_inclusive")
LARGEST_RULES = ("slab_chunk_max", "item_size_max", "page")
PAGE_SIZE_RULES = ("fixed", "item_size_max")
PAGE_LENGTH_RULES = ("size_x_perslab", "page_if_reassign", "item_size_max_if_reassign",
                     "page_if_reassign_or_chunked")
CHUNKED_RULES = ("none", "eager", "lazy", "lazy_fallback")
CHECK_RULES = ("min", "max", "max_fraction_of_maxbytes",
               "not_above_item_size_max", "divides_item_size_max", "divides_page")
SETTABLE = ("slab_chunk_max", "slab_reassign", "suffix", "factor")
VALUE_TARGETS = ("slab_sizes",)
CRASH_POINTS = ("slab_chunk_max_zero", "slab_chunk_max_without_value", "slab_sizes_without_value")


BACKGROUND_FIELDS = {
    # field: type of its value (what simulate's background threads read; engines/background.py)
    "lru": str, "lru_maintainer": bool, "lru_crawler": bool, "slab_automove": int,
    "slab_automove_ratio": float, "slab_automove_window": int, "hot_lru_pct": int, "warm_lru_pct": int,
    "hot_max_factor": float, "warm_max_factor": float, "temp_lru": bool, "temporary_ttl": int,
    "lru_crawler_tocrawl": int,
}
BACKGROUND_CONSTANTS = ("maintainer_sleep_min_us", "maintainer_sleep_max_us", "juggles", "tail_tries",
                        "alloc_rounds", "update_interval", "crawl_min_wait", "crawl_max_wait", "crawl_step",
                        "automove_source_pages", "automove_reclaim_tenths")
REFUSE_TESTS = ("lt", "le", "gt", "ge")
BACKGROUND_RULES = {
    # rule: its choices -- how the release's threads behave where releases differ
    "automover_thread": ("maintainer", "mover"),         # which thread runs slab_automove=1
    "free_pages_need_full_memory": (False, True),        # the 2.5-free-pages rule only once -m is reached
    "mover_without_free_chunk": ("drop", "evict"),       # a live item the mover has no chunk for
    # the windowed automover's algorithm (slab_automove.c) and the mover thread's idle sleep
    "automove_window_sum": ("before_slot", "with_slot"),  # this run's slot in its own window sum
    "automove_youngest": ("evicted_half", "evicted_half_or_quarter"),   # which class may receive
    "automove_pool_move": ("overridable", "final"),      # a page for the pool ends the run
    "mover_idle_sleep": ("second", "tenth_then_second"),  # the mover thread between idle runs
    "segmented_access_time": ("update_interval", "every_hit"),   # a HOT/WARM hit's it->time
}


TREATMENTS = ("modelled", "none", "refused")   # modelled; no effect on memory or time; refused (exit 2)
TREATMENT_USES = ("simulate", "layout")         # the replay; report, place and optimize


@dataclass(frozen=True)
class Treatment:
    """How slabcalc treats one ``-o`` word: in ``simulate`` and in the layout commands."""

    simulate: str
    layout: str
    why: str | None          # what the word does, when it is not modelled somewhere

    def of(self, use: str) -> str:
        return self.simulate if use == "simulate" else self.layout


@dataclass(frozen=True)
class Check:
    """One startup check memcached makes, with the message it prints."""

    rule: str
    message: str
    exit: int
    value: int | None = None


@dataclass(frozen=True)
class SubOption:
    """What one ``-o`` suboption does to the settings that shape memory."""

    set: Mapping[str, Any] = field(default_factory=dict)
    set_if_chunk_max_default: Mapping[str, Any] = field(default_factory=dict)
    value_to: str | None = None  # the suboption's value also goes to this one (a C fall-through)


@dataclass(frozen=True)
class BackgroundOption:
    """What one ``-o`` word does to the background threads: fixed changes, or its value into a field."""

    set: Mapping[str, Any] = field(default_factory=dict)
    value: str | None = None          # the field the word's value goes to (atoi/atof)
    default: Any = None               # the value of the bare word (``slab_automove`` alone is 1)
    refuse: Mapping[str, float] = field(default_factory=dict)   # lt/le/gt/ge bounds memcached refuses
    message: str | None = None        # what it prints then (exit 1)
    parse: str = "atoi"               # atoi/atof (no value refused), or strtoul (refused with message)
    missing: str | None = None        # what it prints for the bare word, when not ``Missing <word> argument``


@dataclass(frozen=True)
class BackgroundRequirement:
    """A start-up check on the background settings once every ``-o`` word is read: when ``field``
    is on, ``needs`` must be too, else memcached prints ``message`` and exits ``exit``."""

    field: str
    needs: str
    message: str
    exit: int


@dataclass(frozen=True)
class BackgroundRules:
    """The background threads of a release, as data: defaults, constants and the -o words."""

    replay: bool                      # simulate replays this release
    refusal: str | None               # why not, when it does not
    defaults: Mapping[str, Any]       # BACKGROUND_FIELDS at start-up
    constants: Mapping[str, int]      # BACKGROUND_CONSTANTS, read from the release's source
    automove_modes: tuple[int, ...]   # the slab_automove values the engine runs for this release
    rules: Mapping[str, Any]          # BACKGROUND_RULES
    segmented_exact: bool             # the segmented LRU's rules were read from this line's source
    rules_from: str | None            # the release whose source the thread rules were read from
    note: str | None                  # said in the model line (e.g. a rewrite after rules_from)
    suboptions: Mapping[str, BackgroundOption]
    requires: tuple[BackgroundRequirement, ...] = ()


EXTSTORE_DEFAULTS = {"page_size": int, "wbuf_size": int, "item_size": int, "low_ttl": int, "max_frag": float,
                     "threads": int, "io_depth": int}


@dataclass(frozen=True)
class ExtstoreRules:
    """External storage (``-o ext_path``) of a release, as data (``slabcalc.model.extstore`` reads it)."""

    rules_from: str
    note: str | None
    header: int                      # sizeof(item_hdr): a flushed item's value in RAM
    defaults: Mapping[str, Any]      # EXTSTORE_DEFAULTS
    page_buckets: int                # one write buffer per bucket
    reserved_pages: int              # pages of the file never written (1.6.18: page 0)
    max_pages: int                   # the most pages memcached starts with
    align: int                       # page and write-buffer sizes must be multiples of this
    page_size_before_path: bool      # ext_page_size after an ext_path is refused
    unknown_size_unit: str           # "zero" (size 0) or "refuse"
    unit_hint: str                   # the units the refusal names: "M|G|T|P" (1.6.38), "m|g|t|p" (1.6.45)
    zero_size_refused: bool
    only_default_bucket: bool        # ext_path=FILE:SIZE:BUCKET takes only "default"
    compact_under_share: float       # ext_compact_under when not given: pages x share (C double) ...
    compact_under_min: int           # ... at least this
    write_margin_pages: int          # the write thread flushes early below this many pages of free chunks
    replay: Mapping[str, Any] | None = None   # simulate's storage threads (engines/extstore.py REPLAY_KEYS)


@dataclass(frozen=True)
class ProcessRules:
    """What a process of the release holds besides slab pages and the hash table (analysis/process.py)."""

    threads_default: int
    maxconns_default: int
    threads_message: str
    maxconns_message: str
    prealloc_message: str
    huge_page: int
    read_buffer: int
    buffers_per_thread: int
    mmap_header: int
    program_bytes: int      # measured: binary, libraries, start-up heap
    thread_bytes: int       # measured: per worker thread
    conn_bytes: int         # measured: per connection structure


@dataclass(frozen=True)
class Crash:
    """A start-up path where the release dies instead of refusing."""

    signal: int
    why: str


@dataclass(frozen=True)
class Profile:
    """The rules of one memcached release for one word size, fully resolved."""

    release: str
    line: str
    first: str
    last: str
    bits: int
    source: str
    # item sizing
    header: int
    cas: str
    cas_size: int
    suffix: str
    flags_size: int
    chunk_header: int | None
    key_max: int
    # class generation
    align: int
    loop: str
    max_regular: int
    factor2_min_start: int | None
    largest: str
    vv_format: str
    vv_prints_largest: bool
    # pages
    page_size_rule: str
    page_bytes: int
    page_length: str
    chunked: str
    too_large: str
    mem_requested_stat: str
    # defaults
    default_chunk_size: int
    default_factor: float
    default_item_size_max: int
    default_maxbytes_mb: int
    default_use_cas: bool
    default_slab_chunk_max: int | None
    default_slab_reassign: bool
    # option handling
    getopt: str
    chunk_size_refuse: str
    chunk_size_message: str
    factor_message: str
    item_size_max_units: str
    item_size_max_checked: str
    item_size_max_checks: tuple[Check, ...]
    item_size_max_warn_above: int | None
    item_size_max_warning: str | None
    big_item_chunk_max: int | None
    big_item_at: str                # when a big -I lowers an unset chunk max: at_option or after_options
    slab_chunk_max_unit: int | None
    slab_chunk_max_max_value: int | None
    slab_chunk_max_parse_errors_fatal: bool
    slab_chunk_max_checks: tuple[Check, ...]
    slab_sizes: bool | str          # True, False, or "freed_buffer" (1.4.31-1.5.16, see settings.py)
    illegal_suboption_stream: str
    illegal_suboption_exit: int
    illegal_suboption_shows: str
    crashes: Mapping[str, Crash]
    suboptions: Mapping[str, SubOption]
    ignored_suboptions: frozenset[str]
    background: BackgroundRules | None = None
    extstore: ExtstoreRules | None = None
    process: ProcessRules | None = None
    treatments: Mapping[str, Treatment] = field(default_factory=dict)

    @property
    def has_cas_option(self) -> bool:
        """Whether ``-C`` exists (CAS appended after the header) or CAS is built in."""
        return self.cas == "appended"

    @property
    def chunk_tail_fallback(self) -> bool:
        """Whether a chunked item's tail takes a largest-class chunk when its own class has none
        (1.6.17+, items.c ``do_item_alloc_chunk``)."""
        return self.chunked == "lazy_fallback"

    @property
    def has_slab_chunk_max(self) -> bool:
        return self.slab_chunk_max_unit is not None

    @property
    def label(self) -> str:
        return f"memcached {self.release}" + ("" if self.bits == 64 else f" ({self.bits}-bit)")


_RELEASE = re.compile(r"\d+(\.\d+){1,2}")


def release_key(release: str) -> tuple[int, ...]:
    """``"1.6.18"`` -> ``(1, 6, 18)``; raises ProfileError for anything else."""
    if not _RELEASE.fullmatch(str(release)):
        raise ProfileError(f"not a release number: {release!r} (expected e.g. 1.6.18)")
    return tuple(int(part) for part in str(release).split("."))


def _yaml_loader(yaml):
    """libyaml's safe loader where PyYAML was built with it (ten times faster), else PyYAML's own."""
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_FOLDER = os.path.join(os.path.dirname(__file__), "profiles")   # os.path: pathlib costs start-up


@functools.lru_cache(maxsize=None)
def _bundled_names() -> tuple[str, ...]:
    return tuple(sorted(name for name in os.listdir(_FOLDER) if name.endswith(".yaml")))


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
    named = {n: release_key(d) for n, d in digits.items() if _RELEASE.fullmatch(d)}
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


def _leaf_paths(mapping: Mapping, prefix: str = "") -> list[str]:
    paths = []
    for key, value in mapping.items():
        path = f"{prefix}{key}"
        paths += _leaf_paths(value, path + ".") if isinstance(value, Mapping) and value else [path]
    return paths


def _previous(release: str) -> str:
    """The release before ``release`` in its minor line (``1.4.30`` -> ``1.4.29``)."""
    parts = release_key(release)
    return ".".join(map(str, (*parts[:-1], parts[-1] - 1)))


@dataclass(frozen=True)
class Segment:
    """A run of releases that share every rule: one bundled profile up to its next change."""

    profile: str                 # the bundled file, e.g. "memcached-1.4.29"
    first: str                   # first release of the run
    last: str                    # last release of the run
    changed: tuple[str, ...]     # rule fields (three levels deep) that change at ``first``


def bundled_segments() -> list[Segment]:
    """Every bundled release run with constant rules, oldest first (``slabcalc profiles``)."""
    segments = []
    for name, data in sorted(_bundled(), key=lambda nd: release_key(nd[1]["releases"]["first"])):
        starts = [(str(data["releases"]["first"]), ())]
        for change in _changes(data):
            rest = {k: v for k, v in change.items() if k != "from"}
            fields = [".".join(path.split(".")[:3]) for path in _leaf_paths(rest)]
            starts.append((str(change["from"]), tuple(dict.fromkeys(fields))))
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
    _validate(raw, 64, source)   # only what would load is shown
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
        return _validate(raw, bits, source)
    return _bundled_profile(spec, bits)


@functools.lru_cache(maxsize=None)
def _bundled_profile(spec: str, bits: int) -> Profile:
    """A bundled release's Profile, made once: its files do not change while we run, and a
    Profile is a frozen value (optimize's advice loads every other segment of the line for
    each candidate)."""
    source, raw = _raw(spec)
    return _validate(raw, bits, source)


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


class _RuleReader:
    """Typed access to a raw profile mapping with one-line errors naming the field."""

    def __init__(self, raw: Mapping, source: str):
        self.raw, self.source = raw, source
        self.read: set[tuple[str, ...]] = {("release",), ("source",), ("base",), ("changes",)}

    def unknown_fields(self) -> list[str]:
        """Fields of the raw mapping no rule reads (a misspelt field must not pass silently)."""
        read = self.read
        unknown = []
        for path in _leaf_paths(self.raw):
            parts = tuple(path.split("."))
            if not any(parts[:depth] in read for depth in range(1, len(parts) + 1)):
                unknown.append(path)
        return unknown

    def fail(self, path: str, why: str) -> ProfileError:
        return ProfileError(f"profile {self.source}: field {path}: {why}")

    def get(self, path: str, kind: type | tuple, *, optional: bool = False, choices=None):
        self.read.add(tuple(path.split(".")))
        node: Any = self.raw
        for part in path.split("."):
            if not isinstance(node, Mapping) or part not in node:
                if optional:
                    return None
                raise self.fail(path, "missing")
            node = node[part]
        if node is None and optional:
            return None
        if isinstance(node, bool) and kind in (int, float):
            raise self.fail(path, f"must be a number, not {node!r}")
        if kind is float and isinstance(node, int):
            node = float(node)
        if not isinstance(node, kind):
            name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(path, f"must be {name}, not {node!r}")
        if choices is not None and node not in choices:
            raise self.fail(path, f"must be one of {', '.join(map(str, choices))}, not {node!r}")
        return node

    def per_bits(self, path: str, bits: int, *, optional: bool = False) -> int | None:
        node = self.get(path, (dict, int), optional=optional)
        if node is None:
            return None
        if isinstance(node, int):
            return node
        value = node.get(bits, node.get(str(bits)))
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(path, f"needs a non-negative byte count for {bits}-bit")
        return value

    def checks(self, path: str) -> tuple[Check, ...]:
        items = self.get(path, list, optional=True) or []
        out = []
        for i, item in enumerate(items):
            where = f"{path}[{i}]"
            if not isinstance(item, Mapping):
                raise self.fail(where, "must be a mapping with rule, message, exit")
            rule = item.get("rule")
            if rule not in CHECK_RULES:
                raise self.fail(f"{where}.rule", f"must be one of {', '.join(CHECK_RULES)}, not {rule!r}")
            message, exit_code, value = item.get("message"), item.get("exit"), item.get("value")
            if not isinstance(message, str):
                raise self.fail(f"{where}.message", "must be text")
            if not isinstance(exit_code, int):
                raise self.fail(f"{where}.exit", "must be an exit status")
            if rule in ("min", "max", "max_fraction_of_maxbytes") and not isinstance(value, int):
                raise self.fail(f"{where}.value", "must be a number")
            out.append(Check(rule=rule, message=message, exit=exit_code, value=value))
        return tuple(out)


def _background(r: _RuleReader) -> BackgroundRules | None:
    """The ``background`` section: what ``slabcalc simulate`` runs beside the requests."""
    raw = r.get("background", dict, optional=True)
    if raw is None:
        return None
    known = {"replay", "refusal", "defaults", "constants", "automove_modes", "segmented_exact", "rules_from",
             "note", "suboptions", "rules", "requires"}
    for name in raw:
        if name not in known:
            raise r.fail(f"background.{name}", "unknown field (see docs/profiles.md)")
    defaults = dict(raw.get("defaults") or {})
    for name, kind in BACKGROUND_FIELDS.items():
        value = defaults.get(name)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            defaults[name] = value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise r.fail(f"background.defaults.{name}", f"must be {kind.__name__}")
    for name in defaults:
        if name not in BACKGROUND_FIELDS:
            raise r.fail(f"background.defaults.{name}", f"must be one of {', '.join(BACKGROUND_FIELDS)}")
    if defaults["lru"] not in ("segmented", "compat"):
        raise r.fail("background.defaults.lru", "must be segmented or compat")
    constants = dict(raw.get("constants") or {})
    for name in BACKGROUND_CONSTANTS:
        if not isinstance(constants.get(name), int) or isinstance(constants.get(name), bool):
            raise r.fail(f"background.constants.{name}", "must be a whole number")
    for name in constants:
        if name not in BACKGROUND_CONSTANTS:
            raise r.fail(f"background.constants.{name}", f"must be one of {', '.join(BACKGROUND_CONSTANTS)}")
    options = {}
    for word, spec in (raw.get("suboptions") or {}).items():
        where = f"background.suboptions.{word}"
        if not isinstance(spec, Mapping) or set(spec) - {"set", "value", "default", "refuse", "message", "parse",
                                                         "missing"}:
            raise r.fail(where, "takes set, or value with default, refuse, message, parse and missing")
        if spec.get("parse", "atoi") not in ("atoi", "strtoul") or (
                spec.get("parse") == "strtoul" and not isinstance(spec.get("message"), str)):
            raise r.fail(f"{where}.parse", "must be atoi, or strtoul with a message")
        changes = dict(spec.get("set") or {})
        for name in changes:
            if name not in BACKGROUND_FIELDS:
                raise r.fail(f"{where}.set.{name}", f"must be one of {', '.join(BACKGROUND_FIELDS)}")
        value = spec.get("value")
        if value is not None and value not in BACKGROUND_FIELDS:
            raise r.fail(f"{where}.value", f"must be one of {', '.join(BACKGROUND_FIELDS)}")
        refuse = dict(spec.get("refuse") or {})
        if set(refuse) - set(REFUSE_TESTS) or (refuse and not isinstance(spec.get("message"), str)):
            raise r.fail(f"{where}.refuse", f"takes {', '.join(REFUSE_TESTS)} bounds and a message")
        options[str(word)] = BackgroundOption(set=changes, value=value, default=spec.get("default"),
                                              refuse=refuse, message=spec.get("message"),
                                              parse=spec.get("parse", "atoi"), missing=spec.get("missing"))
    rules = dict(raw.get("rules") or {})
    for name, choices in BACKGROUND_RULES.items():
        if rules.get(name) not in choices:
            raise r.fail(f"background.rules.{name}", f"must be one of {', '.join(map(str, choices))}")
    for name in rules:
        if name not in BACKGROUND_RULES:
            raise r.fail(f"background.rules.{name}", f"must be one of {', '.join(BACKGROUND_RULES)}")
    modes = raw.get("automove_modes") or []
    if not isinstance(modes, list) or not all(isinstance(m, int) for m in modes):
        raise r.fail("background.automove_modes", "must be a list of slab_automove values")
    replay = raw.get("replay")
    if not isinstance(replay, bool):
        raise r.fail("background.replay", "must be true or false")
    if not replay and not isinstance(raw.get("refusal"), str):
        raise r.fail("background.refusal", "must say why simulate does not replay this release")
    return BackgroundRules(replay=replay, refusal=raw.get("refusal"), defaults=defaults, constants=constants,
                           automove_modes=tuple(modes), rules=rules, segmented_exact=bool(raw.get("segmented_exact")),
                           rules_from=raw.get("rules_from"), note=raw.get("note"), suboptions=options,
                           requires=_requirements(r, raw.get("requires") or []))


def _requirements(r: _RuleReader, raw) -> tuple[BackgroundRequirement, ...]:
    """``background.requires``: ``[{field, needs, message, exit}, ...]`` over BACKGROUND_FIELDS."""
    if not isinstance(raw, list):
        raise r.fail("background.requires", "must be a list of {field, needs, message, exit}")
    out = []
    for index, spec in enumerate(raw):
        where = f"background.requires[{index}]"
        if (not isinstance(spec, Mapping) or set(spec) != {"field", "needs", "message", "exit"}
                or spec["field"] not in BACKGROUND_FIELDS or spec["needs"] not in BACKGROUND_FIELDS
                or not isinstance(spec["message"], str) or not isinstance(spec["exit"], int)):
            raise r.fail(where, "takes field and needs (background fields), message and exit")
        out.append(BackgroundRequirement(str(spec["field"]), str(spec["needs"]), spec["message"], spec["exit"]))
    return tuple(out)


def _extstore(r: _RuleReader) -> ExtstoreRules | None:
    """The ``extstore`` section: the rules of ``-o ext_path`` and its options."""
    if r.get("extstore", dict, optional=True) is None:
        return None
    defaults = {}
    for name, kind in EXTSTORE_DEFAULTS.items():
        defaults[name] = r.get(f"extstore.defaults.{name}", kind)
    return ExtstoreRules(
        rules_from=str(r.get("extstore.rules_from", (str, int, float))),
        note=r.get("extstore.note", str, optional=True),
        header=r.get("extstore.header", int),
        defaults=defaults,
        page_buckets=r.get("extstore.page_buckets", int),
        reserved_pages=r.get("extstore.reserved_pages", int),
        max_pages=r.get("extstore.max_pages", int),
        align=r.get("extstore.align", int),
        page_size_before_path=r.get("extstore.page_size_before_path", bool),
        unknown_size_unit=r.get("extstore.unknown_size_unit", str, choices=("zero", "refuse")),
        unit_hint=r.get("extstore.unit_hint", str),
        zero_size_refused=r.get("extstore.zero_size_refused", bool),
        only_default_bucket=r.get("extstore.only_default_bucket", bool),
        compact_under_share=r.get("extstore.compact_under.share", float),
        compact_under_min=r.get("extstore.compact_under.min", int),
        write_margin_pages=r.get("extstore.write_margin_pages", int),
        replay=r.get("extstore.replay", dict, optional=True),
    )


def _process(r: _RuleReader) -> ProcessRules | None:
    """The ``process`` section: start-up options that size the process, and its measured parts."""
    if r.get("process", dict, optional=True) is None:
        return None
    texts = ("threads_message", "maxconns_message", "prealloc_message")
    values = {name: r.get(f"process.{name}", str if name in texts else int)
              for name in ProcessRules.__dataclass_fields__}
    return ProcessRules(**values)


def _treatments(r: _RuleReader) -> dict[str, Treatment]:
    """The ``treatments`` section: every ``-o`` word's treatment by ``simulate`` and by the layout
    commands, and why when it is not modelled (docs/options.md is written from it)."""
    out = {}
    for word, spec in (r.get("treatments", dict, optional=True) or {}).items():
        where = f"treatments.{word}"
        if (not isinstance(spec, Mapping) or set(spec) - {"simulate", "layout", "why"}
                or any(spec.get(use) not in TREATMENTS for use in TREATMENT_USES)):
            raise r.fail(where, f"takes simulate and layout (each {', '.join(TREATMENTS)}) and why")
        why = spec.get("why")
        if why is not None and not isinstance(why, str):
            raise r.fail(f"{where}.why", "must be text")
        if why is None and any(spec[use] != "modelled" for use in TREATMENT_USES):
            raise r.fail(f"{where}.why", "must say why, where the word is not modelled")
        out[str(word)] = Treatment(spec["simulate"], spec["layout"], why)
    return out


def _validate(raw: Mapping, bits: int, source: str) -> Profile:
    r = _RuleReader(raw, source)
    schema = r.get("schema", int)
    if schema != 1:
        raise r.fail("schema", f"this slabcalc reads schema 1, not {schema}")
    first = str(r.get("releases.first", (str, int, float)))
    last = str(r.get("releases.last", (str, int, float)))
    release_key(first), release_key(last)
    suboptions = {}
    ignored_extra: list[str] = []
    for name, spec in (r.get("options.suboptions", dict, optional=True) or {}).items():
        if name == "ignored":
            continue
        if spec is None:  # a suboption that lost its effect in a later release
            ignored_extra.append(name)
            continue
        value_to = spec.get("value_to")
        if value_to is not None and value_to not in VALUE_TARGETS:
            raise r.fail(f"options.suboptions.{name}.value_to", f"can only be {', '.join(VALUE_TARGETS)}")
        for part in ("set", "set_if_chunk_max_default"):
            for key, new in (spec.get(part) or {}).items():
                if key not in SETTABLE:
                    raise r.fail(f"options.suboptions.{name}.{part}.{key}",
                                 f"can set only {', '.join(SETTABLE)}")
                if key == "suffix" and new is not None and new not in SUFFIX_RULES:
                    raise r.fail(f"options.suboptions.{name}.{part}.suffix",
                                 f"must be one of {', '.join(SUFFIX_RULES)}")
        # a null value in a later release's change removes what an earlier one set
        suboptions[name] = SubOption(
            set={k: v for k, v in (spec.get("set") or {}).items() if v is not None},
            set_if_chunk_max_default={k: v for k, v in (spec.get("set_if_chunk_max_default") or {}).items()
                                      if v is not None},
            value_to=value_to)
    ignored = (r.get("options.suboptions.ignored", list, optional=True) or []) + ignored_extra
    crashes = {}
    for point, spec in (r.get("options.crashes", dict, optional=True) or {}).items():
        if point not in CRASH_POINTS:
            raise r.fail(f"options.crashes.{point}", f"must be one of {', '.join(CRASH_POINTS)}")
        if spec is None:
            continue
        if not isinstance(spec, Mapping) or not isinstance(spec.get("signal"), int) or not isinstance(spec.get("why"), str):
            raise r.fail(f"options.crashes.{point}", "needs signal (a number) and why (text)")
        crashes[point] = Crash(signal=spec["signal"], why=spec["why"])
    warn = r.get("options.item_size_max.warn_above", dict, optional=True) or {}
    has_chunk_max = r.get("options.slab_chunk_max", dict, optional=True) is not None
    has_item_size_max = r.get("options.item_size_max", dict, optional=True) is not None
    profile = Profile(
        release=str(raw.get("release", last)),
        line=str(r.get("line", (str, int, float))),
        first=first,
        last=last,
        bits=bits,
        source=source,
        header=r.per_bits("item.header", bits),
        cas=r.get("item.cas", str, choices=CAS_RULES),
        cas_size=r.get("item.cas_size", int),
        suffix=r.get("item.suffix", str, choices=SUFFIX_RULES),
        flags_size=r.get("item.flags_size", int),
        chunk_header=r.per_bits("item.chunk_header", bits, optional=True),
        key_max=r.get("item.key_max", int),
        align=r.get("classes.align", int),
        loop=r.get("classes.loop", str, choices=LOOP_RULES),
        max_regular=r.get("classes.max_regular", int),
        factor2_min_start=r.get("classes.factor2_min_start", int, optional=True),
        largest=r.get("classes.largest", str, choices=LARGEST_RULES),
        vv_format=r.get("classes.vv_format", str),
        vv_prints_largest=r.get("classes.vv_prints_largest", bool),
        page_size_rule=r.get("pages.size", str, choices=PAGE_SIZE_RULES),
        page_bytes=r.get("pages.bytes", int),
        page_length=r.get("pages.length", str, choices=PAGE_LENGTH_RULES),
        chunked=r.get("chunked", str, choices=CHUNKED_RULES),
        too_large=r.get("too_large", str),
        mem_requested_stat=r.get("stats.mem_requested", str, choices=("slabs", "items", "none")),
        default_chunk_size=r.get("defaults.chunk_size", int),
        default_factor=r.get("defaults.factor", float),
        default_item_size_max=r.get("defaults.item_size_max", int),
        default_maxbytes_mb=r.get("defaults.maxbytes_mb", int),
        default_use_cas=r.get("defaults.use_cas", bool),
        default_slab_chunk_max=r.get("defaults.slab_chunk_max", int, optional=True),
        default_slab_reassign=r.get("defaults.slab_reassign", bool),
        getopt=r.get("options.getopt", str),
        chunk_size_refuse=r.get("options.chunk_size_refuse", str, choices=("zero", "nonpositive")),
        chunk_size_message=r.get("options.chunk_size_message", str),
        factor_message=r.get("options.factor_message", str),
        item_size_max_units=r.get("options.item_size_max.units", str) if has_item_size_max else "",
        item_size_max_checked=r.get("options.item_size_max.checked", str, choices=("at_option", "after_options"))
        if has_item_size_max else "at_option",
        item_size_max_checks=r.checks("options.item_size_max.checks") if has_item_size_max else (),
        item_size_max_warn_above=warn.get("value"),
        item_size_max_warning=warn.get("message"),
        big_item_chunk_max=r.get("options.item_size_max.big_item_chunk_max", int, optional=True),
        big_item_at=r.get("options.item_size_max.big_item_at", str, optional=True,
                          choices=("at_option", "after_options")) or "after_options",
        slab_chunk_max_unit=r.get("options.slab_chunk_max.unit", int) if has_chunk_max else None,
        slab_chunk_max_max_value=r.get("options.slab_chunk_max.max_value", int, optional=True),
        slab_chunk_max_parse_errors_fatal=bool(r.get("options.slab_chunk_max.parse_errors_fatal", bool,
                                                     optional=True)),
        slab_chunk_max_checks=r.checks("options.slab_chunk_max.checks"),
        slab_sizes=r.get("options.slab_sizes", (bool, str), choices=(True, False, "freed_buffer")),
        illegal_suboption_stream=r.get("options.illegal_suboption.stream", str, choices=("stdout", "stderr")),
        illegal_suboption_exit=r.get("options.illegal_suboption.exit", int),
        illegal_suboption_shows=r.get("options.illegal_suboption.shows", str, choices=("token", "rest")),
        crashes=crashes,
        suboptions=suboptions,
        ignored_suboptions=frozenset(map(str, ignored)),
        background=_background(r),
        extstore=_extstore(r),
        process=_process(r),
        treatments=_treatments(r),
    )
    if profile.default_factor <= 1.0:
        raise r.fail("defaults.factor", "must be greater than 1")
    if profile.align <= 0 or profile.page_bytes <= 0:
        raise r.fail("classes.align", "alignment and page bytes must be positive")
    if profile.largest == "slab_chunk_max" and not profile.has_slab_chunk_max:
        raise r.fail("classes.largest", "slab_chunk_max needs options.slab_chunk_max")
    if ("I" in profile.getopt) != has_item_size_max:
        raise r.fail("options.item_size_max", "must be given exactly when the getopt string offers -I")
    if "C" in profile.getopt and not profile.has_cas_option:
        raise r.fail("options.getopt", "offers -C (no CAS) but item.cas is inside the header")
    if profile.chunked != "none" and profile.chunk_header is None:
        raise r.fail("item.chunk_header", "chunked items need sizeof(item_chunk)")
    unknown = r.unknown_fields()
    if unknown:
        raise r.fail(unknown[0], "unknown field (see docs/profiles.md)")
    return profile
