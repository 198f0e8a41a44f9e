"""Long computations begun when the test run begins, on the machine's other core, checked at its end.

Replaying five million operations in full takes a core two minutes; the
rest of the suite keeps one core busy for six and leaves the other mostly
idle (the servers it starts wait on sockets).  A test marked
``@pytest.mark.ahead("module:function")`` has ``function()`` (a function
of that module, in ``tests/``, returning what JSON can hold) run in a child
process as soon as collection ends (``conftest.py``); the test itself runs
last and reads the outcome with :func:`result`.  A job nobody asked for is
never started; one still running when the session ends is killed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))

_jobs: dict[str, subprocess.Popen] = {}
_results: dict[str, object] = {}


def start(target: str) -> None:
    """Begin ``module:function`` in a child process (once)."""
    if target in _jobs:
        return
    module, function = target.split(":")
    code = (f"import json, sys; sys.path.insert(0, {TESTS!r}); from {module} import {function}; "
            f"print(json.dumps({function}()))")
    _jobs[target] = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def result(target: str):
    """What ``module:function`` returned (waiting for it; begun now if collection did not)."""
    if target not in _results:
        start(target)
        job = _jobs[target]
        out, err = job.communicate()
        if job.returncode != 0:
            raise AssertionError(f"{target} failed (exit {job.returncode}):\n{err[-3000:]}")
        _results[target] = json.loads(out.strip().splitlines()[-1])
    return _results[target]


def stop_all() -> None:
    """Kill the jobs still running (a run ended early, or their tests were not reached)."""
    for job in _jobs.values():
        if job.poll() is None:
            job.kill()
            job.communicate()
