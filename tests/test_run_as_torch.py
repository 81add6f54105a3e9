"""``python -m ember``: PyTorch programs run unchanged, ``torch`` resolving to ember even
with real torch installed. The programs in tests/programs are plain ``import torch`` files;
each runs under real torch and under ``python -m ember`` and prints the same."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # real torch is installed: ember must still win

PROGRAMS = Path(__file__).parent / "programs"


def _run(*args, cwd=None, stdin=None, check=True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore::DeprecationWarning")
    done = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        input=stdin,
        env=env,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("program", ["train_mlp.py", "version_checks.py"])
def test_a_program_prints_what_it_prints_under_torch(program):
    path = str(PROGRAMS / program)
    under_torch = _run(path).stdout
    under_ember = _run("-m", "ember", path).stdout
    assert under_ember == under_torch and under_ember


def test_torch_and_its_submodules_are_embers_modules():
    code = """
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import DataLoader
    from torch import optim
    import functorch
    import ember
    print(torch is ember, nn is ember.nn, F is ember.nn.functional, optim is ember.optim)
    print(DataLoader is ember.utils.data.DataLoader, functorch is ember.func)
    print(sys.modules["torch.nn.functional"] is F, sys.argv[1:])
    try:
        import torch._no_such_module
    except ModuleNotFoundError as e:
        print(e)
    """
    out = _run("-m", "ember", "-c", textwrap.dedent(code), "a", "--b").stdout.splitlines()
    assert out == [
        "True True True True",
        "True True",
        "True ['a', '--b']",
        "No module named 'torch._no_such_module'",
    ]


def test_a_module_stdin_and_exit_status(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(
        "import sys, torch\n"
        "print(__name__, torch.__name__, torch.ones(2).sum().item(), sys.argv[1:])\n"
    )
    out = _run("-m", "ember", "-m", "pkg.train", "x", cwd=tmp_path).stdout
    assert out == "__main__ ember 2.0 ['x']\n"
    out = _run("-m", "ember", "-", stdin="import torch; print(torch.zeros(1).dtype)\n").stdout
    assert out == "torch.float32\n"
    status = _run("-m", "ember", "-c", "import sys; sys.exit(3)", check=False)
    assert status.returncode == 3
    failed = _run("-m", "ember", "-c", "import torch; torch.ones(2) @ torch.ones(3)", check=False)
    assert failed.returncode == 1
    assert "RuntimeError: inconsistent tensor size" in failed.stderr
    assert "usage: python -m ember" in _run("-m", "ember", "--help").stdout


def test_a_script_sees_its_folder_and_pickles_its_classes(tmp_path):
    (tmp_path / "helper.py").write_text("SCALE = 3\n")
    (tmp_path / "main.py").write_text(
        "import pickle, torch, helper\n"
        "class Box:\n"
        "    def __init__(self, t):\n"
        "        self.t = t\n"
        "b = pickle.loads(pickle.dumps(Box(torch.ones(2) * helper.SCALE)))\n"
        "print(type(b).__module__, b.t.tolist())\n"
    )
    out = _run("-m", "ember", str(tmp_path / "main.py")).stdout
    assert out == "__main__ [3.0, 3.0]\n"


def test_pickles_that_name_torch_resolve_to_ember():
    import pickle

    objects = (torch.nn.Linear, torch.float32, torch.Size([2, 3]), torch.nn.functional.relu)
    data = pickle.dumps(objects)
    code = f"""
    import pickle, ember
    linear, dtype, size, relu = pickle.loads({data!r})
    print(linear is ember.nn.Linear, dtype is ember.float32, size == ember.Size([2, 3]))
    print(type(size).__name__, relu is ember.nn.functional.relu)
    """
    out = _run("-m", "ember", "-c", textwrap.dedent(code)).stdout.splitlines()
    assert out == ["True True True", "Size True"]


def test_as_torch_inside_a_running_interpreter():
    code = """
    import warnings
    import torch as real
    import ember
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.as_torch()
    import torch
    import torch.nn as nn
    print(real is not ember, torch is ember, nn is ember.nn, len(caught))
    print(str(caught[0].message).startswith("ember.as_torch(): torch was imported before"))
    ember.as_torch()  # again: nothing to do
    """
    out = _run("-c", textwrap.dedent(code)).stdout.splitlines()
    assert out == ["True True True 1", "True"]


def test_version_is_torchs_with_embers_release_as_local_label():
    from packaging.version import Version

    import ember

    v = Version(str(ember.__version__))
    assert v.release == (2, 13, 0) and v.local == f"ember.{ember.version.release}"
    assert ember.__version__ >= "2.0" and ember.__version__ >= (2, 13) and ember.__version__ < (3,)
    assert ember.version.__version__ is ember.__version__


def test_libraries_see_a_torch_distribution_of_embers_version():
    """transformers, diffusers, accelerate and peft read torch's version from the installed
    package's metadata: while ember is torch, that is ember's (found before real torch's)."""
    code = """
    import importlib.metadata as md
    import ember
    before = md.version("torch")
    ember.as_torch()
    dist = md.distribution("torch")
    names = [d.metadata["Name"] for d in md.distributions() if d.metadata["Name"] == "torch"]
    print(before.startswith("2.13.0+cpu"), md.version("torch") == str(ember.__version__))
    print(dist.metadata["Name"], names[0] == "torch", dist.read_text("RECORD"))
    """
    out = _run("-c", textwrap.dedent(code)).stdout.splitlines()
    assert out == ["True True", "torch True None"]
