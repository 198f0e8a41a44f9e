"""A sample's rows of a CSV block told by the sampling hash computed in C (issue 39: "CSV keys hashed in
the compiled reader"): Cython compiles this module from its own Python source (setup.py; the types are
in ``key_scan.pxd`` beside it, so this file stays plain Python).

:func:`scan` walks a block's bytes once: each line's key cell and op cell are found by its delimiters,
and the key's sampling hash (:func:`slabcalc.model.sampling.text_hash`: the first four bytes of the MD5
digest of its bytes, big-endian) is computed by :func:`md5_head` for every row, no table of keys met:
compiled, one MD5 of a short key (one 64-byte block) costs about as much as a look-up in a table of a
million keys would (a cache miss), and needs no memory and no fingerprint.  MD5 is RFC 1321's (section
3: the message padded with 0x80, zeros and its length in bits, little-endian; the four rounds of
section 3.4 with the table T[i] = floor(2^32 * abs(sin(i))), written out here step by step).

The rows kept are those :func:`slabcalc.inputs.key_sample.kept_rows` keeps (the numpy scan, which the
reader uses where this module is not compiled: run as plain Python it is correct and slow, an MD5 in
Python a row); tests/inputs/test_key_scan.py holds the three equal on random blocks and MD5 equal to
hashlib's.
"""

# The mask of arithmetic mod 2^32, for plain Python.  Compiled, key_scan.pxd makes ``_M`` the C constant
# 0xFFFFFFFFu, which the C compiler folds away on u32 values (to Cython a literal this large is a Python
# object, and a module variable a load at every step); set through globals() so that Cython, which
# compiles a plain assignment as one to that constant, leaves it to the module's dict.
globals()["_M"] = 0xFFFFFFFF


def _f(b, c, d):
    """RFC 1321's F(X, Y, Z) = XY v not(X)Z, as d ^ (b & (c ^ d))."""
    return d ^ (b & (c ^ d))


def _g(b, c, d):
    """G(X, Y, Z) = XZ v Y not(Z), as c ^ (d & (b ^ c))."""
    return c ^ (d & (b ^ c))


def _h(b, c, d):
    """H(X, Y, Z) = X xor Y xor Z."""
    return b ^ c ^ d


def _i(b, c, d):
    """I(X, Y, Z) = Y xor (X v not(Z))."""
    return c ^ (b | (d ^ _M))


def _step(a, b, f, x, k, s):
    """One step of a round: b + ((a + f + X[k] + T[i]) <<< s)."""
    t = (a + f + x + k) & _M
    return (b + (((t << s) | (t >> (32 - s))) & _M)) & _M


def _byte(data, begin, length, padded, j):
    """Byte ``j`` of the padded message of the key ``data[begin:begin + length]`` (``padded`` bytes)."""
    if j < length:
        return data[begin + j]
    if j == length:
        return 0x80
    if j >= padded - 8:
        return ((length << 3) >> ((j - padded + 8) << 3)) & 0xFF
    return 0


def _word(data, begin, length, padded, j):
    """The little-endian 32-bit word at byte ``j`` of the key's padded message."""
    if j + 4 <= length:
        at = begin + j
        return data[at] | (data[at + 1] << 8) | (data[at + 2] << 16) | (data[at + 3] << 24)
    if j > length and j + 4 <= padded - 8:
        return 0
    if j == padded - 8:
        return (length << 3) & _M
    if j == padded - 4:
        return (length >> 29) & _M
    return (_byte(data, begin, length, padded, j) | (_byte(data, begin, length, padded, j + 1) << 8)
            | (_byte(data, begin, length, padded, j + 2) << 16) | (_byte(data, begin, length, padded, j + 3) << 24))


def md5_head(data, begin, length):
    """The first four bytes of the MD5 digest of ``data[begin:begin + length]``, read big-endian
    (:func:`slabcalc.model.sampling.text_hash` of those bytes); ValueError outside ``data``."""
    if begin < 0 or length < 0 or begin + length > len(data):
        raise ValueError("the key is not inside the data")
    return _md5_head(data, begin, length)


def _md5_head(data, begin, length):
    """:func:`md5_head` within ``data`` (not checked: compiled, nothing is bounds-checked)."""
    padded = ((length + 8) // 64 + 1) * 64
    h0, h1, h2, h3 = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
    o = 0
    while o < padded:
        a, b, c, d = _block(h0, h1, h2, h3,
                            _word(data, begin, length, padded, o + 0), _word(data, begin, length, padded, o + 4),
                            _word(data, begin, length, padded, o + 8), _word(data, begin, length, padded, o + 12),
                            _word(data, begin, length, padded, o + 16), _word(data, begin, length, padded, o + 20),
                            _word(data, begin, length, padded, o + 24), _word(data, begin, length, padded, o + 28),
                            _word(data, begin, length, padded, o + 32), _word(data, begin, length, padded, o + 36),
                            _word(data, begin, length, padded, o + 40), _word(data, begin, length, padded, o + 44),
                            _word(data, begin, length, padded, o + 48), _word(data, begin, length, padded, o + 52),
                            _word(data, begin, length, padded, o + 56), _word(data, begin, length, padded, o + 60))
        h0 = (h0 + a) & _M
        h1 = (h1 + b) & _M
        h2 = (h2 + c) & _M
        h3 = (h3 + d) & _M
        o += 64
    return ((h0 & 0xFF) << 24) | (((h0 >> 8) & 0xFF) << 16) | (((h0 >> 16) & 0xFF) << 8) | (h0 >> 24)


def _block(a, b, c, d, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15):
    """The four words after one 64-byte block of the message (X[0..15]), from ``a, b, c, d`` before it:
    RFC 1321 section 3.4's four rounds of sixteen steps (before the additions)."""
    a = _step(a, b, _f(b, c, d), x0, 0xd76aa478, 7)
    d = _step(d, a, _f(a, b, c), x1, 0xe8c7b756, 12)
    c = _step(c, d, _f(d, a, b), x2, 0x242070db, 17)
    b = _step(b, c, _f(c, d, a), x3, 0xc1bdceee, 22)
    a = _step(a, b, _f(b, c, d), x4, 0xf57c0faf, 7)
    d = _step(d, a, _f(a, b, c), x5, 0x4787c62a, 12)
    c = _step(c, d, _f(d, a, b), x6, 0xa8304613, 17)
    b = _step(b, c, _f(c, d, a), x7, 0xfd469501, 22)
    a = _step(a, b, _f(b, c, d), x8, 0x698098d8, 7)
    d = _step(d, a, _f(a, b, c), x9, 0x8b44f7af, 12)
    c = _step(c, d, _f(d, a, b), x10, 0xffff5bb1, 17)
    b = _step(b, c, _f(c, d, a), x11, 0x895cd7be, 22)
    a = _step(a, b, _f(b, c, d), x12, 0x6b901122, 7)
    d = _step(d, a, _f(a, b, c), x13, 0xfd987193, 12)
    c = _step(c, d, _f(d, a, b), x14, 0xa679438e, 17)
    b = _step(b, c, _f(c, d, a), x15, 0x49b40821, 22)
    a = _step(a, b, _g(b, c, d), x1, 0xf61e2562, 5)
    d = _step(d, a, _g(a, b, c), x6, 0xc040b340, 9)
    c = _step(c, d, _g(d, a, b), x11, 0x265e5a51, 14)
    b = _step(b, c, _g(c, d, a), x0, 0xe9b6c7aa, 20)
    a = _step(a, b, _g(b, c, d), x5, 0xd62f105d, 5)
    d = _step(d, a, _g(a, b, c), x10, 0x02441453, 9)
    c = _step(c, d, _g(d, a, b), x15, 0xd8a1e681, 14)
    b = _step(b, c, _g(c, d, a), x4, 0xe7d3fbc8, 20)
    a = _step(a, b, _g(b, c, d), x9, 0x21e1cde6, 5)
    d = _step(d, a, _g(a, b, c), x14, 0xc33707d6, 9)
    c = _step(c, d, _g(d, a, b), x3, 0xf4d50d87, 14)
    b = _step(b, c, _g(c, d, a), x8, 0x455a14ed, 20)
    a = _step(a, b, _g(b, c, d), x13, 0xa9e3e905, 5)
    d = _step(d, a, _g(a, b, c), x2, 0xfcefa3f8, 9)
    c = _step(c, d, _g(d, a, b), x7, 0x676f02d9, 14)
    b = _step(b, c, _g(c, d, a), x12, 0x8d2a4c8a, 20)
    a = _step(a, b, _h(b, c, d), x5, 0xfffa3942, 4)
    d = _step(d, a, _h(a, b, c), x8, 0x8771f681, 11)
    c = _step(c, d, _h(d, a, b), x11, 0x6d9d6122, 16)
    b = _step(b, c, _h(c, d, a), x14, 0xfde5380c, 23)
    a = _step(a, b, _h(b, c, d), x1, 0xa4beea44, 4)
    d = _step(d, a, _h(a, b, c), x4, 0x4bdecfa9, 11)
    c = _step(c, d, _h(d, a, b), x7, 0xf6bb4b60, 16)
    b = _step(b, c, _h(c, d, a), x10, 0xbebfbc70, 23)
    a = _step(a, b, _h(b, c, d), x13, 0x289b7ec6, 4)
    d = _step(d, a, _h(a, b, c), x0, 0xeaa127fa, 11)
    c = _step(c, d, _h(d, a, b), x3, 0xd4ef3085, 16)
    b = _step(b, c, _h(c, d, a), x6, 0x04881d05, 23)
    a = _step(a, b, _h(b, c, d), x9, 0xd9d4d039, 4)
    d = _step(d, a, _h(a, b, c), x12, 0xe6db99e5, 11)
    c = _step(c, d, _h(d, a, b), x15, 0x1fa27cf8, 16)
    b = _step(b, c, _h(c, d, a), x2, 0xc4ac5665, 23)
    a = _step(a, b, _i(b, c, d), x0, 0xf4292244, 6)
    d = _step(d, a, _i(a, b, c), x7, 0x432aff97, 10)
    c = _step(c, d, _i(d, a, b), x14, 0xab9423a7, 15)
    b = _step(b, c, _i(c, d, a), x5, 0xfc93a039, 21)
    a = _step(a, b, _i(b, c, d), x12, 0x655b59c3, 6)
    d = _step(d, a, _i(a, b, c), x3, 0x8f0ccc92, 10)
    c = _step(c, d, _i(d, a, b), x10, 0xffeff47d, 15)
    b = _step(b, c, _i(c, d, a), x1, 0x85845dd1, 21)
    a = _step(a, b, _i(b, c, d), x8, 0x6fa87e4f, 6)
    d = _step(d, a, _i(a, b, c), x15, 0xfe2ce6e0, 10)
    c = _step(c, d, _i(d, a, b), x6, 0xa3014314, 15)
    b = _step(b, c, _i(c, d, a), x13, 0x4e0811a1, 21)
    a = _step(a, b, _i(b, c, d), x4, 0xf7537e82, 6)
    d = _step(d, a, _i(a, b, c), x11, 0xbd3af235, 10)
    c = _step(c, d, _i(d, a, b), x2, 0x2ad7d2bb, 15)
    b = _step(b, c, _i(c, d, a), x9, 0xeb86d391, 21)
    return a, b, c, d


def scan(data, delimiter, i_key, i_op, limit, rows, bounds):
    """The rows of ``data`` (a block of whole lines, each ended by a line feed, the last too) a sample of
    threshold ``limit`` keeps: each kept row's index among the lines is appended to ``rows`` and its first
    offset and its line feed's to ``bounds``; returns the rows left out and, of those, the gets (their
    ``i_op``-th cell ``get`` or ``gets`` in any case; ``i_op`` -1: none counted).

    A row is kept when it has no key cell (fewer cells than ``i_key + 1``, an empty key, or, for the key
    in the first cell, no delimiter on the line: the reader rejects or skips such a line as it would
    unsampled) or when its key's :func:`md5_head` is under ``limit``."""
    size = len(data)
    if size and data[size - 1] != 10:
        raise ValueError("a block must end with a line feed")
    last = i_key if i_key > i_op else i_op
    s = 0
    line = 0
    left_out = 0
    gets = 0
    while s < size:
        kb = -1
        ke = -1
        ob = -1
        oe = -1
        key_cut = False
        cell = 0
        cb = s
        e = s
        while True:             # the cells up to the last one wanted, then on to the line feed
            c = data[e]
            if c == 10 or c == delimiter:
                if cell == i_key:
                    kb = cb
                    ke = e
                    key_cut = c == delimiter
                if cell == i_op:
                    ob = cb
                    oe = e
                if c == 10:
                    break
                cell += 1
                cb = e + 1
                if cell > last:
                    e += 1
                    while data[e] != 10:
                        e += 1
                    break
            e += 1
        keep = True
        if ke > kb >= 0 and (i_key > 0 or key_cut):
            keep = _md5_head(data, kb, ke - kb) < limit
        if keep:
            rows.append(line)
            bounds.append(s)
            bounds.append(e)
        else:
            left_out += 1
            n = oe - ob
            if ob >= 0 and (n == 3 or n == 4) and (data[ob] | 0x20) == 103 and (data[ob + 1] | 0x20) == 101 \
                    and (data[ob + 2] | 0x20) == 116 and (n == 3 or (data[ob + 3] | 0x20) == 115):
                gets += 1           # get or gets, in any case
        s = e + 1
        line += 1
    return left_out, gets


def compiled() -> bool:
    """Whether this module runs compiled (Cython's extension) rather than as this source."""
    return not __file__.endswith(".py")


__all__ = ["compiled", "md5_head", "scan"]
