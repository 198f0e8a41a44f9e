"""The per-operation work of a sampled replay (:class:`~slabcalc.engines.sample.Sampled`), compiled with
the engine (setup.py): which operations pass, and each sampled key's counts for the errors.

Every sampled operation passes here twice (:func:`passed`, then :func:`counted`) and every sampled get
once more (:func:`counting_gets`, the engine's ``on_get``): in plain Python these three cost a 5 %
sample of issue 39's 10 M-row CSV about a second of its five (docs/speed.md).  The rules stay in
engines/sample.py, which calls these with its own state; ``counts`` carries the totals back.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from slabcalc.model.ops import FILL, GET, SET
from slabcalc.model.sampling import HASH_SPACE, key_hash

OPS, KEPT, GETS = 0, 1, 2       # the places of :func:`passed`'s totals in its ``counts``


def counting_gets(reads: dict[Any, list[int]]) -> Callable[[Any, bool], None]:
    """The engine's ``on_get``: each key's gets and hits (``reads[key][0]`` and ``[1]``) as it answers."""

    def count(key: Any, found: bool) -> None:
        seen = reads.get(key)
        if seen is None:
            seen = [0, 0, 0, 0, 0, 0]
            reads[key] = seen
        seen[0] += 1
        if found:
            seen[1] += 1
    return count


def counted(reads: dict[Any, list[int]], operations: Iterable[tuple]) -> Iterator[tuple]:
    """``operations``, each key's operations, sets and fills counted as they pass (``reads[key][2:5]``),
    and the key and value bytes of its last set or fill (``[5]``)."""
    for op in operations:
        key = op[2]
        seen = reads.get(key)
        if seen is None:
            seen = [0, 0, 0, 0, 0, 0]
            reads[key] = seen
        seen[2] += 1
        kind: int = op[1]
        if kind == SET:
            seen[3] += 1
            seen[5] = op[3] + op[4]
        elif kind == FILL:
            seen[4] += 1
            seen[5] = op[3] + op[4]
        yield op


def passed(operations: Iterable[tuple], limit: int, room: Any, counts: list[int],
           done: Callable[[bool], None]) -> Iterator[tuple]:
    """The operations of the keys whose sampling hash is under ``limit`` (every one above the hash
    space), each operation and get counted in ``counts`` (``OPS``, ``KEPT``, ``GETS``) as it is read;
    ``done(finished)`` once reading stops, ``finished`` if every operation was read.

    With ``room`` (:class:`~slabcalc.engines.sample.Room`), every operation's item is placed as it is
    read; once the classes leave no room at the rate the rest is read and placed without replaying it
    and ``room.check()`` raises."""
    every = limit > HASH_SPACE
    ntotal: Any = room._ntotal if room is not None else None
    class_at: dict[int, int] = room._class_at if room is not None else {}
    used: set[int] = room.classes if room is not None else set()
    finished = False
    try:
        for op in operations:
            counts[OPS] += 1
            kind: int = op[1]
            if (room is not None and (kind == SET or kind == FILL)
                    and class_at.get(ntotal(op[3], op[4], op[6])) not in used and room.add(op[3], op[4], op[6])):
                for rest in operations:         # no room at this rate: the rest placed, then refused
                    counts[OPS] += 1
                    if rest[1] == SET or rest[1] == FILL:
                        room.add(rest[3], rest[4], rest[6])
                room.check()
            if kind == GET or kind == FILL:
                counts[GETS] += 1
            if every or key_hash(op[2]) < limit:
                counts[KEPT] += 1
                yield op
        finished = True
    finally:
        done(finished)


__all__ = ["GETS", "KEPT", "OPS", "counted", "counting_gets", "passed"]
