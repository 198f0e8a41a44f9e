"""The JSON of ``slabcalc compare``."""

from __future__ import annotations

from slabcalc.analysis.compare import MIB, VARNISH_STORAGE_SHARE, CompareOptions, Comparison


def comparison_record(comparison: Comparison, accounting, options: CompareOptions) -> dict:
    """The stable JSON contract of ``slabcalc compare``."""
    from slabcalc.records.model import settings_record

    base = comparison.stores[0].total
    rows = [{
        "store": s.name,
        "requested_bytes": s.requested,
        "allocated_bytes": s.allocated,
        "overhead_bytes": s.overhead,
        "total_bytes": s.total,
        "waste_pct": round(s.waste_pct, 2),
        "vs_memcached": round(s.total / base, 2) if base else None,
    } for s in comparison.stores]
    storage_mb = -(-comparison.varnish_counted // MIB)
    num, den = VARNISH_STORAGE_SHARE
    summary = {
        "input": f"{accounting.source} ({accounting.format})",
        "items": f"{comparison.items} in every store; {comparison.too_large} over -I "
                 f"{comparison.report.settings.item_size_max} left out",
        "data": f"{comparison.data_bytes} bytes of keys and values",
        "memcached": f"-m {comparison.report.memory_limit_needed} holds them all"
                     if comparison.items else "no items",
        "varnish -s": f"-s malloc,{storage_mb}M holds them (it counts requested segment bytes)",
        "varnish RAM": f"{-(-comparison.varnish_total // MIB)} MiB for these objects by this model; "
                       f"Varnish's rule (-s is 75% of RAM) says {-(-storage_mb * den // num)} MiB",
    }
    return {
        "settings": settings_record(comparison.report.settings),
        "source": accounting.source,
        "format": accounting.format,
        "options": {
            "varnish_header_bytes": options.varnish.header_bytes,
            "varnish_chunked": options.varnish.chunked,
            "fetch_chunksize": options.varnish.fetch_chunksize,
            "varnish_allocator": options.varnish_allocator,
            "redis_release": options.redis_release,
            "redis_ttl": options.redis_ttl,
        },
        "items": comparison.items,
        "too_large": comparison.too_large,
        "data_bytes": comparison.data_bytes,
        "stores": rows,
        "varnish_storage_mb": storage_mb,
        "summary": summary,
    }
