"""What the WebAssembly run checks, shared by its two sides (``inside.py`` in Pyodide and
``test_wasm.py`` under CPython): the pytest targets, the tests WebAssembly cannot run, and
the op database's values and gradients as plain lists."""

from __future__ import annotations

import numpy as np

TARGETS = ("seeds", "test_opdb.py", "autograd", "test_tensor_str.py")

# Tests that start processes or threads, which WebAssembly has not (and why each is out).
DESELECTED = (
    "seeds/test_tour.py::test_runs_as_a_module",  # runs `python -m ember.tour`: a process
    "test_tensor_str.py::test_does_not_import_torch",  # a fresh interpreter: a process
    "autograd/test_engine.py::test_grad_mode_contexts_decorators_and_threads",  # threads
)


def _plain(a):
    """An array as JSON-able nested lists (complex as [real, imag] pairs; None kept)."""
    if a is None:
        return None
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return [_plain(a.real), _plain(a.imag)]
    if a.dtype.kind == "V":  # bfloat16
        a = a.astype(np.float32)
    return a.astype(np.float64).tolist() if a.dtype.kind in "fiub" else str(a)


def opdb_values() -> dict:
    """Every op-database entry's output values and gradients (float64 inputs drawn from the
    entry's seed, cotangents from a fixed seed), or the error it raised."""
    import ember
    from opdb import all_ops, run_with_grads

    out = {}
    for op in all_ops():
        ember.manual_seed(0)
        try:
            _, values, grads = run_with_grads(ember, op)
        except Exception as e:  # noqa: BLE001 (an entry that raises: its error is the value)
            out[f"{op.family}:{op.name}"] = {"error": type(e).__name__}
            continue
        out[f"{op.family}:{op.name}"] = {
            "values": [_plain(v) for v in values],
            "grads": [_plain(g) for g in grads],
        }
    return out
