"""``slabcalc place``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import SIZE, format_option, key_option, model_options, with_settings
from slabcalc.errors import ValueRefused


@cli.command()
@key_option("Key length in bytes (1 to the release's key_max).", required=True)
@click.option("--value", "value_length", type=SIZE, required=True, metavar="BYTES",
              help="Value length in bytes (units allowed: 600k).")
@click.option("--flags", type=int, default=0, show_default=True, help="Client flags (0 to 4294967295).")
@model_options
@format_option(command="place")
@with_settings
def place(settings, key_length, value_length, flags, fmt):
    """Show where one item goes: its size, class, chunk and waste.

    The item size is memcached's own: header + CAS + key + 1 + flags suffix +
    value + 2.  Items above the largest chunk are shown chunk by chunk where
    the release chunks them; items above -I are too large.

    \b
    Python: place(settings, key_length, value_length, flags)
    """
    from slabcalc.cli.common import check_layout_options
    from slabcalc.model.placement import Unplaceable
    from slabcalc.model.placement import place as place_item
    from slabcalc.model.settings import with_overrides
    from slabcalc.records.model import placement_record, settings_record

    check_layout_options(settings, "place")
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
    if record["status"] != "too_large" and (settings.memory_limit is not None or settings.extstore is not None):
        _add_capacity(settings, record, key_length, value_length, flags)
    if fmt == "json":
        document = {"settings": settings_record(settings), **record, other_name: other}
        click.echo(output.render_json(document))
        return
    if fmt == "csv":
        columns = [k for k in record if k not in ("chunks", "extstore")]
        click.echo(output.render_rows([record], columns, "csv"))
        return
    click.echo(output.render_pairs(_place_lines(settings, record, other, other_name), fmt))
    if record["status"] == "chunked":
        click.echo()
        click.echo(output.render_rows(record["chunks"], ("role", "class", "chunk_size", "requested", "waste"), fmt))


def _place_lines(settings, record, other, other_name):
    """The ``place`` breakdown as (field, value) lines for a table."""
    from slabcalc.model.treatments import given_options, options_text

    lines = [("header", record["header"]), ("cas", record["cas"]), ("key + 1", record["key"]),
             ("suffix (flags)", record["suffix"]), ("value + 2", record["value"]), ("item_size", record["item_size"])]
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
    if record.get("capacity") is not None and not record.get("extstore"):
        lines.append(("capacity", f"-m {settings.maxbytes >> 20} holds {record['capacity']} such items"))
    if record.get("capacity") is not None:
        lines.append(("process memory", f"{record['process_bytes']} bytes when full (slab pages, "
                                        f"{record['hash_bytes']} hash table and the runtime)"))
    if record.get("extstore"):
        lines += _extstore_lines(settings, record)
    if other is not None:
        summary = (f"{other['item_size']} bytes: too large" if other["status"] == "too_large" else
                   f"{other['item_size']} bytes, class {other['class']}, waste {other['waste']}")
        lines.append(("with -C (no CAS)" if other_name == "without_cas" else "with CAS", summary))
    unmodelled = options_text(given_options(settings, "layout"), modelled=False)
    if unmodelled:          # the modelled words show in the answer itself (JSON: settings.options, all)
        lines.append(("options", unmodelled))
    return lines


def _add_capacity(settings, record, key_length, value_length, flags):
    """``place -m``: how many such items fit and the process memory of a server full of them; under
    extstore, with the flash too (``record["extstore"]``)."""
    from dataclasses import replace

    from slabcalc.analysis.process import process_memory
    from slabcalc.analysis.report import build_report
    from slabcalc.model.distribution import Item

    item = {Item(key_length, value_length, flags, None): 1}
    if settings.extstore is None:
        full = build_report(settings, item, memory_limit=settings.maxbytes)
        record["capacity"], record["limiting_class"] = full.capacity.items, full.capacity.limiting_class
    else:
        from slabcalc.analysis.extstore import extstore_report
        from slabcalc.records.report import place_extstore_record

        ext = extstore_report(settings, item, settings.memory_limit)
        record["extstore"] = place_extstore_record(ext, record["item_size"], record["class"])
        if ext.capacity is None:
            return
        record["capacity"], record["limiting_class"] = ext.capacity.items, None
        full = replace(ext.ram, capacity=ext.capacity.ram)
    memory = process_memory(full)
    record["process_bytes"], record["hash_bytes"] = memory.total, memory.hash_bytes


def _extstore_lines(settings, record):
    from slabcalc.records.report import no_flash_page

    e, x = settings.extstore, record["extstore"]
    why = x["stays_in_ram"]
    if why == "no_flash_page":
        return [("extstore", f"stays in RAM: {no_flash_page(e)}")]
    if why == "larger_than_wbuf":
        return [("extstore", f"stays in RAM: {record['item_size']} bytes do not fit a "
                             f"{e.wbuf_size >> 20} MiB write buffer (ext_wbuf_size)")]
    if not x["flushed"]:
        return [("extstore", f"stays in RAM: class {record['class']} is below class {x['min_class']} "
                             f"(ext_item_size {e.item_size})")]
    lines = [("extstore", f"goes to flash (class {record['class']} >= class {x['min_class']} of ext_item_size "
                          f"{e.item_size}); RAM keeps a {x['header_size']}-byte header item in class "
                          f"{x['header_class']}"),
             ("flash", f"{x['items_per_wbuf']} per {e.wbuf_size >> 20} MiB write buffer ({x['wbuf_waste']} bytes "
                       f"lost at its end), {x['items_per_flash_page']} per {e.page_size >> 20} MiB page")]
    if x["capacity"] is not None:
        c = x["capacity"]
        lines.append(("RAM + flash", f"-m {settings.maxbytes >> 20} and {e.usable_pages} flash pages hold "
                                     f"{c['items']} such items ({c['limited_by']} runs out first: RAM alone "
                                     f"{c['ram_items']}, flash alone {c['flash_items']})"))
    return lines
