"""Which build of the engine runs: mypyc's compiled modules or the plain Python source they are built from.

``pip install .`` compiles the engine's hot modules where a C compiler is present (setup.py) and installs
them beside their ``.py`` source, which Python would import second; their code is in one library beside
the package, ``slabcalc__mypyc``.  This finder, first on ``sys.meta_path``, imports the source of every
compiled module instead when

* ``SLABCALC_PURE`` is set (to anything but ``0`` or empty): tests run both builds in one install, and
  an operator can rule the compiled one out;
* any compiled module's source was changed after the library was built (an in-place or editable
  build, then an edit): a stale compiled module never runs in place of the code beside it.

All or none: a compiled module only takes the compiled classes of the others.
``engine_build`` names the build that ran, for ``simulate``'s model record.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

STALE = 2.0     # seconds: a source this much newer than the compiled library was edited after the build
PACKAGE = os.path.dirname(os.path.abspath(__file__))
SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _library() -> str | None:
    top = os.path.dirname(PACKAGE)
    for suffix in SUFFIXES:
        path = os.path.join(top, "slabcalc__mypyc" + suffix)
        if os.path.isfile(path):
            return path
    return None


def _stale(library: str) -> bool:
    """A compiled module's ``.py`` changed after ``library`` was built."""
    built = os.path.getmtime(library) + STALE
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(SUFFIXES):
                source = os.path.join(folder, name.split(".", 1)[0] + ".py")
                if os.path.isfile(source) and os.path.getmtime(source) > built:
                    return True
    return False


def plain_wanted() -> bool:
    if os.environ.get("SLABCALC_PURE", "") not in ("", "0"):
        return True
    library = _library()
    return library is not None and _stale(library)


class PlainSource(importlib.abc.MetaPathFinder):
    """slabcalc's modules from their ``.py`` source where a compiled one is beside it."""

    def find_spec(self, name, path, target=None):
        if path is None or not name.startswith("slabcalc."):
            return None
        leaf = name.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if os.path.isfile(source):
                if any(os.path.isfile(os.path.join(folder, leaf + s)) for s in SUFFIXES):
                    return importlib.util.spec_from_file_location(name, source)
                return None
        return None


if plain_wanted() and not any(isinstance(f, PlainSource) for f in sys.meta_path):
    sys.meta_path.insert(0, PlainSource())


def engine_build() -> str:
    """``compiled (mypyc)`` or ``plain Python``: how the engine's module was loaded (setup.py builds it
    where a C compiler is present; ``SLABCALC_PURE=1`` runs the plain source)."""
    spec = importlib.util.find_spec("slabcalc.engines.engine")     # through this finder: what is (or would be) run
    compiled = isinstance(getattr(spec, "loader", None), importlib.machinery.ExtensionFileLoader)
    return "compiled (mypyc)" if compiled else "plain Python"
