"""Every program in examples/ runs with short settings, has ``--help``, is listed in
examples/README.md, and names the extra to install when an optional package is missing.

The short settings are the documentation build's (``EXAMPLES`` in tools/mkdocs_hooks.py, which
also appends ``--out-dir`` when ``--help`` mentions it); examples/README.md lists them. Each run
is a subprocess in pytest's ``tmp_path``, so nothing is written into the checkout. A new
example fails ``test_every_example_is_listed_and_tested`` until it has an entry in ``SHORT``
and a line in the README.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
README = EXAMPLES / "README.md"
INSTALL = 'pip install -e ".[{}]"'  # ember is installed from its clone, not from PyPI


@dataclass
class Short:
    args: list[str]  # the short settings (the documentation build's)
    expect: list[str]  # regular expressions the output must match (re.MULTILINE)
    files: list[str] | None = None  # what it writes to --out-dir (None: it takes no --out-dir)


SHORT = {
    "digits": Short(
        ["--epochs", "3", "--no-progress"],
        [
            r"^epoch  3/3  loss \d\.\d{4}  train acc  *\d+\.\d\d%",
            r"^checkpoint: .*digits_cnn\.safetensors \(reloaded: test accuracy \d+\.\d\d%\)$",
            r"^final test accuracy \d+\.\d\d% in \d+\.\d s$",
        ],
        ["digits_cnn.safetensors", "digits_curves.svg", "summary.json"],
    ),
    "charlm": Short(
        ["--steps", "30", "--eval-every", "10", "--sample-len", "120", "--no-progress"],
        [
            r"^unigram baseline: \d\.\d{4} nats/char",
            r"^step   30  train \d\.\d{4}  val \d\.\d{4}",
            r"^--- sample \(temperature 0\.8\) ---\ndef ",
            r"^final val loss \d\.\d{4} \(train \d\.\d{4}\) vs unigram baseline \d\.\d{4}: ",
        ],
        ["loss_curve.svg", "summary.json"],
    ),
    "gcn": Short(
        ["--epochs", "50"],
        [
            r"^GCN: 2708 nodes, \d+ edges, 1433 features, 7 classes; 140 training, 500 "
            r"validation, 1000 test nodes$",
            r"^epoch  50  loss \d\.\d{4}  train acc",
            r"^GCN: test accuracy \d+\.\d% at epoch \d+ \(best validation \d+\.\d%; last epoch ",
        ],
    ),
    "graphs": Short(
        [],
        [
            r"^== 1\. the recorded graph",
            r"^dc/da = \[2\.0, 2\.0\]  dc/db = \[1\.0, 1\.0\]$",
            r"^== 2\. the explicit graph",
            r"^run it: c\(a=1, b=1\) = \[3\.0, 3\.0\]$",
            r"^== 3\. compiled",
            r"^y = tensor\(28\., grad_fn=<CompiledFunctionBackward>\)  "
            r"x\.grad = tensor\(\[ 0\.,  4\.,  8\., 12\.\]\)$",
            r"^eager .* 300 ops forward\+backward: \d+\.\d\d ms$",
            r"^compiled  300 ops forward\+backward: \d+\.\d\d ms$",
        ],
    ),
}
# Each optional package an example imports (directly, or through ember.utils.tensorboard and
# ember.distributed) and the extra of pyproject.toml that installs it.
EXTRA = {
    "tqdm": ("tqdm", "demo"),
    "tensorboard": ("tensorboard", "tensorboard"),
    "mpi4py": ("mpi4py", "distributed"),
}
# (example, the blocked module, extra arguments): the program ends at once, naming the extra.
MISSING = [
    ("digits", "tensorboard", ["--tensorboard", "tb"]),
    ("digits", "mpi4py", ["--distributed"]),
]
# (example, arguments): tqdm is optional there, the program runs without a bar.
WITHOUT_TQDM = [
    ("digits", ["--epochs", "1"]),
    ("charlm", ["--steps", "2", "--eval-every", "1", "--eval-batches", "1", "--sample-len", "4"]),
]
# Importing a blocked module raises ImportError, as when it is not installed.
BLOCKING = (
    "import os, runpy, sys; sys.modules[{module!r}] = None; sys.argv = {argv!r}; "
    "sys.path.insert(0, os.path.dirname(sys.argv[0]));"  # as `python script.py` does
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def _short_command(name: str) -> str:
    return " ".join(["python", f"examples/{name}.py", *SHORT[name].args])


def test_every_example_is_listed_and_tested():
    # _common.py is what the programs share, not a program
    found = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.stem.startswith("_"))
    assert found == sorted(SHORT), "every examples/*.py needs its short run in SHORT"
    readme = README.read_text(encoding="utf-8")
    for name in found:
        assert f"examples/{name}.py" in readme, f"examples/README.md does not list {name}.py"
        assert _short_command(name) in readme, f"README lacks the short run of {name}.py"


def test_short_settings_are_the_documentation_builds():
    """tools/mkdocs_hooks.py runs the examples with these settings: they must keep working."""
    hooks = ROOT / "tools" / "mkdocs_hooks.py"
    if not hooks.exists():
        pytest.skip("no tools/mkdocs_hooks.py")
    for node in ast.parse(hooks.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "EXAMPLES"
        ]:
            built = ast.literal_eval(node.value)
            break
    else:
        pytest.skip("tools/mkdocs_hooks.py has no EXAMPLES")
    assert built == {name: short.args for name, short in SHORT.items()}


def test_optional_imports_name_their_extra():
    """Every package an example imports is ember's, NumPy, the standard library's, or one of
    EXTRA, with the test of its missing-package message (tqdm: of running without it)."""
    tested = {module for _, module, _ in MISSING} | {"tqdm"}
    for path in sorted(EXAMPLES.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for top in {name.split(".")[0] for name in names}:
                if top in sys.stdlib_module_names or top in (
                    "ember",
                    "numpy",
                    "__future__",
                    "_common",
                ):
                    continue
                assert top in EXTRA, f"{path.name} imports {top}: add it to EXTRA and MISSING"
                assert top in tested, f"{path.name}: no test of running without {top}"
                if top != "tqdm":
                    assert any(n == path.stem and m == top for n, m, _ in MISSING), (
                        f"{path.name} imports {top}: add its missing-package test to MISSING"
                    )


@pytest.mark.parametrize("name", sorted(SHORT))
def test_help(name, tmp_path):
    proc = _run([str(EXAMPLES / f"{name}.py"), "--help"], tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"usage: {name}.py [-h]")
    # the description is the docstring's first paragraph (graphs.py: all of it)
    source = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
    first_line = ast.get_docstring(ast.parse(source)).split("\n")[0]
    assert " ".join(first_line.split()[:6]) in " ".join(out.split())
    # every option a run uses is documented; --out-dir only where the program takes it (the
    # documentation build appends it when --help mentions it)
    for option in SHORT[name].args:
        if option.startswith("--"):
            assert option in out
    assert ("--out-dir" in out) == (SHORT[name].files is not None)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", sorted(SHORT))
def test_unknown_flags_are_rejected(name, tmp_path):
    proc = _run([str(EXAMPLES / f"{name}.py"), "--no-such-flag"], tmp_path, timeout=60)
    assert proc.returncode == 2
    assert "error: unrecognized arguments: --no-such-flag" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("name", sorted(SHORT))
def test_short_run(name, tmp_path):
    short = SHORT[name]
    args = [str(EXAMPLES / f"{name}.py"), *short.args]
    out_dir = tmp_path / "out"
    if short.files is not None:
        args += ["--out-dir", str(out_dir)]
    work = tmp_path / "cwd"
    work.mkdir()
    proc = _run(args, work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for pattern in short.expect:
        assert re.search(pattern, proc.stdout, re.MULTILINE), (pattern, proc.stdout)
    assert list(work.iterdir()) == [], "writes only into --out-dir"
    if short.files is None:
        return
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(short.files)
    for svg in out_dir.glob("*.svg"):
        assert svg.read_text().startswith("<svg ") and "<polyline " in svg.read_text()
    summary = json.loads((out_dir / "summary.json").read_text())
    if name == "digits":
        assert summary["epochs"] == 3
        assert f"final test accuracy {summary['test_accuracy'] * 100:.2f}%" in proc.stdout
        assert summary["test_accuracy"] > 0.5  # ten classes: chance is 0.1
    elif name == "charlm":
        assert summary["steps"] == 30 and list(summary["val_curve"]) == ["0", "10", "20", "30"]
        assert summary["final_val_loss"] < summary["first_val_loss"] - 0.5
        assert len(summary["sample"]) == len("def ") + 120


@pytest.mark.parametrize(
    ("name", "module", "extra_args"), MISSING, ids=[f"{n}-{m}" for n, m, _ in MISSING]
)
def test_missing_package_names_the_extra(name, module, extra_args, tmp_path):
    argv = [str(EXAMPLES / f"{name}.py"), *extra_args, "--out-dir", str(tmp_path / "out")]
    proc = _run(["-c", BLOCKING.format(module=module, argv=argv)], tmp_path, timeout=60)
    package, extra = EXTRA[module]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == f"examples/{name}.py needs {package}: {INSTALL.format(extra)}\n"
    assert proc.stdout == ""  # it ends before any work
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("name", "args"), WITHOUT_TQDM, ids=[n for n, _ in WITHOUT_TQDM])
def test_runs_without_tqdm(name, args, tmp_path):
    argv = [str(EXAMPLES / f"{name}.py"), *args, "--out-dir", str(tmp_path)]
    proc = _run(["-c", BLOCKING.format(module="tqdm", argv=argv)], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "summary.json").exists()
