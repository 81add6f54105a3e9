"""ember._allocator: glibc malloc's thresholds, raised on the first backward pass so that
a training loop reuses its memory instead of faulting in fresh pages each step."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from ember import _allocator

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# A training loop whose arrays (512 KB-2 MB) are over glibc's default mmap threshold; it
# prints the page faults per step after a warm-up, and the resident memory's growth.
LOOP = """
import resource, ember
from ember import _allocator
model = ember.nn.Sequential(ember.nn.Linear(256, 1024), ember.nn.ReLU(), ember.nn.Linear(1024, 256))
opt = ember.optim.SGD(model.parameters(), lr=1e-3)
x = ember.randn(512, 256)
def step():
    opt.zero_grad()
    ((model(x) - x) ** 2).mean().backward()
    opt.step()
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
for _ in range(20):
    step()
faults, rss = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, rss_mb()
for _ in range(100):
    step()
print(_allocator.tune(), (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / 100,
      rss_mb() - rss)
"""


def _run_loop(**env):
    out = subprocess.run(
        [sys.executable, "-c", LOOP],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return out[0] == "True", float(out[1]), float(out[2])


@pytest.mark.skipif(not GLIBC, reason="the settings are glibc's")
def test_a_training_loop_stops_faulting_in_pages():
    for var in _allocator._USER_SETTINGS:
        assert var not in os.environ, "the test environment sets malloc's thresholds itself"
    tuned, faults, grown = _run_loop()
    assert tuned
    assert faults < 20, faults  # (a few, from Python's own small allocations)
    assert abs(grown) < 16, grown  # memory flat over the loop
    untuned, faults_off, _ = _run_loop(EMBER_MALLOC_TUNING="0")
    assert not untuned
    assert faults_off > 10 * max(faults, 1)  # what the tuning saves


def test_the_users_own_settings_win(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000")
    assert "MALLOC_TRIM_THRESHOLD_" in _allocator.why_not()
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1000000")
    assert "GLIBC_TUNABLES" in _allocator.why_not()
    monkeypatch.delenv("GLIBC_TUNABLES")
    monkeypatch.setenv("EMBER_MALLOC_TUNING", "0")
    assert _allocator.why_not() == "EMBER_MALLOC_TUNING=0"


def test_nothing_changed_off_glibc(monkeypatch):
    # (musl, macOS, WebAssembly: as this process would see them)
    monkeypatch.setattr(_allocator.platform, "libc_ver", lambda: ("", ""))
    monkeypatch.setattr(_allocator, "_tuned", [])
    for var in _allocator._USER_SETTINGS + ("EMBER_MALLOC_TUNING",):
        monkeypatch.delenv(var, raising=False)
    assert _allocator.why_not() == "not glibc"
    assert _allocator.tune() is False
