"""External storage (extstore): the ``-o ext_*`` options, what memcached refuses, and how flushed
items are laid out in RAM and on flash.

Read from memcached's source (line numbers of Debian's 1.6.18; the 1.6.45 differences are profile
data, ``extstore:`` in ``profiles/memcached-1.6.yaml``):

* options: ``storage_read_config()`` (storage.c 1144-1349) parses each ``ext_*`` word as ``-o`` is
  read; ``storage_check_config()`` (1351-1371) refuses ``-I`` above ``ext_wbuf_size`` and UDP once all
  options are read; ``extstore_init()`` (extstore.c 234-310) refuses page and buffer sizes and too
  many pages when the server starts ("Failed to initialize external storage: ...").
* which items go: the write thread (storage.c 577-664) walks the classes from
  ``slabs_clsid(ext_item_size)`` up and writes items from each class's COLD tail; a flushed item's
  value is replaced by a *header item* of ``sizeof(item_hdr)`` bytes allocated in the class its own
  size picks (storage.c 494: ``do_item_alloc(key, nkey, flags, exptime, sizeof(item_hdr))``).
* flash: each item's whole ``ntotal`` is copied into the open write buffer of its bucket (default,
  or chunked for chunked items, storage.c 500-505); an item that does not fit the buffer's rest
  closes it, and the rest is lost (extstore.c 576-579, zeroed at 529).  Buffers fill pages of
  ``ext_page_size`` in order (extstore.c 454-470), pages come from the file(s).

All arithmetic is on integers, as memcached's is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from slabcalc.errors import Refused
from slabcalc.model.units import c_atoi, c_strtoul

MB = 1 << 20
UINT32 = 1 << 32

INTEGER_WORDS = {  # -o word -> field, each parsed by safe_strtoul (storage.c 1184-1306)
    "ext_threads": "threads", "ext_io_depth": "io_depth", "ext_item_size": "item_size",
    "ext_item_age": "item_age", "ext_low_ttl": "low_ttl", "ext_recache_rate": "recache_rate",
    "ext_compact_under": "compact_under", "ext_drop_under": "drop_under", "ext_max_sleep": "max_sleep",
}
FLOAT_WORDS = ("ext_max_frag", "slab_automove_freeratio")
WORDS = frozenset({"ext_page_size", "ext_wbuf_size", "ext_path", "ext_drop_unread", *INTEGER_WORDS,
                   *FLOAT_WORDS})
SIZE_UNITS = {"m": MB, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}   # storage.c 1050-1066
BUCKETS = ("default", "compact", "chunked", "lowttl", "coldcompact", "old")


@dataclass(frozen=True)
class ExtPath:
    """One ``ext_path=FILE:SIZE``: the file and its size in bytes."""

    file: str
    size: int
    bucket: str = "default"   # pages of another bucket's file serve only that bucket (extstore.c 420-431)


@dataclass(frozen=True)
class Extstore:
    """External storage as a server started with these options runs it."""

    paths: tuple[ExtPath, ...]
    page_size: int              # bytes (ext_page_size MB)
    wbuf_size: int              # bytes (ext_wbuf_size MB)
    wbuf_count: int             # one write buffer per page bucket, held outside -m
    item_size: int              # ext_item_size: classes from the one this size picks are flushed
    item_age: int | None        # ext_item_age in seconds; None: no age limit (flushed under pressure)
    low_ttl: int
    compact_under: int          # pages
    drop_under: int             # pages
    max_frag: float
    threads: int
    header: int                 # sizeof(item_hdr)
    reserved_pages: int         # pages of the file never written
    write_margin_pages: int
    words: tuple[str, ...]      # the ext_* -o words as given
    # given on the command line, else None: the release's default (profile ``extstore.replay``)
    recache_rate: int | None = None
    max_sleep: int | None = None
    free_ratio: float | None = None     # slab_automove_freeratio

    @property
    def page_count(self) -> int:
        """Pages in all the files: each file's size // ext_page_size (storage.c 1070)."""
        return sum(p.size // self.page_size for p in self.paths)

    @property
    def usable_pages(self) -> int:
        """Pages the default bucket's items can be written to: the default files' pages (page 0 of the
        first file reserved where the release reserves it)."""
        default = sum(p.size // self.page_size for p in self.paths if p.bucket == "default")
        return max(0, default - self.reserved_pages)

    @property
    def wbufs_per_page(self) -> int:
        return self.page_size // self.wbuf_size

    @property
    def wbuf_bytes(self) -> int:
        """The write buffers, allocated at start-up outside -m (extstore.c 393-401, calloc)."""
        return self.wbuf_count * self.wbuf_size


NO_FLASH_PAGE, LARGER_THAN_WBUF, BELOW_ITEM_SIZE = "no_flash_page", "larger_than_wbuf", "below_ext_item_size"


def why_in_ram(ext: Extstore, lru_class: int, min_class: int, ntotal: int) -> str | None:
    """Why an item of ``ntotal`` bytes whose LRU is ``lru_class`` is never written to flash, or None
    when it is flushed.

    * ``no_flash_page``: the files have no page extstore writes to.  The free
      list is built from the last page down to page 1 (1.6.18 extstore.c
      343-355): page 0 is never on it, so a file of one page (64 MiB under the
      default ``ext_page_size`` of 64) gives ``_allocate_page`` nothing
      (extstore.c 428-445), ``extstore_write_request`` fails (extstore.c
      555-560) and the storage thread leaves the item in RAM (storage.c 514);
    * ``larger_than_wbuf``: the item does not fit a write buffer;
    * ``below_ext_item_size``: its class is below the class of ``ext_item_size``.
    """
    if not ext.usable_pages:
        return NO_FLASH_PAGE
    if ntotal > ext.wbuf_size:
        return LARGER_THAN_WBUF
    if lru_class < min_class:
        return BELOW_ITEM_SIZE
    return None


def _uint(name: str, text: str | None) -> int:
    if text is None:
        raise Refused(f"Missing {name} argument", 1)
    value = c_strtoul(text)
    if value is None:
        raise Refused(f"could not parse argument to {name}", 1)
    return value


def _double(name: str, text: str | None) -> float:
    """``safe_strtod``: the whole text a number."""
    if text is None:
        raise Refused(f"Missing {name} argument", 1)
    try:
        return float(text.strip())
    except ValueError:
        raise Refused(f"could not parse argument to {name}", 1) from None


class _Reader:
    """The ext_* words in the order memcached reads them (``storage_read_config``)."""

    def __init__(self, rules):
        self.rules = rules
        d = rules.defaults
        self.values = {"page_size": d["page_size"], "wbuf_size": d["wbuf_size"], "item_size": d["item_size"],
                       "item_age": None, "low_ttl": d["low_ttl"], "max_frag": d["max_frag"],
                       "threads": d["threads"], "io_depth": d["io_depth"], "compact_under": 0, "drop_under": 0}
        self.paths: list[tuple[str, int, int | None, str]] = []   # file, bytes, pages (1.6.18: counted
        #                                                             at parse time), bucket
        self.words: list[str] = []

    def read(self, word: str) -> None:
        name, has_value, text = word.partition("=")
        text = text if has_value else None
        self.words.append(word)
        if name in ("ext_page_size", "ext_wbuf_size"):
            if name == "ext_page_size" and self.rules.page_size_before_path and self.paths:
                raise Refused("Must specify ext_page_size before any ext_path arguments", 1)
            # unsigned int megabytes * 1024 * 1024 (storage.c 1180, 1193): wraps at 4 GiB
            self.values[name[4:]] = _uint(name, text) * MB % UINT32
        elif name in INTEGER_WORDS:
            value = _uint(name, text)
            self.values[INTEGER_WORDS[name]] = value if name != "ext_item_age" or value != UINT32 - 1 else None
        elif name in FLOAT_WORDS:
            value = _double(name, text)
            self.values["max_frag" if name == "ext_max_frag" else "free_ratio"] = value
        elif name == "ext_path":
            if text is None:
                raise Refused("missing argument to ext_path, ie: ext_path=/d/file:5G", 1)
            self.paths.append(self._path(text))
        # ext_drop_unread takes no value

    def _path(self, text: str) -> tuple[str, int, int | None, str]:
        """``storage_conf_parse()``: FILE:SIZE[:BUCKET] (strtok_r: empty fields are skipped)."""
        failed = "failed to parse ext_path argument"
        tokens = [t for t in text.split(":") if t]
        if not tokens:
            raise Refused(failed, 1)
        if len(tokens) < 2:
            raise Refused("must supply size to ext_path, ie: ext_path=/f/e:64m (M|G|T|P supported)\n" + failed, 1)
        size_text = tokens[1]
        multiplier = SIZE_UNITS.get(size_text[-1].lower(), 0)
        if not multiplier and self.rules.unknown_size_unit == "refuse":
            raise Refused(f"must supply size to ext_path, ie: ext_path=/f/e:64m ({self.rules.unit_hint} supported)\n"
                          + failed, 1)
        size = multiplier * c_atoi(size_text[:-1]) % (1 << 64)
        bucket = tokens[2].split(",")[0] if len(tokens) > 2 else "default"
        if len(tokens) > 2:
            if bucket not in BUCKETS or (bucket in ("coldcompact", "old") and self.rules.page_buckets < 6):
                raise Refused(f"Unknown extstore bucket: {bucket}\n{failed}", 1)
            if bucket != "default" and self.rules.only_default_bucket:
                raise Refused(f"ext_path only presently supports the default bucket\n{failed}", 1)
        pages = None
        if self.rules.page_size_before_path:   # 1.6.18 counts pages here, with the page size so far
            if self.values["page_size"] == 0:
                raise Refused("", -8, crash="SIGFPE: ext_path divides its size by an ext_page_size of 0")
            pages = size // self.values["page_size"]
            if pages == 0 and self.rules.zero_size_refused:     # 1.6.38 storage.c 1262-1269
                raise Refused("supplied ext_path has zero size, cannot use\n" + failed, 1)
        return tokens[0], size, pages, bucket


def read_extstore(rules, words: Iterable[str]) -> _Reader:
    """Read the ``ext_*`` words (and ``slab_automove_freeratio``) in order, refusing as memcached
    does at that point; :func:`start_extstore` finishes once every option is read."""
    reader = _Reader(rules)
    for word in words:
        reader.read(word)
    return reader


def check_extstore(reader: _Reader, item_size_max: int, udp_port: int) -> bool:
    """``storage_check_config()`` once all options are read: whether storage is on (an ``ext_path``
    was given; without one the words are read and ignored), refusing ``-I`` above the write buffer
    and UDP (exit 64)."""
    if not reader.paths:
        return False
    wbuf_size = reader.values["wbuf_size"]
    if item_size_max > wbuf_size:
        raise Refused(f"-I (item_size_max: {item_size_max}) cannot be larger than ext_wbuf_size: "
                      f"{wbuf_size - UINT32 if wbuf_size >= 1 << 31 else wbuf_size}", 64)
    if udp_port:
        raise Refused("Cannot use UDP with extstore enabled (-U 0 to disable)", 64)
    page_size = reader.values["page_size"]
    for index, (file, size, pages, bucket) in enumerate(reader.paths):
        if pages is None:   # 1.6.45 counts pages here, with the final page size
            if page_size == 0:
                raise Refused("", -8, crash="SIGFPE: the ext_path size divided by an ext_page_size of 0")
            pages = size // page_size
            if pages == 0 and reader.rules.zero_size_refused:
                raise Refused("supplied ext_path has zero size, cannot use", 64)
            reader.paths[index] = (file, size, pages, bucket)
    return True


def start_extstore(reader: _Reader) -> Extstore:
    """Extstore as the server opens it (``storage_init``, ``extstore_init``), refusing as it does
    (exit 1) -- after the slab classes are set up."""
    rules, v = reader.rules, reader.values
    page_size, wbuf_size = v["page_size"], v["wbuf_size"]
    counts = [pages for _, _, pages, _ in reader.paths]
    total = sum(counts)
    failed = "Failed to initialize external storage: "
    if wbuf_size == 0:
        raise Refused("", -8, crash="SIGFPE: ext_page_size % ext_wbuf_size with ext_wbuf_size 0")
    if page_size % wbuf_size:
        raise Refused(failed + "page_size must be divisible by wbuf_size", 1)
    if page_size % rules.align or wbuf_size % rules.align:
        raise Refused(failed + f"page_size and wbuf_size must be divisible by 1024*1024*{rules.align // MB}", 1)
    if total > rules.max_pages:
        raise Refused(failed + "page_count must total to < 65536. Increase page_size or lower path sizes", 1)
    compact, drop = v["compact_under"], v["drop_under"]
    if compact == 0:   # storage_init(): a share of the first path's pages
        compact = drop = max(rules.compact_under_min, int(counts[-1] * rules.compact_under_share))
    paths = tuple(ExtPath(file, size, bucket) for file, size, _, bucket in reader.paths)
    return Extstore(paths=paths, page_size=page_size, wbuf_size=wbuf_size, wbuf_count=rules.page_buckets,
                    item_size=v["item_size"], item_age=v["item_age"], low_ttl=v["low_ttl"], compact_under=compact,
                    drop_under=drop, max_frag=v["max_frag"], threads=v["threads"], header=rules.header,
                    reserved_pages=rules.reserved_pages, write_margin_pages=rules.write_margin_pages,
                    words=tuple(reader.words), recache_rate=v.get("recache_rate"), max_sleep=v.get("max_sleep"),
                    free_ratio=v.get("free_ratio"))


# -- where items go ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class FlashUse:
    """Items written to flash: write buffers, pages and memcached's ``extstore_*`` counters."""

    objects: int                # extstore_objects_written (= _used while nothing is deleted)
    bytes_used: int             # extstore_bytes_written: each item's whole ntotal
    wbufs: int                  # write buffers filled (the last one of each bucket may be open)
    wbuf_waste: int             # bytes left at the end of closed write buffers
    pages: int                  # pages written to (extstore_page_allocs)
    page_size: int
    reserved_pages: int
    buckets: int = 0            # buckets written to (each touches one write buffer)

    @property
    def pages_used(self) -> int:
        """``extstore_pages_used``: page_count - pages_free, the reserved page included."""
        return self.pages + self.reserved_pages

    @property
    def bytes_fragmented(self) -> int:
        """``extstore_bytes_fragmented``: pages_used x page_size - bytes_used (extstore.c 190)."""
        return self.pages_used * self.page_size - self.bytes_used

    @property
    def flash_bytes(self) -> int:
        """File bytes the written pages take."""
        return self.pages * self.page_size


def pack(ext: Extstore, streams: Sequence[Sequence[tuple[int, int]]]) -> FlashUse:
    """Write each stream (a bucket's ``(ntotal, count)`` runs, in the order the write thread takes
    them) into write buffers and pages; each bucket opens its own pages (extstore.c 545-596)."""
    objects = used = wbufs = waste = pages = buckets = 0
    per_page = ext.wbufs_per_page
    for stream in streams:
        free = 0          # bytes left in the open buffer (0: none open)
        opened = 0        # buffers opened in this bucket
        for size, count in stream:
            if size > ext.wbuf_size or count <= 0:
                continue
            objects += count
            used += size * count
            fit = min(count, free // size)
            count -= fit
            free -= fit * size
            if count:
                per_wbuf = ext.wbuf_size // size
                waste += free                       # the open buffer closes with this rest
                new = -(-count // per_wbuf)
                opened += new
                free = ext.wbuf_size - (count - (new - 1) * per_wbuf) * size
                waste += (new - 1) * (ext.wbuf_size - per_wbuf * size)
        wbufs += opened
        pages += -(-opened // per_page)
        buckets += bool(opened)
    return FlashUse(objects, used, wbufs, waste, pages, ext.page_size, ext.reserved_pages, buckets)


def header_ntotal(ntotal: int, value_bytes: int, header: int) -> int:
    """The RAM item left for a flushed item: its ntotal with the value (``value_bytes``: length + 2)
    replaced by ``sizeof(item_hdr)``."""
    return ntotal - value_bytes + header
