"""Release rules: the YAML profiles shipped in ``model/profiles/``, loaded, validated and resolved to one
frozen :class:`Profile` per release and word size.

Three modules, one job each: ``data`` (the dataclasses the rest of slabcalc reads), ``loader`` (files,
cache, a line's ``changes`` merged up to a release: the only module that compares release numbers) and
``validate`` (every field checked, with a one-line error naming it).  The names here are the public face:
``from slabcalc.model.profile import load_profile, Profile``.
"""

from slabcalc.errors import ProfileError
from slabcalc.model.profile.data import (BACKGROUND_CONSTANTS, BACKGROUND_FIELDS, BACKGROUND_RULES, CAS_RULES,
                                         CHECK_RULES, CHUNKED_RULES, CRASH_POINTS, DEFAULT_RELEASE,
                                         EXTSTORE_DEFAULTS, LARGEST_RULES, LOOP_RULES, PAGE_LENGTH_RULES,
                                         PAGE_SIZE_RULES, REFUSE_TESTS, SETTABLE, SUFFIX_RULES, TREATMENT_USES,
                                         TREATMENTS, VALUE_TARGETS, BackgroundOption, BackgroundRequirement,
                                         BackgroundRules, Check, Crash, ExtstoreRules, ProcessRules, Profile,
                                         Segment, SubOption, Treatment)
from slabcalc.model.profile.loader import (bundled_lines, bundled_segments, load_profile, measured_agreement,
                                           other_segments,
                                           release_key, resolved_rules, supported_text)

__all__ = [
    "ProfileError", "DEFAULT_RELEASE", "Profile", "Segment", "Check", "Crash", "SubOption", "Treatment",
    "BackgroundOption", "BackgroundRequirement", "BackgroundRules", "ExtstoreRules", "ProcessRules",
    "BACKGROUND_CONSTANTS", "BACKGROUND_FIELDS", "BACKGROUND_RULES", "CAS_RULES", "CHECK_RULES", "CHUNKED_RULES",
    "CRASH_POINTS", "EXTSTORE_DEFAULTS", "LARGEST_RULES", "LOOP_RULES", "PAGE_LENGTH_RULES", "PAGE_SIZE_RULES",
    "REFUSE_TESTS", "SETTABLE", "SUFFIX_RULES", "TREATMENT_USES", "TREATMENTS", "VALUE_TARGETS",
    "bundled_lines", "bundled_segments", "load_profile", "measured_agreement", "other_segments", "release_key", "resolved_rules",
    "supported_text",
]
