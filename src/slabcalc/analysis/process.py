"""Whole-process memory: what a memcached process takes besides the ``-m`` it is given.

``-m`` counts slab pages only (``do_slabs_newslab``).  A process also holds:

- the primary hash table (``assoc.c``): one pointer per bucket, ``2^hashpower``
  buckets.  ``hashpower`` starts at 16 (``-o hashpower=N`` sets it); once a
  second ``clock_handler()`` calls ``assoc_start_expand(curr_items)``, which
  doubles the table when ``curr_items > (2^hashpower * 3) / 2`` -- strictly
  more, so 98 304 items still fit 2^16 buckets -- up to ``HASHPOWER_MAX``
  (32), unless ``-o no_hashexpand``.  While it doubles, both tables are held
  (``stats`` ``hash_bytes`` counts both until ``hash_is_expanding`` is 0);
- slab pages past ``-m``: a class's first page is granted even when the limit
  is reached, so a workload touching many classes with few items takes more
  pages than ``-m`` says;
- the runtime (:func:`runtime_parts`), per release from the profile's ``process`` section: the
  program (binary, libraries, start-up heap) and each worker thread (``-t``) and connection
  structure, *measured* on the release's build (``scripts/measure_process.py``); read buffers and
  response bundles, 16 KiB each, two per worker thread serving a request (thread.c 998-1000);
  glibc's chunk-header page of every slab page it mmaps; ``-L``'s huge-page rounding; extstore's
  write buffers and the pages its prefill touches;
- anything else: an allowance the operator supplies (:class:`Overhead`).

Left out, and measured by tests/fidelity/test_process_fidelity.py against VmRSS: glibc arena slack,
libevent's per-connection bookkeeping beyond the measured structure, the kernel's rounding of
touched pages.  All arithmetic is on integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from slabcalc.errors import ValueRefused
from slabcalc.model.units import parse_size

MIB = 1 << 20
HASHPOWER_DEFAULT = 16   # assoc.c: static unsigned int hashpower = HASHPOWER_DEFAULT
HASHPOWER_MAX = 32       # assoc_start_expand() stops doubling here


def hashpower_for(items: int, start: int = HASHPOWER_DEFAULT, expand: bool = True) -> int:
    """The hash power a table settles at once ``items`` are linked (one doubling per check)."""
    hashpower = start
    while expand and hashpower < HASHPOWER_MAX and items > (1 << hashpower) * 3 // 2:
        hashpower += 1
    return hashpower


def hash_table_bytes(items: int, pointer: int = 8, hashpower: int = HASHPOWER_DEFAULT,
                     expand: bool = True) -> int:
    """memcached's primary hash table (outside -m) once ``items`` are linked: a pointer per bucket."""
    return pointer << hashpower_for(items, hashpower, expand)


@dataclass(frozen=True)
class Overhead:
    """The operator's allowance for the rest of the process: a size, or a share of the total."""

    bytes: int = 0
    share: Fraction | None = None   # e.g. 1/4: the rest is a quarter of the whole process

    def on(self, base: int) -> int:
        """Bytes of overhead on top of ``base`` bytes of slab pages and hash table."""
        if self.share is None:
            return self.bytes
        return -(-base * self.share.numerator // (self.share.denominator - self.share.numerator))

    def __str__(self) -> str:
        if self.share is None:
            return f"{self.bytes} bytes"
        return f"{_pct_text(self.share)}% of the process"


def _pct_text(share: Fraction) -> str:
    value = share * 100
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def parse_pct(text: str, what: str = "percentage") -> Fraction:
    """``"5"``, ``"5%"``, ``"12.5%"`` -> a Fraction share in [0, 1); ValueError otherwise."""
    raw = str(text).strip().removesuffix("%").strip()
    try:
        value = Fraction(raw)
    except (ValueError, ZeroDivisionError):
        raise ValueRefused(f"{what} {text!r} is not a number (e.g. 5 or 12.5%)") from None
    if not 0 <= value < 100:
        raise ValueRefused(f"{what} {text!r} must be at least 0 and below 100")
    return value / 100


def parse_overhead(text: str) -> Overhead:
    """``--overhead``: a size (``64m``, ``200000``) or a share of the process (``5%``)."""
    text = str(text).strip()
    if text.endswith("%"):
        return Overhead(share=parse_pct(text, "overhead"))
    return Overhead(bytes=parse_size(text))


@dataclass(frozen=True)
class ProcessMemory:
    """One process holding a workload: ``-m`` to pass and what the process takes in all."""

    memory_limit_mb: int     # -m to pass (or the -m given)
    items: int               # items linked (what sizes the hash table)
    slab_bytes: int          # slab pages the items take
    hashpower: int
    hash_bytes: int          # the hash table once settled
    hash_peak_bytes: int     # while it doubled to this size (both tables held)
    overhead: int            # the operator's allowance
    runtime: tuple[tuple[str, int], ...] = ()   # (part, bytes): see runtime_parts()

    @property
    def limit_bytes(self) -> int:
        return self.memory_limit_mb * MIB

    @property
    def overshoot(self) -> int:
        """Slab bytes past -m: first pages of classes, granted even at the limit."""
        return max(0, self.slab_bytes - self.limit_bytes)

    @property
    def runtime_bytes(self) -> int:
        return sum(size for _, size in self.runtime)

    @property
    def total(self) -> int:
        """Expected process memory: slab pages + hash table + runtime + overhead."""
        return self.slab_bytes + self.hash_bytes + self.runtime_bytes + self.overhead

    @property
    def limit_headroom(self) -> int:
        """Bytes of -m the items leave free (room to grow before evictions)."""
        return max(0, self.limit_bytes - self.slab_bytes)


GLIBC_MMAP_THRESHOLD_MAX = 32 * MIB    # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit


def _mmapped_until(settings, page: int) -> int | None:
    """Items linked when glibc stops mmapping slab pages: malloc() mmaps a request of at least its
    threshold, and free() of an mmapped chunk raises the threshold to that chunk's size (malloc.c
    free: ``mp_.mmap_threshold = chunksize``).  The hash table's old half is freed when a doubling
    ends (assoc.c assoc_expand/assoc_maintenance_thread): once a freed table holds a page and its
    chunk header, later pages come from an arena.  None: every page is mmapped."""
    start = settings.hashpower_init if settings.hashpower_init is not None else HASHPOWER_DEFAULT
    if not settings.hash_expand:
        return None
    pointer = settings.profile.bits // 8
    for power in range(start, HASHPOWER_MAX):
        chunk = -(-(pointer << power) // 4096) * 4096 + 4096     # the old table's mmapped chunk
        if chunk > GLIBC_MMAP_THRESHOLD_MAX:
            return None
        if chunk >= page + 16:           # malloc(page) needs page + 16 bytes of chunk
            return (1 << power) * 3 // 2   # the doubling from power starts past this many items
    return None


def runtime_parts(settings, slab_pages: int, items: int, connections: int | None = None,
                  wbuf_buckets: int | None = None) -> tuple[tuple[str, int], ...]:
    """What the process holds besides slab pages and the hash table, part by part, from the
    release's ``process`` rules: nothing where the profile has none."""
    rules = settings.profile.process
    if rules is None:
        return ()
    threads = settings.worker_threads
    conns = settings.max_connections if connections is None else connections
    per_thread = rules.buffers_per_thread
    limit = _read_buf_mem_limit(settings)
    if limit:   # thread.c 457-464: each thread's cache keeps limit / threads of them, at least one
        per_thread = min(per_thread, max(1, limit // threads // rules.read_buffer))
    parts = [
        ("program", rules.program_bytes),
        ("threads", threads * rules.thread_bytes),
        ("connection_structures", conns * rules.conn_bytes),
        ("read_buffers", per_thread * min(threads, conns) * rules.read_buffer),
    ]
    page = settings.slab_page_size
    ext = settings.extstore
    if settings.preallocate:      # one block of -m, faulted in huge pages (alloc_large_chunk)
        touched = slab_pages * page
        parts.append(("huge_page_rounding", -(-touched // rules.huge_page) * rules.huge_page - touched))
    elif ext is not None:         # prefill: every page of -m malloc'd (mmapped) at start, its first 4 KiB touched
        parts.append(("page_headers", max(slab_pages, settings.maxbytes // page) * rules.mmap_header))
    else:
        until = _mmapped_until(settings, page)
        mapped = slab_pages if until is None or items <= until else -(-slab_pages * until // items)
        parts.append(("page_headers", mapped * rules.mmap_header))
    if ext is not None:
        parts.append(("extstore_write_buffers", write_buffers_touched(ext, wbuf_buckets) * ext.wbuf_size))
    return tuple(parts)


def write_buffers_touched(ext, buckets_written: int | None) -> int:
    """extstore's write buffers that hold memory: one per page bucket written to.

    All ``ext.wbuf_count`` are calloc'd at start-up (extstore.c 393-401) and take no memory until
    written; a bucket's buffer goes back on top of the stack when flushed and is taken again
    (extstore.c 482-511, 454-470), so each bucket written touches one.  Unknown (None): the default
    and chunked buckets, 2."""
    return min(ext.wbuf_count, 2 if buckets_written is None else buckets_written)


def _read_buf_mem_limit(settings) -> int:
    """``-o read_buf_mem_limit=MB`` in bytes (the last one given), 0 when none."""
    from slabcalc.model.units import c_strtoul

    limit = 0
    for word in settings.suboptions:
        name, _, value = word.partition("=")
        if name == "read_buf_mem_limit":
            limit = (c_strtoul(value) or 0) * MIB
    return limit


def process_memory(report, overhead: Overhead = Overhead(), connections: int | None = None,
                   wbuf_buckets: int | None = None) -> ProcessMemory:
    """The process holding ``report``'s items (:func:`slabcalc.analysis.report.build_report`).

    Without a memory limit in the report: ``-m`` is the smallest that stores
    them all.  With one (``report.capacity``): a full cache of this mix under
    that ``-m``: the capacity's items in the pages they take.
    """
    settings = report.settings
    slab = report.total("page_bytes")
    items = report.items
    if report.capacity is not None:
        limit_mb = report.capacity.memory_limit // MIB
        if report.items:
            items, slab = report.capacity.items, report.capacity.page_bytes
    else:
        limit_mb = report.memory_limit_needed if report.classes else 0
    slab += report.preallocated
    return _process(settings, limit_mb, items, slab, overhead, connections=connections,
                    wbuf_buckets=wbuf_buckets)


def _process(settings, limit_mb: int, items: int, slab: int, overhead: Overhead,
             presize_hash: bool = False, connections: int | None = None,
             wbuf_buckets: int | None = None) -> ProcessMemory:
    """A process of ``slab`` bytes of pages holding ``items``: its hash table (``assoc.c``), which
    starts at the settings' size -- or, ``presize_hash``, at the size the items need -- and the
    overhead on top."""
    start = settings.hashpower_init if settings.hashpower_init is not None else HASHPOWER_DEFAULT
    hashpower = hashpower_for(items, start, settings.hash_expand)
    if presize_hash:
        start = max(start, hashpower)
    hash_bytes = (settings.profile.bits // 8) << hashpower
    peak = hash_bytes + (hash_bytes // 2 if hashpower > start else 0)   # both tables while it doubles
    pages = slab // settings.slab_page_size
    runtime = runtime_parts(settings, pages, items, connections, wbuf_buckets)
    known = slab + hash_bytes + sum(size for _, size in runtime)
    return ProcessMemory(limit_mb, items, slab, hashpower, hash_bytes, peak, overhead.on(known), runtime)


def planned_process(report, overhead: Overhead = Overhead(), fill: Fraction = Fraction(1),
                    presize_hash: bool = False, connections: int | None = None) -> ProcessMemory:
    """The process of a planned node: ``-m`` such that ``report``'s items fill ``fill`` of it, budgeted
    full (a cache fills its ``-m``), with the hash table for the items a full ``-m`` holds.

    ``presize_hash``: the table starts at that size (``-o hashpower``), so it never doubles; else
    it starts at the settings' size and doubles, holding both tables while it does.
    """
    settings = report.settings
    pages = report.total("page_bytes")
    needed = report.memory_limit_needed if report.classes else 0
    limit_mb = -(-needed * fill.denominator // fill.numerator) if needed else 0
    items = -(-report.items * fill.denominator // fill.numerator)
    slab = max(pages, limit_mb * MIB) if fill < 1 else pages
    return _process(settings, limit_mb, items, slab, overhead, presize_hash, connections)
