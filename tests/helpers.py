"""What many test files share, in one place: running the command line, and the engine's requests.

``run("report", "examples/items.csv", input=...)`` runs slabcalc as a terminal would: stdout and
stderr come apart (``result.stdout``, ``result.stderr``; ``result.output`` has both, as a terminal
shows them); ``env`` sets variables such as ``COLUMNS`` for the run.  ``doc(...)`` is a run that must
succeed, its stdout read as JSON.

``s``/``op`` are the engine's requests, ``(time, op, key, key length, value size, ttl, flags)``;
``settings`` a 1.6.18 (by default) configured with memcached's own flags; ``o_words`` the ``-o``
words of such flags, as ``simulate`` takes them.  Fixtures shared by files are in conftest.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from slabcalc import configure, load_profile
from slabcalc.cli import cli
from slabcalc.engines.simulate import SET

ROOT = Path(__file__).resolve().parent.parent          # the repository
PER_PAGE_4 = 5461      # 1.6.18 defaults: class 4 (chunk 192) holds 5461 items of a 1 MiB page


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(cli, list(args), input=input, prog_name="slabcalc")


def doc(*args: str) -> dict:
    """``slabcalc ARGS --format json``'s document; the run must succeed."""
    result = run(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def settings(*args: str, release: str = "1.6.18"):
    return configure(load_profile(release), list(args))


def o_words(args) -> list[str]:
    """The words of every ``-o`` in ``args``: ``["-m", "2", "-o", "a,b=1"]`` -> ``["a", "b=1"]``."""
    return [w for i, a in enumerate(args) if i and args[i - 1] == "-o" for w in a.split(",")]


def s(t, key, value=100, ttl=0, flags=0):
    """A set of ``key`` at ``t`` seconds."""
    return (t, SET, key, len(key), value, ttl, flags)


def op(t, kind, key, ttl=0):
    """A request without a value (get, delete, touch) of ``key`` at ``t`` seconds."""
    return (t, kind, key, len(key), 0, ttl, 0)


def mover_wake_gaps(release: str, runs: int = 15) -> tuple[list[int], object]:
    """The microseconds between the page-mover thread's first ``runs`` wakes on an idle server of
    ``release`` (no page to move): the sleep rule of its ``slabs_mover.c``; and the thread."""
    from slabcalc.engines.background import background_for
    from slabcalc.engines.engine import Engine

    config = configure(load_profile(release), [])
    e = Engine(config, background_for(config))
    (thread,) = [a for a in e.actors if type(a).__name__ == "MoverThread"]
    wakes = []
    for _ in range(runs):
        wakes.append(thread.next_wake)
        e.now = e.epoch
        thread.step()
    return [b - a for a, b in zip(wakes, wakes[1:])], thread


def duckdb_table(con, name: str, columns: str, rows) -> None:
    """Table ``name`` (``columns``: its SQL column list) filled with ``rows`` in one read of a CSV
    file: DuckDB's ``executemany`` inserts a row a statement (3 000 rows, 10-20 s on a loaded
    machine).  ``None`` is written as ``\\N``, which DuckDB reads as NULL; an empty string stays one."""
    import csv
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".csv", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_ALL).writerows(
            [r"\N" if c is None else c for c in row] for row in rows)
        f.flush()
        con.execute(f'CREATE TABLE {name} ({columns})')
        types = {c.rsplit(" ", 1)[0].strip(): c.rsplit(" ", 1)[1] for c in columns.split(",")}
        spec = ", ".join(f"'{k.strip(chr(34))}': '{v}'" for k, v in types.items())
        con.execute(f"INSERT INTO {name} SELECT * FROM read_csv('{f.name}', header = false, "
                    f"columns = {{{spec}}}, quote = '\"', escape = '\"', nullstr = '\\N')")


def suboption_refusals_differ(words, path: str, release: str = "1.6.18") -> list:
    """The ``-o`` words on which slabcalc's reading (``background_for``: :class:`Refused` with the
    server's status and message) differs from the memcached at ``path`` started with the word:
    ``(word, slabcalc's (status, message), the server's)`` each; every word is one both refuse."""
    from memcached_server import refuses

    from slabcalc.engines.background import background_for
    from slabcalc.model.settings import Refused

    config = configure(load_profile(release), ["-m", "64"])
    out = []
    for word in words:
        try:
            background_for(config, [word])
            ours = (0, "")
        except Refused as refused:
            ours = (refused.exit_status, refused.message)
        theirs = refuses(word, path)
        if ours != theirs:
            out.append((word, ours, theirs))
    return out
