"""Linear algebra: the matmul family, einsum, tensordot, kron, trace, cross."""

from . import Op, S

OPS = [
    # linear algebra
    Op("matmul_2d", lambda m, a, b: a @ b, (S(3, 4), S(4, 2))),
    Op("matmul_vm", lambda m, a, b: m.matmul(a, b), (S(4), S(4, 2))),
    Op("matmul_mv", lambda m, a, b: a.matmul(b), (S(3, 4), S(4))),
    Op("matmul_dot", lambda m, a, b: a @ b, (S(4), S(4))),
    Op("matmul_3d_2d", lambda m, a, b: a @ b, (S(2, 3, 4), S(4, 2))),
    Op("matmul_bcast", lambda m, a, b: a @ b, (S(2, 1, 3, 4), S(3, 4, 2))),
    Op("mm", lambda m, a, b: m.mm(a, b), (S(3, 4), S(4, 2))),
    Op("mv", lambda m, a, b: a.mv(b), (S(3, 4), S(4))),
    Op("bmm", lambda m, a, b: m.bmm(a, b), (S(2, 3, 4), S(2, 4, 2))),
    Op("dot", lambda m, a, b: m.dot(a, b), (S(4), S(4))),
    Op("vdot", lambda m, a, b: a.vdot(b), (S(4), S(4))),
    Op("outer", lambda m, a, b: m.outer(a, b), (S(3), S(4))),
    Op("ger", lambda m, a, b: a.ger(b), (S(3), S(2))),
    Op("inner", lambda m, a, b: m.inner(a, b), (S(3, 4), S(2, 4))),
    Op("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2), (S(2), S(3, 4), S(4, 2))),
    Op("addmv", lambda m, c, a, b: c.addmv(a, b), (S(3), S(3, 4), S(4))),
    Op("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), (S(2, 3, 2), S(2, 3, 4), S(2, 4, 2))),
    Op("einsum", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (S(3, 4), S(4, 2))),
    Op("einsum_diag", lambda m, a: m.einsum("ii->i", a), (S(3, 3),)),
    Op(
        "einsum_3",
        lambda m, a, b, c: m.einsum("bi,bj,j->b", a, b, c),
        (S(2, 3), S(2, 4), S(4)),
    ),
    Op("tensordot", lambda m, a, b: m.tensordot(a, b, dims=2), (S(2, 3, 4), S(3, 4, 2))),
    Op("tensordot_dims", lambda m, a, b: m.tensordot(a, b, ([0], [1])), (S(3, 2), S(4, 3))),
    Op("kron", lambda m, a, b: m.kron(a, b), (S(2, 3), S(2, 2))),
    Op("trace", lambda m, a: a.trace(), (S(3, 4),)),
    Op("cross", lambda m, a, b: m.cross(a, b, dim=1), (S(2, 3), S(2, 3))),
]
