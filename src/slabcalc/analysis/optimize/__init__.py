"""The flags that hold a workload in the fewest pages: ``-n``/``-f``, ``-o slab_sizes``, ``slab_chunk_max``.

Every candidate is scored by what the pages cost, class by class, exactly as
``slabcalc report`` counts them: a class of chunk size ``c`` holding ``N``
chunks takes ``ceil(N / perslab)`` pages of the release's page length.  What a
class holds does not depend on the other classes but through which chunk
*requests* reach it: an item that fits one chunk requests its ``ntotal``; a
chunked item requests its header chunk, its full ``slab_chunk_max`` chunks and
its tail (:func:`slabcalc.model.placement.place`), and each request goes to the first
class whose chunk holds it (``slabs_clsid()``).  :func:`chunk_requests` turns
a distribution into that multiset once; :func:`page_bytes` scores any class
table against it, and every winner is scored again by
:func:`slabcalc.analysis.report.build_report`, which must agree to the byte.

The package follows its seams: :mod:`.requests` (the chunk requests of a distribution, and a class
table scored against them), :mod:`.dp` (the exact ``-o slab_sizes`` dynamic programme) and
:mod:`.slab_sizes` (the search that asks it), :mod:`.grid` (the ``-n``/``-f`` and ``slab_chunk_max``
searches), :mod:`.front` (:func:`~.front.optimize`, which runs them all, and its result) and
:mod:`.stability` (:func:`optimize`: that, and the search run again on resamples of the items).
"""

from slabcalc.analysis.optimize.dp import (SlabSizes, align_up, candidate_sizes, constant_page_length,
                                           listed_sizes, solve)
from slabcalc.analysis.optimize.front import (GAIN_THRESHOLD_PCT, MIN_HELD_OUT, SIMPLER, SPACES, VALIDATE_DEFAULT,
                                              Candidate, Optimum, Score, full_scale, gain, split)
from slabcalc.analysis.optimize.grid import (CHUNK_MAX_SMALLEST, FACTORS, N_RANGE, Scored, grid_page_bytes,
                                             search_chunk_max, search_n_f)
from slabcalc.analysis.optimize.requests import (BoundParts, Requests, capacity_bound, capacity_of, chunk_requests,
                                                 class_chunks, items_that_fit, page_bytes, requests_of, usage)
from slabcalc.analysis.optimize.stability import Preferred, Resampled, Stability, optimize, resample, simplicity
from slabcalc.analysis.optimize.slab_sizes import THIN_SHARE_PCT, best_slab_sizes, merge_thin_sizes, settings_for

_BoundParts = BoundParts   # its name before the package was split (tests/analysis/test_optimize.py)

__all__ = ["CHUNK_MAX_SMALLEST", "FACTORS", "GAIN_THRESHOLD_PCT", "MIN_HELD_OUT", "N_RANGE", "SIMPLER", "SPACES",
           "THIN_SHARE_PCT", "VALIDATE_DEFAULT", "BoundParts", "Candidate", "Optimum", "Preferred", "Requests",
           "Resampled", "Score", "Scored", "SlabSizes", "Stability", "align_up", "best_slab_sizes", "candidate_sizes",
           "capacity_bound", "capacity_of", "chunk_requests", "class_chunks", "constant_page_length", "full_scale",
           "gain", "grid_page_bytes", "items_that_fit", "listed_sizes", "merge_thin_sizes", "optimize", "page_bytes",
           "requests_of", "resample", "search_chunk_max", "search_n_f", "settings_for", "simplicity", "solve",
           "split", "usage"]
