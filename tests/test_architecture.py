"""The layout holds: layers import only downwards, the import graph has no cycle, only the command
line imports click, and modules stay small enough to read (issue 15).

Layers, lowest first (a module may import its own package and the layers below it):

    errors                     one base for every error
    model, allocators          memcached's rules; other allocators' classes
    engines, inputs            replays; readers at the edge
    analysis                   reports, plans, stats, the optimizer
    records                    the JSON documents and summary lines of the commands
    cli                        the command line
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "slabcalc"
LAYER = {"errors": 0, "_plain": 0, "_native": 0, "model": 1, "allocators": 1, "engines": 2, "inputs": 2, "analysis": 3, "records": 4, "cli": 5}
LONG = 400          # lines; a longer module says why at its top
MOST = 600          # lines; no module is longer, whatever it says
FUNCTION = 80       # lines of a function or method
COMMAND = 160       # lines of a command's own module


def modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(["slabcalc", *parts])] = path
    return found


@functools.lru_cache(maxsize=None)
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for every rule here (they read it, none changes it)."""
    return ast.parse(path.read_text())


def imports(name: str, path: Path, top_level_only: bool = False) -> set[str]:
    """The slabcalc modules ``name`` imports (absolute, or relative resolved), those under ``if
    TYPE_CHECKING:`` and inside functions included: a cycle of types is a cycle of design."""
    tree = parsed(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("slabcalc"):
                found.add(module)
                found.update(f"{module}.{a.name}" for a in node.names)      # "from pkg import module"
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("slabcalc"))
    known = modules()
    return {m for m in found if m in known and m != name}


def layer(module: str) -> tuple[str, int | None]:
    parts = module.split(".")
    if len(parts) == 1:
        return "slabcalc", None
    return parts[1], LAYER.get(parts[1])


def test_layers_import_only_downwards():
    wrong = []
    for name, path in modules().items():
        package, level = layer(name)
        if level is None:            # slabcalc/__init__.py, __main__: the library's front door
            continue
        for other in imports(name, path):
            their_package, theirs = layer(other)
            if their_package != package and (theirs is None or theirs >= level):
                wrong.append(f"{name} imports {other}")
    assert wrong == []


def test_records_are_made_in_records_alone():
    """The JSON documents live in records/, not beside the rules nor in the command line (``*_record``
    functions; issue 30: cli/ was left out of this check)."""
    found = [f"{name}.{node.name}" for name, path in modules().items()
             if name.startswith(("slabcalc.model", "slabcalc.engines", "slabcalc.analysis", "slabcalc.cli"))
             for node in parsed(path).body
             if isinstance(node, ast.FunctionDef) and node.name.endswith(("_record", "_records"))]
    assert found == []


RECORD_PARAMETERS = ("record", "document", "doc")
MUTATORS = ("update", "append", "extend", "insert", "pop", "setdefault", "clear", "remove", "__setitem__")


def record_mutations(tree: ast.AST) -> list[str]:
    """Where code changes a record after it was built: a name bound to what a ``*_record``/``*_records``
    function returned (or to a part of one: ``record["totals"]``, a row a loop takes from it) is then
    assigned into, deleted from or changed by a dict/list method; or an ``add_*`` function is called to
    change it (issue 30: ``add_extstore``, ``add_plan``, ``_add_hits``, ``_add_capacity``)."""
    found = []

    def made_by_records(value) -> bool:
        while isinstance(value, ast.Subscript):
            value = value.value
        if isinstance(value, ast.Name):
            return value.id in bound
        return isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")).endswith(
            ("_record", "_records"))

    def root(target):
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        return target.id if isinstance(target, ast.Name) else None

    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Module))]:
        # a record handed to a printer is one too
        bound: set[str] = {a.arg for a in function.args.args if a.arg in RECORD_PARAMETERS} \
            if isinstance(function, ast.FunctionDef) else set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and made_by_records(node.value):
                bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) and \
                    any(made_by_records(part) for part in ast.walk(node.iter)):
                bound.add(node.target.id)
        for node in ast.walk(function):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
                [node.target] if isinstance(node, ast.AugAssign) else []
            for t in targets:
                for part in ast.walk(t):
                    if isinstance(part, ast.Subscript) and root(part) in bound:
                        found.append(f"{node.lineno}: assigns into {root(part)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in MUTATORS and root(node.func.value) in bound:
                found.append(f"{node.lineno}: {root(node.func.value)}.{node.func.attr}()")
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")).lstrip(
                    "_").startswith("add_"):
                found.append(f"{node.lineno}: calls {ast.unparse(node.func)}")
    return sorted(set(found))


def test_the_command_line_changes_no_record_after_it_is_built():
    """A record is built in one pass in records/ from frozen results; cli/ renders it as it is."""
    found = [f"{name}:{where}" for name, path in modules().items() if name.startswith("slabcalc.cli")
             for where in record_mutations(parsed(path))]
    assert found == []


def test_the_record_check_sees_a_record_changed_after_it_is_built():
    """The check above can fail: the shapes issue 30 removed from cli/ are each caught."""
    shapes = ['record = report_record(base)\nrecord["extstore"] = {}',
              'record = report_record(base)\nfor row in record["classes"]:\n    row["memory"] = 1',
              'doc = stats_record(nodes)\nfor entry in doc["nodes"]:\n    entry.update(x=1)',
              'record = optimum_record(found)\n_add_hits(record, found)',
              'record = optimum_record(found)\nrecord["findings"] += lines',
              'for row in [record["baseline"]] + record["candidates"]:\n    row["held_out_gain_pct"] = 1']
    for shape in shapes:
        assert record_mutations(ast.parse(f"def f(record):\n" + "\n".join("    " + line for line in
                                                                    shape.splitlines()))), shape
    assert record_mutations(ast.parse("def f():\n    rows = [dict(r, memory=1) for r in report_record(b)]")) == []


def test_records_import_no_private_helper_of_another_package():
    """records/ builds from what the layers below make public (issue 30: it imported engines.findings'
    ``_number``)."""
    found = []
    for name, path in modules().items():
        if not name.startswith("slabcalc.records"):
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("slabcalc.") and \
                    not node.module.startswith("slabcalc.records"):
                found += [f"{name}:{node.lineno} {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert found == []


PROSE_FUNCTIONS = ("describe", "why", "text", "line", "lines", "summary")


def test_the_engines_return_data_not_prose():
    """engines/ says what was modelled and what happened as data; the words for people are records/'
    (issue 30: ``describe_model`` built a line of text, ``findings.why`` a sentence).  No function of
    engines/ returns a string with words in it, nor is named for prose; an error's message is not prose
    for this check (it is raised, never returned)."""
    found = []
    for name, path in modules().items():
        if not name.startswith("slabcalc.engines"):
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.FunctionDef) and node.name.lstrip("_").split("_")[-1] in PROSE_FUNCTIONS:
                found.append(f"{name}.{node.name}: named for prose")
            if isinstance(node, ast.Return) and node.value is not None and any(
                    isinstance(part, ast.JoinedStr) or
                    (isinstance(part, ast.Constant) and isinstance(part.value, str) and " " in part.value.strip())
                    for part in ast.walk(node.value)):
                found.append(f"{name}:{node.lineno} returns prose")
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "text":
                found.append(f"{name}:{node.lineno} a text field")
    assert found == []


def test_the_model_reads_nothing_and_prints_nothing():
    for name, path in modules().items():
        if name.startswith("slabcalc.model"):
            text = path.read_text()
            assert "click" not in text and "print(" not in text, name
            # the profile loader alone reads files: the release rules, shipped or the operator's
            assert name == "slabcalc.model.profile.loader" or "open(" not in text, name


def test_only_the_command_line_imports_click():
    users = sorted(name for name, path in modules().items()
                   if "import click" in path.read_text() or "from click" in path.read_text())
    assert users and all(name.startswith("slabcalc.cli") for name in users), users


def test_the_module_import_graph_has_no_cycle():
    # every import counts, those for the types only included (issue 40: the engine's parts took the
    # Engine for their types, 13 modules in one cycle; they are given the store, engines/store.py)
    graph = {name: imports(name, path) for name, path in modules().items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(trail[trail.index(nxt):] + [nxt]) if nxt in trail else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    # a package's __init__ importing its own modules is how packages are made, not a cycle of design
    cycles = [c for c in cycles if not all(part.startswith("slabcalc.cli") for part in c.split(" -> "))]
    assert cycles == []


def test_modules_are_short_or_say_why():
    """No module over MOST lines; one over LONG says why at its top ("is long because"): a reason
    lets a module run to MOST, never past it (issue 30: the reason was an exemption from any length)."""
    long = []
    for name, path in modules().items():
        lines = path.read_text().count("\n")
        doc = ast.get_docstring(parsed(path)) or ""
        if name.startswith("slabcalc.cli.commands.") and lines > COMMAND:
            long.append(f"{name}: {lines} lines, a command's module is at most {COMMAND}")
        elif lines > MOST:
            long.append(f"{name}: {lines} lines, a module is at most {MOST}")
        elif lines > LONG and "is long because" not in doc:
            long.append(f"{name}: {lines} lines and no 'is long because' at its top")
    assert long == []


def scoped(node, where: str):
    """``(where, node)`` for every node below ``node``, ``where`` naming the function or class it is in
    (``module.Class.function``), or at a module's top the names an assignment binds (``module.NAME``).
    An f-string's parts are not given apart from it."""
    for child in ast.iter_child_nodes(node):
        here = where
        if isinstance(child, ast.Assign) and isinstance(node, ast.Module):
            here = f"{where}." + ",".join(getattr(t, "id", "?") for t in child.targets)
        yield here, child
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            here = f"{where}.{child.name}"
        if not isinstance(child, ast.JoinedStr):
            yield from scoped(child, here)


@functools.lru_cache(maxsize=None)
def functions() -> dict[str, int]:
    """Every function and method of the package, ``module.Class.function``: its length in lines
    (the ``def`` line to the last, docstring included, decorators not)."""
    return {f"{where}.{node.name}": node.end_lineno - node.lineno + 1
            for name, path in modules().items() for where, node in scoped(parsed(path), name)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


# The functions over FUNCTION lines when the rule came (issue 30), each with why it is not yet split.
# This list only shrinks: a function split below the limit leaves it (the test below says so), and a
# new long function fails instead of being added.
LONG_FUNCTIONS: dict[str, str] = {}


def test_functions_are_short():
    """No function over FUNCTION lines, save the ones listed in LONG_FUNCTIONS."""
    long = [f"{name}: {lines} lines" for name, lines in sorted(functions().items())
            if lines > FUNCTION and name not in LONG_FUNCTIONS]
    assert long == [], f"functions over {FUNCTION} lines (split them; the list of old ones does not grow)"


def test_the_list_of_long_functions_is_not_stale():
    """Each function in LONG_FUNCTIONS still exists and is still long: one split, renamed or moved
    leaves the list."""
    found = functions()
    stale = [f"{name}: {'gone' if name not in found else f'{found[name]} lines'}"
             for name in LONG_FUNCTIONS if found.get(name, 0) <= FUNCTION]
    assert stale == [], "remove these from LONG_FUNCTIONS"


def test_no_release_number_is_compared_outside_the_profile_loader():
    """Release rules are data: code reads a profile's fields, never ``if release >= 1.6.24``."""
    found = []
    for name, path in modules().items():
        if name == "slabcalc.model.profile.loader":
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "release_key":
                found.append(f"{name}:{node.lineno} release_key()")
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(getattr(s, "attr", None) == "release" for s in sides) and \
                        any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides):
                    found.append(f"{name}:{node.lineno} compares a release with a literal")
    assert found == []


def test_memcached_flags_are_spelled_in_one_place():
    """memcached's argv is written by ``Settings.argv`` (and ``Settings.as_argv`` through it),
    and slab_chunk_max's unit converted by ``model.settings.chunk_max_value``: nowhere else outside the
    command line's own option declarations."""
    flags = {"-m", "-n", "-f", "-I", "-C", "-o"}
    found = []
    for name, path in modules().items():
        if name.startswith("slabcalc.cli") or name in ("slabcalc.model.settings", "slabcalc.model.profile.data",
                                                        "slabcalc.model.profile.validate", "slabcalc.model.profile.fields", "slabcalc"):
            continue
        text = path.read_text()
        if "slab_chunk_max_unit" in text:
            found.append(f"{name}: converts slab_chunk_max's unit")
        for node in ast.walk(parsed(path)):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and \
                    any(isinstance(e, ast.Constant) and e.value in flags for e in node.elts):
                found.append(f"{name}:{node.lineno} writes memcached flags")
    assert found == []


def suboption_words() -> set[str]:
    """Every ``-o`` word a bundled release knows (its profile's data), first and last of each line."""
    from slabcalc.model.profile import bundled_lines, load_profile

    words: set[str] = set()
    for _, first, last in bundled_lines():
        for release in (first, last):
            p = load_profile(release)
            words |= {*p.suboptions, *p.ignored_suboptions, *p.background.suboptions, *p.treatments}
    return words


@functools.lru_cache(maxsize=None)
def argv_writers() -> dict[str, list[str]]:
    """Where code outside the argv writer spells memcached's ``-o`` words as memcached reads them:
    ``module.function`` (or ``module.NAME`` at the top) -> what it writes.

    Caught: a string that is only flags (``"-o slab_automove=1"``), and a ``word=`` written before a
    value, in an f-string or a concatenation, at a string's start or after ``-o `` or a comma
    (``f"slab_sizes={sizes}"``, ``"-o hashpower=" + str(n)``), or alone (``"slab_chunk_max="``).
    Prose that names an option (``start it with -o track_sizes``, help texts) is not argv."""
    words = "|".join(sorted(map(re.escape, suboption_words()), key=len, reverse=True))
    only_flags = re.compile(rf"(-[a-zA-Z] \S+ )*-o ({words})(=\S*)?(,({words})(=\S*)?)*( -[a-zA-Z] \S+)*")
    before_value = re.compile(rf"(^|-o |,)({words})=$")
    found: dict[str, list[str]] = {}
    for name, path in modules().items():
        if name == "slabcalc.model.settings" or name.startswith("slabcalc.model.profile"):
            continue
        for where, node in scoped(parsed(path), name):
            written = []
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if only_flags.fullmatch(node.value) or before_value.fullmatch(node.value):
                    written.append(node.value)
            parts = node.values if isinstance(node, ast.JoinedStr) else \
                [node.left, node.right] if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) else []
            for part, nxt in zip(parts, parts[1:]):
                if isinstance(part, ast.Constant) and isinstance(part.value, str) and \
                        not isinstance(nxt, ast.Constant) and before_value.search(part.value):
                    written.append(part.value + "...")
            if written:
                found.setdefault(where, []).extend(written)
    return found


# Places that spelled ``-o`` words themselves when the rule came (issue 30), each with why it is not yet
# moved to model.settings' Settings.argv. This list only shrinks (the test below checks it is not stale).
KNOWN_ARGV_WRITERS = {
    "slabcalc.analysis.automover.TURN_ON": "a flag of the automover's advice; issue 22 owns those texts",
    "slabcalc.analysis.automover.TURN_ON_REASSIGN": "a flag of the automover's advice; issue 22 owns those texts",
    "slabcalc.analysis.automover.diagnose": "names the unmodelled slab_automove value; issue 22 owns the texts",
    "slabcalc.analysis.diagnosis._automove": "labels stats settings' automover as memcached's -o word",
    "slabcalc.records.simulate.threads_text": "prose naming the automover setting the run was given (slab_automove=N), not an argv",
    "slabcalc.records.plan.plan_lines": "advises -o hashpower=N; issue 30's records rework builds it from settings",
}


def test_memcached_suboption_words_are_spelled_by_the_argv_writer():
    """``-o`` words with their values (``slab_chunk_max=``, ``slab_sizes=``, ``slab_automove=``, any word
    of the profiles) are written by ``Settings.argv`` (model.settings) alone: Settings.as_argv, the command
    line's options, stats' flags of a running server and optimize's candidates all hand it values
    (issue 30: five writers of memcached's argv). A string in any expression counts, f-strings too."""
    found = {where: written for where, written in argv_writers().items() if where not in KNOWN_ARGV_WRITERS}
    assert found == {}


def test_the_list_of_known_argv_writers_is_not_stale():
    found = argv_writers()
    assert [where for where in KNOWN_ARGV_WRITERS if where not in found] == [], "remove these from the list"


def _modules_loaded_by(args: list[str], tmp_path) -> set[str]:
    """The modules a ``slabcalc ARGS`` process has imported when it ends."""
    import os
    import subprocess
    import sys

    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nLOADED ' + ' '.join(sorted(sys.modules))))\n"
            "from slabcalc.cli import main\n"
            "sys.argv = ['slabcalc'] + sys.argv[1:]\n"
            "main()\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stderr.rsplit("LOADED ", 1)[1].split())


HEAVY = ("numpy", "yaml", "tabulate", "slabcalc.analysis.optimize", "slabcalc.engines.engine",
         "slabcalc.analysis.deploy", "slabcalc.analysis.extstore", "duckdb")


def test_a_small_report_imports_only_what_it_needs(tmp_path):
    """Start-up is what a command imports: a report of a small file loads no numpy (an input under
    one block is read line by line), no other command's modules, and -- once the parsed profile is
    cached -- no PyYAML; a plain JSON report loads no tabulate, no planner and no extstore model."""
    items = tmp_path / "items.csv"
    items.write_text("key,value\n10,100\n20,3000\n")
    first = _modules_loaded_by(["report", str(items), "--format", "json"], tmp_path)
    assert "slabcalc.analysis.report" in first and "yaml" in first        # it ran, and parsed the profile
    again = _modules_loaded_by(["report", str(items), "--format", "json"], tmp_path)
    assert "slabcalc.analysis.report" in again
    assert sorted(again & set(HEAVY)) == []
    assert not any(m.startswith("slabcalc.cli.commands.") and m != "slabcalc.cli.commands.report" for m in again)


def test_tables_are_laid_out_without_importing_tabulate(tmp_path):
    """tabulate imports importlib.metadata (a third of a command's start-up): the default table of
    a report, bars and human units included, is laid out by slabcalc (tests/cli/test_output.py holds it
    equal to tabulate's); another layout loads tabulate."""
    items = tmp_path / "items.csv"
    items.write_text("key,value\n10,100\n20,3000\n")
    _modules_loaded_by(["report", str(items), "--format", "json"], tmp_path)      # the profile cached
    table = _modules_loaded_by(["report", str(items)], tmp_path)
    assert "slabcalc.analysis.report" in table and "tabulate" not in table
    assert "tabulate" not in _modules_loaded_by(["classes"], tmp_path)
    assert "tabulate" in _modules_loaded_by(["classes", "--format", "github"], tmp_path)


def test_an_input_of_a_block_or_more_is_counted_by_numpy(tmp_path):
    from slabcalc.inputs.items import BLOCK_SIZE

    items = tmp_path / "items.csv"
    row = "10,100\n"
    items.write_text("key,value\n" + row * (BLOCK_SIZE // len(row) + 1))
    assert "numpy" in _modules_loaded_by(["report", str(items), "--format", "json"], tmp_path)


def test_the_key_limit_is_read_from_the_profile():
    """The longest key is the profile's ``key_max`` (memcached's KEY_MAX_LENGTH): no module spells it as a
    literal 250 or a constant of its own, and ``--key``/``--strict`` are declared once, in cli/options.py."""
    found = []
    for name, path in modules().items():
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value == 250:
                found.append(f"{name}:{node.lineno} the literal 250")
            if isinstance(node, (ast.Name, ast.Attribute)) and getattr(node, "id", getattr(node, "attr", "")) in (
                    "KEY_MAX", "KEY_MAX_LENGTH"):
                found.append(f"{name}:{node.lineno} a KEY_MAX of its own")
            if name != "slabcalc.cli.options" and isinstance(node, ast.Call) and \
                    getattr(node.func, "attr", "") == "option" and \
                    any(isinstance(a, ast.Constant) and a.value in ("--key", "--strict") for a in node.args):
                found.append(f"{name}:{node.lineno} declares {node.args[0].value}")
    assert found == []


def test_cas_bytes_are_worked_out_in_one_place():
    """Whether an item carries CAS bytes, and how many, is ``Settings.cas_bytes``: no other module reads
    the profile's ``cas_size`` or compares its ``cas`` rule."""
    found = []
    for name, path in modules().items():
        if name in ("slabcalc.model.settings", "slabcalc.model.profile.data"):
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Attribute) and node.attr == "cas_size":
                found.append(f"{name}:{node.lineno} reads cas_size")
            if isinstance(node, ast.Compare) and any(isinstance(s, ast.Constant) and s.value == "appended"
                                                     for s in [node.left, *node.comparators]):
                found.append(f"{name}:{node.lineno} compares the CAS rule")
    assert found == []


# the readers of files, which the command line reaches only through slabcalc.inputs (inputs/entry.py)
FILE_READERS = ("items", "workload", "warehouse", "traces", "rows", "blocks", "columns", "lines", "metadump")


def _cli_reader_imports(name: str, path: Path) -> list[str]:
    """The file readers (and their pieces) that cli module ``name`` imports, and ``open_input``/``parse_dump``
    named anywhere in it: what choosing a reader looks like."""
    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("slabcalc.inputs"):
            module = node.module.split(".")[2] if node.module.count(".") >= 2 else None
            names = {a.name for a in node.names}
            if module in FILE_READERS or (module is None and names & set(FILE_READERS)):
                found.append(f"{name}:{node.lineno} imports {node.module} ({', '.join(sorted(names))})")
            elif module == "dumps" and "parse_dump" in names:
                found.append(f"{name}:{node.lineno} imports parse_dump")
        elif isinstance(node, ast.Import) and any(a.name.startswith("slabcalc.inputs.") and
                                                  a.name.split(".")[2] in FILE_READERS for a in node.names):
            found.append(f"{name}:{node.lineno} imports a reader")
        elif isinstance(node, ast.Name) and node.id in ("read_items", "read_workload", "read_warehouse",
                                                         "read_oracle_general", "open_input", "parse_dump"):
            found.append(f"{name}:{node.lineno} names {node.id}")
    return found


def test_commands_read_their_inputs_through_the_one_entry():
    """Commands pass options; ``slabcalc.inputs.open_items``/``open_workload``/``read_dumps`` pick the reader
    (CSV, metadump, stats sizes, DuckDB, a trace).  No cli module imports a file reader (issue 30: the
    choice between DuckDB and the row readers was written four times, in the commands)."""
    found = [hit for name, path in modules().items() if name.startswith("slabcalc.cli")
             for hit in _cli_reader_imports(name, path)]
    assert found == []


def test_the_reader_check_sees_a_command_that_picks_its_reader(tmp_path):
    """The check above fails on the bypasses it is there for."""
    for text in ("from slabcalc.inputs.items import read_items\n",
                 "from slabcalc.inputs import items as reader\n",
                 "def f(file):\n    from slabcalc.inputs.warehouse import reader_for\n    return reader_for(file)\n",
                 "import slabcalc.inputs.workload\n",
                 "def f(stream):\n    return read_items(stream, 'x')\n"):
        bypass = tmp_path / "bypass.py"
        bypass.write_text(text)
        assert _cli_reader_imports("slabcalc.cli.commands.bypass", bypass), text
    entry = tmp_path / "entry.py"
    entry.write_text("from slabcalc.inputs import open_items\nfrom slabcalc.inputs.client import poll\n")
    assert _cli_reader_imports("slabcalc.cli.commands.entry", entry) == []


# who hands Settings.argv values: the command line's options, a running server's stats settings, and
# analysis/optimize's candidates
ARGV_CALLERS = ("slabcalc.cli.common", "slabcalc.analysis.stats", "slabcalc.analysis.optimize")


def _argv_writers(name: str, path: Path) -> list[str]:
    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.FunctionDef) and node.name in ("memcached_argv", "memcached_args", "argv_words"):
            found.append(f"{name}:{node.lineno} defines {node.name}")
        if isinstance(node, ast.Call) and not name.startswith(ARGV_CALLERS) and (
                getattr(node.func, "id", None) == "argv_words" or
                (getattr(node.func, "attr", None) == "argv" and getattr(node.func.value, "id", "") == "Settings")):
            found.append(f"{name}:{node.lineno} writes an argv from values")
    return found


def test_settings_are_the_one_writer_of_memcached_argv():
    """memcached's argv is written by ``Settings`` alone: ``as_argv`` for settings already made, ``Settings.argv``
    for the values the command line and a server's ``stats settings`` give (issue 30: ``cli/common.memcached_argv``
    and ``analysis/stats.memcached_args`` wrote their own).  Elsewhere argv comes from a Settings' as_argv."""
    found = [hit for name, path in modules().items() if name != "slabcalc.model.settings"
             for hit in _argv_writers(name, path)]
    assert found == []


def test_the_writer_check_sees_another_writer(tmp_path):
    for text in ("def memcached_argv(profile, **options):\n    return []\n",
                 "def f():\n    return Settings.argv(memory_mb=64)\n",
                 "def f():\n    return argv_words(chunk_size=48)\n"):
        other = tmp_path / "other.py"
        other.write_text(text)
        assert _argv_writers("slabcalc.analysis.other", other), text


LIMIT_PARAMETERS = ("memory_limit", "maxbytes")


def _limits_beside_settings(name: str, path: Path) -> list[str]:
    """Public functions and methods (a public class's ``__init__`` included) of a module that take a
    memory limit as a parameter beside the settings that hold one."""
    found = []

    def check(node, where: str) -> None:
        args = node.args
        params = {a.arg: a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        holds = "settings" in params or any("Settings" in ast.unparse(a.annotation)
                                            for a in params.values() if a.annotation is not None)
        limits = [p for p in LIMIT_PARAMETERS if p in params]
        if holds and limits:
            found.append(f"{name}:{node.lineno} {where}{node.name} takes {', '.join(limits)} beside the settings")

    for node in parsed(path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            check(node, "")
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and (method.name == "__init__" or
                                                            not method.name.startswith("_")):
                    check(method, f"{node.name}.")
    return found


def test_the_memory_limit_is_read_from_the_settings():
    """The analysis reads -m from the settings it is given (``settings.memory_limit``, the -m given, or
    ``settings.maxbytes``), never from a number passed beside them (issue 30: ``report --vs "-m 128"`` was
    measured under the baseline's limit that way).  A report under another limit takes settings made with it."""
    found = [hit for name, path in modules().items() if name.startswith("slabcalc.analysis")
             for hit in _limits_beside_settings(name, path)]
    assert found == []


def test_the_limit_check_sees_a_limit_beside_the_settings(tmp_path):
    for text in ("def build_report(settings, distribution, memory_limit=None):\n    pass\n",
                 "def f(s: Settings, *, maxbytes: int):\n    pass\n",
                 "class FileOrder:\n    def __init__(self, settings, memory_limit):\n        pass\n"):
        other = tmp_path / f"other{len(text)}.py"     # a path of its own: parsed() keeps each tree
        other.write_text(text)
        assert _limits_beside_settings("slabcalc.analysis.other", other), text
    fine = tmp_path / "fine.py"       # a number with no settings, and a private helper, may take a limit
    fine.write_text("def capacity(rows, items, memory_limit):\n    pass\n"
                    "def _inner(settings, memory_limit):\n    pass\n")
    assert _limits_beside_settings("slabcalc.analysis.other", fine) == []
