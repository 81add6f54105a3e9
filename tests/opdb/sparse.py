"""Sparse tensors (``ember._aten.sparse``): each entry builds its sparse operands from
dense inputs with a fixed pattern of zeros (``x * mask``, so a perturbed input keeps the
pattern), runs the op, and returns a dense result: values, grad_fn names and gradients
are compared with torch and with central differences. Gradients reach the inputs through
the sparse tensors' own gradients (``ToSparseBackward0`` receives a sparse one, with the
pattern). torch has no forward mode and no double backward for these ops.
"""

from __future__ import annotations

from . import Op, P, S

_M34 = [[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0]]
_M34B = [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0]]
_IDX = [[0, 2, 1, 0, 2], [1, 3, 0, 1, 0]]  # (0, 1) twice: an uncoalesced tensor


def _sp(m, x, mask=_M34):
    """``x`` with the mask's zeros, as a COO tensor (its pattern: the mask's ones)."""
    return (x * m.tensor(mask, dtype=x.dtype)).to_sparse()


def _csr(m, x):
    return (x * m.tensor(_M34, dtype=x.dtype)).to_sparse_csr()


def _op(name, fn, ins, torch=True):
    return Op(name, fn, ins, torch=torch, forward=False, double=False)


# torch's backward fails for some of these (sparse sin/tanh/sqrt derivatives, index_add_ on a
# sparse gradient, division of a sparse gradient by a dense tensor): those entries are
# checked against central differences only (torch=False).
OPS = [
    # construction and conversion
    _op("sparse.to_sparse", lambda m, x: _sp(m, x).to_dense(), (S(3, 4),)),
    _op(
        "sparse.to_sparse_dim1",
        lambda m, x: (x * m.tensor(_M34, dtype=x.dtype)).to_sparse(1).to_dense(),
        (S(3, 4),),
    ),
    _op(
        "sparse.coo_tensor",
        lambda m, v: m.sparse_coo_tensor(m.tensor(_IDX), v, (3, 4)).to_dense(),
        (S(5),),
    ),
    _op(
        "sparse.coalesce_values",
        lambda m, v: m.sparse_coo_tensor(m.tensor(_IDX), v, (3, 4)).coalesce().values(),
        (S(5),),
    ),
    _op(
        "sparse.coo_tensor_dense_dim",
        lambda m, v: m.sparse_coo_tensor(m.tensor([[0, 2, 0]]), v, (3, 2)).to_dense(),
        (S(3, 2),),
    ),
    _op("sparse.to_sparse_csr", lambda m, x: _csr(m, x).to_dense(), (S(3, 4),)),
    _op("sparse.csr_values", lambda m, x: _csr(m, x).values(), (S(3, 4),)),
    _op(
        "sparse.csr_tensor",
        lambda m, v: m.sparse_csr_tensor(
            m.tensor([0, 2, 2, 3]), m.tensor([0, 3, 1]), v, (3, 4)
        ).to_dense(),
        (S(3),),
    ),
    _op("sparse.csr_to_coo", lambda m, x: _csr(m, x).to_sparse().to_dense(), (S(3, 4),)),
    # products
    _op("sparse.mm", lambda m, x, d: m.sparse.mm(_sp(m, x), d), (S(3, 4), S(4, 2))),
    _op("sparse.torch_mm", lambda m, x, d: m.mm(_sp(m, x), d), (S(3, 4), S(4, 2))),
    _op("sparse.matmul_op", lambda m, x, d: _sp(m, x) @ d, (S(3, 4), S(4, 2))),
    _op("sparse.mv", lambda m, x, v: _sp(m, x) @ v, (S(3, 4), S(4))),
    _op("sparse.dense_mm", lambda m, d, x: m.mm(d, _sp(m, x)), (S(2, 3), S(3, 4))),
    _op("sparse.csr_mm", lambda m, x, d: m.mm(_csr(m, x), d), (S(3, 4), S(4, 2))),
    _op(
        "sparse.addmm",
        lambda m, b, x, d: m.sparse.addmm(b, _sp(m, x), d, beta=0.5, alpha=2.0),
        (S(3, 2), S(3, 4), S(4, 2)),
    ),
    _op("sparse.spmm", lambda m, x, d: m.spmm(_sp(m, x), d), (S(3, 4), S(4, 2))),
    # reductions
    _op("sparse.sum", lambda m, x: m.sparse.sum(_sp(m, x)), (S(3, 4),)),
    _op("sparse.sum_dim", lambda m, x: m.sparse.sum(_sp(m, x), 1).to_dense(), (S(3, 4),)),
    _op("sparse.sum_all_dims", lambda m, x: m.sparse.sum(_sp(m, x), (0, 1)), (S(3, 4),)),
    _op("sparse.tensor_sum", lambda m, x: _sp(m, x).sum(), (S(3, 4),)),
    # (torch's backward fails here: "expand is unsupported for Sparse tensors")
    _op("sparse.tensor_sum_dim", lambda m, x: _sp(m, x).sum(0).to_dense(), (S(3, 4),), torch=False),
    _op("sparse.softmax", lambda m, x: m.sparse.softmax(_sp(m, x), 1).to_dense(), (S(3, 4),)),
    _op("sparse.softmax_dim0", lambda m, x: m.sparse.softmax(_sp(m, x), 0).to_dense(), (S(3, 4),)),
    _op(
        "sparse.log_softmax",
        lambda m, x: m.sparse.log_softmax(_sp(m, x), 1).to_dense(),
        (S(3, 4),),
    ),
    # elementwise
    _op("sparse.mul_scalar", lambda m, x: (_sp(m, x) * 2.5).to_dense(), (S(3, 4),)),
    _op("sparse.rmul_scalar", lambda m, x: (3 * _sp(m, x)).to_dense(), (S(3, 4),)),
    _op("sparse.div_scalar", lambda m, x: (_sp(m, x) / 4.0).to_dense(), (S(3, 4),)),
    _op(
        "sparse.mul_sparse",
        lambda m, x, y: (_sp(m, x) * _sp(m, y, _M34B)).to_dense(),
        (S(3, 4), S(3, 4)),
    ),
    _op(
        "sparse.mul_dense",
        lambda m, x, y: (_sp(m, x) * y).to_dense(),
        (S(3, 4), S(3, 4)),
        torch=False,
    ),
    _op(
        "sparse.dense_mul",
        lambda m, y, x: (y * _sp(m, x)).to_dense(),
        (S(3, 4), S(3, 4)),
        torch=False,
    ),
    _op(
        "sparse.add_sparse",
        lambda m, x, y: (_sp(m, x) + _sp(m, y, _M34B)).to_dense(),
        (S(3, 4), S(3, 4)),
    ),
    _op(
        "sparse.sub_sparse",
        lambda m, x, y: (_sp(m, x) - _sp(m, y, _M34B)).to_dense(),
        (S(3, 4), S(3, 4)),
    ),
    _op("sparse.dense_add", lambda m, y, x: y + _sp(m, x), (S(3, 4), S(3, 4))),
    _op("sparse.dense_sub", lambda m, y, x: m.sub(y, _sp(m, x), alpha=2), (S(3, 4), S(3, 4))),
    _op("sparse.neg", lambda m, x: (-_sp(m, x)).to_dense(), (S(3, 4),)),
    _op("sparse.relu", lambda m, x: _sp(m, x).relu().to_dense(), (S(3, 4),)),
    _op("sparse.abs", lambda m, x: m.abs(_sp(m, x)).to_dense(), (S(3, 4),)),
    _op("sparse.sqrt", lambda m, x: _sp(m, x).sqrt().to_dense(), (P(3, 4),), torch=False),
    _op("sparse.sin", lambda m, x: _sp(m, x).sin().to_dense(), (S(3, 4),), torch=False),
    _op("sparse.tanh", lambda m, x: m.tanh(_sp(m, x)).to_dense(), (S(3, 4),), torch=False),
    _op("sparse.pow", lambda m, x: _sp(m, x).pow(3).to_dense(), (S(3, 4),)),
    # shape and copies
    _op("sparse.t", lambda m, x: _sp(m, x).t().to_dense(), (S(3, 4),)),
    _op("sparse.transpose", lambda m, x: _sp(m, x).transpose(0, 1).to_dense(), (S(3, 4),)),
    _op(
        "sparse.index_select",
        lambda m, x: _sp(m, x).index_select(1, m.tensor([3, 0, 3, 2])).to_dense(),
        (S(3, 4),),
        torch=False,
    ),
    _op(
        "sparse.index_select_rows",
        lambda m, x: _sp(m, x).index_select(0, m.tensor([2, 2, 0])).to_dense(),
        (S(3, 4),),
        torch=False,
    ),
    _op("sparse.clone", lambda m, x: _sp(m, x).clone().to_dense(), (S(3, 4),)),
]
