"""The column names the readers accept, in one table: each column and the names it goes by.

An item file (``report``, ``optimize``, ``compare``) and a workload (``simulate``)
name some columns alike (``key``, ``value``/``value_size``, ``flags``); what a
header may call them is written here once, and the errors that list the names
a header could use read them from here.
"""

from __future__ import annotations

KEY_LENGTH = ("key_size", "key_len", "key_length", "keylen", "klen")
VALUE_LENGTH = ("value", "value_size", "value_len", "value_length", "vlen", "size")
FLAGS = ("flags", "flag")

ITEM_COLUMNS = {
    "key": ("key", *KEY_LENGTH),
    "value": VALUE_LENGTH,
    "flags": FLAGS,
    "count": ("count", "n", "items", "freq", "frequency"),
    "item_size": ("item_size", "ntotal", "total_size"),
    "key_name": ("key_name", "keyname", "name"),   # the key itself: its length in UTF-8 bytes
}

WORKLOAD_COLUMNS = {
    "time": ("time", "timestamp", "ts", "op_time"),
    "op": ("op", "operation", "cmd", "command"),
    "key": ("key",),                               # the key itself (its length: key_size)
    "key_size": KEY_LENGTH,
    "value_size": VALUE_LENGTH,
    "ttl": ("ttl", "exptime"),
    "flags": FLAGS,
    "count": ("op_count",),                        # the row stands for this many operations (MetaKV)
    # a sample drawn in the warehouse (``sql --workload --sample``): its whole log's operations and gets
    "log_ops": ("log_ops",),
    "log_gets": ("log_gets",),
}


def by_alias(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """``{alias: column}`` of a table."""
    return {alias: name for name, aliases in table.items() for alias in aliases}


def every_alias() -> frozenset[str]:
    """Every name a column goes by in either table: a column one reader takes and another does not is
    not a misspelling, only a column that reader does not use."""
    return frozenset(by_alias(ITEM_COLUMNS)) | frozenset(by_alias(WORKLOAD_COLUMNS))
