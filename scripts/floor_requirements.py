#!/usr/bin/env python3
"""Print the oldest versions pyproject.toml allows, pinned, one a line (for pip install -r).

.ci/run installs them in a second environment and runs the tests there, so the floors
pyproject claims (dependencies and the test extra) are tested, not guessed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def floors() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text()
    # the quoted specs of `dependencies = [...]` and of the test extra `test = [...]` (comments dropped)
    blocks = [re.search(rf"^{name} = \[(.*?)\]", text, flags=re.S | re.M).group(1)
              for name in ("dependencies", "test")]
    wanted = [spec for block in blocks
              for spec in re.findall(r'"([^"]+)"', re.sub(r"#.*", "", block))]
    pins = []
    for spec in wanted:
        match = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*", spec)
        if match is None:
            raise SystemExit(f"pyproject.toml: {spec!r} has no plain >= floor")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    print("\n".join(floors()))
    sys.exit(0)
