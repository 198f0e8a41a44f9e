"""memcached's item size as SQL: a ``GROUP BY`` that turns a warehouse table of keys and values into
the ``key,value,flags,count`` histogram ``slabcalc report`` and ``optimize`` read.

The query groups by what decides an item's size and class (model/item.py): the key's and the
value's byte lengths and, for the flags, only what the release's suffix rule sees -- whether flags
are 0 (binary), nothing (binary_always), or how many characters ``" %u"``/``" %d"`` prints (text
rules) -- each group written with a representative flags value that the rule sizes the same
(1 for any non-zero flags; 10^(d-1) for d digits; 2^32 - 10^(d-1) for a flags value C prints
negative).  So a few thousand groups stand for billions of rows, and ``report`` on the groups
equals ``report`` on the rows: rows read by the query are the counts; rows the report rejects
(a key of 0 or 251+ bytes) are rejected with their count.
"""

from __future__ import annotations

from dataclasses import dataclass

from slabcalc.errors import ValueRefused

DIALECTS = ("duckdb", "spark", "bigquery", "trino")


@dataclass(frozen=True)
class Dialect:
    name: str
    byte_length: str       # the byte length of a string/binary column: "{}" is the column
    text: str              # an integer as text
    power: str             # 10 to an integer power, as a 64-bit integer
    bigint: str            # the 64-bit integer type


_DIALECTS = {
    "duckdb": Dialect("duckdb", "strlen({})", "CAST({} AS VARCHAR)",
                      "CAST(pow(10, {}) AS BIGINT)", "BIGINT"),
    "spark": Dialect("spark", "octet_length({})", "CAST({} AS STRING)", "CAST(pow(10, {}) AS BIGINT)", "BIGINT"),
    "bigquery": Dialect("bigquery", "BYTE_LENGTH({})", "CAST({} AS STRING)", "CAST(POW(10, {}) AS INT64)", "INT64"),
    "trino": Dialect("trino", "length(to_utf8({}))", "CAST({} AS VARCHAR)", "CAST(power(10, {}) AS BIGINT)",
                     "BIGINT"),
}


def _quote(name: str, dialect: str) -> str:
    """A column or table name, quoted for the dialect when it is not a plain identifier."""
    if all(part.replace("_", "a").isalnum() and not part[0].isdigit() for part in name.split(".")):
        return name
    mark = "`" if dialect in ("spark", "bigquery") else '"'
    return ".".join(mark + part.replace(mark, mark * 2) + mark for part in name.split("."))


def flags_expression(rule: str, flags: str | None, d: Dialect) -> str:
    """A representative flags value the suffix rule sizes as it sizes ``flags`` (see the module)."""
    if flags is None or rule == "binary_always":
        return "0"
    if rule == "binary":
        return f"CASE WHEN {flags} = 0 THEN 0 ELSE 1 END"
    digits = f"length({d.text.format(flags)})"
    unsigned = f"{d.power.format(digits + ' - 1')}"
    if rule == "text_unsigned":
        return f"CASE WHEN {flags} = 0 THEN 0 ELSE {unsigned} END"
    # text_signed: C prints flags above 2^31 - 1 as flags - 2^32
    shown = f"({flags} - 4294967296)"
    negative = f"4294967296 - {d.power.format(f'length({d.text.format(shown)}) - 2')}"
    return (f"CASE WHEN {flags} = 0 THEN 0 WHEN {flags} > 2147483647 THEN {negative} "
            f"ELSE {unsigned} END")


def histogram_sql(settings, dialect: str, table: str, key_col: str, value_col: str,
                  flags_col: str | None = None, lengths: bool = False, *, count_col: str | None = None,
                  relation: str | None = None, rows: bool = False, raw_columns: bool = False) -> str:
    """The query for ``dialect`` over ``table``: ``key, value, flags, count`` rows (``lengths``: the
    key and value columns already hold byte lengths).  For slabcalc's own reader: ``count_col`` (a
    column of counts, summed), ``relation`` (a FROM expression used as it is, e.g. DuckDB's
    ``read_parquet('f')``), ``rows`` (a ``rows`` column: the input rows of each group) and
    ``raw_columns`` (the column arguments are SQL already, quoted or computed by the caller)."""
    if dialect not in _DIALECTS:
        raise ValueRefused(f"dialect {dialect!r}: choose one of {', '.join(DIALECTS)}")
    d = _DIALECTS[dialect]
    quote = (lambda name: name) if raw_columns else (lambda name: _quote(name, dialect))
    key, value = quote(key_col), quote(value_col)
    flags = (f"CAST(COALESCE({quote(flags_col)}, 0) AS {d.bigint})"   # NULL flags: 0
             if flags_col else None)
    key_len = f"CAST({key} AS {d.bigint})" if lengths else d.byte_length.format(key)
    value_len = f"CAST({value} AS {d.bigint})" if lengths else d.byte_length.format(value)
    p = settings.profile
    rule = settings.suffix_rule
    flags_note = {"binary": f"{p.flags_size} bytes of flags unless 0", "binary_always": f"{p.flags_size} bytes",
                  "text_unsigned": '" %u %d\\r\\n" of flags and length', "text_signed": '" %d %d\\r\\n"'}[rule]
    count = "SUM(n)" if count_col else "COUNT(*)"
    counted = f", CAST({quote(count_col)} AS {d.bigint}) AS n" if count_col else ""
    return "\n".join([
        f"-- slabcalc: item sizes for {p.label} ({' '.join(settings.as_argv())})",
        f"-- ntotal = {p.header} header + {settings.cas_bytes} CAS + key + 1 + suffix ({flags_note}) + value + 2;",
        "-- save the result as CSV and run: slabcalc report FILE.csv (with the same options)",
        f"SELECT key, value, flags, {count} AS count" + (", COUNT(*) AS rows" if rows else ""),
        "FROM (",
        f"  SELECT {key_len} AS key,",
        f"         {value_len} AS value,",
        f"         {flags_expression(rule, flags, d)} AS flags{counted}",
        f"  FROM {relation if relation is not None else _quote(table, dialect)}",
        ") AS sized",
        "GROUP BY key, value, flags",
        "ORDER BY key, value, flags",
    ]) + ";"


# The first eight hex digits of MD5 of a key's UTF-8 bytes, lowercase, in each dialect ("{}": the key)
MD5_PREFIX = {
    "duckdb": "substr(md5({}), 1, 8)",
    "spark": "substr(md5({}), 1, 8)",
    "bigquery": "SUBSTR(TO_HEX(MD5({})), 1, 8)",
    "trino": "substr(lower(to_hex(md5(to_utf8({})))), 1, 8)",
}
WORKLOAD_COLUMNS = ("time", "op", "key", "value_size", "ttl")
# What a sample drawn here adds on every row, counted over the whole log (the reader's columns of the same
# names, inputs/workload.py): its rows and the rows whose op is get or gets (any case, spaces trimmed, as the
# reader reads an op), the operations and gets ``simulate --sample`` counts as it reads the whole log.  A
# one-row aggregate joined to the sample's rows, not a window over the whole table (one partition in Spark).
LOG_COLUMNS = ("log_ops", "log_gets")
LOG_RELATION = "whole_log"


def id_hash_sql(key: str, dialect: str) -> str:
    """:func:`slabcalc.model.sampling.id_hash` of an integer column, inside BIGINT in every dialect."""
    from slabcalc.model.sampling import HASH_SPACE, ID_BITS, ID_MULTIPLIER

    low = 1 << ID_BITS

    def mod(a: str, b: int) -> str:
        return f"MOD({a}, {b})" if dialect == "bigquery" else f"({a}) % {b}"
    return mod(f"{mod(mod(key, low) + f' + {low}', low)} * {ID_MULTIPLIER}", HASH_SPACE)


def sample_condition(key: str, rate: float, dialect: str, id_keys: bool = False) -> str | None:
    """The WHERE condition keeping exactly the keys a replay's sample of ``rate`` keeps
    (:mod:`slabcalc.model.sampling`); None at rate 1 (every key)."""
    from slabcalc.model.sampling import HASH_SPACE, threshold, threshold_hex

    if threshold(rate) >= HASH_SPACE:
        return None
    if id_keys:
        return f"{id_hash_sql(key, dialect)} < {threshold(rate)}"
    return f"{MD5_PREFIX[dialect].format(key)} < '{threshold_hex(rate)}'"


def workload_sql(dialect: str, table: str, rate: float, columns: dict[str, str], *, id_keys: bool = False,
                 flags_col: str | None = None) -> str:
    """The query selecting from ``table`` (a request log) the requests of the keys ``simulate --sample
    RATE`` keeps, in time order, as a workload CSV's columns (``columns`` maps each of
    :data:`WORKLOAD_COLUMNS` to the table's column; ``flags_col`` adds ``flags``).  ``id_keys``: the key
    column holds integer ids (oracleGeneral's), hashed by the id rule.  Each row also carries the whole
    log's operations and gets (:data:`LOG_COLUMNS`), for ``simulate --sampled`` to adjust the hit ratio
    to as ``--sample`` does."""
    from slabcalc.model.sampling import threshold

    if dialect not in _DIALECTS:
        raise ValueRefused(f"dialect {dialect!r}: choose one of {', '.join(DIALECTS)}")
    if not 0 < rate <= 1:
        raise ValueRefused(f"--sample must be above 0 and at most 1, not {rate:g}")
    q = {name: _quote(columns[name], dialect) for name in WORKLOAD_COLUMNS}
    selected = [f"{q[name]} AS {name}" for name in WORKLOAD_COLUMNS]
    if flags_col:
        selected.append(f"{_quote(flags_col, dialect)} AS flags")
    condition = sample_condition(q["key"], rate, dialect, id_keys)
    rule = ("((id mod 2^31) * 2654435761) mod 2^32" if id_keys
            else "the first 4 bytes of MD5(UTF-8 key), big-endian")
    gets = f"SUM(CASE WHEN lower(trim({q['op']})) IN ('get', 'gets') THEN 1 ELSE 0 END)"
    return "\n".join([
        f"-- slabcalc: the requests of the keys a {rate:g} sample keeps: {rule} < {threshold(rate)}",
        "-- log_ops, log_gets: the whole log's requests and gets, on every row (--sampled adjusts to them)",
        f"-- save the result as CSV and run: slabcalc simulate FILE.csv --sampled {rate:g} (with the -m of the node)",
        f"SELECT {', '.join(selected)},",
        f"       {', '.join(f'{LOG_RELATION}.{name}' for name in LOG_COLUMNS)}",
        f"FROM {_quote(table, dialect)}",
        f"CROSS JOIN (SELECT COUNT(*) AS log_ops, {gets} AS log_gets",
        f"            FROM {_quote(table, dialect)}) AS {LOG_RELATION}",
        *([f"WHERE {condition}"] if condition else []),
        "ORDER BY time",
    ]) + ";"
