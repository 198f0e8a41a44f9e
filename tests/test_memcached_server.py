"""Tests for the real-memcached test helper in ``memcached_server.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

try:
    import memcached_server as ms
except ModuleNotFoundError:  # e.g. under --import-mode=importlib
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import memcached_server as ms


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- require_memcached: no memcached needed ----------------------------------


def _without_memcached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ms, "find_memcached", lambda: None)
    monkeypatch.delenv(ms.ENV_VAR, raising=False)


def test_require_memcached_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_memcached(monkeypatch)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        ms.require_memcached()


def test_require_memcached_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_memcached(monkeypatch)
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="memcached not found"):
        ms.require_memcached()


def test_require_memcached_fails_on_bad_env_var(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(ms.ENV_VAR, str(tmp_path / "no-such-memcached"))
    assert ms.find_memcached() is None
    with pytest.raises(pytest.fail.Exception, match=ms.ENV_VAR):
        ms.require_memcached()


def test_find_memcached_prefers_env_var(
    monkeypatch: pytest.MonkeyPatch, memcached: str
) -> None:
    monkeypatch.setenv(ms.ENV_VAR, memcached)
    assert ms.find_memcached() == memcached


def test_free_port_is_bindable() -> None:
    port = ms.free_port()
    assert 0 < port < 65536


# -- against the real server --------------------------------------------------


def test_server_version(memcached: str) -> None:
    version = ms.server_version(memcached)
    assert version.count(".") == 2
    assert all(part.isdigit() for part in version.split("."))


def test_run_vv_default_slab_classes(memcached: str) -> None:
    result = ms.run_vv([], memcached=memcached)
    assert result.started
    assert result.exit_code is None
    assert len(result.class_lines) == 39
    first = "slab class   1: chunk size        96 perslab   10922"
    assert result.class_lines[0] == first
    assert all(line.startswith("slab class") for line in result.class_lines)
    assert "server listening" in result.stderr
    assert "slab class" not in result.stderr


def test_run_vv_bad_factor_does_not_start(memcached: str) -> None:
    result = ms.run_vv(["-f", "1.0"], memcached=memcached)
    assert not result.started
    assert result.exit_code == 1
    assert "Factor must be greater than 1" in result.stderr
    assert result.class_lines == []


def test_run_vv_timeout_is_an_error(tmp_path) -> None:
    # A process that neither listens nor exits: a real memcached can start within the time it
    # takes to wait 0 s (seen once on a loaded machine), so it cannot stand in for one.
    silent = tmp_path / "silent-memcached"
    silent.write_text("#!/bin/sh\nexec sleep 30\n")
    silent.chmod(0o755)
    with pytest.raises(RuntimeError, match="-f"):
        ms.run_vv(["-f", "1.25"], timeout=0.2, memcached=str(silent))


def test_server_round_trip(memcached: str) -> None:
    with ms.MemcachedServer(memcached=memcached) as srv:
        assert srv.version() == ms.server_version(memcached)
        assert srv.set("foo", b"0123456789", flags=0) == "STORED"

        assert srv.stats()["bytes"] == "72"

        per_class, totals = srv.slab_stats()
        assert per_class[1]["chunk_size"] == 96
        assert per_class[1]["used_chunks"] == 1
        assert totals["active_slabs"] == 1
        assert "total_malloced" in totals

        assert srv.item_stats()[1]["mem_requested"] == 72

        # the dump crawls a class's HOT, WARM, COLD and TEMP LRUs in turn, and the LRU maintainer may move
        # the item from HOT to COLD between them: it is then listed twice (seen once in CI's 6 000 tests)
        dump = srv.metadump()
        assert {(d["key"], d["size"], d["cls"]) for d in dump} == {("foo", "72", "1")}
        assert 1 <= len(dump) <= 2

        assert srv.delete("foo") == "DELETED"
        assert srv.delete("foo") == "NOT_FOUND"
        assert srv.metadump() == []


def test_too_large_value_keeps_connection_in_sync(memcached: str) -> None:
    with ms.MemcachedServer(memcached=memcached) as srv:
        reply = srv.set("big", b"x" * (2 * 1024 * 1024))
        assert reply == "SERVER_ERROR object too large for cache"
        assert srv.set("small", b"ok") == "STORED"
        assert srv.stats()["curr_items"] == "1"
        assert srv.stats()["store_too_large"] == "1"


def test_server_args_are_passed(memcached: str) -> None:
    with ms.MemcachedServer(["-f", "1.5", "-n", "40"], memcached=memcached) as srv:
        settings = srv.stats("settings")
        assert settings["growth_factor"] == "1.50"
        assert settings["chunk_size"] == "40"


def test_server_that_cannot_start_raises(memcached: str) -> None:
    with pytest.raises(RuntimeError, match="Factor must be greater than 1"):
        with ms.MemcachedServer(["-f", "1.0"], memcached=memcached):
            pass


def test_server_process_is_gone_after_with(memcached: str) -> None:
    with ms.MemcachedServer(memcached=memcached) as srv:
        pid = srv.pid
        assert _pid_exists(pid)
    assert not _pid_exists(pid)


def test_server_process_is_gone_after_exception(memcached: str) -> None:
    with pytest.raises(ZeroDivisionError):
        with ms.MemcachedServer(memcached=memcached) as srv:
            pid = srv.pid
            1 / 0
    assert not _pid_exists(pid)


def test_invalid_key_is_rejected_client_side(memcached: str) -> None:
    with ms.MemcachedServer(memcached=memcached) as srv:
        with pytest.raises(ValueError):
            srv.set("has space", b"v")
        with pytest.raises(ValueError):
            srv.set("k" * 251, b"v")
        assert srv.set("k" * 250, b"v") == "STORED"


def _taken_then_free(monkeypatch: pytest.MonkeyPatch, squatter: ms.MemcachedServer) -> None:
    """free_port() first returns the port another memcached serves (a concurrent test run)."""
    ports = [squatter.port]
    real = ms.free_port
    monkeypatch.setattr(ms, "free_port", lambda: ports.pop() if ports else real())


def test_a_taken_port_is_retried_by_the_server(memcached: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with ms.MemcachedServer(memcached=memcached) as squatter:
        _taken_then_free(monkeypatch, squatter)
        with ms.MemcachedServer(memcached=memcached) as server:
            assert server.port != squatter.port
            assert server.stats()["pid"] == str(server.pid)


def test_a_taken_port_is_retried_by_run_vv(memcached: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with ms.MemcachedServer(memcached=memcached) as squatter:
        _taken_then_free(monkeypatch, squatter)
        result = ms.run_vv([], memcached=memcached)
    assert result.started and result.class_lines
