"""Shared fixtures: the real memcached the fidelity tests compare against."""

from __future__ import annotations

import os
import shutil
import tempfile

import ahead
import pytest
from hypothesis import HealthCheck, settings as _hypothesis
from memcached_server import require_memcached, server_version

from slabcalc import load_profile

# The test files live in folders that mirror the package (tests/model/, tests/engines/...); the helper
# modules (helpers.py, memcached_server.py...) here in tests/.  Every folder is on sys.path, so either is
# imported by its name from anywhere.
ahead.add_search_path()

# Tables fit the terminal's width (cli/output.py width): the expected outputs are those of a pipe, 120
# columns, whatever the shell or pytest-xdist's workers set.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

# Property tests under CI: the same examples on every run (a CI failure is one anyone can run again, and
# no run lands or fails on the draw), no "too slow" health check and no deadline -- the floors' run is
# niced beside the suite on 2 cores, so how fast an example runs says nothing of the code (a floors' run
# failed on one example's first call, 381 ms against the 200 ms deadline, 0.5 ms the next).  Locally hypothesis
# keeps drawing new examples.
_hypothesis.register_profile("ci", derandomize=True, database=None, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])
# the floors' run (.ci/run: --hypothesis-profile floors): the oldest versions held to the same properties
# on a fifth of the examples, the suite beside it drawing them all
_hypothesis.register_profile("floors", parent=_hypothesis.get_profile("ci"), max_examples=20)
if os.environ.get("CI"):
    _hypothesis.load_profile("ci")


@pytest.fixture(scope="session")
def memcached():
    """Path of a real memcached; skips locally and fails under CI when there is none."""
    return require_memcached()


@pytest.fixture(scope="session")
def profile(memcached):
    """The slabcalc profile of that server's own version."""
    return load_profile(server_version(memcached))


@pytest.fixture
def server_profile(memcached, profile):
    """The server's profile, for workloads sized for 1.6.18: another release skips."""
    if profile.release != "1.6.18":
        pytest.skip(f"the workloads are sized for 1.6.18, not {profile.release}")
    return profile


# -- long computations begun ahead (tests/ahead.py) ----------------------------------------

def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker a core, and two more.  The suite's workers wait on sockets (real servers)
    and on the servers' clocks (paced runs) about 40 % of their time (ps at -n 2 on 2 cores: each
    worker 60 % busy, load 1.6); with one more the 2 cores were still 1.73 busy on average over a CI
    run (two workers waiting at once), so two more keep them busy."""
    return (os.cpu_count() or 1) + 2


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run first (none is the tail the other workers wait on), those marked ``ahead``
    last (their job has had the whole run to finish).  A test that starts or reads a real memcached
    (through the ``memcached`` fixture, however indirectly) is marked ``server``: the floors' run
    (.ci/run), which is for the tests that need no server, leaves it out."""
    for item in items:
        if "memcached" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.server)
    # pytest-xdist's worksteal hands the tests out in this order
    items.sort(key=lambda item: (item.get_closest_marker("ahead") is not None,
                                 item.get_closest_marker("slow") is None))


def pytest_collection_finish(session):
    """Begin the jobs of the selected tests marked ``ahead`` (the deselected ones' are not begun)."""
    if session.config.option.collectonly:
        return
    for item in session.items:
        mark = item.get_closest_marker("ahead")
        if mark is not None:
            ahead.start(mark.args[0])


def pytest_configure(config):
    """Under pytest-xdist every worker collects every test: the jobs begun ahead go to one folder shared
    by the workers (made here, in the controller, before they start), so each is begun once."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput") \
            and not os.environ.get("SLABCALC_AHEAD_DIR"):
        config._ahead_dir = os.environ["SLABCALC_AHEAD_DIR"] = tempfile.mkdtemp(prefix="slabcalc-ahead-")


def pytest_sessionfinish(session):
    ahead.stop_all()


def pytest_unconfigure(config):
    folder = getattr(config, "_ahead_dir", None)
    if folder:
        ahead.stop_all(folder)
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ["SLABCALC_AHEAD_DIR"]
