"""The columns of every table, in display order, and the essential ones that stay when a table must fit the terminal."""

from __future__ import annotations

PROFILE_COLUMNS = ("profile", "first", "last", "changes")


CLASS_COLUMNS = ("class", "chunk_size", "perslab", "max_data", "min_data", "page_length", "page_unused")


REPORT_COLUMNS = ("class", "chunk_size", "perslab", "items", "used_chunks", "pages", "requested_bytes", "used_bytes",
                  "chunk_waste", "page_bytes", "free_bytes", "mem_requested", "memory_pct")


WHAT_IF_COLUMNS = ("options", "page_bytes", "waste_pct", "capacity", "page_bytes_change", "page_bytes_change_pct")


REPORT_ESSENTIAL = ("class", "chunk_size", "items", "pages", "page_bytes", "memory_pct", "memory")


STATS_COLUMNS = ("class", "chunk_size", "pages", "used_chunks", "used_bytes", "requested_bytes", "chunk_waste",
                 "free_chunks", "free_bytes", "evicted", "outofmemory", "memory_pct", "evicted_pct")


STATS_ESSENTIAL = ("class", "pages", "free_bytes", "evicted", "memory_pct", "memory")


STATS_TOTAL_COLUMNS = ("node", "pages", "total_malloced", "used_bytes", "bytes", "chunk_waste",
                       "free_bytes", "curr_items", "evictions", "outofmemory")   # memcached's names of the totals


NOW_COLUMNS = ("class", "pages", "pages_delta", "evicted_per_s", "outofmemory", "cmd_set_per_s", "age",
               "evicted_time", "free_chunks")


WATCH_COLUMNS = ("class", "pages", "pages_delta", "cmd_set_per_s", "evicted_per_s", "age", "evicted_time",
                 "chunk_size", "cmd_set", "evicted")


ALLOCATOR_CLASS_COLUMNS = ("class", "size", "category", "min_request", "max_request", "perslab",
                           "page_length", "page_unused")


COMPARE_COLUMNS = ("store", "requested_bytes", "allocated_bytes", "overhead_bytes", "total_bytes", "waste_pct",
                   "vs_memcached")


OPTIMIZE_COLUMNS = ("space", "page_bytes", "pages", "waste_pct", "capacity", "classes_used", "gain_pct")


SIMULATE_COLUMNS = ("class", "chunk_size", "pages", "items", "evicted", "reclaimed", "crawler_reclaimed",
                    "outofmemory", "hits", "misses", "free_chunks", "expired_items")


MOVED_COLUMNS = ("pages_moved_in", "pages_moved_out")


TIMELINE_COLUMNS = ("time", "class", "pages", "items", "evicted", "evicted_total")


PLAN_NODE_COLUMNS = ("nodes", "memory_limit_mb", "items", "pages", "slab_bytes", "hash_bytes", "overhead_bytes",
                     "process_bytes")   # JSON adds the rest of deploy.plan_record


GROUP_COLUMNS = ("group", "items", "requested_bytes", "used_bytes", "chunk_waste", "waste_pct", "memory_pct")


CURVE_COLUMNS = ("limit_maxbytes", "get_hits", "get_misses", "hit_ratio", "evictions", "slabs_moved",
                 "ideal_lru_hit_ratio")


PAIR_COLUMNS = ("field", "value")                     # a record shown as two columns (output.render_pairs)


PLACE_CHUNK_COLUMNS = ("role", "class", "chunk_size", "requested", "waste")


OPTIMIZE_EXTRA_COLUMNS = ("held_out_page_bytes", "held_out_gain_pct", "get_hits", "get_hits_change_pct", "hits",
                          "hits_change_pct")    # csv: memcached's get_hits; a table heads them hits


# the columns each command's tables can show: what its --columns accepts and lists when a name is wrong
COMMAND_COLUMNS = {
    "classes": CLASS_COLUMNS + ALLOCATOR_CLASS_COLUMNS,
    "place": PAIR_COLUMNS + PLACE_CHUNK_COLUMNS,
    "report": REPORT_COLUMNS + ("memory",) + PAIR_COLUMNS + WHAT_IF_COLUMNS + PLAN_NODE_COLUMNS + GROUP_COLUMNS,
    "stats": ("node",) + STATS_COLUMNS + ("memory",) + STATS_TOTAL_COLUMNS + NOW_COLUMNS,
    "compare": COMPARE_COLUMNS + PAIR_COLUMNS,
    "optimize": OPTIMIZE_COLUMNS + OPTIMIZE_EXTRA_COLUMNS,
    "simulate": SIMULATE_COLUMNS + MOVED_COLUMNS + PAIR_COLUMNS + TIMELINE_COLUMNS + CURVE_COLUMNS,
    "profiles": PROFILE_COLUMNS,
}
