"""The release rules as values: the frozen dataclasses the rest of slabcalc reads (a resolved :class:`Profile`
and its parts), and the choices each rule may take.

What a field means is said beside it; where it comes from (the YAML profiles in ``model/profiles/``, one
per release line, with ``changes`` per release) is the loader's business (``profile/loader.py``), and its
checking the validator's (``profile/validate.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

DEFAULT_RELEASE = "1.6.45"

SUFFIX_RULES = ("text_signed", "text_unsigned", "binary", "binary_always")
CAS_RULES = ("appended", "inside")
LOOP_RULES = ("chunk_max_exclusive", "item_size_max_inclusive", "half_page_inclusive")
LARGEST_RULES = ("slab_chunk_max", "item_size_max", "page")
PAGE_SIZE_RULES = ("fixed", "item_size_max")
PAGE_LENGTH_RULES = ("size_x_perslab", "page_if_reassign", "item_size_max_if_reassign",
                     "page_if_reassign_or_chunked")
CHUNKED_RULES = ("none", "eager", "lazy", "lazy_fallback")
CHECK_RULES = ("min", "max", "max_fraction_of_maxbytes",
               "not_above_item_size_max", "divides_item_size_max", "divides_page")
SETTABLE = ("slab_chunk_max", "slab_reassign", "suffix", "factor")
VALUE_TARGETS = ("slab_sizes",)
CRASH_POINTS = ("slab_chunk_max_zero", "slab_chunk_max_without_value", "slab_sizes_without_value")


BACKGROUND_FIELDS = {
    # field: type of its value (what simulate's background threads read; engines/background.py)
    "lru": str, "lru_maintainer": bool, "lru_crawler": bool, "slab_automove": int,
    "slab_automove_ratio": float, "slab_automove_window": int, "hot_lru_pct": int, "warm_lru_pct": int,
    "hot_max_factor": float, "warm_max_factor": float, "temp_lru": bool, "temporary_ttl": int,
    "lru_crawler_tocrawl": int, "lru_crawler_sleep": int,
}
BACKGROUND_CONSTANTS = ("maintainer_sleep_min_us", "maintainer_sleep_max_us", "juggles", "tail_tries",
                        "alloc_rounds", "update_interval", "crawl_min_wait", "crawl_max_wait", "crawl_step",
                        "automove_source_pages", "automove_reclaim_tenths", "rel_time_max", "crawls_persleep",
                        "mover_backoff_max_us", "mover_max_busy_loops")
REFUSE_TESTS = ("lt", "le", "gt", "ge")
BACKGROUND_RULES = {
    # rule: its choices -- how the release's threads behave where releases differ
    "automover_thread": ("maintainer", "mover"),         # which thread runs slab_automove=1
    "free_pages_need_full_memory": (False, True),        # the 2.5-free-pages rule only once -m is reached
    "mover_without_free_chunk": ("drop", "evict"),       # a live item the mover has no chunk for
    "mover_without_spare": ("wait", "wait_then_evict"),  # evict: no spare and no evictions allowed yet
    "slab_automove_2": ("works", "can_crash"),           # 1.6.34-1.6.40: a class emptied crashes the mover
    # the windowed automover's algorithm (slab_automove.c) and the mover thread's idle sleep
    "automove_window_sum": ("before_slot", "with_slot"),  # this run's slot in its own window sum
    "automove_youngest": ("evicted_half", "evicted_half_or_quarter"),   # which class may receive
    "automove_pool_move": ("overridable", "final"),      # a page for the pool ends the run
    "mover_idle_sleep": ("second", "tenth_then_second"),  # the mover thread between idle runs
    "segmented_access_time": ("update_interval", "every_hit"),   # a HOT/WARM hit's it->time
}


TREATMENTS = ("modelled", "none", "refused")   # modelled; no effect on memory or time; refused (exit 2)
TREATMENT_USES = ("simulate", "layout")         # the replay; report, place and optimize


@dataclass(frozen=True)
class Treatment:
    """How slabcalc treats one ``-o`` word: in ``simulate`` and in the layout commands."""

    simulate: str
    layout: str
    why: str | None          # what the word does, when it is not modelled somewhere

    def of(self, use: str) -> str:
        return self.simulate if use == "simulate" else self.layout


@dataclass(frozen=True)
class Check:
    """One startup check memcached makes, with the message it prints."""

    rule: str
    message: str
    exit: int
    value: int | None = None


@dataclass(frozen=True)
class SubOption:
    """What one ``-o`` suboption does to the settings that shape memory."""

    set: Mapping[str, Any] = field(default_factory=dict)
    set_if_chunk_max_default: Mapping[str, Any] = field(default_factory=dict)
    value_to: str | None = None  # the suboption's value also goes to this one (a C fall-through)


@dataclass(frozen=True)
class BackgroundOption:
    """What one ``-o`` word does to the background threads: fixed changes, or its value into a field."""

    set: Mapping[str, Any] = field(default_factory=dict)
    value: str | None = None          # the field the word's value goes to (atoi/atof)
    default: Any = None               # the value of the bare word (``slab_automove`` alone is 1)
    refuse: Mapping[str, float] = field(default_factory=dict)   # lt/le/gt/ge bounds memcached refuses
    message: str | None = None        # what it prints then (exit 1)
    parse: str = "atoi"               # atoi/atof (no value refused), or strtoul (refused with message)
    missing: str | None = None        # what it prints for the bare word, when not ``Missing <word> argument``


@dataclass(frozen=True)
class BackgroundRequirement:
    """A start-up check on the background settings once every ``-o`` word is read: when ``field``
    is on, ``needs`` must be too, else memcached prints ``message`` and exits ``exit``."""

    field: str
    needs: str
    message: str
    exit: int


@dataclass(frozen=True)
class BackgroundRules:
    """The background threads of a release, as data: defaults, constants and the -o words."""

    replay: bool                      # simulate replays this release
    refusal: str | None               # why not, when it does not
    defaults: Mapping[str, Any]       # BACKGROUND_FIELDS at start-up
    constants: Mapping[str, int]      # BACKGROUND_CONSTANTS, read from the release's source
    automove_modes: tuple[int, ...]   # the slab_automove values the engine runs for this release
    rules: Mapping[str, Any]          # BACKGROUND_RULES
    segmented_exact: bool             # the segmented LRU's rules were read from this line's source
    rules_from: str | None            # the release whose source the thread rules were read from
    note: str | None                  # said in the model line (e.g. a rewrite after rules_from)
    suboptions: Mapping[str, BackgroundOption]
    requires: tuple[BackgroundRequirement, ...] = ()


EXTSTORE_DEFAULTS = {"page_size": int, "wbuf_size": int, "item_size": int, "low_ttl": int, "max_frag": float,
                     "threads": int, "io_depth": int}

NUMBER = (int, float)
# extstore.replay: simulate's storage threads (engines/extstore*.py), each key's kind, whether it may
# be null, and the choices where a release's variant is picked by name (a typo is refused, not read
# as the other variant): the write thread (write_target), the automover (automove), the walk, the
# compaction's wake and pick, the flash's page eviction
REPLAY_KEYS: Mapping[str, tuple[Any, bool, tuple | None]] = {
    "rules_from": ((str, int, float), False, None),
    "write_sleep_min_us": (int, False, None), "max_sleep_us": (int, False, None),
    "backoff_halve_over_us": (int, True, None), "recache_rate": (int, False, None),
    "free_ratio": (NUMBER, False, None), "pool_min_start": (int, False, None), "pool_min_floor": (int, False, None),
    "automove_free_pages": (NUMBER, False, None), "automove_reclaim_pages": (NUMBER, False, None),
    "automove_source_pages": (NUMBER, False, None),
    "write_walk": (str, False, ("up", "down")),
    "write_target": (str, False, ("margin", "pool_deficit")),
    "write_target_at_minimum": (int, False, None), "write_small_class_pages": (list, False, None),
    "write_sleep_after_moves": (bool, False, None), "backoff_reset_on_sleep": (bool, False, None),
    "compact_wake": (str, False, ("every_max_sleep", "written")),
    "compact_pick": (str, False, ("oldest_under_scaled_limit", "most_fragmented")),
    "flash_evict": (str, False, ("maintenance_thread", "on_write")),
    "automove": (str, False, ("1.6.18", "1.6.34", "1.6.38")),
    "header_keeps_fetched": (bool, False, None), "compact_write_waits": (int, False, None),
    "compact_read_sleep_us": (int, False, None), "compact_checks_offset": (bool, False, None),
    "compact_page_data": (str, False, ("last_maintenance", "live")),
}


@dataclass(frozen=True)
class ExtstoreRules:
    """External storage (``-o ext_path``) of a release, as data (``slabcalc.model.extstore`` reads it)."""

    rules_from: str
    note: str | None
    header: int                      # sizeof(item_hdr): a flushed item's value in RAM
    defaults: Mapping[str, Any]      # EXTSTORE_DEFAULTS
    page_buckets: int                # one write buffer per bucket
    reserved_pages: int              # pages of the file never written (1.6.18: page 0)
    max_pages: int                   # the most pages memcached starts with
    align: int                       # page and write-buffer sizes must be multiples of this
    page_size_before_path: bool      # ext_page_size after an ext_path is refused
    unknown_size_unit: str           # "zero" (size 0) or "refuse"
    unit_hint: str                   # the units the refusal names: "M|G|T|P" (1.6.38), "m|g|t|p" (1.6.45)
    zero_size_refused: bool
    only_default_bucket: bool        # ext_path=FILE:SIZE:BUCKET takes only "default"
    compact_under_share: float       # ext_compact_under when not given: pages x share (C double) ...
    compact_under_min: int           # ... at least this
    write_margin_pages: int          # the write thread flushes early below this many pages of free chunks
    replay: Mapping[str, Any] | None = None   # simulate's storage threads (REPLAY_KEYS, validated)
    refusal: str | None = None       # why simulate refuses ext_path on this release (its threads not modelled)


@dataclass(frozen=True)
class ProcessRules:
    """What a process of the release holds besides slab pages and the hash table (analysis/process.py)."""

    threads_default: int
    maxconns_default: int
    threads_message: str
    maxconns_message: str
    prealloc_message: str
    huge_page: int
    read_buffer: int
    buffers_per_thread: int
    mmap_header: int
    program_bytes: int      # measured: binary, libraries, start-up heap
    thread_bytes: int       # measured: per worker thread
    conn_bytes: int         # measured: per connection structure


@dataclass(frozen=True)
class Crash:
    """A start-up path where the release dies instead of refusing."""

    signal: int
    why: str


@dataclass(frozen=True)
class Profile:
    """The rules of one memcached release for one word size, fully resolved."""

    release: str
    line: str
    first: str
    last: str
    bits: int
    source: str
    # item sizing
    header: int
    cas: str
    cas_size: int
    suffix: str
    flags_size: int
    chunk_header: int | None
    key_max: int
    # class generation
    align: int
    loop: str
    max_regular: int
    factor2_min_start: int | None
    largest: str
    vv_format: str
    vv_prints_largest: bool
    # pages
    page_size_rule: str
    page_bytes: int
    page_length: str
    chunked: str
    too_large: str
    mem_requested_stat: str
    # defaults
    default_chunk_size: int
    default_factor: float
    default_item_size_max: int
    default_maxbytes_mb: int
    default_use_cas: bool
    default_slab_chunk_max: int | None
    default_slab_reassign: bool
    # option handling
    getopt: str
    chunk_size_refuse: str
    chunk_size_message: str
    factor_message: str
    item_size_max_units: str
    item_size_max_checked: str
    item_size_max_checks: tuple[Check, ...]
    item_size_max_warn_above: int | None
    item_size_max_warning: str | None
    big_item_chunk_max: int | None
    big_item_at: str                # when a big -I lowers an unset chunk max: at_option or after_options
    slab_chunk_max_unit: int | None
    slab_chunk_max_max_value: int | None
    slab_chunk_max_parse_errors_fatal: bool
    slab_chunk_max_checks: tuple[Check, ...]
    slab_sizes: bool | str          # True, False, or "freed_buffer" (1.4.31-1.5.16, see settings.py)
    illegal_suboption_stream: str
    illegal_suboption_exit: int
    illegal_suboption_shows: str
    crashes: Mapping[str, Crash]
    suboptions: Mapping[str, SubOption]
    ignored_suboptions: frozenset[str]
    background: BackgroundRules | None = None
    extstore: ExtstoreRules | None = None
    process: ProcessRules | None = None
    treatments: Mapping[str, Treatment] = field(default_factory=dict)
    hashpower_checks: tuple[Check, ...] = ()   # -o hashpower=N: atoi, then these bounds (memcached.c HASHPOWER_INIT)
    hashpower_missing: str | None = None       # what it prints for the bare word (exit 1)

    @property
    def has_cas_option(self) -> bool:
        """Whether ``-C`` exists (CAS appended after the header) or CAS is built in."""
        return self.cas == "appended"

    @property
    def chunk_tail_fallback(self) -> bool:
        """Whether a chunked item's tail takes a largest-class chunk when its own class has none
        (1.6.17+, items.c ``do_item_alloc_chunk``)."""
        return self.chunked == "lazy_fallback"

    @property
    def has_slab_chunk_max(self) -> bool:
        return self.slab_chunk_max_unit is not None

    @property
    def label(self) -> str:
        return f"memcached {self.release}" + ("" if self.bits == 64 else f" ({self.bits}-bit)")



@dataclass(frozen=True)
class Segment:
    """A run of releases that share every rule: one bundled profile up to its next change."""

    profile: str                 # the bundled file, e.g. "memcached-1.4.29"
    first: str                   # first release of the run
    last: str                    # last release of the run
    changed: tuple[str, ...]     # rule fields (three levels deep) that change at ``first``
