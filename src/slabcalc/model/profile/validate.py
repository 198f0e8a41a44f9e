"""Checking the release rules: a raw profile mapping (YAML, merged) read field by field into a
:class:`~slabcalc.model.profile.data.Profile`, every wrong or unknown field a one-line
:class:`ProfileError` naming it (``profile {source}: field {path}: {why}``).

The rules themselves are data (``model/profiles/*.yaml``, docs/profiles.md); this module knows their
schema, not their values.
"""

from __future__ import annotations

from typing import Mapping

from slabcalc.model.profile.data import (BACKGROUND_CONSTANTS, BACKGROUND_FIELDS, BACKGROUND_RULES, CAS_RULES,
                                         CHUNKED_RULES, CRASH_POINTS, EXTSTORE_DEFAULTS,
                                         LARGEST_RULES, LOOP_RULES, PAGE_LENGTH_RULES, PAGE_SIZE_RULES,
                                         REFUSE_TESTS, REPLAY_KEYS, SETTABLE, SUFFIX_RULES, TREATMENT_USES, TREATMENTS,
                                         VALUE_TARGETS, BackgroundOption, BackgroundRequirement, BackgroundRules,
                                         Crash, ExtstoreRules, ProcessRules, Profile, SubOption, Treatment)
from slabcalc.model.profile.fields import RuleReader, check_release


def _background(r: RuleReader) -> BackgroundRules | None:
    """The ``background`` section: what ``slabcalc simulate`` runs beside the requests."""
    raw = r.get("background", dict, optional=True)
    if raw is None:
        return None
    known = {"replay", "refusal", "defaults", "constants", "automove_modes", "segmented_exact", "rules_from",
             "note", "suboptions", "rules", "requires"}
    for name in raw:
        if name not in known:
            raise r.fail(f"background.{name}", "unknown field (see docs/profiles.md)")
    defaults = _background_defaults(r, raw.get("defaults"))
    constants = _background_constants(r, raw.get("constants"))
    options = {str(word): _background_option(r, f"background.suboptions.{word}", spec)
               for word, spec in (raw.get("suboptions") or {}).items()}
    rules = _background_rules(r, raw.get("rules"))
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


def _one_of(r: RuleReader, where: str, names, known) -> None:
    """Each of ``names`` one of ``known``, else ``where.name`` named in the error."""
    for name in names:
        if name not in known:
            raise r.fail(f"{where}.{name}", f"must be one of {', '.join(map(str, known))}")


def _background_defaults(r: RuleReader, raw) -> dict:
    """``background.defaults``: every field of BACKGROUND_FIELDS, of its type (an int read as a float)."""
    defaults = dict(raw or {})
    for name, kind in BACKGROUND_FIELDS.items():
        value = defaults.get(name)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            defaults[name] = value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise r.fail(f"background.defaults.{name}", f"must be {kind.__name__}")
    _one_of(r, "background.defaults", defaults, BACKGROUND_FIELDS)
    if defaults["lru"] not in ("segmented", "compat"):
        raise r.fail("background.defaults.lru", "must be segmented or compat")
    return defaults


def _background_constants(r: RuleReader, raw) -> dict:
    """``background.constants``: every one of BACKGROUND_CONSTANTS, a whole number."""
    constants = dict(raw or {})
    for name in BACKGROUND_CONSTANTS:
        if not isinstance(constants.get(name), int) or isinstance(constants.get(name), bool):
            raise r.fail(f"background.constants.{name}", "must be a whole number")
    _one_of(r, "background.constants", constants, BACKGROUND_CONSTANTS)
    return constants


def _background_option(r: RuleReader, where: str, spec) -> BackgroundOption:
    """One of ``background.suboptions``: the -o word's fields it sets or takes its value into, its refusals."""
    if not isinstance(spec, Mapping) or set(spec) - {"set", "value", "default", "refuse", "message", "parse",
                                                     "missing"}:
        raise r.fail(where, "takes set, or value with default, refuse, message, parse and missing")
    if spec.get("parse", "atoi") not in ("atoi", "strtoul") or (
            spec.get("parse") == "strtoul" and not isinstance(spec.get("message"), str)):
        raise r.fail(f"{where}.parse", "must be atoi, or strtoul with a message")
    changes = dict(spec.get("set") or {})
    _one_of(r, f"{where}.set", changes, BACKGROUND_FIELDS)
    value = spec.get("value")
    if value is not None and value not in BACKGROUND_FIELDS:
        raise r.fail(f"{where}.value", f"must be one of {', '.join(BACKGROUND_FIELDS)}")
    refuse = dict(spec.get("refuse") or {})
    if set(refuse) - set(REFUSE_TESTS) or (refuse and not isinstance(spec.get("message"), str)):
        raise r.fail(f"{where}.refuse", f"takes {', '.join(REFUSE_TESTS)} bounds and a message")
    return BackgroundOption(set=changes, value=value, default=spec.get("default"), refuse=refuse,
                            message=spec.get("message"), parse=spec.get("parse", "atoi"), missing=spec.get("missing"))


def _background_rules(r: RuleReader, raw) -> dict:
    """``background.rules``: each of BACKGROUND_RULES one of its choices."""
    rules = dict(raw or {})
    for name, choices in BACKGROUND_RULES.items():
        if rules.get(name) not in choices:
            raise r.fail(f"background.rules.{name}", f"must be one of {', '.join(map(str, choices))}")
    _one_of(r, "background.rules", rules, BACKGROUND_RULES)
    return rules


def _requirements(r: RuleReader, raw) -> tuple[BackgroundRequirement, ...]:
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


def _extstore(r: RuleReader) -> ExtstoreRules | None:
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
        replay=_replay(r),
        refusal=r.get("extstore.refusal", str, optional=True),
    )


def _replay(r: RuleReader) -> Mapping | None:
    """``extstore.replay``: every key of ``REPLAY_KEYS``, of its kind, one of its choices; no other
    (null: simulate refuses ext_path on the release)."""
    raw = r.get("extstore.replay", dict, optional=True)
    if raw is None:
        return None
    for name, (kind, nullable, choices) in REPLAY_KEYS.items():
        path = f"extstore.replay.{name}"
        if name not in raw:
            raise r.fail(path, "missing")
        r.get(path, kind, optional=nullable, choices=choices)
    unknown = sorted(set(raw) - set(REPLAY_KEYS))
    if unknown:
        raise r.fail(f"extstore.replay.{unknown[0]}", f"is not one of {', '.join(REPLAY_KEYS)}")
    return raw


def _process(r: RuleReader) -> ProcessRules | None:
    """The ``process`` section: start-up options that size the process, and its measured parts."""
    if r.get("process", dict, optional=True) is None:
        return None
    texts = ("threads_message", "maxconns_message", "prealloc_message")
    values = {name: r.get(f"process.{name}", str if name in texts else int)
              for name in ProcessRules.__dataclass_fields__}
    return ProcessRules(**values)


def _treatments(r: RuleReader) -> dict[str, Treatment]:
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


def validate(raw: Mapping, bits: int, source: str) -> Profile:
    """The :class:`Profile` of ``raw`` (a line merged with its changes, or a user file merged on its
    base) for ``bits``; ProfileError at the first wrong field, or at a field no rule reads."""
    r = RuleReader(raw, source)
    schema = r.get("schema", int)
    if schema != 1:
        raise r.fail("schema", f"this slabcalc reads schema 1, not {schema}")
    first = check_release(r.get("releases.first", (str, int, float)))
    last = check_release(r.get("releases.last", (str, int, float)))
    suboptions, ignored = _suboptions(r)
    crashes = _crashes(r)
    profile = Profile(
        release=str(raw.get("release", last)), line=str(r.get("line", (str, int, float))), first=first, last=last,
        bits=bits, source=source,
        **_item_rules(r, bits), **_class_rules(r), **_defaults(r), **_option_rules(r),
        crashes=crashes, suboptions=suboptions, ignored_suboptions=frozenset(map(str, ignored)),
        background=_background(r), extstore=_extstore(r), process=_process(r), treatments=_treatments(r),
    )
    _check_together(r, profile)
    unknown = r.unknown_fields()
    if unknown:
        raise r.fail(unknown[0], "unknown field (see docs/profiles.md)")
    return profile


def _suboptions(r: RuleReader) -> tuple[dict[str, SubOption], list]:
    """``options.suboptions``: what each ``-o`` word sets, and the words that have no effect."""
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
    return suboptions, ignored


def _crashes(r: RuleReader) -> dict[str, Crash]:
    """``options.crashes``: the start-up paths where the release dies instead of refusing."""
    crashes = {}
    for point, spec in (r.get("options.crashes", dict, optional=True) or {}).items():
        if point not in CRASH_POINTS:
            raise r.fail(f"options.crashes.{point}", f"must be one of {', '.join(CRASH_POINTS)}")
        if spec is None:
            continue
        if not isinstance(spec, Mapping) or not isinstance(spec.get("signal"), int) or not isinstance(spec.get("why"), str):
            raise r.fail(f"options.crashes.{point}", "needs signal (a number) and why (text)")
        crashes[point] = Crash(signal=spec["signal"], why=spec["why"])
    return crashes


def _item_rules(r: RuleReader, bits: int) -> dict:
    """``item``: how an item is sized."""
    return dict(
        header=r.per_bits("item.header", bits),
        cas=r.get("item.cas", str, choices=CAS_RULES),
        cas_size=r.get("item.cas_size", int),
        suffix=r.get("item.suffix", str, choices=SUFFIX_RULES),
        flags_size=r.get("item.flags_size", int),
        chunk_header=r.per_bits("item.chunk_header", bits, optional=True),
        key_max=r.get("item.key_max", int),
    )


def _class_rules(r: RuleReader) -> dict:
    """``classes``, ``pages``, ``chunked``, ``too_large`` and ``stats``: classes and their pages."""
    return dict(
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
    )


def _defaults(r: RuleReader) -> dict:
    """``defaults``: the settings of a memcached started without options."""
    return dict(
        default_chunk_size=r.get("defaults.chunk_size", int),
        default_factor=r.get("defaults.factor", float),
        default_item_size_max=r.get("defaults.item_size_max", int),
        default_maxbytes_mb=r.get("defaults.maxbytes_mb", int),
        default_use_cas=r.get("defaults.use_cas", bool),
        default_slab_chunk_max=r.get("defaults.slab_chunk_max", int, optional=True),
        default_slab_reassign=r.get("defaults.slab_reassign", bool),
    )


def _option_rules(r: RuleReader) -> dict:
    """``options``: how the release reads its command line (getopt, -n, -f, -I, slab_chunk_max, ...)."""
    warn = r.get("options.item_size_max.warn_above", dict, optional=True) or {}
    has_chunk_max = r.get("options.slab_chunk_max", dict, optional=True) is not None
    has_item_size_max = r.get("options.item_size_max", dict, optional=True) is not None
    return dict(
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
        hashpower_checks=r.checks("options.hashpower.checks"),
        hashpower_missing=r.get("options.hashpower.missing", str, optional=True),
        illegal_suboption_stream=r.get("options.illegal_suboption.stream", str, choices=("stdout", "stderr")),
        illegal_suboption_exit=r.get("options.illegal_suboption.exit", int),
        illegal_suboption_shows=r.get("options.illegal_suboption.shows", str, choices=("token", "rest")),
    )


def _check_together(r: RuleReader, profile: Profile) -> None:
    """The rules that hold between fields."""
    has_item_size_max = r.get("options.item_size_max", dict, optional=True) is not None
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
