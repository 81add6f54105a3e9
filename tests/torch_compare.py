"""Helpers shared by the shape and indexing tests: run one case under ember and torch and
compare outputs, graph structure, warnings and gradients; finite-difference gradients."""

import warnings

import numpy as np
import torch

import ember
from numgrad import numgrad


def outs(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def check_gradients(fn, arrays, rng):
    """Analytical gradients of ``fn(*tensors)`` equal central differences (float64)."""
    xs = [ember.tensor(a, requires_grad=True) for a in arrays]
    results = [o for o in outs(fn(*xs)) if o.requires_grad]
    ws = [rng.standard_normal(tuple(o.shape)) for o in results]
    ember.autograd.backward(results, [ember.tensor(w) for w in ws])
    num = numgrad(
        lambda *t: tuple(o for o in outs(fn(*t)) if o.dtype.is_floating_point),
        [a.copy() for a in arrays],
        ws,
    )
    for x, n in zip(xs, num):
        got = np.zeros_like(n) if x.grad is None else x.grad.numpy()
        np.testing.assert_allclose(got, n, rtol=1e-6, atol=1e-7)


def name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def edges(t):
    """The graph structure one step back: ``[(node name, output_nr), ...]``."""
    if t.grad_fn is None:
        return None
    return [(None if n is None else type(n).__name__, i) for n, i in t.grad_fn.next_functions]


def compare(fn, arrays, rng, check_base=True):
    """Run ``fn(module, *inputs)`` with ember and torch; compare outputs and gradients."""
    xe = [ember.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    xt = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    with warnings.catch_warnings(record=True) as we:
        warnings.simplefilter("always")
        oe = outs(fn(ember, *xe))
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        ot = outs(fn(torch, *xt))
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    assert len(oe) == len(ot)
    for e, t in zip(oe, ot):
        assert tuple(e.shape) == tuple(t.shape)
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6)
        assert name(e) == name(t)
        assert edges(e) == edges(t)
        if check_base:
            assert (e._base is not None) == (t._base is not None)
    diff = [i for i, t in enumerate(ot) if t.requires_grad]
    if not diff:
        return
    ws = [_dyadic(rng.standard_normal(tuple(ot[i].shape))).astype(np.float32) for i in diff]
    ember.autograd.backward([oe[i] for i in diff], [ember.tensor(w) for w in ws])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch repeats the uint8-index warning in backward
        torch.autograd.backward([ot[i] for i in diff], [torch.tensor(w) for w in ws])
    for e, t in zip(xe, xt):
        if t.grad is None:
            assert e.grad is None or not e.grad.numpy().any()
        else:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


def _dyadic(z):
    """``z`` moved to the nearest odd multiple of 1/128 (never 0, so no sign-dependent op
    sits on its kink). Sums of up to 2**13 such values of size < 8 fit float32's 24-bit
    significand exactly: every sum the shape and indexing ops form (gradients of expand,
    repeat, gather or getitem with repeats; scatter_add, index_add, index_put(accumulate))
    is exact in float32, so torch and ember agree bit for bit whatever their summation
    order, on any CPU and BLAS."""
    return (np.floor(z * 64) + 0.5) / 64


def arr(rng, shape, dtype=np.float64):
    return _dyadic(rng.standard_normal(shape)).astype(dtype)
