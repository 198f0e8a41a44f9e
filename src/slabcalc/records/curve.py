"""The JSON of ``slabcalc simulate -m A,B,C``: one record per ``-m`` (memcached's ``stats`` names)."""

from __future__ import annotations

from slabcalc.analysis.curve import Curve, CurvePoint
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


def curve_record(curve: Curve, accounting=None) -> dict:
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
    return record


__all__ = ["CURVE_FIELDS", "IDEAL_LRU", "point_record", "curve_record"]
