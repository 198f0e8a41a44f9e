"""What a replay ends with: per-class and total counts (memcached's names), the finding, the timeline."""

from __future__ import annotations

from dataclasses import dataclass

from slabcalc.engines.background import Background
from slabcalc.model.classes import SlabClass
from slabcalc.model.settings import Settings


@dataclass(frozen=True)
class Model:
    """What the engine replays: the release, its LRU, what ran beside it, and whether it is exact.
    Data only: the line that says it to people is :func:`slabcalc.records.simulate.model_text`."""

    release: str
    lru: str            # "compat" (one LRU per class) or "segmented" (HOT/WARM/COLD)
    exact: bool
    automove: int = 0
    maintainer: bool = False
    crawler: bool = False
    automove_window: int | None = None
    automove_ratio: float | None = None
    options: tuple = ()         # the -o words given, each with its treatment (model/treatments.py)
    memory_limit_mb: int = 0    # -m (0: no limit)
    background: Background | None = None    # what ran beside the requests, and its constants
    sample: float | None = None             # the share of keys replayed (simulate's ``sample``)
    extstore: str | None = None  # -o ext_path: the storage threads ran, on these rules (engines/extstore.py)
    extstore_write_target: str | None = None   # when the write thread flushes early (profile extstore.replay)
    build: str = ""             # "compiled (mypyc)" or "plain Python": the engine that ran (setup.py)
    key_hash_bits: int = 0      # string keys kept as hashes of this many bits (engines/keys.py; 0: as text)
    key_collision_bound: float | None = None    # then: at most this probability that two keys shared one


@dataclass(frozen=True)
class ClassResult:
    """One class at a point of the workload (``stats slabs`` / ``stats items`` names)."""

    slab_class: SlabClass
    page_length: int
    pages: int          # total_pages
    items: int          # number: items in this class's LRU
    used_chunks: int
    free_chunks: int
    evicted: int
    evicted_nonzero: int
    evicted_unfetched: int
    reclaimed: int
    expired_unfetched: int
    outofmemory: int
    hits: int           # get_hits of items in this class
    misses: int         # gets of keys whose item this class evicted or expired
    expired_items: int  # items still linked but past their exptime
    expired_bytes: int  # chunk bytes those items hold
    moved_in: int = 0   # pages the page mover gave this class
    moved_out: int = 0  # pages it took away
    crawler_reclaimed: int = 0
    number_hot: int = 0
    number_warm: int = 0
    number_cold: int = 0


@dataclass(frozen=True)
class Totals:
    ops: int
    sets: int
    gets: int
    hits: int
    misses: int
    deletes: int
    delete_hits: int
    touches: int
    touch_hits: int
    stored: int
    too_large: int
    chunk_failures: int      # chunked sets that ran out of memory after their header ("during read")
    outofmemory: int
    evicted: int
    reclaimed: int
    get_expired: int         # found past exptime (and freed) by a get, touch, delete or overwrite
    curr_items: int
    total_malloced: int
    pages: int
    pages_moved: int = 0             # slabs_moved
    global_page_pool: int = 0        # slab_global_page_pool
    crawler_reclaimed: int = 0
    slab_reassign_rescues: int = 0
    slab_reassign_evictions_nomem: int = 0
    slab_reassign_inline_reclaim: int = 0
    slab_reassign_chunk_rescues: int = 0
    total_items: int = 0             # items linked, counting the mover's rescues as memcached does


@dataclass(frozen=True)
class Finding:
    """Calcification: a class evicting while other classes held reusable memory."""

    evicting: tuple[int, ...]        # classes that evicted
    evicted: int
    free_bytes: int                  # free chunk bytes in the other classes (end of workload)
    expired_bytes: int               # chunk bytes of expired items in the other classes (end)
    holders: tuple[int, ...]         # the other classes holding them, most first
    peak_free_bytes: int             # most free chunk bytes elsewhere seen at an eviction
    peak_time: float | None          # workload time of that eviction
    peak_class: int | None
    pages_moved: int = 0             # pages the automover moved during the workload
    pool_pages: int = 0              # pages left in the global page pool at the end

    @property
    def idle_bytes(self) -> int:
        return self.free_bytes + self.expired_bytes


@dataclass(frozen=True)
class TimelineRow:
    time: float
    class_id: int
    pages: int
    items: int
    evicted: int         # evictions in this class since the previous row
    evicted_total: int


@dataclass(frozen=True)
class Simulation:
    settings: Settings
    model: Model | None                 # None in a snapshot (simulate's ``at``)
    classes: tuple[ClassResult, ...]   # every class that holds a page
    totals: Totals
    finding: Finding | None
    timeline: tuple[TimelineRow, ...]
    end_time: float | None
    snapshots: tuple = ()       # (workload time, Simulation) kept on request (simulate's ``at``)
    sample: object = None       # engines.sample.Sample of a sampled replay (its counts are scaled back)
    extstore: dict | None = None    # -o ext_path: stats' extstore counters, memcached's names (.extstore)

