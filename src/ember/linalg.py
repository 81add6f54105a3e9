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
import warnings

import numpy as np

from . import _overrides
from ._aten._core import (
    COMPOSITE,
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
from ._aten.complex import re as _re
from ._aten.elementwise import where
from ._aten.linalg import _cj, _linalg_cross
from ._aten.reduction import _vector_norm, amax, amin, make_return_type
from ._aten.reduction import sum as _sum
from ._aten.shape import cat
from ._aten.special import nan_to_num
from ._dtype import cpp_name, scalar_name
from ._overrides import warn as _warn
from ._tensor import Tensor, register_methods

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
    """``A``'s array: a (square) batch of float or complex matrices, else torch's error."""
    a = _matrices(A, fname, square)
    if a.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{scalar_name(a.dtype)}"
        )
    return a


def _matrices(A, fname: str, square: bool = True, arg: str = "A") -> np.ndarray:
    """``A``'s array, checked to be a Tensor of at least 2 dims (square matrices)."""
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_{fname.split('.')[-1]}(): argument '{arg}' (position 1) must be Tensor, "
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
    # LAPACK's layout, as torch's: each matrix column-major (a reshape copies, as torch's).
    res = np.ascontiguousarray(res.swapaxes(-1, -2)).swapaxes(-1, -2)
    return write_out("linalg_inv_ex", record(LinalgInvExBackward0, res, (A,)), out)


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
    return write_out("_linalg_det", record(LinalgDetBackward0, res, (A,)), out)


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
    system, ``gA = -gB X^H`` (``-X^H gB``)."""
    need_a, need_b = needs_input_grad
    if not left:
        gb = _mH(_solve(A, _mH(g)))
        return (-(_mH(result) @ gb) if need_a else None), (gb if need_b else None)
    if vector:
        g, result = g[..., None], result[..., None]
    gb = _solve(_mH(A), g)
    ga = -(gb @ _mH(result)) if need_a else None
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


def _solve_forward(a, b, left, vector):
    bm = b[..., None] if vector else b
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, bm = a.swapaxes(-1, -2), bm.swapaxes(-1, -2)
    dt = np.result_type(a.dtype, b.dtype)
    x = np.linalg.solve(a.astype(dt, copy=False), bm.astype(dt, copy=False))
    if vector:
        x = x[..., 0]
    return x if left else x.swapaxes(-1, -2)


LinalgSolveExBackward0 = defop(
    "LinalgSolveExBackward0",
    inputs=("A", "B"),
    params=("left", "vector"),
    forward=_solve_forward,
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
    am = a if left else a.swapaxes(-1, -2)
    bm = b[..., None] if vector else b
    if not left:
        bm = bm.swapaxes(-1, -2)
    if bm.shape[-2] != am.shape[-1]:
        raise RuntimeError(
            "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({am.shape[-2]}x{am.shape[-1]} and {bm.shape[-2]}x{bm.shape[-1]})"
        )
    try:
        with quiet:
            x = _solve_forward(a, b, left, vector)
    except np.linalg.LinAlgError:
        raise _singular_error(
            am,
            "torch.linalg.solve",
            lambda i: "The solver failed because the input matrix is singular.",
        ) from None
    t = record(LinalgSolveExBackward0, x, (A, B), (bool(left), vector))
    return write_out("_linalg_solve_ex", t, out)


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


def _cholesky_forward(a, upper):
    L = np.linalg.cholesky(a) if a.size else a.copy()
    if upper:
        L = L.swapaxes(-1, -2).copy()
    return L.astype(a.dtype, copy=False)


LinalgCholeskyExBackward0 = defop(
    "LinalgCholeskyExBackward0",
    outputs=("L",),
    params=("upper",),
    forward=_cholesky_forward,
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
            L = _cholesky_forward(a, upper)
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
    t = record(LinalgCholeskyExBackward0, L, (A,), (bool(upper),))
    return write_out("linalg_cholesky_ex", t, out)


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


def _svd_forward(a, full_matrices):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    real = s.dtype if a.dtype.kind == "f" else np.dtype(a.real.dtype)
    return u.astype(a.dtype, copy=False), s.astype(real, copy=False), vh.astype(a.dtype, copy=False)


LinalgSvdBackward0 = defop(
    "LinalgSvdBackward0",
    inputs=("A",),
    outputs=("U", "S", "Vh"),
    params=("full_matrices",),
    forward=_svd_forward,
    vjp={"A": _svd_vjp},
    jvp=_svd_jvp,
)


def _svd(A, full_matrices: bool, fname: str):
    """(U, S, Vh) Tensors of one recorded SVD node."""
    a = _checks(A, fname, square=False)
    with quiet:
        outs = list(_svd_forward(a, bool(full_matrices)))
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


# == decompositions and the rest of torch.linalg =================================================
# Forward passes are NumPy (batched) or SciPy (per matrix) LAPACK calls; derivatives are
# torch's, written with ``@``, ``.mT``, indexing and this module's ops, so that a recorded
# backward (``create_graph=True``) differentiates through them.

qr_type = make_return_type("linalg_qr", ("Q", "R"))
legacy_qr_type = make_return_type("qr", ("Q", "R"))
eigh_type = make_return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
lstsq_type = make_return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
lu_factor_type = make_return_type("linalg_lu_factor", ("LU", "pivots"))
lu_factor_ex_type = make_return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
lu_type = make_return_type("linalg_lu", ("P", "L", "U"))
legacy_svd_type = make_return_type("svd", ("U", "S", "V"))
inv_ex_type = make_return_type("linalg_inv_ex", ("inverse", "info"))
cholesky_ex_type = make_return_type("linalg_cholesky_ex", ("L", "info"))
solve_ex_type = make_return_type("linalg_solve_ex", ("result", "info"))


def _scipy_linalg():
    # SciPy is a runtime dependency imported on first use: ``import scipy.linalg`` is slow.
    import scipy.linalg

    return scipy.linalg


def _triu(x, k=0):
    return np.triu(x, k) if is_raw(x) else x.triu(k)


def _mH(x):
    """The conjugate transpose (the transpose of a real matrix)."""
    return _cj(x).mT


def _cat(xs, dim):
    if all(is_raw(x) for x in xs):
        return np.concatenate(xs, dim)
    return cat([x if not is_raw(x) else _wrap(x) for x in xs], dim)


def _tensors(*xs):
    """The operands as arrays when all are arrays, else all as Tensors."""
    if all(is_raw(x) for x in xs):
        return xs
    return tuple(_wrap(x) if is_raw(x) else x for x in xs)


# -- solve_triangular ---------------------------------------------------------------------------


def _tri_part(a, upper: bool, unit: bool):
    """The triangle of ``a`` the solve reads (the diagonal ones if ``unit``)."""
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        t = t - t.diagonal(0, -2, -1)[..., None] * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    return t


def _np_solve_triangular(a, b, upper: bool, left: bool, unit: bool):
    """``A^-1 B`` (``left``) or ``B A^-1`` for triangular A, broadcasting batch dims; a
    singular A gives inf/nan like torch's ``trsm``."""
    if not left:
        return _np_solve_triangular(
            a.swapaxes(-1, -2), b.swapaxes(-1, -2), not upper, True, unit
        ).swapaxes(-1, -2)
    dt = np.result_type(a.dtype, b.dtype)
    t = _tri_part(a, upper, unit).astype(dt, copy=False)
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, batch + t.shape[-2:])
    b = np.broadcast_to(b.astype(dt, copy=False), batch + b.shape[-2:])
    if t.size == 0 or b.size == 0:
        return np.zeros(batch + b.shape[-2:], dt)
    with quiet:
        try:
            return np.linalg.solve(t, b)
        except np.linalg.LinAlgError:
            pass
        # A zero on the diagonal: back substitution (BLAS trsm) as torch, giving inf/nan.
        trsm = _scipy_linalg().blas.get_blas_funcs("trsm", (t,))
        out = np.empty(batch + b.shape[-2:], dt)
        for i in np.ndindex(*batch):
            out[i] = trsm(1.0, t[i], b[i], lower=not upper, diag=int(unit))
        return out


def _solve_tri(A, B, upper: bool, left: bool = True, unit: bool = False):
    A, B = _tensors(A, B)
    if is_raw(A):
        return _np_solve_triangular(A, B, upper, left, unit)
    return solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)


def _tri_mask(x, upper: bool, unit: bool):
    if upper:
        return _triu(x, 1 if unit else 0)
    return _tril(x, -1 if unit else 0)


def _solve_triangular_vjp(g, A, result, needs_input_grad, upper, left, unitriangular):
    need_a, need_b = needs_input_grad
    gb = _solve_tri(_mH(A), g, not upper, left, unitriangular)
    ga = None
    if need_a:
        ga = -(gb @ _mH(result)) if left else -(_mH(result) @ gb)
        ga = _tri_mask(ga, upper, unitriangular)
    return ga, (gb if need_b else None)


def _solve_triangular_jvp(t_A, t_B, A, result, upper, left, unitriangular):
    rhs = t_B
    if t_A is not None:
        dA = _tri_mask(t_A, upper, unitriangular)
        prod = dA @ result if left else result @ dA
        rhs = -prod if rhs is None else rhs - prod
    if rhs is None:
        return None
    return _solve_tri(A, rhs, upper, left, unitriangular)


def _solve_triangular_forward(a, b, upper, left, unitriangular):
    return _np_solve_triangular(a, b, upper, left, unitriangular).astype(a.dtype, copy=False)


LinalgSolveTriangularBackward0 = defop(
    "LinalgSolveTriangularBackward0",
    inputs=("A", "B"),
    params=("upper", "left", "unitriangular"),
    forward=_solve_triangular_forward,
    vjp=_solve_triangular_vjp,
    jvp=_solve_triangular_jvp,
)


@register("solve_triangular", namespace="linalg")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """The solution ``X`` of ``A X = B`` (``X A = B`` if not ``left``) for triangular A.

    Example:
        >>> import ember
        >>> A = ember.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> ember.linalg.solve_triangular(A, ember.tensor([[3.0], [4.0]]), upper=True)
        tensor([[1.],
                [1.]])
    """
    a = _checks(A, "linalg.solve_triangular")
    if not isinstance(B, Tensor):
        raise TypeError(
            "linalg_solve_triangular(): argument 'B' (position 2) must be Tensor, not "
            f"{type(B).__name__}"
        )
    b = B._data
    if b.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(
            "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
            f"{b.shape[-2]}x{b.shape[-1]})"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of "
            f"type {scalar_name(a.dtype)} and B of type {scalar_name(b.dtype)} instead"
        )
    params = (bool(upper), bool(left), bool(unitriangular))
    x = _solve_triangular_forward(a, b, *params)
    t = record(LinalgSolveTriangularBackward0, x, (A, B), params)
    return write_out("linalg_solve_triangular", t, out)


# -- qr -------------------------------------------------------------------------------------------

_QR_R_MSG = (
    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
    "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."
)
_QR_COMPLETE_MSG = (
    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
)


def _qr_tall_vjp(gQ, gR, Q, R):
    """``A = Q R`` with Q m x n (m >= n): ``gA = (gQ + Q copyltu(M)) R^-H`` with
    ``M = R gR^H - gQ^H Q`` (copyltu: the symmetric matrix of M's lower triangle)."""
    M = None
    if gR is not None:
        M = R @ _mH(gR)
    if gQ is not None:
        M = -(_mH(gQ) @ Q) if M is None else M - _mH(gQ) @ Q
    low = _tril(M, -1)
    gA = Q @ (low + _mH(low) + (_tril(M) - low))
    if gQ is not None:
        gA = gA + gQ
    return _solve_tri(_mH(R), gA, False, left=False)


def _qr_vjp(grads, Q, R, mode):
    gQ, gR = grads
    if mode == "r":
        raise RuntimeError(_QR_R_MSG)
    Q, R = _as_output(Q, 0), _as_output(R, 1)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_COMPLETE_MSG)
    if m >= n:
        return _qr_tall_vjp(gQ, gR, Q, R)
    # A = Q [X | Y] with X square: Y = Q^H A2 feeds back into Q and A2.
    X, Y = R[..., :m], R[..., m:]
    gX = None if gR is None else gR[..., :m]
    gY = None if gR is None else gR[..., m:]
    if gY is not None:
        extra = (Q @ Y) @ _mH(gY)
        gQ = extra if gQ is None else gQ + extra
    gA1 = _qr_tall_vjp(gQ, gX, Q, X)
    gA2 = Q @ gY if gY is not None else gA1[..., :1] * 0 * Y[..., :1, :]
    return _cat([gA1, gA2], -1)


def _qr_tall_jvp(dA, Q, R):
    C = _mH(Q) @ _solve_tri(R, dA, True, left=False)
    low = _tril(C, -1)
    upper = C - low + _mH(low)  # dR R^-1
    dR = upper @ R
    dQ = _solve_tri(R, dA, True, left=False) - Q @ upper
    return dQ, dR


def _qr_jvp(t_A, Q, R, mode):
    if mode == "r":
        raise RuntimeError(_QR_R_MSG)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_COMPLETE_MSG)
    if m >= n:
        return list(_qr_tall_jvp(t_A, Q, R))
    X, Y = R[..., :m], R[..., m:]
    dQ, dX = _qr_tall_jvp(t_A[..., :m], Q, X)
    dY = _mH(dQ) @ (Q @ Y) + _mH(Q) @ t_A[..., m:]
    return [dQ, cat([dX, dY], -1)]


def _qr_forward(a, mode):
    if a.size == 0:
        m, n = a.shape[-2:]
        k = m if mode == "complete" else min(m, n)
        q = np.zeros(a.shape[:-2] + (m, k), a.dtype)
        q[..., range(min(m, k)), range(min(m, k))] = 1
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
    elif mode == "r":
        r = np.linalg.qr(a, mode="r")
    else:
        q, r = np.linalg.qr(a, mode=mode)
    if mode == "r":
        q = np.zeros((0,), a.dtype)
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


LinalgQrBackward0 = defop(
    "LinalgQrBackward0",
    inputs=("A",),
    outputs=("Q", "R"),
    params=("mode",),
    forward=_qr_forward,
    vjp={"A": _qr_vjp},
    jvp=_qr_jvp,
)


def _qr(A, mode: str, fname: str = "linalg.qr"):
    a = _checks(A, fname, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    with quiet:
        outs = list(_qr_forward(a, mode))
    return record_multi(LinalgQrBackward0, outs, (A,), (mode,))


@register("qr", namespace="linalg")
def qr(A, mode="reduced", *, out=None):
    """``A = Q R`` with orthonormal columns in Q and R upper triangular (``mode``: ``'reduced'``,
    ``'complete'``, or ``'r'``, which returns an empty Q).

    Example:
        >>> import ember
        >>> Q, R = ember.linalg.qr(ember.tensor([[3.0, 1.0], [4.0, 2.0]]))
        >>> (Q @ R).round(decimals=4)
        tensor([[3., 1.],
                [4., 2.]])
    """
    return qr_type(tuple(_qr(A, mode)))


@register("qr")
def _legacy_qr(input, some=True, *, out=None):
    """``torch.qr``: ``linalg.qr`` with ``some`` for the reduced mode.

    Example:
        >>> import ember
        >>> ember.qr(ember.tensor([[2.0, 0.0], [0.0, 3.0]])).R.abs()
        tensor([[2., 0.],
                [0., 3.]])
    """
    _warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.",
        UserWarning,
        stacklevel=2,
    )
    return legacy_qr_type(tuple(_qr(input, "reduced" if some else "complete")))


# -- eigh, eigvalsh -----------------------------------------------------------------------------


def _eig_gap(L):
    """``E[i, j] = L_j - L_i`` with ones on the diagonal."""
    return L[..., None, :] - L[..., :, None] + _eye_like(L)


def _eigh_vjp(grads, eigenvalues, eigenvectors):
    """torch's ``linalg_eig_backward`` (hermitian): ``gA = V (diag(gL) + skew(V^H gV) / E) V^H``
    (inf/nan at repeated eigenvalues when gV depends on them, as in torch)."""
    gL, gV = grads
    L, V = _as_output(eigenvalues, 0), _as_output(eigenvectors, 1)
    if gV is None:
        if gL is None:
            return None
        return (V * gL[..., None, :]) @ _mH(V)
    VhgV = _mH(V) @ gV
    gA = (0.5 * (VhgV - _mH(VhgV))) / _eig_gap(L)
    if gL is not None:
        gA = gA + gL[..., :, None] * _eye_like(L)
    return V @ (gA @ _mH(V))


def _eigh_jvp(t_A, eigenvalues, eigenvectors):
    L, V = eigenvalues, eigenvectors
    dP = _mH(V) @ (t_A @ V)
    dL = dP.diagonal(0, -2, -1)
    dV = V @ ((dP - dL[..., :, None] * _eye_like(L)) / _eig_gap(L))
    return [dL, dV]


def _eigh_forward(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w.astype(np.dtype(a.real.dtype), copy=False), v.astype(a.dtype, copy=False)


LinalgEighBackward0 = defop(
    "LinalgEighBackward0",
    inputs=("A",),
    outputs=("eigenvalues", "eigenvectors"),
    params=("_UPLO",),  # (read by the forward alone: torch's node saves no UPLO)
    forward=_eigh_forward,
    vjp={"A": _eigh_vjp},
    jvp=_eigh_jvp,
)


def _eigh(A, UPLO, fname: str):
    a = _checks(A, fname)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    with quiet:
        outs = list(_eigh_forward(a, UPLO))
    return record_multi(LinalgEighBackward0, outs, (A,), (UPLO,))


@register("eigh", namespace="linalg")
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of each symmetric (Hermitian) matrix, read
    from its ``UPLO`` triangle.

    Example:
        >>> import ember
        >>> ember.linalg.eigh(ember.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
        tensor([1., 2.])
    """
    return eigh_type(tuple(_eigh(A, UPLO, "linalg.eigh")))


@register("eigvalsh", namespace="linalg")
def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of each symmetric (Hermitian) matrix.

    Example:
        >>> import ember
        >>> ember.linalg.eigvalsh(ember.tensor([[2.0, 1.0], [1.0, 2.0]]))
        tensor([1., 3.])
    """
    return write_out("linalg_eigvalsh", _eigh(A, UPLO, "linalg.eigvalsh")[0], out)


# -- eig, eigvals ---------------------------------------------------------------------------------

eig_type = make_return_type("linalg_eig", ("eigenvalues", "eigenvectors"))

_EIG_PHASE_MSG = (
    "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
    "multiplication by e^{i phi}. The specified loss function depends on this quantity, so it "
    "is ill-defined."
)


def _complex_dtype(dt: np.dtype) -> np.dtype:
    """The complex dtype of a floating (or complex) dtype: float32 -> complex64."""
    return np.dtype(dt) if np.dtype(dt).kind == "c" else np.result_type(dt, np.complex64)


def _to_complex(x, like):
    """``x`` (array or Tensor) cast to the complex dtype of ``like``."""
    if is_raw(x):
        return x.astype(like.dtype, copy=False)
    dt = like._data.dtype
    return x if x._data.dtype == dt else x.to(dt)


def _eig_vjp(grads, eigenvalues, eigenvectors, real_input):
    """torch's ``linalg_eig_backward`` (not hermitian), with ``E*[i, j] = conj(L_j - L_i)``:
    ``gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / E*) V^H``; the real part for a
    real input. Raises when the loss depends on the phases of the eigenvectors."""
    gL, gV = grads
    L, V = _as_output(eigenvalues, 0), _as_output(eigenvectors, 1)
    if gV is None:
        if gL is None:
            return None
        gA = _solve(_mH(V), gL[..., :, None] * _mH(V))
    else:
        VhgV = _mH(V) @ gV
        diag = VhgV.diagonal(0, -2, -1)
        im = np.imag(diag if is_raw(diag) else diag._data)
        if not np.allclose(im, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_EIG_PHASE_MSG)
        VhgV = VhgV - _mH(V) @ (V * _to_complex(_re(diag), V)[..., None, :])
        gA = VhgV / _eig_gap(_cj(L))
        if gL is not None:
            gA = gA + (gL - gA.diagonal(0, -2, -1))[..., :, None] * _eye_like(L)
        gA = _solve(_mH(V), gA @ _mH(V))
    return _re(gA) if real_input else gA


def _eig_jvp(t_A, eigenvalues, eigenvectors):
    """torch's ``linalg_eig_jvp``: ``dP = V^-1 dA V``, ``dL = diag(dP)``,
    ``dV = dX - V Re(diag(V^H dX))`` with ``dX = V (offdiag(dP) / E)``."""
    L, V = eigenvalues, eigenvectors
    dP = _solve(V, _to_complex(t_A, V) @ V)
    dL = dP.diagonal(0, -2, -1)
    dX = V @ ((dP - dL[..., :, None] * _eye_like(L)) / _eig_gap(L))
    dV = dX - V * _to_complex(_re((_mH(V) @ dX).diagonal(0, -2, -1)), V)[..., None, :]
    return [dL, dV]


LinalgEigBackward0 = defop(
    "LinalgEigBackward0",
    inputs=("A",),
    outputs=("eigenvalues", "eigenvectors"),
    params=("real_input",),
    vjp={"A": _eig_vjp},
    jvp=_eig_jvp,
)


def _eig_checks(A, fname: str) -> np.ndarray:
    a = _matrices(A, fname, arg="input")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_name(a.dtype)}")
    if not np.isfinite(a).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    return a


def _eig(A, fname: str):
    """(eigenvalues, eigenvectors) Tensors of one recorded eig node (complex, as torch)."""
    a = _eig_checks(A, fname)
    cdt = _complex_dtype(a.dtype)
    if a.size == 0:
        w, v = np.zeros(a.shape[:-1], cdt), np.zeros(a.shape, cdt)
    else:
        with quiet:
            w, v = np.linalg.eig(a)
    outs = [w.astype(cdt, copy=False), v.astype(cdt, copy=False)]
    return record_multi(LinalgEigBackward0, outs, (A,), (a.dtype.kind == "f",))


@register("eig", namespace="linalg")
def eig(A: Tensor, *, out=None) -> tuple:
    """Eigenvalues and eigenvectors (unit norm columns) of each square matrix, as complex
    tensors (``complex64`` for ``float32`` input, ``complex128`` for ``float64``).

    Eigenvectors are defined up to a complex phase per column: differentiate only functions
    that do not depend on it (torch's backward raises otherwise).

    Example:
        >>> import ember
        >>> ember.linalg.eig(ember.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
        tensor([2.+0.j, 1.+0.j])
    """
    res = _eig(A, "linalg.eig")
    if out is not None:
        res = [write_out("linalg_eig", r, o) for r, o in zip(res, out)]
    return eig_type(tuple(res))


@register("eigvals", namespace="linalg")
def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The (complex) eigenvalues of each square matrix, in ``linalg.eig``'s order.

    Example:
        >>> import ember
        >>> ember.linalg.eigvals(ember.tensor([[0.0, -1.0], [1.0, 0.0]]))
        tensor([0.+1.j, 0.-1.j])
    """
    return write_out("linalg_eigvals", _eig(A, "linalg.eigvals")[0], out)


# -- householder_product (orgqr) ----------------------------------------------------------------


def _reflectors(a: np.ndarray) -> np.ndarray:
    """The Householder vectors (columns) stored below the diagonal of ``a``, unit diagonal."""
    m, n = a.shape[-2:]
    return np.tril(a, -1) + np.eye(m, n, dtype=a.dtype)


def _apply_reflector(v, t, X):
    """``H X`` with ``H = I - t v v^H`` (``v`` a column, ``t`` a batch of scalars)."""
    return X - (t[..., None, None] * v) @ (np.conjugate(v).swapaxes(-1, -2) @ X)


def _householder_forward(input, tau):
    m, n = input.shape[-2:]
    V = _reflectors(input)
    Q = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in reversed(range(tau.shape[-1])):
        Q = _apply_reflector(V[..., i : i + 1], tau[..., i], Q)
    return Q


def _householder_vjp(g, input, tau):
    """``Q = H_0 ... H_{k-1} I[:, :n]`` with ``H_i = I - tau_i v_i v_i^H``: with
    ``M_i = (H_0..H_{i-1})^H G (H_{i+1}..H_{k-1} I[:, :n])^H``, the gradient of ``H_i`` is
    ``M_i``, so ``g_tau_i = -v_i^H M_i v_i`` and ``g_v_i = -conj(tau_i) M_i v_i - tau_i M_i^H v_i``
    (only the entries below the diagonal of ``input`` are read, as in torch)."""
    m, n = input.shape[-2:]
    k = tau.shape[-1]
    V = _reflectors(input)
    suffix = [None] * k  # suffix[i] = H_{i+1} ... H_{k-1} I[:, :n]
    S = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in reversed(range(k)):
        suffix[i] = S
        S = _apply_reflector(V[..., i : i + 1], tau[..., i], S)
    gP = g  # P_i^H G, with P_i = H_0 ... H_{i-1}
    g_input = np.zeros_like(input)
    g_tau = np.zeros_like(tau)
    for i in range(k):
        v = V[..., i : i + 1]
        vh = np.conjugate(v).swapaxes(-1, -2)
        t = tau[..., i, None, None]
        M = gP @ np.conjugate(suffix[i]).swapaxes(-1, -2)
        Mv = M @ v
        MHv = np.conjugate(M).swapaxes(-1, -2) @ v
        g_tau[..., i] = -(vh @ Mv)[..., 0, 0]
        gv = -np.conjugate(t) * Mv - t * MHv
        g_input[..., i + 1 :, i] = gv[..., i + 1 :, 0]
        # P_{i+1}^H G = H_i^H P_i^H G
        gP = _apply_reflector(v, np.conjugate(tau[..., i]), gP)
    return g_input, g_tau


def _householder_composite(input, tau):
    """The product with differentiable ops (for forward mode and higher derivatives)."""
    m, n = input.shape[-2:]
    eye = _wrap(np.eye(m, n, dtype=input._data.dtype))
    V = input.tril(-1) + eye
    Q = eye.expand(*input.shape)
    for i in reversed(range(tau.shape[-1])):
        v = V[..., i : i + 1]
        Q = Q - (tau[..., i, None, None] * v) @ (_mH(v) @ Q)
    return Q


LinalgHouseholderProductBackward0 = defop(
    "LinalgHouseholderProductBackward0",
    inputs=("input", "tau"),
    forward=_householder_forward,
    vjp=lambda g, input, tau: _householder_vjp(g, input, tau),
    composite=_householder_composite,
    jvp=COMPOSITE,
)


def _householder_checks(input, tau, fname: str) -> tuple:
    for name, pos, x in (("input", 1, input), ("tau", 2, tau)):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"linalg_householder_product(): argument '{name}' (position {pos}) must be "
                f"Tensor, not {type(x).__name__}"
            )
    a, t = input._data, tau._data
    pre = f"torch.{fname}"
    if a.ndim < 2:
        raise RuntimeError(f"{pre}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(
            f"{pre}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if t.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"{pre}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if a.ndim - t.ndim != 1:
        raise RuntimeError(
            f"{pre}: Expected tau to have one dimension less than input, but got tau.ndim equal "
            f"to {t.ndim} and input.ndim is equal to {a.ndim}"
        )
    if a.ndim > 2 and a.shape[:-2] != t.shape[:-1]:
        raise RuntimeError(
            f"{pre}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
            f"[{', '.join(str(s) for s in t.shape[:-1])}]"
        )
    if a.dtype != t.dtype:
        raise RuntimeError(
            f"{pre}: tau dtype {scalar_name(t.dtype)} does not match input dtype "
            f"{scalar_name(a.dtype)}"
        )
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    return a, t


@register("householder_product", namespace="linalg")
def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}``, ``H_i = I - tau_i v_i v_i^H``, with
    ``v_i`` the ``i``-th column of ``A`` below the diagonal and a 1 on it (LAPACK's orgqr; the
    Q of ``geqrf``'s output).

    Example:
        >>> import ember
        >>> A = ember.tensor([[1.0, 0.0], [1.0, 1.0]])
        >>> ember.linalg.householder_product(A, ember.tensor([1.0]))
        tensor([[ 0., -1.],
                [-1.,  0.]])
    """
    a, t = _householder_checks(A, tau, "linalg.householder_product")
    with quiet:
        q = _householder_forward(a, t)
    res = record(LinalgHouseholderProductBackward0, q.astype(a.dtype, copy=False), (A, tau), ())
    return write_out("linalg_householder_product", res, out)


@register("orgqr")
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``torch.orgqr``: ``linalg.householder_product(input, input2)``.

    Example:
        >>> import ember
        >>> ember.orgqr(ember.eye(2), ember.tensor([0.0, 0.0]))
        tensor([[1., 0.],
                [0., 1.]])
    """
    return householder_product(input, input2)


# -- pinv, lstsq ---------------------------------------------------------------------------------


def _pinv_vjp(g, A, result):
    """The adjoint of ``d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+``
    (constant rank)."""
    P, Ph = result, _mH(result)
    gh = _mH(g)
    gA = -(Ph @ g @ Ph)
    left = gh - (A @ P) @ gh  # (I - A A+) g^H
    right = gh - gh @ (P @ A)  # g^H (I - A+ A)
    return gA + left @ (P @ Ph) + (Ph @ P) @ right


def _pinv_jvp(t_A, A, result):
    P, Ph = result, _mH(result)
    dAh = _mH(t_A)
    out = -(P @ t_A @ P)
    out = out + (P @ Ph) @ (dAh - (dAh @ A) @ P)
    return out + (dAh - (P @ A) @ dAh) @ (Ph @ P)


LinalgPinvBackward0 = defop(
    "LinalgPinvBackward0",
    inputs=("A",),
    params=("_atol", "_rtol", "_hermitian"),  # (the forward's: torch's node saves none)
    forward=lambda a, atol, rtol, hermitian: _pinv_array(a, atol, rtol, hermitian),
    vjp={"A": _pinv_vjp},
    jvp=_pinv_jvp,
)


def _tol_array(x, dt):
    if x is None:
        return None
    return np.asarray(x._data if isinstance(x, Tensor) else x, dtype=dt)


def _pinv_array(a, atol, rtol, hermitian: bool):
    real = np.dtype(a.real.dtype)
    m, n = a.shape[-2:]
    atol, rtol = _tol_array(atol, real), _tol_array(rtol, real)
    if rtol is None:
        rtol = (
            np.asarray(np.finfo(real).eps * max(m, n), real)
            if atol is None or np.all(atol <= 0)
            else np.zeros((), real)
        )
    if atol is None:
        atol = np.zeros((), real)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    with quiet:
        if hermitian:
            w, u = np.linalg.eigh(a)
            s = np.abs(w)
            tol = np.maximum(atol[..., None], rtol[..., None] * s.max(-1, keepdims=True))
            inv_s = np.where(s > tol, 1 / np.where(w == 0, 1, w), 0)
            res = (u * inv_s[..., None, :]) @ np.conjugate(u).swapaxes(-1, -2)
        else:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            tol = np.maximum(atol[..., None], rtol[..., None] * s[..., :1])
            inv_s = np.where(s > tol, 1 / np.where(s == 0, 1, s), 0)
            v = np.conjugate(vh).swapaxes(-1, -2)
            res = (v * inv_s[..., None, :]) @ np.conjugate(u).swapaxes(-1, -2)
    return res.astype(a.dtype, copy=False)


@register("pinv", namespace="linalg")
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse: singular values at most ``max(atol, rtol * s_max)``
    are treated as zero (``rcond`` is torch's older name for ``rtol``).

    Example:
        >>> import ember
        >>> ember.linalg.pinv(ember.tensor([[2.0, 0.0], [0.0, 0.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    a = _checks(A, "linalg.pinv", square=False)
    if rcond is not None:
        rtol = rcond
    params = (atol, rtol, bool(hermitian))
    res = _pinv_array(a, *params)
    return write_out("linalg_pinv", record(LinalgPinvBackward0, res, (A,), params), out)


@register("pinverse")
def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``.

    Example:
        >>> import ember
        >>> ember.pinverse(ember.tensor([[4.0]]))
        tensor([[0.2500]])
    """
    return pinv(input, rtol=rcond)


def _lstsq_vjp(grads, A, B, solution, needs_input_grad, vector):
    """torch's ``linalg_lstsq_backward`` (through the pseudo-inverse), plus the squared
    residuals' gradient ``2 (A X - B)`` at the optimum."""
    gX, gR = grads[0], grads[1]
    need_a, need_b = needs_input_grad
    X, Bm = solution, B
    if vector:
        X, Bm = X[..., None], Bm[..., None]
        gX = None if gX is None else gX[..., None]
    ga = gb = None
    if gX is not None:
        P = pinv(A) if not is_raw(A) else _pinv_array(A, None, None, False)
        if need_a:
            ga = _pinv_vjp(gX @ _mH(Bm), A, P)
        if need_b:
            gb = _mH(P) @ gX
    if gR is not None and gR.shape[-1:] == X.shape[-1:] and gR.size != 0:
        res = A @ X - Bm
        w = 2 * res * gR[..., None, :]
        if need_a:
            ga = w @ _mH(X) if ga is None else ga + w @ _mH(X)
        if need_b:
            gb = -w if gb is None else gb - w
    if vector and gb is not None:
        gb = gb[..., 0]
    return ga, gb


LinalgLstsqBackward0 = defop(
    "LinalgLstsqBackward0",
    inputs=("A", "B"),
    outputs=("solution", "residuals", "rank", "singular_values"),
    differentiable=(True, True, False, False),
    params=("vector",),
    vjp=_lstsq_vjp,
)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@register("lstsq", namespace="linalg")
def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (``torch.return_types.linalg_lstsq``: the
    residuals, rank and singular values are filled as torch's CPU drivers fill them).

    Example:
        >>> import ember
        >>> A = ember.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
        >>> ember.linalg.lstsq(A, ember.tensor([[1.0], [2.0], [3.0]])).solution
        tensor([[1.],
                [2.]])
    """
    a = _checks(A, "linalg.lstsq", square=False)
    if not isinstance(B, Tensor):
        raise TypeError(
            f"linalg_lstsq(): argument 'b' (position 2) must be Tensor, not {type(B).__name__}"
        )
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    b = B._data
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    if a.shape[-2] != bm.shape[-2]:
        raise RuntimeError(
            "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
            if not vector
            else "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {cpp_name(a.dtype)} and other's dtype {cpp_name(b.dtype)}"
        )
    m, n = a.shape[-2:]
    real = np.dtype(a.real.dtype)
    if rcond is None:
        rcond = float(np.finfo(real).eps) * max(m, n)
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    ab = np.broadcast_to(a, batch + a.shape[-2:])
    bb = np.broadcast_to(bm, batch + bm.shape[-2:])
    k = bm.shape[-1]
    x = np.zeros(batch + (n, k), a.dtype)
    ranks = np.zeros(batch, np.int64)
    svals = np.zeros(batch + (min(m, n),), real)
    sl = _scipy_linalg()
    lapack = "gelsy" if driver == "gels" else driver
    with quiet:
        for i in np.ndindex(*batch):
            if ab[i].size == 0 or bb[i].size == 0:
                continue
            sol, _, rk, sv = sl.lstsq(
                ab[i], bb[i], cond=rcond, lapack_driver=lapack, check_finite=False
            )
            x[i], ranks[i] = sol, rk
            if sv is not None:
                svals[i] = sv
    full_rank = bool(np.all(ranks == min(m, n)))
    if driver != "gelsy" and m > n and full_rank:
        with quiet:
            residuals = (np.abs(ab @ x - bb) ** 2).sum(-2).astype(real)
    else:
        residuals = np.zeros((0,), real)
    if driver == "gels":
        ranks = np.zeros((0,), np.int64)
    if driver not in ("gelsd", "gelss"):
        svals = np.zeros((0,), real)
    if vector:
        x = x[..., 0]
    outs = [x, residuals.astype(a.dtype, copy=False), ranks, svals]
    return lstsq_type(tuple(record_multi(LinalgLstsqBackward0, outs, (A, B), (vector,))))


# -- lu_factor, lu, lu_solve ---------------------------------------------------------------------


def _np_lu(a):
    """``(P, L, U, pivots)`` of each matrix (``A = P L U``, pivots 1-based int32)."""
    sl = _scipy_linalg()
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    P = np.zeros(batch + (m, m), a.dtype)
    L = np.zeros(batch + (m, k), a.dtype)
    U = np.zeros(batch + (k, n), a.dtype)
    piv = np.zeros(batch + (k,), np.int32)
    with quiet, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's LinAlgWarning: a zero pivot is ``info``
        for i in np.ndindex(*batch):
            if a[i].size == 0:
                continue
            lu_, p = sl.lu_factor(a[i], check_finite=False) if m == n else _rect_lu(a[i])
            piv[i] = p[:k] + 1
            L[i] = np.tril(lu_[:, :k], -1) + np.eye(m, k, dtype=a.dtype)
            U[i] = np.triu(lu_[:k])
            perm = np.arange(m)
            for j, pj in enumerate(p[:k]):
                perm[[j, pj]] = perm[[pj, j]]
            P[i][perm, np.arange(m)] = 1
    return P, L, U, piv


def _rect_lu(a):
    """LAPACK getrf on a rectangular matrix: the packed factors and 0-based pivots."""
    getrf = _scipy_linalg().lapack.get_lapack_funcs("getrf", (a,))
    lu_, p, _info = getrf(a)
    return lu_, p


def _lu_info(U):
    """getrf's ``info``: the 1-based index of the first zero on U's diagonal, else 0."""
    d = U.diagonal(0, -2, -1) == 0
    return np.where(d.any(-1), d.argmax(-1) + 1, 0).astype(np.int32)


def _lu_vjp(gL, gU, P, L, U):
    """torch's ``linalg_lu_backward`` (P fixed): ``gA = P L^-H (L^H gL o 1_L + gU U^H o 1_U)
    U^-H`` for square A, with the extra blocks of tall and wide factors."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        inner = None
        if gL is not None:
            inner = _tril(_mH(L) @ gL, -1)
        if gU is not None:
            t = _triu(gU @ _mH(U))
            inner = t if inner is None else inner + t
        gA = _solve_tri(_mH(U), inner, False, left=False)
        gA = _solve_tri(_mH(L), gA, True, left=True, unit=True)
        return P @ gA
    if m < n:  # wide: U = [U1 | U2] with U2 = L^-1 P^T A2
        U1 = U[..., :k]
        low = None if gL is None else _mH(L) @ gL
        inner = None
        if gU is not None:
            low2 = -(gU[..., k:] @ _mH(U[..., k:]))
            low = low2 if low is None else low + low2
            inner = _triu(gU[..., :k] @ _mH(U1))
        low = _tril(low, -1)
        inner = low if inner is None else inner + low
        gA1 = _solve_tri(_mH(U1), inner, False, left=False)
        gA2 = gU[..., k:] if gU is not None else U[..., k:] * 0
        gA = _cat([gA1, gA2], -1)
        return P @ _solve_tri(_mH(L), gA, True, left=True, unit=True)
    # tall: L = [L1; L2]
    L1 = L[..., :k, :]  # tall: L = [L1; L2] with L2 = A2 U^-1
    up = None if gU is None else gU @ _mH(U)
    inner = None
    if gL is not None:
        up2 = -(_mH(L[..., k:, :]) @ gL[..., k:, :])
        up = up2 if up is None else up + up2
        inner = _tril(_mH(L1) @ gL[..., :k, :], -1)
    up = _triu(up)
    inner = up if inner is None else inner + up
    gA1 = _solve_tri(_mH(L1), inner, True, left=True, unit=True)
    gA2 = gL[..., k:, :] if gL is not None else L[..., k:, :] * 0
    gA = _cat([gA1, gA2], -2)
    return P @ _solve_tri(_mH(U), gA, False, left=False)


def _lu_jvp_parts(dA, P, L, U):
    """Tangents of L and U (square, tall or wide)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    dA = P.mT @ dA
    if m >= n:
        L1, dA1 = L[..., :k, :], dA[..., :k, :]
    else:
        L1, dA1 = L, dA
    U1 = U[..., :k] if m < n else U
    C = _solve_tri(U1, _solve_tri(L1, dA1[..., :, :k], False, unit=True), True, left=False)
    dL1 = L1 @ _tril(C, -1)
    dU1 = _triu(C) @ U1
    if m == n:
        return dL1, dU1
    if m < n:  # dU2 = L^-1 (dA2 - dL U2)
        dU2 = _solve_tri(L1, dA1[..., k:] - dL1 @ U[..., k:], False, unit=True)
        return dL1, cat([dU1, dU2], -1)
    # tall: dL2 = (dA2 - L2 dU) U^-1
    dL2 = _solve_tri(U1, dA[..., k:, :] - L[..., k:, :] @ dU1, True, left=False)
    return cat([dL1, dL2], -2), dU1


def _lu_node_vjp(grads, P, L, U):
    P, L, U = (_as_output(x, i) for i, x in enumerate((P, L, U)))
    return _lu_vjp(grads[1], grads[2], P, L, U)


def _lu_node_jvp(t_A, P, L, U):
    dL, dU = _lu_jvp_parts(t_A, P, L, U)
    return [P * 0, dL, dU]


LinalgLuBackward0 = defop(
    "LinalgLuBackward0",
    inputs=("A",),
    outputs=("P", "L", "U"),
    differentiable=(False, True, True),
    vjp={"A": _lu_node_vjp},
    jvp=_lu_node_jvp,
)


def _unpack(LU, m: int, n: int):
    k = min(m, n)
    L = (
        _tril(LU[..., :, :k], -1) + _wrap(np.eye(m, k, dtype=LU._data.dtype))
        if not is_raw(LU)
        else np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
    )
    U = _triu(LU[..., :k, :])
    return L, U


def _lu_factor_vjp(grads, A, LU, pivots_perm):
    gLU = grads[0]
    LU = _as_output(LU, 0)
    m, n = LU.shape[-2:]
    k = min(m, n)
    L, U = _unpack(LU, m, n)
    P = pivots_perm if is_raw(LU) else _wrap(pivots_perm)
    return _lu_vjp(_tril(gLU[..., :, :k], -1), _triu(gLU[..., :k, :]), P, L, U)


def _lu_factor_jvp(t_A, LU, pivots_perm):
    m, n = LU.shape[-2:]
    L, U = _unpack(LU, m, n)
    dL, dU = _lu_jvp_parts(t_A, _wrap(pivots_perm), L, U)
    k = min(m, n)
    if m >= n:
        dLU = dL + dU if m == n else cat([dL[..., :k, :] + dU, dL[..., k:, :]], -2)
    else:
        dLU = cat([dL + dU[..., :k], dU[..., k:]], -1)
    return [dLU, None, None]


LinalgLuFactorExBackward0 = defop(
    "LinalgLuFactorExBackward0",
    inputs=("A",),
    outputs=("LU", "pivots", "info"),
    differentiable=(True, False, False),
    saves=("pivots_perm",),
    vjp={"A": _lu_factor_vjp},
    jvp=_lu_factor_jvp,
)


def _lu_factor(A, pivot, fname):
    a = _checks(A, fname, square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    P, L, U, piv = _np_lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    LU = np.zeros(a.shape, a.dtype)
    LU[..., :, :k] += np.tril(L, -1)
    LU[..., :k, :] += U
    info = _lu_info(U)
    outs = record_multi(LinalgLuFactorExBackward0, [LU, piv, info], (A,), (), (P,))
    return outs


@register("lu_factor_ex", namespace="linalg")
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``lu_factor`` with ``info`` (the first zero pivot, 1-based; 0 if none) and no error.

    Example:
        >>> import ember
        >>> ember.linalg.lu_factor_ex(ember.tensor([[0.0, 1.0], [2.0, 3.0]])).pivots
        tensor([2, 2], dtype=ember.int32)
    """
    return lu_factor_ex_type(tuple(_lu_factor(A, pivot, "linalg.lu_factor_ex")))


@register("lu_factor", namespace="linalg")
def lu_factor(A, *, pivot=True, out=None):
    """The packed LU factorization with partial pivoting (``pivots`` 1-based, LAPACK's).

    Example:
        >>> import ember
        >>> ember.linalg.lu_factor(ember.tensor([[0.0, 1.0], [2.0, 3.0]])).LU
        tensor([[2., 3.],
                [0., 1.]])
    """
    LU, piv, info = _lu_factor(A, pivot, "linalg.lu_factor")
    bad = info._data.reshape(-1)
    for bi, i in enumerate(bad):
        if i:
            prefix = _batch_prefix(A._data, bi)
            raise RuntimeError(
                f"torch.linalg.lu_factor: {prefix}U[{i},{i}] is zero and using it on lu_solve "
                "would result in a division by zero. If you still want to perform the "
                "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                "pivot)"
            )
    return lu_factor_type((LU, piv))


@register("lu", namespace="linalg")
def lu(A, *, pivot=True, out=None):
    """``A = P L U``: the permutation, unit lower- and upper-triangular factors.

    Example:
        >>> import ember
        >>> ember.linalg.lu(ember.tensor([[0.0, 1.0], [2.0, 3.0]])).P
        tensor([[0., 1.],
                [1., 0.]])
    """
    a = _checks(A, "linalg.lu", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    P, L, U, _ = _np_lu(a)
    return lu_type(tuple(record_multi(LinalgLuBackward0, [P, L, U], (A,))))


def _perm_from_pivots(piv: np.ndarray, m: int, dt) -> np.ndarray:
    batch = piv.shape[:-1]
    P = np.zeros(batch + (m, m), dt)
    for i in np.ndindex(*batch):
        perm = np.arange(m)
        for j, pj in enumerate(piv[i] - 1):
            perm[[j, pj]] = perm[[pj, j]]
        P[i][perm, np.arange(m)] = 1
    return P


def _lu_solve_vjp(g, LU, B, result, needs_input_grad, perm, left, adjoint):
    """``X = op(A)^-1 B`` with ``A = P L U`` (op: the identity or the adjoint; ``X B^...``
    when not ``left``): ``gB`` solves the adjoint system; ``gLU`` is ``gA`` pulled back to
    the packed factors."""
    need_lu, need_b = needs_input_grad
    P = perm if is_raw(LU) else _wrap(perm)
    n = LU.shape[-1]
    L, U = _unpack(LU, n, n)
    A = P @ L @ U
    Aop = _mH(A) if adjoint else A
    gb = _solve(_mH(Aop), g) if left else _solve(Aop, g.mT).mT
    ga_op = None
    if need_lu:
        ga_op = -(gb @ _mH(result)) if left else -(_mH(result) @ gb)
    gLU = None
    if ga_op is not None:
        gA = _mH(ga_op) if adjoint else ga_op
        gA = P.mT @ gA
        gLU = _tril(gA @ _mH(U), -1) + _triu(_mH(L) @ gA)
    return gLU, (gb if need_b else None)


LinalgLuSolveBackward0 = defop(
    "LinalgLuSolveBackward0",
    inputs=("LU", "B"),
    params=("left", "adjoint"),
    saves=("perm",),
    vjp=_lu_solve_vjp,
)


@register("lu_solve", namespace="linalg")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """The solution of ``A X = B`` from ``lu_factor``'s ``(LU, pivots)`` (``X A = B`` if not
    ``left``; ``A^H`` for A if ``adjoint``).

    Example:
        >>> import ember
        >>> LU, piv = ember.linalg.lu_factor(ember.tensor([[2.0, 0.0], [0.0, 4.0]]))
        >>> ember.linalg.lu_solve(LU, piv, ember.tensor([[2.0], [4.0]]))
        tensor([[1.],
                [1.]])
    """
    lu_ = _checks(LU, "linalg.lu_solve")
    b = B._data
    n = lu_.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b.shape[-2]}x{b.shape[-1]})"
        )
    P = _perm_from_pivots(np.asarray(pivots._data), n, lu_.dtype)
    L = np.tril(lu_, -1) + np.eye(n, dtype=lu_.dtype)
    U = np.triu(lu_)
    with quiet:
        A = P @ L @ U
        if adjoint:
            A = np.conjugate(A).swapaxes(-1, -2)
        if left:
            x = (
                _np_solve_triangular(L, P.swapaxes(-1, -2) @ b, False, True, True)
                if not adjoint
                else np.linalg.solve(A, b)
            )
            if not adjoint:
                x = _np_solve_triangular(U, x, True, True, False)
        else:
            x = np.linalg.solve(A.swapaxes(-1, -2), b.swapaxes(-1, -2)).swapaxes(-1, -2)
    t = record(
        LinalgLuSolveBackward0,
        x.astype(lu_.dtype, copy=False),
        (LU, B),
        (bool(left), bool(adjoint)),
        (P,),
    )
    return write_out("linalg_lu_solve", t, out)


# -- matrix_exp ----------------------------------------------------------------------------------


def _expm_block(A, E):
    """The upper-right block of ``exp([[A, E], [0, A]])``: the Frechet derivative of exp at A
    in direction E (a recorded matrix_exp for Tensors)."""
    n = A.shape[-1]
    A, E = _tensors(A, E)
    zero = A * 0
    top = _cat([A, E], -1)
    bottom = _cat([zero, A], -1)
    big = _cat([top, bottom], -2)
    if is_raw(big):
        return _np_expm(big)[..., :n, n:]
    return matrix_exp(big)[..., :n, n:]


def _np_expm(a):
    if a.size == 0:
        return a.copy()
    with quiet:
        return _scipy_linalg().expm(a).astype(a.dtype, copy=False)


LinalgMatrixExpBackward0 = defop(
    "LinalgMatrixExpBackward0",
    forward=_np_expm,
    vjp={"self": lambda g, self: _expm_block(_mH(self), g)},
    jvp=lambda t_self, self: _expm_block(self, t_self),
)


@register("matrix_exp", namespace="linalg")
def matrix_exp(A):
    """The matrix exponential of each square matrix.

    Example:
        >>> import ember
        >>> ember.linalg.matrix_exp(ember.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    a = _checks(A, "linalg.matrix_exp")
    return record(LinalgMatrixExpBackward0, _np_expm(a), (A,))


@register("matrix_exp")
def _top_matrix_exp(input):
    """``torch.matrix_exp``: ``linalg.matrix_exp``.

    Example:
        >>> import ember
        >>> ember.matrix_exp(ember.zeros(1, 1))
        tensor([[1.]])
    """
    return matrix_exp(input)


# -- composites: matrix_power, matrix_rank, cond, multi_dot, vecdot, tensorinv, tensorsolve ---


@register("matrix_power", namespace="linalg")
def matrix_power(A, n, *, out=None):
    """``A^n`` by repeated squaring (``inv(A)^-n`` for negative n, the identity for 0).

    Example:
        >>> import ember
        >>> ember.linalg.matrix_power(ember.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    if not isinstance(A, Tensor):
        raise TypeError(
            f"linalg_matrix_power(): argument 'input' (position 1) must be Tensor, not "
            f"{type(A).__name__}"
        )
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_power: The input tensor A must have at least 2 dimensions."
        )
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if n == 0:
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
        return write_out("linalg_matrix_power", _wrap(eye), out)
    if n < 0:
        A = inv(A)
        n = -n
    result = None
    base = A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return write_out("linalg_matrix_power", result, out)


@register("matrix_power")
def _top_matrix_power(input, n):
    """``torch.matrix_power``: ``linalg.matrix_power``.

    Example:
        >>> import ember
        >>> ember.matrix_power(ember.tensor([[2.0]]), 3)
        tensor([[8.]])
    """
    return matrix_power(input, n)


@register("matrix_rank", namespace="linalg")
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64).

    Example:
        >>> import ember
        >>> ember.linalg.matrix_rank(ember.tensor([[1.0, 2.0], [2.0, 4.0]]))
        tensor(1)
    """
    a = _checks(A, "linalg.matrix_rank", square=bool(hermitian))
    real = np.dtype(a.real.dtype)
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = a.shape[-2:]
    atol_a, rtol_a = _tol_array(atol, real), _tol_array(rtol, real)
    if rtol_a is None:
        rtol_a = (
            np.asarray(np.finfo(real).eps * max(m, n), real)
            if atol_a is None or np.all(atol_a <= 0)
            else np.zeros((), real)
        )
    if atol_a is None:
        atol_a = np.zeros((), real)
    if a.size == 0:
        return _wrap(np.zeros(a.shape[:-2], np.int64))
    with quiet:
        s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    smax = s.max(-1)
    tol_v = np.maximum(atol_a, rtol_a * smax)
    return write_out(
        "linalg_matrix_rank", _wrap((s > tol_v[..., None]).sum(-1).astype(np.int64)), out
    )


@register("cond", namespace="linalg")
def cond(A, p=None, *, out=None):
    """The condition number in the ``p``-norm (``None``/2: ``s_max / s_min``; -2 its inverse;
    otherwise ``norm(A, p) * norm(inv(A), p)``).

    Example:
        >>> import ember
        >>> ember.linalg.cond(ember.tensor([[2.0, 0.0], [0.0, 0.5]]))
        tensor(4.)
    """
    a = _checks(A, "linalg.cond", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s[..., :1], s[..., -1:]
        r = (big / small if p != -2 else small / big).squeeze(-1)
        return write_out("linalg_cond", r, out)
    if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    del a
    # torch: the product of the norms, NaN (a singular A) mapped to inf by nan_to_num_.
    r = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return write_out("linalg_cond", nan_to_num(r, math.inf, math.inf, -math.inf), out)


@register("multi_dot", namespace="linalg")
def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first and last may be vectors), multiplied
    in the order that costs the fewest scalar multiplications.

    Example:
        >>> import ember
        >>> ember.linalg.multi_dot([ember.ones(2), ember.eye(2), ember.ones(2)])
        tensor(2.)
    """
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_vec, last_vec = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i, t in enumerate(mats):
        if t.ndim != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D"
                if 0 < i < n - 1
                else f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must be 1D or "
                f"2D but got {tensors[i].ndim}D"
            )
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {tuple(tensors[i].shape)} "
                f"and {tuple(tensors[i + 1].shape)} cannot be multiplied"
            )
    dims = [mats[0].shape[0]] + [t.shape[1] for t in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return chain(i, k) @ chain(k + 1, j)

    r = chain(0, n - 1)
    if first_vec or last_vec:  # torch views the 2-D product with the vectors' shape
        r = r.view(tuple(r.shape[1 if first_vec else 0 : 1 if last_vec else 2]))
    return write_out("linalg_multi_dot", r, out)


@register("vecdot", namespace="linalg")
def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)`` with broadcasting.

    Example:
        >>> import ember
        >>> ember.linalg.vecdot(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor(11.)
    """
    xc = x.conj() if x._data.dtype.kind == "c" else x
    return write_out("linalg_vecdot", _sum(xc * y, dim), out)


@register("tensorinv", namespace="linalg")
def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` seen as a matrix with the first ``ind`` dims as rows.

    Example:
        >>> import ember
        >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2), ind=1).shape
        torch.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = shape[:ind], shape[ind:]
    pr, pc = math.prod(rows), math.prod(cols)
    if pr != pc:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {pc} != {pr}"
        )
    return write_out("linalg_tensorinv", inv(A.reshape(pr, pc)).reshape(cols + rows), out)


@register("tensorsolve", namespace="linalg")
def tensorsolve(A, B, dims=None, *, out=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``.

    Example:
        >>> import ember
        >>> ember.linalg.tensorsolve(ember.eye(4).reshape(2, 2, 4), ember.ones(2, 2)).shape
        torch.Size([4])
    """
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        rest = [d for d in range(nd) if d not in dims]
        A = A.permute(*rest, *dims)
    res_shape = tuple(A.shape[B.ndim :])
    pb = math.prod(B.shape)
    pr = math.prod(res_shape)
    if pb != pr:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(result_shape) == prod(other.shape), "
            f"but got {pr} != {pb}"
        )
    x = solve(A.reshape(pb, pr), B.reshape(pb))
    return write_out("linalg_tensorsolve", x.reshape(res_shape), out)


# -- the _ex variants: an info tensor instead of an error ------------------------------------------


def _info_zero(a):
    return _wrap(np.zeros(a.shape[:-2], np.int32))


@register("inv_ex", namespace="linalg")
def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: info is the first zero pivot (1-based), 0 if A is invertible.

    Example:
        >>> import ember
        >>> ember.linalg.inv_ex(ember.tensor([[2.0]])).info
        tensor(0, dtype=ember.int32)
    """
    a = _checks(A, "linalg.inv_ex")
    if check_errors:
        return inv_ex_type((inv(A), _info_zero(a)))
    mats = a.reshape((-1,) + a.shape[-2:])
    with quiet:
        infos = np.array([_first_zero_pivot(m) for m in mats], np.int32).reshape(a.shape[:-2])
    if not infos.any():
        return inv_ex_type((inv(A), _wrap(infos)))
    with quiet:
        res = np.linalg.pinv(a) * np.nan  # torch's values are unspecified there
    return inv_ex_type((record(LinalgInvExBackward0, res.astype(a.dtype), (A,)), _wrap(infos)))


@register("cholesky_ex", namespace="linalg")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: info is the order of the first leading minor that is not positive
    definite, 0 if A is positive definite.

    Example:
        >>> import ember
        >>> ember.linalg.cholesky_ex(ember.tensor([[4.0]])).L
        tensor([[2.]])
    """
    a = _checks(A, "linalg.cholesky_ex")
    try:
        return cholesky_ex_type((cholesky(A, upper=upper), _info_zero(a)))
    except LinAlgError:
        if check_errors:
            raise
    mats = a.reshape((-1,) + a.shape[-2:])
    infos = np.zeros(len(mats), np.int32)
    for bi, m in enumerate(mats):
        for k in range(1, a.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                infos[bi] = k
                break
    res = np.full(a.shape, np.nan, a.dtype)
    t = record(LinalgCholeskyExBackward0, res, (A,), (bool(upper),))
    return cholesky_ex_type((t, _wrap(infos.reshape(a.shape[:-2]))))


@register("solve_ex", namespace="linalg")
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)``: ``solve`` with the first zero pivot (0 if none) instead of an
    error.

    Example:
        >>> import ember
        >>> ember.linalg.solve_ex(ember.tensor([[2.0]]), ember.tensor([[4.0]])).result
        tensor([[2.]])
    """
    a = _checks(A, "linalg.solve_ex")
    try:
        return solve_ex_type((solve(A, B, left=left), _info_zero(a)))
    except LinAlgError:
        if check_errors:
            raise
    mats = a.reshape((-1,) + a.shape[-2:])
    infos = np.array([_first_zero_pivot(m) for m in mats], np.int32).reshape(a.shape[:-2])
    b = B._data
    vector = left and (b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]))
    res = np.full(
        np.broadcast_shapes(a.shape[:-2], b.shape[: -1 if vector else -2])
        + b.shape[-1 if vector else -2 :],
        np.nan,
        a.dtype,
    )
    t = record(LinalgSolveExBackward0, res, (A, B), (bool(left), vector))
    return solve_ex_type((t, _wrap(infos)))


# -- torch.svd (U, S, V) ---------------------------------------------------------------------------


@register("svd")
def _legacy_svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` with V (not Vh), reduced if ``some``; zero U and V when not
    ``compute_uv``.

    Example:
        >>> import ember
        >>> ember.svd(ember.tensor([[3.0, 0.0], [0.0, -4.0]])).S
        tensor([4., 3.])
    """
    if not compute_uv:
        s = svdvals(input)
        m, n = input.shape[-2:]
        dt = input._data.dtype
        U = _wrap(np.zeros(input.shape[:-2] + (m, m if some is False else min(m, n)), dt))
        V = _wrap(np.zeros(input.shape[:-2] + (n, n if some is False else min(m, n)), dt))
        return legacy_svd_type((U, s, V))
    U, S, Vh = _svd(input, not some, "linalg.svd")
    return legacy_svd_type((U, S, Vh.mT))


# ``ember.linalg`` is imported after the op families attached their Tensor methods: those
# that live here are attached now (torch.inverse, torch.det, ... are bound in ember/__init__).
register_methods(
    {
        "inverse": inverse,
        "det": det,
        "logdet": logdet,
        "slogdet": _top_slogdet,
        "qr": _legacy_qr,
        "svd": _legacy_svd,
        "pinverse": pinverse,
        "matrix_exp": _top_matrix_exp,
        "matrix_power": _top_matrix_power,
        "orgqr": orgqr,
    }
)

__all__ = ["LinAlgError", *sorted(namespace("linalg"))]


# The public functions dispatch through __torch_function__ (ember._overrides), from here
# on: every module importing them gets the dispatching ones.
_overrides.install_namespace(globals(), __all__, "torch.linalg")
