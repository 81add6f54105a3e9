"""Linear algebra: the matmul family, einsum, tensordot, kron, trace, cross.

``matmul``, ``tensordot`` and ``kron`` record the steps torch records (views, reshapes,
``mm``/``bmm``); an entry per path reaches each of those steps."""

from . import Op, S

OPS = [
    # matmul: one entry per path of torch's _matmul_impl
    Op("matmul_2d", lambda m, a, b: a @ b, (S(3, 4), S(4, 2))),
    Op("matmul_vm", lambda m, a, b: m.matmul(a, b), (S(4), S(4, 2))),
    Op("matmul_mv", lambda m, a, b: a.matmul(b), (S(3, 4), S(4))),
    Op("matmul_dot", lambda m, a, b: a @ b, (S(4), S(4))),
    Op("matmul_3d_2d", lambda m, a, b: a @ b, (S(2, 3, 4), S(4, 2))),  # folded into mm
    Op("matmul_3d_1d", lambda m, a, b: a @ b, (S(2, 3, 4), S(4))),  # folded into mv
    Op("matmul_2d_3d", lambda m, a, b: a @ b, (S(3, 4), S(2, 4, 2))),  # b.mT folded, a.t()
    Op("matmul_1d_3d", lambda m, a, b: a @ b, (S(4), S(2, 4, 3))),  # b.mT folded, mv
    Op("matmul_3d_3d", lambda m, a, b: a @ b, (S(2, 3, 4), S(2, 4, 2))),  # expand, bmm
    Op("matmul_bcast", lambda m, a, b: a @ b, (S(2, 1, 3, 4), S(3, 4, 2))),  # expand copies
    Op("matmul_batch_of_one", lambda m, a, b: a @ b, (S(1, 3, 4), S(2, 4, 2))),  # squeeze(0)
    Op("mm", lambda m, a, b: m.mm(a, b), (S(3, 4), S(4, 2))),
    Op("mv", lambda m, a, b: a.mv(b), (S(3, 4), S(4))),
    Op("bmm", lambda m, a, b: m.bmm(a, b), (S(2, 3, 4), S(2, 4, 2))),
    Op("dot", lambda m, a, b: m.dot(a, b), (S(4), S(4))),
    Op("vdot", lambda m, a, b: a.vdot(b), (S(4), S(4))),
    Op("outer", lambda m, a, b: m.outer(a, b), (S(3), S(4))),
    Op("ger", lambda m, a, b: a.ger(b), (S(3), S(2))),
    Op("inner", lambda m, a, b: m.inner(a, b), (S(3, 4), S(2, 4))),
    Op("inner_1d", lambda m, a, b: m.inner(a, b), (S(4), S(4))),  # tensordot's dot path
    Op("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), (S(2), S(3, 4), S(4, 2))),
    Op("addmm_2d", lambda m, c, a, b: c.addmm(a, b), (S(3, 2), S(3, 4), S(4, 2))),
    Op("addmv", lambda m, c, a, b: c.addmv(a, b), (S(3), S(3, 4), S(4))),
    Op("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), (S(2, 3, 2), S(2, 3, 4), S(2, 4, 2))),
    Op(
        "baddbmm_scaled",
        lambda m, c, a, b: m.baddbmm(c, a, b, beta=-1.5, alpha=0.5),
        (S(2), S(2, 3, 4), S(2, 4, 2)),
    ),
    # einsum: one node, named after the step torch's einsum ends with
    Op("einsum", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (S(3, 4), S(4, 2))),
    Op("einsum_outer", lambda m, a, b: m.einsum("i,j->ji", a, b), (S(3), S(4))),
    Op("einsum_diag", lambda m, a: m.einsum("ii->i", a), (S(3, 3),)),
    Op("einsum_sum", lambda m, a: m.einsum("ij->j", a), (S(3, 4),)),
    Op(
        "einsum_3",
        lambda m, a, b, c: m.einsum("bi,bj,j->b", a, b, c),
        (S(2, 3), S(2, 4), S(4)),
    ),
    Op("einsum_3_outer", lambda m, a, b, c: m.einsum("i,j,k->kij", a, b, c), (S(2), S(3), S(2))),
    Op("einsum_ellipsis", lambda m, a, b: m.einsum("...ij,...jk", a, b), (S(2, 1, 2, 3), S(3, 2))),
    # tensordot: permute, reshape, mm, view (or dot, or mul and sum, for a full contraction)
    Op("tensordot", lambda m, a, b: m.tensordot(a, b, dims=2), (S(2, 3, 4), S(3, 4, 2))),
    Op("tensordot_dims", lambda m, a, b: m.tensordot(a, b, ([0], [1])), (S(3, 2), S(4, 3))),
    Op("tensordot_full", lambda m, a, b: m.tensordot(a, b, ([0, 1], [1, 0])), (S(3, 2), S(2, 3))),
    Op("tensordot_bcast", lambda m, a, b: m.tensordot(a, b, ([1], [0])), (S(2, 1), S(3, 4))),
    Op("kron", lambda m, a, b: m.kron(a, b), (S(2, 3), S(2, 2))),
    Op(
        "kron_3d",
        lambda m, a, b: a.kron(b),
        (
            S(
                3,
            ),
            S(2, 1, 2),
        ),
    ),
    Op("trace", lambda m, a: a.trace(), (S(3, 4),)),
    Op("cross", lambda m, a, b: m.cross(a, b, dim=1), (S(2, 3), S(2, 3))),
    Op("cross_bcast", lambda m, a, b: a.cross(b, dim=-1), (S(4, 3), S(1, 3))),
]


# -- torch's legacy linear algebra: cholesky, cholesky_solve/_inverse, lu*, triangular_solve -----
#
# Inputs are well-conditioned: ``a a^T + 3 I`` where a symmetric positive-definite matrix is
# needed, triangles with ``3 I`` added to the diagonal where a Cholesky factor or a triangular
# matrix is. The factors are exactly triangular, so torch's gradients (which do not mask the
# triangle a LAPACK call reads) are the gradients with respect to the leaves.


def _spd(m, a):
    """``a a^T + 3 I``: symmetric positive-definite, exactly symmetric."""
    return m.einsum("...ij,...kj->...ik", a, a) + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _low(m, a):
    """A lower triangle with a diagonal well away from zero (a Cholesky factor)."""
    return a.tril() + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _up(m, a):
    """An upper triangle with a diagonal well away from zero."""
    return a.triu() + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _lu_factor(m, a):
    return m.linalg.lu_factor(a + 3 * m.eye(a.shape[-1], dtype=a.dtype))


OPS += [
    # torch has no forward mode for torch.cholesky (NotImplementedError, as ember's).
    Op("cholesky", lambda m, a: m.cholesky(_spd(m, a)), (S(2, 3, 3),), forward=False),
    Op("cholesky_upper", lambda m, a: _spd(m, a).cholesky(upper=True), (S(3, 3),), forward=False),
    Op("cholesky_solve", lambda m, b, a: m.cholesky_solve(b, _low(m, a)), (S(2, 3, 2), S(2, 3, 3))),
    Op(
        "cholesky_solve_upper_bcast",
        lambda m, b, a: b.cholesky_solve(_up(m, a), upper=True),
        (S(2, 1, 3, 2), S(3, 3, 3)),
    ),
    # torch's tangent of cholesky_inverse is not the derivative (``-X dL X L^H`` for
    # ``-X dL L^H X``): forward mode is checked against reverse mode in
    # tests/test_linalg_legacy.py.
    Op(
        "cholesky_inverse",
        lambda m, a: m.cholesky_inverse(_low(m, a)),
        (S(2, 3, 3),),
        forward=False,
    ),
    Op(
        "cholesky_inverse_upper",
        lambda m, a: _up(m, a).cholesky_inverse(upper=True),
        (S(3, 3),),
        forward=False,
    ),
    Op("lu", lambda m, a: m.lu(a + 3 * m.eye(3, dtype=a.dtype))[0], (S(2, 3, 3),)),
    # torch has no forward mode for lu_solve's LU input (NotImplementedError).
    Op(
        "lu_solve",
        lambda m, b, a: m.lu_solve(b, *_lu_factor(m, a)),
        (S(2, 3, 2), S(2, 3, 3)),
        forward=False,
    ),
    Op("lu_unpack", lambda m, a: m.lu_unpack(*_lu_factor(m, a))[1:], (S(2, 3, 3),)),
    Op("lu_unpack_wide", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a))[1:], (S(3, 4),)),
    Op("lu_unpack_tall", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a))[1:], (S(2, 4, 3),)),
    # A first: with only b's tangent, torch leaves cloned_coefficient's tangent undefined
    # where ember's is zeros (forward mode gives every differentiable output a tangent).
    Op(
        "triangular_solve",
        lambda m, a, b: m.triangular_solve(b, _up(m, a)),
        (S(2, 3, 3), S(2, 3, 2)),
    ),
    # torch's forward mode fails when A broadcasts (its cloned_coefficient tangent keeps A's
    # shape): ember's tangents are checked in tests/test_linalg_legacy.py.
    Op(
        "triangular_solve_lower_bcast",
        lambda m, b, a: b.triangular_solve(_low(m, a), upper=False),
        (S(2, 1, 3, 2), S(3, 3, 3)),
        forward=False,
    ),
    # torch's tangent with transpose=True is not the derivative (``dA X`` for ``dA^T X``):
    # forward mode is checked against reverse mode in tests/test_linalg_legacy.py.
    Op(
        "triangular_solve_transpose_unit",
        lambda m, b, a: m.triangular_solve(b, _up(m, a), transpose=True, unitriangular=True),
        (S(3, 2), S(3, 3)),
        forward=False,
    ),
]
