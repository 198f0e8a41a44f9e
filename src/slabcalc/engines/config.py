"""A replay's configuration, read once: what the request paths, the LRUs and the maintainer run with.

The release's constants (its profile's ``background.constants``), its rules and the ``-o`` settings
(:class:`.background.Background`) are read here, into one frozen value that the engine, the LRUs
and the maintainer share: each used to copy them out of the engine, or out of the background's
dict of constants, for itself.  Compiled with the engine (setup.py): a field read is a native one.
"""

from __future__ import annotations

from dataclasses import dataclass

from slabcalc._native import i64
from slabcalc.engines.background import Background


@dataclass(frozen=True)
class ReplayConfig:
    """The constants a replay runs with (1.6.18 ``items.c``, ``memcached.h``; the profile's data)."""

    segmented: bool         # HOT/WARM/COLD, not the compat LRU's one per class
    every_hit: bool         # 1.5.19+: an ACTIVE HOT/WARM item's time is bumped at every hit
    tail_tries: int         # lru_pull_tail's search depth
    alloc_rounds: int       # do_item_alloc_pull's rounds
    update_interval: int    # ITEM_UPDATE_INTERVAL
    hot_lru_pct: int
    warm_lru_pct: int
    hot_max_factor: float
    warm_max_factor: float
    juggles: int            # passes of lru_maintainer_juggle (and of the TEMP pulls)
    min_sleep: i64          # the maintainer's MIN_LRU_MAINTAINER_SLEEP, MAX_..., microseconds (native: its
    max_sleep: i64          # clock's arithmetic)
    mover_evicts: bool      # 1.6.45: the page mover evicts for a spare chunk (engines/mover.py)
    mover_busy_limit: int   # 1.6.41+: busy passes before a move with no spare may evict; -1: it waits for ever
    mover_backoff_max: int  # the longest sleep between busy passes, microseconds
    rel_time_max: int       # an age's largest value (rel_time_t): past it, hot_age/warm_age are undefined in C
    release: str            # the release replayed, for the refusals that name it


def replay_config(background: Background, release: str) -> ReplayConfig:
    """The one reading of ``background``'s constants and rules for a replay of ``release``."""
    const = background.constant
    return ReplayConfig(
        segmented=background.lru == "segmented",
        every_hit=background.rules.rules["segmented_access_time"] == "every_hit",
        tail_tries=const["tail_tries"], alloc_rounds=const["alloc_rounds"],
        update_interval=const["update_interval"],
        hot_lru_pct=background.hot_lru_pct, warm_lru_pct=background.warm_lru_pct,
        hot_max_factor=float(background.hot_max_factor), warm_max_factor=float(background.warm_max_factor),
        juggles=const["juggles"], min_sleep=const["maintainer_sleep_min_us"],
        max_sleep=const["maintainer_sleep_max_us"], rel_time_max=const["rel_time_max"],
        mover_evicts=background.rules.rules["mover_without_free_chunk"] == "evict",
        mover_busy_limit=(const["mover_max_busy_loops"]
                          if background.rules.rules["mover_without_spare"] == "wait_then_evict" else -1),
        mover_backoff_max=const["mover_backoff_max_us"], release=release)
