"""``ITEM_ntotal`` as one sum: the bytes an item asks the slab allocator for (``items.c item_make_header``).

    ntotal = header + cas + (key + 1) + suffix + (value + 2)

:func:`slabcalc.model.item.item_size` breaks the same sum down (and checks its inputs); this is the
sum alone, for bulk work and for every replayed set.  It is compiled with the replay engine (setup.py),
so that a set's size is a native call, not a call into the interpreter.
"""

from __future__ import annotations

from typing import Final

from slabcalc.model.settings import Settings
from slabcalc.model.units import wrap_int32

BINARY: Final = 0           # 0 or flags_size bytes: flags in binary, only when non-zero (1.4.39+ default 1.5+)
BINARY_ALWAYS: Final = 1    # flags_size bytes always
TEXT: Final = 2             # " <flags> <length>\r\n", the flags signed (up to 1.4.26) or not


def suffix_length(rule: str, flags: int, value_length: int, flags_size: int) -> int:
    """Bytes the flags take in the item (``nsuffix``) under a profile's suffix rule."""
    if rule == "binary":
        return 0 if flags == 0 else flags_size
    if rule == "binary_always":
        return flags_size
    shown = wrap_int32(flags) if rule == "text_signed" else flags
    return len(f" {shown} {value_length}\r\n")


class Ntotal:
    """``ntotal`` of a key, value and flags under one build's settings (lengths already checked)."""

    fixed: int
    form: int
    rule: str
    flags_size: int

    def __init__(self, settings: Settings) -> None:
        p = settings.profile
        self.fixed = p.header + settings.cas_bytes + 1 + 2
        self.rule, self.flags_size = settings.suffix_rule, p.flags_size
        self.form = {"binary": BINARY, "binary_always": BINARY_ALWAYS}.get(self.rule, TEXT)

    def of(self, key: int, value: int, flags: int) -> int:
        if self.form == BINARY:
            return self.fixed + key + value + (self.flags_size if flags else 0)
        if self.form == BINARY_ALWAYS:
            return self.fixed + key + value + self.flags_size
        return self.fixed + key + value + suffix_length(self.rule, flags, value, self.flags_size)
