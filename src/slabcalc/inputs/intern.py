"""Integer keys interned in numpy arrays: a compact copy's key ids (inputs/compact.py)."""

from __future__ import annotations

import numpy as np

RECENT_MIN = 1 << 16      # keys ``recent`` may hold, whatever ``main``'s size, before it is merged


class IntKeys:
    """Integer keys interned in numpy arrays, not a dict: 16 bytes a distinct key where a dict of Python
    ints took about 100 (issue 39's trace of 10 M requests: 1.45 M ids took the command's process from
    37 MB to 272 MB while it wrote a curve's compact copy).

    Two sorted runs, each key beside its id: ``main``, and ``recent``, the keys met since ``recent``
    last went into ``main`` -- merged when it grows past an eighth of ``main``, so that each key is
    copied a bounded number of times, not once a batch (a single sorted array, grown by ``np.insert``
    at every batch, copied 12 M keys 1 500 times over a trace of 100 M requests)."""

    def __init__(self, recent_min: int = RECENT_MIN):
        self.recent_min = recent_min
        empty = (np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))
        self.main, self.recent = empty, empty
        self.count = 0

    def intern(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each key's id in ``column`` (uint64), the keys not met before given the next ids in the order
        of their first place; and those new keys, in id order."""
        distinct, first, inverse = np.unique(column, return_index=True, return_inverse=True)
        ids = np.full(len(distinct), -1, dtype=np.int64)
        for keys, known in (self.main, self.recent):
            at = np.searchsorted(keys, distinct)
            met = at < len(keys)
            met[met] = keys[at[met]] == distinct[met]
            ids[met] = known[at[met]]
        fresh = np.flatnonzero(ids < 0)
        fresh = fresh[np.argsort(first[fresh], kind="stable")]          # in the order they are first met
        ids[fresh] = self.count + np.arange(len(fresh), dtype=np.int64)
        self.count += len(fresh)
        if len(fresh):
            new = np.sort(fresh)                     # distinct is sorted: so are its new keys, by index
            self.recent = _merged(self.recent, (distinct[new], ids[new]))
            if len(self.recent[0]) > max(self.recent_min, len(self.main[0]) >> 3):
                self.main = _merged(self.main, self.recent)
                self.recent = (self.recent[0][:0], self.recent[1][:0])
        return ids[inverse.reshape(-1)], distinct[fresh]

    def forget(self, count: int) -> None:
        """Only the first ``count`` ids kept."""
        self.main, self.recent = (_kept(run, count) for run in (self.main, self.recent))
        self.count = min(self.count, count)


def _merged(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted runs of distinct keys (each with its ids) as one."""
    at = np.searchsorted(a[0], b[0])
    return np.insert(a[0], at, b[0]), np.insert(a[1], at, b[1])


def _kept(run: tuple[np.ndarray, np.ndarray], count: int) -> tuple[np.ndarray, np.ndarray]:
    keep = run[1] < count
    return run[0][keep], run[1][keep]
