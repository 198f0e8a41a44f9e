"""Replay a workload under ``-m``: pages, LRUs, expiry, evictions, page moves, calcification.

The library face of ``slabcalc simulate`` and its JSON records; the machinery
is :mod:`slabcalc.engines` (the slab allocator and page pool, the LRUs, the
LRU maintainer, the crawler, the automovers and the page mover, one op loop).

What runs beside the requests is the release's (its profile's ``background``
section) changed by the server's ``-o`` words, as memcached reads them: 1.6
runs the segmented HOT/WARM/COLD LRU, its maintainer thread, the LRU crawler
and ``slab_automove=1``; ``-o no_modern`` turns them all off; 1.4 runs none
of them.  With nothing in the background (the compat LRU, no page moves) the
replay is exact; with the threads it is as close as their timing allows, and
the paced runs of a real 1.6.18 (``tests/fidelity/test_paced.py``) state and test the
tolerance.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable, Sequence

from slabcalc._plain import engine_build
from slabcalc.engines.background import Background, SimulationError, background_for, check_replayable, with_lru
from slabcalc.engines.engine import DELETE, GET, OP_NAMES, SET, TOUCH, Engine
from slabcalc.engines.results import ClassResult, Finding, Model, Simulation, TimelineRow, Totals
from slabcalc.model.settings import Settings
from slabcalc.model.treatments import check_treated

__all__ = ["SET", "GET", "DELETE", "TOUCH", "OP_NAMES", "SimulationError", "Model", "ClassResult", "Totals",
           "Finding", "TimelineRow", "Simulation", "Background", "background_for", "lru_mode", "describe_model",
           "simulate"]


def lru_mode(settings: Settings, suboptions: Sequence[str] | None = None) -> str:
    """``compat`` or ``segmented``: the LRU a server of these settings and ``-o`` words runs."""
    return background_for(settings, suboptions).lru


def describe_model(settings: Settings, background: Background) -> Model:
    """What a simulation replays (the release, its LRU, the threads beside it), and whether it is exact;
    refuses what the engine does not model.  :func:`slabcalc.records.simulate.model_text` says it."""
    check_replayable(settings, background)
    if settings.extstore is not None:
        from slabcalc.engines.extstore import check_extstore_replayable

        check_extstore_replayable(settings)
    options = check_treated(settings, "simulate", "simulate", SimulationError)
    bg = background
    fields = dict(automove=bg.slab_automove if bg.moves_pages else 0, maintainer=bg.maintainer,
                  crawler=bg.crawls, automove_window=bg.slab_automove_window if bg.moves_pages else None,
                  automove_ratio=bg.slab_automove_ratio if bg.moves_pages else None, options=tuple(options or ()),
                  memory_limit_mb=settings.maxbytes >> 20 if settings.maxbytes else 0, background=bg,
                  extstore=(settings.profile.extstore.replay['rules_from'] if settings.extstore is not None else None),
                  extstore_write_target=(settings.profile.extstore.replay['write_target']
                                         if settings.extstore is not None else None),
                  build=engine_build())
    exact = not bg.threads and bg.lru == "compat"     # the synchronous allocation path, replayed
    return Model(settings.profile.release, bg.lru, exact, **fields)


def simulate(settings: Settings, ops: Iterable[tuple], *, suboptions: Sequence[str] | None = None,
             lru: str | None = None,
             every: float | None = None, boot: float = 0.0, at: Iterable[float] = (),
             tick_us: int = 1_000_000, sample: float | None = None, hash_keys: bool = False, drawn: bool = False,
             left_out: Callable[[], int] | None = None,
             left_out_gets: Callable[[], int] | None = None,
             log: Callable[[int, int], tuple[int, int] | None] | None = None) -> Simulation:
    """Replay ``ops`` (``(time, op, key, key_size, value_size, ttl, flags)``) under ``settings``.

    ``suboptions`` are the server's ``-o`` words in order (by default those
    ``configure`` read into ``settings``); ``lru``
    forces an LRU (``compat`` also stops the maintainer and what it runs).
    ``every`` adds a timeline row per class every that many seconds of
    workload time; ``boot`` is how long the server had run at the workload's
    time 0 (its threads start then); ``at`` lists times at which to keep the
    whole state (the result's ``snapshots``).  ``tick_us``: the microseconds from one tick of the
    server's clock to the next, a real server's measured (a paced capture's ``tick``: its timer is
    re-armed after each tick, so each comes a little late: tests/paced.py ``measure_tick``); 1 000 000
    by default.  ``sample`` (0 < rate <= 1)
    replays only the keys whose hash falls under the rate, each page
    holding that share of its chunks, and scales the counts back (:mod:`.sample`; the result's
    ``sample`` says how, and with what error); a rate at which ``-m`` cannot hold enough sampled
    chunks of each class the workload uses raises :class:`~.sample.TooCoarse`.  ``drawn``: ``ops``
    are such a sample already (a warehouse's, ``slabcalc sql --workload --sample``): replayed whole,
    scaled as ``sample`` scales (``simulate --sampled``).  ``left_out``: ``ops`` are the sample the
    reader kept as it read (``open_workload(sample=)``), and this says, once they are read, how many
    operations it left out, and ``left_out_gets`` the gets among them (the estimate of the hit ratio
    then divides by every get read: :func:`.sample.errors`).  ``log``: with ``drawn``, given the
    operations and gets of ``ops`` once they are read, the whole log's that the sample was drawn from
    (``sql --workload --sample`` writes them on every row), or None when they are not known: known, the
    hit ratio is adjusted to them as ``sample`` adjusts it to the operations it reads.
    ``hash_keys`` keeps string keys as 60-bit hashes, 80 bytes less a resident item (:mod:`.keys`;
    the model states the bound on a collision).
    """
    background = background_for(settings, suboptions)
    if lru is not None and lru != background.lru:
        background = with_lru(background, lru)
    model = describe_model(settings, background)
    if sample is not None:
        from slabcalc.engines.sample import Room, Sampled, check_rate, scale_back

        sampled = Sampled(check_rate(sample), drawn=drawn or left_out is not None, left_out=left_out,
                          left_out_gets=left_out_gets, log=log)
        engine = Engine(settings, background, boot=boot, share=sample, tick_us=tick_us)
        sampled.count_reads(engine)
        room = Room(settings, sample) if sample < 1 else None
        timeline = engine.run(sampled.counted(_keys(sampled.filter(ops, room), hash_keys)), every=every, at=())
        model = _hashed(replace(model, sample=sample), engine, hash_keys)
        return scale_back(engine.results(model, timeline), sampled)
    engine = Engine(settings, background, boot=boot, tick_us=tick_us)
    timeline = engine.run(_keys(ops, hash_keys), every=every, at=at)
    return replace(engine.results(_hashed(model, engine, hash_keys), timeline), snapshots=tuple(engine.snapshots))


def _keys(ops: Iterable[tuple], hash_keys: bool) -> Iterable[tuple]:
    if not hash_keys:
        return ops
    from slabcalc.engines.keys import hashed

    return hashed(ops)


def _hashed(model: Model, engine: Engine, hash_keys: bool) -> Model:
    """The model of a replay whose keys were hashed: their bits, and the bound on a collision among
    as many keys as operations replayed."""
    if not hash_keys:
        return model
    from slabcalc.engines.keys import KEY_HASH_BITS, collision_bound

    return replace(model, key_hash_bits=KEY_HASH_BITS, key_collision_bound=collision_bound(engine.counts["ops"]))


# -- records (the stable JSON contract) --------------------------------------------
