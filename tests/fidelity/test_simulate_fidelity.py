"""``slabcalc simulate`` against a real memcached: the same workload, the same counts.

Each workload is replayed into a memcached started with ``-o no_modern`` and
a small ``-m`` (and the background threads that could change the counts
switched off), paced by the workload's clock: the operations of workload
second ``s`` are sent while the server's own one-second clock (``uptime``)
reads ``start + s``.  Then ``stats``, ``stats slabs`` and ``stats items`` are
compared with the simulation, class by class: pages, used and free chunks,
items, evicted (and its nonzero/unfetched parts), reclaimed,
expired_unfetched, outofmemory, hits and misses.
"""

from __future__ import annotations

import time

from helpers import o_words
from helpers import op as _op
from helpers import s as _set
from memcached_server import MemcachedServer

from slabcalc import configure
from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, lru_mode, simulate

# The compat model: 1.4.x's allocation path, no page moves, no background LRU threads.
COMPAT = "no_modern,no_lru_crawler,no_lru_maintainer,no_slab_reassign,slab_automove=0"


def replay(server: MemcachedServer, ops) -> None:
    """Send ``ops`` to ``server``, second by second on the server's clock."""
    for _, batch in by_the_servers_second(server, ops):
        payload = bytearray()
        for _, op, key, _, value_size, ttl, flags in batch:
            if op == SET:
                payload += b"set %s %d %d %d\r\n%s\r\n" % (key.encode(), flags, ttl, value_size, b"v" * value_size)
            elif op == GET:
                payload += b"get %s\r\n" % key.encode()
            elif op == DELETE:
                payload += b"delete %s\r\n" % key.encode()
            elif op == TOUCH:
                payload += b"touch %s %d\r\n" % (key.encode(), ttl)
        server._send(bytes(payload))
        for _, op, *_ in batch:
            line = server._readline()
            while op == GET and line != "END":
                if line.startswith("VALUE "):
                    server._readline()     # the value
                line = server._readline()


def by_the_servers_second(server: MemcachedServer, ops):
    """``(second, its ops)`` for each second of ``ops``, given when the server's clock reaches it (from
    its next tick); raises TooSlow when the caller's work on a second ran past the server's next tick."""
    by_second: dict[int, list] = {}
    for op in ops:
        by_second.setdefault(int(op[0]), []).append(op)
    start = _tick(server)
    for second in sorted(by_second):
        _wait_until(server, start + second)
        yield second, by_second[second]
        now = _uptime(server)
        if now != start + second:
            raise TooSlow(f"the replay of second {second} took past the server's next tick "
                          f"(uptime {now}, wanted {start + second})")


class TooSlow(RuntimeError):
    """A second's operations did not fit in the server's second (a loaded machine): try again."""


def _uptime(server: MemcachedServer) -> int:
    return int(server.stats()["uptime"])


def _tick(server: MemcachedServer) -> int:
    """Wait for the server's clock to tick (a whole second ahead to replay in); its new value."""
    first = _uptime(server)
    while (now := _uptime(server)) == first:
        time.sleep(0.005)
    return now


def _wait_until(server: MemcachedServer, target: int) -> None:
    while (now := _uptime(server)) < target:
        time.sleep(0.005)
    if now != target:
        raise TooSlow(f"server clock at {now}, past the second {target} to replay")


TOTALS = ("curr_items", "total_items", "evictions", "reclaimed", "expired_unfetched", "evicted_unfetched",
          "get_hits", "get_misses", "get_expired", "delete_hits", "delete_misses", "touch_hits", "touch_misses",
          "store_too_large", "store_no_memory")


def server_counts(server: MemcachedServer) -> tuple[dict, dict]:
    """Per class and overall counts, as memcached reports them."""
    slabs = server.slab_stats()
    items = server.item_stats()
    stats = server.stats()
    classes = {}
    for cls, row in slabs.per_class.items():
        it = items.get(cls, {})
        classes[cls] = {
            "pages": row["total_pages"], "used_chunks": row["used_chunks"], "free_chunks": row["free_chunks"],
            "items": it.get("number", 0), "hits": row["get_hits"],
            **{name: it[name] for name in ("evicted", "evicted_nonzero", "evicted_unfetched", "reclaimed",
                                           "expired_unfetched", "outofmemory") if name in it},
        }
    totals = {name: int(stats[name]) for name in TOTALS}
    totals["total_malloced"] = slabs.totals["total_malloced"]
    totals["active_slabs"] = slabs.totals["active_slabs"]
    return classes, totals


def simulated_counts(sim) -> tuple[dict, dict]:
    classes = {}
    for r in sim.classes:
        row = {"pages": r.pages, "used_chunks": r.used_chunks, "free_chunks": r.free_chunks, "items": r.items,
               "hits": r.hits}
        if r.items:     # stats items shows only classes that hold items
            row.update(evicted=r.evicted, evicted_nonzero=r.evicted_nonzero, evicted_unfetched=r.evicted_unfetched,
                       reclaimed=r.reclaimed, expired_unfetched=r.expired_unfetched, outofmemory=r.outofmemory)
        classes[r.slab_class.id] = row
    t = sim.totals
    totals = {"curr_items": t.curr_items, "total_items": t.stored, "evictions": t.evicted,
              "reclaimed": t.reclaimed, "expired_unfetched": sum(r.expired_unfetched for r in sim.classes),
              "evicted_unfetched": sum(r.evicted_unfetched for r in sim.classes), "get_hits": t.hits,
              "get_misses": t.misses, "get_expired": t.get_expired, "delete_hits": t.delete_hits,
              "delete_misses": t.deletes - t.delete_hits, "touch_hits": t.touch_hits,
              "touch_misses": t.touches - t.touch_hits, "store_too_large": t.too_large,
              "store_no_memory": t.outofmemory, "total_malloced": t.total_malloced,
              "active_slabs": len(sim.classes)}
    return classes, totals


def check(memcached, profile, args, ops):
    settings = configure(profile, args)
    lru = lru_mode(settings, o_words(args))
    assert lru == "compat"
    sim = simulate(settings, ops, lru=lru)
    assert sim.model.exact
    return compare_with_server(memcached, args, ops, sim)


def replayed_counts(memcached, args, ops, send=replay):
    """``server_counts`` of a memcached started with ``args`` once ``send`` has replayed ``ops`` into it
    on its clock; a fresh server, up to three times, when a loaded machine could not keep the pace."""
    for attempt in range(3):
        with MemcachedServer(args, memcached=memcached) as server:
            try:
                send(server, ops)
            except TooSlow:
                if attempt == 2:
                    raise
                continue
            return server_counts(server)


def compare_with_server(memcached, args, ops, sim):
    """Replay ``ops`` into a real memcached started with ``args``; its counts must equal ``sim``'s."""
    real_classes, real_totals = replayed_counts(memcached, args, ops)
    sim_classes, sim_totals = simulated_counts(sim)
    assert sim_totals == real_totals
    assert sim_classes == real_classes
    return sim


def fill_then_other_size():
    """Fill -m 2 with one size, overwrite, delete, then set another size (its first page is free of -m)."""
    ops = [_set(0, f"a{i:05d}", 100) for i in range(15000)]              # class 4: 2 pages, then evicts
    ops += [_op(0, GET, f"a{i:05d}") for i in range(0, 15000, 7)]          # hits, misses (evicted)
    ops += [_set(0, f"a{i:05d}", 100) for i in range(14000, 14100)]       # overwrite: new first, old after
    ops += [_op(0, DELETE, f"a{i:05d}") for i in range(14500, 14600)]     # free chunks
    ops += [_set(0, f"b{i:05d}", 2000) for i in range(600)]               # class 15: first page granted
    ops += [_set(0, f"a{i:05d}", 100) for i in range(20000, 20300)]       # reuse deleted, then evict
    ops += [_set(0, "huge", 2 << 20)]                                     # too large
    return ops


def ttls_expiring_mid_run():
    """TTLs of 1-2 s in a full class: tail reclaim (strictly after exptime), get of expired, evictions."""
    ops = [_set(0, f"a{i:05d}", 100, ttl=2) for i in range(3000)]
    ops += [_set(0, f"b{i:05d}", 100) for i in range(7922)]               # class 4 is full: 10922 chunks
    ops += [_op(1, GET, f"a{i:05d}") for i in range(100)]                 # fetched
    ops += [_set(1, f"c{i:05d}", 100) for i in range(50)]                 # evicts a00000..a00049 (nonzero)
    ops += [_set(2, f"d{i:05d}", 100, ttl=1) for i in range(50)]          # exptime 2 is not < 2: evicted
    ops += [_op(2, GET, "a02000"), _op(2, GET, "a02001")]                 # exptime 2 <= 2: freed on get
    ops += [_set(2, "e0", 100)]                                           # takes a freed chunk
    ops += [_set(3, f"f{i:05d}", 100) for i in range(30)]                 # each reclaims 5 tail items
    ops += [_op(3, GET, "a02500"), _op(3, DELETE, "a02600"), _op(3, TOUCH, "b00001", ttl=1)]
    ops += [_set(3, f"g{i:05d}", 300, ttl=1) for i in range(20)]          # another class, first page
    ops += [_set(4, f"h{i:05d}", 100) for i in range(200)]
    ops += [_op(4, GET, "b00001"), _op(4, GET, "d00049"), _op(4, GET, "g00000")]
    return ops


def chunked_items():
    """-I 2m -o no_modern: 512 KiB chunks, 1 MiB pages; headers, bodies, tails and the tail fallback."""
    ops = [_set(0, f"k{i}", 900000) for i in range(7)]     # 7th tail: no page left, falls back to a full chunk
    ops += [_set(0, "k0", 350000)]                         # class 38 holds only tails: out of memory, k0 gone
    ops += [_set(0, f"k{i}", 900000) for i in range(7, 10)]  # evicts k0, k1 ... from the largest class's LRU
    ops += [_op(0, GET, "k0"), _op(0, GET, "k9")]
    ops += [_set(0, f"m{i}", 450000) for i in range(3)]    # one chunk of the largest class, same LRU
    ops += [_set(0, f"s{i:04d}", 30) for i in range(2000)]  # small items in the header's class
    ops += [_set(0, f"n{i}", 1500000) for i in range(2)]   # two full chunks and a tail
    ops += [_op(0, DELETE, "m1"), _set(0, "k3", 900000)]
    return ops


def test_fill_one_size_then_another(memcached, server_profile):
    sim = check(memcached, server_profile, ["-m", "2", "-o", COMPAT], fill_then_other_size())
    assert sim.totals.evicted > 0 and sim.totals.too_large == 1


def test_ttls_expiring_mid_run(memcached, server_profile):
    sim = check(memcached, server_profile, ["-m", "2", "-o", COMPAT], ttls_expiring_mid_run())
    assert sim.totals.reclaimed > 0 and sim.totals.get_expired > 0


def test_chunked_items(memcached, server_profile):
    sim = check(memcached, server_profile, ["-m", "8", "-I", "2m", "-o", COMPAT], chunked_items())
    assert sim.totals.evicted > 0 and sim.totals.outofmemory == 1
