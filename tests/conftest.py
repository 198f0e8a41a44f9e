"""Shared fixtures: the real memcached the fidelity tests compare against."""

from __future__ import annotations

import pytest
from memcached_server import require_memcached, server_version

from slabcalc import load_profile


@pytest.fixture(scope="session")
def memcached():
    """Path of a real memcached; skips locally and fails under CI when there is none."""
    return require_memcached()


@pytest.fixture(scope="session")
def profile(memcached):
    """The slabcalc profile of that server's own version."""
    return load_profile(server_version(memcached))
