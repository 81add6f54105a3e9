"""vmap by the ops' batching rules (``defop(batch=...)``, elementwise ops by broadcasting):
for every op-database entry, vmap over a batch of 3 equals the op on each slice, in values
and in gradients through the vmap; and the batched path (not the per-slice loop) runs."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import ember
import ember.func as func
from opdb import all_ops, as_tuple, case

OPS = all_ops()
PARAMS = [pytest.param(op, id=f"{op.family}:{op.name}") for op in OPS]
B = 3


def _batched_inputs(op, requires_grad):
    arrays, _ = case(op)
    rng = np.random.default_rng(11)
    rows = [
        [a * (1 + 0.05 * i) + 0.01 * i * rng.standard_normal(a.shape) for a in arrays]
        for i in range(B)
    ]
    # keep each entry's value domain (positive, in (-1, 1), above 1) for every slice
    rows = [[np.where(np.sign(r) == np.sign(a), r, a) for r, a in zip(row, arrays)] for row in rows]
    return [
        ember.tensor(np.stack([row[j] for row in rows]), requires_grad=requires_grad)
        for j in range(len(arrays))
    ]


def _floats(outs):
    return [o for o in outs if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]


@pytest.mark.parametrize("op", PARAMS)
def test_vmap_equals_the_op_on_each_slice(op):
    xs = _batched_inputs(op, op.grad)

    def fn(*ts):
        return op.fn(ember, *ts)

    ember.manual_seed(0)
    try:
        want = [as_tuple(fn(*[x[i] for x in xs])) for i in range(B)]
    except Exception as exc:  # the op rejects a slice: so does vmap, with the same error
        with pytest.raises(type(exc)):
            func.vmap(fn, randomness="same")(*xs)
        return
    got = as_tuple(func.vmap(fn, randomness="same")(*xs))
    for j, g in enumerate(got):
        if not isinstance(g, ember.Tensor):
            continue
        for i in range(B):
            w = want[i][j]
            np.testing.assert_allclose(
                g[i].detach().numpy(), w.detach().numpy(), rtol=1e-10, atol=1e-12, equal_nan=True
            )
    if not op.grad:
        return
    outs = [o for o in _floats(got) if o.requires_grad]
    if not outs:
        return
    grads = ember.autograd.grad([o.sum() for o in outs], xs, allow_unused=True)
    for x, g in zip(xs, grads):
        ref = [None] * B
        for i in range(B):
            xi = [t[i].detach().requires_grad_() for t in xs]
            oi = [o for o in _floats(as_tuple(fn(*xi))) if o.requires_grad]
            ref[i] = ember.autograd.grad([o.sum() for o in oi], xi, allow_unused=True)
        k = next(n for n, t in enumerate(xs) if t is x)
        want_g = [r[k] for r in ref]
        if g is None:
            assert all(w is None for w in want_g)
            continue
        for i in range(B):
            w = np.zeros(x.shape[1:]) if want_g[i] is None else want_g[i].numpy()
            np.testing.assert_allclose(g[i].numpy(), w, rtol=1e-9, atol=1e-11)


@contextlib.contextmanager
def _batched_runs():
    """A list filled, per vmap call inside the block, with whether it ran batched."""
    hits: list = []
    orig = func._vmap_by_rules

    def spy(*args, **kwargs):
        out = orig(*args, **kwargs)
        hits.append(out is not None)
        return out

    func._vmap_by_rules = spy
    try:
        yield hits
    finally:
        func._vmap_by_rules = orig


def test_rules_cover_the_common_ops():
    """The batched path runs (no per-slice loop of the whole function) for most entries."""
    with _batched_runs() as hits:
        for op in OPS:
            xs = _batched_inputs(op, False)
            try:
                func.vmap(lambda *ts, op=op: op.fn(ember, *ts), randomness="same")(*xs)
            except Exception:
                continue
    assert sum(hits) / len(hits) > 0.6, (sum(hits), len(hits))


def test_vmap_over_a_module_that_updates_buffers_updates_them_once_per_slice():
    bn = ember.nn.BatchNorm1d(3)
    x = ember.randn(4, 5, 3)
    out = func.vmap(bn)(x)
    assert tuple(out.shape) == (4, 5, 3)
    assert int(bn.num_batches_tracked) == 4  # the loop's four updates, none from the capture


def test_per_sample_gradients_run_batched():
    """vmap(grad(loss)): the backward's ops are captured with the loss and batched."""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((16, 5)))
    y = ember.tensor(rng.standard_normal((16, 3)))
    w = ember.tensor(rng.standard_normal((5, 3)), requires_grad=True)

    def loss(w, xi, yi):
        return ((xi @ w).tanh() - yi).pow(2).mean()

    with _batched_runs() as hits:
        got = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(w, x, y)
    assert hits == [True]
    for i in range(16):
        (want,) = ember.autograd.grad(loss(w, x[i], y[i]), w)
        np.testing.assert_allclose(got[i].detach().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
