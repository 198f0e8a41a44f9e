"""``lru_crawler metadump`` lines: ``key=user%3A1001 exp=-1 la=1763700000 cas=12 fetch=no cls=1 size=72``
(later 1.6 releases add ``flags=``), framed by the echoed command, 1.6.45's ``OK`` and ``END``.

The one decoder of their keys: key lengths and key names both come from :func:`metadump_key_bytes`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

# the lines around a saved metadump that are not items: the command echoed by a terminal
# session, and the OK that 1.6.45 sends before the first item
METADUMP_FRAME = re.compile(r"lru_crawler metadump( \S+)*|OK")


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
