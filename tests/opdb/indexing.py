"""Indexing ops: getitem, gather/scatter, masks, triangles and diagonals."""

from . import Op, S


def _idx(m, values):
    return m.tensor(values)


def _mask(m, values):
    return m.tensor(values, dtype=m.bool)


_SR_IDX = [[0, 1, 0], [3, 3, 2], [1, 0, 1]]  # scatter_reduce's index: repeats, none for some


OPS = [
    # __getitem__: basic keys are views (select, slice, unsqueeze, alias), advanced copy
    Op("getitem_int", lambda m, x: x[1], (S(3, 4),)),
    Op("getitem_neg_int", lambda m, x: x[-1], (S(3, 4),)),
    Op("getitem_slice", lambda m, x: x[:, 1:3], (S(3, 4),)),
    Op("getitem_full_slice", lambda m, x: x[:], (S(3, 4),)),
    Op("getitem_step", lambda m, x: x[::2, None, -1], (S(5, 4),)),
    Op("getitem_none", lambda m, x: x[None], (S(3, 4),)),
    Op("getitem_ellipsis", lambda m, x: x[..., 0], (S(2, 3, 4),)),
    Op("getitem_alias", lambda m, x: (x * 1)[...], (S(2, 3),)),
    Op("getitem_nested_views", lambda m, x: x[1][1:][None], (S(3, 4),)),
    Op("getitem_list", lambda m, x: x[[0, 2, 2]], (S(3, 4),)),
    Op("getitem_tensor", lambda m, x: x[_idx(m, [1, 0]), 2], (S(3, 4),)),
    Op("getitem_int_then_list", lambda m, x: x[0, [1, 2, 1]], (S(2, 4),)),
    Op("getitem_slice_adv", lambda m, x: x[1:, [0, 3]], (S(3, 4),)),
    Op(
        "getitem_adv_nonadjacent",
        lambda m, x: x[[0, 1], :, _idx(m, [[0], [3]])],
        (S(2, 3, 4),),
    ),
    Op("getitem_bool", lambda m, x: x[True, 1], (S(3, 4),)),
    Op("getitem_mask", lambda m, x: x[x > 0], (S(3, 4),)),
    Op("getitem_row_mask", lambda m, x: x[_mask(m, [True, False, True]), 1:], (S(3, 4),)),
    Op("select", lambda m, x: m.select(x, 1, -1), (S(3, 4),)),
    # index_put / index_select / index_add
    Op(
        "index_put",
        lambda m, x, v: x.index_put((_idx(m, [0, 2]),), v),
        (S(3, 4), S(2, 4)),
    ),
    Op(
        "index_put_accumulate",
        lambda m, x, v: x.index_put((_idx(m, [0, 0]), _idx(m, [1, 1])), v, accumulate=True),
        (S(3, 4), S(2)),
    ),
    Op(
        "index_put_mask_broadcast",
        lambda m, x, v: m.index_put(x, (_mask(m, [False, True, True]),), v),
        (S(3, 4), S(4)),
    ),
    Op(
        "index_put_",
        lambda m, x, v: (x * 1).index_put_((_idx(m, [2, 0, 2]),), v, accumulate=True),
        (S(3, 4), S(1, 4)),
    ),
    Op("index_select", lambda m, x: x.index_select(1, _idx(m, [3, 0, 3])), (S(3, 4),)),
    Op("index_select_0d_index", lambda m, x: m.index_select(x, 0, _idx(m, 1)), (S(3, 4),)),
    Op("index_add", lambda m, x, s: x.index_add(0, _idx(m, [2, 0, 2]), s), (S(3, 4), S(3, 4))),
    Op(
        "index_add_alpha",
        lambda m, x, s: m.index_add(x, 1, _idx(m, [0, 3]), s, alpha=2.5),
        (S(3, 4), S(3, 2)),
    ),
    Op(
        "index_add_",
        lambda m, x, s: (x * 1).index_add_(0, _idx(m, [1, 1]), s),
        (S(3, 4), S(2, 4)),
    ),
    # gather / scatter
    Op("gather", lambda m, x: x.gather(1, _idx(m, [[0, 0], [3, 1], [2, 2]])), (S(3, 4),)),
    Op(
        "gather_dim0_3d",
        lambda m, x: m.gather(x, 0, _idx(m, [[[1, 0]], [[0, 0]], [[1, 1]]])),
        (S(2, 3, 4),),
    ),
    Op(
        "scatter",
        lambda m, x, s: x.scatter(1, _idx(m, [[0, 3, 1], [2, 1, 0]]), s),
        (S(2, 4), S(2, 3)),
    ),
    # src larger than index: only src's elements the index covers are read. torch's reverse
    # mode refuses it (ScatterBackward0 returns an index-shaped gradient for src); ember
    # pads that gradient with zeros, checked by central differences and forward mode.
    Op(
        "scatter_src_larger",
        lambda m, x, s: x.scatter(1, _idx(m, [[0, 3], [1, 2]]), s),
        (S(2, 4), S(2, 3)),
        torch=False,
    ),
    Op(
        "scatter_dim0",
        lambda m, x, s: m.scatter(x, 0, _idx(m, [[2, 0, 1, 2]]), s),
        (S(3, 4), S(1, 4)),
    ),
    Op("scatter_value", lambda m, x: x.scatter(1, _idx(m, [[0], [2]]), 0.5), (S(2, 4),)),
    Op(
        "scatter_value_kw",
        lambda m, x: m.scatter(x, 0, _idx(m, [[1, 0, 1]]), value=-2.0),
        (S(2, 3),),
    ),
    Op(
        "scatter_",
        lambda m, x, s: (x * 1).scatter_(1, _idx(m, [[1], [0]]), s),
        (S(2, 3), S(2, 1)),
    ),
    # torch has no derivative for scatter with reduce=: a NotImplemented node
    Op(
        "scatter_reduce_arg",
        lambda m, x, s: x.scatter(1, _idx(m, [[0, 0], [1, 0]]), s, reduce="add"),
        (S(2, 3), S(2, 2)),
        grad=False,
    ),
    Op(
        "scatter_add",
        lambda m, x, s: m.scatter_add(x, 0, _idx(m, [[0, 1, 0], [0, 1, 1]]), s),
        (S(2, 3), S(2, 3)),
    ),
    Op(
        "scatter_add_",
        lambda m, x, s: (x * 1).scatter_add_(1, _idx(m, [[0, 0], [2, 2]]), s),
        (S(2, 3), S(2, 2)),
    ),
    # masks
    Op("masked_fill", lambda m, x: x.masked_fill(x > 0, 2.0), (S(3, 4),)),
    Op(
        "masked_fill_broadcast",
        lambda m, x: x.masked_fill(_mask(m, [[True, False, False, True]] * 2), -1.0),
        (S(4),),
    ),
    Op("masked_fill_tensor", lambda m, x, v: x.masked_fill(x > 0, v), (S(3, 4), S())),
    Op("masked_fill_", lambda m, x: (x * 1).masked_fill_(x < 0, 0.5), (S(3, 4),)),
    Op("masked_select", lambda m, x: m.masked_select(x, x > 0), (S(3, 4),)),
    Op(
        "masked_select_broadcast",
        lambda m, x: x.masked_select(_mask(m, [[True, False, True, True], [False] * 4])),
        (S(4),),
    ),
    # take
    Op("take", lambda m, x: m.take(x, _idx(m, [0, 11, 5])), (S(3, 4),)),
    Op("put", lambda m, x, v: x.put(_idx(m, [0, -1, 5]), v), (S(3, 4), S(3))),
    Op(
        "put_accumulate",
        lambda m, x, v: m.put(x, _idx(m, [[0, 5], [5, 2]]), v, accumulate=True),
        (S(3, 4), S(2, 2)),
    ),
    Op("put_", lambda m, x, v: (x * 1).put_(_idx(m, [7, 1]), v), (S(2, 4), S(2))),
    Op(
        "take_along_dim",
        lambda m, x: m.take_along_dim(x, _idx(m, [[0, 3], [2, 1], [1, 1]]), 1),
        (S(3, 4),),
    ),
    Op("take_along_dim_flat", lambda m, x: x.take_along_dim(_idx(m, [11, 0, 4])), (S(3, 4),)),
    Op("diagflat", lambda m, x: m.diagflat(x, -1), (S(2, 2),)),
    Op("take_repeats", lambda m, x: x.take(_idx(m, [[0, -1], [-1, 2]])), (S(2, 3),)),
    # triangles and diagonals
    Op("tril", lambda m, x: x.tril(), (S(3, 4),)),
    Op("triu", lambda m, x: m.triu(x, 1), (S(3, 4),)),
    Op("tril_batched", lambda m, x: m.tril(x, -1), (S(2, 3, 3),)),
    Op("triu_", lambda m, x: (x * 1).triu_(-1), (S(3, 4),)),
    Op("diag_vec", lambda m, x: m.diag(x, 1), (S(3),)),
    Op("diag_mat", lambda m, x: x.diag(), (S(3, 4),)),
    Op("diag_mat_offset", lambda m, x: m.diag(x, -1), (S(3, 4),)),
    Op("diagonal", lambda m, x: x.diagonal(0, 1, 2), (S(2, 3, 3),)),
    Op("diagonal_offset", lambda m, x: m.diagonal(x, 1, -1, 0), (S(3, 2, 4),)),
    Op("diag_embed", lambda m, x: m.diag_embed(x), (S(2, 3),)),
    Op("diag_embed_dims", lambda m, x: x.diag_embed(-1, 0, 2), (S(2, 3),)),
    # the *_scatter ops: out-of-place inverses of views
    Op("select_scatter", lambda m, x, s: m.select_scatter(x, s, 0, 1), (S(3, 4), S(4))),
    Op("select_scatter_neg", lambda m, x, s: x.select_scatter(s, 1, -1), (S(3, 4), S(3))),
    Op("slice_scatter", lambda m, x, s: m.slice_scatter(x, s, 1, 0, 4, 2), (S(3, 4), S(3, 2))),
    Op("slice_scatter_default", lambda m, x, s: x.slice_scatter(s), (S(3, 4), S(3, 4))),
    Op("diagonal_scatter", lambda m, x, s: m.diagonal_scatter(x, s), (S(3, 3), S(3))),
    Op(
        "diagonal_scatter_offset",
        lambda m, x, s: x.diagonal_scatter(s, -1),
        (S(3, 4), S(2)),
    ),
    # tril_indices / triu_indices (integer results), used to index a tensor
    Op("tril_indices", lambda m, x: x[m.tril_indices(3, 4, -1).unbind(0)], (S(3, 4),)),
    Op(
        "triu_indices",
        lambda m, x: x[m.triu_indices(4, 3, 1, dtype=m.int32).unbind()],
        (S(4, 3),),
    ),
    # scatter_reduce: no ties (amax/amin, prod) in these values; repeated indices reduce
    Op(
        "scatter_reduce_sum",
        lambda m, x, s: x.scatter_reduce(1, _idx(m, _SR_IDX), s, "sum"),
        (S(3, 4), S(3, 3)),
    ),
    # torch leaves scatter_reduce(prod)'s tangent undefined (ember's is exact: tests/aten)
    Op(
        "scatter_reduce_prod",
        lambda m, x, s: m.scatter_reduce(x, 1, _idx(m, _SR_IDX), s, "prod"),
        (S(3, 4), S(3, 3)),
        forward=False,
    ),
    Op(
        "scatter_reduce_prod_exclude_self",
        lambda m, x, s: x.scatter_reduce(
            0, _idx(m, [[1, 0], [1, 2]]), s, "prod", include_self=False
        ),
        (S(3, 2), S(2, 2)),
        forward=False,
    ),
    Op(
        "scatter_reduce_mean",
        lambda m, x, s: x.scatter_reduce(1, _idx(m, _SR_IDX), s, "mean"),
        (S(3, 4), S(3, 3)),
    ),
    Op(
        "scatter_reduce_mean_exclude_self",
        lambda m, x, s: m.scatter_reduce(x, 1, _idx(m, _SR_IDX), s, "mean", include_self=False),
        (S(3, 4), S(3, 3)),
    ),
    Op(
        "scatter_reduce_amax",
        lambda m, x, s: x.scatter_reduce(1, _idx(m, _SR_IDX), s, "amax"),
        (S(3, 4), S(3, 3)),
    ),
    Op(
        "scatter_reduce_amin_exclude_self",
        lambda m, x, s: x.scatter_reduce(1, _idx(m, _SR_IDX), s, "amin", include_self=False),
        (S(3, 4), S(3, 3)),
    ),
    Op(
        "scatter_reduce_",
        lambda m, x, s: (x * 1).scatter_reduce_(0, _idx(m, [[2, 0, 2]]), s, "sum"),
        (S(3, 3), S(1, 3)),
    ),
    # masked_scatter / index_copy
    Op(
        "masked_scatter",
        lambda m, x, s: x.masked_scatter(_mask(m, [[True, False, True], [False, True, True]]), s),
        (S(2, 3), S(6)),
    ),
    Op(
        "masked_scatter_broadcast",
        lambda m, x, s: m.masked_scatter(x, _mask(m, [[True, False, True], [False] * 3]), s),
        (S(3), S(2, 2)),
    ),
    Op(
        "masked_scatter_",
        lambda m, x, s: (x * 1).masked_scatter_(x > 0, s),
        (S(3, 4), S(12)),
    ),
    Op(
        "index_copy",
        lambda m, x, s: x.index_copy(0, _idx(m, [2, 0]), s),
        (S(3, 4), S(2, 4)),
    ),
    Op(
        "index_copy_dim1",
        lambda m, x, s: m.index_copy(x, -1, _idx(m, [3, 1, 0]), s),
        (S(2, 4), S(2, 3)),
    ),
    Op(
        "index_copy_",
        lambda m, x, s: (x * 1).index_copy_(1, _idx(m, [1]), s),
        (S(3, 2), S(3, 1)),
    ),
]
