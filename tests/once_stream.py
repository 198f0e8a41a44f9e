"""A text stream that tells how it was read: at once or in parts, and how many times (issue 30).

``OnceStream(text)`` stands in for an input (``monkeypatch`` ``slabcalc.inputs.rows.open_input``) to
prove a command reads it in bounded parts and once: ``whole_reads`` counts ``read()`` of everything,
``reads_after_end`` reads after a ``read`` returned nothing, ``rewinds`` the ``seek(0)`` of a second
pass (only when made ``seekable``, as a file is; a pipe is not).
"""

from __future__ import annotations

import io


class OnceStream(io.TextIOBase):
    def __init__(self, text: str, seekable: bool = False):
        self._text = io.StringIO(text)
        self._seekable = seekable
        self.whole_reads = self.reads_after_end = self.rewinds = 0
        self._ended = False

    def seekable(self) -> bool:
        return self._seekable

    def readable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if not self._seekable or (offset, whence) != (0, 0):
            raise io.UnsupportedOperation("seek")
        self.rewinds += 1
        self._ended = False
        return self._text.seek(0)

    def _note(self, got: str, whole: bool) -> str:
        self.whole_reads += whole
        self.reads_after_end += self._ended
        return got

    def read(self, size=-1):
        got = self._note(self._text.read(size), size is None or size < 0)
        self._ended = self._ended or not got
        return got

    def readline(self, size=-1):
        return self._note(self._text.readline(size), False)
