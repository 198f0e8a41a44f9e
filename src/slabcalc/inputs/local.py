"""The memcached installed on this machine, if any: its release, from ``memcached -V``.

Used only to tell a person at a terminal that the release slabcalc assumes is
not the one they run (issue 31: ``report`` and ``optimize`` assumed 1.6.45 on a
machine running 1.6.18, whose ``slab_chunk_max`` unit differs, without a word).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

_VERSION = re.compile(r"^memcached (\d+\.\d+\.\d+)\b")


@functools.lru_cache(maxsize=None)
def local_release(timeout: float = 2.0) -> str | None:
    """The release of the ``memcached`` on PATH (``"1.6.18"``), or None: none there, or it did not say.
    Asked once a process (a curve builds its settings once per ``-m``)."""
    path = shutil.which("memcached")
    if path is None:
        return None
    try:
        said = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=timeout, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.match(said.strip())
    return found.group(1) if found else None
