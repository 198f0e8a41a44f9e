"""Sizes as operators write them (``64m``, ``1g``, ``512k``), and C's number parsers.

Two different jobs live here because both are about reading numbers the way
memcached does:

* :func:`parse_size` reads the friendly units slabcalc accepts everywhere
  (1024-based, as memcached's ``-I`` is);
* :func:`c_atoi`, :func:`c_atof` and :func:`c_strtol` reproduce the C library
  parsers memcached itself calls, so that ``-n 48abc`` or ``-f 1.25x`` mean to
  slabcalc exactly what they mean to the server.
"""

from __future__ import annotations

import re

from slabcalc.errors import ValueRefused

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([kmgb]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """Bytes in ``text``: ``1048576``, ``512k``, ``64m``, ``1g`` (1024-based).

    ``KiB``/``MB`` spellings are accepted too (``64MB`` = ``64m``).  Raises
    ``ValueError`` with a one-line reason for anything else.
    """
    if isinstance(text, int):
        if text < 0:
            raise ValueRefused(f"size must not be negative: {text}")
        return text
    match = _SIZE_RE.match(text)
    if not match:
        raise ValueRefused(f"not a size: {text!r} (use bytes or a unit: 512k, 64m, 1g)")
    number, unit = match.groups()
    return int(number) * _UNITS[unit.lower()]


def format_size(n: int) -> str:
    """The shortest exact unit spelling of ``n`` bytes: ``1048576`` -> ``1m``."""
    for unit, scale in (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if n and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


_INT_PREFIX = re.compile(r"^[ \t\n\v\f\r]*([+-]?\d+)")
_FLOAT_PREFIX = re.compile(
    r"^[ \t\n\v\f\r]*([+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


def wrap_int32(value: int) -> int:
    """``value`` as a C ``int`` (two's complement, 32 bits) holds it."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def c_atoi(text: str) -> int:
    """C's ``atoi``: the leading decimal integer of ``text``, 0 when there is none.

    Overflow is undefined in C; glibc's ``atoi`` is ``(int) strtol``, which
    saturates to a long and then truncates to 32 bits, reproduced here.
    """
    match = _INT_PREFIX.match(text)
    if not match:
        return 0
    value = max(min(int(match.group(1)), (1 << 63) - 1), -(1 << 63))
    return wrap_int32(value)


def c_strtol(text: str) -> int | None:
    """memcached's ``safe_strtol``: the whole string must be an integer (trailing
    white space allowed) that fits a C ``int``; ``None`` otherwise."""
    match = _INT_PREFIX.match(text)
    if not match or text[match.end():].strip(" \t\n\v\f\r") != "":
        return None
    value = int(match.group(1))
    if not -(1 << 31) <= value < (1 << 31):
        return None
    return value


def c_strtoul(text: str) -> int | None:
    """memcached's ``safe_strtoul``: a whole unsigned 32-bit decimal, else ``None``.

    Like the C helper it refuses a leading minus sign on what would otherwise
    wrap to a huge value.
    """
    match = _INT_PREFIX.match(text)
    if not match or text[match.end():].strip(" \t\n\v\f\r") != "":
        return None
    value = int(match.group(1))
    if value < 0 or value > 0xFFFFFFFF:
        return None
    return value


def c_strtoul_lp64(text: str) -> int | None:
    """``safe_strtoul`` as an x86_64 build runs it (util.c 121-148 in 1.6.18), into its
    ``uint32_t``: ``strtoul`` is 64-bit there, so a value past 32 bits is accepted and truncated
    (``lru_crawler_tocrawl=5000000000`` is 705032704), and a minus sign is refused only where the
    result would be negative as a ``long``; ``None`` where memcached refuses the text."""
    match = _INT_PREFIX.match(text)
    if not match or text[match.end():][:1] not in ("", " ", "\t", "\n", "\v", "\f", "\r"):
        return None
    value = int(match.group(1))
    if abs(value) > 0xFFFF_FFFF_FFFF_FFFF:
        return None                                   # ERANGE
    value %= 1 << 64                                  # strtoul negates in unsigned arithmetic
    if value >= 1 << 63 and "-" in text:
        return None
    return value & 0xFFFF_FFFF


def c_atof(text: str) -> float:
    """C's ``atof``: the leading floating-point number of ``text``, 0.0 when none."""
    match = _FLOAT_PREFIX.match(text)
    if not match:
        return 0.0
    return float(match.group(1))
