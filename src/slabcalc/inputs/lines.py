"""A text stream over lines made on the fly, for the readers that take a stream.

``optimize --hot`` keeps some lines of a metadump: :class:`LineStream` hands them
to :func:`slabcalc.inputs.items.read_items` as they are kept, so the input is
never held whole (issue 30).
"""

from __future__ import annotations

import io
from typing import Iterable, Iterator


class LineStream(io.TextIOBase):
    """``lines`` (without their ends) read as the text ``"\\n".join(lines) + "\\n"``, once, in order."""

    def __init__(self, lines: Iterable[str]):
        super().__init__()
        self._lines: Iterator[str] = iter(lines)
        self._buffer = ""

    def readable(self) -> bool:
        return True

    def _more(self) -> bool:
        line = next(self._lines, None)
        if line is None:
            return False
        self._buffer += line + "\n"
        return True

    def read(self, size: int | None = -1) -> str:
        whole = size is None or size < 0
        parts, have = [self._buffer], len(self._buffer)
        while whole or have < size:
            line = next(self._lines, None)
            if line is None:
                break
            parts += (line, "\n")
            have += len(line) + 1
        text = "".join(parts)
        if whole:
            self._buffer = ""
            return text
        text, self._buffer = text[:size], text[size:]
        return text

    def readline(self, size: int | None = -1) -> str:
        while "\n" not in self._buffer and self._more():
            pass
        end = self._buffer.find("\n") + 1 or len(self._buffer)
        if size is not None and 0 <= size < end:
            end = size
        text, self._buffer = self._buffer[:end], self._buffer[end:]
        return text


def split_lines(stream: Iterable[str]) -> Iterator[str]:
    """The lines ``str.splitlines()`` makes of the whole text of ``stream``, read a line at a time."""
    for physical in stream:
        yield from physical.splitlines()
