"""Every benchmark workload's gradients are right for every installed implementation.

Timing is the benchmark runner's business; this only keeps the workloads from rotting.
"""

import importlib
import importlib.metadata
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import workloads as wl  # noqa: E402

SMALL = {
    "W1": lambda: wl.w1_make(0, n_ops=50),
    "W2": lambda: wl.w2_make(0, batch=8, sizes=(20, 16, 12, 5), dtype=np.float64),
    "W3": lambda: wl.w3_make(0, n=1000, dtype=np.float64),
    "W4": lambda: wl.w4_make(0, n=30),
    "W5": lambda: wl.w5_make(0, n_leaves=10, n_nodes=60),
    "W7": lambda: wl.w7_make(0, batch=4, dtype=np.float64),
}
IMPLS = ["numpy", "ember", "ember-compiled", "torch", "autograd", "mygrad", "jax"]


def _installed(name):
    # Ask the installed distributions: a bare import of "autograd" could find tests/autograd.
    try:
        importlib.metadata.version(name)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


# Only the pairs that exist (not every peer library implements every workload).
PAIRS = [(w, i) for w in sorted(SMALL) for i in IMPLS if i in wl.implementations(w)]


@pytest.mark.parametrize("workload,impl", PAIRS)
def test_workload_gradients_match_reference(workload, impl):
    # `make test` installs the bench extra; a bare pytest without it says what is missing.
    assert impl in ("numpy", "ember", "ember-compiled") or _installed(impl), (
        f"install ember[bench]: no {impl}"
    )
    impls = wl.implementations(workload)
    inp = SMALL[workload]()
    ref_value, ref_grads = wl.reference(workload, inp)
    value, grads = impls[impl](inp)
    if impl == "ember-compiled":  # the first call captured; the second runs generated code
        value, grads = impls[impl](inp)
    assert np.isclose(value, ref_value, rtol=1e-6)
    assert len(grads) == len(ref_grads)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), r, rtol=1e-6, atol=1e-9)


def test_w4_reference_matches_finite_differences():
    inp = SMALL["W4"]()
    _, (hv,) = wl.reference("W4", inp)
    a, x, v = inp["A"], inp["x"], inp["v"]

    def grad(z):
        t = np.tanh(a @ z)
        return a.T @ (2 * t * (1 - t * t))

    eps = 1e-6
    numeric = (grad(x + eps * v) - grad(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    "workload", [w for w in sorted(SMALL) if "ember-compiled" in wl.implementations(w)]
)
def test_compiled_workload_equals_eager(workload):
    """ember.compile gives ember's eager values and gradients (float64: 1e-10), and compiles."""
    impls = wl.implementations(workload)
    inp = SMALL[workload]()
    want_value, want_grads = impls["ember"](inp)
    for _ in range(2):
        value, grads = impls["ember-compiled"](inp)
        np.testing.assert_allclose(value, want_value, rtol=1e-10)
        for g, w in zip(grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    report = impls["ember-compiled"].compiled.explain()
    assert "runs eagerly" not in report, report  # W4: autograd.grad inside, captured too
