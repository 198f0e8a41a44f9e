"""The one way in: every command's input file opened and read by the reader its form needs.

Commands do not pick readers; they pass options.  :func:`open_items` reads an item file -- a CSV, a
column of values, ``lru_crawler metadump`` lines or ``stats sizes`` output (:mod:`slabcalc.inputs.items`,
told apart by the first line), or a Parquet, JSON-lines or gzipped-CSV file through DuckDB
(:mod:`slabcalc.inputs.warehouse`, by its suffix).  :func:`open_workload` reads ``simulate``'s
operations -- a CSV or twitter trace (:mod:`slabcalc.inputs.workload`), libCacheSim's oracleGeneral
(:mod:`slabcalc.inputs.traces`) or a warehouse file.  :func:`read_dumps` reads saved ``stats``
replies, and :func:`sampled_items` the metadump lines ``stats --read-items`` read from a server.

Every path reads its input once, as the rows are consumed: the row readers a block at a time,
DuckDB out of core (its answer is the distinct item groups).  So the rows must be consumed inside
the ``with`` block, and the :class:`~slabcalc.inputs.rows.Accounting` is final when it ends.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterable, Iterator

from slabcalc.errors import InputError, ValueRefused


def is_warehouse(path: str) -> bool:
    """Whether ``path`` is read through DuckDB (by its suffix; standard input never is).  A gzipped CSV
    is when DuckDB is installed, and read by the row readers with the standard library when it is not."""
    from slabcalc.inputs.warehouse import reader_for

    function = path != "-" and reader_for(path)
    if not function:
        return False
    if function == "read_csv_auto":
        import importlib.util

        try:
            return importlib.util.find_spec("duckdb") is not None
        except (ImportError, ValueError):
            return False
    return True


@contextlib.contextmanager
def open_items(path: str, *, settings=None, key_length: int | None = None, strict: bool = False,
               progress: Callable[[int], None] | None = None, columns: bool = False,
               arrivals: Callable[[object], None] | None = None,
               names: Callable[[Iterator], None] | None = None, hot: str | None = None) -> Iterator[tuple]:
    """``(rows, accounting)`` of the items in ``path`` (``-``: standard input), in a ``with`` block.

    ``rows`` are :func:`~slabcalc.inputs.items.read_items` triples ``(Item, count, rows)``;
    ``settings`` give the longest key (the profile's ``key_max``) and, for a warehouse file, the
    sizes DuckDB works out.  ``key_length``, ``strict``, ``progress``, ``columns``, ``arrivals`` and
    ``names`` are read_items' (``names``: key names, which a warehouse file does not give).  ``hot``
    (``fetched`` or SECONDS) keeps a metadump's items in use, as they are read; the lines it left
    out are ``accounting.left_out`` once the block ends.

    An input that cannot be opened or read is an :class:`InputError` (naming the file, and the line
    and value where there is one); an option the input cannot serve a :class:`ValueRefused`.
    """
    key_max = settings.profile.key_max if settings is not None else None
    if is_warehouse(path):
        from slabcalc.inputs.warehouse import kind_of, read_warehouse

        if names is not None:
            raise ValueRefused(f"--group-by needs the keys themselves: give it a metadump or CSV, not a "
                               f"{kind_of(path)} file")
        if hot is not None:
            raise ValueRefused(f"--hot reads metadump lines: give it a metadump, not a {kind_of(path)} file")
        yield read_warehouse(path, settings, key_length)
        return
    from slabcalc.inputs.items import read_items
    from slabcalc.inputs.rows import open_input

    stream, source = open_input(path)
    with stream:
        kept = None
        if hot is not None:
            stream, kept = _hot(stream, source, hot)
        rows, accounting = read_items(stream, source, key_length=key_length, strict=strict, progress=progress,
                                      columns=columns, arrivals=arrivals, key_max=key_max, names=names)
        yield rows, accounting
        if kept is not None:
            accounting.left_out = kept.left_out


def _hot(stream, source: str, rule: str):
    """``hot``: the metadump's lines of items in use as a stream that keeps them as it is read, and the
    :class:`~slabcalc.inputs.metadump.HotLines` that counts those left out.  The input is not held
    (issue 30), but for SECONDS from a pipe: SECONDS counts back from the newest la=, which a file
    gives in a first pass."""
    from itertools import chain

    from slabcalc.inputs.lines import LineStream, split_lines
    from slabcalc.inputs.metadump import HotLines, newest_access

    if rule != "fetched" and not rule.isdigit():
        raise ValueRefused(f"--hot: {rule!r} is neither 'fetched' nor a number of seconds")
    lines, head = split_lines(stream), []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    first = head[-1].strip() if head else ""
    if not (first.startswith("key=") or first.startswith("lru_crawler metadump") or first in ("OK", "END")):
        raise ValueRefused(f"--hot reads la= and fetch= of a metadump; {source} is not one "
                           f"(first line {first[:40]!r})")
    lines, newest = chain(head, lines), None
    if rule != "fetched" and stream.seekable():
        newest = newest_access(lines)
        stream.seek(0)
        lines = split_lines(stream)
    elif rule != "fetched":
        lines = list(lines)
        newest = newest_access(lines)
    hot = HotLines(lines, rule, newest)
    return LineStream(hot), hot


@contextlib.contextmanager
def open_workload(path: str, *, input_format: str = "auto", key_length: int | None = None, strict: bool = False,
                  key_max: int | None = None, progress: Callable[[int], None] | None = None,
                  time_zero: int | None = None, sample: float | None = None) -> Iterator[tuple]:
    """``(ops, accounting)`` of the workload in ``path`` (``-``: standard input), in a ``with`` block.

    ``input_format`` is ``auto`` (oracleGeneral by the file's suffix, a warehouse file by its suffix,
    else CSV or twitter by the first line), ``csv``, ``twitter`` or ``oracleGeneral``; the ops are
    :func:`~slabcalc.inputs.workload.read_workload`'s (``time_zero``: the unix time of the workload's
    time 0, for a ttl over 30 days, which memcached reads as a unix time).  ``sample``: the reader keeps
    only the keys of that sample where it can (the accounting's ``sample`` is then set; else it is None
    and every operation is read: the replay samples them).
    """
    from slabcalc.inputs.traces import is_oracle_general

    if input_format == "oracleGeneral" or (input_format == "auto" and is_oracle_general(path)):
        from slabcalc.inputs.traces import read_oracle_general

        from slabcalc.inputs.rows import open_binary

        stream, source = open_binary(path)
        with stream:
            yield read_oracle_general(stream, source, key_length=key_length, strict=strict, sample=sample)
        return
    from slabcalc.inputs.workload import read_workload

    form = None if input_format == "auto" else input_format
    if input_format in ("auto", "csv", "twitter") and is_warehouse(path):
        from slabcalc.inputs.warehouse import TraceLines, kind_of

        with TraceLines(path) as lines:
            ops, accounting = read_workload(iter(lines), path, key_length=key_length, strict=strict, form=form,
                                            key_max=key_max, time_zero=time_zero, sample=sample)
            yield ops, accounting
        accounting.format = accounting.format.replace("csv", kind_of(path), 1) + ", read through DuckDB"
        return
    from slabcalc.inputs.rows import open_input

    stream, source = open_input(path)
    with stream:
        yield read_workload(stream, source, key_length=key_length, strict=strict, progress=progress, form=form,
                            key_max=key_max, time_zero=time_zero, sample=sample)


def read_dumps(paths: Iterable[str]):
    """One node's :class:`~slabcalc.inputs.dumps.Dump` from saved ``stats`` replies in ``paths``
    (``-``: standard input), in any arrangement; an unreadable file is an :class:`InputError`."""
    from slabcalc.inputs.dumps import parse_dump

    texts = []
    for name in paths:
        from slabcalc.inputs.rows import open_text

        try:
            f = open_text(name, errors="replace")
            try:
                texts.append(("<stdin>" if name == "-" else name, f.read()))
            finally:
                if name == "-":
                    if f is not sys.stdin:
                        f.detach()              # standard input stays open
                else:
                    f.close()
        except OSError as exc:
            raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from None
    return parse_dump(texts)


def sampled_items(lines: list[str], source: str, settings) -> tuple[list, object, int]:
    """``(triples, accounting, key length)`` of metadump ``lines`` read from a server (``stats
    --read-items``): the items, and the most common key length to split chunked items with."""
    import io

    from slabcalc.inputs.items import read_items
    from slabcalc.inputs.metadump import metadump_key_length

    rows, accounting = read_items(io.StringIO("\n".join(lines) + "\nEND\n"), source,
                                  key_max=settings.profile.key_max)
    return list(rows), accounting, metadump_key_length(lines)
