"""``ember.linalg``: torch.linalg's norms, inverse, determinants, solve, cholesky, svd.

Forward passes are batched NumPy LAPACK calls over the leading dims. Each op is one
``defop`` declaration with torch 2.13's ``grad_fn`` name (``LinalgInvExBackward0`` ...) and
the analytical derivative torch uses (inv: ``-A^-T G A^-T``; det: ``G det A^-T``; solve: a
solve with ``A^T``), written once with ``@``, ``.mT``, indexing and the ``_inv``/``_solve``
helpers, which run on arrays in a plain backward and on Tensors (this module's own ops) in
a recorded one, so every higher order follows. Forward mode is each op's explicit JVP.

The public functions of this module are the namespace (``ember.linalg`` is this module);
they are also registered under ``namespace="linalg"``.
"""

from __future__ import annotations

import math

import numpy as np

from ._dtype import scalar_name
from ._tensor import Tensor, register_methods
from .ops._core import (
    defop,
    is_raw,
    namespace,
    normalize_dim,
    quiet,
    record,
    record_multi,
    register,
    write_out,
)
from .ops.elementwise import where
from .ops.linalg import _linalg_cross
from .ops.reduction import _vector_norm, amax, amin, make_return_type
from .ops.reduction import sum as _sum
from .ops.shape import cat

_wrap = Tensor._wrap

slogdet_type = make_return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet_type = make_return_type("linalg_slogdet", ("sign", "logabsdet"))
svd_type = make_return_type("linalg_svd", ("U", "S", "Vh"))


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a numerical failure (singular or non-PD input)."""


LinAlgError.__name__ = "_LinAlgError"
LinAlgError.__qualname__ = "_LinAlgError"


# -- helpers working on arrays and Tensors ----------------------------------------------------


def _inv(x):
    return np.linalg.inv(x) if is_raw(x) else inv(x)


def _solve(a, b):
    return np.linalg.solve(a, b) if is_raw(a) and is_raw(b) else solve(a, b)


def _tril(x, k=0):
    return np.tril(x, k) if is_raw(x) else x.tril(k)


def _eye_like(S):
    """The identity matrix of S's last size, as an array or a constant Tensor like S."""
    if is_raw(S):
        return np.eye(S.shape[-1], dtype=S.dtype)
    return _wrap(np.eye(S.shape[-1], dtype=S._data.dtype))


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
            f"{scalar_name(a.dtype)}"
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
        with quiet:
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


def _out(fname: str, t: Tensor, out):
    return t if out is None else write_out(fname, t, out)


# -- inv --------------------------------------------------------------------------------------

LinalgInvExBackward0 = defop(
    "LinalgInvExBackward0",
    inputs=("A",),
    outputs=("inverse",),
    forward=np.linalg.inv,
    vjp={"A": lambda g, inverse: -(inverse.mT @ g @ inverse.mT)},
    jvp=lambda t_A, inverse: -(inverse @ t_A @ inverse),
)


@register("inv", namespace="linalg")
def inv(A, *, out=None):
    """The inverse of each square matrix in ``A`` (batched over leading dims).

    Example:
        >>> import ember
        >>> ember.linalg.inv(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    a = _checks(A, "linalg.inv")
    res = _np_inv(a).astype(a.dtype, copy=False)
    return _out("linalg_inv_ex", record(LinalgInvExBackward0, res, (A,)), out)


def inverse(input, *, out=None):
    """``torch.inverse``: ``linalg.inv``.

    Example:
        >>> import ember
        >>> ember.inverse(ember.tensor([[2.0]]))
        tensor([[0.5000]])
    """
    return inv(input, out=out)


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


def _cofactors(A, det):
    """``d det(A) / dA``: ``det(A) A^-T``, or (at a singular A, and for arrays) the
    cofactor matrix from the SVD. Recorded through ``inv`` where A is invertible."""
    if is_raw(A):
        return _adjugate_T(A)
    if np.all(det._data != 0):
        return det[..., None, None] * _inv(A).mT
    return _wrap(_adjugate_T(A._data))


LinalgDetBackward0 = defop(
    "LinalgDetBackward0",
    inputs=("A",),
    forward=np.linalg.det,
    vjp={"A": lambda g, A, result: g[..., None, None] * _cofactors(A, result)},
    jvp=lambda t_A, A, result: (_cofactors(A, result) * t_A).sum((-2, -1)),
)


@register("det", namespace="linalg")
def det(A, *, out=None):
    """The determinant of each square matrix in ``A``.

    Example:
        >>> import ember
        >>> ember.linalg.det(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(-2.)
    """
    a = _checks(A, "linalg.det")
    with quiet:
        res = np.asarray(np.linalg.det(a)).astype(a.dtype, copy=False)
    return _out("_linalg_det", record(LinalgDetBackward0, res, (A,)), out)


def _inv_T(A):
    """``A^-T``: NaN where an array is singular (the gradient of log|det| is undefined
    there), recorded through ``inv`` for Tensors."""
    if not is_raw(A):
        return _inv(A).mT
    with np.errstate(all="ignore"):
        try:
            return np.linalg.inv(A).mT
        except np.linalg.LinAlgError:
            return np.full(A.shape, np.nan, A.dtype)


LinalgSlogdetBackward0 = defop(
    "LinalgSlogdetBackward0",
    inputs=("A",),
    outputs=("sign", "logabsdet"),
    forward=np.linalg.slogdet,
    # The sign of a real determinant is piecewise constant: only log|det| has a gradient.
    vjp={"A": lambda grads, A: None if grads[1] is None else grads[1][..., None, None] * _inv_T(A)},
    jvp=lambda t_A, A, sign: [sign * 0, (_inv_T(A) * t_A).sum((-2, -1))],
)


def _slogdet(A, fname: str, rtype):
    a = _checks(A, fname)
    with quiet:
        sign, logabs = np.linalg.slogdet(a)
    outs = [np.asarray(sign).astype(a.dtype), np.asarray(logabs).astype(a.dtype)]
    return rtype(tuple(record_multi(LinalgSlogdetBackward0, outs, (A,))))


@register("slogdet", namespace="linalg")
def slogdet(A, *, out=None):
    """``(sign, log|det|)`` of each square matrix (``torch.return_types.linalg_slogdet``).

    Example:
        >>> import ember
        >>> ember.linalg.slogdet(ember.tensor([[-2.0]])).logabsdet
        tensor(0.6931)
    """
    return _slogdet(A, "linalg.slogdet", linalg_slogdet_type)


def _top_slogdet(input, *, out=None):
    """``torch.slogdet`` (``torch.return_types.slogdet``).

    Example:
        >>> import ember
        >>> ember.slogdet(ember.tensor([[-2.0]])).sign
        tensor(-1.)
    """
    return _slogdet(input, "linalg.slogdet", slogdet_type)


def logdet(input):
    """``log det(A)`` (NaN for a negative determinant), as torch: ``where(sign < 0, nan,
    logabsdet)``.

    Example:
        >>> import ember
        >>> ember.logdet(ember.tensor([[2.0, 0.0], [0.0, 0.5]]))
        tensor(0.)
    """
    sign, logabs = _slogdet(input, "logdet", linalg_slogdet_type)
    return where(sign < 0, math.nan, logabs)


# -- solve --------------------------------------------------------------------------------------


def _solve_vjp(g, A, result, needs_input_grad, left, vector):
    """Gradients of ``X = A^-1 B`` (``left``) or ``X = B A^-1``: ``gB`` solves the adjoint
    system, ``gA = -gB X^T`` (``-X^T gB``)."""
    need_a, need_b = needs_input_grad
    if not left:
        gb = _solve(A, g.mT).mT
        return (-(result.mT @ gb) if need_a else None), (gb if need_b else None)
    if vector:
        g, result = g[..., None], result[..., None]
    gb = _solve(A.mT, g)
    ga = -(gb @ result.mT) if need_a else None
    if vector:
        gb = gb[..., 0]
    return ga, (gb if need_b else None)


def _solve_jvp(t_A, t_B, A, result, left, vector):
    """``dX = A^-1 (dB - dA X)`` (``left``) or ``(dB - X dA) A^-1``."""
    x = result
    if not left:
        rhs = t_B
        if t_A is not None:
            rhs = -(x @ t_A) if rhs is None else rhs - x @ t_A
        return None if rhs is None else solve(A.mT, rhs.mT).mT
    if vector:
        x = x[..., None]
        t_B = None if t_B is None else t_B[..., None]
    rhs = t_B
    if t_A is not None:
        rhs = -(t_A @ x) if rhs is None else rhs - t_A @ x
    if rhs is None:
        return None
    res = solve(A, rhs)
    return res[..., 0] if vector else res


LinalgSolveExBackward0 = defop(
    "LinalgSolveExBackward0",
    inputs=("A", "B"),
    params=("left", "vector"),
    vjp=_solve_vjp,
    jvp=_solve_jvp,
)


@register("solve", namespace="linalg")
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
        with quiet:
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
    t = record(LinalgSolveExBackward0, x, (A, B), (bool(left), vector))
    return _out("_linalg_solve_ex", t, out)


# -- cholesky -------------------------------------------------------------------------------------


def _cholesky_vjp(g, L, upper):
    if upper:
        L, g = L.mT, g.mT
    m = _tril(L.mT @ g)
    m = 0.5 * (m + _tril(m, -1).mT)
    linv = _inv(L)
    return linv.mT @ m @ linv


def _phi(x):
    """Lower triangle with the diagonal halved."""
    low = _tril(x, -1)
    return low + 0.5 * (_tril(x) - low)


def _cholesky_jvp(t_self, L, upper):
    if upper:
        L = L.mT
    linv = inv(L)
    dl = L @ _phi(linv @ t_self @ linv.mT)
    return dl.mT if upper else dl


LinalgCholeskyExBackward0 = defop(
    "LinalgCholeskyExBackward0",
    outputs=("L",),
    params=("upper",),
    forward=np.linalg.cholesky,
    vjp={"self": _cholesky_vjp},
    jvp=_cholesky_jvp,
)


@register("cholesky", namespace="linalg")
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
        with quiet:
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
    t = record(LinalgCholeskyExBackward0, L.astype(a.dtype, copy=False), (A,), (bool(upper),))
    return _out("linalg_cholesky_ex", t, out)


# -- svd, svdvals (and the spectral and nuclear matrix norms) -----------------------------------


def _svd_gap(S):
    """``E[i, j] = S_j^2 - S_i^2`` with ones on the diagonal (divided into, never by 0 there)."""
    S2 = S * S
    return S2[..., None, :] - S2[..., :, None] + _eye_like(S)


def _as_output(t, k: int):
    """Saved output ``k`` of the SVD node, as output ``k`` of it. (Work-around: recording
    numbers a multi-output node's outputs after saving them, so saved outputs come back as
    output 0; renumbered here, a second derivative flows into the right output.)"""
    if is_raw(t) or t._output_nr == k:
        return t
    r = _wrap(t._data)
    r.grad_fn, r._rg, r._vc, r._output_nr = t.grad_fn, t._rg, t._vc, k
    return r


def _svd_vjp(grads, U, S, Vh, full_matrices):
    """torch's ``svd_backward``, with ``@``, ``.mT``, indexing and ``*`` only: a recorded
    backward differentiates through U, S and Vh (outputs of this same node), so second
    derivatives of the SVD, ``svdvals`` and the nuclear norm are exact."""
    gU, gS, gVh = grads
    U, S, Vh = (_as_output(x, k) for k, x in enumerate((U, S, Vh)))
    if full_matrices:
        # Only the first k = min(m, n) columns of U (rows of Vh) depend on A.
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return (U * gS[..., None, :]) @ Vh
    m, n = U.shape[-2], Vh.shape[-1]
    E = _svd_gap(S)
    if gU is not None:
        UtgU = U.mT @ gU
        UhgU = UtgU - UtgU.mT
    if gVh is not None:
        VhgV = Vh @ gVh.mT
        VhgV = VhgV - VhgV.mT
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
        gA = (gA + gUSinv - U @ (U.mT @ gUSinv)) @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S[..., :, None]
        gA = U @ (gA + SinvgVh - (SinvgVh @ Vh.mT) @ Vh)
    else:
        gA = U @ (gA @ Vh)
    return gA


def _svd_jvp(t_A, U, S, Vh, full_matrices):
    """torch's ``linalg_svd_jvp`` (with ``full_matrices``, the tangents of the columns of U
    and rows of Vh that A does not determine are zero)."""
    k = S.shape[-1]
    Uk, Vhk = (U[..., :k], Vh[..., :k, :]) if full_matrices else (U, Vh)
    m, n = Uk.shape[-2], Vhk.shape[-1]
    V = Vhk.mT
    dP = Uk.mT @ (t_A @ V)
    dS = dP.diagonal(0, -2, -1)
    dP = dP - dS[..., :, None] * _eye_like(S)
    E = _svd_gap(S)
    X = dP * S[..., None, :]
    dU = Uk @ ((X + X.mT) / E)
    if m > n:
        dAVSinv = t_A @ (V / S[..., None, :])
        dU = dU + dAVSinv - Uk @ (Uk.mT @ dAVSinv)
    Y = S[..., :, None] * dP
    dVh = -(((Y + Y.mT) / E) @ Vhk)
    if m < n:
        UHdASinv = (Uk.mT / S[..., :, None]) @ t_A
        dVh = dVh + UHdASinv - (UHdASinv @ V) @ Vhk
    if full_matrices and U.shape[-1] > k:
        dU = cat([dU, _wrap(np.zeros(dU.shape[:-1] + (U.shape[-1] - k,), U._data.dtype))], -1)
    if full_matrices and Vh.shape[-2] > k:
        pad = np.zeros(dVh.shape[:-2] + (Vh.shape[-2] - k, n), Vh._data.dtype)
        dVh = cat([dVh, _wrap(pad)], -2)
    return [dU, dS, dVh]


LinalgSvdBackward0 = defop(
    "LinalgSvdBackward0",
    inputs=("A",),
    outputs=("U", "S", "Vh"),
    params=("full_matrices",),
    vjp={"A": _svd_vjp},
    jvp=_svd_jvp,
)


def _svd(A, full_matrices: bool, fname: str):
    """(U, S, Vh) Tensors of one recorded SVD node."""
    a = _checks(A, fname, square=False)
    with quiet:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    dt = a.dtype
    real = s.dtype if a.dtype.kind == "f" else np.dtype(a.real.dtype)
    outs = [u.astype(dt, copy=False), s.astype(real, copy=False), vh.astype(dt, copy=False)]
    return record_multi(LinalgSvdBackward0, outs, (A,), (bool(full_matrices),))


@register("svd", namespace="linalg")
def svd(A, full_matrices=True, *, driver=None, out=None):
    """``A = U diag(S) Vh`` with singular values S descending (``torch.linalg.svd``).

    Example:
        >>> import ember
        >>> U, S, Vh = ember.linalg.svd(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
        >>> S
        tensor([4., 3.])
    """
    return svd_type(tuple(_svd(A, full_matrices, "linalg.svd")))


@register("svdvals", namespace="linalg")
def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix in ``A``, descending.

    Example:
        >>> import ember
        >>> ember.linalg.svdvals(ember.tensor([[3.0, 0.0], [0.0, -4.0]]))
        tensor([4., 3.])
    """
    return _svd(A, False, "linalg.svd")[1]


# -- cross ---------------------------------------------------------------------------------------


@register("cross", namespace="linalg")
def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the last), with broadcasting.

    Example:
        >>> import ember
        >>> ember.linalg.cross(ember.tensor([1.0, 0.0, 0.0]), ember.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    for x, arg, pos in ((input, "input", 1), (other, "other", 2)):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"linalg_cross(): argument '{arg}' (position {pos}) must be Tensor, not "
                f"{type(x).__name__}"
            )
    return _linalg_cross(input, other, dim, out)


# -- norms -------------------------------------------------------------------------------------


@register("vector_norm", namespace="linalg")
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


@register("matrix_norm", namespace="linalg")
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
    if dtype is not None:
        A = A.to(dtype)
    with quiet:  # torch's sums overflow silently
        return _spectral_or_sum_norm(A, ord, d0, d1, keepdim)


def _spectral_or_sum_norm(A, ord, d0: int, d1: int, keepdim: bool):  # noqa: A002
    """The matrix norms other than Frobenius: of the singular values, or of the row or
    column sums of absolute values."""
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


@register("norm", namespace="linalg")
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


# ``ember.linalg`` is imported after the op families attached their Tensor methods: the four
# that live here are attached now (torch.inverse, torch.det, ... are bound in ember/__init__).
register_methods(
    {
        "inverse": inverse,
        "det": det,
        "logdet": logdet,
        "slogdet": _top_slogdet,
    }
)

__all__ = ["LinAlgError", *sorted(namespace("linalg"))]
