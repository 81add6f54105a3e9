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
except ImportError as e:  # tests that need the oracle skip (unless it is required)
    torch = None
    _oracle_missing = f"{type(e).__name__}: {e}"
if torch is not None:
    torch.set_num_threads(1)

# Without torch 43 test files skip whole or in part, and a run that skipped them is as green as
# one that ran them. `make test` (and so CI) sets EMBER_REQUIRE_ORACLE=1: there a missing
# oracle ends the run at once, failed. The minimum-versions run has no torch and leaves it
# unset: only the torch comparisons skip there.
REQUIRE_ORACLE = os.environ.get("EMBER_REQUIRE_ORACLE", "") not in ("", "0")


def pytest_sessionstart(session):
    if REQUIRE_ORACLE and torch is None:
        pytest.exit(
            "EMBER_REQUIRE_ORACLE is set but the torch oracle cannot be imported "
            f"({_oracle_missing}); install the `oracle` extra (pip install -e '.[oracle]', "
            "which `make test` does) or unset EMBER_REQUIRE_ORACLE to skip the torch comparisons",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )


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
