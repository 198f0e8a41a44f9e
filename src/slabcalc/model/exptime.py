"""How memcached reads the exptime a client sends with a set or a touch, for a replay that gives it as a
workload's ``ttl``.

memcached 1.6.18 ``memcached.c`` 177-195 (``realtime()``): 0 never expires; up to
``REALTIME_MAXDELTA`` (``memcached.h`` 1009: 60*60*24*30, thirty days) it is seconds from now; above
that it is a unix time: at or before the server's start (``process_started``, ``memcached.c`` 206: its
start less ``ITEM_UPDATE_INTERVAL`` + 2 s) the item expires 1 s after the start -- at once -- and later
it expires at that unix time.  A negative exptime is read as ``REALTIME_MAXDELTA + 1``
(``EXPTIME_TO_POSITIVE_TIME``, ``memcached.h`` 1010-1014, applied at ``proto_text.c`` 554, 1944 and
2041), a unix time in January 1970: the item expires at once.  1.4.24 to 1.6.0 read a set's negative
exptime the same way (``process_update_command``: ``memcached.c`` 3083-3087 at 1.4.24).

The replay's TTL is a duration from the operation's second (model/ops.py, engines/engine.py:
``exptime = current_time + ttl``), so an absolute exptime becomes the seconds left until it at the
operation's unix time; one at or before that second becomes :data:`EXPIRED`, an item stored
already expired.  An exptime at exactly the operation's second (0 s left) is read as expired a second
early: memcached's ``current_time`` itself lags the wall clock by up to a second (it is updated by a
timer), so a replay cannot tell that second apart.
"""

from __future__ import annotations

from typing import Final

REALTIME_MAXDELTA: Final = 60 * 60 * 24 * 30     # memcached.h 1009 (1.6.18)
EXPIRED: Final = -1      # a replay's TTL for an item stored already expired: exptime a second before now
UNIX_TIME_MIN: Final = 10 ** 9     # 2001-09-09: a workload time this large is itself a unix time


class UnknownClock(ValueError):
    """An exptime that is a unix time to memcached, in a replay whose unix time is not known."""


def replay_ttl(exptime: int, unix_now: int | None) -> int:
    """The replay's TTL for the ``exptime`` a client sends at unix time ``unix_now`` (whole seconds;
    None: not known): the exptime itself up to 30 days, the seconds left until an absolute one, or
    :data:`EXPIRED`.  :class:`UnknownClock` for an absolute exptime when ``unix_now`` is None (but a
    negative one: a time in January 1970 is before any server's start)."""
    if 0 <= exptime <= REALTIME_MAXDELTA:
        return exptime
    if exptime < 0:
        if unix_now is None:
            return EXPIRED
        exptime = REALTIME_MAXDELTA + 1
    if unix_now is None:
        raise UnknownClock(exptime)
    left = exptime - unix_now
    return left if left > 0 else EXPIRED


def unix_time_of(t: float, time_zero: int | None) -> int | None:
    """The unix time (whole seconds) of workload time ``t``: ``time_zero + floor(t)`` when the unix time of
    time 0 is given; else ``floor(t)`` when ``t`` is itself a unix time (at least :data:`UNIX_TIME_MIN`);
    else None."""
    if time_zero is not None:
        return time_zero + int(t)
    if t >= UNIX_TIME_MIN:
        return int(t)
    return None
