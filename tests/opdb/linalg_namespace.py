"""ember.linalg: inverses, determinants, solves, factorizations, norms, svd.

Inputs are made well-conditioned inside the entries (``+ 3 I``; ``A A^T + 3 I`` where a
symmetric positive-definite matrix is needed), so torch's results are a well-defined
reference on any CPU; singular vectors enter only through sign-invariant functions."""

from . import Op, S


def _wc(m, a):
    """``a + 3 I``: well-conditioned (the entries of ``a`` are standard normal)."""
    return a + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _spd(m, a):
    """``a a^T + 3 I``: symmetric positive-definite, exactly symmetric (so the gradient
    torch returns, a symmetric one, is the gradient with respect to ``a``)."""
    return m.einsum("...ij,...kj->...ik", a, a) + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _svd_parts(m, a, full_matrices):
    """Sign-invariant functions of the SVD: squared singular vectors and the values."""
    U, S_, Vh = m.linalg.svd(a, full_matrices=full_matrices)
    if full_matrices:  # rows of Vh past min(m, n) are not differentiable: left out
        return U * U, S_
    return U * U, S_, Vh * Vh


# The norms are computed with reduction- and shape-family ops (vector_norm, sum, amax,
# movedim) that have no forward mode until those families are declared with defop.
_NO_FORWARD_YET = {"forward": False}

OPS = [
    Op("linalg_inv", lambda m, a: m.linalg.inv(_wc(m, a)), (S(2, 3, 3),)),
    Op("inverse", lambda m, a: m.inverse(_wc(m, a)), (S(3, 3),)),
    Op("tensor_inverse", lambda m, a: _wc(m, a).inverse(), (S(2, 3, 3),)),
    Op("linalg_det", lambda m, a: m.linalg.det(_wc(m, a)), (S(2, 3, 3),)),
    Op("det", lambda m, a: m.det(_wc(m, a)), (S(3, 3),)),
    Op("linalg_slogdet", lambda m, a: m.linalg.slogdet(_wc(m, a) - 4.5), (S(2, 3, 3),)),
    # torch's tangent of an unbatched sign is a ZeroTensor, which .numpy() refuses: left out.
    Op("slogdet", lambda m, a: _wc(m, a).slogdet().logabsdet, (S(3, 3),)),
    Op("logdet", lambda m, a: m.logdet(_spd(m, a)), (S(2, 3, 3),)),
    Op("linalg_solve", lambda m, a, b: m.linalg.solve(_wc(m, a), b), (S(2, 3, 3), S(2, 3, 2))),
    Op("linalg_solve_vector", lambda m, a, b: m.linalg.solve(_wc(m, a), b), (S(2, 3, 3), S(3))),
    Op(
        "solve_right",
        lambda m, a, b: m.linalg.solve(_wc(m, a), b, left=False),
        (S(2, 3, 3), S(2, 2, 3)),
    ),
    Op("linalg_cholesky", lambda m, a: m.linalg.cholesky(_spd(m, a)), (S(2, 3, 3),)),
    Op("linalg_cholesky_upper", lambda m, a: m.linalg.cholesky(_spd(m, a), upper=True), (S(3, 3),)),
    Op("linalg_svdvals", lambda m, a: m.linalg.svdvals(a), (S(3, 4),)),
    Op("linalg_svdvals_batched", lambda m, a: m.linalg.svdvals(a), (S(2, 4, 3),)),
    Op("linalg_svd", lambda m, a: _svd_parts(m, a, False), (S(3, 4),)),
    Op("linalg_svd_tall", lambda m, a: _svd_parts(m, a, False), (S(2, 4, 3),)),
    Op("linalg_svd_full_matrices", lambda m, a: _svd_parts(m, a, True), (S(3, 4),)),
    Op("linalg_cross", lambda m, a, b: m.linalg.cross(a, b), (S(4, 3), S(1, 3))),
    Op("linalg_norm", lambda m, a: m.linalg.norm(a), (S(2, 3, 3),), **_NO_FORWARD_YET),
    Op(
        "linalg_norm_dim", lambda m, a: m.linalg.norm(a, 3, dim=1), (S(2, 3, 3),), **_NO_FORWARD_YET
    ),
    Op("linalg_norm_nuc", lambda m, a: m.linalg.norm(a, "nuc"), (S(3, 4),), **_NO_FORWARD_YET),
    Op(
        "linalg_vector_norm",
        lambda m, a: m.linalg.vector_norm(a, 1, dim=(0, 1)),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_fro",
        lambda m, a: m.linalg.matrix_norm(a),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_nuc_keepdim",
        lambda m, a: m.linalg.matrix_norm(a, "nuc", (0, 2), True),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_2",
        lambda m, a: m.linalg.matrix_norm(a, 2),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_-2",
        lambda m, a: m.linalg.matrix_norm(a, -2),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_1",
        lambda m, a: m.linalg.matrix_norm(a, 1),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_-1_keepdim",
        lambda m, a: m.linalg.matrix_norm(a, -1, keepdim=True),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_inf",
        lambda m, a: m.linalg.matrix_norm(a, float("inf"), (2, 0)),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
    Op(
        "linalg_matrix_norm_-inf",
        lambda m, a: m.linalg.matrix_norm(a, -float("inf")),
        (S(2, 3, 3),),
        **_NO_FORWARD_YET,
    ),
]


def _sym(m, a):
    """``(a + a^T) / 2``: symmetric, with distinct eigenvalues for standard normal entries."""
    return (a + a.mT) / 2


def _eigh_parts(m, a, uplo="L"):
    """Sign-invariant functions of eigh: the values and the squared eigenvectors."""
    L, V = m.linalg.eigh(_sym(m, a), UPLO=uplo)
    return L, V * V


def _lu_parts(m, a):
    _, L, U = m.linalg.lu(a)
    return L, U


def _lstsq(m, a, b, driver=None):
    r = m.linalg.lstsq(a, b, driver=driver)
    return (r.solution, r.residuals) if r.residuals.numel() else r.solution


def _lu_solve(m, a, b):
    LU, piv = m.linalg.lu_factor(_wc(m, a))
    return m.linalg.lu_solve(LU, piv, b)


def _upper(m, a):
    """An upper triangle with a diagonal well away from zero."""
    return a.triu() + 3 * m.eye(a.shape[-1], dtype=a.dtype)


OPS += [
    # QR: LAPACK's Householder signs in both libraries, so Q and R are compared as they are.
    Op("linalg_qr", lambda m, a: m.linalg.qr(a), (S(2, 4, 3),)),
    Op("linalg_qr_square_complete", lambda m, a: m.linalg.qr(a, "complete"), (S(3, 3),)),
    Op("linalg_qr_wide", lambda m, a: m.linalg.qr(a), (S(3, 5),)),
    Op("qr", lambda m, a: m.linalg.qr(a).Q @ m.linalg.qr(a).R, (S(2, 3, 3),)),
    Op("linalg_eigh", lambda m, a: _eigh_parts(m, a), (S(2, 3, 3),)),
    Op("linalg_eigh_upper", lambda m, a: _eigh_parts(m, a, "U"), (S(4, 4),)),
    Op("linalg_eigvalsh", lambda m, a: m.linalg.eigvalsh(_sym(m, a)), (S(2, 3, 3),)),
    Op("linalg_pinv", lambda m, a: m.linalg.pinv(a), (S(2, 3, 4),)),
    Op("linalg_pinv_tall", lambda m, a: m.linalg.pinv(a), (S(4, 2),)),
    Op("linalg_pinv_hermitian", lambda m, a: m.linalg.pinv(_spd(m, a), hermitian=True), (S(3, 3),)),
    Op("pinverse", lambda m, a: m.pinverse(a), (S(3, 2),)),
    # torch has no forward mode for lstsq (NotImplementedError); residuals need gelsd.
    Op("linalg_lstsq", lambda m, a, b: _lstsq(m, a, b), (S(2, 4, 3), S(2, 4, 2)), forward=False),
    Op(
        "linalg_lstsq_gelsd",
        lambda m, a, b: _lstsq(m, a, b, "gelsd"),
        (S(4, 3), S(4, 2)),
        forward=False,
    ),
    Op(
        "linalg_solve_triangular",
        lambda m, a, b: m.linalg.solve_triangular(_upper(m, a), b, upper=True),
        (S(2, 3, 3), S(2, 3, 2)),
    ),
    Op(
        "linalg_solve_triangular_right_unit",
        lambda m, a, b: m.linalg.solve_triangular(
            _upper(m, a).mT, b, upper=False, left=False, unitriangular=True
        ),
        (S(3, 3), S(2, 3)),
    ),
    Op("linalg_lu", lambda m, a: _lu_parts(m, a), (S(2, 3, 3),)),
    Op("linalg_lu_wide", lambda m, a: _lu_parts(m, a), (S(3, 4),)),
    Op("linalg_lu_tall", lambda m, a: _lu_parts(m, a), (S(4, 2),)),
    Op("linalg_lu_factor", lambda m, a: m.linalg.lu_factor(a).LU, (S(2, 3, 3),)),
    # torch has no forward mode for lu_solve's LU input (NotImplementedError).
    Op("linalg_lu_solve", _lu_solve, (S(2, 3, 3), S(2, 3, 2)), forward=False),
    Op("linalg_matrix_exp", lambda m, a: m.linalg.matrix_exp(a), (S(2, 3, 3),)),
    Op("matrix_exp", lambda m, a: m.matrix_exp(a), (S(3, 3),)),
    Op("linalg_matrix_power", lambda m, a: m.linalg.matrix_power(a, 3), (S(2, 3, 3),)),
    Op("linalg_matrix_power_neg", lambda m, a: m.linalg.matrix_power(_wc(m, a), -2), (S(3, 3),)),
    Op("linalg_cond", lambda m, a: m.linalg.cond(a), (S(2, 3, 3),), **_NO_FORWARD_YET),
    # torch's backward of cond(A, 1) fails: it fills linalg.inv's output in place (values
    # and grad_fn compared; gradients checked in tests/test_linalg_decomp.py).
    Op("linalg_cond_1", lambda m, a: m.linalg.cond(_wc(m, a), 1), (S(3, 3),), grad=False),
    Op(
        "linalg_multi_dot",
        lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
        (S(3), S(3, 4), S(4, 2)),
    ),
    Op("linalg_vecdot", lambda m, a, b: m.linalg.vecdot(a, b), (S(2, 3), S(3)), **_NO_FORWARD_YET),
    Op(
        "linalg_tensorinv",
        lambda m, a: m.linalg.tensorinv(_wc(m, a).reshape(2, 2, 4), ind=2),
        (S(4, 4),),
    ),
    Op(
        "linalg_tensorsolve",
        lambda m, a, b: m.linalg.tensorsolve(_wc(m, a).reshape(2, 2, 4), b),
        (S(4, 4), S(2, 2)),
    ),
    Op("linalg_inv_ex", lambda m, a: m.linalg.inv_ex(_wc(m, a)).inverse, (S(2, 3, 3),)),
    Op("linalg_cholesky_ex", lambda m, a: m.linalg.cholesky_ex(_spd(m, a)).L, (S(3, 3),)),
    Op(
        "linalg_solve_ex",
        lambda m, a, b: m.linalg.solve_ex(_wc(m, a), b).result,
        (S(3, 3), S(3, 2)),
    ),
    Op("svd", lambda m, a: m.svd(a).S, (S(2, 4, 3),)),
]


# -- eig, eigvals, householder_product ------------------------------------------------------------


def _separated(m, a):
    """``a + diag(0, 3, 6, ...)``: a non-symmetric matrix with well-separated eigenvalues."""
    n = a.shape[-1]
    return a + m.diag_embed(m.arange(n, dtype=a.dtype) * 3)


def _rotation_pair(m, a):
    """A non-symmetric 3 x 3 matrix with a complex conjugate pair of eigenvalues (about
    ``1 +- 2i``) and a real one (about 4), all well separated."""
    base = m.tensor([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 4.0]], dtype=a.dtype)
    return base + 0.2 * a


def _eig_parts(m, a, shift):
    """Phase-invariant real functions of eig: the parts of the eigenvalues and the squared
    moduli of the eigenvectors' entries (each eigenvector is defined up to a complex phase).
    (``|V|^2`` as ``V conj(V)``: the double backward of ``abs`` of a complex tensor goes
    through ``sgn``, whose derivative ember takes as zero.)"""
    L, V = m.linalg.eig(shift(m, a))
    return L.real, L.imag, (V * V.conj()).real


def _geqrf_like(m, a, tau):
    """``householder_product`` on a reflector matrix and tau values of moderate size."""
    return m.linalg.householder_product(a, 0.5 * tau)


OPS += [
    # Eigenvalue order is LAPACK geev's in both libraries (same input, same algorithm).
    Op("linalg_eig", lambda m, a: _eig_parts(m, a, _separated), (S(2, 3, 3),)),
    Op("linalg_eig_complex_pair", lambda m, a: _eig_parts(m, a, _rotation_pair), (S(3, 3),)),
    Op(
        "linalg_eigvals",
        lambda m, a: (lambda L: (L.real, L.imag))(m.linalg.eigvals(_separated(m, a))),
        (S(2, 4, 4),),
    ),
    Op("linalg_householder_product", _geqrf_like, (S(2, 4, 3), S(2, 2))),
    Op("linalg_householder_product_square", _geqrf_like, (S(3, 3), S(3))),
    Op("orgqr", lambda m, a, tau: m.orgqr(a, 0.5 * tau), (S(4, 2), S(2))),
    Op("tensor_orgqr", lambda m, a, tau: a.orgqr(0.5 * tau), (S(3, 2), S(1))),
]
