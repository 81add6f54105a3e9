"""Every op-database entry, compiled and eager: the same values and gradients (float64
1e-10, float32 1e-5), or an eager fallback that says why. Never a silently wrong result."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from opdb import all_ops, as_tuple, case

OPS = all_ops()
PARAMS = [pytest.param(op, id=f"{op.family}:{op.name}") for op in OPS]


def _run(fn, op, arrays, dtype):
    """Values and first gradients of ``op`` (random ops: the same seed every run)."""
    ember.manual_seed(7)
    xs = [ember.tensor(a.astype(dtype), requires_grad=op.grad) for a in arrays]
    outs = as_tuple(fn(*xs))
    values = [o.detach().numpy().copy() for o in outs]
    diff = [o for o in outs if o.requires_grad and o.dtype.is_floating_point]
    grads = []
    if diff:
        rng = np.random.default_rng(3)
        ws = [ember.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype)) for o in diff]
        got = ember.autograd.grad(diff, xs, ws, allow_unused=True)
        grads = [None if g is None else g.numpy().copy() for g in got]
    return values, grads


def _close(a, b, tol):
    assert a.shape == b.shape and a.dtype == b.dtype
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("op", PARAMS)
def test_compiled_equals_eager(op, dtype, tol):
    arrays, _ = case(op)

    def fn(*xs):
        return op.fn(ember, *xs)

    compiled = ember.compile(fn)
    try:
        want = _run(fn, op, arrays, dtype)
    except Exception as exc:  # the eager op rejects this dtype: so must the compiled one
        with pytest.raises(type(exc)):
            _run(compiled, op, arrays, dtype)
        return
    for _ in range(2):  # the first call captures, the second runs the cached code
        got = _run(compiled, op, arrays, dtype)
        for a, b in zip(want[0], got[0]):
            _close(a, b, tol)
        assert len(want[1]) == len(got[1])
        for a, b in zip(want[1], got[1]):
            assert (a is None) == (b is None)
            if a is not None:
                _close(a, b, tol)
    report = compiled.explain()
    assert report.startswith("signature 0 (")
    if "runs eagerly" in report:
        assert report.split("runs eagerly: ", 1)[1].strip(), "a fallback must say why"


def test_most_ops_compile():
    """Coverage: the share of entries whose float64 call compiles (no fallback)."""
    compiled_n = 0
    reasons: dict = {}
    for op in OPS:
        arrays, _ = case(op)
        fn = ember.compile(lambda *xs, op=op: op.fn(ember, *xs))
        try:
            _run(fn, op, arrays, np.float64)
        except Exception:
            continue
        report = fn.explain()
        if "runs eagerly" in report:
            reason = report.split("runs eagerly: ", 1)[1].split("\n")[0]
            reasons.setdefault(reason, []).append(op.name)
        else:
            compiled_n += 1
    share = compiled_n / len(OPS)
    assert share > 0.6, (share, {k: v[:5] for k, v in reasons.items()})
