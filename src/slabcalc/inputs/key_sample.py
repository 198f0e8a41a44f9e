"""A sample's rows of CSV text told from a block at a time, before any row's cells are made (issue 39:
a sample that pays).

The sampling rule is :func:`slabcalc.model.sampling.text_hash` (MD5 of the key cell's UTF-8 bytes),
the one ``slabcalc sql --workload --sample`` computes too; this module only finds each row's key cell
and each key's answer cheaply.  Where Cython compiled :mod:`slabcalc.inputs.key_scan` (setup.py), it
does so in one pass over the block's bytes, an MD5 a row in C (a 5 % sample of issue 39's 10 M-row CSV:
docs/speed.md); otherwise numpy, as follows.  A block of text (whole lines) is encoded once and read as bytes by
numpy: its line ends and delimiters give each row's key cell, and the cell's bytes, eight at a time,
two 64-bit fingerprints.  A key met before is found by its first fingerprint (with its length mixed
in) in :class:`Known`, an open-addressing table of numpy arrays searched for a whole block at once,
which holds the second fingerprint and the key's answer: a key is taken for another only if both
fingerprints and the length agree (126 bits: for a billion keys, odds of about 10^-20 that two
meet).  Where the second fingerprint does not agree, or the key is longer than :data:`LONGEST`
bytes, the key's own MD5 decides, not remembered.  A new key's MD5 is computed once.

A row without a key cell (too few cells, or an empty key) is kept: the reader reads it and rejects
it as it would unsampled; a blank line is kept too (the reader skips it: not a row).
"""

from __future__ import annotations

from slabcalc.model.sampling import HASH_SPACE, md5

LONGEST = 256           # bytes of a key fingerprinted here (memcached's keys are at most 250)
FIRST_KEYS = 1 << 18    # keys remembered at first (the table doubles as they come)
KNOWN_KEYS = 1 << 22    # keys remembered at most (then all forgotten: a bound on the memory, not on the answer)
TEXT_KEYS = 1 << 20     # keys a block read a line at a time (quoted) remembers in a dict (then forgets: ~100 MB)

_M1, _M2 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F     # odd 64-bit multipliers (golden ratio, xxHash's)
_GET, _GETS = int.from_bytes(b"get", "little"), int.from_bytes(b"gets", "little")    # an op cell's bytes, read as one word


class Known:
    """The keys' answers met so far (:func:`kept_rows`): an open-addressing table of twice as many slots as
    keys it may hold, each a key's first fingerprint (0: empty; a fingerprint of 0 is taken as 1) and its
    second with the answer in the low bit, probed from the fingerprint's low bits a slot at a time.  It
    starts at :data:`FIRST_KEYS` keys (8 MB) and doubles when full, up to :data:`KNOWN_KEYS` (128 MB);
    full there, it forgets all (a bound on the memory, not on the answers).  (Forgetting at a million
    keys made a 5 % sample of 10 M requests over 1.45 M keys take 2.1 M MD5s, a sixth of its reading.)"""

    def __init__(self, np):
        self.np = np
        self._empty(FIRST_KEYS)

    def _empty(self, keys: int) -> None:
        """An empty table for ``keys`` keys."""
        np = self.np
        self.keys = keys
        self.mask = 2 * keys - 1
        self.firsts = np.zeros(2 * keys, dtype=np.uint64)
        self.held = np.full(2 * keys, -1, dtype=np.int64)
        self.count = 0

    def find(self, firsts):
        """The held value (second fingerprint and answer) of each of ``firsts``, -1 where none is held."""
        np = self.np
        found = np.full(len(firsts), -1, dtype=np.int64)
        slots = (firsts & np.uint64(self.mask)).astype(np.int64)
        todo = np.arange(len(firsts))
        while len(todo):
            at = slots[todo]
            there = self.firsts[at]
            match = there == firsts[todo]
            found[todo[match]] = self.held[at[match]]
            todo = todo[~match & (there != 0)]          # another key's slot: the next one
            slots[todo] = (slots[todo] + 1) & self.mask
        return found

    def add(self, firsts, held) -> None:
        """Remember distinct new ``firsts`` with their ``held`` values (growing the table first when they
        would overfill it, or forgetting all at :data:`KNOWN_KEYS`)."""
        np = self.np
        if self.count + len(firsts) > self.keys and self.keys < KNOWN_KEYS:
            self._grow(max(self.count + len(firsts), 2 * self.keys))
        if self.count + len(firsts) > self.keys:        # at its bound and still too many: forget all
            self.firsts[:] = 0
            self.count = 0
        self.count += len(firsts)
        slots = (firsts & np.uint64(self.mask)).astype(np.int64)
        todo = np.arange(len(firsts))
        while len(todo):
            at = slots[todo]
            free = self.firsts[at] == 0
            wanted = todo[free]
            self.firsts[at[free]] = firsts[wanted]        # of keys wanting one free slot, the last written holds it
            won = free.copy()
            won[free] = self.firsts[at[free]] == firsts[wanted]
            self.held[at[won]] = held[todo[won]]
            slots[todo[~won]] = (slots[todo[~won]] + 1) & self.mask    # a taken slot or a lost race: the next one
            todo = todo[~won]

    def _grow(self, keys: int) -> None:
        """The table made for ``keys`` keys (a power of two, at most :data:`KNOWN_KEYS`), those held moved in."""
        used = self.np.flatnonzero(self.firsts)
        firsts, held = self.firsts[used], self.held[used]
        self._empty(min(KNOWN_KEYS, 1 << (keys - 1).bit_length()))
        self.add(firsts, held)


def kept_rows(text: str, delimiter: str, i_key: int, limit: int, known: Known | None,
              i_op: int = -1) -> tuple[list[int], list[str], int, Known | None, int] | None:
    """The rows of ``text`` (whole ``\\n``-ended lines, no quote, no carriage return) a sample of
    threshold ``limit`` keeps: their indexes among the block's lines and their text, the number of
    rows left out, the keys' answers (``known``, or a new :class:`Known`: pass it to the next
    block; None where the compiled scan ran), and the gets among the rows left out (their ``i_op``-th
    cell ``get`` or ``gets``, in any case; none without an op column); None without numpy.  Where
    :mod:`slabcalc.inputs.key_scan` is compiled, it tells the rows (an MD5 a row, in C)."""
    try:
        data = text.encode()
    except UnicodeEncodeError:          # text no UTF-8 gives (surrogates): the reader's own way
        return None
    scan = _compiled_scan()
    if scan is not None and ord(delimiter) < 128 and limit < HASH_SPACE:
        rows: list[int] = []
        bounds: list[int] = []
        left_out, gets = scan(data, ord(delimiter), i_key, i_op, limit, rows, bounds)
        return rows, _lines(text, data, bounds[::2], bounds[1::2]), left_out, known, gets
    try:
        import numpy as np
    except ImportError:
        return None
    if known is None:
        known = Known(np)
    padded = np.frombuffer(data + bytes(8), dtype=np.uint8)
    size = len(data)
    raw = padded[:size]
    ends = np.flatnonzero(raw == 10)
    if not len(ends):
        return [], [], 0, known, 0
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    cuts = np.flatnonzero(raw == ord(delimiter))
    cells = np.searchsorted(cuts, starts)          # each line's first delimiter's index
    first, after, begin, stop = _cell(np, cuts, cells, starts, ends, i_key)
    count = len(cuts)
    length = stop - begin
    # a row with a key cell and a delimiter (a line of one cell is no row): else kept, for the reader
    has_key = (begin <= ends) & (length > 0) & ((first < count) & (after < ends) if not i_key else True)
    length = np.where(has_key, length, 0)
    words = int(min(int(length.max()), LONGEST) + 7) // 8
    view = np.ndarray(shape=(size + 1,), dtype="<u8", buffer=padded, strides=(1,))   # 8 bytes at every offset
    masks = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
    h1 = length.astype(np.uint64) * np.uint64(_M2)
    h2 = length.astype(np.uint64) + np.uint64(_M1)
    at = np.where(has_key, begin, 0)
    with np.errstate(over="ignore"):
        for w in range(words):
            word = view[np.minimum(at + 8 * w, size)] & masks[np.clip(length - 8 * w, 0, 8)]
            h1 = (h1 ^ word) * np.uint64(_M1)
            h1 ^= h1 >> np.uint64(29)
            h2 = (h2 + word) * np.uint64(_M2)
            h2 ^= h2 >> np.uint64(32)
    second = (h2 >> np.uint64(2)).astype(np.int64) << 1     # 62 bits, then the answer's bit
    h1[h1 == 0] = 1                                          # 0 marks an empty slot
    found = known.find(h1)
    keep = (found & 1).astype(bool)
    settle = np.flatnonzero(((found >> 1) != (second >> 1)) | (length > LONGEST))   # new, or not this key
    if len(settle):
        keep[settle] = _settle(data, np, settle, begin, stop, h1, second, length, limit, known, found)
    keep |= ~has_key
    rows = np.flatnonzero(keep).tolist()
    left_out = len(ends) - len(rows)
    lines = _lines(text, data, starts[rows].tolist(), ends[rows].tolist())
    gets = 0
    if i_op >= 0 and left_out:
        _, _, op_begin, op_stop = _cell(np, cuts, cells, starts, ends, i_op)
        n = np.where(op_begin <= ends, op_stop - op_begin, 0)
        mask = masks[np.clip(n, 0, 8)]
        word = (view[np.minimum(op_begin, size)] & mask) | (np.uint64(0x2020202020202020) & mask)   # lower case
        named = ((n == 3) & (word == _GET)) | ((n == 4) & (word == _GETS))
        gets = int(np.count_nonzero(named & ~keep))
    return rows, lines, left_out, known, gets


def _lines(text: str, data: bytes, starts: list[int], ends: list[int]) -> list[str]:
    """The kept lines, from their offsets in ``data`` (``text`` encoded): sliced from ``text`` where it is
    ASCII (its offsets are the bytes'), else from ``data`` and decoded."""
    if len(data) == len(text):
        return [text[s:e] for s, e in zip(starts, ends)]
    return [data[s:e].decode() for s, e in zip(starts, ends)]


def _compiled_scan():
    """:func:`slabcalc.inputs.key_scan.scan` where Cython compiled it (setup.py), else None (as plain
    Python it computes an MD5 a row in Python: numpy's scan, above, is the faster there)."""
    from slabcalc.inputs.key_scan import compiled, scan

    return scan if compiled() else None


def _cell(np, cuts, cells, starts, ends, i: int):
    """Where each line's ``i``-th cell is (``cells``: the index in ``cuts`` of each line's first
    delimiter): the index of the delimiter after it, that delimiter's offset, and the cell's first
    offset and the one past its end (past the line's end when the line has fewer cells)."""
    first = cells + i          # the index of the delimiter after the cell
    count = len(cuts)
    if i:
        before = cuts[np.minimum(first - 1, count - 1)] if count else ends
        begin = np.where(first - 1 < count, before + 1, ends + 1)
    else:
        begin = starts
    after = cuts[np.minimum(first, count - 1)] if count else ends
    stop = np.where((first < count) & (after < ends), after, ends)
    return first, after, begin, stop


def _settle(data: bytes, np, rows, begin, stop, h1, second, length, limit: int, known: Known, found):
    """Whether each of ``rows`` (keys not found in ``known``, found with another second fingerprint, or
    too long to know) is kept: its key's MD5 under ``limit``, computed once a key of the block (the rows
    of one first fingerprint, second and length); a new key's answer remembered, an old one's not
    replaced."""
    n = length[rows]
    alone = np.where(n > LONGEST, rows, -1)              # a key too long to know: its row's own
    order = np.lexsort((alone, n, second[rows], h1[rows]))
    ranked = rows[order]
    same = np.zeros(len(ranked), dtype=bool)             # the key of the row before it, in that order
    same[1:] = ((h1[ranked[1:]] == h1[ranked[:-1]]) & (second[ranked[1:]] == second[ranked[:-1]])
                & (length[ranked[1:]] == length[ranked[:-1]]) & (alone[order[1:]] < 0))
    group = np.cumsum(~same) - 1
    keys = ranked[~same]
    cut = limit.to_bytes(4, "big") + bytes(12)      # an MD5 digest under this: its first 4 bytes under limit
    answers = np.array([md5(data[a:b]).digest() < cut for a, b in zip(begin[keys].tolist(), stop[keys].tolist())],
                       dtype=bool)
    fresh = (length[keys] <= LONGEST) & (found[keys] < 0)     # an old key's answer is not replaced
    if fresh.any():
        known.add(h1[keys][fresh], second[keys][fresh] | answers[fresh])
    kept = np.empty(len(rows), dtype=bool)
    kept[order] = answers[group]
    return kept


__all__ = ["FIRST_KEYS", "KNOWN_KEYS", "TEXT_KEYS", "LONGEST", "Known", "kept_rows"]
