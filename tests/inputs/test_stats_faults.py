"""slabcalc stats against misbehaving servers: fake ones on loopback, one thread each.

Each fault is one line on stderr naming the node, the other nodes are still
reported, the exit status is 1, and nothing waits past --timeout.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from helpers import run

from slabcalc.inputs.client import Address, NodeError, parse_address, read_node

DATA = Path(__file__).resolve().parents[1] / "data" / "stats" / "1.4.39"
REPLIES = {p.stem.replace("_", " "): p.read_text().replace("\n", "\r\n").encode() for p in DATA.glob("*.txt")}
TIMEOUT = 0.5


def serve_lines(conn, answer):
    """Answer each command line the client sends with ``answer(line)`` until it hangs up."""
    buffer = b""
    while True:
        data = conn.recv(4096)
        if not data:
            return
        buffer += data
        while b"\r\n" in buffer:
            line, buffer = buffer.split(b"\r\n", 1)
            conn.sendall(answer(line.decode()))


def good(conn):
    """A fake memcached 1.4.39 answering the saved replies, command by command."""
    serve_lines(conn, lambda line: REPLIES.get(line, b"ERROR\r\n"))


def stall(conn):
    conn.recv(4096)
    time.sleep(3)


def trickle(conn):
    conn.recv(4096)
    for byte in b"VERSION 1.4.39 and so on, one byte at a time":
        conn.sendall(bytes([byte]))
        time.sleep(0.1)


def http(conn):
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def garbage(conn):
    conn.recv(4096)
    conn.sendall(b"\x00\xff\xfe\x17 binary\r\n")


def close_mid_reply(conn):
    conn.recv(4096)
    conn.sendall(REPLIES["version"])
    conn.recv(4096)
    conn.sendall(REPLIES["stats"][:40])


def truncated_stats(conn):
    """Answers, but a stats reply stops in the middle of a line and the server closes."""
    conn.recv(4096)
    conn.sendall(REPLIES["version"])
    conn.recv(4096)
    conn.sendall(b"STAT pid 1\r\nSTAT upt")


def wrong_stats(conn):
    conn.recv(4096)
    conn.sendall(REPLIES["version"])
    conn.recv(4096)
    conn.sendall(b"STAT pid 1\r\nSERVER_ERROR out of memory\r\n")


def endless_line(conn):
    conn.recv(4096)
    conn.sendall(b"V" * 200_000)
    time.sleep(1)


class FakeServer:
    """Listens on loopback (or a unix socket) and runs ``behaviour`` for each connection."""

    def __init__(self, behaviour, path=None):
        self.behaviour = behaviour
        family = socket.AF_UNIX if path else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(str(path) if path else ("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = str(path) if path else f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            self.behaviour(conn)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.sock.close()


@pytest.fixture
def fake():
    servers = []

    def start(behaviour, path=None):
        server = FakeServer(behaviour, path)
        servers.append(server)
        return server.address

    yield start
    for server in servers:
        server.close()


def refused_address():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"   # closed again: nothing listens there


def stats(*args):
    return run("stats", "--timeout", str(TIMEOUT), *args)


def test_a_good_fake_node_reads_like_its_saved_replies(fake):
    address = fake(good)
    live = json.loads(stats("--server", address, "--format", "json").output)
    saved = json.loads(run("stats", "--format", "json", *map(str, sorted(DATA.glob("*.txt")))).output)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "node"} for r in rows]  # noqa: E731
    assert strip(live["classes"]) == strip(saved["classes"])
    assert live["totals"] == saved["totals"]


@pytest.mark.parametrize("behaviour,message", [
    (stall, f"version: no complete reply within {TIMEOUT:g} s"),
    (trickle, f"version: no complete reply within {TIMEOUT:g} s"),
    (http, "version: unexpected reply 'HTTP/1.1 400 Bad Request': not memcached"),
    (garbage, "version: reply is not text ('\\x00ÿþ\\x17 binary'): not memcached"),
    (close_mid_reply, "stats: connection closed mid-reply after 'STAT limit_maxbytes'"),
    (truncated_stats, "stats: connection closed mid-reply after 'STAT upt'"),
    (wrong_stats, "stats: unexpected reply 'SERVER_ERROR out of memory'"),
    (endless_line, "version: a reply line of more than 65536 bytes: not memcached"),
])
def test_each_fault_is_one_line_and_the_good_node_is_still_reported(fake, behaviour, message):
    bad, ok = fake(behaviour), fake(good)
    started = time.monotonic()
    result = stats("--server", bad, "--server", ok)
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines()]
    assert len(errors) == 1 and errors[0].startswith(f"Error: {bad}: {message}"), errors
    assert "Traceback" not in result.output
    assert f"{ok}" in result.stdout and "drift: none" in result.stdout   # the good node, in full
    assert elapsed < TIMEOUT + 2    # never a hang past the timeout (nodes are read in parallel)


def test_refused_and_unknown_hosts_and_missing_sockets(fake, tmp_path):
    refused = refused_address()
    result = stats("--server", refused, "--server", str(tmp_path / "none.sock"), "--format", "json")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"Error: {refused}: connection refused",
                                          f"Error: {tmp_path / 'none.sock'}: no such socket"]
    doc = json.loads(result.stdout) if result.stdout.strip() else None
    assert doc is None            # no node could be read: nothing to report but the errors


def test_json_names_failed_nodes(fake):
    bad, ok = refused_address(), fake(good)
    doc = json.loads(stats("--server", ok, "--server", bad, "--format", "json").stdout)
    assert [n["node"] for n in doc["nodes"]] == [ok, bad]
    assert doc["nodes"][1]["error"] == "connection refused"
    assert doc["totals"]["used_bytes"] == 96     # the good node alone
    assert (doc["totals"]["nodes"], doc["totals"]["nodes_down"]) == (2, 1)
    # the table's pool total says a node is down, next to it
    table = stats("--server", ok, "--server", bad).stdout
    assert any(line.startswith("pool (1 of 2 nodes down)") for line in table.splitlines())


def test_unix_socket(fake, tmp_path):
    path = fake(good, tmp_path / "memcached.sock")
    result = stats("--server", path)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].split()[:2] == ["1", "96"]


def test_read_node_sends_only_read_commands(fake):
    seen = []

    def recording(conn):
        def answer(line):
            seen.append(line)
            return REPLIES.get(line, b"END\r\n")
        serve_lines(conn, answer)

    read_node(parse_address(fake(recording)), TIMEOUT, sample_items=5)
    assert seen == ["version", "stats", "stats slabs", "stats items", "stats settings", "lru_crawler metadump all"]


@pytest.mark.parametrize("text,address", [
    ("cache1:11211", Address("cache1", 11211)),
    ("cache1", Address("cache1", 11211)),
    ("[::1]:11212", Address("::1", 11212)),
    ("/run/memcached.sock", Address(path="/run/memcached.sock")),
])
def test_addresses(text, address):
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["cache1:0", "cache1:x", ":11211", "[::1]x", "cache1:70000"])
def test_bad_addresses(text):
    with pytest.raises(ValueError):
        parse_address(text)


def test_node_error_is_one_line():
    with pytest.raises(NodeError) as info:
        read_node(parse_address(refused_address()), TIMEOUT)
    assert "\n" not in str(info.value)
