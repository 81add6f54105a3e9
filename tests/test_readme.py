"""The README's snippets and commands run as written.

Python blocks run as they are; a block whose first line is a file name comment (``# fit.py``)
is saved under that name for the commands. Each line of a ``sh`` block runs (its ``#``
comment dropped) in a folder holding those files, with three adaptations that keep the check
inside the suite: ``make X`` runs as ``make -n X`` (the target exists and what it would do
parses), ``pip install`` with ``--dry-run`` and no downloads (the requirement and its extras
resolve against this checkout), and ``pytest`` with ``--collect-only`` (the selection is
valid and not empty; the suite runs those tests itself).
"""

from __future__ import annotations

import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)
SH_LINES = [
    line.split("  #")[0].strip()
    for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S)
    for line in block.splitlines()
    if line.strip() and not line.strip().startswith("#")
]
FILES = {m.group(1): code for code in PYTHON_BLOCKS if (m := re.match(r"# ([\w.-]+\.py)\n", code))}


@pytest.mark.parametrize(
    "code", PYTHON_BLOCKS, ids=[f"block{i}" for i in range(len(PYTHON_BLOCKS))]
)
def test_readme_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example may write a checkpoint
    if re.match(r"# [\w.-]+\.py\n", code) and "import torch" in code:
        code = code.replace("import torch", "import ember as torch", 1)  # a PyTorch program
        code = code.replace("from torch import", "from ember import")
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})


def _adapted(argv: list[str]) -> list[str]:
    """The command as the test runs it (see the module docstring)."""
    if argv[0] == "make":
        return ["make", "-n", *argv[1:]]
    if argv[:2] == ["pip", "install"]:
        return [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                "--no-build-isolation", "--quiet", *argv[2:]]  # fmt: skip
    if argv[0] == "python" or argv[0].endswith("/python"):
        argv = [sys.executable, *argv[1:]]
        if argv[1:3] == ["-m", "pytest"]:
            argv += ["--collect-only", "-p", "no:cacheprovider"]
        return argv
    raise AssertionError(f"the README runs a command this test does not know: {argv}")


@pytest.mark.parametrize("line", SH_LINES)
def test_readme_command_runs(line, tmp_path):
    for name, code in FILES.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    argv = _adapted(shlex.split(line))
    # Commands on the checkout's files run in it; the README's own files are in tmp_path.
    uses_files = any(name in line for name in FILES)
    cwd = tmp_path if uses_files else ROOT
    if uses_files:
        argv = [str(tmp_path / a) if a in FILES else a for a in argv]
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{line}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    if "pytest" in argv and "--collect-only" in argv:
        # -q prints "file: count" per file; a selection of nothing prints no such line
        selected = re.search(r": [1-9]\d*$|[1-9]\d* tests? collected", result.stdout, re.M)
        assert selected, result.stdout


def test_readme_names_the_two_commands():
    assert "make demo" in TEXT and "make test" in TEXT
    assert any(line.startswith("python -m ember") for line in SH_LINES)


def test_readme_extras_are_the_projects():
    """The README's extras table lists exactly the extras pyproject.toml declares."""
    import tomllib

    declared = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    listed = set(re.findall(r"^\| `([\w-]+)` \|", TEXT, re.M))
    assert listed == declared
