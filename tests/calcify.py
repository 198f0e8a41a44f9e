"""A node driven into calcification, and healed by its automover: the live scenario of
``test_diagnosis_fidelity`` and of ``scripts/capture_stats_pairs.py`` (saved reading pairs).

``-m 16`` with 1.6's defaults but ``slab_automove_window=10`` (so that it heals in
seconds, not a minute): 13 000 items of 1 000 bytes take 15 pages of one class;
then a writer sets 10 000 keys of 200 bytes round and round, about 1 900 a
second.  Their class gets one page and evicts, while the 15 pages hold items
older than its victims: calcification.  The automover then moves a page
every second or two until the small class holds its 10 000 keys (3 pages), and
evictions stop.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

from memcached_server import MemcachedServer

FLAGS = ["-m", "16", "-o", "slab_automove_window=10"]
BIG, BIG_VALUE = 13_000, 1_000
SMALL_KEYS, SMALL_VALUE = 10_000, 200


def loaded(memcached: str | None = None) -> MemcachedServer:
    """A started server whose memory is taken by the big items (stop it when done)."""
    server = MemcachedServer(FLAGS, memcached=memcached)
    server.start()
    for i in range(BIG):
        assert server.set(f"big{i:06d}", b"v" * BIG_VALUE) == "STORED"
    return server


@contextmanager
def writing(server: MemcachedServer):
    """Small sets round a fixed key set, about 1 900 a second, on their own connection."""
    stop = threading.Event()

    def run():
        with socket.create_connection(("127.0.0.1", server.port)) as conn:
            replies = conn.makefile("rb")
            i = 0
            while not stop.is_set():
                conn.sendall(f"set small{i % SMALL_KEYS:06d} 0 0 {SMALL_VALUE}\r\n".encode()
                             + b"x" * SMALL_VALUE + b"\r\n")
                assert replies.readline() == b"STORED\r\n"
                i += 1
                if i % 100 == 0:
                    time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


def reading(server: MemcachedServer) -> str:
    """One saved reading, as ``printf 'version\\nstats\\n...' | nc`` would save it (commands echoed)."""
    from slabcalc.inputs.client import Address, read_node

    replies = read_node(Address("127.0.0.1", server.port), 2.0)
    text = [f"version\nVERSION {replies['version'][0]}"]
    for command, lines in replies.items():
        if command != "version":
            text.append("\n".join([command, *lines, "END"]))
    return "\n".join(text) + "\n"
