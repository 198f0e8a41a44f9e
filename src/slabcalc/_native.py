"""mypyc's native int types and class attributes, for the modules setup.py compiles.

Compiled, ``i64``/``i32``/``u8`` are machine integers and ``mypyc_attr`` sets a class's layout (no
collector's header for an acyclic one).  In plain Python, ``mypy_extensions`` makes them ``int``
and a no-op; without it installed they are the same here.
"""

from __future__ import annotations

from typing import Any, Callable

try:
    from mypy_extensions import i32, i64, mypyc_attr, u8
except ImportError:         # plain Python: the native types only speak to mypyc (setup.py)
    i32 = i64 = u8 = int    # type: ignore[misc]

    def mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[Any], Any]:  # type: ignore[misc]
        return lambda cls: cls

__all__ = ["i32", "i64", "mypyc_attr", "u8"]
