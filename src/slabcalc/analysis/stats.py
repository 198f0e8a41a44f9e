"""What a real memcached's memory holds, from its own stats: waste, drift, and why it evicts.

The input is what a node answers to ``version``, ``stats``, ``stats slabs``,
``stats items`` and ``stats settings`` -- read live by
:func:`slabcalc.inputs.client.read_node` or saved with ``echo "stats slabs" | nc host
11211`` and read by :func:`slabcalc.inputs.dumps.parse_dump` (in any arrangement).

Per class (``stats slabs`` names, see ``slabs.c do_slabs_stats()``):

* ``used_bytes`` = ``chunk_size`` x ``used_chunks``: the chunks items hold;
* ``requested_bytes`` = ``mem_requested``: the bytes those items asked for.
  It is in ``stats slabs`` up to 1.5.16 (the sizes passed to
  ``slabs_alloc``, chunk by chunk) and in ``stats items`` from 1.5.17 (the
  ``ntotal`` of the items in the class's LRU; a chunked item counts whole in
  the largest class, though its header and tail chunks sit in smaller ones);
* ``chunk_waste`` = used - requested: bytes inside used chunks no item asked for;
* ``page_bytes`` = ``total_pages`` x the bytes one page takes from ``-m``
  (a whole ``slab_page_size`` with ``slab_reassign``, else ``chunk_size`` x
  ``chunks_per_page``: ``do_slabs_newslab()``), and ``free_bytes`` = page
  bytes - used bytes: free chunks and page tails;
* ``evicted`` / ``outofmemory`` from ``stats items`` (since the server started).

The drift check resolves ``stats settings`` and the release to a
:class:`slabcalc.model.settings.Settings` and compares the server's class table
(``chunk_size``, ``chunks_per_page`` of every class with pages) with the
model's: a difference means options the settings do not show (``-o
slab_sizes``), a release the profile does not describe, or a model error.

This module is long because saved stats come in many arrangements (1.4 to 1.6, one file or several, echoed commands) and each class's figures and drift are derived here (the finding of a reading is :mod:`slabcalc.analysis.automover`'s); what happens between two readings is :mod:`slabcalc.analysis.diagnosis`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from slabcalc.errors import DumpError  # noqa: F401 (raised here, caught by its callers)
from slabcalc.inputs.dumps import GENERAL, ITEMS, SETTINGS, SLABS, VERSION, Dump
from slabcalc.model.classes import ClassBytes, slab_classes
from slabcalc.model.settings import Settings

MIB = 1 << 20
def _stats_values(dump: Dump, profile) -> tuple[dict, list[str]]:
    """:meth:`Settings.argv`'s values that start a memcached of ``profile`` like this one, and notes on
    what is unsure.

    From ``stats settings``: ``maxbytes`` (-m), ``chunk_size`` (-n),
    ``growth_factor`` (-f, printed with two decimals), ``item_size_max``
    (-I), ``cas_enabled`` (-C), ``slab_chunk_max`` (in bytes),
    ``slab_reassign`` and ``inline_ascii_response``.  ``-o slab_sizes`` is
    not printed by any release: only the class table can reveal it.
    """
    from slabcalc.model.settings import chunk_max_value

    s = dump.settings
    notes: list[str] = []
    memory = None
    if "maxbytes" in s:
        maxbytes = int(s["maxbytes"])
        memory = maxbytes // MIB
        if maxbytes % MIB:
            notes.append(f"maxbytes {maxbytes} is not whole megabytes")
    subopts, chunk_max = [], None
    given_max = int(s["slab_chunk_max"]) if "slab_chunk_max" in s and profile.has_slab_chunk_max else None
    if given_max is not None and given_max != profile.default_slab_chunk_max:
        try:
            chunk_max = chunk_max_value(profile, given_max)
        except ValueError as exc:   # no flag of this release says it: the drift check will show
            notes.append(str(exc))
    for name, on, off in (("slab_reassign", "slab_reassign", "no_slab_reassign"),
                          ("inline_ascii_response", "inline_ascii_resp", "no_inline_ascii_resp")):
        option = {"yes": on, "no": off}.get(s.get(name, ""))
        if option and profile.suboptions.get(option):
            subopts.append(option)
    return dict(memory_mb=memory, chunk_size=s.get("chunk_size"), factor=s.get("growth_factor"),
                item_size_max=s.get("item_size_max"),
                no_cas=s.get("cas_enabled") == "no" and profile.has_cas_option, slab_chunk_max=chunk_max,
                suboptions=subopts), notes


def resolve_settings(dump: Dump, server_args: Sequence[str] | None = None) -> tuple[Settings | None, list[str]]:
    """The model's settings for this node (release and ``stats settings``), with notes.

    ``server_args`` are the flags the server was started with, when the operator
    knows them: they replace what ``stats settings`` shows (which rounds ``-f``
    to two decimals and never shows ``-o slab_sizes``); memcached's refusal of
    them raises :class:`slabcalc.model.settings.Refused`.
    """
    from slabcalc.model.profile import ProfileError, load_profile
    from slabcalc.model.settings import Refused, configure

    release = dump.release
    if release is None:
        return None, ["no version: the release is unknown, so there is no model to compare with"]
    if not dump.settings and server_args is None:
        return None, ["no 'stats settings' reply: no drift check; page bytes assume pages "
                      "of chunk_size x chunks_per_page"]
    version = re.match(r"\d+\.\d+(\.\d+)?", release)
    try:
        profile = load_profile(version[0] if version else release)
    except ProfileError as exc:
        return None, [f"release {release}: {exc}"]
    if server_args is not None:
        given = configure(profile, list(server_args))
        return given, _disagreements(dump, given)
    try:
        values, notes = _stats_values(dump, profile)
        return configure(profile, Settings.argv(**values)), notes
    except (Refused, ValueError) as exc:
        said = getattr(exc, "message", None) or str(exc)
        return None, [f"the model of memcached {release} refuses these settings "
                      f"({' / '.join(said.splitlines())}): no drift check"]


def _disagreements(dump: Dump, given: Settings) -> list[str]:
    """Where ``stats settings`` contradicts the flags the operator gave (a node started otherwise)."""
    s = dump.settings
    shown = {"maxbytes": given.maxbytes, "chunk_size": given.chunk_size, "item_size_max": given.item_size_max}
    notes = [f"stats settings says {name} {s[name]}, the given server flags {value}"
             for name, value in shown.items() if name in s and s[name].isdigit() and int(s[name]) != value]
    factor = s.get("growth_factor")
    if factor and re.fullmatch(r"\d+\.\d+", factor) and f"{given.factor:.2f}" != factor:
        notes.append(f"stats settings says growth_factor {factor}, the given server flags {given.factor:g}")
    return notes + [f"settings from the given server flags: {' '.join(given.as_argv())}"]


def unrounded_factor(settings: Settings, rows: Sequence["ClassStats"], printed: str) -> Settings | None:
    """The ``-f`` behind a factor ``stats settings`` printed with two decimals: the one with the fewest
    decimals (then nearest the printed one) within half a hundredth whose classes are the server's."""
    from dataclasses import replace

    shown = float(printed)
    for decimals in (3, 4):
        step = 10 ** -decimals
        count = int(round(0.005 / step))
        for k in sorted(range(-count, count + 1), key=abs):
            factor = round(shown + k * step, decimals)
            if factor <= 1.0 or f"{factor:.2f}" != printed:
                continue
            candidate = replace(settings, factor=factor)
            if not class_drift(rows, candidate):
                return candidate
    return None


# -- per class ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ClassStats(ClassBytes):
    """One class of one node, as its stats show it."""

    node: str
    id: int
    chunk_size: int
    perslab: int
    pages: int
    used_chunks: int
    free_chunks: int
    page_length: int                 # bytes one page takes from -m
    requested_bytes: int | None      # mem_requested (None when the dump lacks it)
    items: int | None                # stats items number
    evicted: int | None
    outofmemory: int | None

    def chunks_in_use(self) -> tuple[int, int]:
        return self.chunk_size, self.used_chunks


@dataclass(frozen=True)
class Drift:
    """A class whose chunk size or chunks per page differ from the model's."""

    class_id: int
    chunk_size: int
    perslab: int
    model_chunk_size: int | None     # None: the model has no such class
    model_perslab: int | None


@dataclass(frozen=True)
class NodeStats:
    """One node's classes, settings as resolved, drift and notes on what was missing."""

    node: str
    dump: Dump
    settings: Settings | None
    classes: tuple[ClassStats, ...]
    drift: tuple[Drift, ...] | None  # None: not checked
    notes: tuple[str, ...]

    def total(self, name: str) -> int | None:
        values = [getattr(c, name) for c in self.classes]
        return None if any(v is None for v in values) else sum(values)

    @property
    def pool_pages(self) -> int | None:
        """Pages in the global page pool (``slab_global_page_pool``, 1.4.28+); None when not reported."""
        text = self.dump.general.get("slab_global_page_pool")
        return int(text) if text is not None and text.isdigit() else None

    @property
    def pool_bytes(self) -> int:
        """What the pool's pages take of ``-m``: whole pages (slab_reassign's page size)."""
        page = self.settings.slab_page_size if self.settings is not None else 1 << 20
        return (self.pool_pages or 0) * page


def _int(dump: Dump, command: str, name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise DumpError(f"{dump.source}: {command}: {name} is {value[:40]!r}, not a whole number") from None


def _field(dump: Dump, command: str, table: Mapping[int, Mapping[str, str]], cls: int, name: str) -> int | None:
    value = table.get(cls, {}).get(name)
    return None if value is None else _int(dump, command, f"{cls}:{name}", value)


def analyse(dump: Dump, node: str | None = None, server_args: Sequence[str] | None = None) -> NodeStats:
    """Per-class memory, drift and notes of one node's dump (``server_args``: see :func:`resolve_settings`)."""
    node = node or dump.source
    notes: list[str] = []
    missing = [c for c in (VERSION, GENERAL, SLABS, ITEMS, SETTINGS) if c not in dump.given]
    if SLABS not in dump.given:
        raise DumpError(f"{dump.source}: no 'stats slabs' reply: nothing to say about classes")
    settings, resolve_notes = resolve_settings(dump, server_args)
    notes += resolve_notes
    in_slabs = any("mem_requested" in f for f in dump.slabs.values())
    in_items = any("mem_requested" in f for f in dump.items.values())
    if not in_slabs and not in_items:
        if ITEMS not in dump.given:
            notes.append("no 'stats items' reply: evicted, outofmemory and (1.5.17+) mem_requested unknown")
        else:
            notes.append("no mem_requested in stats slabs or stats items: requested_bytes and chunk_waste unknown")
    elif ITEMS not in dump.given:
        notes.append("no 'stats items' reply: evicted and outofmemory unknown")
    rows = []
    for cls in sorted(dump.slabs):
        f = dump.slabs[cls]
        need = [n for n in ("chunk_size", "chunks_per_page", "total_pages", "used_chunks") if n not in f]
        if need:
            raise DumpError(f"{dump.source}: stats slabs: class {cls} lacks {', '.join(need)}")
        get = lambda name: _field(dump, SLABS, dump.slabs, cls, name)  # noqa: E731
        chunk_size, perslab = get("chunk_size"), get("chunks_per_page")
        free = (get("free_chunks") or 0) + (get("free_chunks_end") or 0)  # _end: 1.2's untouched tail
        if in_slabs:
            requested = get("mem_requested")
        elif in_items:
            requested = _field(dump, ITEMS, dump.items, cls, "mem_requested") or 0
        else:
            requested = None
        counted = ITEMS in dump.given
        page_length = settings.page_length(chunk_size, perslab) if settings else chunk_size * perslab
        rows.append(ClassStats(
            node, cls, chunk_size, perslab, get("total_pages"), get("used_chunks"), free, page_length, requested,
            (_field(dump, ITEMS, dump.items, cls, "number") or 0) if counted else None,
            (_field(dump, ITEMS, dump.items, cls, "evicted") or 0) if counted else None,
            (_field(dump, ITEMS, dump.items, cls, "outofmemory") or 0) if counted else None))
    drift = class_drift(rows, settings) if settings else None
    printed = dump.settings.get("growth_factor", "")
    if drift and server_args is None and re.fullmatch(r"\d+\.\d\d", printed):
        found = unrounded_factor(settings, rows, printed)
        if found is not None:   # stats settings prints "%.2f": the real -f had more decimals
            settings, drift = found, ()
            notes.append(f"stats settings prints growth_factor {printed}; the classes are those of "
                         f"-f {found.factor:g}")
    if in_items and not in_slabs and settings is not None and settings.chunked_items:
        largest = slab_classes(settings)[-1].id
        if any(r.id == largest and r.items for r in rows):
            notes.append(f"class {largest} holds chunked items: from 1.5.17 memcached counts their whole size "
                         "there, though their first and last chunks sit in smaller classes, so per-class "
                         "chunk_waste is off in those classes (the totals are exact)")
    notes += _malloced_check(dump, rows, settings)
    flushed = dump.general.get("extstore_objects_used", "0")
    if flushed.isdigit() and int(flushed):
        # storage.c 546-556: the header keeps the item's nbytes; items.c 437 vs 506
        notes.append(f"{flushed} items ({dump.general.get('extstore_bytes_used', '?')} bytes) are on flash "
                     "(extstore): 'bytes' and metadump size= count them whole, while in RAM each is a header "
                     "item in a small class, which mem_requested counts at its own size")
    if missing and missing != [SETTINGS]:
        notes.append("replies missing: " + ", ".join(missing))
    return NodeStats(node, dump, settings, tuple(rows), drift, tuple(notes))


def class_drift(rows: Sequence[ClassStats], settings: Settings) -> tuple[Drift, ...]:
    """The server's classes that differ from the model's classes of ``settings``."""
    model = {c.id: c for c in slab_classes(settings)}
    out = []
    for r in rows:
        m = model.get(r.id)
        if m is None or (m.chunk_size, m.perslab) != (r.chunk_size, r.perslab):
            out.append(Drift(r.id, r.chunk_size, r.perslab, m.chunk_size if m else None, m.perslab if m else None))
    return tuple(out)


def _malloced_check(dump: Dump, rows: Sequence[ClassStats], settings: Settings | None) -> list[str]:
    """``total_malloced`` against the page bytes of the classes (plus 1.6's global page pool)."""
    if "total_malloced" not in dump.slab_totals or settings is None:
        return []
    malloced = _int(dump, SLABS, "total_malloced", dump.slab_totals["total_malloced"])
    pool = int(dump.general.get("slab_global_page_pool", "0") or 0)
    expected = sum(r.page_bytes for r in rows) + pool * settings.slab_page_size
    if malloced == expected:
        return []
    return [f"total_malloced is {malloced} but the classes' pages come to {expected} bytes "
            f"(difference {malloced - expected}): pages not in any class, or a model error"]


# -- findings ----------------------------------------------------------------------------

def diagnosis(node: NodeStats):
    """The finding of one reading, with its action (:mod:`slabcalc.analysis.automover`), or None.

    One reading tells which classes evict now (a class's tail no older than its last victim),
    which hold pages of older items or free chunks, and what the automover's rules will do
    with them.  Counters since boot no longer decide it: a class that evicted while it was
    being filled and stopped is a page holder like any other (issue 31).
    """
    from slabcalc.analysis.automover import diagnose, from_reading

    return diagnose(from_reading(node))


def calcification(node: NodeStats) -> str | None:
    """The finding of one reading when it is calcification (pages idle, nothing to move them)."""
    found = diagnosis(node)
    return found.line if found is not None and found.kind == "calcification" else None


def _ids(rows: Sequence[ClassStats]) -> str:
    return ", ".join(str(c.id) for c in rows)


def drift_lines(node: NodeStats) -> list[str]:
    if node.drift is None:
        return []
    release = node.dump.release
    if not node.drift:
        return [f"drift: none: the {len(node.classes)} class(es) with pages match memcached {release} "
                f"started with {' '.join(node.settings.as_argv())}"]
    lines = []
    for d in node.drift:
        model = (f"the model's class {d.class_id} is {d.model_chunk_size} bytes x {d.model_perslab}"
                 if d.model_chunk_size is not None else "the model has no such class")
        lines.append(f"drift: class {d.class_id} is {d.chunk_size} bytes x {d.perslab} per page; {model}")
    factor = node.dump.settings.get("growth_factor", "")
    hint = "options stats settings does not show (-o slab_sizes)"
    if re.fullmatch(r"\d+\.\d\d", factor):
        hint += f", or a -f with more decimals than the {factor} stats settings prints"
    lines.append(f"drift: {len(node.drift)} class(es) differ from memcached {release} started with "
                 f"{' '.join(node.settings.as_argv())}: {hint}; action: give slabcalc the flags the node "
                 f"was started with, as options (stats -f ... -o slab_sizes=...), so the model is the node's")
    return lines


# -- records (the stable JSON contract) ----------------------------------------------------


def findings(nodes: Sequence[NodeStats], now: Sequence[str] = ()) -> list[str]:
    """Human lines: per node its notes, drift check and the finding of its reading with its action
    (left out for the nodes in ``now``, read twice: what happens between the readings says more)."""
    lines = []
    for n in nodes:
        prefix = f"{n.node}: " if len(nodes) > 1 else ""
        found = None if n.node in now else diagnosis(n)
        lines += [prefix + line for line in (*n.notes, *drift_lines(n), *([found.line] if found else []))]
    return lines
