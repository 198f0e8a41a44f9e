"""``simulate``'s input: a workload file (CSV, twitter, oracleGeneral or a warehouse file) opened,
read and handed to one replay function, its errors made one line."""

from __future__ import annotations

import sys
from typing import Callable

from slabcalc.cli.common import open_input_for
from slabcalc.cli.errors import DataError


def replay_file(file: str, input_format: str, key_length, strict: bool, run: Callable, key_max: int | None = None):
    """``(run(ops), accounting)`` for the workload in FILE (``-``: standard input) read as
    ``input_format`` (auto, csv, twitter, oracleGeneral); ``key_max``: the profile's longest key."""
    from slabcalc.inputs.traces import is_oracle_general
    from slabcalc.inputs.warehouse import reader_for

    if input_format == "oracleGeneral" or (input_format == "auto" and is_oracle_general(file)):
        return _oracle_general(file, key_length, strict, run)
    form = None if input_format == "auto" else input_format
    if input_format in ("auto", "csv", "twitter") and file != "-" and reader_for(file):
        return _warehouse(file, key_length, strict, form, run, key_max)
    from slabcalc.inputs.workload import read_workload

    with open_input_for(file, "simulate", "a workload", "ops.csv", value_errors=True) as (stream, source, progress):
        ops, accounting = read_workload(stream, source, key_length=key_length, strict=strict, progress=progress,
                                        form=form, key_max=key_max)
        return run(ops), accounting


def _warehouse(file, key_length, strict, form, run, key_max):
    """A Parquet, JSON-lines or gzipped-CSV workload, its rows read through DuckDB."""
    from slabcalc.errors import SlabcalcError
    from slabcalc.inputs.warehouse import TraceLines, kind_of
    from slabcalc.inputs.workload import read_workload

    try:
        with TraceLines(file) as lines:
            ops, accounting = read_workload(iter(lines), file, key_length=key_length, strict=strict, form=form,
                                            key_max=key_max)
            result = run(ops)
    except SlabcalcError as exc:
        raise DataError(str(exc) if str(exc).startswith(file) else f"{file}: {exc}") from None
    accounting.format = accounting.format.replace("csv", kind_of(file), 1) + ", read through DuckDB"
    return result, accounting


def _oracle_general(file, key_length, strict, run):
    """A libCacheSim oracleGeneral file (binary)."""
    from slabcalc.errors import SlabcalcError
    from slabcalc.inputs.traces import read_oracle_general

    try:
        stream = sys.stdin.buffer if file == "-" else open(file, "rb")
    except OSError as exc:
        raise DataError(f"{file}: cannot read: {exc.strerror or exc}") from None
    with stream:
        ops, accounting = read_oracle_general(stream, "<stdin>" if file == "-" else file, key_length=key_length,
                                              strict=strict)
        try:
            return run(ops), accounting
        except SlabcalcError as exc:
            raise DataError(str(exc)) from None
