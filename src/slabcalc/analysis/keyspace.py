"""Memory per key group: which namespace (``user:*``, ``session:*``) takes and wastes the memory.

Only inputs that name their keys can be grouped, read in ``report``'s own pass
(:func:`slabcalc.inputs.items.read_items` with ``names=``), with its header and row
rules:

- ``lru_crawler metadump`` lines: ``key=`` is URL-encoded by memcached
  (``user%3A1001`` is ``user:1001``), ``size=`` the item's ``ntotal``;
- a CSV whose header has a ``key_name`` (or ``name``) column of key names and
  a value length column (``value``, ``value_size``, ...; optional ``flags``,
  ``count``), or an ``item_size`` column.

A group is a key's prefix up to the first separator (``user:*``; keys without
the separator form the group ``(no separator)``), or what a regular
expression finds in it (its first group, else the whole match; no match:
``(no match)``).  Per group the items are placed as ``report`` places them:
items, requested bytes, the chunk bytes they take (``used_bytes``) and the
chunk waste.  Pages are shared by every group of a class, so free page bytes
are not shared out among groups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from slabcalc.model.item import SIZE_KEY_LENGTH
from slabcalc.analysis.report import build_report
from slabcalc.errors import ValueRefused
from slabcalc.model.distribution import Item
from slabcalc.model.settings import Settings

NO_SEPARATOR = "(no separator)"
NO_MATCH = "(no match)"


def grouper(group_by: str, separator: str = ":"):
    """The function naming a key's group: ``"prefix"`` or a regular expression (ValueError if bad)."""
    if group_by == "prefix":
        if not separator:
            raise ValueRefused("--separator must not be empty")

        def prefix(key: str) -> str:
            head, found, _ = key.partition(separator)
            return f"{head}{separator}*" if found else NO_SEPARATOR
        return prefix
    try:
        pattern = re.compile(group_by)
    except re.error as exc:
        raise ValueRefused(f"--group-by {group_by!r} is not a regular expression: {exc}") from None

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


class KeyGroups:
    """Rows summed per group as they are read: ``{group: {Item: count}}``, bounded by the groups and
    the distinct items in each, not by the rows (``report --group-by`` reads its input once).

    :meth:`add` takes ``(key name, Item, count)`` rows -- it is what
    :func:`slabcalc.inputs.items.read_items` calls with ``names=``; :meth:`breakdown` places them.
    """

    def __init__(self, group_by: str, separator: str = ":"):
        self.name_of = grouper(group_by, separator)
        self.groups: dict[str, dict[Item, int]] = {}

    def add(self, named: Iterable[tuple[str, Item, int]]) -> None:
        name_of, groups = self.name_of, self.groups
        for key, item, n in named:
            bucket = groups.get(name := name_of(key))
            if bucket is None:
                bucket = groups[name] = {}
            bucket[item] = bucket.get(item, 0) + n

    def breakdown(self, settings: Settings, size_key_length: int = SIZE_KEY_LENGTH) -> list[Group]:
        """Per group, the items placed as ``report`` places them; the group taking most memory first."""
        result = []
        for name, distribution in self.groups.items():
            report = build_report(settings, distribution, size_key_length=size_key_length)
            result.append(Group(name, report.items, report.too_large, report.total("requested_bytes"),
                                report.total("used_bytes")))
        return sorted(result, key=lambda g: (-g.used_bytes, -g.items, g.name))


def breakdown(settings: Settings, named: Iterable[tuple[str, Item, int]], group_by: str, separator: str = ":",
              size_key_length: int = SIZE_KEY_LENGTH) -> list[Group]:
    """Per group, the items placed as ``report`` places them; the group taking most memory first.

    ``named`` is ``(key name, Item, count)``, as :func:`slabcalc.inputs.items.read_items` hands them to ``names=``.
    """
    groups = KeyGroups(group_by, separator)
    groups.add(named)
    return groups.breakdown(settings, size_key_length)
