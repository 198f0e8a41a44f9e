"""A person at a terminal is told, once, when the memcached on PATH is not the release slabcalc assumes."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from memcached_server import require_memcached, server_version


def _run_at_a_terminal(args, path_dir):
    """``slabcalc ARGS`` with stderr on a pseudo-terminal (stdout piped): (stdout, what the terminal got)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PATH": path_dir + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-m", "slabcalc", *args], stdout=subprocess.PIPE, stderr=follower,
                          stdin=subprocess.DEVNULL, env=env, timeout=60, check=False)
    os.close(follower)
    said = b""
    try:
        while chunk := os.read(leader, 4096):
            said += chunk
    except OSError:          # the terminal's other end is closed: all is read
        pass
    os.close(leader)
    assert proc.returncode == 0, said
    return proc.stdout.decode(), said.decode().replace("\r\n", "\n")


def test_fidelity_a_terminal_is_told_the_local_release_once():
    binary = require_memcached()
    local = server_version(binary)
    assumed = "1.6.45" if local != "1.6.45" else "1.6.18"
    folder = os.path.dirname(binary)
    out, said = _run_at_a_terminal(["report", "examples/items.csv", "--vs", "-m 128"], folder)
    note = (f"note: this machine runs memcached {local} (memcached on PATH); slabcalc assumes 1.6.45: "
            f"give --profile {local} to model the local one")
    if local != "1.6.45":
        assert said.count(note) == 1, said            # once, though --vs models a second configuration
    assert "note: this machine runs" not in out          # never on stdout
    # named releases, and pipes, are not told
    _, named = _run_at_a_terminal(["classes", "--profile", assumed], folder)
    assert "this machine runs" not in named
    piped = subprocess.run([sys.executable, "-m", "slabcalc", "classes"], capture_output=True, text=True,
                           env={**os.environ, "PATH": folder + os.pathsep + os.environ.get("PATH", "")},
                           timeout=60, check=False)
    assert piped.returncode == 0 and "this machine runs" not in piped.stderr
