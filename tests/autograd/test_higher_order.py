"""Higher-order derivatives: create_graph end to end, Hessians, HVPs and gradgradcheck."""

import time

import numpy as np
import pytest

import ember
import ember.autograd.functional as F
from ember.autograd.gradcheck import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
import torch.autograd.functional as TF  # noqa: E402

LIBS = pytest.mark.parametrize("M", [ember, torch], ids=["ember", "torch"])


def _t(M, a, requires_grad=False):
    """A float64 tensor from a NumPy array (exact values in both libraries)."""
    return M.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# -- n-th derivatives ----------------------------------------------------------------------


@LIBS
def test_third_derivative_of_sin_is_minus_cos(M):
    xs = np.array([-2.0, -0.3, 0.0, 0.7, 2.5])
    x = _t(M, xs, True)
    (g1,) = M.autograd.grad(M.sin(x).sum(), x, create_graph=True)
    (g2,) = M.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = M.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(g1.detach().numpy(), np.cos(xs), rtol=1e-14)
    np.testing.assert_allclose(g2.detach().numpy(), -np.sin(xs), rtol=1e-14)
    np.testing.assert_allclose(g3.numpy(), -np.cos(xs), rtol=1e-14)
    assert g1.requires_grad and g2.requires_grad and not g3.requires_grad


@LIBS
def test_third_derivative_through_backward_create_graph(M):
    xs = np.array([0.5, 1.0, -1.5])
    x = _t(M, xs, True)
    M.sin(x).sum().backward(create_graph=True)
    g1, x.grad = x.grad, None
    assert g1.requires_grad
    g1.sum().backward(create_graph=True)
    g2, x.grad = x.grad, None
    g2.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.cos(xs), rtol=1e-14)


@LIBS
def test_fifth_derivatives_of_exp_and_power(M):
    xs = np.array([0.3, 1.2, -0.8])
    x = _t(M, xs, True)
    ye, yp = x.exp().sum(), (x**5).sum()
    for _ in range(4):
        (ye,) = M.autograd.grad(ye, x, create_graph=True)
        (yp,) = M.autograd.grad(yp, x, create_graph=True)
        ye, yp = ye.sum(), yp.sum()
    (de,) = M.autograd.grad(ye, x)
    (dp,) = M.autograd.grad(yp, x)
    np.testing.assert_allclose(de.numpy(), np.exp(xs), rtol=1e-14)
    np.testing.assert_allclose(dp.numpy(), [120.0] * 3)


def test_accumulating_create_graph_backwards_matches_torch():
    out = []
    for M in (ember, torch):
        x = _t(M, [0.5, 1.0], True)
        (x**2).sum().backward(create_graph=True)
        (x**3).sum().backward(create_graph=True)
        (h,) = M.autograd.grad(x.grad.sum(), x)
        out.append((x.grad.detach().numpy().copy(), h.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1])


def test_create_graph_grad_does_not_alias_the_gradient_argument():
    x = ember.ones(2, requires_grad=True)
    v = ember.ones(2, requires_grad=True)
    (x + 0).backward(v, create_graph=True)
    assert x.grad is not v


def test_gradient_penalty_matches_torch():
    # WGAN-GP style: the norm of an input gradient is part of the loss on the weights.
    rng = np.random.default_rng(3)
    W1, W2, X = rng.normal(size=(4, 5)), rng.normal(size=(5, 1)), rng.normal(size=(6, 4))
    grads = []
    for M in (ember, torch):
        w1, w2 = _t(M, W1, True), _t(M, W2, True)
        x = _t(M, X, True)
        score = (M.tanh(x @ w1) @ w2).sum()
        (gx,) = M.autograd.grad(score, x, create_graph=True)
        penalty = ((gx.norm(dim=1) - 1) ** 2).mean()
        penalty.backward()
        grads.append((w1.grad.numpy(), w2.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12)


# -- second derivatives of ops against torch -----------------------------------------------

SECOND = {
    # name: (fn(M) -> callable, input arrays' (shape, low, high))
    "exp": (lambda M: lambda a: a.exp(), [((2, 3), -1, 1)]),
    "log": (lambda M: lambda a: a.log(), [((2, 3), 0.5, 2)]),
    "tanh": (lambda M: lambda a: a.tanh(), [((2, 3), -1, 1)]),
    "sigmoid": (lambda M: lambda a: a.sigmoid(), [((2, 3), -2, 2)]),
    "pow_scalar": (lambda M: lambda a: a**3, [((2, 3), -1, 1)]),
    "pow_frac": (lambda M: lambda a: a**2.5, [((2, 3), 0.5, 2)]),
    "pow_tensor": (lambda M: lambda a, b: a**b, [((2, 3), 0.5, 2), ((2, 3), -1, 1)]),
    "rpow": (lambda M: lambda b: 2.0**b, [((2, 3), -1, 1)]),
    "mul": (lambda M: lambda a, b: a * b * a, [((2, 3), -1, 1), ((3,), -1, 1)]),
    "div": (lambda M: lambda a, b: a / b, [((2, 3), -1, 1), ((2, 3), 0.5, 2)]),
    "sqrt": (lambda M: lambda a: a.sqrt(), [((2, 3), 0.5, 2)]),
    "softmax": (lambda M: lambda a: M.softmax(a, 1), [((2, 4), -1, 1)]),
    "log_softmax": (lambda M: lambda a: M.log_softmax(a, 0), [((3, 2), -1, 1)]),
    "logsumexp": (lambda M: lambda a: M.logsumexp(a, 1), [((2, 4), -1, 1)]),
    "matmul": (lambda M: lambda a, b: (a @ b) ** 2, [((2, 3), -1, 1), ((3, 4), -1, 1)]),
    "matmul_batched": (lambda M: lambda a, b: (a @ b) ** 2, [((2, 2, 3), -1, 1), ((3, 2), -1, 1)]),
    "sum": (lambda M: lambda a: (a * a).sum(0) ** 2, [((2, 3), -1, 1)]),
    "mean": (lambda M: lambda a: (a * a).mean(1) ** 2, [((2, 3), -1, 1)]),
    "norm": (lambda M: lambda a: a.norm(), [((2, 3), -1, 1)]),
    "norm_dim": (lambda M: lambda a: a.norm(dim=1), [((2, 3), -1, 1)]),
    "norm_p3": (lambda M: lambda a: M.norm(a, p=3), [((2, 3), -1, 1)]),
    "var": (lambda M: lambda a: a.var(1), [((2, 4), -1, 1)]),
    "prod": (lambda M: lambda a: a.prod(1), [((2, 3), -1, 1)]),
    "cumprod": (lambda M: lambda a: M.cumprod(a, 1), [((2, 3), -1, 1)]),
}


def _second_derivatives(M, name, seed=0):
    """First derivatives (weighted by w) and second derivatives (weighted by u)."""
    make, specs = SECOND[name]
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(lo, hi, size=shape) for shape, lo, hi in specs]
    xs = [_t(M, a, True) for a in arrays]
    out = make(M)(*xs)
    w = _t(M, rng.uniform(-1, 1, size=tuple(out.shape)))
    gs = M.autograd.grad(out, xs, w, create_graph=True)
    us = [_t(M, rng.uniform(-1, 1, size=a.shape)) for a in arrays]
    s = sum((g * u).sum() for g, u in zip(gs, us))
    hs = M.autograd.grad(s, xs, allow_unused=True)
    first = [g.detach().numpy().copy() for g in gs]
    second = [np.zeros(a.shape) if h is None else h.numpy().copy() for a, h in zip(arrays, hs)]
    return first, second


@pytest.mark.parametrize("name", list(SECOND))
def test_second_derivatives_match_torch(name):
    e_first, e_second = _second_derivatives(ember, name)
    t_first, t_second = _second_derivatives(torch, name)
    for e, t in zip(e_first + e_second, t_first + t_second):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


# -- Hessians against closed forms and torch -------------------------------------------------


def test_hessian_of_a_quadratic_form_is_a_plus_a_transpose():
    rng = np.random.default_rng(4)
    A, xs = rng.normal(size=(5, 5)), rng.normal(size=5)
    H = F.hessian(lambda x: x @ (_t(ember, A) @ x), _t(ember, xs))
    np.testing.assert_allclose(H.numpy(), A + A.T, rtol=1e-13)
    Ht = TF.hessian(lambda x: x @ (_t(torch, A) @ x), _t(torch, xs))
    np.testing.assert_allclose(H.numpy(), Ht.numpy(), rtol=1e-13)
    # Row by row with grad of grad gives the same matrix.
    x = _t(ember, xs, True)
    (g,) = ember.autograd.grad(x @ (_t(ember, A) @ x), x, create_graph=True)
    rows = [ember.autograd.grad(g[i], x, retain_graph=True)[0].numpy() for i in range(5)]
    np.testing.assert_allclose(np.stack(rows), A + A.T, rtol=1e-13)


def _logistic_loss(M, X, y):
    Xt, yt = _t(M, X), _t(M, y)

    def loss(w):
        z = Xt @ w
        return (M.log1p(M.exp(z)) - yt * z).mean()

    return loss


def test_hessian_of_the_logistic_loss():
    rng = np.random.default_rng(5)
    n, d = 40, 4
    X = rng.normal(size=(n, d))
    y = (rng.uniform(size=n) < 0.5).astype(np.float64)
    w = rng.normal(size=d) * 0.5
    p = 1 / (1 + np.exp(-(X @ w)))
    closed = X.T @ (X * (p * (1 - p))[:, None]) / n
    H = F.hessian(_logistic_loss(ember, X, y), _t(ember, w))
    np.testing.assert_allclose(H.numpy(), closed, rtol=1e-12, atol=1e-15)
    Ht = TF.hessian(_logistic_loss(torch, X, y), _t(torch, w))
    np.testing.assert_allclose(H.numpy(), Ht.numpy(), rtol=1e-12, atol=1e-15)
    # Newton's step from the Hessian: the gradient of the loss vanishes at the optimum.
    wk = _t(ember, w)
    for _ in range(8):
        _, g = F.vjp(_logistic_loss(ember, X, y), wk)
        Hk = F.hessian(_logistic_loss(ember, X, y), wk)
        wk = wk - _t(ember, np.linalg.solve(Hk.numpy(), g.numpy()))
    _, g = F.vjp(_logistic_loss(ember, X, y), wk)
    assert np.abs(g.numpy()).max() < 1e-10


def _hvp_setup(M, n=1000, seed=6):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    xs, vs = rng.normal(size=n), rng.normal(size=n)
    At = _t(M, A)
    return A, xs, vs, (lambda x: (M.tanh(At @ x) ** 2).sum()), _t(M, xs), _t(M, vs)


def _time_ms(fn, reps=20) -> float:
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def test_hessian_vector_product_1000x1000_matches_torch_and_closed_form(capsys):
    A, xs, vs, fe, xe, ve = _hvp_setup(ember)
    _, _, _, ft, xt, vt = _hvp_setup(torch)
    t = np.tanh(A @ xs)
    closed = A.T @ ((2 * (1 - t**2) * (1 - 3 * t**2)) * (A @ vs))

    def grad_of_grad(M, f, x0, v):
        x = x0.detach().requires_grad_()
        (g,) = M.autograd.grad(f(x), x, create_graph=True)
        return M.autograd.grad(g, x, v)[0]

    he = grad_of_grad(ember, fe, xe, ve)
    ht = grad_of_grad(torch, ft, xt, vt)
    np.testing.assert_allclose(he.numpy(), closed, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(he.numpy(), ht.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(F.hvp(fe, xe, ve)[1].numpy(), closed, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(F.vhp(fe, xe, ve)[1].numpy(), closed, rtol=1e-9, atol=1e-12)
    timings = {
        "ember grad-of-grad": _time_ms(lambda: grad_of_grad(ember, fe, xe, ve)),
        "torch grad-of-grad": _time_ms(lambda: grad_of_grad(torch, ft, xt, vt)),
        "ember functional.hvp": _time_ms(lambda: F.hvp(fe, xe, ve)),
        "torch functional.hvp": _time_ms(lambda: TF.hvp(ft, xt, vt)),
    }
    with capsys.disabled():
        print(
            "\nHVP 1000x1000 float64 (best of 20): "
            + ", ".join(f"{k} {v:.2f} ms" for k, v in timings.items())
        )


# -- gradgradcheck over the ops --------------------------------------------------------------


def _rand(rng, *shape, lo=-1.0, hi=1.0):
    return _t(ember, rng.uniform(lo, hi, size=shape), True)


UNARY = {
    # name: input range
    "exp": (-1, 1),
    "exp2": (-1, 1),
    "expm1": (-1, 1),
    "log": (0.5, 2),
    "log2": (0.5, 2),
    "log10": (0.5, 2),
    "log1p": (-0.5, 1),
    "sqrt": (0.5, 2),
    "rsqrt": (0.5, 2),
    "sin": (-2, 2),
    "cos": (-2, 2),
    "tan": (-1, 1),
    "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8),
    "atan": (-2, 2),
    "sinh": (-1, 1),
    "cosh": (-1, 1),
    "tanh": (-2, 2),
    "asinh": (-2, 2),
    "acosh": (1.5, 3),
    "atanh": (-0.8, 0.8),
    "sigmoid": (-3, 3),
    "reciprocal": (0.5, 2),
    "square": (-1, 1),
    "erf": (-1.5, 1.5),
    "neg": (-1, 1),
    "relu": (0.2, 1),
    "abs": (0.2, 1),
    "sign": (0.2, 1),
    "floor": (0.1, 0.4),
    "ceil": (0.1, 0.4),
    "round": (0.1, 0.4),
    "trunc": (0.1, 0.4),
    "frac": (0.1, 0.4),
}

OPS = {
    "add": (lambda a, b: ember.add(a, b, alpha=2), [(2, 3), (3,)]),
    "sub": (lambda a, b: a - b, [(2, 3), (2, 1)]),
    "mul": (lambda a, b: a * b, [(2, 3), (3,)]),
    "mul_scalar": (lambda a: a * 3.0, [(2, 3)]),
    "div": (lambda a, b: a / b, [(2, 3), ((3,), 0.5, 2)]),
    "rdiv_scalar": (lambda a: 2.0 / a, [((2, 3), 0.5, 2)]),
    "pow_scalar": (lambda a: a**3, [(2, 3)]),
    "pow_frac": (lambda a: ember.pow(a, 2.5), [((2, 3), 0.5, 2)]),
    "pow_tensor": (lambda a, b: ember.pow(a, b), [((2, 3), 0.5, 2), (2, 3)]),
    "rpow_operator": (lambda b: 2.0**b, [(2, 3)]),
    "pow_scalar_base": (lambda b: ember.pow(2.0, b), [(2, 3)]),
    "maximum": (lambda a, b: ember.maximum(a, b), [(2, 3), (2, 3)]),
    "minimum": (lambda a, b: ember.minimum(a, b), [(2, 3), (2, 3)]),
    "atan2": (lambda a, b: ember.atan2(a, b), [(2, 3), ((2, 3), 0.5, 2)]),
    "where": (lambda a, b: ember.where(a > 0, a * a, b), [(2, 3), (2, 3)]),
    "clamp": (lambda a: ember.clamp(a * a, 0.1, 0.5), [(2, 3)]),
    "clamp_tensor_bounds": (
        lambda a, lo, hi: ember.clamp(a, lo, hi),
        [(4,), ((4,), -2, -1.5), ((4,), 1.5, 2)],
    ),
    "lerp_scalar_weight": (lambda a, b: ember.lerp(a, b, 0.3), [(2, 3), (2, 3)]),
    "lerp_tensor_weight": (lambda a, b, w: ember.lerp(a, b, w), [(2, 3), (2, 3), (2, 3)]),
    "fmod": (lambda a: ember.fmod(a * 3, 1.7), [((2, 3), 0.1, 0.5)]),
    "remainder": (lambda a: ember.remainder(a * 3, 1.7), [((2, 3), 0.1, 0.5)]),
    # reductions
    "sum": (lambda a: (a * a).sum(), [(2, 3)]),
    "sum_dim": (lambda a: (a * a).sum(1, keepdim=True), [(2, 3)]),
    "nansum": (lambda a: ember.nansum(a * a, 0), [(2, 3)]),
    "mean": (lambda a: (a * a).mean(), [(2, 3)]),
    "mean_dim": (lambda a: (a * a).mean(0), [(2, 3)]),
    "prod": (lambda a: a.prod(), [(2, 3)]),
    "prod_dim": (lambda a: a.prod(1), [(2, 3)]),
    "max": (lambda a: (a * a).max(), [(2, 3)]),
    "max_dim": (lambda a: (a * a).max(1)[0], [(2, 3)]),
    "min_dim": (lambda a: (a * a).min(0).values, [(2, 3)]),
    "amax": (lambda a: ember.amax(a * a, 1), [(2, 3)]),
    "amin": (lambda a: ember.amin(a * a, 0), [(2, 3)]),
    "median": (lambda a: (a * a).median(), [(2, 3)]),
    "std": (lambda a: a.std(), [(2, 3)]),
    "std_dim": (lambda a: a.std(1), [(2, 3)]),
    "var": (lambda a: a.var(0, correction=0), [(2, 3)]),
    "var_mean": (lambda a: ember.var_mean(a, 1), [(2, 3)]),
    "std_mean": (lambda a: ember.std_mean(a), [(2, 3)]),
    "norm": (lambda a: a.norm(), [(2, 3)]),
    "norm_p1": (lambda a: a.norm(p=1), [((2, 3), 0.2, 1)]),
    "norm_p3_dim": (lambda a: a.norm(p=3, dim=1), [(2, 3)]),
    "norm_inf": (lambda a: ember.norm(a * a, p=float("inf")), [(2, 3)]),
    "logsumexp": (lambda a: ember.logsumexp(a, 1), [(2, 3)]),
    "softmax": (lambda a: ember.softmax(a, 1), [(2, 3)]),
    "log_softmax": (lambda a: ember.log_softmax(a, 0), [(2, 3)]),
    "cumsum": (lambda a: ember.cumsum(a * a, 1), [(2, 3)]),
    "cumprod": (lambda a: ember.cumprod(a, 1), [(2, 3)]),
    # linear algebra
    "matmul_mm": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "matmul_mv": (lambda a, b: ember.matmul(a, b), [(2, 3), (3,)]),
    "matmul_vm": (lambda a, b: ember.matmul(a, b), [(3,), (3, 2)]),
    "matmul_batched": (lambda a, b: a @ b, [(2, 2, 3), (3, 2)]),
    "matmul_broadcast": (lambda a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)]),
    "mm": (lambda a, b: ember.mm(a, b), [(2, 3), (3, 2)]),
    "bmm": (lambda a, b: ember.bmm(a, b), [(2, 2, 3), (2, 3, 2)]),
    "dot": (lambda a, b: ember.dot(a, b), [(3,), (3,)]),
    "vdot": (lambda a, b: ember.vdot(a, b), [(3,), (3,)]),
    "mv": (lambda a, b: ember.mv(a, b), [(2, 3), (3,)]),
    "outer": (lambda a, b: ember.outer(a, b), [(3,), (2,)]),
    "ger": (lambda a, b: ember.ger(a, b), [(3,), (2,)]),
    "inner": (lambda a, b: ember.inner(a, b), [(2, 3), (4, 3)]),
    "addmm": (lambda c, a, b: ember.addmm(c, a, b, beta=0.5, alpha=2), [(2, 2), (2, 3), (3, 2)]),
    "addmv": (lambda c, a, b: ember.addmv(c, a, b, beta=0.5, alpha=2), [(2,), (2, 3), (3,)]),
    "baddbmm": (lambda c, a, b: ember.baddbmm(c, a, b, alpha=2), [(2, 2, 2), (2, 2, 3), (2, 3, 2)]),
    "einsum_mm": (lambda a, b: ember.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "einsum_trace": (lambda a: ember.einsum("ii->", a * a), [(3, 3)]),
    "einsum_batch": (lambda a, b: ember.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 2)]),
    "tensordot": (lambda a, b: ember.tensordot(a, b, dims=([1], [0])), [(2, 3), (3, 2)]),
    "kron": (lambda a, b: ember.kron(a, b), [(2, 2), (2, 2)]),
    "trace": (lambda a: ember.trace(a * a), [(3, 3)]),
    "cross": (lambda a, b: ember.cross(a, b, dim=1), [(2, 3), (2, 3)]),
    # shape and indexing (each after a square, so the second derivative is not zero)
    "reshape": (lambda a: (a * a).reshape(3, 2), [(2, 3)]),
    "transpose": (lambda a: (a * a).transpose(0, 1), [(2, 3)]),
    "permute": (lambda a: (a * a).permute(1, 0), [(2, 3)]),
    "expand": (lambda a: (a * a).expand(2, 3), [(1, 3)]),
    "cat": (lambda a, b: ember.cat([a * a, b * b], 0), [(2, 3), (1, 3)]),
    "stack": (lambda a, b: ember.stack([a * a, b * a], 0), [(2, 3), (2, 3)]),
    "split": (lambda a: ember.split(a * a, 1, 1)[1], [(2, 3)]),
    "unbind": (lambda a: ember.unbind(a * a, 0)[1], [(2, 3)]),
    "flip_roll": (lambda a: ember.roll(ember.flip(a * a, [0]), 1, 1), [(2, 3)]),
    "getitem_slice": (lambda a: (a * a)[:, 1:], [(2, 3)]),
    "getitem_advanced": (lambda a: (a * a)[ember.tensor([2, 0, 1, 2])], [(3, 2)]),
    "index_select": (lambda a: ember.index_select(a * a, 0, ember.tensor([2, 0, 2])), [(3, 2)]),
    "gather": (lambda a: ember.gather(a * a, 1, ember.tensor([[0, 2], [1, 1]])), [(2, 3)]),
    "masked_fill": (lambda a: ember.masked_fill(a * a, a > 0, 0.5), [(2, 3)]),
    "tril": (lambda a: ember.tril(a * a), [(3, 3)]),
    "diagonal": (lambda a: ember.diagonal(a * a), [(3, 3)]),
    "take": (lambda a: ember.take(a * a, ember.tensor([0, 5, 2])), [(2, 3)]),
    "scatter_add": (
        lambda a, b: ember.scatter_add(a * a, 0, ember.tensor([[0, 1, 0]]), b * b),
        [(2, 3), (1, 3)],
    ),
}

# Known op bugs (reported; the op modules are owned elsewhere).
KNOWN_FAILURES: dict = {}


def _inputs(specs, rng):
    out = []
    for spec in specs:
        if isinstance(spec[0], tuple):
            shape, lo, hi = spec
        else:
            shape, lo, hi = spec, -1.0, 1.0
        out.append(_rand(rng, *shape, lo=lo, hi=hi))
    return tuple(out)


def _cases():
    for name, (lo, hi) in UNARY.items():
        yield pytest.param(
            (lambda n: lambda a: getattr(ember, n)(a))(name), [((2, 3), lo, hi)], id=name
        )
    for name, (fn, specs) in OPS.items():
        marks = ()
        if name in KNOWN_FAILURES:
            marks = pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=False)
        yield pytest.param(fn, specs, id=name, marks=marks)


@pytest.mark.parametrize("fn, specs", list(_cases()))
def test_gradgradcheck(fn, specs):
    rng = np.random.default_rng(7)
    inputs = _inputs(specs, rng)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_gradgradcheck_with_given_grad_outputs_and_failure_reporting():
    x = _rand(np.random.default_rng(8), 3)
    v = _t(ember, [1.0, -2.0, 0.5], True)
    assert gradgradcheck(lambda a: a.tanh() * a, (x,), v)
    assert gradgradcheck(lambda a: a.tanh() * a, [x], [v])
    # A first-order-only function (the gradient is detached): gradgradcheck catches it.
    detached = lambda a: a * a.detach() ** 2 / 3 + (a - a.detach()) * 0  # noqa: E731
    assert gradcheck(lambda a: a**3 / 3, (x,))
    assert not gradgradcheck(detached, (x,), raise_exception=False)
    with pytest.raises(ember.autograd.GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(detached, (x,))


def test_gradgradcheck_signature_matches_torch():
    import inspect

    ours = inspect.signature(gradgradcheck)
    theirs = inspect.signature(torch.autograd.gradgradcheck)
    assert list(ours.parameters) == list(theirs.parameters)
    for name, p in theirs.parameters.items():
        assert ours.parameters[name].kind == p.kind
        assert ours.parameters[name].default == p.default
