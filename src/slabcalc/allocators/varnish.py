"""Varnish ``-s malloc`` (the SML stevedore): the mallocs of one cached object.

Source: varnish-cache 7.6.0 (6.0 and 8.0 differ where noted), from
``research/allocators.md`` §2.2-2.3.  Struct sizes were compiled from the
tags' own headers (x86_64).

Inside the ``-s malloc,SIZE`` accounting (``SMA.g_bytes``, which adds the
*requested* size of each storage segment, ``storage_malloc.c``):

- the object header segment: ``sizeof(struct object)`` (128; 120 on 6.0) +
  the header workspace ``PRNDUP(vary) + PRNDUP(4 + sum(len + 1) + 1)``;
- the body: one segment of exactly Content-Length bytes (at most
  ``fetch_maxchunksize``, 256 MiB), or, when the length is unknown (chunked
  transfer), ``fetch_chunksize`` (16 KiB) segments whose last one is
  trimmed to its length when at least 512 bytes of it are unused.

Outside it, per object: ``struct objcore`` (168), ``struct objhead``
(104; 112 on 8.0), the objhead's lock (72), a critbit node (32), an
expiry binheap slot (8 bytes of a pointer array), and one ``struct sma``
(72) per segment.  Each of those is its own malloc, except the binheap slot.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from slabcalc.allocators.base import ceil_div, round_up

OBJECT = 128                  # sizeof(struct object), 7.x and 8.0 (120 on 6.0)
SMA = 72                      # struct sma (holds struct storage), one per segment
OBJCORE = 168
OBJHEAD = 104                 # 6.0 to 7.6 (112 on 8.0)
ILCK = 72                     # struct ilck, the objhead mutex (Lck_New)
HCB_Y = 32                    # critbit node (-h critbit, the default)
BINHEAP_SLOT = 8              # one pointer in the expiry binheap's rows
FETCH_CHUNKSIZE = 16 << 10    # parameter defaults (include/tbl/params.h)
FETCH_MAXCHUNKSIZE = 256 << 20
TRIM_MIN = 512                # sml_trimstore re-allocates a last segment with >= 512 B unused
HEADER_BYTES = 400            # a typical header workspace (the research's worked examples)


def prndup(n: int) -> int:
    """``PRNDUP``: round up to a multiple of 8 (pointer alignment)."""
    return round_up(n, 8)


@dataclass(frozen=True)
class VarnishObject:
    """How Varnish stores a body: its header workspace and fetch mode."""

    header_bytes: int = HEADER_BYTES        # PRNDUP(vary) + PRNDUP(4 + sum(header len + 1) + 1)
    chunked: bool = False                   # no Content-Length: fetch_chunksize segments
    fetch_chunksize: int = FETCH_CHUNKSIZE
    fetch_maxchunksize: int = FETCH_MAXCHUNKSIZE
    object_size: int = OBJECT

    def segments(self, body: int) -> list[int]:
        """Requested sizes of the object's storage segments: header first, then the body."""
        segs = [self.object_size + prndup(self.header_bytes)]
        if body <= 0:
            return segs
        if not self.chunked:
            full, rest = divmod(body, self.fetch_maxchunksize)
            return segs + [self.fetch_maxchunksize] * full + ([rest] if rest else [])
        n = ceil_div(body, self.fetch_chunksize)
        last = body - self.fetch_chunksize * (n - 1)
        if self.fetch_chunksize - last >= TRIM_MIN:
            return segs + [self.fetch_chunksize] * (n - 1) + [last]
        return segs + [self.fetch_chunksize] * n

    def outside(self, nseg: int) -> Counter:
        """The mallocs outside the storage accounting, ``{size: count}`` (binheap slot apart)."""
        return Counter({SMA: nseg}) + Counter([OBJCORE, OBJHEAD, ILCK, HCB_Y])


def object_bytes(obj: VarnishObject, body: int, taken) -> tuple[int, int]:
    """``(counted, total)`` bytes of one object: what ``-s`` counts, and what ``taken``
    (an allocator's bytes per request) says all its mallocs take, binheap slot included."""
    segs = obj.segments(body)
    outside = obj.outside(len(segs))
    total = sum(taken(s) for s in segs) + sum(taken(s) * c for s, c in outside.items()) + BINHEAP_SLOT
    return sum(segs), total
