"""Memory per key group: which namespace (``user:*``, ``session:*``) takes and wastes the memory.

Only inputs that name their keys can be grouped:

- ``lru_crawler metadump`` lines: ``key=`` is URL-encoded by memcached
  (``user%3A1001`` is ``user:1001``), ``size=`` the item's ``ntotal``;
- a CSV whose header has a ``key_name`` (or ``name``) column of key names and
  a value length column (``value``, ``value_size``, ...; optional ``flags``),
  or an ``item_size`` column.

A group is a key's prefix up to the first separator (``user:*``; keys without
the separator form the group ``(no separator)``), or what a regular
expression finds in it (its first group, else the whole match; no match:
``(no match)``).  Per group the items are placed as ``report`` places them:
items, requested bytes, the chunk bytes they take (``used_bytes``) and the
chunk waste.  Pages are shared by every group of a class, so free page bytes
are not shared out among groups.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, TextIO
from urllib.parse import unquote_to_bytes

from .inputs import KEY_MAX, InputError, Item
from .report import build_report
from .settings import Settings

NO_SEPARATOR = "(no separator)"
NO_MATCH = "(no match)"
_NAME_COLUMNS = ("key_name", "name", "keyname")
_VALUE_COLUMNS = ("value", "value_size", "value_len", "value_length", "vlen", "size")
_SIZE_COLUMNS = ("item_size", "ntotal", "total_size")


def read_named_items(stream: TextIO, source: str) -> Iterator[tuple[str, Item]]:
    """``(key name, Item)`` for every item of a metadump or a CSV with a ``key_name`` column."""
    lines = (line.rstrip("\r\n") for line in stream)
    for number, first in enumerate(lines, 1):
        if first.strip():
            break
    else:
        return
    if first.startswith(("key=", "END")):
        yield from _metadump(first, number, lines, source)
    else:
        yield from _csv(first, number, lines, source)


def _metadump(first: str, number: int, lines: Iterable[str], source: str) -> Iterator[tuple[str, Item]]:
    for line in _chain(first, lines):
        if not line.strip() or line == "END":
            number += 1
            continue
        fields = dict(token.split("=", 1) for token in line.split() if "=" in token)
        try:
            key = unquote_to_bytes(fields["key"]).decode("utf-8", errors="replace")
            size = int(fields["size"])
        except (KeyError, ValueError):
            raise InputError(f"{source}:{number}: not a metadump line with key= and size=: {line[:80]}") from None
        yield key, Item(None, None, 0, size)
        number += 1


def _chain(first: str, rest: Iterable[str]) -> Iterator[str]:
    yield first
    yield from rest


def _csv(header: str, number: int, lines: Iterable[str], source: str) -> Iterator[tuple[str, Item]]:
    delimiter = next((d for d in ",\t;" if d in header), ",")
    names = [n.strip().lower() for n in next(csv.reader([header], delimiter=delimiter))]

    def column(aliases: tuple[str, ...]) -> int | None:
        return next((i for i, n in enumerate(names) if n in aliases), None)

    name_at, value_at, size_at = column(_NAME_COLUMNS), column(_VALUE_COLUMNS), column(_SIZE_COLUMNS)
    flags_at = column(("flags", "flag"))
    if name_at is None or (value_at is None and size_at is None):
        raise InputError(f"{source}:{number}: --group-by needs key names: lru_crawler metadump lines, or a "
                         f"CSV header with key_name and value (or item_size) columns, not {header[:80]!r}")
    for row in csv.reader(lines, delimiter=delimiter):
        number += 1
        if not row or not "".join(row).strip():
            continue
        try:
            name = row[name_at].strip()
            raw = len(name.encode())
            if not 0 < raw <= KEY_MAX:
                raise ValueError(f"a key of {raw} bytes (memcached takes 1 to {KEY_MAX})")
            flags = int(row[flags_at]) if flags_at is not None and row[flags_at].strip() else 0
            if size_at is not None:
                yield name, Item(None, None, 0, int(row[size_at]))
            else:
                yield name, Item(raw, int(row[value_at]), flags, None)
        except (IndexError, ValueError) as exc:
            reason = str(exc) if "key of" in str(exc) else "a missing or non-numeric column"
            raise InputError(f"{source}:{number}: {reason}: {delimiter.join(row)[:80]}") from None


def grouper(group_by: str, separator: str = ":"):
    """The function naming a key's group: ``"prefix"`` or a regular expression (ValueError if bad)."""
    if group_by == "prefix":
        if not separator:
            raise ValueError("--separator must not be empty")

        def prefix(key: str) -> str:
            head, found, _ = key.partition(separator)
            return f"{head}{separator}*" if found else NO_SEPARATOR
        return prefix
    try:
        pattern = re.compile(group_by)
    except re.error as exc:
        raise ValueError(f"--group-by {group_by!r} is not a regular expression: {exc}") from None

    def by_regex(key: str) -> str:
        match = pattern.search(key)
        if match is None:
            return NO_MATCH
        return match.group(1) if pattern.groups and match.group(1) is not None else match.group(0)
    return by_regex


@dataclass(frozen=True)
class Group:
    name: str
    items: int
    too_large: int
    requested_bytes: int
    used_bytes: int

    @property
    def chunk_waste(self) -> int:
        return self.used_bytes - self.requested_bytes


def breakdown(settings: Settings, named: Iterable[tuple[str, Item]], group_by: str, separator: str = ":",
              size_key_length: int = 16) -> list[Group]:
    """Per group, the items placed as ``report`` places them; the group taking most memory first."""
    name_of = grouper(group_by, separator)
    groups: dict[str, dict[Item, int]] = {}
    for key, item in named:
        bucket = groups.setdefault(name_of(key), {})
        bucket[item] = bucket.get(item, 0) + 1
    result = []
    for name, distribution in groups.items():
        report = build_report(settings, distribution, size_key_length=size_key_length)
        result.append(Group(name, report.items, report.too_large, report.total("requested_bytes"),
                            report.total("used_bytes")))
    return sorted(result, key=lambda g: (-g.used_bytes, -g.items, g.name))


def group_records(groups: list[Group]) -> list[dict]:
    used = sum(g.used_bytes for g in groups)
    return [{
        "group": g.name,
        "items": g.items,
        "too_large": g.too_large,
        "requested_bytes": g.requested_bytes,
        "used_bytes": g.used_bytes,
        "chunk_waste": g.chunk_waste,
        "waste_pct": round(100.0 * g.chunk_waste / g.used_bytes, 2) if g.used_bytes else 0.0,
        "memory_pct": round(100.0 * g.used_bytes / used, 2) if used else 0.0,
    } for g in groups]
