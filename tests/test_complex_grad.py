"""Complex gradients follow torch's convention: for a real loss L and a holomorphic op
``y = f(z)``, ``dL/dz = dL/dy * conj(f'(z))``; forward mode gives ``f'(z) * t`` (no
conjugation). Each op's gradients of a real loss w.r.t. complex128 leaves, its tangents
and (for a few) its double backward are compared with torch's."""

from __future__ import annotations

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(1234)


def _c(*shape, near=0.0):
    """Complex128 values; ``near`` shifts them (0.5: small values around 0.5, a domain
    where log, asin, atanh, ... are smooth)."""
    z = _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)
    return z * 0.3 + near if near else z


def _with_zero(*shape):
    z = _c(*shape)
    z.flat[1] = 0
    return z


_UNARY = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "sigmoid", "reciprocal", "square", "abs", "sinc",
]  # fmt: skip


def _unary(name):
    return lambda m, a: getattr(m, name)(a)


# name: (fn(lib, *tensors), input arrays)
CASES = {
    "mul": (lambda m, a, b: a * b, (_c(3), _c(3))),
    "mul_broadcast": (lambda m, a, b: a * b, (_c(2, 3), _c(3))),
    "mul_complex_scalar": (lambda m, a: a * (2 - 3j), (_c(3),)),
    "mul_real_by_complex": (lambda m, a, b: a.real * b, (_c(3), _c(3))),
    "div": (lambda m, a, b: a / b, (_c(3), _c(3))),
    "rdiv": (lambda m, a: (1 + 2j) / a, (_c(3),)),
    "div_complex_scalar": (lambda m, a: a / (1 + 2j), (_c(3),)),
    "pow_int": (lambda m, a: a**3, (_c(3),)),
    "pow_2": (lambda m, a: a**2, (_c(3),)),
    "pow_float": (lambda m, a: a**2.5, (_c(3),)),
    "pow_complex_scalar": (lambda m, a: a ** (1 + 1j), (_c(3),)),
    "pow_tensor": (lambda m, a, b: a**b, (_c(3), _c(3))),
    "rpow": (lambda m, a: 2**a, (_c(3),)),
    "rpow_complex": (lambda m, a: (1 + 1j) ** a, (_c(3),)),
    **{u: (_unary(u), (_c(3, near=0.5),)) for u in _UNARY},
    "lerp": (lambda m, a, b: m.lerp(a, b, 0.3), (_c(3), _c(3))),
    "lerp_tensor": (lambda m, a, b, w: m.lerp(a, b, w), (_c(3), _c(3), _c(3))),
    "prod": (lambda m, a: m.prod(a), (_c(4),)),
    "prod_dim": (lambda m, a: m.prod(a, 1), (_c(2, 3),)),
    "prod_zero": (lambda m, a: m.prod(a), (_with_zero(4),)),
    "cumprod": (lambda m, a: m.cumprod(a, 0), (_c(4),)),
    "cumprod_zero": (lambda m, a: m.cumprod(a, 0), (_with_zero(4),)),
    "logsumexp": (lambda m, a: m.logsumexp(a, 0), (_c(4, near=0.5),)),
    "vector_norm_1": (lambda m, a: m.linalg.vector_norm(a, 1), (_c(3),)),
    "vector_norm_2": (lambda m, a: m.linalg.vector_norm(a), (_c(3),)),
    "vector_norm_inf": (lambda m, a: m.linalg.vector_norm(a, float("inf")), (_c(3),)),
    "var": (lambda m, a: m.var(a), (_c(4),)),
    "outer": (lambda m, a, b: m.outer(a, b), (_c(3), _c(2))),
    "kron": (lambda m, a, b: m.kron(a, b), (_c(2), _c(2))),
    "mm": (lambda m, a, b: m.mm(a, b), (_c(2, 3), _c(3, 4))),
    "bmm": (lambda m, a, b: m.bmm(a, b), (_c(2, 2, 3), _c(2, 3, 4))),
    "mul_": (lambda m, a, b: (a * 1).mul_(b), (_c(3), _c(3))),
    "div_": (lambda m, a, b: (a * 1).div_(b), (_c(3), _c(3))),
    "exp_": (lambda m, a: (a * 1).exp_(), (_c(3),)),
    "pow_": (lambda m, a: (a * 1).pow_(3), (_c(3),)),
}

# Forward mode (tangents) against torch.autograd.forward_ad.
FORWARD = [
    "mul", "mul_complex_scalar", "mul_real_by_complex", "div", "rdiv", "pow_int",
    "pow_tensor", "rpow", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "reciprocal",
    "abs", "lerp_tensor", "prod", "cumprod", "vector_norm_2", "var", "mm",
]  # fmt: skip

# Double backward (create_graph) against torch.
DOUBLE = [
    "mul", "mul_broadcast", "div", "rdiv", "exp", "log", "sin", "tanh", "sigmoid",
    "reciprocal", "pow_int", "pow_tensor", "abs", "prod", "cumprod", "vector_norm_1",
]  # fmt: skip


def _real_loss(m, y, w):
    """Re <w, y>: a real loss whose gradient w.r.t. y is ``w`` in torch's convention."""
    if y.is_complex():
        return (y.real * m.tensor(w.real)).sum() + (y.imag * m.tensor(w.imag)).sum()
    return (y * m.tensor(w.real)).sum()


def _np(m, t):
    t = t.detach()
    return (t.resolve_conj() if m is torch else t).numpy()


def _grads(m, name, w):
    fn, arrays = CASES[name]
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    gs = m.autograd.grad(_real_loss(m, fn(m, *xs), w), xs)
    return [_np(m, g) for g in gs]


def _weights(name, seed=0):
    fn, arrays = CASES[name]
    shape = tuple(fn(torch, *[torch.tensor(a) for a in arrays]).shape)
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_matches_torch(name):
    w = _weights(name)
    for ge, gt in zip(_grads(ember, name, w), _grads(torch, name, w)):
        np.testing.assert_allclose(ge, gt, rtol=1e-12, atol=1e-12)


def _tangent(m, name, tangents):
    fn, arrays = CASES[name]
    fa = m.autograd.forward_ad
    with fa.dual_level():
        xs = [fa.make_dual(m.tensor(a), m.tensor(t)) for a, t in zip(arrays, tangents)]
        return _np(m, fa.unpack_dual(fn(m, *xs)).tangent)


@pytest.mark.parametrize("name", FORWARD)
def test_tangent_matches_torch(name):
    rng = np.random.default_rng(7)
    _, arrays = CASES[name]
    tangents = [rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape) for a in arrays]
    np.testing.assert_allclose(
        _tangent(ember, name, tangents), _tangent(torch, name, tangents), rtol=1e-12, atol=1e-12
    )


def _double(m, name, w, w2):
    fn, arrays = CASES[name]
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    gs = m.autograd.grad(_real_loss(m, fn(m, *xs), w), xs, create_graph=True)
    loss2 = sum(_real_loss(m, g, v) for g, v in zip(gs, w2))
    return [_np(m, g) for g in m.autograd.grad(loss2, xs)]


@pytest.mark.parametrize("name", DOUBLE)
def test_double_backward_matches_torch(name):
    _, arrays = CASES[name]
    rng = np.random.default_rng(11)
    w2 = [rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape) for a in arrays]
    w = _weights(name, 3)
    for ge, gt in zip(_double(ember, name, w, w2), _double(torch, name, w, w2)):
        np.testing.assert_allclose(ge, gt, rtol=1e-10, atol=1e-12)


def test_real_gradients_stay_real_and_uncopied():
    """cconj is the identity (the same object) for real values: no copy on the real path."""
    from ember.autograd.opdef import cconj

    a = np.ones(3, np.float32)
    assert cconj(a) is a
    t = ember.ones(3)
    assert cconj(t) is t
    assert cconj(2.0) == 2.0 and cconj(2 + 1j) == 2 - 1j
    x = ember.ones(3, requires_grad=True)
    (x * ember.full((3,), 2.0)).sum().backward()
    assert x.grad.dtype == ember.float32
