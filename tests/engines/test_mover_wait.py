"""1.6.34+'s page mover waits for a spare chunk, pass by pass on its own clock (engines/mover.py ``PageMove``).

Figures worked out from the source, not from the model: after a pass over the page that leaves a live item
without a spare chunk, the mover thread sleeps ``backoff_timer`` microseconds, 1 doubling to
``backoff_max`` (1.6.45 slabs_mover.c 627, 666-680: 5 000; 1.6.34-1.6.39: 1 000); past
``SLAB_MOVE_MAX_LOOPS`` (5 000) busy passes a 1.6.41+ move with no evictions allowed takes a new page
when -m is not reached (slabs_mover.c 191-213), and before 1.6.41 it waits for ever.  The 5 001st busy
pass's prep is the first past the limit: it runs 1 + 2 + ... + 4 096 + 4 988 x 5 000 us = 24.948191 s
after the move began.

The scene: -m 4 of 1.6.45's defaults, class 4 (192-byte chunks, 5 461 a page) with two full pages of items
never read, nothing free, the pool empty and -m not reached; a worker asks for class 4's first page to go
to the global pool (``slabs_reassign``, evictions not allowed).
"""

from __future__ import annotations

import math

from helpers import PER_PAGE_4, op, s, settings

from slabcalc.engines.background import background_for
from slabcalc.engines.engine import Engine
from slabcalc.engines.lru import GONE
from slabcalc.engines.simulate import DELETE, GET
from slabcalc.engines.slabs import PAGE_SHIFT

LIMIT_AT = (sum(1 << j for j in range(13)) + (5001 - 13) * 5000) / 1e6     # 24.948191 s: the prep past 5 000


def _scene(release: str) -> tuple[Engine, float]:
    """Two full pages of class 4, then the move asked for at 10 s: the engine and the move's start."""
    config = settings("-m", "4", release=release)
    e = Engine(config, background_for(config))
    e.run([s(0, f"f{i:05d}") for i in range(2 * PER_PAGE_4)])
    e.run([op(10, GET, "nothing")])
    assert (len(e.slabs.pages[4]), len(e.slabs.free[4]), len(e.slabs.pool)) == (2, 0, 0)
    e.store.pending_move = (4, 0, False)        # slabs_reassign(4, 0) from a worker
    e.move_pending(math.floor((10 + e.phase) * 1_000_000))
    return e, 10.0


def _at(e: Engine, t: float) -> None:
    e.run([op(t, GET, "nothing")])


def _moved(e: Engine) -> tuple[int, int, int, int]:
    t = e.tally
    return t.slabs_moved, t.rescues, sum(e.lrus.column("evicted")), t.evictions_nomem


def test_a_move_with_no_spare_waits_instead_of_evicting_or_taking_a_page():
    e, start = _scene("1.6.45")
    _at(e, start + 20)
    assert e.store.moving and _moved(e) == (0, 0, 0, 0)
    assert len(e.slabs.pages[4]) == 2 and e.slabs.malloced == 2 << 20          # no new page taken yet


def test_past_5000_busy_passes_1_6_45_takes_a_new_page_and_rescues_every_item():
    e, start = _scene("1.6.45")
    _at(e, start + LIMIT_AT - 0.005)
    assert e.store.moving and _moved(e) == (0, 0, 0, 0)
    _at(e, start + LIMIT_AT + 0.005)
    assert not e.store.moving
    assert _moved(e) == (1, PER_PAGE_4, 0, 0)        # every live item copied into the new page, none lost
    assert len(e.slabs.pages[4]) == 2 and e.curr_items() == 2 * PER_PAGE_4


def test_1_6_38_waits_for_ever():
    # 1.6.38 slabs_mover.c 160-182: no busy_loops test in its prep; backoff_max 1 000 us
    e, start = _scene("1.6.38")
    _at(e, start + 60)
    assert e.store.moving and _moved(e) == (0, 0, 0, 0) and e.slabs.malloced == 2 << 20


def test_chunks_freed_outside_the_page_take_its_items_as_they_come():
    # deletes of 10 items of the second page free 10 chunks outside the moving page: the next pass
    # rescues 10 of its items into them, and the move goes on waiting for the rest
    e, start = _scene("1.6.45")
    second = e.slabs.pages[4][1]
    outside = sorted(k for k, item in e.index.items() if item.addr >> PAGE_SHIFT == second)[:10]
    e.run([op(start + 1, DELETE, key) for key in outside])
    _at(e, start + 2)
    assert e.store.moving and _moved(e) == (0, 10, 0, 0)
    assert e.curr_items() == 2 * PER_PAGE_4 - 10


def test_items_new_in_the_page_while_it_waits_are_seen_and_rescued():
    # items set into the moving page's chunks while it waits (a chunk freed there, taken by the next
    # set before the mover's next pass cuts it) are the mover's to look at on its next pass: with a
    # chunk to spare it rescues them too
    e, start = _scene("1.6.45")
    first = e.slabs.pages[4][0]
    inside = sorted(k for k, item in e.index.items() if item.addr >> PAGE_SHIFT == first)[:5]
    e.run([o for i, key in enumerate(inside) for o in (op(start + 1, DELETE, key), s(start + 1, f"n{i:05d}"))])
    new = [e.table.find(f"n{i:05d}") for i in range(5)]
    assert all(item.addr >> PAGE_SHIFT == first for item in new)
    second = e.slabs.pages[4][1]
    outside = sorted(k for k, item in e.index.items() if item.addr >> PAGE_SHIFT == second)
    e.run([op(start + 2, DELETE, key) for key in outside[:PER_PAGE_4]])    # the whole second page freed
    _at(e, start + 3)
    assert not e.store.moving
    assert all(item.seg != GONE and item.addr >> PAGE_SHIFT != first for item in new)
    assert _moved(e) == (1, PER_PAGE_4, 0, 0)


def test_past_5000_busy_passes_with_m_reached_1_6_45_evicts_for_its_spares():
    # -m 4 all given to class 4 (four full pages); a page's worth of the fourth page's items deleted, the
    # first page moved to the pool (its items rescued into those chunks, at once): now -m is reached and
    # the pool holds a page, so the next move may not evict (slabs_mover.c 100-110) and no chunk is free:
    # it waits its 5 000 passes, then evicts the COLD tail -- the moving page's own items, the oldest --
    # one chunk at a time (each freed inline), and one more from the next page for the spare it returns
    config = settings("-m", "4", release="1.6.45")
    e = Engine(config, background_for(config))
    e.run([s(0, f"f{i:05d}") for i in range(4 * PER_PAGE_4)])
    fourth = e.slabs.pages[4][3]
    gone = sorted(k for k, item in e.index.items() if item.addr >> PAGE_SHIFT == fourth)
    e.run([op(5, DELETE, key) for key in gone])
    e.store.pending_move = (4, 0, False)
    e.move_pending(math.floor((6 + e.phase) * 1_000_000))
    assert (not e.store.moving, len(e.slabs.pool), e.slabs.full) == (True, 1, True)
    assert _moved(e) == (1, PER_PAGE_4, 0, 0)
    e.store.pending_move = (4, 0, False)
    e.move_pending(math.floor((10 + e.phase) * 1_000_000))
    _at(e, 10 + LIMIT_AT - 0.005)
    assert e.store.moving and _moved(e) == (1, PER_PAGE_4, 0, 0)
    _at(e, 10 + LIMIT_AT + 0.005)
    assert not e.store.moving and _moved(e) == (2, PER_PAGE_4, PER_PAGE_4 + 1, 0)
