"""``lru_crawler metadump`` lines: ``key=user%3A1001 exp=-1 la=1763700000 cas=12 fetch=no cls=1 size=72``
(later 1.6 releases add ``flags=``), framed by the echoed command, 1.6.45's ``OK`` and ``END``.

The one decoder of their keys: key lengths and key names both come from :func:`metadump_key_bytes`;
and the items in use (``optimize --hot``): :func:`hot_rule` keeps lines by ``fetch=`` or ``la=``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterable, Iterator, Sequence

# the lines around a saved metadump that are not items: the command echoed by a terminal
# session, and the OK that 1.6.45 sends before the first item
METADUMP_FRAME = re.compile(r"lru_crawler metadump( \S+)*|OK")
_LA = re.compile(r"(?:^|\s)la=(\d+)")
_FETCH = re.compile(r"(?:^|\s)fetch=(\w+)")


def metadump_key_bytes(line: str) -> bytes:
    """The key of a metadump line as the bytes memcached holds: ``key=`` is the key URL-encoded
    (1.6.18 crawler.c:249 prints it with ``uriencode``), so ``user%FF%FE`` is 6 bytes."""
    from urllib.parse import unquote_to_bytes   # only key names need it: keep start-up light

    return unquote_to_bytes(line.split(None, 1)[0][4:])


def metadump_key_name(line: str) -> str:
    """The key of a metadump line as text (``--group-by``); bytes that are not UTF-8 become U+FFFD."""
    return metadump_key_bytes(line).decode("utf-8", errors="replace")


def metadump_key_length(lines: Sequence[str]) -> int:
    """The most common key length, in bytes, of metadump ``lines``: metadump gives sizes, not the
    key/value split a chunked item's chunks depend on, so a sample's items are split with it."""
    return Counter(len(metadump_key_bytes(line)) for line in lines).most_common(1)[0][0]


def size_key(line: str) -> str:
    """A metadump line's cache key: NUL and its ``size=`` text (the keys make every line unique)."""
    if not line.startswith("key="):
        return line
    at = line.find(" size=")
    if at < 0:
        return line
    end = line.find(" ", at + 6)
    return "\0" + (line[at + 6:end] if end >= 0 else line[at + 6:].rstrip("\r\n"))


def hot_lines(lines: Sequence[str], rule: str) -> tuple[list[str], int]:
    """The metadump lines of items in use, and how many were left out.

    ``rule`` is ``"fetched"`` (``fetch=yes``: read at least once) or a number of
    seconds: items whose ``la=`` (last access) is within that many seconds of the
    newest ``la=`` in the dump.  Lines that are not items (``END``, the echoed
    command) are kept for the reader to account for.
    """
    keep = hot_rule(rule, newest_access(lines) if rule != "fetched" else None)
    kept = [line for line in lines if keep(line)]
    return kept, len(lines) - len(kept)


def newest_access(lines: Iterable[str]) -> int:
    """The newest ``la=`` of metadump ``lines`` (0 when none has one): what ``--hot SECONDS`` counts back from."""
    return max((int(m[1]) for line in lines for m in [_LA.search(line)] if m), default=0)


def hot_rule(rule: str, newest: int | None = None) -> Callable[[str], bool]:
    """Whether :func:`hot_lines` keeps a line, one line at a time (``newest``: :func:`newest_access`,
    for a number of seconds); lines that are not items are kept."""
    if rule == "fetched":
        def keep(line: str) -> bool:
            found = _FETCH.search(line)
            return found is None or found[1] == "yes"
    else:
        seconds = int(rule)

        def keep(line: str) -> bool:
            found = _LA.search(line)
            return found is None or int(found[1]) >= newest - seconds
    return lambda line: not line.startswith("key=") or keep(line)


class HotLines:
    """The lines :func:`hot_rule` keeps, one at a time as they are read; ``left_out`` counts the others
    read so far (final once every line is read).  What :func:`hot_lines` keeps, without a list."""

    def __init__(self, lines: Iterable[str], rule: str, newest: int | None = None):
        self._lines, self._keep, self.left_out = iter(lines), hot_rule(rule, newest), 0

    def __iter__(self) -> Iterator[str]:
        keep = self._keep
        for line in self._lines:
            if keep(line):
                yield line
            else:
                self.left_out += 1
