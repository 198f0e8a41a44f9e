"""Saved and live replies of ``version``, ``stats``, ``stats slabs``, ``stats items`` and ``stats settings``.

:func:`parse_dump` takes saved text in any arrangement: with or without
``\\r``, several replies concatenated in one file or one file per command,
echoed commands, from releases 1.4 to 1.6.  Which command printed a block of
``STAT`` lines is told by its names (``items:1:number`` is ``stats items``,
``1:chunk_size`` is ``stats slabs``, ``growth_factor`` is ``stats settings``,
``pid`` is ``stats``).  :func:`dump_from_replies` takes what
:func:`slabcalc.inputs.client.read_node` read from a live node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from slabcalc.errors import DumpError

SLABS, ITEMS, GENERAL, SETTINGS, VERSION = "stats slabs", "stats items", "stats", "stats settings", "version"
COMMANDS = (VERSION, GENERAL, SLABS, ITEMS, SETTINGS)

_SLAB_KEY = re.compile(r"(\d+):(\w+)")
_ITEM_KEY = re.compile(r"items:(\d+):(\w+)")
_ECHOED = re.compile(r"(version|stats( \w+)?|lru_crawler metadump .*|quit)")


@dataclass(frozen=True)
class Dump:
    """What one node said, command by command (values as printed)."""

    source: str
    version: str | None = None
    general: Mapping[str, str] = field(default_factory=dict)
    slabs: Mapping[int, Mapping[str, str]] = field(default_factory=dict)   # class -> field -> value
    slab_totals: Mapping[str, str] = field(default_factory=dict)           # active_slabs, total_malloced
    items: Mapping[int, Mapping[str, str]] = field(default_factory=dict)   # class -> field -> value
    settings: Mapping[str, str] = field(default_factory=dict)
    given: frozenset = frozenset()                                          # commands answered

    @property
    def release(self) -> str | None:
        return self.version or self.general.get("version")


def _kind(names: Sequence[str]) -> str | None:
    """The command that printed a block of STAT names, or None when it cannot be told."""
    if any(_ITEM_KEY.fullmatch(n) for n in names):
        return ITEMS
    if any(_SLAB_KEY.fullmatch(n) for n in names) or {"active_slabs", "total_malloced"} & set(names):
        return SLABS
    if {"growth_factor", "maxbytes", "item_size_max"} & set(names):
        return SETTINGS
    if {"pid", "uptime", "curr_items", "limit_maxbytes", "total_items"} & set(names):
        return GENERAL
    if all(n.isdigit() for n in names) or "sizes_status" in names:
        return "stats sizes"
    return None


def _blocks(lines: Iterable[tuple[str, int, str]]):
    """``(kind, {name: value}, where)`` for each reply in ``lines`` of (source, number, text)."""
    block: list[tuple[str, str]] = []
    start = None
    for source, number, text in lines:
        text = text.rstrip("\r\n").strip()
        if text.startswith("STAT "):
            parts = text.split(" ", 2)
            if len(parts) < 2 or not parts[1]:
                raise DumpError(f"{source}, line {number}: a STAT line without a name: {text!r}")
            if not block:
                start = f"{source}, line {number}"
            block.append((parts[1], parts[2] if len(parts) == 3 else ""))
        elif text == "END":
            if block:
                yield _kind([n for n, _ in block]), dict(block), start
            block = []
        elif text.startswith("VERSION "):
            yield VERSION, {"version": text[len("VERSION "):].strip()}, f"{source}, line {number}"
        elif not text or text in ("ERROR",) or text.startswith("#") or _ECHOED.fullmatch(text):
            continue     # blank lines, comments, echoed commands, 1.2's ERROR to stats settings
        else:
            raise DumpError(f"{source}, line {number}: not a line of memcached's stats replies: {text[:60]!r}")
    if block:
        raise DumpError(f"{start}: a block of STAT lines without its END (truncated?)")


def parse_dump(texts: Iterable[tuple[str, str]], source: str | None = None) -> Dump:
    """One node's dump from saved replies: ``texts`` is ``(file name, text)`` pairs."""
    texts = list(texts)
    lines = ((name, number, line) for name, text in texts
             for number, line in enumerate(text.splitlines(), 1))
    found: dict[str, tuple[dict, str]] = {}
    for kind, values, where in _blocks(lines):
        if kind is None:
            raise DumpError(f"{where}: cannot tell which stats command printed this block "
                            f"(first name {next(iter(values))!r})")
        if kind == "stats sizes":
            continue
        if kind in found:
            raise DumpError(f"{where}: a second '{kind}' reply (first at {found[kind][1]}); "
                            "give one node's replies")
        found[kind] = (values, where)
    return _dump(source or ", ".join(name for name, _ in texts), {k: v for k, (v, _) in found.items()})


def dump_from_replies(source: str, replies: Mapping[str, Sequence[str]]) -> Dump:
    """One node's dump from :func:`slabcalc.inputs.client.read_node` replies."""
    found: dict[str, dict] = {}
    for command, lines in replies.items():
        if command == VERSION:
            found[VERSION] = {"version": lines[0]}
        elif command in COMMANDS:
            found[command] = dict(_stat(line) for line in lines)
    return _dump(source, found)


def _stat(line: str) -> tuple[str, str]:
    parts = line.split(" ", 2)
    return parts[1], parts[2] if len(parts) == 3 else ""


def _dump(source: str, found: Mapping[str, Mapping[str, str]]) -> Dump:
    slabs: dict[int, dict[str, str]] = {}
    totals: dict[str, str] = {}
    for name, value in found.get(SLABS, {}).items():
        m = _SLAB_KEY.fullmatch(name)
        if m:
            slabs.setdefault(int(m[1]), {})[m[2]] = value
        else:
            totals[name] = value
    items: dict[int, dict[str, str]] = {}
    for name, value in found.get(ITEMS, {}).items():
        m = _ITEM_KEY.fullmatch(name)
        if m:
            items.setdefault(int(m[1]), {})[m[2]] = value
    return Dump(source=source, version=found.get(VERSION, {}).get("version"), general=dict(found.get(GENERAL, {})),
                slabs=slabs, slab_totals=totals, items=items, settings=dict(found.get(SETTINGS, {})),
                given=frozenset(found))


# -- resolving the server's settings ------------------------------------------------------
