"""Which build of the engine runs: mypyc's compiled modules or the plain Python source they are built from.

``pip install .`` compiles the engine's hot modules where a C compiler is present (setup.py) and installs
them beside their ``.py`` source, which Python would import second; their code is in one library beside
the package, ``slabcalc__mypyc``.  This finder, first on ``sys.meta_path``, imports the source of every
compiled module instead when

* ``SLABCALC_PURE`` is set (to anything but ``0`` or empty; setup.py reads it alike at build time):
  tests run both builds in one install, and an operator can rule the compiled one out;
* any source the library was built from differs from the one installed (an in-place or editable build,
  then an edit): the build records the SHA-256 of each (``BUILT``, :func:`built_from`): the compiled
  modules and every module whose ``Final`` constants mypyc copied into them (model/ops.py's TIME_MAX),
  so a stale compiled module never runs in place of the code beside it.  One stderr line says so.

All or none: a compiled module only takes the compiled classes of the others.
``engine_build`` names the build that ran, for ``simulate``'s model record.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

BUILT = "_built.json"     # beside this file: {"sources": {path under the package: sha256}}, written by setup.py
PACKAGE = os.path.dirname(os.path.abspath(__file__))
SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)


def _library() -> str | None:
    top = os.path.dirname(PACKAGE)
    for suffix in SUFFIXES:
        path = os.path.join(top, "slabcalc__mypyc" + suffix)
        if os.path.isfile(path):
            return path
    return None


def digest(path: str) -> str:
    import hashlib      # here, not at the top: a plain install never hashes

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _module_file(package: str, module: str) -> str | None:
    """The ``.py`` of ``slabcalc.a.b`` under ``package`` (the slabcalc folder), if there is one."""
    parts = module.split(".")[1:]
    for candidate in (os.path.join(package, *parts) + ".py", os.path.join(package, *parts, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def built_from(package: str, compiled: list[str]) -> list[str]:
    """The sources a build of ``compiled`` (paths of ``.py`` files under ``package``) depends on, as
    paths under ``package``: those files and every slabcalc module they import, directly or through
    another such module, that declares a ``Final`` (mypyc folds its constants into the library).
    Read by setup.py at build time (the standard library only: it runs before slabcalc installs)."""
    import ast

    found, todo = set(), [os.path.abspath(os.path.join(package, path)) for path in compiled]
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.add(path)
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                target = _module_file(package, name) if name.startswith("slabcalc.") else None
                if target and target not in found and "Final" in open(target, encoding="utf-8").read():
                    todo.append(os.path.abspath(target))
    return sorted(os.path.relpath(path, package).replace(os.sep, "/") for path in found)


def record(package: str, compiled: list[str]) -> dict:
    """What setup.py writes to ``BUILT``: each source of :func:`built_from` and its SHA-256."""
    return {"sources": {name: digest(os.path.join(package, name)) for name in built_from(package, compiled)}}


def changed_source(package: str) -> str | None:
    """Why the library beside ``package`` was not built from the sources there, or None: a source
    whose SHA-256 differs from the build's record (or is gone), or no record at all."""
    import json

    try:
        with open(os.path.join(package, BUILT), encoding="utf-8") as f:
            sources = json.load(f)["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"no record of the sources it was built from ({BUILT})"
    for name, sha in sorted(sources.items()):
        path = os.path.join(package, name)
        if not os.path.isfile(path) or digest(path) != sha:
            return f"{name} changed since the build"
    return None


def pure_wanted() -> bool:
    """``SLABCALC_PURE`` set to anything but ``0`` or empty: plain Python, at build time (setup.py) and
    at run time alike."""
    return os.environ.get("SLABCALC_PURE", "") not in ("", "0")


def plain_wanted() -> bool:
    if pure_wanted():
        return True
    if _library() is None:
        return False
    why = changed_source(PACKAGE)
    if why is not None:
        print(f"slabcalc: the compiled engine is stale ({why}): running plain Python; reinstall to compile it again",
              file=sys.stderr)
    return why is not None


class PlainSource:
    """slabcalc's modules from their ``.py`` source where a compiled one is beside it: a meta path
    finder by its ``find_spec`` alone: ``importlib.abc`` imports importlib.resources, which nothing else
    a command runs needs (60 ms of CPU measured on a loaded 2-core machine, a fifth of ``report``'s start-up)."""

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


if __name__ == "slabcalc._plain" and not any(isinstance(f, PlainSource) for f in sys.meta_path) and plain_wanted():
    sys.meta_path.insert(0, PlainSource())


def engine_build() -> str:
    """``compiled (mypyc)`` or ``plain Python``: how the engine's module was loaded (setup.py builds it
    where a C compiler is present; ``SLABCALC_PURE=1`` runs the plain source)."""
    spec = importlib.util.find_spec("slabcalc.engines.engine")     # through this finder: what is (or would be) run
    compiled = isinstance(getattr(spec, "loader", None), importlib.machinery.ExtensionFileLoader)
    return "compiled (mypyc)" if compiled else "plain Python"
