"""Sparse tensors against torch: printing, layouts and attributes, the gradients of sparse
leaves (sparse, with their pattern), torch's errors, and checkpoints both ways. The ops'
values and gradients are in the op database (``tests/opdb/sparse.py``)."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse (invariant checks|CSR tensor support)")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) twice: uncoalesced


def both(fn):
    """``fn(lib)`` under ember and torch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(ember), fn(torch)


def dense(t) -> np.ndarray:
    if t.layout != (ember.strided if isinstance(t, ember.Tensor) else torch.strided):
        t = t.to_dense()
    return t.detach().numpy()


# -- printing ----------------------------------------------------------------------------------

REPRS = {
    "coo": lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor([3.0, 4.0, 5.0, 1.0]), (2, 3)),
    "coalesced": lambda m: m.sparse_coo_tensor(
        m.tensor(IDX), m.tensor([3.0, 4, 5, 1]), (2, 3)
    ).coalesce(),
    "float64": lambda m: m.sparse_coo_tensor(
        m.tensor(IDX), m.tensor([3.0, 4, 5, 1], dtype=m.float64), (2, 3)
    ),
    "int": lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor([3, 4, 5, 1]), (2, 3)),
    "int32": lambda m: m.sparse_coo_tensor(
        m.tensor(IDX), m.tensor([3, 4, 5, 1], dtype=m.int32), (2, 3)
    ),
    "dense_dim": lambda m: m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2, 3), (4, 3)),
    "empty": lambda m: m.sparse_coo_tensor(size=(2, 3)) if m is torch else _empty(m),
    "requires_grad": lambda m: m.sparse_coo_tensor(
        m.tensor(IDX), m.tensor([3.0, 4, 5, 1]), (2, 3), requires_grad=True
    ),
    "grad_fn": lambda m: (
        m.sparse_coo_tensor(m.tensor(IDX), m.tensor([3.0, 4, 5, 1]), (2, 3)).requires_grad_() * 2
    ),
    "softmax_wraps": lambda m: m.sparse.softmax(
        m.tensor([[0.0, 1.5, 2.0], [3.0, 0.0, 0.25]]).to_sparse().requires_grad_(), 1
    ),
    "from_dense": lambda m: m.tensor([[0.0, 1.5, 0.0], [0.0, 0.0, 2.25]]).to_sparse(),
    "csr": lambda m: m.tensor([[0.0, 1.5, 0.0], [3.0, 0.0, 2.25]]).to_sparse_csr(),
    "csr_float64": lambda m: m.tensor([[0.0, 1.0], [3.0, 0.0]], dtype=m.float64).to_sparse_csr(),
    "long_values": lambda m: m.arange(1.0, 41.0).to_sparse(),
}


def _empty(m):
    return m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.int64), m.zeros(0), (2, 3))


@pytest.mark.parametrize("case", sorted(REPRS))
def test_repr_matches_torch(case):
    e, t = both(REPRS[case])
    assert repr(e) == repr(t)
    assert str(e.layout) == str(t.layout) and e.is_sparse == t.is_sparse
    assert e.is_sparse_csr == t.is_sparse_csr
    assert (e._nnz(), e.sparse_dim(), e.dense_dim()) == (t._nnz(), t.sparse_dim(), t.dense_dim())
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)


def test_empty_coo_tensor_matches_torch():
    e, t = _empty(ember), torch.sparse_coo_tensor(size=(2, 3))
    assert repr(e) == repr(t)


# -- attributes and conversions --------------------------------------------------------------


def test_layouts_are_torch_objects():
    assert repr(ember.strided) == "torch.strided" and repr(ember.sparse_csr) == "torch.sparse_csr"
    assert ember.zeros(2).layout is ember.strided
    assert isinstance(ember.sparse_coo, ember.layout)
    assert pickle.loads(pickle.dumps(ember.sparse_coo)) is ember.sparse_coo


def test_coalesce_indices_values_and_dense_round_trip():
    e, t = both(lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor([3.0, 4, 5, 1]), (2, 3)))
    assert not e.is_coalesced() and not t.is_coalesced()
    ec, tc = e.coalesce(), t.coalesce()
    assert ec.is_coalesced()
    np.testing.assert_array_equal(ec.indices().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(ec.values().numpy(), tc.values().numpy())
    np.testing.assert_array_equal(dense(e), dense(t))
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    x = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    e2, t2 = ember.tensor(x).to_sparse_csr(), torch.tensor(x).to_sparse_csr()
    for name in ("crow_indices", "col_indices", "values"):
        np.testing.assert_array_equal(getattr(e2, name)().numpy(), getattr(t2, name)().numpy())
    assert repr(e2.to_sparse()) == repr(t2.to_sparse())
    assert repr(ember.tensor(x).to_sparse(1)) == repr(torch.tensor(x).to_sparse(1))
    assert ember.ones(2, 3).sparse_dim() == 0 and ember.ones(2, 3).dense_dim() == 2
    y = ember.ones(2)
    assert y.to_dense() is y


def test_size_inferred_from_indices_and_values():
    e, t = both(lambda m: m.sparse_coo_tensor(m.tensor([[0, 3], [1, 0]]), m.ones(2, 5)))
    assert tuple(e.shape) == tuple(t.shape) == (4, 2, 5)


def test_dtype_conversions_keep_the_layout():
    e, t = both(lambda m: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().double())
    assert repr(e) == repr(t)
    e, t = both(lambda m: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().to(m.float64))
    assert repr(e) == repr(t)
    e, t = both(lambda m: m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().detach())
    assert repr(e) == repr(t)


# -- gradients of sparse leaves -----------------------------------------------------------------

LEAF_PROGRAMS = {
    "to_dense": lambda m, s: (s.to_dense() * m.arange(6.0).view(2, 3)).sum(),
    "sparse_mm": lambda m, s: m.sparse.mm(s, m.arange(6.0).view(3, 2)).sum(),
    "torch_mm": lambda m, s: m.mm(s, m.arange(6.0).view(3, 2)).sum(),  # dense gradient
    "scaled_twice": lambda m, s: (s * 2 + s).to_dense().sum(),
    "sum": lambda m, s: m.sparse.sum(s) * 3,
    "softmax": lambda m, s: (m.sparse.softmax(s, 1).to_dense() * m.arange(6.0).view(2, 3)).sum(),
    "values": lambda m, s: (s.coalesce().values() ** 2).sum(),
    "mul_dense": lambda m, s: (s * m.arange(6.0).view(2, 3)).to_dense().sum(),
}


@pytest.mark.parametrize("case", sorted(LEAF_PROGRAMS))
def test_sparse_leaf_gradient_matches_torch(case):
    def run(m):
        s = m.sparse_coo_tensor(m.tensor(IDX), m.tensor([3.0, 4, 5, 1]), (2, 3), requires_grad=True)
        LEAF_PROGRAMS[case](m, s).backward()
        return s.grad

    e, t = both(run)
    assert e.layout.__repr__() == repr(t.layout)
    np.testing.assert_allclose(dense(e), dense(t), rtol=1e-6)
    if t.is_sparse:
        assert repr(e.coalesce()) == repr(t.coalesce())


def test_sparse_gradients_accumulate():
    def run(m):
        s = m.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().requires_grad_()
        m.sparse.sum(s * 2).backward()
        m.sparse.sum(s).backward()
        return s.grad

    e, t = both(run)
    np.testing.assert_array_equal(dense(e), dense(t))
    assert e.is_sparse and t.is_sparse


def test_gradients_reach_the_values_through_the_constructor():
    def run(m):
        v = m.tensor([3.0, 4, 5, 1], requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor(IDX), v, (2, 3))
        (m.sparse.mm(s, m.ones(3, 2)) ** 2).sum().backward()
        return v.grad, type(s.grad_fn).__name__

    (eg, en), (tg, tn) = both(run)
    assert en == tn
    np.testing.assert_allclose(eg.numpy(), tg.numpy())


def test_double_backward_is_refused_clearly():
    s = ember.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().requires_grad_()
    d = ember.ones(2, 2, requires_grad=True)
    out = ember.sparse.mm(s, d).sum()
    with pytest.raises(RuntimeError, match="no double backward through sparse tensors"):
        ember.autograd.grad(out, d, create_graph=True)


def test_memory_is_freed_after_backward():
    s = ember.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().requires_grad_()
    out = ember.sparse.mm(s, ember.ones(2, 2, requires_grad=True)).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()


# -- errors ----------------------------------------------------------------------------------


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 (the error itself is compared)
            return type(e), str(e)
    raise AssertionError("no error")


ERRORS = {
    "add_sparse_dense": lambda m: _s(m) + m.ones(2, 3),
    "values_uncoalesced": lambda m: _s(m).values(),
    "indices_uncoalesced": lambda m: _s(m).indices(),
    "numpy": lambda m: _s(m).numpy(),
    "exp": lambda m: m.exp(_s(m)),
    "view": lambda m: _s(m).view(-1),
    "mm_shapes": lambda m: m.sparse.mm(_s(m), m.ones(2, 2)),
    "mm_dtypes": lambda m: _s(m).double() @ m.ones(3, 2),
    "dense_mm_dtypes": lambda m: m.ones(2, 3) @ _s(m).t().double(),
    "addmm_dtypes": lambda m: m.sparse.addmm(m.ones(2, 2), _s(m).double(), m.ones(3, 2).double()),
    "mv_dtypes": lambda m: m.mm(_s(m), m.ones(3, 2, dtype=m.float64)),
    "leaf_inplace": lambda m: _s(m).requires_grad_().zero_(),
    "nnz_dense": lambda m: m.ones(2)._nnz(),
    "indices_count": lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.ones(3), (2, 3)),
    # (ember always checks what torch checks with check_invariants=True)
    "index_out_of_size": lambda m: m.sparse_coo_tensor(
        m.tensor(IDX), m.ones(4), (2, 2), check_invariants=True
    ),
}


def _s(m):
    return m.sparse_coo_tensor(m.tensor(IDX), m.tensor([3.0, 4, 5, 1]), (2, 3))


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    (e_type, e_msg), (t_type, t_msg) = (
        _error(lambda: ERRORS[case](ember)),
        _error(lambda: ERRORS[case](torch)),
    )
    assert e_type is t_type
    # torch's backend errors go on to list its build's backends: ember's say the same up to there
    assert t_msg.startswith(e_msg) if "Could not run" in t_msg else e_msg == t_msg, (e_msg, t_msg)


# -- checkpoints both ways ----------------------------------------------------------------------


def test_torch_reads_embers_sparse_tensors(tmp_path):
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])
    obj = {
        "coo": ember.sparse_coo_tensor(ember.tensor(IDX), ember.tensor([3.0, 4, 5, 1]), (2, 3)),
        "csr": ember.tensor(x).to_sparse_csr(),
        "coalesced": ember.tensor(x).to_sparse(),
    }
    ember.save(obj, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt")
    for k, v in obj.items():
        assert repr(back[k]) == repr(v)
    assert back["coalesced"].is_coalesced() and not back["coo"].is_coalesced()


def test_ember_reads_torchs_sparse_tensors(tmp_path):
    x = torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]])
    obj = {"coo": x.to_sparse(), "csr": x.to_sparse_csr(), "dense": x}
    torch.save(obj, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    for k, v in obj.items():
        assert repr(back[k]) == repr(v)
    assert back["coo"].is_coalesced()
    np.testing.assert_array_equal(dense(back["csr"]), x.numpy())
