"""``ember.linalg``: torch.linalg's norms, inverse, determinants, solve, cholesky, svdvals.

Forward passes are batched NumPy LAPACK calls over the leading dims. Each backward rule
has the analytical form torch uses (inv: ``-A^-T G A^-T``; det: ``G det A^-T``; solve: a
solve with ``A^T``) written with ``@``, ``_mT`` and ``_inv``/``_solve``, which work on
NumPy arrays (plain backward) and on Tensors (recorded backward, ``create_graph=True``).
Node classes carry torch 2.13's ``grad_fn`` names (``LinalgInvExBackward0`` ...).
"""

from __future__ import annotations

import math

import numpy as np

from ._tensor import Tensor, register_methods
from .ops._core import normalize_dim
from .ops._legacy import Node, _fw, record, record_multi, saved_output, set_saved
from .ops.reduction import _scalar_name, _vector_norm, make_return_type

_wrap = Tensor._wrap

slogdet_type = make_return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet_type = make_return_type("linalg_slogdet", ("sign", "logabsdet"))


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a numerical failure (singular or non-PD input)."""


LinAlgError.__name__ = "_LinAlgError"
LinAlgError.__qualname__ = "_LinAlgError"


# -- helpers working on ndarrays and Tensors ------------------------------------------------


def _is_np(x) -> bool:
    return isinstance(x, np.ndarray)


def _mT(x):
    return x.swapaxes(-1, -2) if _is_np(x) else x.transpose(-2, -1)


def _inv(x):
    return np.linalg.inv(x) if _is_np(x) else inv(x)


def _solve(a, b):
    return np.linalg.solve(a, b) if _is_np(a) and _is_np(b) else solve(a, b)


def _tril(x, k=0):
    if _is_np(x):
        return np.tril(x, k)
    from .ops.indexing import tril

    return tril(x, k)


def _unsq(x, d):
    return np.expand_dims(x, d) if _is_np(x) else x.unsqueeze(d)


def _checks(A, fname: str, square: bool = True) -> np.ndarray:
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_{fname.split('.')[-1]}(): argument 'A' (position 1) must be Tensor, "
            f"not {type(A).__name__}"
        )
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"{fname}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if a.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{_scalar_name(a.dtype)}"
        )
    return a


def _batch_prefix(a: np.ndarray, b: int) -> str:
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _first_zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK getrf's
    ``info``), or 0 if there is none."""
    m = np.array(m, dtype=np.result_type(m.dtype, np.float64))
    n = m.shape[0]
    first = 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        if m[p, j] == 0:
            first = first or j + 1
            continue
        if p != j:
            m[[j, p]] = m[[p, j]]
        m[j + 1 :, j] /= m[j, j]
        m[j + 1 :, j + 1 :] -= np.outer(m[j + 1 :, j], m[j, j + 1 :])
    return first


def _singular_error(a: np.ndarray, fname: str, msg) -> LinAlgError:
    """torch's error for the first singular matrix of the batch ``a``."""
    mats = a.reshape((-1,) + a.shape[-2:])
    for b, m in enumerate(mats):
        info = _first_zero_pivot(m)
        if info:
            return LinAlgError(f"{fname}: {_batch_prefix(a, b)}{msg(info)}")
    return LinAlgError(f"{fname}: {_batch_prefix(a, 0)}{msg(1)}")


def _np_inv(a: np.ndarray, fname: str = "linalg.inv") -> np.ndarray:
    if a.size == 0:
        return np.empty_like(a)
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular_error(
            a,
            fname,
            lambda i: (
                f"The diagonal element {i} is zero, the inversion could not be "
                "completed because the input matrix is singular."
            ),
        ) from None


# -- inv --------------------------------------------------------------------------------------


class LinalgInvExBackward0(Node):
    __slots__ = ()

    def backward(self, g, ainv):
        t = _mT(ainv)
        return -(t @ g @ t)

    def jvp(self, tangents, inputs, ainv):
        return -(ainv @ tangents[0] @ ainv)


def inv(A, *, out=None):
    """The inverse of each square matrix in ``A`` (batched over leading dims).

    Example:
        >>> import ember
        >>> ember.linalg.inv(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    a = _checks(A, "linalg.inv")
    return record(LinalgInvExBackward0, _np_inv(a).astype(a.dtype, copy=False), (A,), (), True)


def inverse(input, *, out=None):
    """``torch.inverse``: ``linalg.inv``."""
    return inv(input)


# -- det, slogdet, logdet ----------------------------------------------------------------------


def _adjugate_T(a: np.ndarray) -> np.ndarray:
    """The cofactor matrix ``adj(A)^T`` (valid for singular A too), via the SVD."""
    if a.shape[-1] == 0:
        return np.zeros_like(a)
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    left = np.concatenate([ones, np.cumprod(s[..., :-1], -1)], -1)
    right = np.concatenate([np.flip(np.cumprod(np.flip(s[..., 1:], -1), -1), -1), ones], -1)
    adj_s = left * right
    sign = np.linalg.det(u) * np.linalg.det(vh)
    adj = (vh.swapaxes(-1, -2) * adj_s[..., None, :]) @ u.swapaxes(-1, -2)
    return (sign[..., None, None] * adj).swapaxes(-1, -2)


class LinalgDetBackward0(Node):
    __slots__ = ()

    def backward(self, g, a, det):
        g = _unsq(_unsq(g, -1), -1)
        if _is_np(a):
            return g * _adjugate_T(a)
        d = _unsq(_unsq(det, -1), -1)
        if np.all(det._data != 0):
            return g * d * _mT(_inv(a))
        return g * _wrap(_adjugate_T(a._data))

    def jvp(self, tangents, inputs, a, det):
        if np.all(det._data != 0):
            cof = _unsq(_unsq(det, -1), -1) * _mT(inv(a))
        else:
            cof = _wrap(_adjugate_T(a._data))
        return (cof * tangents[0]).sum((-2, -1))


def det(A, *, out=None):
    """The determinant of each square matrix in ``A``.

    Example:
        >>> import ember
        >>> ember.linalg.det(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(-2.)
    """
    a = _checks(A, "linalg.det")
    res = np.asarray(np.linalg.det(a)).astype(a.dtype, copy=False)
    return record(LinalgDetBackward0, res, (A,), (A,), True)


class LinalgSlogdetBackward0(Node):
    __slots__ = ()
    _multi_output = True

    def backward(self, grads, a):
        g = grads[1]
        if g is None:
            return None
        g = _unsq(_unsq(g, -1), -1)
        if _is_np(a):
            with np.errstate(all="ignore"):
                try:
                    return g * _mT(np.linalg.inv(a))
                except np.linalg.LinAlgError:
                    return g * np.full(a.shape, np.nan, a.dtype)
        return g * _mT(_inv(a))

    def jvp(self, tangents, inputs, a):
        return [None, (_mT(inv(a)) * tangents[0]).sum((-2, -1))]


def _slogdet(A, fname: str, rtype):
    a = _checks(A, fname)
    sign, logabs = np.linalg.slogdet(a)
    outs = [np.asarray(sign).astype(a.dtype), np.asarray(logabs).astype(a.dtype)]
    s, la = record_multi(LinalgSlogdetBackward0, outs, (A,), (), (False, True))
    if (gf := la.grad_fn or _fw.node) is not None:
        set_saved(gf, (A,))
    return rtype((s, la))


def slogdet(A, *, out=None):
    """``(sign, log|det|)`` of each square matrix (``torch.return_types.linalg_slogdet``)."""
    return _slogdet(A, "linalg.slogdet", linalg_slogdet_type)


def _top_slogdet(input, *, out=None):
    """``torch.slogdet`` (``torch.return_types.slogdet``)."""
    return _slogdet(input, "linalg.slogdet", slogdet_type)


def logdet(input):
    """``log det(A)`` (NaN for a negative determinant), as torch: ``where(sign < 0, nan,
    logabsdet)``."""
    from .ops.elementwise import where

    sign, logabs = _slogdet(input, "logdet", linalg_slogdet_type)
    return where(sign < 0, math.nan, logabs)


# -- solve --------------------------------------------------------------------------------------


class LinalgSolveExBackward0(Node):
    __slots__ = ("vector", "left")

    def backward(self, g, a, x):
        nf = self.next_functions
        if not self.left:  # X = B A^-1: gB = g A^-T, gA = -X^T gB
            gb = _mT(_solve(a, _mT(g)))
            ga = -(_mT(x) @ gb) if nf[0][0] is not None else None
            return ga, (gb if nf[1][0] is not None else None)
        if self.vector:
            g, x = _unsq(g, -1), _unsq(x, -1)
        gb = _solve(_mT(a), g)
        ga = -(gb @ _mT(x)) if nf[0][0] is not None else None
        if self.vector:
            gb = gb[..., 0]
        return ga, (gb if nf[1][0] is not None else None)

    def jvp(self, tangents, inputs, a, x):
        da, db = tangents
        if not self.left:  # dX = (dB - X dA) A^-1
            rhs = db
            if da is not None:
                rhs = -(x @ da) if rhs is None else rhs - x @ da
            return None if rhs is None else _mT(solve(_mT(a), _mT(rhs)))
        if self.vector:
            x = x.unsqueeze(-1)
            if db is not None:
                db = db.unsqueeze(-1)
        rhs = db
        if da is not None:
            rhs = -(da @ x) if rhs is None else rhs - da @ x
        if rhs is None:
            return None
        res = solve(a, rhs)
        return res[..., 0] if self.vector else res


def solve(A, B, *, left=True, out=None):
    """The solution ``X`` of ``A X = B`` (``B`` a batch of vectors or matrices).

    Example:
        >>> import ember
        >>> ember.linalg.solve(ember.tensor([[2.0, 0.0], [0.0, 4.0]]), ember.tensor([2.0, 2.0]))
        tensor([1.0000, 0.5000])
    """
    a = _checks(A, "linalg.solve")
    if not isinstance(B, Tensor):
        raise TypeError(
            f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}"
        )
    b = B._data
    vector = left and (b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]))
    bm = b[..., None] if vector else b
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, bm = a.swapaxes(-1, -2), bm.swapaxes(-1, -2)
    n = a.shape[-1]
    if bm.shape[-2] != n:
        raise RuntimeError(
            "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({a.shape[-2]}x{a.shape[-1]} and {bm.shape[-2]}x{bm.shape[-1]})"
        )
    dt = np.result_type(a.dtype, b.dtype)
    try:
        x = np.linalg.solve(a.astype(dt, copy=False), bm.astype(dt, copy=False))
    except np.linalg.LinAlgError:
        raise _singular_error(
            a,
            "torch.linalg.solve",
            lambda i: "The solver failed because the input matrix is singular.",
        ) from None
    if vector:
        x = x[..., 0]
    if not left:
        x = x.swapaxes(-1, -2)
    t = record(LinalgSolveExBackward0, x, (A, B), (A,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.vector = vector
        gf.left = bool(left)
    return t


# -- cholesky -------------------------------------------------------------------------------------


def _phi(x):
    """Lower triangle with the diagonal halved."""
    low = _tril(x, -1)
    return low + 0.5 * (_tril(x) - low)


class LinalgCholeskyExBackward0(Node):
    __slots__ = ("upper",)

    def backward(self, g, L):
        if self.upper:
            L, g = _mT(L), _mT(g)
        m = _tril(_mT(L) @ g)
        m = 0.5 * (m + _mT(_tril(m, -1)))
        linv = _inv(L)
        return _mT(linv) @ m @ linv

    def jvp(self, tangents, inputs, L):
        if self.upper:
            L = _mT(L)
        linv = inv(L)
        dl = L @ _phi(linv @ tangents[0] @ _mT(linv))
        return _mT(dl) if self.upper else dl


def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor ``L`` of each symmetric positive-definite matrix (``A = L L^T``).

    Example:
        >>> import ember
        >>> ember.linalg.cholesky(ember.tensor([[4.0, 2.0], [2.0, 5.0]]))
        tensor([[2., 0.],
                [1., 2.]])
    """
    a = _checks(A, "linalg.cholesky")
    try:
        L = np.linalg.cholesky(a) if a.size else a.copy()
    except np.linalg.LinAlgError:
        mats = a.reshape((-1,) + a.shape[-2:])
        for bi, m in enumerate(mats):
            for k in range(1, a.shape[-1] + 1):
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    raise LinAlgError(
                        f"linalg.cholesky: {_batch_prefix(a, bi)}The factorization could not be "
                        "completed because the input is not positive-definite (the leading "
                        f"minor of order {k} is not positive-definite)."
                    ) from None
        raise
    if upper:
        L = L.swapaxes(-1, -2).copy()
    t = record(LinalgCholeskyExBackward0, L.astype(a.dtype, copy=False), (A,), (), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.upper = bool(upper)
    return t


# -- svdvals (for the spectral and nuclear matrix norms) ----------------------------------------


class LinalgSvdBackward0(Node):
    """The SVD ``A = U diag(S) Vh``: one node for its three outputs (torch's ``svd_backward``
    and ``svd_jvp``). The rules use ``@``, ``swapaxes``, ``[..., None]`` and ``*`` only, so a
    recorded backward differentiates through U, S and Vh (outputs of this same node) and
    second derivatives of ``svdvals`` and the nuclear norm are exact."""

    __slots__ = ("full_matrices",)
    _multi_output = True

    def backward(self, grads, U, S, Vh):
        gU, gS, gVh = grads
        if self.full_matrices:
            # Only the first k = min(m, n) columns of U (rows of Vh) depend on A.
            k = S.shape[-1]
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = None if gU is None else gU[..., :k]
            gVh = None if gVh is None else gVh[..., :k, :]
        return _svd_backward(gU, gS, gVh, U, S, Vh)

    def jvp(self, tangents, inputs, U, S, Vh):
        if self.full_matrices and U.shape[-2] != Vh.shape[-1]:
            raise NotImplementedError(
                "linalg.svd: forward-mode AD with full_matrices=True is supported only for "
                "square matrices; pass full_matrices=False"
            )
        return list(_svd_jvp(tangents[0], U, S, Vh))


def _eye_like(S):
    """The identity matrix of S's last size, as an array or a constant Tensor like S."""
    eye = np.eye(S.shape[-1], dtype=S.dtype if _is_np(S) else S._data.dtype)
    return eye if _is_np(S) else _wrap(eye)


def _svd_gap(S):
    """``E[i, j] = S_j^2 - S_i^2`` with ones on the diagonal (divided into, never by 0 there)."""
    S2 = S * S
    return S2[..., None, :] - S2[..., :, None] + _eye_like(S)


def _svd_backward(gU, gS, gVh, U, S, Vh):
    if gU is None and gVh is None:
        if gS is None:
            return None
        return (U * gS[..., None, :]) @ Vh
    m, n = U.shape[-2], Vh.shape[-1]
    E = _svd_gap(S)
    if gU is not None:
        UtgU = _mT(U) @ gU
        UhgU = UtgU - _mT(UtgU)
    if gVh is not None:
        VhgV = Vh @ _mT(gVh)
        VhgV = VhgV - _mT(VhgV)
    if gU is not None and gVh is not None:
        gA = (UhgU * S[..., None, :] + S[..., :, None] * VhgV) / E
    elif gU is not None:
        gA = UhgU * (S[..., None, :] / E)
    else:
        gA = VhgV * (S[..., :, None] / E)
    if gS is not None:
        gA = gA + gS[..., :, None] * _eye_like(S)
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S[..., None, :]
        gA = (gA + gUSinv - U @ (_mT(U) @ gUSinv)) @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S[..., :, None]
        gA = U @ (gA + SinvgVh - (SinvgVh @ _mT(Vh)) @ Vh)
    else:
        gA = U @ (gA @ Vh)
    return gA


def _svd_jvp(dA, U, S, Vh):
    m, n = U.shape[-2], Vh.shape[-1]
    V = _mT(Vh)
    dP = _mT(U) @ (dA @ V)
    dS = dP.diagonal(0, -2, -1) if not _is_np(dP) else np.diagonal(dP, 0, -2, -1)
    eye = _eye_like(S)
    dP = dP - dS[..., :, None] * eye
    E = _svd_gap(S)
    X = dP * S[..., None, :]
    dU = U @ ((X + _mT(X)) / E)
    if m > n:
        dAVSinv = dA @ (V / S[..., None, :])
        dU = dU + dAVSinv - U @ (_mT(U) @ dAVSinv)
    Y = S[..., :, None] * dP
    dVh = -(((Y + _mT(Y)) / E) @ Vh)
    if m < n:
        UHdASinv = (_mT(U) / S[..., :, None]) @ dA
        dVh = dVh + UHdASinv - (UHdASinv @ V) @ Vh
    return dU, dS, dVh


svd_type = make_return_type("linalg_svd", ("U", "S", "Vh"))


def _svd(A, full_matrices: bool, fname: str):
    """(U, S, Vh) Tensors of one recorded SVD node."""
    a = _checks(A, fname, square=False)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    dt = a.dtype
    real = s.dtype if a.dtype.kind == "f" else np.dtype(a.real.dtype)
    outs = [u.astype(dt, copy=False), s.astype(real, copy=False), vh.astype(dt, copy=False)]
    ts = record_multi(LinalgSvdBackward0, outs, (A,))
    fn = next((t.grad_fn for t in ts if t.grad_fn is not None), None) or _fw.node
    if fn is not None:
        fn.full_matrices = bool(full_matrices)
        set_saved(fn, tuple(saved_output(t) for t in ts))
    return ts


def svd(A, full_matrices=True, *, driver=None, out=None):
    """``A = U diag(S) Vh`` with singular values S descending (``torch.linalg.svd``).

    Example:
        >>> import ember
        >>> U, S, Vh = ember.linalg.svd(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
        >>> S
        tensor([4., 3.])
    """
    return svd_type(tuple(_svd(A, full_matrices, "linalg.svd")))


def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix in ``A``, descending.

    Example:
        >>> import ember
        >>> ember.linalg.svdvals(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
        tensor([4., 3.])
    """
    return _svd(A, False, "linalg.svd")[1]


# -- norms -------------------------------------------------------------------------------------


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The vector ``ord``-norm over ``dim`` (all elements by default).

    Example:
        >>> import ember
        >>> ember.linalg.vector_norm(ember.tensor([3.0, -4.0]))
        tensor(5.)
    """
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(
            "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{type(ord).__name__}"
        )
    return _vector_norm(x, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The matrix norm: ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, ``1``, ``-1``, ``2``, ``-2``.

    Example:
        >>> import ember
        >>> ember.linalg.matrix_norm(ember.tensor([[1.0, -2.0], [3.0, 4.0]]), 1)
        tensor(6.)
    """
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_matrix_norm(): argument 'input' (position 1) must be Tensor, not "
            f"{type(A).__name__}"
        )
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    dim = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {len(dim)}")
    d0, d1 = (normalize_dim(d, A.ndim) for d in dim)
    if ord == "fro":
        return _vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if isinstance(ord, str) and ord != "nuc":
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if not isinstance(ord, str) and ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    from .ops.reduction import amax, amin
    from .ops.reduction import sum as _sum

    if dtype is not None:
        A = A.to(dtype)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = svdvals(moved)
        red = _sum if ord == "nuc" else (amax if ord == 2 else amin)
        if not keepdim:
            return red(s, -1)
        return red(s, -1, keepdim=True).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    # 1/-1: max/min column sum (sum over rows, d0); inf/-inf: row sums (over d1).
    red, keep = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = _sum(A.abs(), red, keepdim=keepdim)
    if not keepdim and red < keep:
        keep -= 1
    return (amax if ord > 0 else amin)(sums, keep, keepdim=keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """``torch.linalg.norm``: a vector norm over one dim, a matrix norm over two.

    Example:
        >>> import ember
        >>> ember.linalg.norm(ember.tensor([[3.0, 0.0], [0.0, 4.0]]))
        tensor(5.)
    """
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_norm(): argument 'input' (position 1) must be Tensor, not {type(A).__name__}"
        )
    if dim is not None:
        dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {len(dims)}")
        return _vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return _vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {A.ndim}D."
        )
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    return _vector_norm(A, ord, None, keepdim, dtype=dtype)


register_methods(
    {
        "inverse": inverse,
        "det": det,
        "logdet": logdet,
        "slogdet": _top_slogdet,
    }
)

__all__ = [
    "LinAlgError",
    "norm",
    "vector_norm",
    "matrix_norm",
    "inv",
    "det",
    "slogdet",
    "solve",
    "cholesky",
    "svd",
    "svdvals",
]
