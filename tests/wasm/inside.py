"""What tests/wasm/test_wasm.py runs inside Pyodide (WebAssembly), with the test suite
mounted at /mnt/tests and a scratch folder at /mnt/out:

1. pytest on the seed tutorials' replay, the op database's generic checks (gradients against
   central differences, forward vs reverse mode, double backward, no NumPy warnings), the
   autograd engine's tests and the printing tests, less the few that start threads or
   processes, which WebAssembly cannot; each test's outcome goes to /mnt/out/outcomes.json;
2. every op-database entry's values and gradients (``opdb.run_with_grads``), written to
   /mnt/out/values.json for the test to compare with CPython's.

Run as a script by run_in_pyodide.js (top-level ``await`` is not needed): it sets
``EXIT_STATUS`` (pytest's exit code) for the runner.
"""

import json
import sys
import time

sys.path[:0] = ["/mnt/tests", "/mnt/tests/wasm"]

import pytest  # noqa: E402
from wasm_checks import DESELECTED, TARGETS, opdb_values  # noqa: E402


class _Outcomes:
    """A pytest plugin that keeps each test's outcome (a failed setup counts as failed)."""

    def __init__(self) -> None:
        self.outcomes: dict = {}

    def pytest_collection_modifyitems(self, config, items) -> None:
        """Leave out the tests WebAssembly cannot run (``DESELECTED``)."""
        keep = [i for i in items if not i.nodeid.endswith(DESELECTED)]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call" or report.outcome != "passed":
            if self.outcomes.get(report.nodeid) != "failed":
                self.outcomes[report.nodeid] = report.outcome


def behaviour() -> dict:
    """What ember does where WebAssembly lacks something: the import's time, the compiler
    without a C compiler, DataLoader without processes, bfloat16 without ml_dtypes."""
    import warnings

    t = time.time()
    import ember
    from ember.utils.data import DataLoader, TensorDataset

    seen = {"import_seconds": time.time() - t}
    f = ember.compile(lambda x: (x.sin() * 2).sum())
    x = ember.randn(5, requires_grad=True)
    f(x).backward()
    seen["compile_explain"] = str(f.explain())
    seen["compile_grad_ok"] = bool(ember.allclose(x.grad, 2 * x.cos()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = DataLoader(TensorDataset(ember.arange(10.0)), batch_size=4, num_workers=2)
        seen["loader_batches"] = [b[0].tolist() for b in loader]
    seen["loader_warnings"] = [str(w.message) for w in caught]
    try:
        ember.bfloat16  # noqa: B018 (the attribute access is the check)
    except ModuleNotFoundError as e:
        seen["bfloat16_error"] = str(e)
    return seen


BEHAVIOUR = behaviour()
started = time.time()
plugin = _Outcomes()
args = ["-q", "-p", "no:cacheprovider", "--capture=sys", "--rootdir", "/mnt/tests", "-rf"]
args += [f"/mnt/tests/{t}" for t in TARGETS]
EXIT_STATUS = int(pytest.main(args, plugins=[plugin]))
tests_seconds = time.time() - started

started = time.time()
values = opdb_values()
report = {
    "outcomes": {
        k.replace("../../mnt/tests/", "").replace("/mnt/tests/", ""): v
        for k, v in plugin.outcomes.items()
    },
    "values": values,
    "behaviour": BEHAVIOUR,
    "seconds": {
        "load": globals().get("PYODIDE_LOAD_SECONDS", 0.0),  # (set by the runner)
        "tests": tests_seconds,
        "values": time.time() - started,
    },
    "platform": {"python": sys.version.split()[0], "numpy": __import__("numpy").__version__},
}
with open("/mnt/out/report.json", "w") as f:
    json.dump(report, f)
