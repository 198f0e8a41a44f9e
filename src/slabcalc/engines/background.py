"""Which background threads a server runs, and with what settings: the release's data plus ``-o``.

memcached reads its ``-o`` words in order (``memcached.c main()``): each word
changes the settings the words before it left, so ``-o no_modern,lru_maintainer``
runs the segmented LRU again.  The defaults, the constants of the threads and
what each word does are the profile's ``background`` section; nothing here
knows a release number.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from slabcalc.errors import SimulationError  # noqa: F401 (raised here, caught by its callers)
from slabcalc.model.profile import BackgroundRules
from slabcalc.model.settings import Settings, background_values


@dataclass(frozen=True)
class Background:
    """What runs beside the requests, and the constants it runs with."""

    lru: str                    # "segmented" (HOT/WARM/COLD) or "compat" (one LRU per class)
    lru_maintainer: bool
    lru_crawler: bool
    slab_reassign: bool         # the page mover thread exists (settings.slab_reassign)
    slab_automove: int          # 0, 1 (windowed) or 2 (a page on each eviction)
    slab_automove_ratio: float
    slab_automove_window: int
    hot_lru_pct: int
    warm_lru_pct: int
    hot_max_factor: float
    warm_max_factor: float
    rules: BackgroundRules
    temp_lru: bool = False      # -o temporary_ttl: short-TTL items in their own LRU (engines/temp_lru.py)
    temporary_ttl: int = 0
    lru_crawler_tocrawl: int = 0    # -o lru_crawler_tocrawl: the items a crawl checks per LRU (0: all)
    lru_crawler_sleep: int = 100    # -o lru_crawler_sleep: microseconds the crawler sleeps every 1 001 items

    @property
    def constant(self):
        return self.rules.constants

    @property
    def automover_thread(self) -> str:
        """The thread ``slab_automove=1`` runs on: ``maintainer`` (1.6.18) or ``mover`` (1.6.45)."""
        return self.rules.rules["automover_thread"]

    @property
    def automover_runs(self) -> bool:
        """The windowed automover runs: on the LRU maintainer thread for ``slab_automove=1``
        (1.6.18), or on the mover's for 1 and 2 (1.6.45)."""
        if not self.slab_reassign:
            return False
        if self.automover_thread == "mover":     # slabs_mover.c 607: any slab_automove
            return self.slab_automove in (1, 2)
        return self.slab_automove == 1 and self.lru_maintainer

    @property
    def moves_pages(self) -> bool:
        """Whether pages can change class: the mover thread and an automover to ask it (automover 1
        on a thread of its own, 2 on the request's own eviction)."""
        return self.automover_runs or (self.slab_reassign and self.slab_automove == 2)

    @property
    def maintainer(self) -> bool:
        """The LRU maintainer thread runs (it also runs the crawler's checks and automover 1)."""
        return self.lru_maintainer

    @property
    def crawls(self) -> bool:
        """Auto-expiry crawls: the crawler thread, kicked by the maintainer (items.c 1669)."""
        return self.lru_crawler and self.lru_maintainer

    @property
    def threads(self) -> bool:
        """Whether anything runs on the workload's clock between requests."""
        return self.lru_maintainer or self.moves_pages


def background_for(settings: Settings, suboptions: Sequence[str] | None = None) -> Background:
    """The threads of a server of ``settings`` started with the ``-o`` words ``suboptions``
    (the ones ``configure`` read when None).

    Refuses, with memcached's own message (exit 1), the values memcached refuses.
    """
    rules = settings.profile.background
    if rules is None:
        raise SimulationError(f"the profile of {settings.profile.release} says nothing of its background threads")
    words = settings.suboptions if suboptions is None else suboptions
    values = background_values(settings.profile, words)
    return Background(slab_reassign=settings.slab_reassign, rules=rules, **values)


def with_lru(background: Background, lru: str) -> Background:
    """The same threads with another LRU (a caller that already knows which one runs)."""
    return replace(background, lru=lru, lru_maintainer=lru == "segmented" and background.lru_maintainer)


def check_replayable(settings: Settings, background: Background) -> None:
    """Refuse what the engine does not replay, saying why (the profile's words)."""
    p = settings.profile
    if not background.rules.replay:
        raise SimulationError(background.rules.refusal.replace("this release", p.release))
    if p.chunked == "eager" and settings.chunked_items:
        raise SimulationError(f"simulate does not model {p.release}'s chunked items "
                              f"(1.4.29-1.4.35 take every chunk from the largest class)")
    if background.slab_automove not in background.rules.automove_modes and background.slab_reassign:
        raise SimulationError(f"simulate does not model {p.release}'s slab_automove={background.slab_automove}; "
                              f"start it with -o slab_automove=0 to compare")
