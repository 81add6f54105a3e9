"""Libraries built on torch, run with ember as torch (issue 27): each program in
tests/ecosystem/programs builds a tiny-config model from a library (no downloads), runs
first under real torch, which saves the weights, then under ``python -m ember``, which loads
them; outputs, gradients, an optimizer step and generated tokens must match torch's.

A program names the packages it needs on a ``# requires:`` line; `make test` installs them
(the ``ecosystem`` extra), so none skip there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # the oracle: the first run of each program

PROGRAMS = Path(__file__).parent / "programs"
PROGRAM_FILES = sorted(p.name for p in PROGRAMS.glob("*.py") if p.name != "oracle_io.py")


def _requirements(path: Path) -> list[str]:
    found = re.search(r"^# requires: (.+)$", path.read_text(), re.MULTILINE)
    return found.group(1).split() if found else []


def _run(args: list[str], workdir: Path) -> None:
    env = dict(
        os.environ,
        PYTHONWARNINGS="ignore",
        HF_HUB_OFFLINE="1",  # nothing is downloaded: every model is built from a config
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(workdir / "hf-home"),
        TOKENIZERS_PARALLELISM="false",
        OMP_NUM_THREADS="1",
    )
    done = subprocess.run(
        [sys.executable, *args, str(workdir)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=workdir,
        env=env,
    )
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stderr[-6000:]}"


def _load(workdir: Path, runner: str) -> tuple[dict, dict]:
    with np.load(workdir / f"{runner}.npz") as data:
        results = {name: data[name] for name in data.files}
    return results, json.loads((workdir / f"{runner}-tolerances.json").read_text())


@pytest.mark.parametrize("program", PROGRAM_FILES)
def test_library_program_matches_torch(program, tmp_path):
    path = PROGRAMS / program
    for package in _requirements(path):
        # torchvision and timm live in <venv>/vision-packages (the Makefile says why)
        if not (Path(sys.prefix) / "vision-packages" / package).is_dir():
            pytest.importorskip(package)
    _run([str(path)], tmp_path)
    _run(["-m", "ember", str(path)], tmp_path)
    expected, tolerances = _load(tmp_path, "torch")
    got, _ = _load(tmp_path, "ember")
    assert sorted(got) == sorted(expected)
    assert expected, f"{program} recorded nothing"
    for name, want in expected.items():
        have = got[name]
        assert have.shape == want.shape, name
        if want.dtype.kind in "iub" or have.dtype.kind in "iub":
            np.testing.assert_array_equal(have, want, err_msg=name)
        else:
            rtol, atol = tolerances[name]
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=name)
