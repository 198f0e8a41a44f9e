"""``optimize``: the tables, the notes under the flags, and the verdict."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.tables import OPTIMIZE_COLUMNS

HITS_HEADINGS = ("hits", "hits_change_pct")


def print_optimum(record, limit, fmt) -> None:
    if fmt == "json":
        click.echo(output.render_json(record))
        return
    validated = record["validate"] is not None
    held = ("held_out_page_bytes", "held_out_gain_pct") if validated else ()
    # a table heads the get hits "hits" (room for the other columns); csv keeps memcached's name
    hits = (("get_hits", "get_hits_change_pct") if fmt == "csv" else HITS_HEADINGS) if "workload" in record else ()
    columns = [c for c in OPTIMIZE_COLUMNS if c != "capacity" or limit is not None] + list(held) + list(hits)
    baseline, *candidates = [_row(c, validated, fmt) for c in [record["baseline"]] + record["candidates"]]
    if fmt == "csv":
        click.echo(output.render_rows([baseline] + candidates, ["flags"] + columns, "csv"))
        return
    firsts = sorted((c for c in candidates if c is next(
        d for d in candidates if d["space"] == c["space"])), key=lambda c: -c["gain_pct"])
    click.echo(output.render_rows([baseline] + firsts, columns, fmt,
                                  essential=("space", "page_bytes", "capacity", "gain_pct", "held_out_gain_pct",
                                             *HITS_HEADINGS)))
    click.echo()
    click.echo(f"flags for memcached {record['baseline']['release']}:")
    click.echo(_flags(firsts, fmt))
    for line in _flag_notes(firsts):
        click.echo(line)
    if "hot" in record:
        click.echo()
        click.echo(output.note(f"optimised for the items in use ({_hot_text(record['hot']['rule'])}): "
                               f"{record['hot']['left_out']} metadump items left out"))
    if "workload" in record:
        w = record["workload"]
        click.echo()
        click.echo(output.note(f"hits: {w['cmd_get']} gets of {w['source']} replayed under -m {w['memory_limit_mb']} "
                               f"by simulate's engine; the baseline hits {record['baseline']['get_hits']}"))
        for c in firsts:
            if c.get("get_hits_change_pct", 0) < 0:
                click.echo(output.note(f"warning: {c['flags']} cuts hits by {-c['get_hits_change_pct']:.2f}% "
                                       f"({record['baseline']['get_hits']} -> {c['get_hits']})"))
    click.echo()
    said = _validation(record)
    if said:
        click.echo(output.note(said))
    click.echo(_verdict(record, limit))
    said = _stability(record)
    if said:
        click.echo(output.note(said))
    for said in _resampled(record):
        click.echo(output.note(said))


def _row(candidate: dict, validated: bool, fmt: str) -> dict:
    """A candidate as a table row: with --validate, its held-out figures as columns of their own; a
    table heads its get hits ``hits``."""
    held = {"held_out_page_bytes": candidate["held_out"]["page_bytes"],
            "held_out_gain_pct": candidate["held_out"]["gain_pct"]} if validated else {}
    hits = dict(zip(HITS_HEADINGS, (candidate["get_hits"], candidate["get_hits_change_pct"]))) \
        if fmt != "csv" and "get_hits" in candidate else {}
    return {**candidate, **held, **hits}


def _validation(record) -> str | None:
    """How the verdict was scored: on items held back from the search, or on every item, and why."""
    from slabcalc.analysis.optimize import MIN_HELD_OUT

    if record["validate"] is not None:
        pct = round(100 * record["validate"])
        fresh = (" counted at the mix's full size, and on fresh samples of the mix drawn from them"
                 if record["verdict"]["on"] == "fresh" else "")
        return (f"validated: optimised on {100 - pct}% of the items and scored on the other {pct}%{fresh} "
                f"({record['held_out_items']} items held back at random, --seed {record['seed']}); a change is "
                f"recommended only when it gains {record['verdict']['margin_pct']:g}% or more on them, a margin "
                f"for drift")
    if record["validate_asked"]:
        return (f"not validated: too few items to hold back {MIN_HELD_OUT} of them; optimised and scored on "
                f"every item")
    return None


def _flags(candidates, fmt) -> str:
    """The flags of each space: a two-column table where it fits the width, else each flag string on a
    line of its own under its space, indented, whole (a flag string is pasted, never wrapped)."""
    table = output.render_rows(candidates, ("space", "flags"), fmt, whole=True)
    if fmt != output.TABLE or output.fits_width(table):
        return table
    return "\n".join(f"{c['space']}:\n  {c['flags']}" for c in candidates)


def _flag_notes(candidates) -> list[str]:
    """Under the flags: where the same words mean something else, and the class-cap trap."""
    from slabcalc.analysis.advice import Elsewhere

    lines = []
    for c in candidates:
        for e in c["elsewhere"]:
            first, _, last = e["releases"].partition("-")
            note = Elsewhere(first, last or first, e["refused"], e["classes"], e["flags"])
            lines.append(output.note(f"note: {note.text(c['flags'])}"))
        if c["class_cap"]:
            lines.append(output.note(f"warning: {c['flags']}: {c['class_cap']}"))
    return [""] + lines if lines else []


def _stability(record) -> str | None:
    """Whether another sample of the mix would choose the same: the share of the fresh samples in which
    the best is best, and the others within the noise."""
    why, best = record["verdict"], record["best"]
    if why.get("stable") is None or record["defaults_fine"]:
        return None
    if why["stable"] and record["resamples"] and not why["within_noise"]:
        return None     # the resamples' line says more: whether the flags themselves come again
    share = best["fresh"]["best_in_pct"]
    others = "; ".join(f"{c['space']} {c['flags']} gains {c['gain_pct']:.2f}% (best in {c['best_in_pct']:g}%)"
                       for c in why["within_noise"])
    if why["stable"]:
        said = f"fresh samples: {best['space']} is the best in {share:g}% of them"
        return f"{said}; within the noise: {others}" if others else said
    return (f"fresh samples: {best['space']} is the best in only {share:g}% of them; another "
            f"sample of the mix may choose another; within the noise: {others or 'none'}")


def _choice(draw) -> str:
    """A resample's choice, short: a slab_sizes list by its length (the whole list is in the JSON)."""
    if draw["space"] == "baseline":
        return "no change"
    if draw["space"] == "slab_sizes":
        sizes = draw["flags"].partition("=")[2].count("-") + 1
        return f"a slab_sizes list of {sizes} size{'s' if sizes > 1 else ''}"
    return draw["flags"]


def _resampled(record) -> list[str]:
    """``--resamples``: whether a search on another sample of the mix chooses the same flags, and
    whether the recommended flags' gain holds where it does not; a simpler setting that holds."""
    st = record["resamples"]
    if not st:
        return []
    count, margin = st["count"], st["margin_pct"]
    what = "no change" if st["space"] == "baseline" else "the same flags"
    said = f"{what} on {st['same_flags']} of {count} resamples (--seed {st['seed']})"
    if st["stable"]:      # "defaults are fine" says all when every resample says it too
        return [] if st["space"] == "baseline" else [f"stable: {said}"]
    on = ("on the items each one's search held out, at full size" if st["judged_on"] == "held_out" else
          "on each resample's items")
    ours = "these flags" if st["space"] != "baseline" else "no change"
    other = [(i, d) for i, d in enumerate(st["draws"], 1) if not d["same_flags"]]
    they = "they" if len(other) == count else f"the other {len(other)} ({', '.join(f'#{i}' for i, _ in other)})"
    chose = ("other slab_sizes lists" if all(d["space"] == "slab_sizes" for _, d in other) else
             ", ".join(f"#{i} {_choice(d)}" for i, d in other))
    on = "on each one's held-out items" if st["judged_on"] == "held_out" else "on each one's items"
    gains = ", ".join(f"{d['gain_pct']:.2f}/{d['recommended_gain_pct']:.2f}%" for _, d in other)
    short = [f"#{i}" for i, d in other if not d["holds"]]
    holds = (f"the gain holds on each (within {margin:g}%)" if st["holds"] else
             f"the gain does not hold on each: {', '.join(short)} more than {margin:g}% short")
    lines = [f"not stable: {said}; {they} chose {chose}; gains {on} (theirs/{ours}'): {gains}; {holds}"]
    prefer = st["prefer"]
    if prefer:
        what = "no change" if prefer["space"] == "baseline" else prefer["flags"]
        gains = ", ".join(f"{g:.2f}%" for g in prefer["resample_gain_pct"])
        items = "the held-out items" if st["judged_on"] == "held_out" else "the items"
        lines.append(f"prefer {what}: simpler, and it holds: {prefer['gain_pct']:.2f}% on {items} "
                     f"({ours} {prefer['recommended_gain_pct']:.2f}%), and within {margin:g}% of each resample's "
                     f"choice on every resample ({gains})")
    elif not st["holds"]:
        lines.append("no simpler setting holds on each: the exact flags are this sample's")
    return lines


def _hot_text(rule) -> str:
    return "fetch=yes" if rule == "fetched" else f"la= within {rule} s of the newest"


def _verdict(record, limit) -> str:
    best, why = record["best"], record["verdict"]
    what = "more items fit" if limit is not None else "fewer page bytes"
    if why["on"] == "held_out":
        what += " on the held-out items"
    elif why["on"] == "fresh" and best:
        fresh = best["fresh"]
        what += (f" on a fresh sample of {fresh['items']} items ({fresh['level_pct']}% of samples: "
                 f"{fresh['low_pct']:.2f}% to {fresh['high_pct']:.2f}%)")
    if record["defaults_fine"]:
        gain = f"{why['gain_pct']:.2f}%" if best else "nothing"
        under = (f"under {why['margin_pct']:g}%" if not best or why["gain_pct"] < why["margin_pct"] else
                 f"and under {why['margin_pct']:g}% in some samples")
        return (f"defaults are fine: the best change ({best['space'] if best else 'none'}) gains {gain} {what} "
                f"({under})")
    said = f"best: {best['space']} gains {why['gain_pct']:.2f}% {what}"
    if why["preferred_to"]:
        other = why["preferred_to"]
        reason = ("but reaches memcached's class cap" if other["why"] == "class_cap" else
                  f"within {why['margin_pct']:g}%: the simpler setting wins")
        said = f"{said} ({other['space']} gains {other['gain_pct']:.2f}%, {reason})"
    if best.get("get_hits_change_pct", 0) < 0:
        said += f", but it cuts hits by {-best['get_hits_change_pct']:.2f}% on the workload"
    said = output.note(f"{said}; for memcached {best['release']}:")
    # the flags stay whole on one line, to be pasted
    last = said.rsplit("\n", 1)[-1]
    return f"{said} {best['flags']}" if len(last) + len(best["flags"]) < output.width() else \
        f"{said}\n  {best['flags']}"
