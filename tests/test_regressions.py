"""Wrong results and crashes once found by differential testing against torch, each pinned
by the program that found it (float64, values and gradients to 1e-10 or better)."""

import importlib

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is the reference")


def _fw(lib):
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


def _same(run):
    """``run(lib)`` returns nested lists/numbers; ember's equal torch's (or just run)."""
    mine = run(ember)
    if torch is not None:
        theirs = run(torch)
        np.testing.assert_allclose(
            np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float), rtol=1e-10, atol=1e-12
        )
    return mine


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("shape_b", [(2,), (3, 2)])
def test_rsub_gives_both_operands_gradients(create_graph, shape_b):
    def run(T):
        a = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
        b = T.ones(shape_b, dtype=T.float64, requires_grad=True)
        out = T.rsub(a, b, alpha=3) * T.arange(1.0, 3.0, dtype=T.float64)
        ga, gb = T.autograd.grad(out.sum(), (a, b), create_graph=create_graph)
        return ga.tolist() + gb.reshape(-1).tolist()

    got = _same(run)
    assert got[2:] != [0.0] * len(got[2:])


ZERO_D = {
    "trace": lambda T, m, v: T.trace(m),
    "vdot": lambda T, m, v: T.vdot(v, v * 2),
    "inner": lambda T, m, v: T.inner(v, v),
    "dot": lambda T, m, v: T.dot(v, v),
    "einsum": lambda T, m, v: T.einsum("ij,ij->", m, m),
    "tensordot": lambda T, m, v: T.tensordot(m, m, dims=2),
    "det": lambda T, m, v: T.linalg.det(m + 3 * T.eye(3, dtype=T.float64)),
    "slogdet": lambda T, m, v: T.linalg.slogdet(m + 3 * T.eye(3, dtype=T.float64))[1],
    "logdet": lambda T, m, v: T.logdet(m + 3 * T.eye(3, dtype=T.float64)),
    "sum": lambda T, m, v: m.sum(),
}


@pytest.mark.parametrize("name", list(ZERO_D))
def test_zero_d_results_times_zero_d_tensors_backpropagate(name):
    rng = np.random.default_rng(0)
    m0, v0 = rng.standard_normal((3, 3)), rng.standard_normal(3)

    def run(T):
        m = T.tensor(m0, requires_grad=True)
        v = T.tensor(v0, requires_grad=True)
        out = ZERO_D[name](T, m, v) * T.tensor(0.5, dtype=T.float64)
        gm, gv = T.autograd.grad(out.sum(), (m, v), allow_unused=True, materialize_grads=True)
        out2 = ZERO_D[name](T, m, v) * T.tensor(0.5, dtype=T.float64)
        (g2,) = T.autograd.grad(
            out2, m, create_graph=True, allow_unused=True, materialize_grads=True
        )
        return gm.tolist() + [gv.tolist()] + g2.tolist()

    _same(run)


def test_gelu_of_a_zero_d_tensor():
    def run(T):
        x = T.tensor(0.5, dtype=T.float64, requires_grad=True)
        out = [T.nn.functional.gelu(x), T.nn.functional.gelu(x, approximate="tanh")]
        grads = [T.autograd.grad(o, x)[0].item() for o in out]
        return [o.item() for o in out] + grads + [T.erf(x).item()]

    _same(run)


SVD_FUNCTIONS = {
    "svdvals": lambda T, A: T.linalg.svdvals(A),
    "nuclear norm": lambda T, A: T.linalg.matrix_norm(A, ord="nuc"),
    "spectral norm": lambda T, A: T.linalg.matrix_norm(A, ord=2),
    "svd U and S": lambda T, A: _svd_uv(T, A, False)[0],
    "svd Vh": lambda T, A: _svd_uv(T, A, False)[1],
    "svd full_matrices": lambda T, A: _svd_uv(T, A, True)[0],
}


def _svd_uv(T, A, full):
    U, S, Vh = T.linalg.svd(A, full_matrices=full)
    k = S.shape[-1]
    # Sign-invariant functions of the singular vectors (each is defined up to sign).
    return ((U[..., :k] ** 4).sum(-2) + S**2, (Vh[..., :k, :] ** 4).sum(-1))


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
@pytest.mark.parametrize("name", list(SVD_FUNCTIONS))
def test_svd_second_derivatives(name, shape):
    rng = np.random.default_rng(1)
    a0 = rng.standard_normal(shape)
    w0 = None

    def run(T):
        nonlocal w0
        A = T.tensor(a0, requires_grad=True)
        y = SVD_FUNCTIONS[name](T, A)
        if w0 is None:
            w0 = rng.standard_normal(tuple(y.shape))
        (g,) = T.autograd.grad((y * T.tensor(w0)).sum(), A, create_graph=True)
        assert g.requires_grad
        (gg,) = T.autograd.grad((g * T.tensor(a0[..., ::-1].copy())).sum(), A)
        return g.tolist() + gg.tolist()

    got = _same(run)
    # Against central differences of the first derivative too (torch-free check).
    n = int(np.prod(shape))
    first, second = np.asarray(got[: len(got) // 2]), np.asarray(got[len(got) // 2 :])
    v = a0[..., ::-1].copy()

    def grad_at(a):
        A = ember.tensor(a, requires_grad=True)
        y = SVD_FUNCTIONS[name](ember, A)
        (g,) = ember.autograd.grad((y * ember.tensor(w0)).sum(), A)
        return (g.numpy() * v).sum()

    eps = 1e-6
    num = np.zeros(n)
    for i in range(n):
        d = np.zeros(n)
        d[i] = eps
        num[i] = (grad_at(a0 + d.reshape(shape)) - grad_at(a0 - d.reshape(shape))) / (2 * eps)
    np.testing.assert_allclose(second.reshape(-1), num, rtol=1e-5, atol=1e-6)
    assert first.shape == second.shape


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
def test_svd_forward_mode(shape):
    rng = np.random.default_rng(2)
    a0, t0 = rng.standard_normal(shape), rng.standard_normal(shape)

    def run(T):
        fw = _fw(T)
        with fw.dual_level():
            A = fw.make_dual(T.tensor(a0), T.tensor(t0))
            y = _svd_uv(T, A, False)
            out = y[0].sum() + y[1].sum() + T.linalg.svdvals(A).sum()
            return fw.unpack_dual(out).tangent.item()

    _same(run)


def _inplace_on_view_tangent(kind):
    def run(lib):
        fw = _fw(lib)
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        b = lib.tensor([0.5, -1.5], dtype=lib.float64)
        with fw.dual_level():
            xd = fw.make_dual(x, lib.ones(2, 2, dtype=lib.float64))
            if kind == "clone_mul_":
                c = xd.clone()
                c[-1].mul_(-1.25)
            elif kind == "select_add_":
                c = xd * 1.0
                c.select(0, 1).add_(fw.make_dual(b, lib.full((2,), 3.0, dtype=lib.float64)))
            elif kind == "slice_exp_":
                c = xd * 2.0
                c[:, 0].exp_()
            else:  # a view of a view, then in place on the inner one
                c = xd.clone()
                c.t()[1].sin_()
            primal, tangent = fw.unpack_dual(c)
            return [primal.tolist(), tangent.tolist()]

    return run


@pytest.mark.parametrize("kind", ["clone_mul_", "select_add_", "slice_exp_", "view_of_view_sin_"])
def test_inplace_on_a_view_updates_the_base_tangent(kind):
    """Forward mode: an in-place op on a view writes its tangent into the base's tangent
    (found: ``c[-1].mul_(-1.25)`` left the base's tangent [[1, 1], [1, 1]])."""
    if kind == "clone_mul_":
        assert _inplace_on_view_tangent(kind)(ember)[1] == [[1.0, 1.0], [-1.25, -1.25]]
    _same(_inplace_on_view_tangent(kind))


@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy", "bce", "bce_with_logits"])
@pytest.mark.parametrize("combine", ["z + z", "z * z"])
def test_a_zero_d_loss_used_twice_backpropagates(loss, combine):
    """Found: two 0-d raw gradients summed in the engine gave a NumPy scalar, which sent the
    loss's backward down its recorded (Tensor) path: AttributeError / TypeError."""

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor([[0.5, -1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        ones = lib.ones(1, 3, dtype=lib.float64)
        z = {
            "nll_loss": lambda: F.nll_loss(x, lib.tensor([1])),
            "cross_entropy": lambda: F.cross_entropy(x, lib.tensor([1])),
            "bce": lambda: F.binary_cross_entropy(x.sigmoid(), ones),
            "bce_with_logits": lambda: F.binary_cross_entropy_with_logits(x, ones),
        }[loss]()
        out = z + z if combine == "z + z" else z * z
        return lib.autograd.grad(out, x)[0].tolist()

    _same(run)
