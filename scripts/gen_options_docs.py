#!/usr/bin/env python
"""Write docs/options.md: every ``-o`` word of each release line and how slabcalc treats it.

    python scripts/gen_options_docs.py          # (re)write docs/options.md
    python scripts/gen_options_docs.py --check  # exit 1 when docs/options.md differs from what would be written

The table is the bundled profiles' ``treatments`` sections (src/slabcalc/model/profiles/*.yaml):
a word is listed under a line when some release of the line accepts it; where its treatment changes
within the line (a ``changes:`` entry), each stretch of releases has its own row.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "options.md"

INTRO = """# `-o` options: what slabcalc does with each

memcached takes extended options as `-o word[=value],...`.  slabcalc reads every word a release
accepts (and refuses, as memcached does, the words it does not), then treats each one in one of
three ways, separately for `simulate` (the replay) and for `report`, `place`, `optimize` and
`compare` (the layout: item classes, pages, capacity):

* **modelled**: the word changes the result as it changes the server's;
* **none**: it has no effect on memory or time (or, for the layout commands, on their answer);
  the output still lists it, with the reason;
* **refused**: it would change the answer and slabcalc does not model it: the command exits 2
  with one line naming the word.

Each command lists the words given, by memcached's name and value, with their treatment: `simulate`
every word in its model line, and in JSON under `model.options`; `report` and `place` the words they
do not model in their summary (`options`; the modelled ones show in the answer itself), and every
word in JSON under `settings.options` (`optimize` and `compare` too).

```console
$ slabcalc place --key 10 --value 100 -o idle_timeout=5,slab_chunk_max=16
field              value
-----------------  -----------------------------------------------------------------------------------
header             48
cas                8
key + 1            11
suffix (flags)     0
value + 2          102
item_size          169
status             stored
class              4
chunk_size         192
waste              23 (11.98%)
spare_value_bytes  23
with -C (no CAS)   161 bytes, class 4, waste 31
options            -o idle_timeout=5 no effect on this answer: closes idle connections; no item memory
```

The treatments are data in the release profiles (`treatments:` in
`src/slabcalc/model/profiles/*.yaml`); this page is written from them by
`python scripts/gen_options_docs.py`.

## The temporary LRU (`-o temporary_ttl=N`)

From 1.4.35, `-o temporary_ttl=N` puts every item whose TTL is at most N seconds in its class's
TEMP LRU (memcached's `items.c` `do_item_alloc`): it is never evicted and takes no part in
HOT/WARM/COLD; the LRU maintainer frees it once expired.  A class full of such items runs out of
memory (`outofmemory`) instead of evicting.  It needs the LRU maintainer: with
`-o no_lru_maintainer` (or `no_modern`) memcached refuses to start, and so does slabcalc.
`simulate` models it (`engines/temp_lru.py`); `tests/fidelity/test_paced.py` compares it with a real 1.6.18
at every 10 s snapshot of a 60 s run (scenario `temporary-ttl`).
"""


def rows(line: str, first: str, last: str) -> list[tuple[str, str, str, str]]:
    """``(word, simulate, layout, why)`` for every word a release of the line accepts; a word whose
    treatment changes within the line has a row per stretch of releases, named in the word's cell."""
    from slabcalc.model.profile import load_profile, release_key
    from slabcalc.model.treatments import accepted_words

    major, minor, low = release_key(first)[:3]
    high = release_key(last)[2]
    seen: dict[str, list[tuple[str, tuple]]] = {}
    for patch in range(low, high + 1):
        release = f"{major}.{minor}.{patch}"
        profile = load_profile(release)
        for word in accepted_words(profile):
            t = profile.treatments.get(word)
            spec = (t.simulate, t.layout, t.why or "") if t else ("refused", "refused", "no treatment in the profile")
            seen.setdefault(word, []).append((release, spec))
    out = []
    for word in sorted(seen):
        stretches: list[list] = []
        for release, spec in seen[word]:
            if stretches and stretches[-1][2] == spec:
                stretches[-1][1] = release
            else:
                stretches.append([release, release, spec])
        for start, end, spec in stretches:
            name = f"`{word}`" if len(stretches) == 1 else f"`{word}` ({start}-{end})"
            out.append((name, *spec))
    return out


def render() -> str:
    from slabcalc.model.profile import bundled_lines

    parts = [INTRO]
    for line, first, last in bundled_lines():
        table = rows(line, first, last)
        parts.append(f"\n## memcached {first} to {last}\n")
        if not table:
            parts.append("\nNo `-o` option: this line has none.\n")
            continue
        parts.append("\n| option | simulate | report, place, optimize | why |\n|---|---|---|---|\n")
        for word, simulate, layout, why in table:
            parts.append(f"| {word} | {simulate} | {layout} | {why.replace('|', '/')} |\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not DOCS.exists() or DOCS.read_text() != text:
            print("docs/options.md is stale: run python scripts/gen_options_docs.py", file=sys.stderr)
            return 1
        return 0
    DOCS.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
