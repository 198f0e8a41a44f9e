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
    return _md5_heads(data, begin, length, begin, length)[0]


def _md5_heads(data, k0, n0, k1, n1):
    """:func:`md5_head` of two keys within ``data`` (not checked: compiled, nothing is bounds-checked), their
    blocks side by side: each step of an MD5 waits on the one before, so two keys' steps interleaved keep
    the processor busier (docs/speed.md: a row's scan 94-96 ns against 118-120 with one key at a time)."""
    padded0 = ((n0 + 8) // 64 + 1) * 64
    padded1 = ((n1 + 8) // 64 + 1) * 64
    h0 = e0 = 0x67452301
    h1 = e1 = 0xEFCDAB89
    h2 = e2 = 0x98BADCFE
    h3 = e3 = 0x10325476
    o = 0
    while o < padded0 or o < padded1:        # the key of fewer blocks hashes its last again, unused
        a0, b0, c0, d0, a1, b1, c1, d1 = _rounds(h0, h1, h2, h3, e0, e1, e2, e3, data,
                                                 k0, n0, padded0, o if o < padded0 else padded0 - 64,
                                                 k1, n1, padded1, o if o < padded1 else padded1 - 64)
        if o < padded0:
            h0, h1, h2, h3 = (h0 + a0) & _M, (h1 + b0) & _M, (h2 + c0) & _M, (h3 + d0) & _M
        if o < padded1:
            e0, e1, e2, e3 = (e0 + a1) & _M, (e1 + b1) & _M, (e2 + c1) & _M, (e3 + d1) & _M
        o += 64
    return _head(h0), _head(e0)


def _head(h0):
    """The digest's first four bytes (``h0``, little-endian) read big-endian."""
    return ((h0 & 0xFF) << 24) | (((h0 >> 8) & 0xFF) << 16) | (((h0 >> 16) & 0xFF) << 8) | (h0 >> 24)


def _rounds(a0, b0, c0, d0, a1, b1, c1, d1, data, k0, n0, padded0, o0, k1, n1, padded1, o1):
    """The eight words after one block of each of two keys, from the words before it (X: the block at
    ``o0`` of the first key's padded message, Y: at ``o1`` of the second's): RFC 1321 section 3.4's four
    rounds of sixteen steps, before the additions."""
    x0 = _word(data, k0, n0, padded0, o0 + 0)
    x1 = _word(data, k0, n0, padded0, o0 + 4)
    x2 = _word(data, k0, n0, padded0, o0 + 8)
    x3 = _word(data, k0, n0, padded0, o0 + 12)
    x4 = _word(data, k0, n0, padded0, o0 + 16)
    x5 = _word(data, k0, n0, padded0, o0 + 20)
    x6 = _word(data, k0, n0, padded0, o0 + 24)
    x7 = _word(data, k0, n0, padded0, o0 + 28)
    x8 = _word(data, k0, n0, padded0, o0 + 32)
    x9 = _word(data, k0, n0, padded0, o0 + 36)
    x10 = _word(data, k0, n0, padded0, o0 + 40)
    x11 = _word(data, k0, n0, padded0, o0 + 44)
    x12 = _word(data, k0, n0, padded0, o0 + 48)
    x13 = _word(data, k0, n0, padded0, o0 + 52)
    x14 = _word(data, k0, n0, padded0, o0 + 56)
    x15 = _word(data, k0, n0, padded0, o0 + 60)
    y0 = _word(data, k1, n1, padded1, o1 + 0)
    y1 = _word(data, k1, n1, padded1, o1 + 4)
    y2 = _word(data, k1, n1, padded1, o1 + 8)
    y3 = _word(data, k1, n1, padded1, o1 + 12)
    y4 = _word(data, k1, n1, padded1, o1 + 16)
    y5 = _word(data, k1, n1, padded1, o1 + 20)
    y6 = _word(data, k1, n1, padded1, o1 + 24)
    y7 = _word(data, k1, n1, padded1, o1 + 28)
    y8 = _word(data, k1, n1, padded1, o1 + 32)
    y9 = _word(data, k1, n1, padded1, o1 + 36)
    y10 = _word(data, k1, n1, padded1, o1 + 40)
    y11 = _word(data, k1, n1, padded1, o1 + 44)
    y12 = _word(data, k1, n1, padded1, o1 + 48)
    y13 = _word(data, k1, n1, padded1, o1 + 52)
    y14 = _word(data, k1, n1, padded1, o1 + 56)
    y15 = _word(data, k1, n1, padded1, o1 + 60)
    a0, b0, c0, d0, a1, b1, c1, d1 = _rounds_12(
        a0, b0, c0, d0, a1, b1, c1, d1, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15,
        y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15)
    return _rounds_34(
        a0, b0, c0, d0, a1, b1, c1, d1, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15,
        y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15)


def _rounds_12(a0, b0, c0, d0, a1, b1, c1, d1, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13,
               x14, x15, y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15):
    """Rounds 1 and 2 (F and G) of the two keys' blocks, their steps side by side."""
    a0 = _step(a0, b0, _f(b0, c0, d0), x0, 0xd76aa478, 7)
    a1 = _step(a1, b1, _f(b1, c1, d1), y0, 0xd76aa478, 7)
    d0 = _step(d0, a0, _f(a0, b0, c0), x1, 0xe8c7b756, 12)
    d1 = _step(d1, a1, _f(a1, b1, c1), y1, 0xe8c7b756, 12)
    c0 = _step(c0, d0, _f(d0, a0, b0), x2, 0x242070db, 17)
    c1 = _step(c1, d1, _f(d1, a1, b1), y2, 0x242070db, 17)
    b0 = _step(b0, c0, _f(c0, d0, a0), x3, 0xc1bdceee, 22)
    b1 = _step(b1, c1, _f(c1, d1, a1), y3, 0xc1bdceee, 22)
    a0 = _step(a0, b0, _f(b0, c0, d0), x4, 0xf57c0faf, 7)
    a1 = _step(a1, b1, _f(b1, c1, d1), y4, 0xf57c0faf, 7)
    d0 = _step(d0, a0, _f(a0, b0, c0), x5, 0x4787c62a, 12)
    d1 = _step(d1, a1, _f(a1, b1, c1), y5, 0x4787c62a, 12)
    c0 = _step(c0, d0, _f(d0, a0, b0), x6, 0xa8304613, 17)
    c1 = _step(c1, d1, _f(d1, a1, b1), y6, 0xa8304613, 17)
    b0 = _step(b0, c0, _f(c0, d0, a0), x7, 0xfd469501, 22)
    b1 = _step(b1, c1, _f(c1, d1, a1), y7, 0xfd469501, 22)
    a0 = _step(a0, b0, _f(b0, c0, d0), x8, 0x698098d8, 7)
    a1 = _step(a1, b1, _f(b1, c1, d1), y8, 0x698098d8, 7)
    d0 = _step(d0, a0, _f(a0, b0, c0), x9, 0x8b44f7af, 12)
    d1 = _step(d1, a1, _f(a1, b1, c1), y9, 0x8b44f7af, 12)
    c0 = _step(c0, d0, _f(d0, a0, b0), x10, 0xffff5bb1, 17)
    c1 = _step(c1, d1, _f(d1, a1, b1), y10, 0xffff5bb1, 17)
    b0 = _step(b0, c0, _f(c0, d0, a0), x11, 0x895cd7be, 22)
    b1 = _step(b1, c1, _f(c1, d1, a1), y11, 0x895cd7be, 22)
    a0 = _step(a0, b0, _f(b0, c0, d0), x12, 0x6b901122, 7)
    a1 = _step(a1, b1, _f(b1, c1, d1), y12, 0x6b901122, 7)
    d0 = _step(d0, a0, _f(a0, b0, c0), x13, 0xfd987193, 12)
    d1 = _step(d1, a1, _f(a1, b1, c1), y13, 0xfd987193, 12)
    c0 = _step(c0, d0, _f(d0, a0, b0), x14, 0xa679438e, 17)
    c1 = _step(c1, d1, _f(d1, a1, b1), y14, 0xa679438e, 17)
    b0 = _step(b0, c0, _f(c0, d0, a0), x15, 0x49b40821, 22)
    b1 = _step(b1, c1, _f(c1, d1, a1), y15, 0x49b40821, 22)
    a0 = _step(a0, b0, _g(b0, c0, d0), x1, 0xf61e2562, 5)
    a1 = _step(a1, b1, _g(b1, c1, d1), y1, 0xf61e2562, 5)
    d0 = _step(d0, a0, _g(a0, b0, c0), x6, 0xc040b340, 9)
    d1 = _step(d1, a1, _g(a1, b1, c1), y6, 0xc040b340, 9)
    c0 = _step(c0, d0, _g(d0, a0, b0), x11, 0x265e5a51, 14)
    c1 = _step(c1, d1, _g(d1, a1, b1), y11, 0x265e5a51, 14)
    b0 = _step(b0, c0, _g(c0, d0, a0), x0, 0xe9b6c7aa, 20)
    b1 = _step(b1, c1, _g(c1, d1, a1), y0, 0xe9b6c7aa, 20)
    a0 = _step(a0, b0, _g(b0, c0, d0), x5, 0xd62f105d, 5)
    a1 = _step(a1, b1, _g(b1, c1, d1), y5, 0xd62f105d, 5)
    d0 = _step(d0, a0, _g(a0, b0, c0), x10, 0x02441453, 9)
    d1 = _step(d1, a1, _g(a1, b1, c1), y10, 0x02441453, 9)
    c0 = _step(c0, d0, _g(d0, a0, b0), x15, 0xd8a1e681, 14)
    c1 = _step(c1, d1, _g(d1, a1, b1), y15, 0xd8a1e681, 14)
    b0 = _step(b0, c0, _g(c0, d0, a0), x4, 0xe7d3fbc8, 20)
    b1 = _step(b1, c1, _g(c1, d1, a1), y4, 0xe7d3fbc8, 20)
    a0 = _step(a0, b0, _g(b0, c0, d0), x9, 0x21e1cde6, 5)
    a1 = _step(a1, b1, _g(b1, c1, d1), y9, 0x21e1cde6, 5)
    d0 = _step(d0, a0, _g(a0, b0, c0), x14, 0xc33707d6, 9)
    d1 = _step(d1, a1, _g(a1, b1, c1), y14, 0xc33707d6, 9)
    c0 = _step(c0, d0, _g(d0, a0, b0), x3, 0xf4d50d87, 14)
    c1 = _step(c1, d1, _g(d1, a1, b1), y3, 0xf4d50d87, 14)
    b0 = _step(b0, c0, _g(c0, d0, a0), x8, 0x455a14ed, 20)
    b1 = _step(b1, c1, _g(c1, d1, a1), y8, 0x455a14ed, 20)
    a0 = _step(a0, b0, _g(b0, c0, d0), x13, 0xa9e3e905, 5)
    a1 = _step(a1, b1, _g(b1, c1, d1), y13, 0xa9e3e905, 5)
    d0 = _step(d0, a0, _g(a0, b0, c0), x2, 0xfcefa3f8, 9)
    d1 = _step(d1, a1, _g(a1, b1, c1), y2, 0xfcefa3f8, 9)
    c0 = _step(c0, d0, _g(d0, a0, b0), x7, 0x676f02d9, 14)
    c1 = _step(c1, d1, _g(d1, a1, b1), y7, 0x676f02d9, 14)
    b0 = _step(b0, c0, _g(c0, d0, a0), x12, 0x8d2a4c8a, 20)
    b1 = _step(b1, c1, _g(c1, d1, a1), y12, 0x8d2a4c8a, 20)
    return a0, b0, c0, d0, a1, b1, c1, d1


def _rounds_34(a0, b0, c0, d0, a1, b1, c1, d1, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13,
               x14, x15, y0, y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12, y13, y14, y15):
    """Rounds 3 and 4 (H and I) of the two keys' blocks, their steps side by side."""
    a0 = _step(a0, b0, _h(b0, c0, d0), x5, 0xfffa3942, 4)
    a1 = _step(a1, b1, _h(b1, c1, d1), y5, 0xfffa3942, 4)
    d0 = _step(d0, a0, _h(a0, b0, c0), x8, 0x8771f681, 11)
    d1 = _step(d1, a1, _h(a1, b1, c1), y8, 0x8771f681, 11)
    c0 = _step(c0, d0, _h(d0, a0, b0), x11, 0x6d9d6122, 16)
    c1 = _step(c1, d1, _h(d1, a1, b1), y11, 0x6d9d6122, 16)
    b0 = _step(b0, c0, _h(c0, d0, a0), x14, 0xfde5380c, 23)
    b1 = _step(b1, c1, _h(c1, d1, a1), y14, 0xfde5380c, 23)
    a0 = _step(a0, b0, _h(b0, c0, d0), x1, 0xa4beea44, 4)
    a1 = _step(a1, b1, _h(b1, c1, d1), y1, 0xa4beea44, 4)
    d0 = _step(d0, a0, _h(a0, b0, c0), x4, 0x4bdecfa9, 11)
    d1 = _step(d1, a1, _h(a1, b1, c1), y4, 0x4bdecfa9, 11)
    c0 = _step(c0, d0, _h(d0, a0, b0), x7, 0xf6bb4b60, 16)
    c1 = _step(c1, d1, _h(d1, a1, b1), y7, 0xf6bb4b60, 16)
    b0 = _step(b0, c0, _h(c0, d0, a0), x10, 0xbebfbc70, 23)
    b1 = _step(b1, c1, _h(c1, d1, a1), y10, 0xbebfbc70, 23)
    a0 = _step(a0, b0, _h(b0, c0, d0), x13, 0x289b7ec6, 4)
    a1 = _step(a1, b1, _h(b1, c1, d1), y13, 0x289b7ec6, 4)
    d0 = _step(d0, a0, _h(a0, b0, c0), x0, 0xeaa127fa, 11)
    d1 = _step(d1, a1, _h(a1, b1, c1), y0, 0xeaa127fa, 11)
    c0 = _step(c0, d0, _h(d0, a0, b0), x3, 0xd4ef3085, 16)
    c1 = _step(c1, d1, _h(d1, a1, b1), y3, 0xd4ef3085, 16)
    b0 = _step(b0, c0, _h(c0, d0, a0), x6, 0x04881d05, 23)
    b1 = _step(b1, c1, _h(c1, d1, a1), y6, 0x04881d05, 23)
    a0 = _step(a0, b0, _h(b0, c0, d0), x9, 0xd9d4d039, 4)
    a1 = _step(a1, b1, _h(b1, c1, d1), y9, 0xd9d4d039, 4)
    d0 = _step(d0, a0, _h(a0, b0, c0), x12, 0xe6db99e5, 11)
    d1 = _step(d1, a1, _h(a1, b1, c1), y12, 0xe6db99e5, 11)
    c0 = _step(c0, d0, _h(d0, a0, b0), x15, 0x1fa27cf8, 16)
    c1 = _step(c1, d1, _h(d1, a1, b1), y15, 0x1fa27cf8, 16)
    b0 = _step(b0, c0, _h(c0, d0, a0), x2, 0xc4ac5665, 23)
    b1 = _step(b1, c1, _h(c1, d1, a1), y2, 0xc4ac5665, 23)
    a0 = _step(a0, b0, _i(b0, c0, d0), x0, 0xf4292244, 6)
    a1 = _step(a1, b1, _i(b1, c1, d1), y0, 0xf4292244, 6)
    d0 = _step(d0, a0, _i(a0, b0, c0), x7, 0x432aff97, 10)
    d1 = _step(d1, a1, _i(a1, b1, c1), y7, 0x432aff97, 10)
    c0 = _step(c0, d0, _i(d0, a0, b0), x14, 0xab9423a7, 15)
    c1 = _step(c1, d1, _i(d1, a1, b1), y14, 0xab9423a7, 15)
    b0 = _step(b0, c0, _i(c0, d0, a0), x5, 0xfc93a039, 21)
    b1 = _step(b1, c1, _i(c1, d1, a1), y5, 0xfc93a039, 21)
    a0 = _step(a0, b0, _i(b0, c0, d0), x12, 0x655b59c3, 6)
    a1 = _step(a1, b1, _i(b1, c1, d1), y12, 0x655b59c3, 6)
    d0 = _step(d0, a0, _i(a0, b0, c0), x3, 0x8f0ccc92, 10)
    d1 = _step(d1, a1, _i(a1, b1, c1), y3, 0x8f0ccc92, 10)
    c0 = _step(c0, d0, _i(d0, a0, b0), x10, 0xffeff47d, 15)
    c1 = _step(c1, d1, _i(d1, a1, b1), y10, 0xffeff47d, 15)
    b0 = _step(b0, c0, _i(c0, d0, a0), x1, 0x85845dd1, 21)
    b1 = _step(b1, c1, _i(c1, d1, a1), y1, 0x85845dd1, 21)
    a0 = _step(a0, b0, _i(b0, c0, d0), x8, 0x6fa87e4f, 6)
    a1 = _step(a1, b1, _i(b1, c1, d1), y8, 0x6fa87e4f, 6)
    d0 = _step(d0, a0, _i(a0, b0, c0), x15, 0xfe2ce6e0, 10)
    d1 = _step(d1, a1, _i(a1, b1, c1), y15, 0xfe2ce6e0, 10)
    c0 = _step(c0, d0, _i(d0, a0, b0), x6, 0xa3014314, 15)
    c1 = _step(c1, d1, _i(d1, a1, b1), y6, 0xa3014314, 15)
    b0 = _step(b0, c0, _i(c0, d0, a0), x13, 0x4e0811a1, 21)
    b1 = _step(b1, c1, _i(c1, d1, a1), y13, 0x4e0811a1, 21)
    a0 = _step(a0, b0, _i(b0, c0, d0), x4, 0xf7537e82, 6)
    a1 = _step(a1, b1, _i(b1, c1, d1), y4, 0xf7537e82, 6)
    d0 = _step(d0, a0, _i(a0, b0, c0), x11, 0xbd3af235, 10)
    d1 = _step(d1, a1, _i(a1, b1, c1), y11, 0xbd3af235, 10)
    c0 = _step(c0, d0, _i(d0, a0, b0), x2, 0x2ad7d2bb, 15)
    c1 = _step(c1, d1, _i(d1, a1, b1), y2, 0x2ad7d2bb, 15)
    b0 = _step(b0, c0, _i(c0, d0, a0), x9, 0xeb86d391, 21)
    b1 = _step(b1, c1, _i(c1, d1, a1), y9, 0xeb86d391, 21)
    return a0, b0, c0, d0, a1, b1, c1, d1


def scan(data, delimiter, i_key, i_op, limit, rows, bounds):
    """The rows of ``data`` (a block of whole lines, each ended by a line feed, the last too) a sample of
    threshold ``limit`` keeps: each kept row's index among the lines is appended to ``rows`` and its first
    offset and its line feed's to ``bounds``; returns the rows left out and, of those, the gets (their
    ``i_op``-th cell ``get`` or ``gets`` in any case; ``i_op`` -1: none counted).

    A row is kept when it has no key cell (fewer cells than ``i_key + 1``, an empty key, or, for the key
    in the first cell, no delimiter on the line: the reader rejects or skips such a line as it would
    unsampled) or when its key's :func:`md5_head` is under ``limit``.  Keys are hashed two at a time
    (:func:`_md5_heads`): a row with a key waits for the next one's, and is told first."""
    size = len(data)
    if size and data[size - 1] != 10:
        raise ValueError("a block must end with a line feed")
    last = i_key if i_key > i_op else i_op
    s = line = left_out = gets = 0
    waiting = -1                # the line of a row whose key waits for another's, if any
    w_s = w_e = w_kb = w_ke = w_ob = w_oe = 0
    while s < size or waiting >= 0:
        e = kb = ke = ob = oe = -1
        if s < size:
            e, kb, ke, ob, oe = _cells(data, s, delimiter, i_key, i_op, last)
        if waiting >= 0:        # the waiting key, with this row's, or alone (told before the row after it)
            heads = _md5_heads(data, w_kb, w_ke - w_kb, kb if kb >= 0 else w_kb, ke - kb if kb >= 0 else w_ke - w_kb)
            told = _told(data, rows, bounds, waiting, w_s, w_e, heads[0] < limit, w_ob, w_oe)
            left_out, gets, waiting = left_out + (told > 0), gets + (told > 1), -1
            if kb >= 0:
                told = _told(data, rows, bounds, line, s, e, heads[1] < limit, ob, oe)
                left_out, gets = left_out + (told > 0), gets + (told > 1)
        elif kb >= 0:
            waiting, w_s, w_e, w_kb, w_ke, w_ob, w_oe = line, s, e, kb, ke, ob, oe
        if kb < 0 and s < size:         # a row without a key: kept, for the reader
            _told(data, rows, bounds, line, s, e, True, ob, oe)
        if s >= size:
            break
        s = e + 1
        line += 1
    return left_out, gets


def _cells(data, s, delimiter, i_key, i_op, last):
    """The line at ``s``: its line feed's offset, its key cell's first offset and the one past its end
    (-1, -1 where it has no key: fewer cells, an empty one, or the first cell alone on the line), and its op
    cell's (-1, -1 where it has none)."""
    kb = ke = ob = oe = -1
    key_cut = False
    cell = 0
    cb = e = s
    while True:             # the cells up to the last one wanted, then on to the line feed
        c = data[e]
        if c == 10 or c == delimiter:
            if cell == i_key:
                kb, ke, key_cut = cb, e, c == delimiter
            if cell == i_op:
                ob, oe = cb, e
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
    if not (ke > kb >= 0 and (i_key > 0 or key_cut)):
        kb = ke = -1
    return e, kb, ke, ob, oe


def _told(data, rows, bounds, line, s, e, keep, ob, oe):
    """A row told: kept (appended to ``rows`` and ``bounds``; 0) or left out (1; 2 if a get or gets)."""
    if keep:
        rows.append(line)
        bounds.append(s)
        bounds.append(e)
        return 0
    n = oe - ob
    if ob >= 0 and (n == 3 or n == 4) and (data[ob] | 0x20) == 103 and (data[ob + 1] | 0x20) == 101 \
            and (data[ob + 2] | 0x20) == 116 and (n == 3 or (data[ob + 3] | 0x20) == 115):
        return 2            # get or gets, in any case
    return 1


def compiled() -> bool:
    """Whether this module runs compiled (Cython's extension) rather than as this source."""
    return not __file__.endswith(".py")


__all__ = ["compiled", "md5_head", "scan"]
