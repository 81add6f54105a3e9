"""Sorting and selection ops (sort, topk, kthvalue, unique, repeat_interleave, index_fill,
addcmul). Inputs are drawn from a continuous distribution, so they have no ties (where
torch's choice among equal values is ill-defined)."""

from . import Op, P, S


def _idx(m, values):
    return m.tensor(values)


OPS = [
    # values picked by index: the indices output is compared too (no gradient, no tangent)
    Op("sort", lambda m, x: tuple(m.sort(x, 1)), (S(3, 4),)),
    Op("sort_descending", lambda m, x: tuple(x.sort(0, descending=True)), (S(3, 4),)),
    Op("sort_stable", lambda m, x: tuple(m.sort(x, stable=True)), (S(2, 5),)),
    Op("sort_0d", lambda m, x: tuple(x.sort()), (S(),)),
    Op("msort", lambda m, x: m.msort(x), (S(4, 3),)),
    Op("topk", lambda m, x: tuple(m.topk(x, 2)), (S(3, 4),)),
    Op("topk_smallest", lambda m, x: tuple(x.topk(3, dim=0, largest=False)), (S(4, 3),)),
    Op("topk_3d", lambda m, x: m.topk(x, 1, dim=1).values, (S(2, 3, 2),)),
    Op("kthvalue", lambda m, x: tuple(m.kthvalue(x, 2, 1)), (S(3, 4),)),
    Op("kthvalue_keepdim", lambda m, x: tuple(x.kthvalue(3, 0, keepdim=True)), (S(4, 2),)),
    Op("kthvalue_0d", lambda m, x: tuple(m.kthvalue(x, 1)), (S(),)),
    # argsort and unique: no derivative (unique records a node whose backward raises, as torch)
    Op("argsort", lambda m, x: m.argsort(x, 1, descending=True), (S(3, 4),), grad=False),
    Op(
        "unique",
        lambda m, x: m.unique(x, return_inverse=True, return_counts=True),
        (S(3, 4),),
        grad=False,
        forward=False,  # torch: forward AD is not implemented for _unique2
    ),
    Op(
        "unique_dim",
        lambda m, x: m.unique(x, dim=0, return_inverse=True),
        (S(3, 2),),
        grad=False,
        forward=False,  # torch: forward AD is not implemented for unique_dim
    ),
    Op(
        "unique_consecutive",
        lambda m, x: m.unique_consecutive(
            m.round(x).repeat_interleave(2), return_inverse=True, return_counts=True
        ),
        (S(6),),
        grad=False,
        forward=False,  # torch: forward AD is not implemented for unique_consecutive
    ),
    Op(
        "unique_consecutive_dim",
        lambda m, x: x.repeat_interleave(2, dim=1).unique_consecutive(dim=1),
        (S(3, 2),),
        grad=False,
        forward=False,  # torch: forward AD is not implemented for unique_consecutive
    ),
    # repeat_interleave: an int count (one node, torch's last one's name), or a tensor of them
    Op("repeat_interleave", lambda m, x: m.repeat_interleave(x, 2, dim=1), (S(2, 3),)),
    Op("repeat_interleave_flat", lambda m, x: x.repeat_interleave(3), (S(2, 2),)),
    Op("repeat_interleave_zero", lambda m, x: m.repeat_interleave(x, 0, dim=0), (S(2, 3),)),
    Op(
        "repeat_interleave_tensor",
        lambda m, x: m.repeat_interleave(x, _idx(m, [1, 0, 2]), 0),
        (S(3, 2),),
    ),
    # index_fill: a number (a constant where filled) or a 0-d tensor (its gradient is the sum
    # of the filled slices', each slice once however often it is indexed)
    Op("index_fill", lambda m, x: m.index_fill(x, 1, _idx(m, [0, 2, -4]), -1.0), (S(2, 4),)),
    Op("index_fill_0d", lambda m, x: x.index_fill(0, _idx(m, 0), 2.0), (S(),)),
    Op(
        "index_fill_tensor",
        lambda m, x, v: x.index_fill(0, _idx(m, [1, 1]), v),
        (S(3, 2), S()),
    ),
    Op("index_fill_", lambda m, x: (x * 1).index_fill_(1, _idx(m, [1]), 0.5), (S(2, 3),)),
    # addcmul, addcdiv: elementwise with broadcasting
    Op(
        "addcmul",
        lambda m, a, b, c: m.addcmul(a, b, c, value=0.5),
        (S(2, 3), S(3), S(2, 1)),
        broadcasts=True,
    ),
    Op(
        "addcdiv",
        lambda m, a, b, c: m.addcdiv(a, b, c, value=-2),
        (S(2, 3), S(2, 3), P(3)),
        broadcasts=True,
    ),
    Op("addcmul_", lambda m, a, b, c: (a * 1).addcmul_(b, c, value=2), (S(2, 3), S(3), S(2, 3))),
    Op("addcdiv_", lambda m, a, b, c: (a * 1).addcdiv_(b, c), (S(2, 3), S(2, 3), P(2, 3))),
    # addr, addbmm: scaled sums of products; input broadcasts
    Op("addr", lambda m, a, u, v: m.addr(a, u, v, beta=0.5, alpha=-2), (S(3), S(2), S(3))),
    Op("addr_", lambda m, a, u, v: (a * 1).addr_(u, v), (S(2, 3), S(2), S(3))),
    Op(
        "addbmm",
        lambda m, c, a, b: m.addbmm(c, a, b, beta=1.5, alpha=0.5),
        (S(3, 2), S(4, 3, 5), S(4, 5, 2)),
    ),
    Op("addbmm_", lambda m, c, a, b: (c * 1).addbmm_(a, b), (S(3, 2), S(2, 3, 4), S(2, 4, 2))),
]
