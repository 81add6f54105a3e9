"""ember in WebAssembly: its wheel installed into Pyodide (CPython compiled to WebAssembly,
run by Node), the seed tutorials' replay, the op database's generic checks, the autograd
engine's and the printing tests run there by pytest, and every op-database entry's values
and gradients compared with the same computation under CPython.

Needs Node, the local Pyodide distribution (``$EMBER_PYODIDE``, or a ``shared/pyodide``
folder above the checkout or above the local checkout it was cloned from) and pure-Python
wheels of pytest and its dependencies (``.venv/wasm-wheels``, which ``make test``
downloads). Without them the test skips, or
fails when ``EMBER_REQUIRE_ORACLE`` is set (``make test``): a green run has run it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from wasm_checks import DESELECTED, opdb_values

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
REQUIRED = os.environ.get("EMBER_REQUIRE_ORACLE", "") not in ("", "0")


def _missing(what: str):
    message = f"the WebAssembly run needs {what}"
    if REQUIRED:
        pytest.fail(message + " (EMBER_REQUIRE_ORACLE is set: `make test` provides it)")
    pytest.skip(message)


def _pyodide_dir() -> Path | None:
    """tools/build_playground.py's lookup (shared with the browser test)."""
    spec = importlib.util.spec_from_file_location(
        "build_playground", ROOT / "tools" / "build_playground.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool.find_pyodide()


def _wasm_wheels() -> list[Path]:
    folder = Path(os.environ.get("EMBER_WASM_WHEELS", Path(sys.prefix) / "wasm-wheels"))
    return sorted(folder.glob("*.whl")) if folder.is_dir() else []


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    pyodide = _pyodide_dir()
    if pyodide is None:
        _missing("the local Pyodide distribution (../shared/pyodide or $EMBER_PYODIDE)")
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        _missing("Node.js (`make test` installs Debian's nodejs)")
    wheels = _wasm_wheels()
    if not any(w.name.startswith("pytest-") for w in wheels):
        _missing("pure-Python wheels of pytest and its dependencies in .venv/wasm-wheels")
    work = tmp_path_factory.mktemp("wasm")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", str(ROOT), "--no-deps",
         "--no-build-isolation", "-w", str(work)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    ember_wheel = next(work.glob("ember-*.whl"))
    out = work / "out"
    out.mkdir()
    done = subprocess.run(
        [node, str(HERE / "run_in_pyodide.js"), str(pyodide), str(HERE / "inside.py"),
         str(ember_wheel), *map(str, wheels), f"{TESTS}=/mnt/tests", f"{out}=/mnt/out"],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    path = out / "report.json"
    assert path.is_file(), f"no report from Pyodide:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    data = json.loads(path.read_text())
    data["returncode"] = done.returncode
    data["stdout"] = done.stdout
    return data


def _summary(request, line: str) -> None:
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)


def test_the_suite_passes_in_webassembly(report, request):
    outcomes = report["outcomes"]
    failed = sorted(k for k, v in outcomes.items() if v == "failed")
    assert not failed, f"{len(failed)} failed in Pyodide:\n" + "\n".join(failed[:30])
    assert report["returncode"] == 0, report["stdout"][-3000:]
    counts = {k: sum(v == k for v in outcomes.values()) for k in ("passed", "skipped")}
    opdb = sum(k.startswith("test_opdb.py") and v == "passed" for k, v in outcomes.items())
    seeds = sum(k.startswith("seeds/") and v == "passed" for k, v in outcomes.items())
    # the torch comparisons skip (no torch in WebAssembly); everything else ran and passed
    assert opdb > 2500 and seeds > 100, counts
    seconds = report["seconds"]
    _summary(
        request,
        f"ember in WebAssembly ({report['platform']}): {counts['passed']} passed "
        f"({seeds} seed replay, {opdb} op database), {counts['skipped']} skipped (torch "
        f"comparisons), {len(DESELECTED)} not runnable there (threads, processes); Pyodide "
        f"loaded in {seconds['load']:.1f} s, tests {seconds['tests']:.0f} s",
    )


def test_values_and_gradients_equal_cpythons(report, request):
    """Every op-database entry gives the same values and gradients in WebAssembly (NumPy
    2.0 on wasm32) as here, up to rounding (other NumPy versions, another libm)."""
    theirs = report["values"]
    ours = opdb_values()
    assert set(theirs) == set(ours)
    differ = []
    for name, mine in ours.items():
        other = theirs[name]
        if "error" in mine or "error" in other:
            if mine.get("error") != other.get("error"):
                differ.append(f"{name}: {mine.get('error')} here, {other.get('error')} there")
            continue
        for kind in ("values", "grads"):
            a_list, b_list = mine[kind], other[kind]
            if len(a_list) != len(b_list):
                differ.append(f"{name}: {len(a_list)} {kind} here, {len(b_list)} there")
                continue
            for k, (a, b) in enumerate(zip(a_list, b_list)):
                if (a is None) != (b is None) or isinstance(a, str) or isinstance(b, str):
                    if a != b:
                        differ.append(f"{name}: {kind}[{k}] differs")
                    continue
                if a is None:
                    continue
                a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
                if a.shape != b.shape or not np.allclose(
                    a, b, rtol=1e-9, atol=1e-12, equal_nan=True
                ):
                    differ.append(f"{name}: {kind}[{k}] differs")
    assert not differ, f"{len(differ)} of {len(ours)} entries:\n" + "\n".join(differ[:40])
    _summary(
        request,
        f"ember in WebAssembly: {len(ours)} op-database entries' values and "
        "gradients equal CPython's",
    )


def test_what_webassembly_lacks_is_handled(report):
    """No C compiler: compile runs its NumPy code and says why; no processes: DataLoader
    loads in the main process with a warning; no ml_dtypes: bfloat16's error names it;
    ``import ember`` under 3 s."""
    seen = report["behaviour"]
    assert seen["import_seconds"] < 3.0
    assert "no C compiler" in seen["compile_explain"] and seen["compile_grad_ok"]
    assert seen["loader_batches"] == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
    assert any("loading in the main process" in w for w in seen["loader_warnings"])
    assert "pip install ml_dtypes" in seen["bfloat16_error"]
