"""The JSON of ``slabcalc simulate -m A,B,C``: one record per ``-m`` (memcached's ``stats`` names)."""

from __future__ import annotations

from slabcalc.analysis.curve import Curve, CurvePoint, Target
from slabcalc.records.model import settings_record
from slabcalc.records.simulate import model_record

# a curve's columns, in order (csv and table); JSON adds the sample's error when sampled
CURVE_FIELDS = ("limit_maxbytes", "cmd_get", "get_hits", "get_misses", "hit_ratio", "evictions", "slabs_moved",
                "ideal_lru_hit_ratio", "ideal_lru_get_hits", "ideal_lru_evictions")

IDEAL_LRU = ("one exact LRU over all objects, limit_maxbytes of room, each object the bytes its item asks "
             "memcached's allocator for (ITEM_ntotal: header, CAS, key + 1, flags, value + 2), no slab classes")


def point_record(p: CurvePoint) -> dict:
    t, ideal = p.simulation.totals, p.ideal
    record = {
        "limit_maxbytes": p.limit_maxbytes,
        "cmd_get": t.gets,
        "get_hits": t.hits,
        "get_misses": t.misses,
        "hit_ratio": p.hit_ratio,
        "evictions": t.evicted,
        "slabs_moved": t.pages_moved,
        "ideal_lru_hit_ratio": ideal.hit_ratio,
        "ideal_lru_get_hits": ideal.hits,
        "ideal_lru_evictions": ideal.evictions,
    }
    sample = p.simulation.sample
    if sample is not None:
        record["hit_ratio_error"] = sample.hit_ratio_error
    return record


def _hit_ratio(simulation) -> float | None:
    t = simulation.totals
    return t.hits / t.gets if t.gets else None


def target_record(target: Target) -> dict:
    """``--target-hit-ratio``: the smallest -m found, with the replays at it and a megabyte below."""
    reached, below = target.reached, target.below
    record = {"hit_ratio": target.hit_ratio, "target_limit_mb": target.limit_mb,
              "get_hits": reached.totals.hits, "cmd_get": reached.totals.gets, "reached_hit_ratio": None,
              "below": None, "replays": target.replays}
    if target.limit_mb is None:
        record["largest_limit_mb"] = reached.settings.maxbytes >> 20
        record["largest_hit_ratio"] = _hit_ratio(reached)
    else:
        record["reached_hit_ratio"] = _hit_ratio(reached)
    if below is not None:
        record["below"] = {"limit_mb": below.settings.maxbytes >> 20, "get_hits": below.totals.hits,
                           "cmd_get": below.totals.gets, "hit_ratio": _hit_ratio(below)}
    return record


def target_text(target: Target) -> str:
    """One line: the limit, the replays that prove it, and what the search assumed."""
    r = target_record(target)
    if target.limit_mb is None:
        return (f"hit ratio {target.hit_ratio:g} is not reached: the largest -m, {r['largest_limit_mb']}, "
                f"hits {r['largest_hit_ratio']:.4f}; give a larger -m")
    below = r["below"]
    proof = (f"-m {below['limit_mb']} hits {below['hit_ratio']:.4f}" if below is not None
             else "-m 1 is the smallest limit there is" if target.limit_mb == 1
             else f"memcached refuses to start with -m {target.limit_mb - 1}")
    return (f"-m {target.limit_mb} is the smallest limit that reaches hit ratio {target.hit_ratio:g}: it hits "
            f"{r['reached_hit_ratio']:.4f} ({r['get_hits']} of {r['cmd_get']} gets), {proof} "
            f"({target.replays} replays between the curve's points, by bisection on whole megabytes; a hit ratio "
            f"that falls as -m grows between the points could hide a smaller one)")


def curve_record(curve: Curve, accounting=None, target: Target | None = None) -> dict:
    """The stable JSON contract of ``slabcalc simulate`` given a list of ``-m``."""
    first = curve.points[0].simulation
    limits = ", ".join(str(p.limit_maxbytes >> 20) for p in curve.points)
    model = model_record(first.model)
    # the model line is every point's but for its -m: the first "-m N" of the text is the limit
    model["text"] = model["text"].replace(f"-m {first.settings.maxbytes >> 20}", f"-m {limits}", 1)
    record = {
        "settings": {k: v for k, v in settings_record(first.settings).items()
                     if k not in ("maxbytes", "memcached_args")},
        "model": model,
        "ideal_lru": IDEAL_LRU,
    }
    if accounting is not None:
        record["input"] = {"source": accounting.source, "format": accounting.format, "rows": accounting.rows,
                           "rejected": accounting.rejected}
    if first.sample is not None:
        record["sample"] = {"rate": first.sample.rate, "ops": first.sample.ops,
                            "sampled_ops": first.sample.sampled_ops, "scale": first.sample.scale}
    record["curve"] = [point_record(p) for p in curve.points]
    if target is not None:
        record["target_limit_mb"] = target.limit_mb
        record["target"] = {**target_record(target), "text": target_text(target)}
    return record


__all__ = ["CURVE_FIELDS", "IDEAL_LRU", "point_record", "curve_record", "target_record", "target_text"]
