"""The JSON of ``slabcalc simulate`` and its summary lines (the calcification finding's words)."""

from __future__ import annotations

from slabcalc.engines.background import Background
from slabcalc.engines.results import ClassResult, Finding, Model, Simulation, TimelineRow, Totals
from slabcalc.model.profile import measured_agreement
from slabcalc.model.treatments import options_text
from slabcalc.records.model import option_records

CLASS_FIELDS = ("class", "chunk_size", "pages", "items", "evicted", "reclaimed", "crawler_reclaimed", "outofmemory",
                "hits", "misses", "used_chunks", "free_chunks", "expired_items", "free_bytes", "expired_bytes",
                "evicted_nonzero", "evicted_unfetched", "expired_unfetched", "pages_moved_in", "pages_moved_out",
                "number_hot", "number_warm", "number_cold")


def class_record(r: ClassResult) -> dict:
    c = r.slab_class
    return {
        "class": c.id,
        "chunk_size": c.chunk_size,
        "pages": r.pages,
        "items": r.items,
        "evicted": r.evicted,
        "reclaimed": r.reclaimed,
        "crawler_reclaimed": r.crawler_reclaimed,
        "outofmemory": r.outofmemory,
        "hits": r.hits,
        "misses": r.misses,
        "used_chunks": r.used_chunks,
        "free_chunks": r.free_chunks,
        "expired_items": r.expired_items,
        "free_bytes": r.free_chunks * c.chunk_size,
        "expired_bytes": r.expired_bytes,
        "evicted_nonzero": r.evicted_nonzero,
        "evicted_unfetched": r.evicted_unfetched,
        "expired_unfetched": r.expired_unfetched,
        "pages_moved_in": r.moved_in,
        "pages_moved_out": r.moved_out,
        "number_hot": r.number_hot,
        "number_warm": r.number_warm,
        "number_cold": r.number_cold,
    }


def totals_record(t: Totals) -> dict:
    """The replay's totals under memcached's ``stats`` names (as ``simulate -m A,B`` and ``stats`` give
    them); ``ops``, ``deletes``, ``stored``, ``too_large``, ``chunk_failures``, ``outofmemory`` and
    ``pages`` have none."""
    return {
        "ops": t.ops, "cmd_set": t.sets, "cmd_get": t.gets, "get_hits": t.hits, "get_misses": t.misses,
        "deletes": t.deletes, "delete_hits": t.delete_hits, "cmd_touch": t.touches, "touch_hits": t.touch_hits,
        "stored": t.stored, "too_large": t.too_large, "chunk_failures": t.chunk_failures,
        "outofmemory": t.outofmemory, "evictions": t.evicted, "reclaimed": t.reclaimed,
        "crawler_reclaimed": t.crawler_reclaimed, "get_expired": t.get_expired, "curr_items": t.curr_items,
        "total_items": t.total_items, "total_malloced": t.total_malloced, "pages": t.pages,
        "slabs_moved": t.pages_moved, "slab_global_page_pool": t.global_page_pool,
        "slab_reassign_rescues": t.slab_reassign_rescues,
        "slab_reassign_evictions_nomem": t.slab_reassign_evictions_nomem,
        "slab_reassign_inline_reclaim": t.slab_reassign_inline_reclaim,
        "slab_reassign_chunk_rescues": t.slab_reassign_chunk_rescues,
    }


def _clean(value: float | None):
    """A whole number of seconds as an int (``3``, not ``3.0``)."""
    return int(value) if value is not None and float(value).is_integer() else value


def memory_records(sim: Simulation) -> list[dict]:
    """Each class's page bytes at the end, split into used chunks and free page bytes (the unused
    chunks and the page tails); the item bytes inside chunks are not tracked (``None``)."""
    rows = [{"class": r.slab_class.id, "requested_bytes": None, "chunk_waste": None,
             "used_bytes": r.used_chunks * r.slab_class.chunk_size,
             "free_bytes": r.pages * r.page_length - r.used_chunks * r.slab_class.chunk_size}
            for r in sim.classes if r.pages]
    if sim.totals.global_page_pool:
        rows.append({"class": 0, "requested_bytes": None, "chunk_waste": None, "used_bytes": 0,
                     "free_bytes": sim.totals.global_page_pool * sim.settings.slab_page_size})
    return rows


def timeline_record(row: TimelineRow) -> dict:
    return {"time": _clean(row.time), "class": row.class_id, "pages": row.pages, "items": row.items,
            "evicted": row.evicted, "evicted_total": row.evicted_total}


def model_text(model: Model) -> str:
    """The model line printed with every simulation: what ran, and how exact it is."""
    bg = model.background
    measured = measured_agreement().get(model.release)      # read once: the note and the agreement both use it
    limit = f"-m {model.memory_limit_mb}" if model.memory_limit_mb else "-m 0 (no limit)"
    lru = ("segmented HOT/WARM/COLD LRU" if model.lru == "segmented" else "compat LRU (one per class)")
    note = f" ({_unless_measured(bg.rules.note, measured)})" if bg is not None and bg.rules.note else ""
    if bg is None or not bg.threads:
        text = (f"memcached {model.release}, compat LRU (one per class), no page moves, {limit}: "
                f"a replay of the synchronous allocation path, exact" if model.lru == "compat" else
                f"memcached {model.release}, {lru} with no maintainer thread, no page moves, {limit}: a MODEL{note}")
    else:
        exactness = ("rules read from the source, timing as the paced runs allow: not exact"
                     if bg.rules.segmented_exact or bg.lru == "compat" else "a MODEL of this release")
        text = (f"memcached {model.release}, {lru}, {limit}; beside the requests, on the workload's clock "
                f"from the server's start: {threads_text(bg)}{note}; {exactness}; {agreement_text(model, measured)}")
    if bg is not None and model.automove == 2 and bg.rules.rules.get("slab_automove_2") == "can_crash":
        text += (f"; with slab_automove=2 the real {model.release} can crash (a page move of a class left with no "
                 f"page: slabs_mover.c, fixed in 1.6.41 by commit 221c52162) -- a real 1.6.38 did, on random "
                 f"shapes r01029 (27 s in) and r01052 (10 s in), every run (docs/exactness.md); the replay goes "
                 f"on as if it had not")
    if model.extstore:
        text += (f"; extstore's storage write and compaction threads and, for slab_automove=1, the extstore "
                 f"automover ({model.extstore}'s rules)")
    if model.options:
        text += f"; {options_text(model.options)}"
    if model.sample is not None:
        rate = model.sample
        text += (f"; replayed on a {rate:.4g} sample of the keys (their hash under the rate), each page holding "
                 f"{rate:.4g} of its chunks, counts scaled back by {1 / rate:.4g}")
    if model.key_hash_bits:
        text += (f"; string keys kept as {model.key_hash_bits}-bit hashes (BLAKE2b): two keys shared one with "
                 f"probability at most {model.key_collision_bound:.2g} (n(n-1)/2^{model.key_hash_bits + 1}, "
                 f"n the operations replayed)")
    return text


# the feature of a replay a stratum of the random-shape corpus stands for (tests/random_corpus.py stratum)
def _stratum(model: Model) -> str | None:
    return "extstore" if model.extstore else "automove=2" if model.automove == 2 else None


# a profile note's clause that no capture of the release checked its rules: true of a range of releases,
# not of one the random-shape corpus measured (agreement_text then says what it measured)
UNCHECKED = ", not checked against a capture"


def _unless_measured(note: str, measured: dict | None) -> str:
    """``note`` without its :data:`UNCHECKED` clause where the corpus ``measured`` the release."""
    if measured is not None and UNCHECKED in note:
        return note.split(UNCHECKED)[0]
    return note


def agreement_text(model: Model, measured: dict | None) -> str:
    """What the random-shape corpus ``measured`` for the release (issue 38; :func:`measured_agreement`'s
    entry: model/profiles/agreement.json, written from the captures by scripts/gen_exactness.py): never a
    typed figure."""
    if measured is None:
        return f"not measured against a real {model.release} on random shapes (docs/exactness.md)"
    text = f"model agrees with real {model.release} on {measured['agree']} of {measured['shapes']} random shapes"
    stratum = _stratum(model)
    if stratum in measured["strata"]:
        shapes, agree = measured["strata"][stratum]
        text += f" ({agree} of {shapes} with {stratum})"
    return text + f", the real server's own runs apart on {measured['apart']} (docs/exactness.md)"


def threads_text(bg: Background) -> str:
    """``slab automover 1 (window 30 s, ratio 0.8), LRU maintainer, LRU crawler`` -- what ran."""
    parts = []
    window = f"window {bg.slab_automove_window} s, ratio {bg.slab_automove_ratio:g}"
    if bg.automover_runs and bg.slab_automove == 2:
        parts.append(f"slab automover 2 (a page moves on each eviction; and the windowed one, {window})")
    elif bg.automover_runs:
        parts.append(f"slab automover 1 ({window})")
    elif bg.slab_reassign and bg.slab_automove == 2:
        parts.append("slab automover 2 (a page moves on each eviction)")
    elif bg.slab_automove and not bg.slab_reassign:
        parts.append(f"slab_automove={bg.slab_automove} without slab_reassign: no page moves")
    else:
        parts.append("no slab automover (pages stay in their class)")
    parts.append("LRU maintainer" if bg.lru_maintainer else "no LRU maintainer")
    parts.append("LRU crawler" if bg.crawls else "no LRU crawler")
    if bg.temp_lru:
        parts.append(f"temporary LRU (TTL up to {bg.temporary_ttl} s, never evicted)")
    return ", ".join(parts)


# when the storage write thread flushes a class early (profile extstore.replay.write_target)
FLUSHES = {
    "margin": "keeps 3 pages of free chunks in each class it flushes",
    "pool_deficit": "flushes a class early only while the global pool is under that minimum, by the pages it lacks",
    None: "flushes from the classes' COLD tails",
}


def why(model: Model, pages_moved: int) -> str:
    """Why pages did (not) follow the evictions, from what ran -- never a cause the setup rules out."""
    if model.automove == 1 and model.extstore:
        text = (f"the extstore automover moved {pages_moved} page{'s' if pages_moved != 1 else ''}: it sends "
                f"pages only to the global pool, never to a class that evicts -- from a class with spare free "
                f"chunks over its {model.automove_window}-run window, or from the class of large items with the "
                f"oldest COLD tail when the pool is below slab_automove_freeratio of all pages; the write thread "
                f"{FLUSHES[model.extstore_write_target]}, and header items get pages only from that pool")
    elif model.automove == 1:
        text = (f"slab automover 1 moved {pages_moved} page{'s' if pages_moved != 1 else ''}: it moves at most "
                f"one a second, from the class with the oldest items (more than 2 pages) to one that evicts "
                f"with items younger than {model.automove_ratio:g} of those, once its {model.automove_window}-run "
                f"window has filled; a class with over 2.5 pages of free chunks and no eviction or new page in "
                f"the window gives pages to the global pool")
    elif model.automove == 2:
        text = (f"slab_automove=2 moved {pages_moved} page{'s' if pages_moved != 1 else ''}: one for each "
                f"eviction, from the next class with more than one page")
    else:
        text = "no page moves (slab_automove=0 or no slab_reassign): a page serves its first class for good"
    return text + "; a chunk freed by expiry or delete is reused only by its own class"


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def model_record(model: Model) -> dict:
    return {"release": model.release, "lru": model.lru, "exact": model.exact, "text": model_text(model),
            "slab_automove": model.automove, "lru_maintainer": model.maintainer, "lru_crawler": model.crawler,
            "slab_automove_window": model.automove_window, "slab_automove_ratio": model.automove_ratio,
            "options": option_records(model.options), "build": model.build,
            **({"key_hash_bits": model.key_hash_bits, "key_collision_bound": model.key_collision_bound}
               if model.key_hash_bits else {})}


def simulation_record(sim: Simulation, accounting=None) -> dict:
    """The stable JSON contract of ``slabcalc simulate``."""
    from slabcalc.records.model import settings_record

    record = {
        "settings": settings_record(sim.settings, "simulate"),
        "model": model_record(sim.model),
        "classes": [class_record(r) for r in sim.classes],
        "totals": totals_record(sim.totals),
        "calcification": finding_record(sim.finding, sim.settings, sim.model),
        "end_time": _clean(sim.end_time),
    }
    if accounting is not None:
        record["input"] = {"source": accounting.source, "format": accounting.format, "rows": accounting.rows,
                           "rejected": accounting.rejected,
                           "rejections": [{"line": r.line, "reason": r.reason, "text": r.text}
                                          for r in accounting.first_rejections]}
    if sim.sample is not None:
        record["sample"] = sample_record(sim.sample)
    if sim.extstore is not None:
        record["extstore"] = dict(sim.extstore)        # stats' extstore lines, memcached's names
    if sim.timeline:
        record["timeline"] = [timeline_record(r) for r in sim.timeline]
    return record


def sample_record(s) -> dict:
    """How a sampled replay was made (``simulate --sample``) and the error of its scaled counts."""
    return {"rate": s.rate, "ops": s.ops, "sampled_ops": s.sampled_ops, "scale": s.scale,
            "hit_ratio": s.hit_ratio, "hit_ratio_error": s.hit_ratio_error, "evicted_error": s.evicted_error,
            "coarse_classes": list(s.coarse_classes), "drawn": s.drawn, "adjusted": s.adjusted,
            "sampled_hit_ratio": s.sampled_hit_ratio, "sampled_hit_ratio_error": s.sampled_hit_ratio_error,
            "widened": s.widened}


def sample_lines(s) -> list[tuple[str, str]]:
    """A sampled replay's summary lines: what was replayed, and the error of the scaled figures."""
    from slabcalc.engines.sample import COARSE_ITEMS

    ratio = ("no gets" if s.hit_ratio is None else
             f"hit ratio {s.hit_ratio:.4f} +/- {s.hit_ratio_error:.4f}")
    coarse = ", ".join(map(str, s.coarse_classes))
    drawn = f"a sample drawn before (--sampled {s.rate:.4g})"
    return [
        ("sample", (f"{s.sampled_ops} operations of {drawn} replayed" if s.drawn and not s.adjusted else
                    f"{s.sampled_ops} of the log's {s.ops} operations, {drawn}, replayed" if s.drawn else
                    f"{s.sampled_ops} of {s.ops} operations replayed (keys hashing under {s.rate:.4g})") + ", each "
                   f"page holding {s.rate:.4g} of its chunks: pages are the node's, every other count is the "
                   f"sample's times {s.scale:.4g}"),
        ("sampling error", f"chance (95%"
                           + (f", widened x{s.widened:.2f} for the pages in coarse classes" if s.widened != 1 else "")
                           + f"): {ratio}, evicted +/- {s.evicted_error}"
                           + (f"; classes {coarse} hold fewer than {COARSE_ITEMS} sampled items (their figures "
                              f"are mostly chance)" if coarse else "")),
        *([("not adjusted", "the hit ratio, gets and hits are the sample's own, scaled: its rows state no log_ops "
                            "and log_gets (its log's operations and gets, which `slabcalc sql --workload --sample` "
                            "writes), so they are not adjusted to the log's gets as --sample adjusts them")]
          if s.drawn and not s.adjusted else []),
    ]


def finding_record(f: Finding | None, settings, model: Model) -> dict | None:
    if f is None:
        return None
    return {
        "evicting_classes": list(f.evicting), "evicted": f.evicted, "free_bytes": f.free_bytes,
        "expired_bytes": f.expired_bytes, "idle_bytes": f.idle_bytes, "holding_classes": list(f.holders),
        "peak_free_bytes": f.peak_free_bytes, "peak_time": f.peak_time, "peak_class": f.peak_class,
        "pages_moved": f.pages_moved, "global_page_pool": f.pool_pages, "action": finding_action(settings, model),
    }


def finding_action(settings, model: Model) -> str:
    """What to change after a calcification finding: with no page moves, the flag that turns the
    automover on (checked by the release's own option rules, as memcached reads them); with page moves,
    the automover already did what its rules allow, and the limit is ``-m``."""
    from slabcalc.analysis.automover import AUTOMOVE_NOW, TURN_ON, TURN_ON_REASSIGN
    from slabcalc.model.settings import Refused, configure

    release = settings.profile.release
    if model.automove:
        return ("more -m: the automover already moves pages as its rules allow; simulate with a list of -m "
                "(-m 16,32,64) shows the hits each buys")
    flag = TURN_ON if settings.slab_reassign else TURN_ON_REASSIGN
    try:
        configure(settings.profile, settings.as_argv() + flag.split())
    except Refused:
        return f"memcached {release} cannot move pages: more -m, or classes that fit the items (optimize)"
    now = f", or {AUTOMOVE_NOW} on a running node" if settings.slab_reassign else ""
    return f"for memcached {release}: {flag} (at the next start){now}"


def finding_lines(f: Finding | None, model: Model, pages_moved: int = 0,
                  settings=None) -> list[tuple[str, str]]:
    """The calcification finding as (field, text) lines for a report (with ``settings``, its action)."""
    if f is None:
        return [("calcification", "none: no class evicted while another held free chunks or expired items")]
    plural = "es" if len(f.evicting) > 1 else ""
    holders = ", ".join(map(str, f.holders[:5])) + (" ..." if len(f.holders) > 5 else "")
    lines = [("calcification",
              f"class{plural} {', '.join(map(str, f.evicting))} evicted {f.evicted} items while "
              + (f"class{'es' if len(f.holders) > 1 else ''} {holders}" if f.holders else "other classes")
              + f" held {f.idle_bytes} bytes ({f.idle_bytes / (1 << 20):.2f} MiB) at the end: "
              f"{f.free_bytes} in free chunks, {f.expired_bytes} in expired items")]
    if f.peak_free_bytes:
        lines.append(("calcification peak", f"class {f.peak_class} evicted at t={_number(f.peak_time)} while "
                                             f"other classes had {f.peak_free_bytes} bytes in free chunks"))
    lines.append(("why", why(model, pages_moved)))
    if settings is not None:
        lines.append(("action", finding_action(settings, model)))
    return lines
