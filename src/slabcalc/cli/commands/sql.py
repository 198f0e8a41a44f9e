"""``slabcalc sql``."""

from __future__ import annotations

import click

from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import model_options, with_settings
from slabcalc.errors import ValueRefused
from slabcalc.inputs.sql import DIALECTS


@cli.command()
@click.option("--dialect", type=click.Choice(DIALECTS), default="duckdb",
              show_default=True, help="The SQL engine the query is for.")
@click.option("--table", required=True, metavar="NAME", help="The table (or view) of cache writes.")
@click.option("--key-col", "key_col", default="key", show_default=True, metavar="COLUMN",
              help="The column holding the key.")
@click.option("--value-col", "value_col", default="value", show_default=True, metavar="COLUMN",
              help="The column holding the value.")
@click.option("--flags-col", "flags_col", default=None, metavar="COLUMN",
              help="The column holding the client flags (default: flags 0).")
@click.option("--lengths", is_flag=True, help="The key and value columns hold byte lengths, not the data.")
@model_options
@with_settings
def sql(settings, dialect, table, key_col, value_col, flags_col, lengths):
    """Print the SQL that computes memcached's item sizes where the data lives.

    A GROUP BY over TABLE that sizes every row as the release does (key + 1,
    value + 2, the flags suffix rule, CAS) and returns key,value,flags,count:
    save it as CSV and give it to `report` or `optimize` with the same
    options; the groups give the same answer as the rows.

    \b
    Python: histogram_sql(settings, dialect, table, key_col, value_col, flags_col, lengths)
    """
    from slabcalc.inputs.sql import histogram_sql

    try:
        click.echo(histogram_sql(settings, dialect, table, key_col, value_col, flags_col, lengths))
    except ValueRefused as exc:
        raise Refusal(str(exc)) from None
