"""ember.linalg: values, grad_fn names, gradients (torch and finite differences),
forward-mode JVPs, batching and torch's error messages."""

import math

import numpy as np
import pytest

import ember
from numgrad import numgrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
M = RNG.normal(size=(3, 4))
B = RNG.normal(size=(2, 3, 2))
SPD = A @ A.swapaxes(-1, -2) + np.eye(3)


def _first(y):
    return y[-1] if isinstance(y, tuple) else y


CASES = [
    ("inv", lambda lib, a: lib.linalg.inv(a), [A]),
    ("inverse", lambda lib, a: lib.inverse(a), [A[0]]),
    ("tensor_inverse", lambda lib, a: a.inverse(), [A]),
    ("det", lambda lib, a: lib.linalg.det(a), [A]),
    ("det_top", lambda lib, a: lib.det(a), [A[1]]),
    ("slogdet", lambda lib, a: lib.linalg.slogdet(a), [A]),
    ("logdet", lambda lib, a: lib.logdet(a), [SPD]),
    ("solve", lambda lib, a, b: lib.linalg.solve(a, b), [A, B]),
    ("solve_vec", lambda lib, a, b: lib.linalg.solve(a, b), [A, B[0, :, 0]]),
    (
        "solve_right",
        lambda lib, a, b: lib.linalg.solve(a, b, left=False),
        [A, np.ascontiguousarray(B.swapaxes(1, 2))],
    ),
    # Symmetrised input: finite differences then see the symmetric gradient torch returns.
    ("cholesky", lambda lib, a: lib.linalg.cholesky((a + a.mT) / 2), [SPD]),
    ("cholesky_up", lambda lib, a: lib.linalg.cholesky((a + a.mT) / 2, upper=True), [SPD[0]]),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), [M]),
    ("norm", lambda lib, a: lib.linalg.norm(a), [A]),
    ("norm_dim", lambda lib, a: lib.linalg.norm(a, 3, dim=1), [A]),
    ("norm_nuc", lambda lib, a: lib.linalg.norm(a, "nuc"), [M]),
    ("vector_norm", lambda lib, a: lib.linalg.vector_norm(a, 1, dim=(0, 1)), [A]),
    ("mn_fro", lambda lib, a: lib.linalg.matrix_norm(a), [A]),
    ("mn_nuc_keep", lambda lib, a: lib.linalg.matrix_norm(a, "nuc", (0, 2), True), [A]),
    ("mn_2", lambda lib, a: lib.linalg.matrix_norm(a, 2), [A]),
    ("mn_-2", lambda lib, a: lib.linalg.matrix_norm(a, -2), [A]),
    ("mn_1", lambda lib, a: lib.linalg.matrix_norm(a, 1), [A]),
    ("mn_-1_keep", lambda lib, a: lib.linalg.matrix_norm(a, -1, keepdim=True), [A]),
    ("mn_inf", lambda lib, a: lib.linalg.matrix_norm(a, math.inf, (2, 0)), [A]),
    ("mn_-inf", lambda lib, a: lib.linalg.matrix_norm(a, -math.inf), [A]),
]


def _run(lib, f, arrays):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    y = _first(f(lib, *ts))
    w = np.random.default_rng(3).uniform(0.5, 1.5, tuple(y.shape))
    y.backward(lib.tensor(w))
    name = type(y.grad_fn).__name__
    return y.detach().numpy(), name, [t.grad.numpy() for t in ts], w


@pytest.mark.parametrize("name,f,arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_and_numgrad(name, f, arrays):
    v, n, grads, w = _run(ember, f, arrays)
    tv, tn, tgrads, _ = _run(torch, f, arrays)
    np.testing.assert_allclose(v, tv, rtol=1e-10, atol=1e-12)
    assert n == tn
    for g, tg in zip(grads, tgrads):
        np.testing.assert_allclose(g, tg, rtol=1e-8, atol=1e-10)
    for g, ng in zip(grads, numgrad(lambda *xs: _first(f(ember, *xs)), arrays, [w])):
        np.testing.assert_allclose(g, ng, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,f,arrays", CASES, ids=[c[0] for c in CASES])
def test_forward_ad_matches_torch(name, f, arrays):
    tangents = [np.random.default_rng(10 + i).normal(size=a.shape) for i, a in enumerate(arrays)]
    res = []
    for lib in (ember, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            duals = [fwad.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
            y = _first(f(lib, *duals))
            res.append(fwad.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-8, atol=1e-10)


def test_double_backward_inv_det():
    for f in (lambda lib, a: lib.linalg.inv(a).sum(), lambda lib, a: lib.linalg.det(a)):
        out = []
        for lib in (ember, torch):
            a = lib.tensor(A[0], requires_grad=True)
            (g,) = lib.autograd.grad(f(lib, a), a, create_graph=True)
            (g2,) = lib.autograd.grad((g * g).sum(), a)
            out.append(g2.numpy())
        np.testing.assert_allclose(out[0], out[1], rtol=1e-8)


def _cofactors3(a):
    """The cofactor matrix ``adj(A)^T`` of a 3x3 matrix from its exact 2x2 minors."""
    c = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            m = np.delete(np.delete(a, i, 0), j, 1)
            c[i, j] = (-1) ** (i + j) * (m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0])
    return c


def test_singular_det_gradient_and_logdet_values():
    # At a singular matrix torch's det gradient depends on its LAPACK path and the CPU (it
    # returns zeros on some machines), so the reference is the closed form: d det(A)/dA is
    # the cofactor matrix adj(A)^T, which is well-defined (and nonzero here: rank 2).
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    cof = _cofactors3(s)  # integer minors: exact
    np.testing.assert_array_equal(cof, [[4, 4, -4], [-2, -2, 2], [0, 0, 0]])
    a = ember.tensor(s, requires_grad=True)
    d = ember.linalg.det(a)
    d.backward()
    # Row 2 is twice row 1 and every entry is a small integer, so LU (with any pivoting)
    # eliminates exactly: the determinant is exactly zero on any CPU/BLAS.
    assert d.item() == 0.0
    # ember gets adj(A)^T through an SVD: backward-stable, error ~ eps * |A|^2 ~ 1e-14.
    np.testing.assert_allclose(a.grad.numpy(), cof, rtol=0, atol=1e-10)
    # logdet/slogdet at singular points: det 0, so logdet -inf, sign 0, logabsdet -inf.
    for m in (s, np.zeros((2, 2))):
        assert ember.logdet(ember.tensor(m)).item() == -math.inf
        for r in (ember.slogdet(ember.tensor(m)), ember.linalg.slogdet(ember.tensor(m))):
            assert r.sign.item() == 0.0 and r.logabsdet.item() == -math.inf
    # A negative determinant (exactly -1) gives NaN, as torch documents for logdet.
    assert math.isnan(ember.logdet(ember.tensor(-np.eye(3))).item())
    # Well-conditioned SPD matrices (det > 0): torch is a well-defined reference.
    e, t = ember.logdet(ember.tensor(SPD)), torch.logdet(torch.tensor(SPD))
    np.testing.assert_allclose(e.numpy(), t.numpy())
    np.testing.assert_allclose(e.numpy(), np.linalg.slogdet(SPD)[1])
    r = ember.slogdet(ember.tensor(-np.eye(2)))
    assert repr(r).startswith("torch.return_types.slogdet(") and r.sign.item() == 1.0
    assert type(ember.linalg.slogdet(ember.tensor(A))).__name__ == "linalg_slogdet"


ERRORS = [
    lambda lib: lib.linalg.inv(lib.zeros(3, 3)),
    lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2.0], [2.0, 4.0]])),
    lambda lib: lib.linalg.inv(lib.stack([lib.eye(2), lib.zeros(2, 2)])),
    lambda lib: lib.linalg.inv(lib.ones(2, 3)),
    lambda lib: lib.linalg.inv(lib.ones(3)),
    lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.inverse(lib.zeros(2, 3, 3)),
    lambda lib: lib.linalg.det(lib.ones(2, 3)),
    lambda lib: lib.linalg.det(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.slogdet(lib.ones(2, 3)),
    lambda lib: lib.logdet(lib.ones(2, 3)),
    lambda lib: lib.linalg.solve(lib.zeros(2, 2), lib.ones(2)),
    lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(2)),
    lambda lib: lib.linalg.solve(lib.ones(2, 3), lib.ones(2)),
    lambda lib: lib.linalg.cholesky(-lib.eye(2)),
    lambda lib: lib.linalg.cholesky(lib.tensor([[[1.0, 0], [0, 1]], [[1.0, 2], [2, 1]]])),
    lambda lib: lib.linalg.cholesky(lib.ones(2, 3)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3)),
    lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), "abc"),
    lambda lib: lib.linalg.norm(lib.ones(3, 3), "fro", dim=1),
    lambda lib: lib.linalg.norm(lib.ones(2, 3, 4), "fro"),
    lambda lib: lib.linalg.vector_norm(lib.ones(3), "fro"),
]


@pytest.mark.parametrize("f", ERRORS)
def test_errors_match_torch(f):
    with pytest.raises(Exception) as te:
        f(torch)
    with pytest.raises(
        RuntimeError if isinstance(te.value, RuntimeError) else type(te.value)
    ) as ee:
        f(ember)
    assert str(ee.value) == str(te.value)
    assert type(ee.value).__name__ == type(te.value).__name__


def test_linalg_error_is_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))


# -- eig, eigvals, householder_product ----------------------------------------------------------

# Non-symmetric, with well-separated eigenvalues: a complex pair (about 1 +- 2i) and a real one.
EIG = np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 4.0]])
EIG = EIG + 0.2 * RNG.normal(size=(2, 3, 3))


def test_eig_values_match_torch_up_to_phase():
    for dt, cdt in ((np.float64, "torch.complex128"), (np.float32, "torch.complex64")):
        r = ember.linalg.eig(ember.tensor(EIG.astype(dt)))
        t = torch.linalg.eig(torch.tensor(EIG.astype(dt)))
        assert repr(r).split("tensor")[0] == repr(t).split("tensor")[0]
        assert repr(r).startswith("torch.return_types.linalg_eig(\neigenvalues=")
        assert str(r.eigenvalues.dtype) == str(r.eigenvectors.dtype) == cdt
        L, V = r.eigenvalues.numpy(), r.eigenvectors.numpy()
        tol = 1e-12 if dt == np.float64 else 1e-5
        # A V = V diag(L), unit-norm columns, and the same (sorted) spectrum as torch
        np.testing.assert_allclose(EIG.astype(dt) @ V, V * L[..., None, :], atol=10 * tol)
        np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, atol=tol)
        for b in range(2):
            np.testing.assert_allclose(
                np.sort_complex(L[b]), np.sort_complex(t.eigenvalues.numpy()[b]), atol=10 * tol
            )
        # Same LAPACK algorithm: same order, same |V| (phases may differ)
        np.testing.assert_allclose(L, t.eigenvalues.numpy(), atol=10 * tol)
        np.testing.assert_allclose(np.abs(V), np.abs(t.eigenvectors.numpy()), atol=10 * tol)
    e = ember.linalg.eigvals(ember.tensor(EIG))
    np.testing.assert_allclose(e.numpy(), torch.linalg.eigvals(torch.tensor(EIG)).numpy())
    assert e.grad_fn is None
    x = ember.tensor(EIG, requires_grad=True)
    assert type(ember.linalg.eigvals(x).grad_fn).__name__ == "LinalgEigBackward0"
    empty = ember.linalg.eig(ember.zeros(0, 0))
    assert empty.eigenvalues.shape == (0,) and str(empty.eigenvectors.dtype) == "torch.complex64"


def _eig_loss(lib, x):
    L, V = lib.linalg.eig(x)
    w = lib.tensor(np.arange(9.0).reshape(3, 3))
    return (L.real**2 - L.imag).sum() + ((V * V.conj()).real * w).sum()


@pytest.mark.parametrize("complex_input", [False, True])
def test_eig_gradient_matches_torch(complex_input):
    a = EIG[0] + (0.3j * RNG.normal(size=(3, 3)) if complex_input else 0)
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        _eig_loss(lib, x).backward()
        # torch returns a real gradient for a real input (the real part)
        assert str(x.grad.dtype) == ("torch.complex128" if complex_input else "torch.float64")
        grads.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-11)
    if not complex_input:
        (n,) = numgrad(lambda x: _eig_loss(ember, x), [a], [np.array(1.0)])
        np.testing.assert_allclose(grads[0], n, rtol=1e-6, atol=1e-7)


def test_eig_forward_ad_matches_torch():
    tangent = RNG.normal(size=EIG.shape)
    res = []
    for lib in (ember, torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            L, V = lib.linalg.eig(fwad.make_dual(lib.tensor(EIG), lib.tensor(tangent)))
            dL = fwad.unpack_dual(L).tangent
            dV2 = fwad.unpack_dual((V * V.conj()).real).tangent
            res.append((dL.numpy(), dV2.numpy(), str(dL.dtype)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-9, atol=1e-11)
    assert res[0][2] == res[1][2] == "torch.complex128"


def test_eig_backward_raises_when_the_loss_depends_on_the_phase():
    messages = []
    for lib in (ember, torch):
        x = lib.tensor(EIG, requires_grad=True)
        V = lib.linalg.eig(x).eigenvectors
        with pytest.raises(RuntimeError) as e:
            V.real.sum().backward()
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("linalg_eig_backward: The eigenvectors in the complex case")


HH_A = RNG.normal(size=(2, 5, 3))
HH_TAU = RNG.normal(size=(2, 2))


def test_householder_product_is_geqrf_q_and_matches_torch():
    a, tau = torch.geqrf(torch.tensor(HH_A))
    q = ember.linalg.householder_product(ember.tensor(a.numpy()), ember.tensor(tau.numpy()))
    np.testing.assert_allclose(q.numpy(), torch.linalg.qr(torch.tensor(HH_A)).Q.numpy(), atol=1e-12)
    for f in (
        lambda lib, a, t: lib.linalg.householder_product(a, t),
        lambda lib, a, t: lib.orgqr(a, t),
        lambda lib, a, t: a.orgqr(t),
    ):
        out = []
        for lib in (ember, torch):
            x, t = lib.tensor(HH_A, requires_grad=True), lib.tensor(HH_TAU, requires_grad=True)
            y = f(lib, x, t)
            y.backward(lib.tensor(np.cos(np.arange(30.0)).reshape(2, 5, 3)))
            name = type(y.grad_fn).__name__
            out.append((y.detach().numpy(), x.grad.numpy(), t.grad.numpy(), name))
        for e, t in zip(out[0][:3], out[1][:3]):
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)
        assert out[0][3] == out[1][3] == "LinalgHouseholderProductBackward0"
    # complex reflectors: values and gradients
    ac = HH_A[0] + 1j * RNG.normal(size=(5, 3))
    tc = HH_TAU[0] + 1j * RNG.normal(size=2)
    out = []
    for lib in (ember, torch):
        x, t = lib.tensor(ac, requires_grad=True), lib.tensor(tc, requires_grad=True)
        y = lib.linalg.householder_product(x, t)
        (y * lib.tensor(np.arange(15.0).reshape(5, 3) * (1 - 2j))).real.sum().backward()
        out.append([np.array(v.tolist()) for v in (y.detach(), x.grad, t.grad)])
    for e, t in zip(*out):
        np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


EIG_ERRORS = [
    lambda lib: lib.linalg.eig(lib.ones(2, 3)),
    lambda lib: lib.linalg.eig(lib.ones(3)),
    lambda lib: lib.linalg.eig(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.eig(lib.ones(2, 2, dtype=lib.int32)),
    lambda lib: lib.linalg.eig([[1.0]]),
    lambda lib: lib.linalg.eig(lib.full((2, 2), float("nan"))),
    lambda lib: lib.linalg.eig(lib.full((2, 2, 2), float("inf"))),
    lambda lib: lib.linalg.eigvals(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.eigvals(lib.ones(4, 2, 3)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(1)),
    lambda lib: lib.linalg.householder_product(lib.ones(3), lib.ones(1)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2, 1)),
    lambda lib: lib.linalg.householder_product(lib.ones(2, 3, 2), lib.ones(3, 1)),
    lambda lib: lib.linalg.householder_product(
        lib.ones(3, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)
    ),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(())),
    lambda lib: lib.linalg.householder_product([[1.0]], lib.ones(3)),
    lambda lib: lib.orgqr(lib.ones(3, 2), lib.ones(3)),
]


@pytest.mark.parametrize("f", EIG_ERRORS)
def test_eig_householder_errors_match_torch(f):
    test_errors_match_torch(f)
