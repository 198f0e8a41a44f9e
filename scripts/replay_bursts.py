#!/usr/bin/env python3
"""Replay a burst workload into a real memcached once more, on the server's clock (issue 38).

    python scripts/replay_bursts.py tests/data/fidelity/t3_shortttl_workload.csv.gz -m 64 \
        --json tests/data/fidelity/t3_shortttl_third.json
    python scripts/replay_bursts.py tests/data/fidelity/s4_ttlmix_workload.csv.gz -m 32 \
        --watch /tmp/s4.jsonl          # also: every crawl and every tick's effect, for a reader

The workloads of ``tests/data/fidelity`` (``time,op,key,value_size,ttl``) were captured as bursts:
each workload second's operations pipelined at that second (sets with ``noreply``, gets as ``mg KEY
v``), then ``mn``, the server started 0.5 s before second 0.  This replays one the same way into a
fresh server (``$SLABCALC_MEMCACHED`` or the one on PATH, the arguments given after the workload;
deletes, which those workloads do not hold, as ``md KEY q``, touches as ``mg KEY T<ttl> q``): it
waits for one of the server's clock ticks (memcached.c clock_handler: ``uptime`` changes) and sends
second N's burst N + 0.5 s after it, so the ticks fall half a second into each second, as in the
capture.  After second N's burst, for every N a multiple of ``--every`` (10) up to the first at or
after the last burst, it keeps a checkpoint in the form of the runs stored beside the workloads
(``stats``' counters, ``total_pages``, items and evictions per class): ``--json`` writes them.

``--watch FILE`` also writes, as JSON lines on the workload's clock, the server's ``watch
sysevents`` (every crawl of the LRU crawler: what it examined and reclaimed per LRU) and, just
before and just after every burst, per class ``stats items`` (``number_hot``/``warm``/``cold``,
``reclaimed``, ``crawler_reclaimed``, ``crawler_items_checked``, ``moves_to_cold``...) with
``curr_items``, ``reclaimed``, ``crawler_reclaimed`` and ``lru_maintainer_juggles``.  Those reads
come twice a second and take the server's locks: a run for ``--json`` is taken without them.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

STATS = ("evictions", "slabs_moved", "curr_items", "reclaimed", "crawler_reclaimed", "get_hits", "get_misses",
         "get_expired", "slab_global_page_pool", "total_items", "expired_unfetched", "evicted_unfetched",
         "delete_hits", "delete_misses", "touch_hits", "touch_misses", "cmd_touch")
WATCHED = ("number_hot", "number_warm", "number_cold", "number_temp", "reclaimed", "crawler_reclaimed",
           "crawler_items_checked", "moves_to_cold", "moves_to_warm", "moves_within_lru", "lrutail_reflocked",
           "direct_reclaims", "expired_unfetched", "evicted", "age_hot", "age_warm", "age", "number")


class Client:
    def __init__(self, port: int):
        for _ in range(500):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.01)
        else:
            sys.exit(f"replay_bursts: no memcached answered on port {port}")
        self.reader = self.sock.makefile("rb")

    def stats(self, sub: str = "") -> dict[str, str]:
        self.sock.sendall(f"stats {sub}".strip().encode() + b"\r\n")
        out = {}
        while True:
            line = self.reader.readline().decode().strip()
            if line == "END":
                return out
            _, name, value = line.split(" ", 2)
            out[name] = value

    def burst(self, rows: list[dict]) -> None:
        out = []
        for r in rows:
            key, ttl = r["key"], r["ttl"] or 0
            if r["op"] == "set":
                size = int(r["value_size"])
                out.append(f"set {key} 0 {ttl} {size} noreply\r\n".encode() + b"x" * size + b"\r\n")
            elif r["op"] == "get":
                out.append(f"mg {key} v\r\n".encode())
            elif r["op"] == "delete":
                out.append(f"md {key} q\r\n".encode())
            elif r["op"] == "touch":
                out.append(f"mg {key} T{ttl} q\r\n".encode())
        out.append(b"mn\r\n")
        self.sock.sendall(b"".join(out))
        while not self.reader.readline().startswith(b"MN"):
            pass


def checkpoint(client: Client) -> dict:
    stats = client.stats()
    pages = {k.split(":")[0]: int(v) for k, v in client.stats("slabs").items() if k.endswith(":total_pages")}
    items, evicted = {}, {}
    for name, value in client.stats("items").items():
        _, cls, field = name.split(":", 2)
        if field == "number":
            items[cls] = int(value)
        elif field == "evicted":
            evicted[cls] = int(value)
    return {"stats": {k: int(stats[k]) for k in STATS if k in stats}, "pages": pages, "items": items,
            "evicted": evicted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload")
    parser.add_argument("--every", type=int, default=10, help="seconds between checkpoints")
    parser.add_argument("--json", help="write the checkpoints here")
    parser.add_argument("--watch", help="write the server's crawls and per-burst stats items here (JSON lines)")
    args, server_args = parser.parse_known_args()
    by_second: dict[int, list[dict]] = {}
    with gzip.open(args.workload, "rt") if args.workload.endswith(".gz") else open(args.workload) as src:
        for row in csv.DictReader(src):
            by_second.setdefault(int(float(row["time"])), []).append(row)
    binary = os.environ.get("SLABCALC_MEMCACHED") or shutil.which("memcached") or "/usr/bin/memcached"
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    command = [binary, "-u", "root", "-l", "127.0.0.1", "-p", str(port), "-U", "0", *server_args]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    log = open(args.watch, "w") if args.watch else None
    lock = threading.Lock()

    def emit(record: dict) -> None:
        with lock:
            log.write(json.dumps(record) + "\n")
            log.flush()

    try:
        client = Client(port)
        first = client.stats()["uptime"]
        while client.stats()["uptime"] == first:
            time.sleep(0.001)
        zero = time.time() + 0.5            # a tick just came: second N's burst N + 0.5 s after it
        if log:
            watcher = Client(port)
            watcher.sock.sendall(b"watch sysevents\r\n")

            def follow() -> None:
                for raw in watcher.reader:
                    line = raw.decode().strip()
                    if line.startswith("ts=") and "examined=0 reclaimed=0" not in line:
                        stamp, _, event = line.split(" ", 2)
                        emit({"at": round(float(stamp[3:]) - zero, 4), "event": event})

            threading.Thread(target=follow, daemon=True).start()

        def watch(label: str) -> None:
            per: dict = {}
            for name, value in client.stats("items").items():
                _, cls, field = name.split(":", 2)
                if field in WATCHED:
                    per.setdefault(cls, {})[field] = int(value)
            stats = client.stats()
            emit({"at": round(time.time() - zero, 4), "label": label, "classes": per,
                  **{k: int(stats[k]) for k in ("curr_items", "reclaimed", "crawler_reclaimed",
                                                 "lru_maintainer_juggles")}})

        checkpoints = {}
        last = -(-max(by_second) // args.every) * args.every     # a checkpoint at or after the last burst
        for second in range(last + 1):
            if log:
                while time.time() < zero + second - 0.15:
                    time.sleep(0.002)
                watch(f"before {second}")
            while time.time() < zero + second:
                time.sleep(0.0005)
            client.burst(by_second.get(second, []))
            if log:
                watch(f"after {second}")
            if second and second % args.every == 0:
                checkpoints[str(second)] = checkpoint(client)
                late = time.time() - zero - second
                if late > 0.5:
                    print(f"replay_bursts: checkpoint {second} {late:.2f} s late (a loaded machine)", file=sys.stderr)
        version = client.stats()["version"]
    finally:
        server.terminate()
        server.wait()
        if log:
            log.close()
    if args.json:
        note = f"another real run of the same workload (scripts/replay_bursts.py, {time.strftime('%Y-%m-%d')})"
        record = {"server_args": "memcached -u root -l 127.0.0.1 -p <port> -U 0 " + " ".join(server_args),
                  "memcached": version, "checkpoints": checkpoints, "note": note}
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
