"""Every ``-o`` word given, and how slabcalc treats it: modelled, no effect on memory or time, or refused.

The treatments are profile data (each profile's ``treatments`` section, one
entry for every word its line accepts); this module only reads them for the
words a server was started with.  ``simulate`` uses the ``simulate``
treatment, ``report``, ``place`` and ``optimize`` the ``layout`` one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from slabcalc.errors import ValueRefused
from slabcalc.model.settings import Settings

LABELS = {"modelled": "modelled", "none": "no effect on memory or time", "refused": "not modelled"}
LAYOUT_NONE = "no effect on this answer"     # report, place, optimize: item classes, pages, capacity


@dataclass(frozen=True)
class GivenOption:
    """One ``-o`` word as given: memcached's name, its value (None for a bare word), its treatment."""

    name: str
    value: str | None
    treatment: str          # modelled, none or refused
    why: str | None
    use: str = "simulate"   # whose treatment: simulate's or the layout commands'

    def text(self) -> str:
        word = self.name if self.value is None else f"{self.name}={self.value}"
        why = f": {self.why}" if self.why and self.treatment != "modelled" else ""
        label = LAYOUT_NONE if self.use == "layout" and self.treatment == "none" else LABELS[self.treatment]
        return f"{word} {label}{why}"


def accepted_words(profile) -> frozenset[str]:
    """Every ``-o`` word this release takes (what ``configure`` reads or accepts and ignores)."""
    words = set(profile.suboptions) | set(profile.ignored_suboptions)
    if profile.background is not None:
        words |= set(profile.background.suboptions)
    if profile.has_slab_chunk_max:
        words.add("slab_chunk_max")
    if profile.slab_sizes:
        words.add("slab_sizes")
    return frozenset(words)


def given_options(settings: Settings, use: str) -> tuple[GivenOption, ...]:
    """The ``-o`` words of ``settings`` in order, each with its treatment for ``use`` (``simulate``
    or ``layout``); a word the profile gives no treatment counts as refused."""
    treatments = settings.profile.treatments
    out = []
    for word in settings.suboptions:
        name, has_value, value = word.partition("=")
        spec = treatments.get(name)
        if spec is None:
            out.append(GivenOption(name, value if has_value else None, "refused",
                                   f"the {settings.profile.release} profile does not say how it is treated", use))
        else:
            out.append(GivenOption(name, value if has_value else None, spec.of(use), spec.why, use))
    return tuple(out)


def check_treated(settings: Settings, use: str, command: str, error: type = ValueRefused) -> tuple[GivenOption, ...]:
    """:func:`given_options`, refusing (``error``, one line naming it) the first word ``use`` does
    not model but that bears on its answer, and (for ``simulate``) a value memcached takes that the
    replay cannot represent (:func:`check_replayable`)."""
    given = given_options(settings, use)
    for option in given:
        if option.treatment == "refused":
            raise error(f"{command} does not model -o {option.name}: {option.why}")
    if use == "simulate":
        check_replayable(settings, command, error)
    return given


def check_replayable(settings: Settings, command: str = "simulate", error: type = ValueRefused) -> None:
    """Refuse (``error``, one line) a background value memcached accepts but the replay cannot
    represent: its checks let NaN through (``atof("nan") <= 0`` is false: 1.6.18 memcached.c
    5370-5391 and 5270-5280), and infinity; a factor times the COLD tail's age made a 32-bit
    rel_time_t (items.c lru_maintainer_juggle) is NaN (0 x inf) or past its range at the first
    juggle: undefined in C.  A large finite factor is replayed; the replay refuses it where the age
    it makes leaves rel_time_t (engines/maintainer.py ``_past_the_clock``)."""
    from slabcalc.model.settings import background_values

    profile = settings.profile
    if profile.background is None:
        return
    values = background_values(profile, settings.suboptions)
    for name in ("slab_automove_ratio", "hot_max_factor", "warm_max_factor"):
        value = values.get(name)
        if value is None:
            continue
        if not math.isfinite(value):
            raise error(f"{command} cannot replay -o {name}={value}: memcached takes it (its check lets "
                        f"{value} through) but computes with it what C leaves undefined")


def options_text(given: tuple[GivenOption, ...], modelled: bool = True) -> str:
    """``-o hot_lru_pct=30 modelled; idle_timeout=5 no effect on memory or time: closes ...``
    (without the modelled words when ``modelled`` is false); empty when there is nothing to say."""
    said = [option.text() for option in given if modelled or option.treatment != "modelled"]
    return "-o " + "; ".join(said) if said else ""
