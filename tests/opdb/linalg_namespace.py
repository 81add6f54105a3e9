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
