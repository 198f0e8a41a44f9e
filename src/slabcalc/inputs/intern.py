"""Integer keys interned in numpy arrays: a compact copy's key ids (inputs/compact.py)."""

from __future__ import annotations

import numpy as np


class IntKeys:
    """Integer keys interned in numpy arrays, not a dict: 16 bytes a distinct key where a dict of Python
    ints took about 100 (a curve's peak RSS was the copy writer's, 1.6x one replay's on issue 39's trace
    of 10 M requests).  ``known`` holds the keys met, sorted; ``ids`` each one's id, beside it."""

    def __init__(self):
        self.known = np.zeros(0, dtype=np.uint64)
        self.ids = np.zeros(0, dtype=np.int64)
        self.count = 0

    def intern(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each key's id in ``column`` (uint64), the keys not met before given the next ids in the order
        of their first place; and those new keys, in id order."""
        distinct, first, inverse = np.unique(column, return_index=True, return_inverse=True)
        at = np.searchsorted(self.known, distinct)
        met = at < len(self.known)
        met[met] = self.known[at[met]] == distinct[met]
        ids = np.empty(len(distinct), dtype=np.int64)
        ids[met] = self.ids[at[met]]
        fresh = np.flatnonzero(~met)
        fresh = fresh[np.argsort(first[fresh], kind="stable")]          # in the order they are first met
        ids[fresh] = self.count + np.arange(len(fresh), dtype=np.int64)
        self.count += len(fresh)
        if len(fresh):
            self.known = np.insert(self.known, at[~met], distinct[~met])
            self.ids = np.insert(self.ids, at[~met], ids[~met])
        return ids[inverse.reshape(-1)], distinct[fresh]

    def forget(self, count: int) -> None:
        """Only the first ``count`` ids kept."""
        keep = self.ids < count
        self.known, self.ids, self.count = self.known[keep], self.ids[keep], min(self.count, count)
