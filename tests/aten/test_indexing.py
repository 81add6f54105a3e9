"""Indexing: ``__getitem__``, gather/scatter, masks, diagonals, ``index_put`` and
``__setitem__`` (CopySlices) vs torch and finite differences."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._aten.indexing import index_np, index_put
from ember._aten.inplace import _index_key

torch = pytest.importorskip("torch")

import torch_compare as tc  # noqa: E402  (needs torch: after importorskip)

# -- __getitem__ keys (applied to a (3, 4, 5) tensor) ---------------------------------------

KEYS = [
    ("int", lambda M: 0),
    ("neg_int", lambda M: -1),
    ("np_int", lambda M: np.int64(2)),
    ("two_ints", lambda M: (0, 1)),
    ("three_ints", lambda M: (2, 3, 4)),
    ("slice", lambda M: (slice(None), slice(1, 3))),
    ("single_full_slice", lambda M: slice(None)),
    ("slice_step", lambda M: slice(None, None, 2)),
    ("slice_neg_bounds", lambda M: slice(-2, None)),
    ("slice_step3", lambda M: (slice(None), slice(None, -1, 3))),
    ("slice_oob", lambda M: slice(5, 10)),
    ("slice_empty", lambda M: slice(2, 1)),
    ("none", lambda M: None),
    ("none_colon_none", lambda M: (None, slice(None), None)),
    ("ellipsis", lambda M: Ellipsis),
    ("ellipsis_int", lambda M: (Ellipsis, 1)),
    ("ellipsis_none", lambda M: (Ellipsis, None)),
    ("colon_colon", lambda M: (slice(None), slice(None))),
    ("int_colon", lambda M: (0, slice(None))),
    ("colon_int", lambda M: (slice(None), 0)),
    ("slice_colon", lambda M: (slice(1, None), slice(None))),
    ("int_none", lambda M: (0, None)),
    ("mid_ellipsis", lambda M: (0, Ellipsis, 1)),
    ("tensor_0d", lambda M: M.tensor(1)),
    ("tensor_0d_in_tuple", lambda M: (slice(None), M.tensor(2))),
    ("bool_true", lambda M: True),
    ("bool_false", lambda M: False),
    ("bool_in_tuple", lambda M: (0, True)),
    ("bool_0d_tensor", lambda M: M.tensor(True)),
    ("list", lambda M: [0, 2]),
    ("list_repeat", lambda M: [0, 0, 2, 0]),
    ("list_neg", lambda M: [-1, -3]),
    ("list_empty", lambda M: []),
    ("tensor", lambda M: M.tensor([2, 0])),
    ("tensor_int32", lambda M: M.tensor([1, 1], dtype=M.int32)),
    ("tensor_2d", lambda M: M.tensor([[0, 1], [1, 1]])),
    ("ndarray", lambda M: np.array([0, 2])),
    ("slice_adv", lambda M: (slice(1, None), [0, 2])),
    ("int_adv", lambda M: (1, [0, 2])),
    ("adv_slice", lambda M: ([0], slice(1, None))),
    ("adv_adv", lambda M: ([0, 1], [1, 2])),
    ("adv_broadcast", lambda M: ([[0], [1]], [0, 1, 2])),
    ("adv_nonadjacent", lambda M: ([0, 1], slice(None), [0, 4])),
    ("adv_int_separated", lambda M: (slice(None), [0, 1], 2)),
    ("adv_int_between", lambda M: ([0, 2], 1, [3, 4])),
    ("none_adv", lambda M: (None, [0, 1])),
    ("adv_ellipsis_none", lambda M: ([0, 1], Ellipsis, None)),
    ("ellipsis_adv", lambda M: (Ellipsis, [0, 4, 4])),
    ("tuple_in_tuple", lambda M: ((0, 1), slice(None))),
    ("range", lambda M: range(2)),
    ("range_adv", lambda M: (range(3), [0, 3, 1])),
    ("row_mask", lambda M: M.tensor([True, False, True])),
    ("list_mask", lambda M: [True, False, True]),
    ("later_mask", lambda M: (slice(None), M.tensor([True, False, True, True]))),
    ("mask_2d", lambda M: M.tensor([[True, False, True, False]] * 3)),
    ("mask_2d_int", lambda M: (M.tensor([[True, False, True, False]] * 3), 0)),
    ("mask_plus_int", lambda M: (M.tensor([False, True, True]), 0)),
    ("mask_full", lambda M: M.tensor(np.arange(60).reshape(3, 4, 5) % 3 == 0)),
    ("mask_none", lambda M: M.tensor([False] * 3)),
    ("uint8_mask", lambda M: M.tensor([1, 0, 1], dtype=M.uint8)),
    ("seq_as_tuple", lambda M: [0, slice(None)]),
    ("seq_of_lists", lambda M: [[0, 1], [1, 2]]),
    ("seq_of_tensors", lambda M: [M.tensor(0), M.tensor(1)]),
]
KEY_IDS = [k[0] for k in KEYS]


@pytest.mark.parametrize("case", KEYS, ids=KEY_IDS)
def test_getitem_matches_torch(case):
    rng = np.random.default_rng(0)
    tc.compare(lambda M, x: x[case[1](M)], [tc.arr(rng, (3, 4, 5), np.float32)], rng)


@pytest.mark.parametrize("case", KEYS, ids=KEY_IDS)
def test_getitem_gradcheck(case):
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc.check_gradients(lambda x: x[case[1](ember)], [tc.arr(rng, (3, 4, 5))], rng)


def test_getitem_small_shapes():
    rng = np.random.default_rng(2)
    for shape, key in [
        ((), None),
        ((), Ellipsis),
        ((), ()),
        ((3,), 1),
        ((3,), -1),
        ((3,), slice(1, None)),
        ((2, 0), slice(None)),
        ((0, 3), []),
    ]:
        tc.compare(lambda M, x, key=key: x[key], [tc.arr(rng, shape, np.float32)], rng)


def test_getitem_int_tensor_data():
    x = ember.arange(12).view(3, 4)
    assert x[1, 2].item() == 6
    assert x[x > 9].tolist() == [10, 11]
    assert x[:, [0, 3]].tolist() == [[0, 3], [4, 7], [8, 11]]
    assert x[0].dtype == ember.int64 and x[0].grad_fn is None


def test_advanced_index_accumulates_repeats():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[[0, 0, 2, 0]]
    y.backward(ember.ones(4))
    assert x.grad.tolist() == [3.0, 0.0, 1.0]
    assert y._base is None


def test_basic_index_is_view_advanced_is_copy():
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    v = x[1, 1:3]
    c = x[[1]]
    assert v._base is x and v._vc is x._vc
    assert c._base is None
    with ember.no_grad():
        v.mul_(0)
        c.add_(100)
    assert x.tolist()[1] == [4.0, 0.0, 0.0, 7.0]
    assert x._version_ == 1


# -- index errors equal torch's --------------------------------------------------------------

INDEX_ERRORS = [
    lambda x, M: x[5],
    lambda x, M: x[-5],
    lambda x, M: x[0, 7],
    lambda x, M: x[:, 1, 9],
    lambda x, M: x[None, 5],
    lambda x, M: x[..., 9],
    lambda x, M: x[0, 0, 0, 0],
    lambda x, M: x[::-1],
    lambda x, M: x[:, ::-2],
    lambda x, M: x[::0],
    lambda x, M: x[1.5],
    lambda x, M: x[M.tensor([0.0])],
    lambda x, M: x[M.tensor([0], dtype=M.int8)],
    lambda x, M: x[[0, 5]],
    lambda x, M: x[M.tensor([0, 5])],
    lambda x, M: x[:, M.tensor([0, 5])],
    lambda x, M: x[[0, 1], [0, 9]],
    lambda x, M: x[:, :, [0, 9]],
    lambda x, M: x[[-4]],
    lambda x, M: x[[0, 1], [0, 1, 2]],
    lambda x, M: x[M.ones(2, dtype=M.bool)],
    lambda x, M: x[M.ones(3, 3, dtype=M.bool)],
    lambda x, M: x[:, M.ones(3, dtype=M.bool)],
    lambda x, M: x[0, M.ones(3, dtype=M.bool)],
    lambda x, M: M.tensor(1.0)[0],
    lambda x, M: M.tensor(1.0)[:],
    lambda x, M: M.tensor(1.0)[0,],
    lambda x, M: x.select(1, 4),
    lambda x, M: x.select(3, 0),
    lambda x, M: M.tensor(1.0).select(0, 0),
    lambda x, M: x.index_select(1, M.tensor([0.0])),
    lambda x, M: x.index_select(1, M.tensor([[0]])),
    lambda x, M: x.index_select(1, M.tensor([9])),
    lambda x, M: x.index_select(1, M.tensor([-1])),
    lambda x, M: x.gather(1, M.tensor([[[9]]])),
    lambda x, M: x.gather(1, M.tensor([0])),
    lambda x, M: x.gather(1, M.zeros(3, 1, 1)),
    lambda x, M: x.gather(1, M.zeros(4, 1, 1, dtype=M.long)),
    lambda x, M: x.gather(1, M.tensor([[[-1]]])),
    lambda x, M: x.scatter(1, M.zeros(4, 1, 1, dtype=M.long), 1.0),
    lambda x, M: x.scatter(1, M.zeros(3, 1, 1, dtype=M.long), M.ones(3, 0, 1)),
    lambda x, M: x.scatter(1, M.tensor([[[9]]]), 1.0),
    lambda x, M: x.scatter(1, M.zeros(1, 1, 1, dtype=M.long), M.ones(1, 1, 1, dtype=M.float64)),
    lambda x, M: x.scatter_add(1, M.tensor([0]), x),
    lambda x, M: x.masked_fill(M.ones(3, 4, 5), 0.0),
    lambda x, M: x.masked_fill(M.ones(3, 4, 5, dtype=M.uint8), 0.0),
    lambda x, M: x.masked_fill(M.ones(3, 4, 5, dtype=M.long), 0.0),
    lambda x, M: x.masked_fill(M.ones(3, 4, 5, dtype=M.bool), M.tensor([1.0])),
    lambda x, M: x.masked_fill(M.ones(2, 5, dtype=M.bool), 0.0),
    lambda x, M: x.masked_select(M.ones(3, 4, 5)),
    lambda x, M: x.take(M.tensor([0], dtype=M.int32)),
    lambda x, M: x.take(M.tensor([60])),
    lambda x, M: x.take(M.tensor([-61])),
    lambda x, M: M.index_put(x, (M.tensor([0]),), M.tensor(1.0, dtype=M.float64)),
    lambda x, M: M.index_put(x, (M.tensor([0, 1]),), M.ones(3)),
    lambda x, M: M.index_put(x, (M.tensor([5]),), M.ones(5)),
    lambda x, M: x.index_add(0, M.tensor([0, 0]), M.ones(2, 4, 4)),
    lambda x, M: x.index_add(0, M.tensor([0]), M.ones(1, 4, 5, dtype=M.float64)),
    lambda x, M: M.tensor(1.0).tril(),
    lambda x, M: M.ones(3).triu(),
    lambda x, M: x.diag(),
    lambda x, M: x.diagonal(0, 1, 1),
    lambda x, M: x.diagonal(0, 0, 3),
    lambda x, M: M.ones(3).diag_embed(0, 0, 0),
    lambda x, M: x.select_scatter(M.ones(3), 0, 1),
    lambda x, M: x.slice_scatter(M.ones(3, 3, 5), 1, 0, 2),
    lambda x, M: x.diagonal_scatter(M.ones(5, 2)),
]


@pytest.mark.parametrize("k", range(len(INDEX_ERRORS)))
def test_index_error_texts_match_torch(k):
    fn = INDEX_ERRORS[k]
    with pytest.raises(Exception) as te:
        fn(torch.zeros(3, 4, 5), torch)
    with pytest.raises(Exception) as ee:
        fn(ember.zeros(3, 4, 5), ember)
    assert type(ee.value).__name__ == type(te.value).__name__
    assert str(ee.value) == str(te.value)


# -- other indexing ops: (id, input shapes, fn(module, *inputs)) -----------------------------


def _perm_index(M, shape, dim, seed=0):
    """A valid (possibly repeating) gather/scatter index of ``shape`` for size ``shape[dim]``."""
    r = np.random.default_rng(seed)
    return M.tensor(r.integers(0, 4, size=shape))


OPS = [
    ("select", [(3, 4)], lambda M, x: x.select(1, -1)),
    ("select_fn", [(3, 4)], lambda M, x: M.select(x, 0, 2)),
    ("index_select", [(3, 4)], lambda M, x: x.index_select(1, M.tensor([2, 0, 2]))),
    ("index_select_0d_index", [(3, 4)], lambda M, x: M.index_select(x, 0, M.tensor(1))),
    ("index_select_int32", [(3, 4)], lambda M, x: x.index_select(0, M.tensor([1], dtype=M.int32))),
    ("index_add", [(3, 4), (2, 4)], lambda M, x, s: x.index_add(0, M.tensor([2, 2]), s)),
    (
        "index_add_alpha",
        [(3, 4), (2, 3)],
        lambda M, x, s: M.index_add(x, 1, M.tensor([0, 3]), s.t(), alpha=2.5),
    ),
    ("gather", [(3, 4)], lambda M, x: x.gather(1, M.tensor([[0, 0], [1, 3], [2, 2]]))),
    ("gather_dim0", [(4, 3)], lambda M, x: M.gather(x, 0, _perm_index(M, (5, 2), 0))),
    ("gather_3d", [(2, 4, 3)], lambda M, x: x.gather(1, _perm_index(M, (2, 6, 3), 1, 1))),
    ("scatter_src", [(3, 4), (3, 1)], lambda M, x, s: x.scatter(1, M.tensor([[0], [3], [1]]), s)),
    ("scatter_value", [(3, 4)], lambda M, x: x.scatter(0, M.tensor([[0, 1, 2, 0]]), 2.0)),
    (
        "scatter_value_kw",
        [(3, 4)],
        lambda M, x: M.scatter(x, 0, M.tensor([[2, 1, 2, 0]]), value=-1.0),
    ),
    (
        "scatter_add",
        [(3, 4), (3, 2)],
        lambda M, x, s: x.scatter_add(1, M.tensor([[0, 0], [3, 1], [1, 1]]), s),
    ),
    (
        "scatter_add_dim0",
        [(4, 3), (1, 3)],
        lambda M, x, s: M.scatter_add(x, 0, M.tensor([[0, 0, 3]]), s),
    ),
    ("masked_fill", [(3, 4)], lambda M, x: x.masked_fill(x > 0, 0.5)),
    ("masked_fill_int_value", [(3, 4)], lambda M, x: M.masked_fill(x, x < 0, 2)),
    ("masked_fill_tensor_value", [(3, 4), ()], lambda M, x, v: x.masked_fill(x > 0, v)),
    ("masked_fill_plain_tensor_value", [(3, 4)], lambda M, x: x.masked_fill(x > 0, M.tensor(3.0))),
    (
        "masked_fill_bcast_mask",
        [(3, 4)],
        lambda M, x: x.masked_fill(M.tensor([True, False, False, True]), -1.0),
    ),
    (
        "masked_fill_bcast_self",
        [(4,)],
        lambda M, x: x.masked_fill(M.tensor([[True, False, False, True]] * 2), 0.0),
    ),
    ("masked_select", [(3, 4)], lambda M, x: x.masked_select(x > 0)),
    (
        "masked_select_bcast",
        [(4,)],
        lambda M, x: M.masked_select(x, M.tensor([[True, False, True, True], [False] * 4])),
    ),
    ("take", [(3, 4)], lambda M, x: x.take(M.tensor([[0, 11], [-1, 0]]))),
    ("take_fn", [(2, 3)], lambda M, x: M.take(x.t(), M.tensor([1, 1, 4]))),
    ("index_put", [(3, 4), (2, 4)], lambda M, x, v: M.index_put(x, (M.tensor([0, 2]),), v)),
    (
        "index_put_acc",
        [(3, 4), ()],
        lambda M, x, v: x.index_put((M.tensor([0, 0, 1]), M.tensor([1, 1, 3])), v, True),
    ),
    (
        "index_put_mask",
        [(3, 4), ()],
        lambda M, x, v: x.index_put((M.tensor([[True, False, True, False]] * 3),), v),
    ),
    (
        "index_put_bcast",
        [(3, 4), (4,)],
        lambda M, x, v: x.index_put((M.tensor([1]),), v, accumulate=True),
    ),
    ("tril", [(3, 4)], lambda M, x: x.tril()),
    ("tril_k", [(2, 3, 4)], lambda M, x: M.tril(x, -1)),
    ("triu", [(4, 3)], lambda M, x: x.triu(1)),
    ("triu_neg", [(2, 3, 3)], lambda M, x: M.triu(x, diagonal=-1)),
    ("diag_1d", [(3,)], lambda M, x: x.diag()),
    ("diag_1d_k", [(3,)], lambda M, x: M.diag(x, -2)),
    ("diag_2d", [(3, 4)], lambda M, x: x.diag()),
    ("diag_2d_k", [(3, 4)], lambda M, x: M.diag(x, 2)),
    ("diag_2d_k_neg", [(3, 4)], lambda M, x: M.diag(x, -1)),
    ("diagonal", [(3, 4)], lambda M, x: x.diagonal()),
    ("diagonal_off", [(3, 4)], lambda M, x: x.diagonal(1)),
    ("diagonal_off_neg", [(3, 4)], lambda M, x: M.diagonal(x, -2)),
    ("diagonal_empty", [(3, 4)], lambda M, x: M.diagonal(x, 5)),
    ("diagonal_3d", [(2, 3, 4)], lambda M, x: x.diagonal(0, 2, 0)),
    ("diagonal_3d_neg", [(2, 3, 4)], lambda M, x: M.diagonal(x, 1, -1, -2)),
    ("diag_embed", [(2, 3)], lambda M, x: x.diag_embed()),
    ("diag_embed_dims", [(2, 3)], lambda M, x: M.diag_embed(x, -1, 0, 2)),
    ("select_scatter", [(3, 4), (4,)], lambda M, x, s: x.select_scatter(s, 0, 1)),
    ("slice_scatter", [(3, 4), (3, 2)], lambda M, x, s: M.slice_scatter(x, s, 1, 1, 4, 2)),
    ("slice_scatter_default", [(3, 4), (3, 4)], lambda M, x, s: x.slice_scatter(s)),
    ("diagonal_scatter", [(3, 4), (3,)], lambda M, x, s: x.diagonal_scatter(s)),
    ("diagonal_scatter_off", [(3, 4), (2,)], lambda M, x, s: M.diagonal_scatter(x, s, -1)),
    ("nonzero", [(3, 4)], lambda M, x: (x > 0).nonzero()),
    ("nonzero_tuple", [(3, 4)], lambda M, x: M.nonzero(x > 0, as_tuple=True)),
    ("nonzero_0d", [()], lambda M, x: (x > 0).nonzero()),
    ("nonzero_0d_tuple", [()], lambda M, x: (x < 100).nonzero(as_tuple=True)),
    ("argwhere", [(2, 3)], lambda M, x: M.argwhere(x > 0)),
    ("masked_fill_", [(3, 4)], lambda M, x: (x * 1).masked_fill_(x > 0, 1.0)),
    (
        "index_put_",
        [(3, 4), ()],
        lambda M, x, v: (x * 1).index_put_((M.tensor([0, 2]),), v, accumulate=True),
    ),
    (
        "scatter_",
        [(3, 4), (3, 1)],
        lambda M, x, s: (x * 1).scatter_(1, M.tensor([[0], [3], [1]]), s),
    ),
    ("tril_", [(3, 4)], lambda M, x: (x * 1).tril_(1)),
]
OP_IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("case", OPS, ids=OP_IDS)
def test_ops_match_torch(case):
    _, shapes, fn = case
    rng = np.random.default_rng(3)
    tc.compare(fn, [tc.arr(rng, s, np.float32) for s in shapes], rng)


@pytest.mark.parametrize("case", OPS, ids=OP_IDS)
def test_ops_gradcheck(case):
    _, shapes, fn = case
    rng = np.random.default_rng(4)
    tc.check_gradients(lambda *xs: fn(ember, *xs), [tc.arr(rng, s) for s in shapes], rng)


# The recorded (create_graph) backward: d/dw <J^T w, v> = J v, compared with torch.
DOUBLE_KEYS = [
    "int",
    "two_ints",
    "slice",
    "slice_step",
    "none",
    "ellipsis",
    "list_repeat",
    "adv_nonadjacent",
    "row_mask",
    "mask_2d_int",
    "slice_adv",
]
DOUBLE_OPS = [
    "select",
    "index_select",
    "index_add",
    "gather_3d",
    "scatter_src",
    "scatter_value",
    "scatter_add",
    "scatter_add_dim0",
    "masked_fill",
    "masked_fill_tensor_value",
    "masked_select_bcast",
    "take",
    "index_put",
    "index_put_acc",
    "tril",
    "diag_1d",
    "diag_2d_k",
    "diagonal_3d",
    "diag_embed_dims",
    "select_scatter",
    "slice_scatter",
    "diagonal_scatter_off",
]


def _double_backward(fn, arrays):
    results = []
    for M in (ember, torch):
        xs = [M.tensor(a, requires_grad=True) for a in arrays]
        outs = [o for o in tc.outs(fn(M, *xs)) if o.requires_grad]
        r = np.random.default_rng(5)
        ws = [M.tensor(r.standard_normal(tuple(o.shape)), requires_grad=True) for o in outs]
        gs = M.autograd.grad(outs, xs, ws, create_graph=True, allow_unused=True)
        vs = [r.standard_normal(tuple(x.shape)) for x in xs]
        total = sum((g * M.tensor(v)).sum() for g, v in zip(gs, vs) if g is not None)
        gw = M.autograd.grad(total, ws, allow_unused=True)
        results.append([None if g is None else g.detach().numpy() for g in gw])
    for e, t in zip(*results):
        if t is None:
            assert e is None or not e.any()
        else:
            np.testing.assert_allclose(e, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kid", DOUBLE_KEYS)
def test_getitem_double_backward(kid):
    key = KEYS[KEY_IDS.index(kid)][1]
    rng = np.random.default_rng(6)
    _double_backward(lambda M, x: x[key(M)], [tc.arr(rng, (3, 4, 5))])


@pytest.mark.parametrize("oid", DOUBLE_OPS)
def test_ops_double_backward(oid):
    _, shapes, fn = OPS[OP_IDS.index(oid)]
    rng = np.random.default_rng(7)
    _double_backward(fn, [tc.arr(rng, s) for s in shapes])


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
def test_scatter_src_larger_than_index_gradcheck(op):
    # torch raises "returned an invalid gradient" in backward here; ember pads the gradient.
    rng = np.random.default_rng(9)
    idx = ember.tensor([[0], [3], [1]])
    tc.check_gradients(
        lambda x, s: getattr(x, op)(1, idx, s), [tc.arr(rng, (3, 4)), tc.arr(rng, (4, 2))], rng
    )


# -- index_put with raw keys (what CopySlices passes) ------------------------------------------


def test_index_put_accepts_raw_keys():
    x = ember.zeros(3, 4)
    for key in [
        (0, 1),
        (slice(None), 2),
        (Ellipsis, [0, 3]),
        1,
        [0, 2],
        ember.tensor([True, False, True]),
        (None, 0),
        (ember.tensor([1]), slice(1, 3)),
    ]:
        raw = _index_key(key)
        got = index_put(x, raw, 5.0).numpy()
        want = np.zeros((3, 4), dtype=np.float32)
        want[raw] = 5.0
        np.testing.assert_array_equal(got, want)


def test_index_np_numpy_semantics_and_grad():
    x = ember.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    key = (slice(None), np.array([0, 1]), 2)  # the int is an advanced index here
    y = index_np(x, key)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy()[key])
    y.backward(ember.ones(*y.shape, dtype=ember.float64))
    want = np.zeros((2, 3, 4))
    np.add.at(want, key, 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), want)


# -- __setitem__ (CopySlices, from inplace.py) -------------------------------------------------


def test_setitem_copyslices_accumulates():
    m = ember.tensor([[2.0, 3.0]], requires_grad=True)
    n = ember.zeros(1, 2)
    n[0, 0] = m[0, 0] ** 2
    n[0, 1] = m[0, 1] ** 3
    assert n.grad_fn.name() == "CopySlices"
    n.backward(m.data, retain_graph=True)
    assert m.grad.tolist() == [[8.0, 81.0]]
    n.backward(ember.tensor([[1.0, 1.0]]))
    assert m.grad.tolist() == [[12.0, 108.0]]


SETITEMS = [
    ("row", (3, 4), (4,), lambda M: 1),
    ("column", (3, 4), (3,), lambda M: (slice(None), 2)),
    ("slice_bcast", (3, 4), (1, 2), lambda M: (slice(1, None), slice(0, 2))),
    ("mask", (3, 4), (), lambda M: M.tensor([True, False, True])),
    ("list", (3, 4), (2, 4), lambda M: [0, 2]),
]


@pytest.mark.parametrize("case", SETITEMS, ids=[s[0] for s in SETITEMS])
def test_setitem_matches_torch(case):
    _, shape, vshape, key = case
    rng = np.random.default_rng(8)
    base = tc.arr(rng, shape, np.float32)
    val = tc.arr(rng, vshape, np.float32)
    w = tc.arr(rng, shape, np.float32)
    res, names = [], []
    for M in (ember, torch):
        b = M.tensor(base, requires_grad=True)
        v = M.tensor(val, requires_grad=True)
        n = b * 2
        n[key(M)] = v * 3
        names.append(type(n.grad_fn).__name__)
        n.backward(M.tensor(w))
        res.append((n.detach().numpy(), b.grad.numpy(), v.grad.numpy()))
    # torch records IndexPutBackward0 for advanced keys; ember's setitem always CopySlices.
    if names[1] == "CopySlices":
        assert names[0] == "CopySlices"
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-6)


# -- hypothesis: random shapes and random valid keys -------------------------------------------

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@st.composite
def shape_and_key(draw):
    shape = draw(shapes)
    nd = len(shape)
    k = draw(st.integers(0, nd))
    ellipsis_first = draw(st.booleans()) and k < nd
    dims = list(range(nd - k, nd)) if ellipsis_first else list(range(k))
    adv_len = draw(st.integers(1, 3))
    use_mask = draw(st.booleans())
    items = []
    for d in dims:
        n = shape[d]
        kind = draw(st.sampled_from(["int", "slice", "list", "tensor", "mask"]))
        if kind == "int":
            items.append(("int", draw(st.integers(-n, n - 1))))
        elif kind == "slice":
            start = draw(st.none() | st.integers(-n - 1, n + 1))
            stop = draw(st.none() | st.integers(-n - 1, n + 1))
            step = draw(st.none() | st.integers(1, 3))
            items.append(("slice", slice(start, stop, step)))
        elif kind == "mask" and use_mask:
            use_mask = False
            adv_len = None  # a mask's length is data dependent: no other index arrays
            items.append(("mask", draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        elif adv_len is not None:
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=adv_len, max_size=adv_len))
            items.append((kind if kind != "mask" else "list", vals))
        else:
            items.append(("int", draw(st.integers(-n, n - 1))))
    if any(kind == "mask" for kind, _ in items):
        items = [("int", 0) if kind in ("list", "tensor") else (kind, v) for kind, v in items]
    # Sprinkle None / bool scalars.
    extra = draw(
        st.lists(st.tuples(st.integers(0, len(items)), st.sampled_from([None, True])), max_size=2)
    )
    for pos, obj in extra:
        items.insert(pos, ("const", obj))
    if ellipsis_first:
        items.insert(0, ("const", Ellipsis))
    elif draw(st.booleans()):
        items.append(("const", Ellipsis))
    return shape, items


def _build_key(M, items):
    key = []
    for kind, v in items:
        if kind in ("int", "slice", "list", "const"):
            key.append(v)
        else:  # tensor or mask
            key.append(M.tensor(v))
    return tuple(key)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(sk=shape_and_key())
def test_hyp_getitem_matches_torch(sk):
    shape, items = sk
    rng = np.random.default_rng(len(shape))
    tc.compare(lambda M, x: x[_build_key(M, items)], [tc.arr(rng, shape, np.float32)], rng)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_gather_scatter_index_select(shape, data):
    nd = len(shape)
    dim = data.draw(st.integers(-nd, nd - 1))
    n = shape[dim]
    ishape = tuple(data.draw(st.integers(1, s)) for s in shape)
    ishape = ishape[: dim % nd] + (data.draw(st.integers(1, 5)),) + ishape[dim % nd + 1 :]
    rng = np.random.default_rng(nd)
    idx = rng.integers(0, n, size=ishape)
    vec = rng.integers(0, n, size=data.draw(st.integers(0, 5)))
    arr = tc.arr(rng, shape, np.float32)
    tc.compare(lambda M, x: x.gather(dim, M.tensor(idx)), [arr], rng)
    tc.compare(lambda M, x: x.index_select(dim, M.tensor(vec)), [arr], rng)
    # scatter_add needs an index no larger than self outside ``dim``.
    sidx = idx[tuple(slice(0, s) if i != dim % nd else slice(None) for i, s in enumerate(shape))]
    src = tc.arr(rng, sidx.shape, np.float32)
    tc.compare(lambda M, x, s: x.scatter_add(dim, M.tensor(sidx), s), [arr, src], rng)


@settings(derandomize=True, max_examples=50, deadline=None)
@given(shape=shapes, data=st.data())
def test_hyp_masks_and_diagonals(shape, data):
    rng = np.random.default_rng(len(shape))
    mask = rng.random(shape) > 0.5
    arr = tc.arr(rng, shape, np.float32)
    tc.compare(lambda M, x: x.masked_fill(M.tensor(mask), 1.5), [arr], rng)
    tc.compare(lambda M, x: x.masked_select(M.tensor(mask)), [arr], rng)
    tc.compare(lambda M, x: x[M.tensor(mask)], [arr], rng)
    if len(shape) >= 2:
        nd = len(shape)
        d1 = data.draw(st.integers(-nd, nd - 1))
        d2 = data.draw(st.integers(-nd, nd - 1).filter(lambda d: d % nd != d1 % nd))
        off = data.draw(st.integers(-4, 4))
        tc.compare(lambda M, x: x.diagonal(off, d1, d2), [arr], rng)
        tc.compare(lambda M, x: x.tril(off), [arr], rng)
        tc.compare(lambda M, x: x.triu(off), [arr], rng)


# -- scatter_reduce, masked_scatter, index_copy, tril/triu_indices ------------------------------


def _same_error(fn):
    """``fn(lib)`` raises the same exception type and message in ember and torch."""
    errors = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            fn(lib)
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]


_X = lambda M: M.zeros(2, 3)  # noqa: E731
_I = lambda M: M.tensor([[0, 1], [2, 2]])  # noqa: E731


@pytest.mark.parametrize(
    "call",
    [
        lambda M: _X(M).scatter_reduce(1, _I(M), M.ones(2, 2), "foo"),
        lambda M: _X(M).scatter_reduce(1, _I(M), M.ones(2, 2), "add"),
        lambda M: _X(M).scatter_reduce(1, _I(M).float(), M.ones(2, 2), "sum"),
        lambda M: _X(M).scatter_reduce(1, _I(M), M.ones(2, 2, dtype=M.float64), "sum"),
        lambda M: _X(M).scatter_reduce(1, M.tensor([[0, 5]]), M.ones(2, 2), "sum"),
        lambda M: _X(M).scatter_reduce(1, M.tensor([0, 1]), M.ones(2, 2), "sum"),
        lambda M: _X(M).scatter_reduce(1, M.tensor([[0, 1, 0, 0]]), M.ones(2, 2), "sum"),
        lambda M: _X(M).masked_scatter(M.tensor([True, False, True]), M.ones(3)),
        lambda M: _X(M).masked_scatter(M.tensor([1, 0, 1]), M.ones(6)),
        lambda M: _X(M).masked_scatter(M.tensor([True, False, True]), M.ones(6).double()),
        lambda M: _X(M).masked_scatter(M.ones(4, dtype=M.bool), M.ones(8)),
        lambda M: M.zeros(3).masked_scatter_(M.ones(2, 3, dtype=M.bool), M.ones(6)),
        lambda M: M.zeros(2, 3).masked_scatter_(M.ones(4, dtype=M.bool), M.ones(6)),
        lambda M: M.zeros(2, 3).masked_scatter_(M.tensor([1, 0, 1]), M.ones(6)),
        lambda M: M.zeros(2, 3).masked_scatter_(M.tensor([True, False, True]), M.ones(3)),
        lambda M: _X(M).index_copy(0, M.tensor([1, 0]), M.ones(2, 4)),
        lambda M: _X(M).index_copy(0, M.tensor([1, 0]), M.ones(3, 3)),
        lambda M: _X(M).index_copy(0, M.tensor([1, 0], dtype=M.int32), M.ones(2, 3)),
        lambda M: _X(M).index_copy(0, M.tensor([1.0, 0.0]), M.ones(2, 3)),
        lambda M: _X(M).index_copy(0, M.tensor([1, 0]), M.ones(2, 3).double()),
        lambda M: _X(M).index_copy(0, M.tensor([[1, 0]]), M.ones(2, 3)),
        lambda M: _X(M).index_copy(0, M.tensor([5, 0]), M.ones(2, 3)),
        lambda M: _X(M).index_copy(2, M.tensor([1, 0]), M.ones(2, 3)),
        lambda M: _X(M).index_copy(0, M.tensor(1), M.ones(3)),
        lambda M: M.tril_indices(3, 3, dtype=M.float32),
        lambda M: M.triu_indices(3, 3, dtype=M.bool),
        lambda M: M.tril_indices(3, 3, dtype=M.int16),
        lambda M: M.tril_indices(-1, 3),
        lambda M: M.triu_indices(3, -2),
        lambda M: M.tril_indices(3.0, 3),
        lambda M: M.tril_indices(3, 3, requires_grad=True),
        lambda M: M.tril_indices(3, 3, 0, M.int32),
    ],
)
def test_new_indexing_ops_errors_match_torch(call):
    _same_error(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda M: M.tensor([1, 2, 3]).scatter_reduce(0, M.tensor([0, 0]), M.tensor([4, 6]), "mean"),
        lambda M: M.tensor([1, 2, 3]).scatter_reduce(
            0, M.tensor([0, 0]), M.tensor([4, 6]), "mean", include_self=False
        ),
        lambda M: M.tensor([1, 2, 3]).scatter_reduce(
            0, M.tensor([2, 2]), M.tensor([4, 9]), "amin", include_self=False
        ),
        lambda M: M.tensor([1, 2, 3]).scatter_reduce(
            0, M.tensor([1, 1]), M.tensor([-4, -9]), "amax", include_self=False
        ),
        lambda M: M.tensor([1.0, 5.0, 3.0]).scatter_reduce(
            0, M.tensor([0, 1]), M.tensor([3.0, 2.0]), "max"
        ),
        lambda M: M.tensor([1.0, 5.0, 3.0]).scatter_reduce(
            0, M.tensor([0, 1]), M.tensor([3.0, 2.0]), "min"
        ),
        lambda M: M.tensor([2.0, 5.0]).scatter_reduce(
            0, M.tensor([0, 0, 1]), M.tensor([3.0, 2.0, 7.0]), "prod", include_self=False
        ),
        lambda M: M.tensor([True, False]).scatter_reduce(
            0, M.tensor([1]), M.tensor([True]), "amax"
        ),
        lambda M: M.tensor(2.0).scatter_reduce(0, M.tensor(0), M.tensor(5.0), "sum"),
        lambda M: M.zeros(2, 3).masked_scatter(M.tensor([True, False, True]), M.arange(8.0)),
        lambda M: M.zeros(3, dtype=M.int64).masked_scatter(
            M.tensor([[True, False, True], [False, False, True]]), M.tensor([[1, 2], [3, 4]])
        ),
        lambda M: M.zeros(3, 2).index_copy(0, M.tensor([2, 0]), M.ones(2, 2)),
        lambda M: M.zeros(2, 3).masked_scatter_(M.tensor([True, False, True]), M.arange(6.0)),
        lambda M: M.zeros(3, 2).index_copy_(1, M.tensor([1]), M.ones(3, 1)),
        lambda M: M.zeros(3, 2).index_copy(0, M.tensor(1), M.ones(1, 2)),
        lambda M: M.tensor(1.0).index_copy(0, M.tensor([0]), M.tensor([5.0])),
        lambda M: M.tril_indices(3, 4, 1),
        lambda M: M.tril_indices(0, 4),
        lambda M: M.triu_indices(3, 3, -5, dtype=M.int32),
        lambda M: M.triu_indices(3, 3, 7),
        lambda M: M.triu_indices(3, 2, device="cpu", pin_memory=False),
    ],
)
def test_new_indexing_ops_values_and_dtypes_match_torch(call):
    got, want = call(ember), call(torch)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_inplace_matches_torch(reduce, include_self):
    rng = np.random.default_rng(1)
    a, s, w = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal((3, 4))
    index = [[0, 2, 2, 1], [2, 0, 2, 1]]
    out = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        src = lib.tensor(s, requires_grad=True)
        y = x * 1
        r = y.scatter_reduce_(0, lib.tensor(index), src, reduce, include_self=include_self)
        assert r is y
        gx, gs = lib.autograd.grad(y, (x, src), lib.tensor(w))
        out.append((y.detach().numpy(), gx.numpy(), gs.numpy(), type(y.grad_fn).__name__))
    for p, q in zip(out[0][:3], out[1][:3]):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-12)
    assert out[0][3] == out[1][3] == "ScatterReduceBackward0"


@pytest.mark.parametrize(
    "src",
    [[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 4.0]],
    ids=["one_zero", "two_zeros_same_slot", "zeros_apart"],
)
def test_scatter_reduce_prod_gradients_with_zeros_match_torch(src):
    a = np.array([1.5, 0.0, -2.0])
    out = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        s = lib.tensor(src, dtype=lib.float64, requires_grad=True)
        y = x.scatter_reduce(0, lib.tensor([0, 0, 1, 2]), s, "prod")
        gx, gs = lib.autograd.grad(y, (x, s), lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        out.append((y.detach().numpy(), gx.numpy(), gs.numpy()))
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("src", [[2.0, 0.5, 3.0, 4.0], [2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0, 4.0]])
def test_scatter_reduce_prod_tangent_is_the_reverse_modes_transpose(src, include_self):
    """torch leaves scatter_reduce(prod)'s tangent undefined; ember's is exact: <u, J v>
    equals <J^T u, v> from the backward torch defines."""
    import ember.autograd.forward_ad as fwAD

    rng = np.random.default_rng(3)
    a, src = np.array([1.5, 0.0, -2.0]), np.array(src)
    v_self, v_src, u = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal(3)
    index = ember.tensor([0, 0, 1, 2])
    with fwAD.dual_level():
        x = fwAD.make_dual(ember.tensor(a), ember.tensor(v_self))
        s = fwAD.make_dual(ember.tensor(src), ember.tensor(v_src))
        y = x.scatter_reduce(0, index, s, "prod", include_self=include_self)
        jv = float((fwAD.unpack_dual(y).tangent.numpy() * u).sum())
    x = ember.tensor(a, requires_grad=True)
    s = ember.tensor(src, requires_grad=True)
    y = x.scatter_reduce(0, index, s, "prod", include_self=include_self)
    gx, gs = ember.autograd.grad(y, (x, s), ember.tensor(u))
    assert jv == pytest.approx(float(gx.numpy() @ v_self + gs.numpy() @ v_src), rel=1e-12)


def test_masked_scatter_and_index_copy_in_place_match_torch():
    rng = np.random.default_rng(2)
    a, s, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 2)), rng.standard_normal((3, 4))
    out = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        src = lib.tensor(s, requires_grad=True)
        y = x * 1
        y[:, 1:3].index_copy_(1, lib.tensor([1, 0]), src)  # through a view: CopySlices
        m = lib.tensor([[True, False, False, True]] * 3)
        y.masked_scatter_(m, src * 2)
        gx, gs = lib.autograd.grad(y, (x, src), lib.tensor(w))
        out.append((y.detach().numpy(), gx.numpy(), gs.numpy(), type(y.grad_fn).__name__))
    for p, q in zip(out[0][:3], out[1][:3]):
        np.testing.assert_allclose(p, q, rtol=1e-12)
    assert out[0][3] == out[1][3]


def test_tril_triu_indices_match_numpy_and_take_no_gradient():
    for r, c, k in [(4, 4, 0), (3, 5, 1), (5, 3, -2), (1, 1, 0)]:
        t = ember.tril_indices(r, c, k)
        assert t.dtype == ember.int64 and not t.requires_grad
        np.testing.assert_array_equal(t.numpy(), np.stack(np.tril_indices(r, k, c)))
        np.testing.assert_array_equal(
            ember.triu_indices(r, c, k).numpy(), np.stack(np.triu_indices(r, k, c))
        )
