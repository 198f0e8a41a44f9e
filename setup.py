"""The build: the replay engine's hot modules compiled by mypyc where a C compiler is present.

The compiled modules are built from the same Python source (one place for each rule, issue 29): mypyc
turns the typed classes of ``COMPILED`` into C extensions installed beside their ``.py`` files, which
Python imports first.  Without a C compiler on PATH (or with ``SLABCALC_PURE`` set at build time), or
when mypyc is missing or the compile fails, the same modules are installed as plain Python: never a
failed install.  All or none: when any extension fails to compile, the ones built are removed, so a
partial build (a module compiled against a library that is not there) never reaches an import.  At
run time ``SLABCALC_PURE`` loads the ``.py`` source even where the compiled modules are installed
(``slabcalc/_plain.py``), as it does where any source the library was built from (the compiled modules and
the modules whose ``Final`` constants mypyc copies in) changed since: the build records their SHA-256.
``simulate``'s model line says which ran.  ``SLABCALC_PURE`` means the
same at both times: set to anything but ``0`` or empty, plain Python (``pure_wanted``).

A CSV sample's key scan (src/slabcalc/inputs/key_scan.py) is compiled alike by Cython from its own
source, its C types in the ``.pxd`` beside it (``CYTHON``), with the engine; where Cython is missing or
fails, the engine is still compiled and the scan stays plain (numpy's, in the reader), any scan built
before removed.

Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SUFFIXES = tuple(EXTENSION_SUFFIXES)

# the replay's configuration (read by all of them), the op loop, the store (table, slabs, LRUs, their
# tail pulls: engines/store.py), the LRUs and the slab allocator: the request path of every replayed
# operation, the LRU maintainer (about one wake-up per operation with the 1.6 defaults), the crawler's walk
# over an LRU's items, the ideal LRU a curve replays beside each point, a sample's pass over each operation
# (engines/sample_pass.py), the item-size sum of every set (model/ntotal.py), and the CSV reader that feeds
# them; the other background threads and results stay plain Python (they call in)
COMPILED = ["src/slabcalc/engines/config.py", "src/slabcalc/engines/lru.py", "src/slabcalc/engines/table.py", "src/slabcalc/engines/slabs.py", "src/slabcalc/engines/store.py",
            "src/slabcalc/engines/engine.py",
            "src/slabcalc/engines/maintainer.py", "src/slabcalc/engines/crawl_lru.py", "src/slabcalc/engines/ideal_ring.py",
            "src/slabcalc/engines/sample_pass.py",
            "src/slabcalc/model/ntotal.py",
            "src/slabcalc/inputs/workload.py"]
# a CSV sample's key scan (an MD5 a row): Cython's pure-Python mode, its C types in the .pxd beside it (mypyc
# has no unboxed byte array nor 32-bit unsigned arithmetic: a compiled MD5 there cost more than numpy's scan)
CYTHON = ["src/slabcalc/inputs/key_scan.py"]
CYTHON_TYPES = ["src/slabcalc/inputs/key_scan.pxd"]


def _say(text: str) -> None:
    print(f"slabcalc build: {text}", file=sys.stderr)


def _compiler() -> str | None:
    """The C compiler the extensions would be built with, if it is on PATH."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


def _plain_module():
    """src/slabcalc/_plain.py, loaded by its path (the package itself is not installed yet)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("slabcalc_build_plain", os.path.join("src", "slabcalc", "_plain.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pure_wanted() -> bool:
    """``SLABCALC_PURE`` as ``slabcalc/_plain.py`` reads it at run time (its ``pure_wanted``, one rule)."""
    return _plain_module().pure_wanted()


def compiling() -> bool:
    """Whether the engine is to be compiled: wanted (``SLABCALC_PURE``), a C compiler on PATH, mypyc
    importable.  Cheap: mypyc itself runs only in build_ext (:func:`ext_modules`)."""
    if pure_wanted():
        _say("SLABCALC_PURE is set: plain Python modules")
        return False
    if _compiler() is None:
        _say("no C compiler on PATH: plain Python modules")
        return False
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        _say("mypyc is not installed: plain Python modules")
        return False
    return True


def ext_modules() -> list:
    """mypyc's extensions of ``COMPILED`` (it type-checks and writes the C here), then Cython's of ``CYTHON``
    (:func:`cython_modules`); none where mypyc stops."""
    from mypyc.build import mypycify

    try:        # mypyc type-checks here, before any C is built: an error exits, which must not fail the install
        engine = mypycify(["--ignore-missing-imports", "--follow-imports=silent", *COMPILED], opt_level="3",
                          multi_file=True, group_name="slabcalc")
    except (Exception, SystemExit) as exc:
        _say(f"mypyc stopped ({exc!r}): plain Python modules")
        return []
    return engine + cython_modules()


def cython_modules() -> list:
    """Cython's extensions of ``CYTHON`` (the C written beside each source), or none without Cython (the
    reader then scans a CSV sample with numpy): bounds and negative indexes unchecked, the sources index
    only inside what they were given."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        _say("Cython is not installed: a CSV sample's keys are scanned by numpy")
        return _none_built()
    modules = [Extension(_module(path), [path]) for path in CYTHON]
    try:
        return cythonize(modules, quiet=True, compiler_directives={
            "language_level": 3, "boundscheck": False, "wraparound": False})
    except (Exception, SystemExit) as exc:
        _say(f"Cython stopped ({exc!r}): a CSV sample's keys are scanned by numpy")
        return _none_built()


def _module(path: str) -> str:
    """The module of a source under src/ (``src/slabcalc/inputs/key_scan.py``: ``slabcalc.inputs.key_scan``)."""
    return path[len("src/"):-len(".py")].replace("/", ".")


def _none_built() -> list:
    """No Cython extension: any built before beside its source (an in-place build) is removed, so that
    a stale one never runs (its source is not recorded in ``_built.json`` either)."""
    import glob

    for path in CYTHON:
        for built in glob.glob(path[:-len(".py")] + ".*"):
            if built.endswith(SUFFIXES):
                os.remove(built)
                _say(f"removed {built}, built before from another source")
    return []


# setup() is given a placeholder: pip runs setup.py three times (requirements, metadata, build), and
# egg_info's file list finalizes build_ext in each; mypyc's type check and C generation, about half a
# minute each time, belong to the process that builds (a command of BUILDS: OptionalBuildExt swaps in
# the real extensions).  The placeholder marks the wheel as platform-specific; were it ever built, the
# build fails, and OptionalBuildExt.run leaves the plain modules.
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install", "bdist", "bdist_egg"}
PLACEHOLDER = [Extension("slabcalc__mypyc", sources=["src/slabcalc/engines/engine.py"])] if compiling() else []


class OptionalBuildExt(build_ext):
    """A failed compile leaves the plain modules installed (they are always there), not a failed install;
    all or none: one extension failing removes those already built.  A build that succeeds records the
    SHA-256 of every source it was built from beside the package (``_plain.BUILT``), which the import
    checks: an edit after the build runs the plain modules, never a stale compiled one."""

    def finalize_options(self) -> None:
        dist = self.distribution
        if dist.ext_modules and dist.ext_modules[0] is PLACEHOLDER[0] and BUILDS.intersection(sys.argv[1:]):
            dist.ext_modules = ext_modules()        # mypyc runs now: once, in the process that builds
        super().finalize_options()

    def build_extensions(self) -> None:
        """mypyc's C a file a module (``multi_file``), the files compiled side by side, a thread a core: one
        4 MB file took gcc 34 s of one core, most of a fresh install's build (the whole build: 54 s -> 36 s
        on 2 cores; the engine as fast)."""
        from concurrent.futures import ThreadPoolExecutor

        one_by_one = self.compiler.compile

        def side_by_side(sources, *args, **kwargs):
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                each = pool.map(lambda source: one_by_one([source], *args, **kwargs), sources)
                return [obj for objs in each for obj in objs]
        self.compiler.compile = side_by_side
        super().build_extensions()

    def run(self) -> None:
        if self.extensions and self.extensions[0] is PLACEHOLDER[0]:
            raise RuntimeError("build_ext ran from a command setup.py does not know to build with (BUILDS)")
        try:
            super().run()
        except Exception as exc:      # noqa: BLE001 -- any compiler failure: the plain modules run
            removed = [path for path in self.get_outputs() if os.path.exists(path)]
            for path in removed:
                os.remove(path)
            _say(f"compiling failed ({exc}): plain Python modules ({len(removed)} built extension(s) removed)")
            return
        if self.extensions:
            self._record()

    def _record(self) -> None:
        import json

        plain = _plain_module()
        package = os.path.join("src", "slabcalc")
        names = {ext.name for ext in self.extensions}
        cython = [path for path in CYTHON if _module(path) in names]
        built = plain.record(package, [os.path.relpath(path, package) for path in COMPILED + cython])
        for path in CYTHON_TYPES if cython else ():       # not Python: recorded as they are
            built["sources"][os.path.relpath(path, package)] = plain.digest(path)
        library = self.get_ext_fullpath("slabcalc__mypyc")
        target = os.path.join(os.path.dirname(library), "slabcalc", plain.BUILT)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            json.dump(built, f, indent=1, sort_keys=True)
        _say(f"the library's {len(built['sources'])} sources recorded in {target}")


setup(ext_modules=PLACEHOLDER, cmdclass={"build_ext": OptionalBuildExt})
