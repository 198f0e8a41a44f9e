"""A read-only client of memcached's text protocol, for ``slabcalc stats``.

It sends only ``version``, ``stats``, ``stats slabs``, ``stats items``,
``stats settings`` and, when asked, ``lru_crawler metadump all``: never a
write, never a command that blocks the server.  A node is ``HOST:PORT``
(``[v6addr]:port`` for IPv6, port 11211 when omitted) or the path of a unix
socket (anything with a ``/``).

Every failure is a :class:`NodeError` whose message is one line naming the
node: refused, timed out (connect or reply; a reply must be complete within
the timeout, so a server that trickles bytes cannot hold us), closed
mid-reply, or a reply that is not memcached's.  A plain socket rather than
pymemcache: its ``stats()`` parses values itself and has no metadump, and its
exceptions do not say which of these faults happened.

A node behind TLS (memcached 1.6 ``-Z``, 1.6.18 tls.c ``ssl_init``) is read
through an :class:`ssl.SSLContext` made by :func:`tls_context`: the server's
certificate and host name are verified against a CA file (or the system's
CAs), with an optional client certificate for servers started with
``-o ssl_verify_mode=2``.  A failed handshake is one line too, with OpenSSL's
reason (``TLS handshake failed: certificate verify failed: ...``).

:func:`poll` reads nodes again and again at a steady pace (``stats --watch``,
``--interval``): the one clock of those readings.
"""

from __future__ import annotations

import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from slabcalc.errors import (
    NodeError,  # noqa: F401 (raised here, caught by its callers)
    ValueRefused,
)

DEFAULT_PORT = 11211
COMMANDS = ("version", "stats", "stats slabs", "stats items", "stats settings")
LINE_MAX = 1 << 16   # longer "lines" are not memcached's
# A stats reply holds a line per counter, per class for slabs and items: a few thousand lines, some
# hundred kilobytes.  A reply past these bounds is not memcached's, and is not kept to the deadline.
REPLY_LINES_MAX = 1 << 16
REPLY_BYTES_MAX = 1 << 23


@dataclass(frozen=True)
class Address:
    """Where a node listens: ``host`` and ``port``, or a unix socket ``path``."""

    host: str | None = None
    port: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        if self.path is not None:
            return self.path
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """``host:port``, ``host`` (port 11211), ``[::1]:11211``, or a unix socket path."""
    text = text.strip()
    if "/" in text:
        return Address(path=text)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
        if rest and not rest.startswith(":"):
            raise ValueRefused(f"not HOST:PORT: {text!r}")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueRefused(f"no host in {text!r}")
    if not port:
        return Address(host, DEFAULT_PORT)
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueRefused(f"not a port number: {port!r} in {text!r}")
    return Address(host, int(port))


def tls_context(ca_file: str | None = None, cert_file: str | None = None, key_file: str | None = None
                ) -> ssl.SSLContext:
    """A client context that verifies the server's certificate and host name (against ``ca_file``,
    else the system's CAs) and presents ``cert_file`` (its key in ``key_file`` or in the same file).

    Files that cannot be used raise :class:`ValueRefused` naming the file and OpenSSL's reason.
    """
    try:
        context = ssl.create_default_context(cafile=ca_file)
    except (ssl.SSLError, OSError) as exc:
        raise ValueRefused(f"--tls-ca {ca_file}: {_ssl_reason(exc)}") from None
    if cert_file is not None:
        try:
            context.load_cert_chain(cert_file, key_file)
        except (ssl.SSLError, OSError) as exc:
            files = cert_file + (f" / --tls-key {key_file}" if key_file else "")
            raise ValueRefused(f"--tls-cert {files}: {_ssl_reason(exc)}") from None
    return context


def _ssl_reason(exc: BaseException) -> str:
    """OpenSSL's words without their ``[SSL: CODE]`` prefix and ``(_ssl.c:NNN)`` suffix."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    text = re.sub(r"^\[[^]]*\]\s*", "", text)
    text = re.sub(r"\s*\(_ssl\.c:\d+\)$", "", text)
    if isinstance(exc, ssl.SSLError) and text in ("", "unknown error") and exc.reason:
        text = exc.reason.lower().replace("_", " ")
    return text


def _handshake_failure(exc: OSError | None) -> NodeError:
    """A TLS handshake that failed, in one line.  With TLS 1.3 our side of the handshake ends
    before the server has checked our certificate: a server that wants one (1.6.18
    ``ssl_verify_mode=2``) and has none sends an alert and closes the connection at our
    first command: we may read the alert, or only the close (``exc`` None), whichever comes
    first, so a close before the first reply is a failed handshake too."""
    if exc is None or isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionResetError)):
        return NodeError("TLS handshake failed: the server closed the connection "
                         "(does it require a client certificate, --tls-cert?)")
    if isinstance(exc, socket.timeout):
        return NodeError("TLS handshake failed: no reply in time (does the node serve TLS?)")
    reason = _ssl_reason(exc)
    if isinstance(exc, ssl.SSLError) and exc.reason == "WRONG_VERSION_NUMBER":
        reason += " (does the node serve TLS?)"
    elif isinstance(exc, ssl.SSLError) and exc.reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED":
        reason += " (the server requires a client certificate: --tls-cert)"
    return NodeError(f"TLS handshake failed: {reason}")


class Connection:
    """One connection to a node; every reply must arrive within ``timeout`` seconds.

    With ``tls`` the connection is wrapped (and its handshake done) before the
    first command; memcached serves TLS on TCP only.
    """

    def __init__(self, address: Address, timeout: float, tls: ssl.SSLContext | None = None):
        self.address, self.timeout = address, timeout
        self._buffer = bytearray()
        self._handshaking = tls is not None   # TLS 1.3: the server's refusal comes with its first reply
        if tls is not None and address.path is not None:
            raise NodeError("TLS: memcached serves TLS on TCP only, not on a unix socket")
        try:
            if address.path is not None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                try:
                    sock.connect(address.path)
                except BaseException:
                    sock.close()
                    raise
            else:
                sock = socket.create_connection((address.host, address.port), timeout=timeout)
        except socket.timeout:
            raise NodeError(f"no connection within {timeout:g} s") from None
        except ConnectionRefusedError:
            raise NodeError("connection refused") from None
        except FileNotFoundError:
            raise NodeError("no such socket") from None
        except socket.gaierror as exc:
            raise NodeError(f"unknown host: {exc.strerror}") from None
        except OSError as exc:
            raise NodeError(exc.strerror or str(exc)) from None
        if tls is not None:
            sock = self._handshake(sock, tls)
        self._sock = sock

    def _handshake(self, sock: socket.socket, tls: ssl.SSLContext) -> ssl.SSLSocket:
        """``sock`` wrapped in TLS, its handshake done within the timeout (host name checked)."""
        try:
            return tls.wrap_socket(sock, server_hostname=self.address.host)
        except OSError as exc:
            raise _handshake_failure(exc) from None
        finally:
            sock.close()   # the wrapped socket holds its own descriptor (a failed one: none)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def lines(self, command: str, deadline: float | None = None, most: int = REPLY_LINES_MAX) -> Iterator[str]:
        """Send ``command`` and yield its reply lines (without line ends) as they arrive: at most
        ``most`` lines and ``most`` x 128 bytes (at least REPLY_BYTES_MAX), else a NodeError."""
        deadline = time.monotonic() + self.timeout if deadline is None else deadline
        count, size, size_max = 0, 0, max(REPLY_BYTES_MAX, most * 128)
        try:
            self._sock.sendall(command.encode("ascii") + b"\r\n")
        except OSError as exc:
            if self._handshaking:
                raise _handshake_failure(exc) from None
            raise NodeError(f"{command}: cannot send: {_ssl_reason(exc)}") from None
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > LINE_MAX:
                    raise NodeError(f"{command}: a reply line of more than {LINE_MAX} bytes: not memcached")
                self._receive(command, deadline)
                continue
            raw = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[:end + 1]
            count, size = count + 1, size + end + 1
            if count > most or size > size_max:
                raise NodeError(f"{command}: a reply of more than {min(count, most)} lines or {size_max} bytes "
                                f"without its END: not memcached")
            try:
                yield raw.decode("ascii")
            except UnicodeDecodeError:
                raise NodeError(f"{command}: reply is not text ({_shown(raw)}): not memcached") from None

    def _receive(self, command: str, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise NodeError(f"{command}: no complete reply within {self.timeout:g} s")
        self._sock.settimeout(left)
        try:
            data = self._sock.recv(65536)
        except socket.timeout:
            raise NodeError(f"{command}: no complete reply within {self.timeout:g} s") from None
        except OSError as exc:
            if self._handshaking:
                raise _handshake_failure(exc) from None
            raise NodeError(f"{command}: {_ssl_reason(exc)}") from None
        if not data and self._handshaking:
            raise _handshake_failure(None)
        self._handshaking = False
        if not data:
            said = f" after {_shown(bytes(self._buffer))}" if self._buffer else ""
            raise NodeError(f"{command}: connection closed mid-reply{said}")
        self._buffer += data

    def version(self) -> str:
        line = next(self.lines("version"))
        if not line.startswith("VERSION "):
            raise NodeError(f"version: unexpected reply {_shown(line)}: not memcached")
        return line[len("VERSION "):].strip()

    def stats(self, command: str) -> list[str] | None:
        """The ``STAT`` lines of a stats command, up to its ``END``."""
        lines = []
        for line in self.lines(command):
            if line == "END":
                return lines
            if line == "ERROR" and not lines and command == "stats settings":
                return None           # 1.2 has no stats settings
            if not line.startswith("STAT "):
                raise NodeError(f"{command}: unexpected reply {_shown(line)}")
            lines.append(line)
        raise AssertionError("unreachable")  # lines() raises or yields until END

    def metadump(self, limit: int) -> tuple[list[str], str | None]:
        """Up to ``limit`` ``key=... size=...`` lines of ``lru_crawler metadump all``.

        Returns the lines and, when the server will not dump (crawler
        disabled or busy), its reason.  Past ``limit`` the connection is
        closed: the crawler stops on its own when the client goes away.
        """
        lines: list[str] = []
        deadline = time.monotonic() + self.timeout
        for line in self.lines("lru_crawler metadump all", deadline, most=limit + 2):
            if line == "END":
                return lines, None
            if line == "OK" and not lines:   # 1.6.45 acknowledges the command before the first item
                continue
            if not line.startswith("key="):
                return lines, line
            lines.append(line)
            if len(lines) >= limit:
                self.close()
                return lines, None
        raise AssertionError("unreachable")


def _shown(text) -> str:
    """A short, printable rendering of what a server sent."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    text = text if len(text) <= 40 else text[:40] + "..."
    return repr(text)


def read_node(address: Address, timeout: float, sample_items: int = 0, tls: ssl.SSLContext | None = None
              ) -> dict[str, list[str]]:
    """The raw replies of one node: ``{command: lines}`` for every command of :data:`COMMANDS`.

    ``version`` holds the version text alone; with ``sample_items`` the
    ``metadump`` entry holds up to that many metadump lines (and
    ``metadump_error`` the server's reason when it gave none); ``tls``: see
    :func:`tls_context`.
    """
    with Connection(address, timeout, tls) as conn:
        replies: dict[str, list[str]] = {"version": [conn.version()]}
        for command in COMMANDS[1:]:
            lines = conn.stats(command)
            if lines is not None:
                replies[command] = lines
        if sample_items:
            lines, reason = conn.metadump(sample_items)
            replies["metadump"] = lines
            if reason is not None:
                replies["metadump_error"] = [reason]
    return replies


def read_nodes(addresses: Sequence[Address], timeout: float, sample_items: int = 0,
               tls: ssl.SSLContext | None = None) -> list[dict[str, list[str]] | NodeError]:
    """:func:`read_node` for every address at once (one thread each), in order, all with the same
    ``tls`` settings.

    A node that fails gives its :class:`NodeError` in its place, so a pool of
    dead nodes takes one timeout, not one per node.
    """
    from concurrent.futures import ThreadPoolExecutor

    def one(address: Address):
        try:
            return read_node(address, timeout, sample_items, tls)
        except NodeError as exc:
            return exc

    if len(addresses) <= 1:
        return [one(a) for a in addresses]
    with ThreadPoolExecutor(max_workers=min(32, len(addresses))) as pool:
        return list(pool.map(one, addresses))


def poll(addresses: Sequence[Address], timeout: float, seconds: float, count: int | None = None,
         tls: ssl.SSLContext | None = None, sample_items: int = 0,
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
         ) -> Iterator[tuple[float, list[dict[str, list[str]] | NodeError]]]:
    """:func:`read_nodes` every ``seconds`` (``count`` times, or for ever): ``(elapsed, replies)``.

    ``elapsed`` is when the reading began, in seconds after the first one began,
    on this machine's monotonic clock: memcached's own ``time`` counts whole
    seconds (1.6.18 memcached.c ``clock_handler``), too coarse for a reading a
    second.  Readings keep to a steady pace (the n-th is due ``n x seconds``
    after the first); one that took longer than ``seconds`` makes the next
    begin at once.  ``sample_items`` applies to the last reading of a counted
    poll only.
    """
    start = clock()
    number = 0
    while count is None or number < count:
        due = start + number * seconds
        now = clock()
        if due > now:
            sleep(due - now)
            now = clock()
        last = count is not None and number == count - 1
        yield now - start, read_nodes(addresses, timeout, sample_items if last else 0, tls)
        number += 1
