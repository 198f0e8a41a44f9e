#!/usr/bin/env python3
"""Replay the model on every random-shape capture and write the agreement it measures (issue 38).

    python scripts/gen_exactness.py              # replay all of tests/data/random/, write both files
    python scripts/gen_exactness.py --jobs 2
    python scripts/gen_exactness.py --render     # only rewrite docs/exactness.md from agreement.json
    python scripts/gen_exactness.py --new        # add captures made since, the model unchanged
    python scripts/gen_exactness.py --stratum extstore   # replay one stratum, keep the others' verdicts

Writes ``tests/data/random/agreement.json`` (per shape: agrees or its misses with their figures, and
where two of the server's own runs differ beyond the tolerance), the table between the markers of
``docs/exactness.md`` and the per-release summary ``simulate``'s model line states
(``src/slabcalc/model/profiles/agreement.json``, shipped with slabcalc).  tests/fidelity/test_random_corpus.py holds the model to the recorded verdicts on a
stratified subset and checks that the docs table is what this script renders: no figure is typed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import random_corpus  # noqa: E402
import random_shapes  # noqa: E402

from slabcalc.errors import SimulationError  # noqa: E402
from slabcalc.model.profile.loader import release_key  # noqa: E402

AGREEMENT = random_corpus.DATA / "agreement.json"
DOC = ROOT / "docs" / "exactness.md"
# the per-release figures simulate's model line states, shipped with slabcalc (model/profile/loader.py)
PACKAGED = ROOT / "src" / "slabcalc" / "model" / "profiles" / "agreement.json"
BEGIN, END = "<!-- random-corpus:begin (scripts/gen_exactness.py) -->", "<!-- random-corpus:end -->"


def replay(path: Path) -> dict:
    record = random_corpus.load(path)
    shape = record["shape"]
    rows = random_shapes.workload(shape)
    ext = bool(shape.get("ext"))
    refused = None
    sensitive = None
    if random_shapes.digest(rows) != record["digest"]:
        misses = ["the workload drawn now is not the one captured (digest)"]
    else:
        try:
            misses = random_corpus.verdict(record, random_corpus.model_figures(record, rows))
            # could the comparison tell a model with 3/4 of the memory apart on this shape?
            smaller = random_corpus.smaller_memory(record)
            sensitive = bool(random_corpus.verdict(record, random_corpus.model_figures(smaller, rows)))
        except SimulationError as exc:      # a flag simulate says it does not model: not a miss
            refused = str(exc)
            misses = [f"the model refuses: {exc}"]
    apart = random_corpus.self_disagreement(record["runs"], ext)     # any two of its runs
    return {"id": shape["id"], "release": shape["release"], "args": " ".join(record["args"]),
            "stratum": random_corpus.stratum(shape), "filled": random_corpus.filled(record),
            "sensitive": sensitive,
            "operations": record["operations"],
            "runs": len(record["runs"]), "agree": not misses, "refused": refused,
            "miss_count": len(misses), "misses": misses[:4],
            "apart_count": len(apart), "apart": apart[:2]}


def _figure(miss: str) -> str:
    """The figure a miss is about: ``curr_items``, ``class pages``, ..."""
    name = miss.split(": ")[1] if ": " in miss else miss
    return "class pages" if name.startswith("class ") else name


def render(data: dict) -> str:
    lines = [BEGIN, "", "## Random shapes against real servers (issue 38)", "",
             "Shapes drawn by `scripts/gen_shapes.py` (seeded), each replayed into a fresh real server at least "
             "twice by `scripts/capture_random.py` (`tests/data/random/`), the model replayed on the same "
             "workload. A shape agrees when at every 10 s snapshot every figure is within tolerance of one of "
             "its real runs or between them: pages per class ±1; `evictions`, `curr_items`, `get_hits` (and "
             "`extstore_objects_written`) within 3 % or 300; `slabs_moved` ±2. *Server apart*: two "
             "of the server's own runs differ beyond that tolerance somewhere. Regenerated from the corpus by "
             "`scripts/gen_exactness.py`; `tests/fidelity/test_random_corpus.py` replays a stratified subset in CI.", "",
             "*Refused*: shapes with a flag `simulate` says it does not model (not counted as shapes compared).",
             "",
             "*Short of memory*: shapes on which the server evicted, moved a page or failed a set for memory; "
             "the model agrees on a shape that never is whatever its rules for a full cache. *Tell -m ¾ "
             "apart*: shapes on which a model given three quarters of the memory misses (the comparison "
             "can tell a wrong model there at all). "
             "Seeds up to 1000 draw `-m` whatever the workload (many never fill); seeds above draw it from the "
             "bytes the workload sets.",
             "",
             "| release | shapes compared | agree | short of memory | of those, agree | tell -m ¾ apart "
             "| of those, agree | server apart | misses by first figure | refused |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    shapes = data["shapes"]
    for release in sorted({s["release"] for s in shapes}, key=release_key):     # 1.6.9 before 1.6.14
        refused = [s for s in shapes if s["release"] == release and s["refused"]]
        mine = [s for s in shapes if s["release"] == release and not s["refused"]]
        agree = sum(s["agree"] for s in mine)
        apart = sum(s["apart_count"] > 0 for s in mine)
        figures = Counter(_figure(s["misses"][0]) for s in mine if not s["agree"])
        full = [s for s in mine if s["filled"]]
        full_agree = sum(s["agree"] for s in full)
        tell = [s for s in mine if s["sensitive"]]
        tell_agree = sum(s["agree"] for s in tell)
        lines.append(f"| {release} | {len(mine)} | {agree} ({100 * agree // max(1, len(mine))} %) | {len(full)} | "
                     f"{full_agree} ({100 * full_agree // max(1, len(full))} %) | {len(tell)} | "
                     f"{tell_agree} ({100 * tell_agree // max(1, len(tell))} %) | {apart} | "
                     + (", ".join(f"{k} {v}" for k, v in figures.most_common()) or "none")
                     + f" | {len(refused)} |")
    lines += ["", "Each miss, its first figure outside the tolerance (model, then the server's runs):", "",
              "| release | shape | stratum | server flags | first miss | misses | server apart |",
              "|---|---|---|---|---|---:|---:|"]
    for s in sorted(shapes, key=lambda s: release_key(s["release"])):     # stable: each release's in id order
        if not s["agree"] and not s["refused"]:
            lines.append(f"| {s['release']} | {s['id']} | {s['stratum']} | `{s['args'].split(' -o ext_path')[0]}` "
                         f"| {s['misses'][0]} | {s['miss_count']} | {s['apart_count']} |")
    lines += ["", END]
    return "\n".join(lines)


def summary(data: dict) -> dict:
    """Per release: the shapes compared (not refused), how many agree, on how many the server's own two
    runs differ beyond the tolerance, and per stratum [shapes, agree]: what ``simulate`` says."""
    releases: dict = {}
    for s in data["shapes"]:
        if s["refused"]:
            continue
        row = releases.setdefault(s["release"], {"shapes": 0, "agree": 0, "apart": 0, "strata": {}})
        row["shapes"] += 1
        row["agree"] += bool(s["agree"])
        row["apart"] += s["apart_count"] > 0
        stratum = row["strata"].setdefault(s["stratum"], [0, 0])
        stratum[0] += 1
        stratum[1] += bool(s["agree"])
    for row in releases.values():
        row["strata"] = dict(sorted(row["strata"].items()))
    return {"about": "written by scripts/gen_exactness.py from tests/data/random/agreement.json "
                     "(docs/exactness.md): the model against real servers on random shapes (issue 38)",
            "releases": dict(sorted(releases.items(), key=lambda kv: release_key(kv[0])))}


def write_packaged(data: dict) -> None:
    PACKAGED.write_text(json.dumps(summary(data), indent=1) + "\n")


def write_doc(data: dict) -> None:
    text = DOC.read_text()
    block = render(data)
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--render", action="store_true", help="only rewrite the docs from agreement.json")
    parser.add_argument("--new", action="store_true",
                        help="replay only the captures agreement.json does not record yet (the model unchanged)")
    parser.add_argument("--stratum", help="replay only the recorded shapes of this stratum (a change that "
                        "reaches no other, e.g. extstore), keeping the other verdicts")
    opts = parser.parse_args(argv)
    if not opts.render:
        paths = random_corpus.stored()
        kept: list = []
        if opts.new:            # keep the recorded verdicts, replay only captures not yet recorded
            kept = json.loads(AGREEMENT.read_text())["shapes"]
            known = {(s["release"], s["id"]) for s in kept}
            paths = [p for p in paths if (p.parent.name, p.name.removesuffix(".json.gz")) not in known]
        elif opts.stratum:
            recorded = json.loads(AGREEMENT.read_text())["shapes"]
            kept = [s for s in recorded if s["stratum"] != opts.stratum]
            chosen = {(s["release"], s["id"]) for s in recorded if s["stratum"] == opts.stratum}
            if not chosen:
                parser.error(f"no recorded shape is of stratum {opts.stratum!r}")
            paths = [p for p in paths if (p.parent.name, p.name.removesuffix(".json.gz")) in chosen]
        with ProcessPoolExecutor(opts.jobs) as pool:
            shapes = kept + list(pool.map(replay, paths))
        shapes.sort(key=lambda s: (s["release"], s["id"]))
        AGREEMENT.write_text(json.dumps({"shapes": shapes}, indent=1) + "\n")
    write_doc(json.loads(AGREEMENT.read_text()))
    write_packaged(json.loads(AGREEMENT.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
