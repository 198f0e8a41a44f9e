"""Flags an operator can paste: which release they are for, and where they would mislead.

Advice is a flag string for one release.  Two ways it goes wrong when pasted
elsewhere, both checked here from the release rules (profiles), never from
release numbers:

* **The same words, another meaning.**  On another release of the same line the
  same argv may build other classes (``-o slab_chunk_max=16`` is 16 KiB from
  1.6.24 and 16 *bytes* before: memcached.c's ``slab_chunk_max`` parsing) or be
  refused.  :func:`elsewhere` configures every run of releases of the line with
  the same argv, compares the classes, and writes the words that build the same
  classes there (with the one argv writer, :meth:`Settings.as_argv`).
* **The class cap.**  ``slabs_init`` (1.6.18 slabs.c 236-268) stops growing
  classes at ``MAX_NUMBER_OF_SLAB_CLASSES - 1``; a small factor that reaches the
  cap before ``slab_chunk_max / factor`` leaves a gap up to the largest class,
  and every item in it takes a largest-class chunk (:func:`class_cap_trap`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from slabcalc.model.classes import SlabClass, slab_classes
from slabcalc.model.profile import load_profile, other_segments
from slabcalc.model.settings import Refused, Settings, configure


@dataclass(frozen=True)
class Elsewhere:
    """Releases of the same line where the same argv means something else."""

    first: str
    last: str
    refused: str | None        # memcached's message where those releases refuse the argv
    classes: str | None        # what the argv builds there instead, when it differs
    flags: str | None          # the words that build the same classes there (None: none do)

    @property
    def releases(self) -> str:
        return self.first if self.first == self.last else f"{self.first}-{self.last}"

    def text(self, words: str) -> str:
        said = (f"memcached {self.releases} refuses {words} ({self.refused.rstrip('.')})" if self.refused
                else f"on memcached {self.releases}, {words} builds {self.classes}")
        there = f"; write {self.flags} there" if self.flags else "; no flags there build the same classes"
        return said + there


def _shape(classes: Sequence[SlabClass]) -> str:
    if len(classes) == 1:
        return f"1 class of {classes[0].chunk_size} bytes"
    return f"{len(classes)} classes of {classes[0].chunk_size} to {classes[-1].chunk_size} bytes"


def _words(argv: Sequence[str], other: Sequence[str]) -> str:
    """The options of ``argv`` that ``other`` does not have (pairs like ``-o a,b`` kept whole)."""
    def pairs(words):
        out, i = [], 0
        while i < len(words):
            if i + 1 < len(words) and not words[i + 1].startswith("-"):
                out.append((words[i], words[i + 1]))
                i += 2
            else:
                out.append((words[i],))
                i += 1
        return out

    theirs = set(pairs(other))
    return " ".join(" ".join(p) for p in pairs(argv) if p not in theirs)


def elsewhere(settings: Settings) -> tuple[Elsewhere, ...]:
    """Runs of releases in ``settings``' line where its argv builds other classes or is refused."""
    p = settings.profile
    argv = settings.as_argv()
    classes = slab_classes(settings)
    found: list[Elsewhere] = []
    for segment in other_segments(p):
        other = load_profile(segment.first, p.bits)
        refused = shape = None
        try:
            theirs = slab_classes(configure(other, argv))
            same = theirs == classes
            if not same:
                shape = f"{_shape(theirs)}, not {_shape(classes)}"
        except Refused as exc:
            same, refused = False, " / ".join(exc.message.splitlines()) or "it exits"
        if same:
            continue
        flags = None
        try:
            translated = replace(settings, profile=other).as_argv()
            if slab_classes(configure(other, translated)) == classes:
                flags = _words(translated, argv)
        except Refused:
            pass
        note = Elsewhere(segment.first, segment.last, refused, shape, flags)
        previous = found[-1] if found else None
        if previous and (previous.refused, previous.classes, previous.flags) == (refused, shape, flags):
            found[-1] = replace(previous, last=segment.last)   # one note for a run of the same outcome
        else:
            found.append(note)
    return tuple(found)


def class_cap_trap(settings: Settings) -> str | None:
    """Where ``-n``/``-f`` hit the class cap before the largest chunk: what the gap costs."""
    if settings.slab_sizes is not None:
        return None
    p = settings.profile
    classes = slab_classes(settings)
    if len(classes) - 1 < p.max_regular:
        return None   # the series ended by its own bound, not by the cap
    last, largest = classes[-2], classes[-1]
    following = int(last.chunk_size * settings.factor)
    if following >= largest.chunk_size:
        return None
    return (f"the factor {settings.factor:g} reaches memcached's cap of {p.max_regular + 1} classes at "
            f"{last.chunk_size}-byte chunks: every item of {last.chunk_size + 1} to {largest.chunk_size} "
            f"bytes takes a {largest.chunk_size}-byte chunk of class {largest.id}")
