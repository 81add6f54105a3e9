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
