"""torch.svd_lowrank and torch.pca_lowrank (ember._lowrank) against torch.

Both are randomized (a Gaussian projection drawn from each library's own generator), so they
are compared where the result does not depend on the projection: matrices of rank at most
``q`` (or full rank with ``q = min(m, n)``), whose singular values, reconstruction
``U diag(S) V^H`` and rank-one components ``S_i u_i v_i^H`` are determined, and gradients of
those (the singular values' gradient is ``U diag(w) V^H`` whatever the projection). Errors
are torch's, with torch's messages.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember

torch = pytest.importorskip("torch")


def _low_rank(rng, batch, m, n, k, dtype=np.float64):
    """A ``batch x m x n`` matrix of rank ``k`` with well separated singular values
    (``2k+1, ..., 3``; complex: with random phases)."""
    left = np.linalg.qr(rng.normal(size=(*batch, m, k)))[0]
    right = np.linalg.qr(rng.normal(size=(*batch, n, k)))[0]
    values = np.arange(k, 0, -1, dtype=np.float64) * 2.0 + 1.0
    if np.issubdtype(dtype, np.complexfloating):
        values = values * np.exp(1j * rng.uniform(0, 2 * np.pi, size=(*batch, 1, k)))
    return ((left * values) @ np.swapaxes(right, -1, -2)).astype(dtype)


def _components(U, S, V, k: int) -> np.ndarray:
    """The rank-one parts ``S_i u_i v_i^H`` of the first ``k`` singular triplets (their
    signs and phases cancel)."""
    u, s, v = (x.detach().resolve_conj().numpy() for x in (U, S, V))
    return np.stack(
        [
            s[..., i, None, None] * u[..., :, i, None] * v[..., :, i].conj()[..., None, :]
            for i in range(k)
        ]
    )


def _both(fn, *arrays):
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        out.append(fn(lib, *[lib.tensor(a) for a in arrays]))
    return out


def _check_decomposition(e, t, a, k, tol):
    (eU, eS, eV), (tU, tS, tV) = e, t
    for x, y in zip(e, t):
        assert tuple(x.shape) == tuple(y.shape)
        assert str(x.dtype) == str(y.dtype)
    scale = max(1.0, float(np.abs(a).max()))
    np.testing.assert_allclose(eS.numpy()[..., :k], tS.numpy()[..., :k], rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(eS.numpy()[..., k:], 0, atol=tol * scale)
    recon = (eU @ ember.diag_embed(eS.to(eU.dtype)) @ eV.mT.conj()).numpy()
    np.testing.assert_allclose(recon, a, rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(
        _components(eU, eS, eV, k), _components(tU, tS, tV, k), rtol=tol, atol=tol * scale
    )
    # orthonormal columns where the factor spans the matrix's range
    for F in (eU[..., :k], eV[..., :k]):
        gram = (F.mT.conj() @ F).numpy()
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(k), gram.shape), atol=tol)


@settings(max_examples=40)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2).map(tuple),
    m=st.integers(1, 7),
    n=st.integers(1, 7),
    data=st.data(),
)
def test_svd_lowrank_exact_rank_matches_torch(batch, m, n, data):
    k = data.draw(st.integers(1, min(m, n)), label="rank")
    q = data.draw(st.integers(k, min(m, n) + 2), label="q")
    niter = data.draw(st.sampled_from([None, 0, 1, 2, 3]), label="niter")
    a = _low_rank(np.random.default_rng(m * 100 + n * 10 + k), batch, m, n, k)
    e, t = _both(lambda lib, x: lib.svd_lowrank(x, q=q, niter=niter), a)
    _check_decomposition(e, t, a, k, 1e-8)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-4), (np.complex128, 1e-9)])
@pytest.mark.parametrize("m, n", [(6, 4), (3, 8)])
def test_svd_lowrank_dtypes(dtype, tol, m, n):
    a = _low_rank(np.random.default_rng(3), (2,), m, n, 2, dtype=dtype)
    e, t = _both(lambda lib, x: lib.svd_lowrank(x, q=3), a)
    _check_decomposition(e, t, a, 2, tol)


def test_defaults_q6_niter2():
    a = _low_rank(np.random.default_rng(1), (), 9, 8, 4)
    e, t = _both(lambda lib, x: lib.svd_lowrank(x), a)
    assert tuple(e[1].shape) == tuple(t[1].shape) == (6,)
    _check_decomposition(e, t, a, 4, 1e-8)
    e, t = _both(lambda lib, x: lib.svd_lowrank(x, q=None, niter=None), a)
    _check_decomposition(e, t, a, 4, 1e-8)


def test_svd_lowrank_with_mean_broadcast():
    rng = np.random.default_rng(2)
    a = _low_rank(rng, (2,), 6, 5, 2)
    mean = rng.normal(size=(1, 5))
    e, t = _both(lambda lib, x, mu: lib.svd_lowrank(x + mu, q=2, M=mu), a, mean)
    _check_decomposition(e, t, a, 2, 1e-8)


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("q", [None, 2, 3])
def test_pca_lowrank_matches_torch(center, q):
    rng = np.random.default_rng(4)
    a = _low_rank(rng, (3,), 8, 5, 2)
    a = a - a.mean(axis=-2, keepdims=True)  # centred: the rank stays 2
    offset = rng.normal(size=(3, 1, 5)) if center else 0.0
    e, t = _both(lambda lib, x: lib.pca_lowrank(x, q=q, center=center), a + offset)
    _check_decomposition(e, t, a, 2, 1e-8)


def test_sparse_input():
    a = _low_rank(np.random.default_rng(5), (), 7, 6, 2)
    a[[1, 4]] = 0.0  # sparse rows, still of rank 2
    for fn in (
        lambda lib, x: lib.svd_lowrank(x.to_sparse(), q=3),
        lambda lib, x: lib.svd_lowrank(x.mT.to_sparse(), q=3),
        lambda lib, x: lib.pca_lowrank(x.to_sparse(), q=3, center=False),
    ):
        e, t = _both(fn, a)
        assert all(x.layout == ember.strided for x in e)
        ref = a if fn(ember, ember.tensor(a))[0].shape[0] == 7 else a.T
        _check_decomposition(e, t, ref, 2, 1e-8)


def test_pca_lowrank_sparse_centering_matches_dense():
    a = _low_rank(np.random.default_rng(6), (), 7, 5, 3)
    a[[0, 3]] = 0.0
    ember.manual_seed(0)
    sparse = ember.pca_lowrank(ember.tensor(a).to_sparse(), q=5)[1]
    dense = ember.pca_lowrank(ember.tensor(a), q=5)[1]
    np.testing.assert_allclose(sparse.numpy(), dense.numpy(), atol=1e-9)


def _grads(lib, a, q, weights_s, weights_r, M=None):
    x = lib.tensor(a, requires_grad=True)
    lib.manual_seed(0)
    U, S, V = lib.svd_lowrank(x, q=q, M=None if M is None else lib.tensor(M))
    loss = (S * lib.tensor(weights_s)).sum()
    if weights_r is not None:
        loss = loss + ((U @ lib.diag_embed(S) @ V.mT) * lib.tensor(weights_r)).sum()
    (g,) = lib.autograd.grad(loss, x)
    return g.numpy()


@pytest.mark.parametrize("m, n", [(6, 4), (4, 6), (5, 5)])
def test_singular_value_gradients_match_torch(m, n):
    k = 2
    rng = np.random.default_rng(8)
    a = _low_rank(rng, (2,), m, n, k)
    w = rng.normal(size=(2, k))
    np.testing.assert_allclose(
        _grads(ember, a, k, w, None), _grads(torch, a, k, w, None), atol=1e-8
    )


@pytest.mark.parametrize("m, n", [(6, 4), (4, 6)])
def test_full_rank_gradients_match_torch(m, n):
    # q = min(m, n) of a full-rank matrix: S is its SVD, U diag(S) V^T is the matrix itself
    rng = np.random.default_rng(9)
    a = rng.normal(size=(m, n))
    q = min(m, n)
    ws, wr = rng.normal(size=q), rng.normal(size=(m, n))
    e, t = _grads(ember, a, q, ws, wr), _grads(torch, a, q, ws, wr)
    np.testing.assert_allclose(e, t, atol=1e-8)


def test_gradient_with_mean():
    rng = np.random.default_rng(10)
    a = _low_rank(rng, (), 6, 5, 2)
    mean = rng.normal(size=(6, 5))
    w = rng.normal(size=2)
    np.testing.assert_allclose(
        _grads(ember, a + mean, 2, w, None, M=mean),
        _grads(torch, a + mean, 2, w, None, M=mean),
        atol=1e-8,
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.svd_lowrank(lib.ones(3, 4, dtype=lib.int64), q=2),
        lambda lib: lib.svd_lowrank(lib.ones(3, 4, dtype=lib.bfloat16), q=2),
        lambda lib: lib.svd_lowrank(lib.ones(3), q=2),
        lambda lib: lib.svd_lowrank(lib.ones(3, 4), M=lib.ones(2, 4)),
        lambda lib: lib.pca_lowrank(lib.ones(3, 4), q=5),
        lambda lib: lib.pca_lowrank(lib.ones(3, 4), q=-1),
        lambda lib: lib.pca_lowrank(lib.ones(3, 4), niter=-1),
        lambda lib: lib.pca_lowrank(lib.ones(3, 4, dtype=lib.int64)),
        lambda lib: lib.pca_lowrank(lib.ones(2, 3, 4).to_sparse()),
    ],
)
def test_errors_match_torch(call):
    with pytest.raises(Exception) as t_err:
        call(torch)
    with pytest.raises(type(t_err.value)) as e_err:
        call(ember)
    assert str(e_err.value) == str(t_err.value)


def test_namespace_and_signature():
    import inspect

    for name in ("svd_lowrank", "pca_lowrank"):
        assert name in dir(ember)
        e = inspect.signature(getattr(ember, name))
        t = inspect.signature(getattr(torch, name))
        assert [(p.name, p.default) for p in e.parameters.values()] == [
            (p.name, p.default) for p in t.parameters.values()
        ]


def test_torch_function_dispatch():
    seen = []

    class Logged(ember.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    x = ember.tensor(_low_rank(np.random.default_rng(11), (), 4, 3, 1)).as_subclass(Logged)
    ember.svd_lowrank(x, q=1)
    assert seen[0] == "svd_lowrank"
