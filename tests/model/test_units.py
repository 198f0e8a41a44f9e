"""Sizes with units, and C's number parsers as memcached calls them."""

import pytest

from slabcalc.model.units import c_atof, c_atoi, c_strtol, c_strtoul, format_size, parse_size, wrap_int32


@pytest.mark.parametrize("text,expected", [
    ("1048576", 1048576), ("512k", 524288), ("512K", 524288), ("1m", 1048576), ("64M", 64 << 20),
    ("1g", 1 << 30), ("64MB", 64 << 20), ("16KiB", 16384), (" 2m ", 2 << 20), ("0", 0), (7, 7),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1.5m", "-1", "1t", "m"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_format_size():
    assert [format_size(n) for n in (1 << 30, 1 << 20, 16384, 1000, 0)] == ["1g", "1m", "16k", "1000", "0"]


def test_c_parsers_behave_like_libc():
    # atoi/atof read a leading number and ignore the rest; nothing is 0
    assert (c_atoi("48"), c_atoi(" 48abc"), c_atoi("abc"), c_atoi("-1"), c_atoi("2g")) == (48, 48, 0, -1, 2)
    assert (c_atof("1.25"), c_atof("1.25x"), c_atof("abc"), c_atof(".5"), c_atof("1e1")) == (1.25, 1.25, 0.0, 0.5, 10.0)
    # glibc's atoi is (int) strtol: a value past long saturates, then keeps its low 32 bits
    assert c_atoi("4294967297") == 1
    assert wrap_int32(2 ** 31) == -(2 ** 31)
    # safe_strtol / safe_strtoul take the whole string only
    assert (c_strtol("16"), c_strtol("16 "), c_strtol("16k"), c_strtol("")) == (16, 16, None, None)
    assert (c_strtoul("96"), c_strtoul("abc"), c_strtoul("-5"), c_strtoul("4294967296")) == (96, None, None, None)
