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


STATS_TOTAL_COLUMNS = ("node", "pages", "page_bytes", "used_bytes", "requested_bytes", "chunk_waste",
                       "free_bytes", "items", "evicted", "outofmemory")


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
