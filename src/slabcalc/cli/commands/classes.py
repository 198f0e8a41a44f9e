"""``slabcalc classes``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import format_option, model_options, with_settings
from slabcalc.cli.tables import ALLOCATOR_CLASS_COLUMNS, CLASS_COLUMNS


@cli.command()
@click.option("--allocator", type=click.Choice(("jemalloc-3.6", "jemalloc-5", "jemalloc-5-redis", "glibc")),
              default=None, help="Print this allocator's size classes instead, up to the one that holds -I.  "
                                   "Not given: memcached's slab classes.")
@model_options
@format_option("vv", command="classes")
@with_settings
def classes(settings, fmt, allocator):
    """Print the slab classes memcached creates at start-up.

    One row per class: chunk size, chunks per page, the key+value bytes it
    holds (max_data for a 1-byte key and flags 0, min_data the previous
    class's max + 1), the bytes one page takes from -m and the bytes of that
    page no chunk covers.  --format vv prints exactly memcached -vv's lines.

    \b
    Python: describe_classes(configure(load_profile(RELEASE), ARGS))
    """
    from slabcalc.model.classes import describe_classes, vv_lines
    from slabcalc.records.model import class_record, settings_record

    if allocator is not None:
        return _allocator_classes(settings, allocator, fmt)
    if fmt == "vv":
        click.echo("\n".join(vv_lines(settings)))
        return
    records = [class_record(info) for info in describe_classes(settings)]
    if fmt == "json":
        click.echo(output.render_json({"settings": settings_record(settings), "classes": records}))
    else:
        click.echo(output.render_rows(records, CLASS_COLUMNS, fmt, essential=CLASS_COLUMNS[:4]))


def _allocator_classes(settings, name, fmt):
    """``classes --allocator NAME``: the allocator's classes up to the one that holds -I."""
    from slabcalc.allocators import ALLOCATORS

    if fmt == "vv":
        raise Refusal("--format vv prints memcached's own lines; it has none for --allocator")
    classes = ALLOCATORS[name].size_classes(settings.item_size_max)
    records = [{"class": c.id, "size": c.size, "category": c.category, "min_request": c.min_request,
                "max_request": c.max_request, "perslab": c.perslab, "page_length": c.page_length,
                "page_unused": c.page_unused} for c in classes]
    if fmt == "json":
        click.echo(output.render_json({"allocator": name, "up_to": settings.item_size_max, "classes": records}))
    else:
        click.echo(output.render_rows(records, ALLOCATOR_CLASS_COLUMNS, fmt, essential=ALLOCATOR_CLASS_COLUMNS[:5]))
