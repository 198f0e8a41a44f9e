"""Which build of the engine runs: mypyc's compiled modules or the plain Python source they are built from.

``pip install .`` compiles the engine's hot modules where a C compiler is present (setup.py) and installs
them beside their ``.py`` source, which Python would import second.  This finder, first on
``sys.meta_path``, imports the source instead when

* ``SLABCALC_PURE`` is set (to anything but ``0`` or empty): tests run both builds in one install, and
  an operator can rule the compiled one out;
* the source was changed after the module was compiled (an in-place or editable build, then an edit):
  a stale compiled module never runs in place of the code beside it.
``slabcalc.engines.simulate.engine_build`` names the build that ran, for ``simulate``'s model record.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

STALE = 2.0     # seconds: a source this much newer than its compiled module was edited after the build


def pure() -> bool:
    return os.environ.get("SLABCALC_PURE", "") not in ("", "0")


class PlainSource(importlib.abc.MetaPathFinder):
    """slabcalc's modules from their ``.py`` source where a compiled one is beside it and must not run."""

    def find_spec(self, name, path, target=None):
        if path is None or not name.startswith("slabcalc."):
            return None
        leaf = name.rpartition(".")[2]
        for folder in path:
            source = os.path.join(folder, leaf + ".py")
            if not os.path.isfile(source):
                continue
            compiled = [os.path.join(folder, leaf + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES]
            compiled = [c for c in compiled if os.path.isfile(c)]
            if not compiled:
                return None
            if pure() or os.path.getmtime(source) > os.path.getmtime(compiled[0]) + STALE:
                return importlib.util.spec_from_file_location(name, source)
            return None
        return None


if not any(isinstance(f, PlainSource) for f in sys.meta_path):
    sys.meta_path.insert(0, PlainSource())
