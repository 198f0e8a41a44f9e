"""``slabcalc sql``."""

from __future__ import annotations

import click

from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import model_options, with_settings, workload_sample_options
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
@workload_sample_options
@model_options
@with_settings
def sql(settings, dialect, table, key_col, value_col, flags_col, lengths, workload, sample, id_keys, time_col,
        op_col, value_size_col, ttl_col):
    """Print the SQL that computes memcached's item sizes where the data lives.

    A GROUP BY over TABLE that sizes every row as the release does (key + 1,
    value + 2, the flags suffix rule, CAS) and returns key,value,flags,count:
    save it as CSV and give it to `report` or `optimize` with the same
    options; the groups give the same answer as the rows.

    With --workload --sample RATE: the query selecting from a request log the
    requests of exactly the keys `simulate --sample RATE` keeps (the same
    hash: docs/sampling.md), in time order, as a workload CSV's columns
    (time, op, key, value_size, ttl); save it as CSV and replay it with
    `simulate FILE --sampled RATE`.

    \b
    Python: histogram_sql(settings, dialect, table, key_col, value_col, flags_col, lengths)
    Python: workload_sql(dialect, table, rate, columns, id_keys=id_keys, flags_col=flags_col)
    """
    from slabcalc.inputs.sql import histogram_sql, workload_sql

    if workload != (sample is not None):
        raise Refusal("--workload and --sample go together: --workload --sample RATE writes a sample's query")
    if id_keys and not workload:
        raise Refusal("--id-keys is for --workload")
    try:
        if workload:
            if lengths:
                raise Refusal("--lengths is for the histogram: a sample hashes the key itself")
            columns = dict(time=time_col, op=op_col, key=key_col, value_size=value_size_col, ttl=ttl_col)
            click.echo(workload_sql(dialect, table, sample, columns, id_keys=id_keys, flags_col=flags_col))
        else:
            click.echo(histogram_sql(settings, dialect, table, key_col, value_col, flags_col, lengths))
    except ValueRefused as exc:
        raise Refusal(str(exc)) from None
