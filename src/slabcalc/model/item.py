"""Item size: the bytes one stored item asks the slab allocator for (``ITEM_ntotal``).

    ntotal = header + cas + (key + 1) + suffix + (value + 2)

``header`` is ``sizeof(item)``; ``cas`` is 8 unless ``-C`` (built into the header
in 1.2); the key keeps its NUL terminator; the value keeps its ``\\r\\n``; the
suffix holds the client flags: 0 or 4 bytes in binary form (1.4.39+, default
1.5+), or the text ``" <flags> <length>\\r\\n"`` memcached used to print (signed
flags up to 1.4.26, unsigned after).  See ``items.c item_make_header()``.
"""

from __future__ import annotations

from dataclasses import dataclass

from slabcalc.errors import ValueRefused
from slabcalc.model.settings import Settings
from slabcalc.model.ntotal import Ntotal, suffix_length

FLAGS_MAX = 0xFFFFFFFF
VALUE_MAX = (1 << 31) - 3  # the ASCII protocol refuses vlen > INT_MAX - 2 (proto_parser.c)
SIZE_KEY_LENGTH = 16  # the key length assumed for an item known only by its size (--key's default)


def size_key(key_length: int | None) -> int:
    """The key length given (``--key``), or :data:`SIZE_KEY_LENGTH` when none was."""
    return key_length or SIZE_KEY_LENGTH


@dataclass(frozen=True)
class ItemSize:
    """The parts of one item's ``ntotal``, in bytes."""

    key_length: int
    value_length: int
    flags: int
    header: int
    cas: int
    key: int       # key length + 1 (NUL)
    suffix: int
    value: int     # value length + 2 (CRLF)

    @property
    def total(self) -> int:
        return self.header + self.cas + self.key + self.suffix + self.value


def check_item(settings: Settings, key_length: int, value_length: int, flags: int) -> None:
    """Refuse what memcached's ASCII protocol itself would not parse (ValueError)."""
    key_max = settings.profile.key_max
    if not 1 <= key_length <= key_max:
        raise ValueRefused(f"key length must be 1..{key_max} bytes, not {key_length}")
    if value_length < 0 or value_length > VALUE_MAX:
        raise ValueRefused(f"value length must be 0..{VALUE_MAX} bytes, not {value_length}")
    if not 0 <= flags <= FLAGS_MAX:
        raise ValueRefused(f"flags must be 0..{FLAGS_MAX} (32-bit unsigned), not {flags}")


def item_size(settings: Settings, key_length: int, value_length: int, flags: int = 0) -> ItemSize:
    """The breakdown of ``ntotal`` for a key and value of these lengths."""
    check_item(settings, key_length, value_length, flags)
    p = settings.profile
    return ItemSize(
        key_length=key_length,
        value_length=value_length,
        flags=flags,
        header=p.header,
        cas=settings.cas_bytes,
        key=key_length + 1,
        suffix=suffix_length(settings.suffix_rule, flags, value_length, p.flags_size),
        value=value_length + 2,
    )


def max_value_length(settings: Settings, room: int, key_length: int = 1, flags: int = 0) -> int | None:
    """The longest value whose item fits in ``room`` bytes, or None when none does.

    ``item_size`` grows by at least one byte per value byte, so ``room`` less
    the empty item's size is an upper bound; the text suffix can add a few
    digits on top, which the short walk down takes back.
    """
    empty = item_size(settings, key_length, 0, flags).total
    if empty > room:
        return None
    value = room - empty
    while item_size(settings, key_length, value, flags).total > room:
        value -= 1
    return value


def ntotal_function(settings: Settings):
    """A fast ``(key_length, value_length, flags) -> ntotal`` for bulk work (no checks).

    The same sum as :func:`item_size`, without building the breakdown; for
    lengths already validated (``slabcalc report`` sizes millions of rows).
    """
    return Ntotal(settings).of


def ntotal_array(settings: Settings, key, value, flags):
    """:func:`ntotal_function` over whole numpy columns (int64 arrays of equal length).

    The same sum, element by element: ``slabcalc report`` sizes the distinct
    rows of a large input this way instead of one call per row.  A text
    suffix is ``" <flags> <length>\\r\\n"``: 4 bytes plus the digits of both
    numbers (and a minus sign for flags shown as negative by 1.2-1.4.26).
    """
    import numpy as np  # only callers that already hold numpy arrays get here

    p = settings.profile
    fixed = Ntotal(settings).fixed
    rule, flags_size = settings.suffix_rule, p.flags_size
    total = key + value + fixed
    if rule == "binary":
        return total + np.where(flags != 0, flags_size, 0)
    if rule == "binary_always":
        return total + flags_size
    shown = flags
    if rule == "text_signed":
        shown = np.where(flags > 0x7FFFFFFF, flags - (1 << 32), flags)
    return total + 4 + digits(np.abs(shown)) + (shown < 0) + digits(value)


def digits(numbers):
    """Decimal digits of each non-negative int64 (0 has one)."""
    import numpy as np

    powers = np.array([10 ** k for k in range(1, 19)], dtype=np.int64)
    return 1 + np.searchsorted(powers, numbers, side="right")
