"""``slabcalc place``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.errors import DataError, Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import (SIZE, check_rate_given, format_option, key_option, model_options, rate_option,
                                  whole, with_settings)
from slabcalc.errors import ValueRefused
from slabcalc.model.item import FLAGS_MAX


@cli.command()
@key_option("Key length in bytes (1 to the release's key_max).", required=True)
@click.option("--value", "value_length", type=SIZE, required=True, metavar="BYTES",
              help="Value length in bytes (units allowed: 600k).")
@click.option("--flags", type=whole(0, FLAGS_MAX), default=0, show_default=True, help="Client flags (0 to 4294967295).")
@rate_option
@model_options
@format_option(command="place")
@with_settings
def place(settings, key_length, value_length, flags, fmt, rate):
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
    from slabcalc.records.place import NOT_IN_CSV, place_record

    check_layout_options(settings, "place")
    check_rate_given(settings, rate)
    try:
        placed = place_item(settings, key_length, value_length, flags)
        other = None
        if settings.profile.has_cas_option:
            other = place_item(with_overrides(settings, use_cas=not settings.use_cas), key_length, value_length,
                               flags)
    except Unplaceable as exc:
        raise DataError(str(exc)) from None
    except ValueRefused as exc:  # a key, value or flags memcached's protocol would not take
        raise Refusal(str(exc)) from None
    capacity = None
    if placed.status != "too_large" and (settings.memory_limit is not None or settings.extstore is not None):
        from slabcalc.analysis.placed import placed_capacity

        capacity = placed_capacity(settings, key_length, value_length, flags, rate)
    document = place_record(settings, placed, other, capacity)
    if fmt == "json":
        click.echo(output.render_json(document))
        return
    if fmt == "csv":
        click.echo(output.render_rows([document], [k for k in document if k not in NOT_IN_CSV], "csv"))
        return
    click.echo(output.render_pairs(_place_lines(settings, document), fmt))
    if document["status"] == "chunked":
        click.echo()
        click.echo(output.render_rows(document["chunks"], ("role", "class", "chunk_size", "requested", "waste"),
                                      fmt))


def _place_lines(settings, record):
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
    other_name = "without_cas" if settings.use_cas else "with_cas"
    other = record[other_name]
    if other is not None:
        summary = (f"{other['item_size']} bytes: too large" if other["status"] == "too_large" else
                   f"{other['item_size']} bytes, class {other['class']}, waste {other['waste']}")
        lines.append(("with -C (no CAS)" if other_name == "without_cas" else "with CAS", summary))
    unmodelled = options_text(given_options(settings, "layout"), modelled=False)
    if unmodelled:          # the modelled words show in the answer itself (JSON: settings.options, all)
        lines.append(("options", unmodelled))
    return lines


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
        r = c.get("replayed")
        how = (f"{c['limited_by']} evicts first when they are set at {r['sets_per_second']} a second through "
               f"simulate's extstore replay; static: RAM alone" if r is not None
               else f"{c['limited_by']} runs out first: static, RAM alone")
        low = record.get("capacity_behind")
        pace = ("" if r is None else " if the write thread keeps pace" if low in (None, c["items"]) else
                f" if the write thread keeps pace, {low} if it falls behind as the page pool runs dry")
        lines.append(("RAM + flash", f"-m {settings.maxbytes >> 20} and {e.usable_pages} flash pages hold "
                                     f"{c['items']} such items{pace} ({how} {c['ram_items']}, flash alone "
                                     f"{c['flash_items']})"))
    return lines
