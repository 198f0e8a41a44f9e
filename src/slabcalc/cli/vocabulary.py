"""The command line's one vocabulary (issue 40): the one type of every option that takes a share, and old
spellings still taken, each with one line on stderr.  docs/common-options.md lists the old spellings.

The options themselves are defined in :mod:`slabcalc.cli.options`; this module holds what they share."""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Callable

import click

SHARE_HELP = "a fraction (0.2) or a percent with its sign (20%)"


def say_old(old: str, new: str) -> None:
    """The one line on stderr for an old spelling still taken: ``old`` is read as ``new`` says."""
    click.echo(f"note: {old} is an old spelling: {new}", err=True)


def old_spelling(old: str, new: str, dest: str, **kwargs) -> Callable:
    """``old``, the option now spelt ``new`` (parameter ``dest``): still taken, hidden from --help, with
    one line on stderr; both given is a usage error (exit 2).  ``kwargs``: the old option's type etc."""
    hidden = f"{dest}_old_spelling"

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **params):
            value = params.pop(hidden)
            if value is not None:
                ctx = click.get_current_context()
                source = ctx.get_parameter_source(dest)
                if source is not None and source.name == "COMMANDLINE":
                    raise click.UsageError(f"{old} is the old spelling of {new}: give {new} alone")
                say_old(old, f"give {new}")
                params[dest] = value
            return func(*args, **params)
        return click.option(old, hidden, hidden=True, default=None, **kwargs)(wrapper)
    return decorate


class ShareType(click.ParamType):
    """A share, the one convention of every option that takes one: a fraction (``0.2``) or a percent
    with its sign (``20%``).  Exact (a Fraction) unless ``exact`` is False (a float).

    ``was_percent``: the option took a bare percent before issue 40 (``--headroom 10``).  A bare number
    whose percent reading alone is in range is still read so, with one line on stderr; one in range read
    either way (``--headroom 0.5``: 50% now, 0.5% before) is refused (exit 2), never read wrongly in
    silence."""

    name = "share"

    def __init__(self, *, low_open: bool = False, high_open: bool = False, was_percent: bool = False,
                 exact: bool = True):
        self.low_open, self.high_open, self.was_percent, self.exact = low_open, high_open, was_percent, exact

    def _within(self, share: Fraction) -> bool:
        return (share > 0 if self.low_open else share >= 0) and (share < 1 if self.high_open else share <= 1)

    def _bounds(self) -> str:
        return f"{'above 0' if self.low_open else 'from 0'} and {'below' if self.high_open else 'up to'} 1 (100%)"

    def convert(self, value, param, ctx):
        if isinstance(value, (Fraction, float)):
            return value
        text = str(value).strip()
        percent = text.endswith("%")
        try:
            number = Fraction(text.removesuffix("%").strip())
        except (ValueError, ZeroDivisionError):
            self.fail(f"{text!r} is not a share: {SHARE_HELP}", param, ctx)
        share = number / 100 if percent else number
        if self.was_percent and not percent and number != 0 and self._within(number / 100):
            name = param.opts[0] if param is not None else "a share"
            if self._within(number):
                self.fail(f"{text} is ambiguous: {name} took a bare percent before, and a bare number is a "
                          f"fraction now: write {text}% or {_pct(number)}", param, ctx)
            say_old(f"{name} {text}", f"read as {text}% (a bare percent); write {text}% or {_plain(number / 100)}")
            share = number / 100
        if not self._within(share):
            self.fail(f"{text} is not a share {self._bounds()}: {SHARE_HELP}", param, ctx)
        return share if self.exact else float(share)


def _pct(share: Fraction) -> str:
    return f"{_plain(share * 100)}%"


def _plain(number: Fraction) -> str:
    """``number`` in decimals when it has a short one (0.05), else as a fraction (1/3)."""
    text = f"{float(number):.12g}"
    return text if Fraction(text) == number else str(number)


def share(**kwargs) -> click.ParamType:
    """A share option's type: see :class:`ShareType`."""
    return ShareType(**kwargs)
