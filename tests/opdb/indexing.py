"""Indexing ops: getitem, gather/scatter, masks, triangles and diagonals."""

from . import Op, S


def _idx(m, values):
    return m.tensor(values)


OPS = [
    # indexing
    Op("getitem_int", lambda m, x: x[1], (S(3, 4),)),
    Op("getitem_slice", lambda m, x: x[:, 1:3], (S(3, 4),)),
    Op("getitem_step", lambda m, x: x[::2, None, -1], (S(5, 4),)),
    Op("getitem_ellipsis", lambda m, x: x[..., 0], (S(2, 3, 4),)),
    Op("getitem_alias", lambda m, x: (x * 1)[...], (S(2, 3),)),
    Op("getitem_list", lambda m, x: x[[0, 2, 2]], (S(3, 4),)),
    Op("getitem_tensor", lambda m, x: x[_idx(m, [1, 0]), 2], (S(3, 4),)),
    Op("getitem_mask", lambda m, x: x[x > 0], (S(3, 4),)),
    Op("select", lambda m, x: m.select(x, 1, -1), (S(3, 4),)),
    Op("index_select", lambda m, x: x.index_select(1, _idx(m, [3, 0, 3])), (S(3, 4),)),
    Op("gather", lambda m, x: x.gather(1, _idx(m, [[0, 0], [3, 1], [2, 2]])), (S(3, 4),)),
    Op("take", lambda m, x: m.take(x, _idx(m, [0, 11, 5])), (S(3, 4),)),
    Op("masked_fill", lambda m, x: x.masked_fill(x > 0, 2.0), (S(3, 4),)),
    Op("masked_fill_tensor", lambda m, x, v: x.masked_fill(x > 0, v), (S(3, 4), S())),
    Op("masked_select", lambda m, x: m.masked_select(x, x > 0), (S(3, 4),)),
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
    Op("index_add", lambda m, x, s: x.index_add(0, _idx(m, [2, 0, 2]), s), (S(3, 4), S(3, 4))),
    Op(
        "scatter",
        lambda m, x, s: x.scatter(1, _idx(m, [[0, 3], [1, 2]]), s),
        (S(2, 4), S(2, 3)),
    ),
    Op("scatter_value", lambda m, x: x.scatter(1, _idx(m, [[0], [2]]), 0.5), (S(2, 4),)),
    Op(
        "scatter_add",
        lambda m, x, s: m.scatter_add(x, 0, _idx(m, [[0, 1, 0], [0, 1, 1]]), s),
        (S(2, 3), S(2, 3)),
    ),
    Op("tril", lambda m, x: x.tril(), (S(3, 4),)),
    Op("triu", lambda m, x: m.triu(x, 1), (S(3, 4),)),
    Op("diag_vec", lambda m, x: m.diag(x, 1), (S(3),)),
    Op("diag_mat", lambda m, x: x.diag(), (S(3, 4),)),
    Op("diagonal", lambda m, x: x.diagonal(0, 1, 2), (S(2, 3, 3),)),
    Op("diag_embed", lambda m, x: m.diag_embed(x), (S(2, 3),)),
    Op("select_scatter", lambda m, x, s: m.select_scatter(x, s, 0, 1), (S(3, 4), S(4))),
    Op("slice_scatter", lambda m, x, s: m.slice_scatter(x, s, 1, 0, 4, 2), (S(3, 4), S(3, 2))),
    Op("diagonal_scatter", lambda m, x, s: m.diagonal_scatter(x, s), (S(3, 3), S(3))),
]
