"""Issue 41, what an operator expects at a terminal: tables as wide as the terminal itself (not 120 when
``COLUMNS`` is unset), and ``--plot`` without matplotlib refused before any work is done."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

from helpers import ROOT, run


def _at_terminal(args: list[str], columns: int) -> str:
    """slabcalc ARGS with stdout on a pseudo-terminal ``columns`` wide, ``COLUMNS`` unset: what it prints."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    chunks = []
    try:
        proc = subprocess.Popen([sys.executable, "-m", "slabcalc", *args], stdout=side, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
        os.close(side)
        side = -1
        while True:                  # read as it writes: a terminal holds only a few KiB
            try:
                chunk = os.read(main, 65536)
            except OSError:          # EIO: the other side is closed and all was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=120)
    finally:
        if side >= 0:
            os.close(side)
        os.close(main)
    assert proc.returncode == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.parametrize("args", [["report", "examples/items.csv"], ["classes"]], ids=" ".join)
def test_tables_fit_an_80_column_terminal_without_COLUMNS(args):
    """Before: width() read only $COLUMNS, so at an 80-column terminal the report was 120 wide."""
    text = _at_terminal(args, 80)
    widest = max(text.splitlines(), key=len)
    assert len(widest) <= 80, widest
    assert len(widest) > 60                      # a table was printed, as wide as fits


def test_a_wider_terminal_gets_wider_tables():
    narrow = max(map(len, _at_terminal(["report", "examples/items.csv"], 80).splitlines()))
    wide = max(map(len, _at_terminal(["report", "examples/items.csv"], 200).splitlines()))
    assert wide > narrow


def test_a_pipe_still_gets_120_columns():
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "slabcalc", "report", "examples/items.csv"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    widest = max(map(len, proc.stdout.splitlines()))
    assert 80 < widest <= 120


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib not installed, as far as the command can tell."""
    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.parametrize("command", [["simulate", "-m", "4"], ["report"]], ids=" ".join)
def test_plot_without_matplotlib_is_refused_before_the_input_is_read(tmp_path, no_matplotlib, command):
    """The input's fault (a bad row under --strict, exit 1) is met only once the work starts: before,
    the work ran (to that fault, or to its end) and only then was the plot found impossible."""
    bad = tmp_path / "bad.csv"
    bad.write_text("key,value_size\nabc,10\nabc,-5\n" if command[0] == "simulate" else "key,value\n10,10\n10,x\n")
    result = run(command[0], str(bad), *command[1:], "--strict", "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == ["Error: --plot needs matplotlib: pip install 'slabcalc[plot]'"]
    assert not (tmp_path / "p.png").exists()


def test_plot_with_matplotlib_still_waits_for_the_work(tmp_path):
    """With matplotlib there, the same bad input is the error (the check is of the plot, not of the input)."""
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("key,value\n10,10\n10,x\n")
    result = run("report", str(bad), "--strict", "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 1 and "x" in result.stderr
