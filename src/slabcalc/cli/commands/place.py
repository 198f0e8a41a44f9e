"""``slabcalc place``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import SIZE, format_option, model_options, with_settings
from slabcalc.errors import ValueRefused


@cli.command()
@click.option("--key", "key_length", type=int, required=True, metavar="BYTES", help="Key length in bytes (1-250).")
@click.option("--value", "value_length", type=SIZE, required=True, metavar="BYTES",
              help="Value length in bytes (units allowed: 600k).")
@click.option("--flags", type=int, default=0, show_default=True, help="Client flags (0 to 4294967295).")
@model_options
@format_option()
@with_settings
def place(settings, key_length, value_length, flags, fmt):
    """Show where one item goes: its size, class, chunk and waste.

    The item size is memcached's own: header + CAS + key + 1 + flags suffix +
    value + 2.  Items above the largest chunk are shown chunk by chunk where
    the release chunks them; items above -I are too large.

    \b
    Python: place(settings, key_length, value_length, flags)
    """
    from slabcalc.model.placement import Unplaceable
    from slabcalc.model.placement import place as place_item
    from slabcalc.model.settings import with_overrides
    from slabcalc.records.model import placement_record, settings_record

    try:
        record = placement_record(place_item(settings, key_length, value_length, flags))
        other = None
        if settings.profile.has_cas_option:
            flipped = with_overrides(settings, use_cas=not settings.use_cas)
            other = placement_record(place_item(flipped, key_length, value_length, flags))
    except Unplaceable as exc:
        raise DataError(str(exc)) from None
    except ValueRefused as exc:  # a key, value or flags memcached's protocol would not take
        raise Refusal(str(exc)) from None
    other_name = "without_cas" if settings.use_cas else "with_cas"
    if settings.memory_limit is not None and record["status"] != "too_large":
        from slabcalc.analysis.report import build_report
        from slabcalc.model.distribution import Item

        full = build_report(settings, {Item(key_length, value_length, flags, None): 1},
                            memory_limit=settings.maxbytes)
        limit = full.capacity
        record["capacity"], record["limiting_class"] = limit.items, limit.limiting_class
        record["process_bytes"], record["hash_bytes"] = _place_process(full)
    if fmt == "json":
        document = {"settings": settings_record(settings), **record, other_name: other}
        click.echo(output.render_json(document))
        return
    if fmt == "csv":
        columns = [k for k in record if k != "chunks"]
        click.echo(output.render_rows([record], columns, "csv"))
        return
    click.echo(output.render_pairs(_place_lines(settings, record, other, other_name), fmt))
    if record["status"] == "chunked":
        click.echo()
        click.echo(output.render_rows(record["chunks"], ("role", "class", "chunk_size", "requested", "waste"), fmt))


def _place_lines(settings, record, other, other_name):
    """The ``place`` breakdown as (field, value) lines for a table."""
    lines = [
        ("header", record["header"]),
        ("cas", record["cas"]),
        ("key + 1", record["key"]),
        ("suffix (flags)", record["suffix"]),
        ("value + 2", record["value"]),
        ("item_size", record["item_size"]),
    ]
    if record["status"] == "too_large":
        lines.append(("status", f"too large: over -I {settings.item_size_max} bytes "
                                f"({settings.profile.too_large})"))
    else:
        lines += [
            ("status", record["status"] if record["status"] == "stored"
             else f"chunked into {len(record['chunks'])} chunks (counted in class {record['class']})"),
            ("class", record["class"]),
            ("chunk_size", record["chunk_size"]),
        ]
        if record["status"] == "chunked":
            lines.append(("memory", record["memory"]))
        lines += [
            ("waste", f"{record['waste']} ({record['waste_pct']:.2f}%)"),
            ("spare_value_bytes", record["spare_value_bytes"]),
        ]
    if record.get("capacity") is not None:
        lines.append(("capacity", f"-m {settings.maxbytes >> 20} holds {record['capacity']} such items"))
        lines.append(("process memory", f"{record['process_bytes']} bytes when full (slab pages + "
                                        f"{record['hash_bytes']} hash table)"))
    if other is not None:
        label = "with -C (no CAS)" if other_name == "without_cas" else "with CAS"
        if other["status"] == "too_large":
            summary = f"{other['item_size']} bytes: too large"
        else:
            summary = f"{other['item_size']} bytes, class {other['class']}, waste {other['waste']}"
        lines.append((label, summary))
    return lines


def _place_process(report):
    """``place -m``: (process bytes, hash table bytes) of a server full of the item."""
    from slabcalc.analysis.process import process_memory

    memory = process_memory(report)
    return memory.total, memory.hash_bytes
