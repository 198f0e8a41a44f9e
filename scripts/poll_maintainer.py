#!/usr/bin/env python3
"""A stored random shape replayed into a real server while a second connection polls ``stats`` every few
milliseconds, beside the model's LRU maintainer at the same instants: when, within a second, the real
maintainer wakes and moves items (issue 38's misses of timing: r01088, r01235).

    python scripts/poll_maintainer.py tests/data/random/1.6.18/r01235.json.gz --cls 21 --from 39 --to 44
    SLABCALC_PURE=1 python scripts/poll_maintainer.py ... --load /tmp/poll.json.gz    # the model's wakes too

One paced replay (tests/paced.py, 10 s snapshots) of the shape's workload into a fresh server; from
``--from`` to ``--to`` seconds of the workload a thread on its own connection reads ``stats`` every
``--every`` ms (``lru_maintainer_juggles``: one a wake-up; ``cmd_set`` and ``uptime``, printed with
``--sets``: when the client's sets reached the server, and the server's ticks) and, every fifth read, ``stats items`` (the
class's HOT items, ``moves_to_cold`` and ``reclaimed``).  Its clock is the replay's: both wait for the same
tick of the server's ``uptime``.  Then the model on the same workload (the run's boot), plain Python
(``SLABCALC_PURE=1``) to see its wake-ups, printed in one time line with the server's reads.  Reading
``stats`` this often can itself move the real maintainer's timing (r01053 did so at 1 s): an instrument,
nothing stored in the repository.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import memcached_server  # noqa: E402
import paced  # noqa: E402
import random_corpus  # noqa: E402
import random_shapes  # noqa: E402


def _stats(sock, command: bytes) -> dict:
    sock.sendall(command + b"\r\n")
    data = b""
    while not data.endswith(b"END\r\n"):
        data += sock.recv(65536)
    out = {}
    for line in data.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "STAT":
            out[parts[1]] = parts[2]
    return out


def _poller(port: int, first: float, last: float, every: float, cls: int, reads: list, stop: threading.Event):
    sock = socket.create_connection(("127.0.0.1", port))
    up = int(_stats(sock, b"stats")["uptime"])
    while int(_stats(sock, b"stats")["uptime"]) == up:      # the tick the replay waits for too
        time.sleep(0.002)
    wall0 = time.monotonic()
    n = 0
    while not stop.is_set():
        t = time.monotonic() - wall0
        if t > last:
            break
        if t < first:
            time.sleep(min(0.05, first - t))
            continue
        stats = _stats(sock, b"stats")
        row = {"t": round(t, 4), "juggles": int(stats["lru_maintainer_juggles"]), "cmd_set": int(stats["cmd_set"]),
               "uptime": int(stats["uptime"])}
        if n % 5 == 0:
            items = _stats(sock, b"stats items")
            for name in ("number_hot", "number_cold", "moves_to_cold", "reclaimed"):
                row[name] = int(items.get(f"items:{cls}:{name}", 0))
        reads.append(row)
        n += 1
        time.sleep(every / 1000)
    sock.close()


def _capture(shape: dict, rows: list, binary: str, opts) -> dict:
    reads: list = []
    stop = threading.Event()
    enter = memcached_server.MemcachedServer.__enter__

    def entered(self):
        server = enter(self)
        threading.Thread(target=_poller, args=(server.port, opts.first, opts.last, opts.every, opts.cls, reads, stop),
                         daemon=True).start()
        return server

    scenario = paced.Scenario(shape["id"], tuple(random_shapes.server_args(shape)), shape["duration"],
                              lambda: rows, releases=(shape["release"],), interval=10)
    memcached_server.MemcachedServer.__enter__ = entered
    try:
        result = paced.capture(scenario, memcached=binary)
    finally:
        memcached_server.MemcachedServer.__enter__ = enter
        stop.set()
    return {"boot": result.boot, "reads": reads}


def _model_wakes(shape: dict, rows: list, boot: float, cls: int, first: float, last: float) -> list:
    """The model's maintainer wake-ups in [first, last] of the workload: (time, juggled cls's moves or None,
    HOT items of cls) -- plain Python only (a compiled class is not patched)."""
    from slabcalc import configure, load_profile
    from slabcalc.engines import maintainer
    from slabcalc.engines.engine import server_start
    from slabcalc.engines.simulate import DELETE, GET, SET, TOUCH, simulate

    ops_of = {"set": SET, "get": GET, "delete": DELETE, "touch": TOUCH}
    settings = configure(load_profile(shape["release"]), random_shapes.server_args(shape))
    ops = [(t, ops_of[op], key, len(key), value, ttl, 0) for t, op, key, value, ttl in rows]
    phase = boot - server_start(boot)
    wakes: list = []
    wake, juggle = maintainer.Maintainer.wake, maintainer.Maintainer.juggle
    seen: list = []

    def counted_juggle(self, c):
        moved = juggle(self, c)
        if c == cls:
            seen.append(moved)
        return moved

    def counted_wake(self):
        seen.clear()
        t = self.next_wake / 1e6 - phase
        slept = wake(self)
        if first <= t <= last:
            wakes.append((t, seen[0] if seen else None, self.lrus.q[0][cls].n))
        return slept

    try:
        maintainer.Maintainer.wake, maintainer.Maintainer.juggle = counted_wake, counted_juggle
    except (TypeError, AttributeError):
        return []
    try:
        simulate(settings, ops, boot=boot)
    finally:
        maintainer.Maintainer.wake, maintainer.Maintainer.juggle = wake, juggle
    return wakes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", type=Path, help="a stored random shape (tests/data/random/RELEASE/ID.json.gz)")
    parser.add_argument("--binary", default="/usr/bin/memcached")
    parser.add_argument("--cls", type=int, required=True, help="the class whose HOT LRU to follow")
    parser.add_argument("--from", dest="first", type=float, required=True)
    parser.add_argument("--to", dest="last", type=float, required=True)
    parser.add_argument("--every", type=float, default=5, help="milliseconds between stats reads")
    parser.add_argument("--sets", action="store_true", help="print the server's cmd_set and uptime at every read")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--load", type=Path)
    opts = parser.parse_args(argv)
    shape = random_corpus.load(opts.capture)["shape"]
    rows = random_shapes.workload(shape)
    run = random_corpus.instrument_run(opts.load, opts.save, lambda: _capture(shape, rows, opts.binary, opts))
    lines = []
    before = None
    for r in run["reads"]:
        if opts.sets:
            lines.append((r["t"], f"server  cmd_set {r['cmd_set']}  uptime {r['uptime']}"))
        if before is not None and r["juggles"] != before:
            extra = "  ".join(f"{k} {r[k]}" for k in ("number_hot", "moves_to_cold", "reclaimed") if k in r)
            lines.append((r["t"], f"server  +{r['juggles'] - before} wakes  {extra}"))
        before = r["juggles"]
    for t, moved, hot in _model_wakes(shape, rows, run["boot"], opts.cls, opts.first, opts.last):
        lines.append((t, f"model   wake  {'juggled ' + str(moved) if moved is not None else ''}  hot {hot}"))
    for t, text in sorted(lines, key=lambda x: x[0]):
        if opts.first <= t <= opts.last:
            print(f"{t:9.4f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
