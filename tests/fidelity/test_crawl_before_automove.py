"""The automover reads the classes before the crawl it was started beside frees anything (1.6.18
items.c 1668-1694: the LRU maintainer checks the crawler's schedule, then runs the automover; the
crawl is the crawler thread's, woken by lru_crawler_start), proven on a random shape captured on
Debian's 1.6.18, three runs alike (tests/data/random/1.6.18/r01135.json.gz: 2 922 sets a second of
TTLs 5-30 s, -m 375, the automover's default).

The server's second crawl frees 43 000 expired items at about 66 s; the automover sends their pages
to the global pool from the next second on: 58 pages, one class after another, then class 10's ten
pages once its window comes clean, between 80 and 90 s (`watch sysevents`: the first move request
at 67.06 s).  With the crawl's frees seen by the run beside it, the model sent them a second early,
a page more from each class (62), and class 10's ten pages between 70 and 80 s.
"""

from __future__ import annotations

import random_corpus


def test_the_pages_a_crawl_frees_go_to_the_pool_from_the_next_second():
    record = random_corpus.load(random_corpus.DATA / "1.6.18" / "r01135.json.gz")
    snapshots = random_corpus.model_states(record, random_corpus.drawn(record))
    # the corpus's tolerances (tests/random_corpus.py): pages moved +-2, a class's pages +-1
    for i, (when, state) in enumerate(snapshots):
        reals = [run["snapshots"][i] for run in record["runs"]]
        moved = [int(real["stats"]["slabs_moved"]) for real in reals]
        assert any(abs(state.totals.pages_moved - m) <= 2 for m in moved), (when, state.totals.pages_moved, moved)
        class10 = [int(real["pages"].get("10", 0)) for real in reals]
        model10 = next(r.pages for r in state.classes if r.slab_class.id == 10)
        assert any(abs(model10 - p) <= 1 for p in class10), (when, model10, class10)
    assert random_corpus.verdict(record, random_corpus.figures(snapshots)) == []
