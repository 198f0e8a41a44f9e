"""Extstore in a replay: memory prefilled, and the storage threads and automover of the release.

A release's variants are classes, picked by the names its profile gives them in ``extstore.replay``
(validated against model/profile/data.py ``REPLAY_KEYS``): the write thread by ``write_target``
(:data:`.extstore_write.WRITE_THREADS`), the automover by ``automove``
(:data:`.extstore_automove.AUTOMOVERS`).
"""

from __future__ import annotations

from slabcalc.engines.automove import MoverThread
from slabcalc.engines.background import SimulationError
from slabcalc.engines.extstore import check_extstore_replayable, prefill
from slabcalc.engines.extstore_automove import extstore_automover
from slabcalc.engines.extstore_write import WRITE_THREADS


def attach(engine, lead: int) -> None:
    """Extstore in a replay (engines/engine.py): memory prefilled, the write thread among the
    threads, and the automover (the maintainer's, or 1.6.34+ the mover thread's) the extstore one."""
    settings = engine.settings
    check_extstore_replayable(settings)
    if engine.slabs.share != 1:
        raise SimulationError("simulate --sample does not model -o ext_path: replay the whole workload")
    prefill(engine.slabs, settings.slab_page_size)
    # on the engine's clock, which starts with the server (engine.py server_start)
    engine.storage = WRITE_THREADS[settings.profile.extstore.replay["write_target"]](engine, start=-lead)
    engine.actors.append(engine.storage)
    maintainer = engine.maintainer         # a null one (no automover) without the thread
    if maintainer.automover is not None:
        maintainer.automover = extstore_automover(engine)
    for actor in engine.actors:             # 1.6.34+: the mover thread runs it (slabs_mover.c 776-781)
        if isinstance(actor, MoverThread):
            actor.automover = extstore_automover(engine)
