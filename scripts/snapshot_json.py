#!/usr/bin/env python3
"""Every command's ``--format json`` on the bundled examples, into one directory, to compare two trees.

    python scripts/snapshot_json.py /tmp/before      # on the old tree
    python scripts/snapshot_json.py /tmp/after       # on the new one
    diff -r /tmp/before /tmp/after                    # equal byte for byte, or a rename made on purpose

Used to prove a refactoring changed no output (issue 15).
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from slabcalc.cli import cli  # noqa: E402

EX = "examples/"
COMMANDS = {
    "classes": ["classes"],
    "classes-f105": ["classes", "-n", "5", "-f", "1.05"],
    "classes-1.4.24": ["classes", "--profile", "1.4.24"],
    "classes-jemalloc": ["classes", "--allocator", "jemalloc-5"],
    "place": ["place", "--key", "16", "--value", "16", "--no-cas"],
    "place-chunked-m": ["place", "--profile", "1.6.18", "--key", "183", "--value", "877228", "-m", "16"],
    "report-items": ["report", EX + "items.csv"],
    "report-items-m-vs": ["report", EX + "items.csv", "-m", "64", "--vs", "-m 128", "--vs", "-f 1.1"],
    "report-histogram": ["report", EX + "histogram.csv"],
    "report-values": ["report", EX + "value_sizes.txt", "--key", "16"],
    "report-stats-sizes": ["report", EX + "stats_sizes.txt"],
    "report-metadump-groups": ["report", EX + "metadump.txt", "--group-by", "prefix"],
    "report-plan": ["report", EX + "capacity-mix.csv", "--node-ram", "8g", "--headroom", "10%", "--overhead", "5%"],
    "report-nodes": ["report", EX + "capacity-mix.csv", "--nodes", "6", "--spare-nodes", "1", "--fill", "80%"],
    "stats-calcified": ["stats", EX + "stats-calcified.txt"],
    "stats-interval": ["stats", EX + "node-evicting-2.txt", "--since", EX + "node-evicting-1.txt"],
    "compare-items": ["compare", EX + "items.csv"],
    "optimize-items": ["optimize", EX + "items.csv"],
    "optimize-bimodal-m": ["optimize", EX + "bimodal.csv", "-m", "256", "--max-classes", "4"],
    "optimize-validate": ["optimize", EX + "bimodal.csv", "--validate", "0.25", "--seed", "3"],
    "optimize-hits": ["optimize", EX + "hot-cold-items.csv", "-m", "6", "--profile", "1.6.18", "--workload",
                      EX + "hot-cold-ops.csv"],
    "simulate-automove": ["simulate", EX + "automove.csv", "--profile", "1.6.18", "-m", "16"],
    "simulate-calcification": ["simulate", EX + "calcification.csv", "-m", "4", "--every", "10"],
    "profiles": ["profiles"],
}


def main(out: str) -> int:
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for name, args in COMMANDS.items():
        result = CliRunner().invoke(cli, [*args, "--format", "json"], prog_name="slabcalc")
        (target / f"{name}.json").write_text(result.stdout)
        (target / f"{name}.exit").write_text(f"{result.exit_code}\n")
    print(f"{len(COMMANDS)} outputs in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
