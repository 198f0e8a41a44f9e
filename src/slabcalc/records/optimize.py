"""The JSON of ``slabcalc optimize``: baseline, candidates (with the release their flags are for), best and the verdict."""

from __future__ import annotations

from slabcalc.analysis.advice import class_cap_trap, elsewhere
from slabcalc.analysis.hits import HotItems, WorkloadHits, change_pct
from slabcalc.analysis.optimize import GAIN_THRESHOLD_PCT, Candidate, Optimum
from slabcalc.analysis.optimize.spread import LEVEL, STABLE_PCT


def _candidate_record(opt: Optimum, c: Candidate, workload: WorkloadHits | None = None) -> dict:
    rep = c.report
    record = {
        "space": c.space,
        "flags": c.flags,
        "page_bytes": c.page_bytes,
        "pages": rep.total("pages"),
        "waste_pct": round(rep.waste_pct, 2),
        "capacity": rep.capacity.items if rep.capacity else None,
        "classes_used": len(rep.classes),
        "gain_pct": round(opt.gain_pct(c), 2),
        "memcached_args": rep.settings.as_argv(),
        "release": rep.settings.profile.release,
        "elsewhere": [] if not c.flags else [
            {"releases": e.releases, "refused": e.refused, "classes": e.classes, "flags": e.flags}
            for e in elsewhere(rep.settings)],
        "class_cap": class_cap_trap(rep.settings),
    }
    if c.held_out is not None:
        held = c.held_out
        record["held_out"] = {
            "page_bytes": held.total("page_bytes"),
            "waste_pct": round(held.waste_pct, 2),
            "capacity": held.capacity.items if held.capacity else None,
            "gain_pct": round(opt.held_out_gain_pct(c), 2),
        }
    if c.fresh is not None:
        record["fresh"] = {"items": opt.whole_baseline.items if opt.whole_baseline else None,
                           "gain_pct": round(c.fresh.gain, 2), "low_pct": round(c.fresh.low, 2),
                           "high_pct": round(c.fresh.high, 2), "level_pct": LEVEL,
                           "best_in_pct": None if c.wins is None else round(100 * c.wins, 1)}
    got = workload.of(c.flags) if workload is not None else None
    if got is not None:
        record["get_hits"], record["get_hits_change_pct"] = got.hits, round(change_pct(got, workload.base), 2)
    return record


def verdict(opt: Optimum) -> dict:
    """Why ``best`` is best: the gain it goes by (held-out or not), and the more complex candidate
    it was preferred to, when one gained more but within the margin."""
    best = opt.best
    if best is None:
        return {"gain_pct": None, "on": None, "preferred_to": None, "margin_pct": GAIN_THRESHOLD_PCT,
                "stable": None, "within_noise": []}
    firsts = [c for c in opt.candidates if c is opt.first_of(c.space)]
    top = max(firsts, key=opt.verdict_gain)
    return {"gain_pct": round(opt.verdict_gain(best), 2),
            "on": "fresh" if best.fresh is not None else "held_out" if opt.held_out_gain_pct(best) is not None
            else "items",
            "stable": None if best.wins is None else 100 * best.wins >= STABLE_PCT,
            "within_noise": [] if best.fresh is None else [
                {"space": c.space, "flags": c.flags, "gain_pct": round(c.fresh.gain, 2),
                 "best_in_pct": round(100 * (c.wins or 0), 1)}
                for c in firsts if c is not best and c.fresh.high >= best.fresh.gain],
            "preferred_to": None if top is best or opt.verdict_gain(top) <= opt.verdict_gain(best) else
            {"space": top.space, "flags": top.flags, "gain_pct": round(opt.verdict_gain(top), 2),
             "why": "class_cap" if class_cap_trap(top.report.settings) else "simpler"},
            "margin_pct": GAIN_THRESHOLD_PCT}


def resamples_record(opt: Optimum) -> dict | None:
    """``--resamples``: the search run again on resamples of the items (:mod:`slabcalc.analysis.optimize.stability`),
    each resample's choice and the recommendation counted on the items its search did not see."""
    st = opt.stability
    if st is None:
        return None
    with_capacity = opt.memory_limit is not None

    def draw(r) -> dict:
        out = {"items": r.items, "space": r.space, "flags": r.flags, "same_flags": r.same_flags,
               "baseline_page_bytes": r.baseline.page_bytes, "page_bytes": r.chosen.page_bytes,
               "recommended_page_bytes": r.recommended.page_bytes, "gain_pct": round(r.chosen_gain, 2),
               "recommended_gain_pct": round(r.recommended_gain, 2), "holds": r.holds}
        if with_capacity:
            out.update(baseline_capacity=r.baseline.capacity, capacity=r.chosen.capacity,
                       recommended_capacity=r.recommended.capacity)
        return out

    prefer = st.prefer
    return {"count": len(st.resamples), "seed": st.seed, "space": st.space, "flags": st.flags,
            "same_flags": st.same_flags, "stable": st.stable, "holds": st.holds, "margin_pct": GAIN_THRESHOLD_PCT,
            "judged_on": "held_out" if opt.validate is not None else "items",
            "draws": [draw(r) for r in st.resamples],
            "prefer": None if prefer is None else {
                "space": prefer.space, "flags": prefer.flags, "gain_pct": round(prefer.gain, 2),
                "recommended_gain_pct": round(prefer.recommended_gain, 2),
                "resample_gain_pct": [round(g, 2) for g in prefer.resample_gains]}}


def optimum_record(opt: Optimum, *, validate_asked: float | None = None, hot: HotItems | None = None,
                   workload: WorkloadHits | None = None) -> dict:
    """The stable JSON contract of ``slabcalc optimize``, built in one pass: ``validate_asked`` is the
    share ``--validate`` asked to hold back (``validate`` is None when the mix was too small to);
    ``hot`` what ``--hot`` left out; ``workload`` the hits of ``--workload``."""
    from slabcalc.records.model import settings_record

    base = _candidate_record(opt, opt.baseline, workload)
    best = opt.best
    record = {
        "settings": settings_record(opt.baseline.report.settings),
        "objective": "capacity" if opt.memory_limit is not None else "page_bytes",
        "baseline": base,
        "candidates": [_candidate_record(opt, c, workload) for c in opt.candidates],
        "best": _candidate_record(opt, best, workload) if best else None,
        "verdict": verdict(opt),
        "defaults_fine": opt.defaults_fine,
        "validate": opt.validate,
        "seed": opt.seed,
        "held_out_items": opt.held_out_items,
        "validate_asked": validate_asked,
        "resamples": resamples_record(opt),
    }
    if hot is not None:
        record["hot"] = {"rule": hot.rule, "left_out": hot.left_out}
    if workload is not None:
        record["workload"] = {"source": workload.source, "ops": workload.ops, "cmd_get": workload.base.gets,
                              "memory_limit_mb": workload.memory_limit_mb}
    return record
