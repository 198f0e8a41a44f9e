"""Run real memcached servers for slabcalc's fidelity tests.

Stdlib only. Two entry points:

* :func:`run_vv` starts ``memcached -vv`` just long enough to capture the
  slab class table it prints on startup (or its error if it refuses to start).
* :class:`MemcachedServer` is a context manager that runs a server and speaks
  the ASCII protocol to it over one persistent TCP connection.

Every process started here is stopped by its PID and reaped, also when the
caller fails. Test modules should call :func:`require_memcached` first: it
skips when memcached is missing, but fails when the environment variable
``CI`` is set, so CI never skips fidelity tests silently.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Iterable, NamedTuple
from urllib.parse import unquote

__all__ = [
    "ENV_VAR",
    "MemcachedError",
    "MemcachedServer",
    "SlabStats",
    "VVResult",
    "find_memcached",
    "free_port",
    "require_memcached",
    "run_vv",
    "server_version",
]

ENV_VAR = "SLABCALC_MEMCACHED"
"""Environment variable naming the memcached binary to use."""

_FALLBACK_PATH = "/usr/bin/memcached"
_LISTENING_MARKER = "server listening"
_CLASS_PREFIX = "slab class"
_STOP_TIMEOUT = 5.0
_MAX_KEY_LENGTH = 250


class MemcachedError(RuntimeError):
    """The server answered a command with an error reply."""


# --------------------------------------------------------------------------
# Locating the binary
# --------------------------------------------------------------------------


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_memcached() -> str | None:
    """Return the memcached binary to use, or None if there is none.

    Looks at ``$SLABCALC_MEMCACHED``, then ``memcached`` on PATH, then
    /usr/bin/memcached. A set but unusable ``$SLABCALC_MEMCACHED`` yields
    None (:func:`require_memcached` reports that case as an error).
    """
    configured = os.environ.get(ENV_VAR)
    if configured:
        return configured if _is_executable(configured) else None
    found = shutil.which("memcached")
    if found:
        return found
    return _FALLBACK_PATH if _is_executable(_FALLBACK_PATH) else None


def require_memcached() -> str:
    """Return the memcached path for a test, or skip/fail the test.

    Without memcached the test is skipped, unless ``$CI`` is non-empty: then
    it fails, because CI must never skip fidelity tests. A ``$SLABCALC_MEMCACHED``
    that points to no executable file always fails (explicit configuration
    should not be ignored silently).
    """
    import pytest  # imported lazily so the helper itself stays stdlib-only

    path = find_memcached()
    if path is not None:
        return path
    configured = os.environ.get(ENV_VAR)
    if configured:
        pytest.fail(
            f"${ENV_VAR}={configured!r} is not an executable file", pytrace=False
        )
    message = (
        f"memcached not found (set ${ENV_VAR}, put memcached on PATH or "
        f"install it at {_FALLBACK_PATH})"
    )
    missing(message)
    raise AssertionError("unreachable")  # missing() raises


def missing(message: str) -> None:
    """What a test does when an oracle it needs is not installed: it skips, but it fails when
    ``$CI`` is set, because CI must never skip fidelity tests silently."""
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI is set, so this is an error", pytrace=False)
    pytest.skip(message)


def _binary(memcached: str | None) -> str:
    path = memcached or find_memcached()
    if path is None:
        raise RuntimeError("memcached binary not found")
    return path


def _base_command(memcached: str | None, port: int) -> list[str]:
    cmd = [_binary(memcached)]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]  # memcached refuses to run as root otherwise
    return cmd + ["-l", "127.0.0.1", "-p", str(port), "-U", "0"]


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def server_version(path: str | None = None) -> str:
    """Return the version memcached reports for ``-V``, e.g. ``"1.6.18"``."""
    proc = subprocess.run(
        [_binary(path), "-V"],
        capture_output=True,
        text=True,
        timeout=_STOP_TIMEOUT,
        check=True,
    )
    words = proc.stdout.split()  # "memcached 1.6.18"
    if len(words) < 2:
        raise RuntimeError(f"unexpected `memcached -V` output: {proc.stdout!r}")
    return words[1]



def refuses(word: str, path: str | None = None) -> tuple[int, str]:
    """memcached started with ``-o word`` (no port): its exit status and what it printed on stderr
    (the server refuses a bad value at once, before it listens)."""
    proc = subprocess.run([_binary(path), "-p", "0", "-U", "0", "-o", word], capture_output=True, text=True,
                          timeout=_STOP_TIMEOUT)
    return proc.returncode, proc.stderr.strip()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop ``proc`` by PID (SIGTERM, then SIGKILL) and reap it."""
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


# --------------------------------------------------------------------------
# memcached -vv
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class VVResult:
    """What ``memcached -vv`` printed before it listened or exited."""

    started: bool
    """True if the server reached "server listening"."""
    exit_code: int | None
    """None if it started; else its exit status (negative: killed by signal)."""
    class_lines: list[str]
    """The ``slab class ...`` lines, in order, without line endings."""
    stderr: str
    """All other stderr output, verbatim (including shutdown messages)."""
    stdout: str
    """Everything printed on stdout."""


class _LineCollector:
    """Reads a pipe line by line on a daemon thread."""

    def __init__(self, stream: IO[bytes], marker: str | None = None) -> None:
        self.lines: list[str] = []
        self.marker_seen = False
        self.ready = threading.Event()  # set on marker line or EOF
        self._stream = stream
        self._marker = marker
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for raw in iter(self._stream.readline, b""):
                line = raw.decode("utf-8", errors="replace")
                self.lines.append(line)
                if self._marker is not None and self._marker in line:
                    self.marker_seen = True
                    self.ready.set()
        finally:
            self.ready.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


_PORT_TAKEN = "Address already in use"
_PORT_SERVED = "is served by pid"
_PORT_ATTEMPTS = 5


def run_vv(
    args: Sequence[str] = (), timeout: float = 5.0, memcached: str | None = None
) -> VVResult:
    """Run ``memcached -vv <args>`` until it listens or exits, then stop it.

    Raises RuntimeError if neither happens within ``timeout`` seconds.  A port
    taken between :func:`free_port` and memcached's bind (another test run on
    the machine) is retried on a new port.
    """
    for _ in range(_PORT_ATTEMPTS):
        result = _run_vv_once(args, timeout, memcached)
        if result.started or _PORT_TAKEN not in result.stderr:
            return result
    return result


def _run_vv_once(args: Sequence[str], timeout: float, memcached: str | None) -> VVResult:
    cmd = _base_command(memcached, free_port())
    cmd[1:1] = ["-vv"]
    cmd += list(args)
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    collectors: list[_LineCollector] = []
    try:
        err = _LineCollector(proc.stderr, marker=_LISTENING_MARKER)
        collectors.append(err)
        out = _LineCollector(proc.stdout)
        collectors.append(out)
        if not err.ready.wait(timeout):
            raise RuntimeError(
                f"memcached -vv {list(args)!r} neither listened nor exited "
                f"within {timeout} s"
            )
        started = err.marker_seen
    finally:
        _stop(proc)
        # The pipes reach EOF once the process is gone; bound the wait anyway.
        for collector in collectors:
            collector.join(_STOP_TIMEOUT)
        proc.stdout.close()
        proc.stderr.close()

    class_lines = [
        line.rstrip("\r\n") for line in err.lines if line.startswith(_CLASS_PREFIX)
    ]
    other = "".join(line for line in err.lines if not line.startswith(_CLASS_PREFIX))
    return VVResult(
        started=started,
        exit_code=None if started else proc.returncode,
        class_lines=class_lines,
        stderr=other,
        stdout="".join(out.lines),
    )


# --------------------------------------------------------------------------
# A running server
# --------------------------------------------------------------------------


class SlabStats(NamedTuple):
    """Parsed ``stats slabs``."""

    per_class: dict[int, dict[str, int]]
    """Class id -> {"chunk_size": 96, "used_chunks": 1, ...}."""
    totals: dict[str, int]
    """Global values: {"active_slabs": 1, "total_malloced": 1048576}."""


class MemcachedServer:
    """A real memcached on 127.0.0.1 with a persistent ASCII-protocol client.

    Use as a context manager; the server starts in ``__enter__`` (or
    :meth:`start`) and is stopped by PID in ``__exit__`` (or :meth:`stop`)::

        with MemcachedServer(["-m", "64"]) as srv:
            assert srv.set("foo", b"0123456789") == "STORED"
    """

    def __init__(
        self,
        args: Sequence[str] = (),
        memcached: str | None = None,
        timeout: float = 5.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: the server is started with ``-Z`` (in ``args``), and this client speaks TLS
        to it with this context (its CA, and a client certificate when the server wants one)."""
        self._args = list(args)
        self._tls = tls
        self._memcached = memcached
        self._timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._sock: socket.socket | None = None
        self._buf = bytearray()
        self._port: int | None = None

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self) -> MemcachedServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """TCP port the server listens on."""
        if self._port is None:
            raise RuntimeError("server not started")
        return self._port

    @property
    def pid(self) -> int:
        """PID of the memcached process."""
        if self._proc is None:
            raise RuntimeError("server not started")
        return self._proc.pid

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", errors="replace")

    def start(self) -> None:
        """Start memcached and connect to it; RuntimeError if it fails.

        A port taken between :func:`free_port` and memcached's bind (another
        test run on the machine) is retried on a new port.
        """
        for attempt in range(_PORT_ATTEMPTS):
            try:
                return self._start_once()
            except RuntimeError as exc:
                taken = _PORT_TAKEN in str(exc) or _PORT_SERVED in str(exc)
                if not taken or attempt == _PORT_ATTEMPTS - 1:
                    raise
                self._proc = None

    def _start_once(self) -> None:
        if self._proc is not None:
            raise RuntimeError("server already started")
        self._port = free_port()
        cmd = _base_command(self._memcached, self._port) + self._args
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
            )
            self._sock = self._connect(cmd)
            # Guard against a port race: make sure we talk to our own process.
            pid = self.stats().get("pid")
            if pid != str(self._proc.pid):
                raise RuntimeError(
                    f"port {self._port} {_PORT_SERVED} {pid}, not ours "
                    f"({self._proc.pid})"
                )
        except BaseException:
            self.stop()
            raise

    def _connect(self, cmd: list[str]) -> socket.socket:
        assert self._proc is not None
        deadline = time.monotonic() + self._timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"{' '.join(cmd)} exited with {self._proc.returncode}: "
                    f"{self._stderr_text().strip()}"
                )
            try:
                sock = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{' '.join(cmd)} did not accept connections within "
                        f"{self._timeout} s"
                    ) from None
                time.sleep(0.02)
                continue
            sock.settimeout(self._timeout)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname="127.0.0.1")
            return sock

    def stop(self) -> None:
        """Close the connection and stop the server by PID (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._buf.clear()
        if self._proc is not None:
            _stop(self._proc)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    # -- wire helpers ------------------------------------------------------

    def _send(self, data: bytes) -> None:
        if self._sock is None:
            raise RuntimeError("server not started")
        self._sock.sendall(data)

    def _readline(self) -> str:
        """Read one line, without its ``\\n`` or ``\\r\\n`` ending."""
        if self._sock is None:
            raise RuntimeError("server not started")
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                return line.rstrip(b"\r").decode("utf-8", errors="replace")
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionError("memcached closed the connection")
            self._buf += chunk

    def _command(self, line: str) -> str:
        self._send(line.encode() + b"\r\n")
        return self._readline()

    @staticmethod
    def _check_key(key: str) -> bytes:
        raw = key.encode()
        bad_byte = any(b <= 0x20 or b == 0x7F for b in raw)
        if not 0 < len(raw) <= _MAX_KEY_LENGTH or bad_byte:
            raise ValueError(f"invalid memcached key: {key!r}")
        return raw

    # -- commands ----------------------------------------------------------

    def set(self, key: str, value: bytes, flags: int = 0, exptime: int = 0) -> str:
        """Store ``value``; return the reply line, e.g. ``"STORED"``.

        Error replies (``SERVER_ERROR object too large for cache``) are
        returned, not raised; memcached swallows the value in that case, so
        exactly one reply line is read and the connection stays in sync.
        """
        header = b"set %s %d %d %d\r\n" % (
            self._check_key(key), flags, exptime, len(value)
        )
        self._send(header + value + b"\r\n")
        return self._readline()

    def set_many(self, keys: Iterable[str], value: bytes) -> None:
        """Store ``value`` under each key, pipelined with ``noreply``, about a megabyte sent at a
        time; nothing is read back.  This connection's commands run in order, so a ``stats`` after
        it sees them all (``total_items`` counts those stored: ``noreply`` hides a refusal)."""
        header = b" 0 0 %d noreply\r\n" % len(value)
        body = value + b"\r\n"
        batch = max(1, (1 << 20) // len(body))
        pending = []
        for key in keys:
            pending.append(b"set " + self._check_key(key) + header + body)
            if len(pending) == batch:
                self._send(b"".join(pending))
                pending = []
        if pending:
            self._send(b"".join(pending))

    def set_items(self, items: Iterable[tuple[str, int]], flags: int = 0) -> None:
        """Store each ``(key, value length)`` (a value of that many ``v``), in order, as
        :meth:`set_many` does: pipelined with ``noreply``, about a megabyte sent at a time."""
        pending, size = [], 0
        for key, length in items:
            pending.append(b"set %s %d 0 %d noreply\r\n%s\r\n" % (self._check_key(key), flags, length,
                                                                      b"v" * length))
            size += length
            if size >= 1 << 20:
                self._send(b"".join(pending))
                pending, size = [], 0
        if pending:
            self._send(b"".join(pending))

    def delete(self, key: str) -> str:
        """Delete ``key``; return the reply line (``DELETED``/``NOT_FOUND``)."""
        return self._command(f"delete {self._check_key(key).decode()}")

    def version(self) -> str:
        """Return the server version, e.g. ``"1.6.18"``."""
        reply = self._command("version")
        if not reply.startswith("VERSION "):
            raise MemcachedError(f"version: {reply}")
        return reply[len("VERSION ") :]

    def stats(self, sub: str | None = None) -> dict[str, str]:
        """Return ``stats`` (or ``stats <sub>``) as a name -> value dict."""
        command = "stats" if sub is None else f"stats {sub}"
        self._send(command.encode() + b"\r\n")
        result: dict[str, str] = {}
        while (line := self._readline()) != "END":
            parts = line.split(" ", 2)
            if parts[0] != "STAT" or len(parts) < 2:
                raise MemcachedError(f"{command}: {line}")
            result[parts[1]] = parts[2] if len(parts) == 3 else ""
        return result

    def slab_stats(self) -> SlabStats:
        """Return parsed ``stats slabs``: per-class values and global totals."""
        per_class: dict[int, dict[str, int]] = {}
        totals: dict[str, int] = {}
        for name, value in self.stats("slabs").items():
            cls, sep, field = name.partition(":")
            if sep:
                per_class.setdefault(int(cls), {})[field] = int(value)
            else:
                totals[name] = int(value)
        return SlabStats(per_class, totals)

    def item_stats(self) -> dict[int, dict[str, int]]:
        """Return parsed ``stats items``: class id -> {"number": 1, ...}."""
        result: dict[int, dict[str, int]] = {}
        for name, value in self.stats("items").items():
            prefix, cls, field = name.split(":", 2)  # "items:1:number"
            if prefix != "items":
                raise MemcachedError(f"unexpected stats items key: {name}")
            result.setdefault(int(cls), {})[field] = int(value)
        return result

    def metadump(self, retries: int = 50, delay: float = 0.1) -> list[dict[str, str]]:
        """Return ``lru_crawler metadump all`` as one dict per item.

        Each dict has the fields memcached prints (key, exp, la, cas, fetch,
        cls, size); ``key`` is URL-decoded, other values are verbatim. A busy
        crawler (``BUSY ...``/``ERROR ...``) is retried ``retries`` times.
        """
        for _ in range(retries + 1):
            self._send(b"lru_crawler metadump all\r\n")
            line = self._readline()
            if line == "OK":   # 1.6.45 acknowledges the command before the first item
                line = self._readline()
            if line == "END" or line.startswith("key="):
                break
            if line.startswith("NOTSTARTED"):
                return []
            if not (line.startswith("BUSY") or line.startswith("ERROR")):
                raise MemcachedError(f"lru_crawler metadump all: {line}")
            time.sleep(delay)
        else:
            raise MemcachedError(f"lru_crawler metadump all: still {line!r}")

        items: list[dict[str, str]] = []
        while line != "END":
            fields = dict(token.split("=", 1) for token in line.split())
            if "key" in fields:
                fields["key"] = unquote(fields["key"])
            items.append(fields)
            line = self._readline()
        return items
