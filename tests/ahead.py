"""Long computations begun when the test run begins, on the machine's other core, checked at its end.

Replaying five million operations in full takes a core two minutes; the
rest of the suite keeps one core busy for six and leaves the other mostly
idle (the servers it starts wait on sockets).  A test marked
``@pytest.mark.ahead("module:function")`` has ``function()`` (a function
of that module, in ``tests/`` or a folder of it, returning what JSON can hold) run in a child
process as soon as collection ends (``conftest.py``); the test itself runs
last and reads the outcome with :func:`result`.  A job nobody asked for is
never started; one still running when the session ends is killed.

A job can also be begun before pytest: ``.ci/run`` starts ``python tests/ahead.py
module:function DIR`` while the floors' tests run (their pytest leaves the other core idle) and
sets ``SLABCALC_AHEAD_DIR=DIR`` for the suite, which then waits for ``DIR/module:function.json``
(or its ``.err``) instead of beginning the job again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

TESTS = os.path.dirname(os.path.abspath(__file__))


def search_path() -> list[str]:
    """``tests/`` and each folder of test files in it (``tests/model/``...): a test module is imported
    by its file's name wherever it lives, as pytest's default import mode names it, so a job's module
    (and a test module's import of another's pieces) is found whatever ran first."""
    folders = [os.path.join(TESTS, name) for name in sorted(os.listdir(TESTS))]
    return [TESTS] + [folder for folder in folders
                      if os.path.isdir(folder) and any(n.startswith("test_") for n in os.listdir(folder))]


def add_search_path() -> None:
    """Put :func:`search_path` on ``sys.path`` (after what is there)."""
    sys.path.extend(p for p in search_path() if p not in sys.path)

_jobs: dict[str, subprocess.Popen] = {}
_results: dict[str, object] = {}


def _begun_before(target: str) -> str | None:
    """The file stem of ``target``'s job begun before pytest (``SLABCALC_AHEAD_DIR``), if one was."""
    folder = os.environ.get("SLABCALC_AHEAD_DIR")
    if not folder:
        return None
    stem = os.path.join(folder, target)
    return stem if any(os.path.exists(stem + end) for end in (".running", ".json", ".err")) else None


def _wait_before(target: str, stem: str, limit: float = 1800.0):
    """The outcome of a job begun before pytest, once it has written it."""
    deadline = time.monotonic() + limit
    while os.path.exists(stem + ".running") and time.monotonic() < deadline:
        time.sleep(0.5)
    if os.path.exists(stem + ".json"):
        with open(stem + ".json") as f:
            return json.load(f)
    error = "it wrote nothing"
    if os.path.exists(stem + ".err"):
        with open(stem + ".err") as f:
            error = f.read()
    raise AssertionError(f"{target}, begun before pytest, failed:\n{error[-3000:]}")


def start(target: str) -> None:
    """Begin ``module:function`` in a child process (once).  With ``SLABCALC_AHEAD_DIR`` set (by
    ``.ci/run``, or by conftest.py for pytest-xdist's workers, which all collect every test) the job is
    begun by whichever process first creates its ``.running`` file, and leaves its outcome there."""
    if target in _jobs or _begun_before(target):
        return
    folder = os.environ.get("SLABCALC_AHEAD_DIR")
    if folder:
        try:
            os.close(os.open(os.path.join(folder, target + ".running"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return                                  # another worker began it
        subprocess.Popen([sys.executable, os.path.abspath(__file__), target, folder], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        return
    module, function = target.split(":")
    code = (f"import json, sys; sys.path[:0] = {search_path()!r}; from {module} import {function}; "
            f"print(json.dumps({function}()))")
    _jobs[target] = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def result(target: str):
    """What ``module:function`` returned (waiting for it; begun now if collection did not)."""
    stem = _begun_before(target) if target not in _results else None
    if stem is not None:
        _results[target] = _wait_before(target, stem)
    if target not in _results:
        start(target)
        job = _jobs[target]
        out, err = job.communicate()
        if job.returncode != 0:
            raise AssertionError(f"{target} failed (exit {job.returncode}):\n{err[-3000:]}")
        _results[target] = json.loads(out.strip().splitlines()[-1])
    return _results[target]


def stop_all(folder: str | None = None) -> None:
    """Kill the jobs still running (a run ended early, or their tests were not reached): this process's
    children, and with ``folder`` the jobs begun there (their pids are in their ``.running`` files)."""
    for job in _jobs.values():
        if job.poll() is None:
            job.kill()
            job.communicate()
    for name in os.listdir(folder) if folder else ():
        if name.endswith(".running"):
            try:
                with open(os.path.join(folder, name)) as f:
                    os.kill(int(f.read() or 0), 9)
            except (OSError, ValueError):
                pass                                # ended meanwhile, or not yet written


def main(target: str, folder: str) -> None:
    """Run ``target`` now and leave its outcome in ``folder`` for a later pytest (see above)."""
    stem = os.path.join(folder, target)
    with open(stem + ".running", "w") as f:
        f.write(str(os.getpid()))                  # conftest.py kills it if the run ends first
    try:
        module, function = target.split(":")
        sys.path[:0] = search_path()
        outcome = getattr(__import__(module), function)()
        with open(stem + ".tmp", "w") as f:
            json.dump(outcome, f)
        os.replace(stem + ".tmp", stem + ".json")
    except BaseException:
        import traceback

        with open(stem + ".err", "w") as f:
            f.write(traceback.format_exc())
        raise
    finally:
        os.remove(stem + ".running")


if __name__ == "__main__":
    main(*sys.argv[1:3])
