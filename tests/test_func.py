"""ember.func against torch.func on small float64 functions: values to 1e-10, nesting,
has_aux, argnums, vmap (with grad: per-sample gradients), functional_call, misuse errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func as tf

import ember
import ember.func as ef

RNG = np.random.default_rng(1)
XA, YA = RNG.standard_normal(3), RNG.standard_normal(3)
W, B = RNG.standard_normal((5, 3)), RNG.standard_normal(5)


def _same(fn, *arrays):
    e = fn(ember, ef, *[ember.tensor(a) for a in arrays])
    t = fn(torch, tf, *[torch.tensor(a) for a in arrays])
    le, lt = ef._flatten(e)[0], ef._flatten(t)[0]
    assert len(le) == len(lt)
    for a, b in zip(le, lt):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-10, rtol=1e-10)
        assert a.requires_grad == b.requires_grad


def _f(x):
    return (x.sin() * x**2).sum()


def _g(x, y):
    return (x.exp() * y).sum() + (x * y**3).sum()


def _vec(x):
    return x.sin() * x.sum()


CASES = {
    "grad": (lambda m, F, x: F.grad(_f)(x), XA),
    "grad_of_grad": (lambda m, F, x: F.grad(lambda x: F.grad(_f)(x).sum())(x), XA),
    "argnums_tuple": (lambda m, F, x, y: F.grad(_g, argnums=(0, 1))(x, y), XA, YA),
    "argnums_negative": (lambda m, F, x, y: F.grad(_g, argnums=-1)(x, y), XA, YA),
    "grad_and_value": (lambda m, F, x, y: F.grad_and_value(_g, argnums=1)(x, y), XA, YA),
    "has_aux": (lambda m, F, x: F.grad(lambda x: ((x**2).sum(), x.cos()), has_aux=True)(x), XA),
    "pytree_arg": (
        lambda m, F, x, y: F.grad(lambda d: _g(d["a"], d["b"][0]))({"a": x, "b": (y,)}),
        XA,
        YA,
    ),
    "jacrev": (lambda m, F, x: F.jacrev(_vec)(x), XA),
    "jacfwd": (lambda m, F, x: F.jacfwd(_vec)(x), XA),
    "hessian": (lambda m, F, x: F.hessian(_f)(x), XA),
    "hessian_argnums": (lambda m, F, x, y: F.hessian(_g, argnums=(0, 1))(x, y), XA, YA),
    "jacrev_of_jacfwd": (lambda m, F, x: F.jacrev(F.jacfwd(_vec))(x), XA),
    "jacfwd_of_jacfwd": (lambda m, F, x: F.jacfwd(F.jacfwd(_vec))(x), XA),
    "jacrev_of_jacrev": (lambda m, F, x: F.jacrev(F.jacrev(_vec))(x), XA),
    "jacrev_argnums": (lambda m, F, x, y: F.jacrev(_g, argnums=(0, 1))(x, y), XA, YA),
    "jacfwd_tuple_out": (
        lambda m, F, x, y: F.jacfwd(lambda x, y: (x * y, x.exp()), argnums=(0, 1))(x, y),
        XA,
        YA,
    ),
    "jacrev_has_aux": (lambda m, F, x: F.jacrev(lambda x: (x**2, x.sum()), has_aux=True)(x), XA),
    "jvp": (lambda m, F, x, y: F.jvp(lambda x, y: x.exp() * y, (x, y), (y, x)), XA, YA),
    "jvp_has_aux": (
        lambda m, F, x: F.jvp(lambda x: (x.exp(), x * 2), (x,), (x,), has_aux=True),
        XA,
    ),
    "vjp": (lambda m, F, x, y: F.vjp(lambda x, y: x.exp() * y, x, y)[1](y), XA, YA),
    "vjp_output": (lambda m, F, x, y: F.vjp(lambda x, y: x.exp() * y, x, y)[0], XA, YA),
    "per_sample_grads": (
        lambda m, F, x, w: F.vmap(F.grad(lambda x, w: (x * w).sum() ** 2), in_dims=(None, 0))(x, w),
        XA,
        W,
    ),
    "vmap_out_dims": (
        lambda m, F, w, b: F.vmap(lambda w, b: (w * b, w.sum()), out_dims=(1, 0))(w, b),
        W,
        B,
    ),
    "vmap_in_dim_1": (lambda m, F, w: F.vmap(lambda w: w.sum(0), in_dims=1)(w), W),
    "vmap_nested": (lambda m, F, w: F.vmap(F.vmap(lambda w: w * 2))(w), W),
    "vmap_jacrev": (lambda m, F, w: F.vmap(F.jacrev(_vec))(w), W),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_func(name):
    fn, *arrays = CASES[name]
    _same(fn, *arrays)


def test_outer_autograd_flows_through_grad():
    def run(m, F):
        x = m.tensor(XA, requires_grad=True)
        g = F.grad(_f)(x)
        assert g.requires_grad
        g.sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(ember, ef), run(torch, tf), atol=1e-10)


def test_functional_call():
    torch.manual_seed(0)
    lin_t = torch.nn.Linear(3, 2).double()
    lin_e = ember.nn.Linear(3, 2).double()
    params = {k: v.detach().numpy() for k, v in lin_t.named_parameters()}

    def loss(m, F, lin, p, x):
        return F.grad(lambda p: F.functional_call(lin, p, (x,)).pow(2).sum())(p)

    ge = loss(ember, ef, lin_e, {k: ember.tensor(v) for k, v in params.items()}, ember.tensor(W))
    gt = loss(torch, tf, lin_t, {k: torch.tensor(v) for k, v in params.items()}, torch.tensor(W))
    for k in params:
        np.testing.assert_allclose(ge[k].numpy(), gt[k].numpy(), atol=1e-10)
    w0 = {"weight": ember.ones(2, 3)}
    out = ef.functional_call(lin_e, (w0, {"bias": ember.zeros(2)}), ember.ones(1, 3))
    assert np.allclose(out.numpy(), 3.0)


def test_vmap_randomness():
    x = ember.ones(4)
    same = ef.vmap(lambda v: v * ember.rand(()), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0])
    diff = ef.vmap(lambda v: v * ember.rand(()), randomness="different")(x)
    assert len(set(diff.numpy().tolist())) == 4


def _raises(fn):
    try:
        fn(torch, tf)
    except Exception as err:  # noqa: BLE001  (the torch error is the reference)
        expected = (type(err), str(err))
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(expected[0]) as info:
        fn(ember, ef)
    assert str(info.value) == expected[1]


def test_misuse_errors_match_torch():
    x = XA
    cases = [
        lambda m, F: F.grad(lambda v: v)(m.tensor(x)),
        lambda m, F: F.grad(lambda v: 1.0)(m.tensor(x)),
        lambda m, F: F.grad(lambda v: v.sum(), has_aux=True)(m.tensor(x)),
        lambda m, F: F.grad(lambda v: v.sum(), argnums=2)(m.tensor(x)),
        lambda m, F: F.grad(lambda v: v.sum(), argnums=-2)(m.tensor(x)),
        lambda m, F: F.grad(lambda v, w: v.sum(), argnums=1)(m.tensor(x), 2.0),
        lambda m, F: F.grad(lambda v: v.sum(), argnums=(0, 0))(m.tensor(x)),
        lambda m, F: F.jacrev(lambda v: v, argnums=1)(m.tensor(x)),
        lambda m, F: F.jvp(lambda v: v, m.tensor(x), m.tensor(x)),
        lambda m, F: F.jvp(lambda v: v, (m.tensor(x),), (m.tensor(x[:2]),)),
        lambda m, F: F.vmap(lambda a, b: a + b)(m.tensor(x), m.ones(4)),
        lambda m, F: F.vmap(lambda v: v * m.rand(1))(m.tensor(x)),
        lambda m, F: F.vmap(lambda v: 1.0)(m.tensor(x)),
        lambda m, F: F.vmap(lambda v: v, in_dims=1)(m.tensor(x)),
        lambda m, F: F.vmap(lambda v: v, randomness="bad")(m.tensor(x)),
    ]
    for fn in cases:
        _raises(fn)
