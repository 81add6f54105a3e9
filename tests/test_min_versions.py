"""The minimum versions pyproject.toml declares are the ones CI tests: each ``>=`` bound of a
runtime or build dependency equals its pin in ``.ci/min-versions.txt``, which .ci/run installs
into a second venv on the oldest Python that ``requires-python`` allows."""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

try:
    import tomllib
except ImportError:  # Python 3.10: pytest depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _declared() -> dict:
    """{name: the minimum} of every runtime and build dependency of pyproject.toml."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        meta = tomllib.load(f)
    minimums = {}
    for line in meta["project"]["dependencies"] + meta["build-system"]["requires"]:
        req = Requirement(line)
        lower = [s.version for s in req.specifier if s.operator == ">="]
        assert len(lower) == 1, f"{line!r}: a dependency declares one '>=' minimum"
        minimums[canonicalize_name(req.name)] = Version(lower[0])
    return minimums


def _pinned() -> dict:
    pins = {}
    for line in (ROOT / ".ci" / "min-versions.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"{line!r}: pin an exact version"
            pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def test_declared_minimums_are_the_pinned_ones():
    assert _declared() == _pinned()
