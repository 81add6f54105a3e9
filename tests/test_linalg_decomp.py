"""ember.linalg's decompositions and the rest of torch.linalg (qr, eigh, pinv, lstsq,
solve_triangular, lu*, matrix_exp, ...): return types, the fields torch fills, batching,
float32, legacy top-level aliases and torch's error messages. Values, grad_fn names,
gradients, forward mode and double backward of each op are in tests/opdb/linalg_namespace.py."""

import warnings

import numpy as np
import pytest

import ember
from numgrad import numgrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
A = RNG.normal(size=(2, 4, 3))
SQ = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
B = RNG.normal(size=(2, 4, 2))


def _both(fn, *arrays, dtype=np.float64):
    e = fn(ember, *[ember.tensor(a.astype(dtype)) for a in arrays])
    t = fn(torch, *[torch.tensor(a.astype(dtype)) for a in arrays])
    return e, t


def _close(e, t, tol=1e-10):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "name, fn, arrays",
    [
        ("qr", lambda m, a: tuple(m.linalg.qr(a)), [A]),
        ("qr_complete", lambda m, a: tuple(m.linalg.qr(a, mode="complete")), [A]),
        ("qr_r", lambda m, a: tuple(m.linalg.qr(a, mode="r")), [A]),
        ("eigvalsh", lambda m, a: (m.linalg.eigvalsh(a + a.mT),), [SQ]),
        ("pinv", lambda m, a: (m.linalg.pinv(a),), [A]),
        ("pinv_atol", lambda m, a: (m.linalg.pinv(a, atol=1.5, rtol=0.1),), [A]),
        ("lu_factor", lambda m, a: tuple(m.linalg.lu_factor(a)), [SQ]),
        ("lu_factor_ex", lambda m, a: tuple(m.linalg.lu_factor_ex(a)), [A]),
        ("lu", lambda m, a: tuple(m.linalg.lu(a)), [A]),
        ("lu_wide", lambda m, a: tuple(m.linalg.lu(a.mT)), [A]),
        ("matrix_rank", lambda m, a: (m.linalg.matrix_rank(a), m.linalg.matrix_rank(a, 2.0)), [A]),
        ("matrix_power_0", lambda m, a: (m.linalg.matrix_power(a, 0),), [SQ]),
        ("matrix_exp", lambda m, a: (m.matrix_exp(a),), [SQ * 0.3]),
        ("cond_fro", lambda m, a: (m.linalg.cond(a, "fro"),), [SQ]),
        ("inv_ex", lambda m, a: tuple(m.linalg.inv_ex(a)), [SQ]),
        ("solve_ex", lambda m, a: tuple(m.linalg.solve_ex(a, a[..., :1])), [SQ]),
        ("cholesky_ex", lambda m, a: tuple(m.linalg.cholesky_ex(a @ a.mT)), [SQ]),
        ("vecdot", lambda m, a: (m.linalg.vecdot(a, a, dim=1),), [A]),
        ("svd_legacy", lambda m, a: tuple(x.abs() for x in m.svd(a)), [A]),
        ("svd_legacy_full", lambda m, a: tuple(x.abs() for x in m.svd(a, some=False)[1:]), [A]),
        ("pinverse", lambda m, a: (m.pinverse(a),), [A]),
    ],
)
def test_values_match_torch(name, fn, arrays, dtype):
    e, t = _both(fn, *arrays, dtype=dtype)
    assert len(e) == len(t)
    for x, y in zip(e, t):
        _close(x, y, 1e-10 if dtype == np.float64 else 2e-4)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_fills_fields_as_torch(driver):
    e, t = _both(lambda m, a, b: m.linalg.lstsq(a, b, driver=driver), A, B)
    assert type(e).__name__ == type(t).__name__ == "linalg_lstsq"
    for f in ("solution", "residuals", "rank", "singular_values"):
        _close(getattr(e, f), getattr(t, f), 1e-9)


def test_lstsq_vector_rhs_and_wide():
    e, t = _both(lambda m, a, b: m.linalg.lstsq(a, b).solution, A[0], B[0, :, 0])
    _close(e, t)
    e, t = _both(lambda m, a, b: m.linalg.lstsq(a.mT, b, driver="gelsd"), A, B[:, :3, :])
    for x, y in zip(e, t):
        _close(x, y, 1e-9)


def test_return_types_and_legacy_aliases():
    a = ember.tensor(SQ)
    assert type(ember.linalg.qr(a)).__name__ == "linalg_qr"
    assert type(ember.linalg.eigh(a)).__name__ == "linalg_eigh"
    assert type(ember.linalg.lu(a)).__name__ == "linalg_lu"
    assert type(ember.svd(a)).__name__ == "svd"
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        q = a.qr()
    assert type(q).__name__ == "qr"
    np.testing.assert_allclose((q.Q @ q.R).numpy(), SQ, atol=1e-12)
    U, S, V = ember.svd(a)
    np.testing.assert_allclose((U * S[..., None, :] @ V.mT).numpy(), SQ, atol=1e-12)
    assert ember.linalg.lu_factor(a).pivots.dtype == ember.int32
    # The inverse has LAPACK's column-major layout, as torch's.
    assert ember.linalg.inv(a).stride() == torch.linalg.inv(torch.tensor(SQ)).stride()


def test_lu_solve_variants_match_torch():
    b = RNG.normal(size=(2, 3, 2))
    for kw in ({}, {"adjoint": True}, {"left": False}):
        rhs = b if kw.get("left", True) else b.swapaxes(-1, -2).copy()

        def fn(m, a, r, kw=kw):
            LU, piv = m.linalg.lu_factor(a)
            return m.linalg.lu_solve(LU, piv, r, **kw)

        _close(*_both(fn, SQ, rhs))


def test_solve_triangular_singular_gives_inf_like_torch():
    a = np.triu(RNG.normal(size=(3, 3)))
    a[1, 1] = 0
    b = RNG.normal(size=(3, 1))
    e, t = _both(lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True), a, b)
    assert np.array_equal(np.isfinite(e.numpy()), np.isfinite(t.numpy()))


def test_cond_1_gradient_matches_central_differences():
    a0 = SQ[0]
    x = ember.tensor(a0, requires_grad=True)
    ember.linalg.cond(x, 1).backward()
    (num,) = numgrad(lambda t: ember.linalg.cond(t, 1), [a0.copy()], [np.ones(())])
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-6, atol=1e-7)


def test_matrix_power_negative_and_multi_dot_order():
    e, t = _both(lambda m, a: m.linalg.matrix_power(a, -3), SQ)
    _close(e, t, 1e-9)
    mats = [RNG.normal(size=s) for s in ((5, 2), (2, 6), (6, 3), (3, 4))]
    e, t = _both(lambda m, *ms: m.linalg.multi_dot(ms), *mats)
    _close(e, t)


def test_eigh_gradient_at_repeated_eigenvalues_is_not_finite_like_torch():
    a = np.diag([1.0, 1.0, 2.0])

    def grads(m):
        x = m.tensor(a, requires_grad=True)
        _, V = m.linalg.eigh(x)
        (V.sum(0) ** 2).sum().backward()
        return np.isfinite(x.grad.numpy()).all()

    assert grads(ember) == grads(torch) is np.False_


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.linalg.qr(m.ones(3)),
        lambda m: m.linalg.qr(m.ones(3, 3), mode="x"),
        lambda m: m.linalg.eigh(m.ones(4, 3)),
        lambda m: m.linalg.eigh(m.eye(3), UPLO="X"),
        lambda m: m.linalg.solve_triangular(m.ones(4, 3), m.ones(4, 1), upper=True),
        lambda m: m.linalg.matrix_power(m.ones(4, 3), 2),
        lambda m: m.linalg.matrix_exp(m.ones(4, 3)),
        lambda m: m.linalg.lu_factor(m.zeros(3, 3)),
        lambda m: m.linalg.lstsq(m.ones(4, 3), m.ones(4, 1), driver="foo"),
    ],
)
def test_errors_match_torch(fn):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as mine:
        fn(ember)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize(
    "mode, shape",
    [("r", (3, 3)), ("complete", (4, 3))],
)
def test_qr_backward_errors_match_torch(mode, shape):
    a = RNG.normal(size=shape)
    msgs = []
    for m in (ember, torch):
        x = m.tensor(a, requires_grad=True)
        with warnings.catch_warnings(), pytest.raises(RuntimeError) as err:
            Q, R = m.linalg.qr(x, mode=mode)
            R.sum().backward()
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]
