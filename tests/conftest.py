"""Shared test configuration: deterministic hypothesis runs and seeded RNGs."""

import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Shared test helpers (tests/numgrad.py) import as top-level modules.
sys.path.insert(0, os.path.dirname(__file__))

# On 2 cores torch's idle OpenMP workers spin after each small op and slow the NumPy
# code under test about 3x; the oracle computes small cases, one thread is plenty.
try:
    import torch
except ImportError:  # the oracle is optional: tests that need it are skipped
    torch = None
if torch is not None:
    torch.set_num_threads(1)

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(autouse=True)
def _seed_everything():
    import ember

    ember.manual_seed(0)
    np.random.seed(0)
    yield


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-programs",
        type=int,
        default=None,
        metavar="N",
        help="number of random op-database programs tests/differential compares with torch "
        "(default 60; also read from the EMBER_FUZZ_PROGRAMS environment variable)",
    )
