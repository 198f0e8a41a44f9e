"""No acyclic object of the engine is ever freed in a deep nest of deallocations.

The compiled engine's items (lru.py ``Item``, ``Keyed``, ``Chunked``, ``Lru``; ideal_ring.py
``Entry``) are acyclic to mypyc: they have no collector's header.  mypyc 2.4 still wraps their
deallocation in CPython's trashcan (mypyc/codegen/emitclass.py ``generate_dealloc_for_class``), and
past 50 nested deallocations CPython 3.11's trashcan (Objects/object.c
``_PyTrash_thread_deposit_object``) links the object through that missing header: it writes 16 bytes
before the object, into whatever the allocator put there.  CI's worker crashed so, once in several
runs (test_extstore_compact r01049: an item held by extstore after its LRU let it go still held its
old neighbours, they theirs, a chain hundreds long freed at once).  The rule: every link out of an
item is cut when the item leaves the ring or the hash table that gave it (``Lru.remove``,
``Table.remove``), and every ring and chain is cut before its owner goes (``Lrus.__del__``,
``Table.__del__``, ``IdealRing.__del__``).  CPython's debug allocator (``PYTHONMALLOC=debug``) turns
the corruption into an abort at the first bad free, so the checks below fail at once in the compiled
build when a link is left; in plain Python (no trashcan trouble) they check the links.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from slabcalc.engines import lru as lru_module
from slabcalc.engines.lru import HOT, Item, Lrus
from slabcalc.engines.table import Table


def _items(n: int, cls: int = 1) -> list[Item]:
    return [Item(i, cls, HOT, 0, 0, 48, i) for i in range(n)]


def test_an_item_let_go_by_its_lru_holds_none_of_its_old_neighbours():
    lrus = Lrus(2)
    items = _items(4)
    for item in items:
        lrus.link(item)
    lrus.unlink(items[0])                   # the tail, as an eviction takes it
    lrus.unlink(items[2])                   # one from the middle
    ring = set(map(id, lrus.q[HOT][1].values())) | {id(lrus.q[HOT][1])}
    for gone in (items[0], items[2]):
        assert id(gone.prev) not in ring and id(gone.next) not in ring
        assert gone.prev is lru_module._LOOSE and gone.next is lru_module._LOOSE
    assert [item.hv for item in lrus.q[HOT][1].values()] == [1, 3]     # the ring itself still whole


def test_a_table_that_goes_cuts_its_chains_first():
    # keys k << 10 for k < 2**11 share bucket 0 of the first 1 024 (table.py _bucket: the folded
    # bits are all zero): one chain of 1 000 items
    table = Table(lru_module.Lru(), 1 << 20)
    items = [Item(k << 10, 1, HOT, 0, 0, 48, k) for k in range(1000)]
    for item in items:
        table.insert(item)
    head = items[-1]
    assert head.hnext is items[-2]
    del table
    assert all(item.hnext is None for item in items)


CHAINS = textwrap.dedent("""
    from slabcalc.engines.lru import HOT, Item, Lru, Lrus
    from slabcalc.engines.table import Table

    # 1. items let go from the tail one by one while the first is held elsewhere, then that one let go
    lrus = Lrus(2)
    items = [Item(i, 1, HOT, 0, 0, 48, i) for i in range(2000)]
    for item in items:
        lrus.link(item)
    held = items[0]
    del items, item
    ring = lrus.q[HOT][1]
    while ring.n:
        lrus.unlink(ring.next)
    del held
    # 2. a table of one chain 1 000 long freed whole
    table = Table(Lru(), 1 << 20)
    for k in range(1000):
        table.insert(Item(k << 10, 1, HOT, 0, 0, 48, k))
    del table
    from slabcalc.engines.simulate import engine_build
    print(engine_build())
""")


def test_long_chains_let_go_under_the_debug_allocator():
    env = {**os.environ, "PYTHONMALLOC": "debug"}
    done = subprocess.run([sys.executable, "-c", CHAINS], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    from slabcalc.engines.simulate import engine_build

    assert done.stdout.strip() == engine_build()       # the build under test, not another
