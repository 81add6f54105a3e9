"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized low-rank SVD and PCA
(Halko, Martinsson and Tropp, 2009: Algorithms 4.4 and 5.1), as torch computes them.

Both are composites of recorded ops (``randn``, ``matmul`` or ``sparse.mm``, ``linalg.qr``,
``linalg.svd``, ``mean``), so gradients flow through them as through torch's: a random
``n x q`` projection of ``A`` (of its conjugate transpose if ``A`` is wide) is orthonormalised
by QR, refined by ``niter`` subspace iterations, and the small projected matrix ``Q^H A`` is
decomposed by ``linalg.svd``. The projection is drawn from ember's generator, so the factors
are torch's only where the decomposition is determined (a matrix of rank at most ``q``: its
singular values and ``U diag(S) V^H``).
"""

from __future__ import annotations

from . import _dtype
from ._aten.linalg import qr as _qr
from ._aten.linalg import svd as _svd
from ._aten.sparse import _sparse as _sparse_implementation
from ._aten.sparse import sparse_coo_tensor as _sparse_coo_tensor
from ._aten.sparse import sparse_mm as _sparse_mm
from ._aten.sparse import sparse_sum as _sparse_sum
from ._creation import ones as _ones
from ._creation import randn as _randn
from ._creation import zeros as _zeros
from ._tensor import LAYOUTS, Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]

_COO = LAYOUTS["sparse_coo"]


def _is_sparse(A: Tensor) -> bool:
    """torch's ``_linalg_utils.is_sparse``: a sparse COO tensor (not CSR, ...)."""
    if isinstance(A, Tensor):
        return A.layout == _COO
    raise TypeError(f"expected Tensor but got {type(A)}")


def _floating_dtype(A: Tensor) -> _dtype.dtype:
    """``A``'s dtype if float16/32/64, else float32 (torch's ``get_floating_dtype``)."""
    if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64):
        return A.dtype
    return _dtype.float32


def _mH(A: Tensor) -> Tensor:
    """``A.mH``: each matrix conjugate-transposed (a transpose for real ``A``)."""
    At = A.transpose(-2, -1)
    return At.conj() if A.is_complex() else At


def _matmul(A: Tensor | None, B: Tensor) -> Tensor:
    """``A @ B`` with ``A`` dense or sparse COO (``None``: ``B``)."""
    if A is None:
        return B
    if _is_sparse(A):
        return _sparse_mm(A, B)
    return A.matmul(B)  # (the method dispatches on a sparse B)


def _approximate_basis(A: Tensor, q: int, niter: int | None = 2, M: Tensor | None = None):
    """``Q`` with ``q`` orthonormal columns such that ``Q Q^H (A - M)`` approximates
    ``A - M`` (Halko et al., Algorithm 4.4: a random range finder with ``niter`` power
    iterations, each re-orthonormalised by QR)."""
    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating_dtype(A)
    R = _randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def project(X_of: Tensor, M_of: Tensor | None, B: Tensor) -> Tensor:
        X = _matmul(X_of, B)
        return X if M_of is None else X - _matmul(M_of, B)

    Q = _qr(project(A, M, R)).Q
    for _ in range(niter):
        Q = _qr(project(_mH(A), None if M is None else _mH(M), Q)).Q
        Q = _qr(project(A, M, Q)).Q
    return Q


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """The randomized SVD ``(U, S, V)`` of a matrix, a batch of matrices or a sparse COO
    matrix ``A`` (of ``A - M`` if ``M`` is given; it broadcasts to ``A``'s shape), with
    ``A ~= U diag(S) V^H`` (Halko et al., Algorithm 5.1).

    q: a slightly overestimated rank of ``A`` (``None``: 6); ``U`` is ``m x q``, ``S`` holds
    ``q`` values, ``V`` is ``n x q`` (fewer if ``min(m, n) < q``). niter: the number of
    subspace iterations (``None``: 2). The projection is random: a matrix of rank at most
    ``q`` is decomposed exactly, others approximately; seed the generator for repeatable
    factors.

    Example:
        >>> import ember
        >>> _ = ember.manual_seed(0)
        >>> A = ember.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])  # rank 1
        >>> U, S, V = ember.svd_lowrank(A, q=1)
        >>> S
        tensor([8.3666])
        >>> ember.allclose(U @ ember.diag(S) @ V.mT, A, atol=1e-5)
        True
    """
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # work on the tall matrix
        A = _mH(A)
        if M is not None:
            M = _mH(M)
    Q = _approximate_basis(A, q, niter=niter, M=M)
    B = _matmul(_mH(Q), A)
    if M is not None:
        B = B - _matmul(_mH(Q), M)
    U, S, Vh = _svd(B, full_matrices=False)
    V = _mH(Vh)
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """Linear PCA of a low-rank matrix, a batch of them or a sparse COO matrix: the
    randomized SVD ``(U, S, V)`` of ``A`` centered (``center=True``: minus its column means)
    or of ``A`` as given. ``V``'s columns are the principal directions and
    ``S ** 2 / (m - 1)`` the covariance's eigenvalues.

    q: the rank to look for (``None``: ``min(6, m, n)``; at most ``min(m, n)``). niter: the
    number of subspace iterations.

    Example:
        >>> import ember
        >>> _ = ember.manual_seed(0)
        >>> A = ember.tensor([[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]])  # points on a line
        >>> U, S, V = ember.pca_lowrank(A, q=1)
        >>> S
        tensor([3.1623])
        >>> (V.abs() * 5 ** 0.5).round()
        tensor([[1.],
                [2.]])
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    dtype = _floating_dtype(A)
    if not center:
        return svd_lowrank(A, q, niter=niter, M=None)
    if _is_sparse(A):
        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        c = _sparse_sum(A, dim=(-2,)) / m
        column_indices = c.indices()[0]
        indices = _zeros(2, len(column_indices), dtype=column_indices.dtype)
        indices[0] = column_indices
        C_t = _sparse_coo_tensor(indices, c.values(), (n, 1), dtype=dtype, device=A.device)
        ones_m1_t = _ones(A.shape[:-2] + (1, m), dtype=dtype, device=A.device)
        M = _sparse_mm(C_t, ones_m1_t).mT
        return svd_lowrank(A, q, niter=niter, M=M)
    C = A.mean(dim=(-2,), keepdim=True)
    return svd_lowrank(A - C, q, niter=niter, M=None)


# A sparse COO ``A`` is one of their inputs (torch's own dispatch ignores its layout).
_sparse_implementation("ember.svd_lowrank")(svd_lowrank)
_sparse_implementation("ember.pca_lowrank")(pca_lowrank)
