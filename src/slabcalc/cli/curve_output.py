"""``simulate -m A,B,C``: the hit-ratio curve (and ``--target-hit-ratio``'s limit) replayed, then printed as a
table, CSV or JSON, with its progress on a terminal."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.errors import Refusal
from slabcalc.cli.tables import CURVE_COLUMNS


def print_curve(record: dict, fmt: str) -> None:
    from slabcalc.records.curve import CURVE_FIELDS

    if fmt == "json":
        click.echo(output.render_json(record))
        return
    if fmt == "csv":
        click.echo(f"model: {record['model']['text']}", err=True)
        click.echo(output.render_rows(record["curve"], CURVE_FIELDS, "csv"))
        if record.get("target_limit_mb") is not None:      # not reached: the error says so
            click.echo(f"target: {record['target']['text']}", err=True)
        return
    rows = [{**row, **{name: _ratio(row[name]) for name in ("hit_ratio", "ideal_lru_hit_ratio")}}
            for row in record["curve"]]
    click.echo(output.render_rows(rows, CURVE_COLUMNS, fmt,
                                  essential=("limit_maxbytes", "hit_ratio", "ideal_lru_hit_ratio")))
    click.echo()
    click.echo(output.render_pairs(_curve_lines(record), fmt))


def _ratio(value: float | None) -> str | None:
    return None if value is None else f"{value:.4f}"


def _curve_lines(record: dict) -> list[tuple[str, str]]:
    i = record["input"]
    lines = [
        ("model", record["model"]["text"]),
        ("input", f"{i['source']} ({i['format']}), {i['rows']} rows, {i['rejected']} rejected"),
        ("replays", f"{len(record['curve'])}, one per -m; each row is what simulate -m N prints"),
        ("ideal_lru", record["ideal_lru"]),
    ]
    if record.get("target_limit_mb") is not None:
        lines.append(("target", record["target"]["text"]))
    if "sample" in record:
        s = record["sample"]
        lines.append(("sample", f"{s['sampled_ops']} of {s['ops']} operations replayed at each -m (keys hashing "
                                f"under {s['rate']:.4g}), counts scaled back by {s['scale']:.4g}; the ideal "
                                f"LRU in {s['rate']:.4g} of each -m"))
    return lines


def progress_printer(clock=None):
    """Each -m as it finishes, on stderr (the caller asks only when stderr is a terminal), with an estimate of
    the time left: the time since the first call's clock reading over the limits done, times those left
    (``clock``: seconds, ``time.monotonic`` by default)."""
    import time

    clock = clock or time.monotonic
    start = clock()

    def show(point, done: int, total: int) -> None:
        ratio = point.hit_ratio
        left = "" if done >= total else f", about {duration((clock() - start) / done * (total - done))} left"
        click.echo(f"\r-m {point.limit_maxbytes >> 20} replayed ({done} of {total})"
                   + ("" if ratio is None else f", hit ratio {ratio:.4f}") + left + " " * 8, err=True)
    return show


def duration(seconds: float) -> str:
    """``seconds`` to the second, in hours, minutes and seconds: ``1h 02m 05s``, ``3m 20s``, ``7s``."""
    whole = round(seconds)
    hours, minutes, secs = whole // 3600, whole // 60 % 60, whole % 60
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def run_curve(every_settings, file, input_format, key_length, strict, uptime, sample, plot, fmt, target=None,
              settings_at=None, time_zero=None):
    """``-m A,B,C``: the workload replayed at each limit, and through the ideal LRU of each; with a
    ``target`` hit ratio, the smallest -m that reaches it (``settings_at(mb)``: the settings of one -m)."""
    import sys

    from slabcalc.analysis.curve import TargetError, hit_ratio_curve, target_limit
    from slabcalc.cli.sampling import refusing_coarse
    from slabcalc.cli.common import draw, input_workload, say_rejected
    from slabcalc.inputs.compact import compact_copy
    from slabcalc.records.curve import curve_record, target_text

    progress = progress_printer() if sys.stderr.isatty() else None
    found = None
    with input_workload(file, "simulate", input_format=input_format, key_length=key_length, strict=strict,
                        key_max=every_settings[0].profile.key_max, time_zero=time_zero, sample=sample) \
            as (read, accounting), compact_copy(read) as (ops, unfit):    # read once (a sample: the sample
        #                                                                  alone), replayed by each -m and the search
        left_out = (accounting.left_out, accounting.left_out_gets) if accounting.sample is not None else None
        if unfit is not None:
            click.echo(f"simulate: the workload is held in memory (about 230 bytes a request), not in a compact "
                       f"copy: {unfit}", err=True)
        curve = refusing_coarse(lambda ops: hit_ratio_curve(every_settings, ops, boot=uptime, sample=sample,
                                                             progress=progress, left_out=left_out))(ops)
        if target is not None:
            try:
                found = refusing_coarse(lambda ops: target_limit(curve, target, settings_at, ops, boot=uptime,
                                                                 sample=sample, left_out=left_out))(ops)
            except TargetError as exc:
                raise Refusal(f"--target-hit-ratio: {exc}") from None
    say_rejected(accounting)
    record = curve_record(curve, accounting, found)
    print_curve(record, fmt)
    if plot:
        draw("plot_curve", record["curve"], plot)
    if found is not None and found.limit_mb is None:
        raise Refusal(f"--target-hit-ratio: {target_text(found)}")


def settings_or_none(make):
    """``make(mb)``'s settings, None for a limit the release refuses to start with (the search's floor)."""
    def at(mb: int):
        try:
            return make(mb)
        except Refusal:
            return None
    return at
