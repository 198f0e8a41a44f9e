"""The claims pyproject.toml makes are true: the Python it names can run the code.

``requires-python`` is checked by vermin, which reads every module and names
the oldest Python each construct needs (G3 of issue 15: ``dataclass(slots=True)``
needs 3.10 while we said 3.9).  The dependency floors are installed and tested
by ``.ci/run`` (a second environment with the oldest versions pyproject allows).
"""

from __future__ import annotations

import re
import subprocess
import sys

from helpers import ROOT


VERMIN = [sys.executable, "-c", "import sys, vermin; sys.argv[0] = 'vermin'; sys.exit(vermin.main())"]


def requires_python() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'requires-python\s*=\s*">=(\d+\.\d+)"', text).group(1)


def test_the_code_runs_on_the_oldest_python_it_claims():
    oldest = requires_python()
    result = subprocess.run(
        VERMIN + ["--no-tips", "--violations", f"-t={oldest}-", "src", "tests", "scripts", "benchmarks"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "Target versions not met" not in result.stdout, result.stdout[-2000:]


def test_the_check_can_fail(tmp_path):
    (tmp_path / "new.py").write_text("from dataclasses import dataclass\n\n@dataclass(slots=True)\nclass A:\n    x: int\n")
    result = subprocess.run(VERMIN + ["--no-tips", "--violations", "-t=3.9-", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "3.10" in result.stdout
