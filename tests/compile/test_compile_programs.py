"""Random programs (the differential test's chains of 2-5 op-database entries), compiled and
eager: the same values of every step and the same gradients of the weighted loss, on the
program's values and on a second set of values of the same shapes (the cached code)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from differential import programs as P  # noqa: E402

# Drawing a program runs it under torch (which gives each step's shapes and says which draws
# are well defined): without the oracle there are no programs to compile.
pytest.importorskip("torch")

N_PROGRAMS = int(os.environ.get("EMBER_COMPILE_PROGRAMS", "40"))


def _values_and_grads(fn, prog, arrays):
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    outs = fn(*xs)
    finals = [outs[-1][j] for j in prog.finals]
    # weights drawn for each call's shapes (masked_select's length depends on the values)
    rng = np.random.default_rng(1)
    ws = [ember.tensor(rng.standard_normal(tuple(f.shape))) for f in finals]
    grads = ember.autograd.grad(finals, xs, ws, allow_unused=True)
    values = [[o.detach().numpy().copy() for o in step] for step in outs]
    return values, [None if g is None else g.numpy().copy() for g in grads]


@pytest.mark.parametrize("index", range(N_PROGRAMS), ids=[f"p{i:03d}" for i in range(N_PROGRAMS)])
def test_compiled_program_equals_eager(index):
    prog = P.draw(index)
    if not prog.ok:
        return  # no well-defined torch reference was drawn for this index: nothing to run
    rng = np.random.default_rng(index)
    second = [a * (1 + 0.05 * rng.uniform(-1, 1, a.shape)) for a in prog.leaves]

    def program(*xs):
        return P.run(ember, prog, xs)

    compiled = ember.compile(program)
    for arrays in (prog.leaves, second, second):
        want = _values_and_grads(program, prog, arrays)
        got = _values_and_grads(compiled, prog, arrays)
        for ws, gs in zip(want[0], got[0]):
            for w, g in zip(ws, gs):
                assert w.shape == g.shape and w.dtype == g.dtype
                np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, equal_nan=True)
        for w, g in zip(want[1], got[1]):
            assert (w is None) == (g is None)
            if w is not None:
                # Fused kernels and C loops sum in other orders (and call libmvec): a few ulps,
                # which a gradient's cancellation can lift far above an element that is tiny
                # beside the array's largest (p514: 1.7e-11 off on 6.7e-3, the largest 2.4).
                scale = float(np.nanmax(np.abs(w), initial=0.0)) if w.size else 0.0
                atol = 1e-12 + 1e-10 * (scale if np.isfinite(scale) else 0.0)
                np.testing.assert_allclose(g, w, rtol=1e-10, atol=atol, equal_nan=True)
    report = compiled.explain()
    assert report.startswith("signature 0 (")
    if "runs eagerly" in report:
        assert report.split("runs eagerly: ", 1)[1].strip()
