"""Reductions: values, dtypes, grad_fn names, gradients (finite differences and torch), errors."""

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember.ops.reduction import return_types
from numgrad import numgrad

torch = pytest.importorskip("torch")

INF = math.inf


# -- helpers ------------------------------------------------------------------------------


def _numgrad(f, x, w, eps=1e-6):
    """Central differences of ``sum(f(x) * w)`` w.r.t. the float64 array ``x``."""
    return numgrad(f, [x], [w], eps)[0]


def _out_array(y):
    return y.detach().numpy()


def _analytic(f, x, w):
    t = ember.tensor(np.array(x, dtype=np.float64), requires_grad=True)
    y = f(t)
    y.backward(ember.tensor(np.asarray(w, dtype=np.float64)))
    return t.grad.numpy(), y


def _check_grad(f, x, rtol=1e-5, atol=1e-6):
    rng = np.random.default_rng(123)
    y = f(ember.tensor(np.array(x, dtype=np.float64)))
    w = rng.uniform(0.5, 1.5, size=y.shape)
    ga, _ = _analytic(f, x, w)
    gn = _numgrad(f, x, w)
    np.testing.assert_allclose(ga, gn, rtol=rtol, atol=atol)


def _distinct(shape, seed=0, lo=-2.0, hi=2.0):
    """Random values with no ties and none near zero (kinks of max, abs, ...)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    vals = rng.permutation(n) + rng.uniform(0.2, 0.8, size=n)
    vals = lo + (hi - lo) * vals / max(n, 1)
    vals = np.where(np.abs(vals) < 0.05, vals + 0.1, vals)
    return vals.reshape(shape)


def _t(lib, data, dtype=None, requires_grad=False):
    arr = np.asarray(data)
    if lib is torch:
        t = torch.tensor(arr)
        if dtype is not None:
            t = t.to(getattr(torch, dtype))
    else:
        t = ember.tensor(arr)
        if dtype is not None:
            t = ember.tensor(arr.astype(dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _outputs(r):
    return list(r) if isinstance(r, tuple) else [r]


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _compare_with_torch(fn, data, dtype="float64", rtol=1e-6, atol=1e-7, grad=True):
    """Run ``fn(lib, x)`` with ember and torch; compare values, dtypes, names and grads."""
    floating = dtype.startswith("float")
    rg = grad and floating
    ex = _t(ember, data, dtype, requires_grad=rg)
    tx = _t(torch, data, dtype, requires_grad=rg)
    eo, to = _outputs(fn(ember, ex)), _outputs(fn(torch, tx))
    assert len(eo) == len(to)
    for e, t in zip(eo, to):
        assert tuple(e.shape) == tuple(t.shape)
        assert _dtype_name(e) == _dtype_name(t)
        np.testing.assert_allclose(
            e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True
        )
        tname = None if t.grad_fn is None else t.grad_fn.name()
        ename = None if e.grad_fn is None else e.grad_fn.name()
        assert ename == tname
    if not rg:
        return
    rng = np.random.default_rng(7)
    pairs = [(e, t) for e, t in zip(eo, to) if t.grad_fn is not None]
    if not pairs:
        return
    ws = [rng.uniform(0.5, 1.5, size=tuple(t.shape)) for _, t in pairs]
    ember.autograd.backward(
        [e for e, _ in pairs],
        [ember.tensor(w.astype(_dtype_name(e))) for (e, _), w in zip(pairs, ws)],
    )
    torch.autograd.backward(
        [t for _, t in pairs], [torch.tensor(w).to(t.dtype) for (_, t), w in zip(pairs, ws)]
    )
    if tx.grad is None:
        assert ex.grad is None
        return
    assert ex.grad is not None
    assert _dtype_name(ex.grad) == _dtype_name(tx.grad)
    np.testing.assert_allclose(
        ex.grad.numpy(), tx.grad.numpy(), rtol=rtol * 10, atol=atol * 10, equal_nan=True
    )


# -- finite-difference gradient checks (float64) --------------------------------------------

SHAPES = [(), (4,), (2, 3), (2, 3, 2)]


def _dims_for(ndim):
    if ndim == 0:
        return [None, 0, -1]
    out = [None, 0, -1]
    if ndim >= 2:
        out += [(0, -1), [1]]
    return out


def _reducer_cases():
    cases = []
    for shape in SHAPES:
        for dim in _dims_for(len(shape)):
            for keepdim in (False, True):
                cases.append((shape, dim, keepdim))
    return cases


def _id(v):
    return repr(v).replace(" ", "")


MULTI_DIM_OPS = {
    "sum": lambda x, d, k: x.sum(d, k) if d is not None else x.sum(),
    "sum_dimNone": lambda x, d, k: ember.sum(x, dim=d, keepdim=k),
    "mean": lambda x, d, k: x.mean(d, k) if d is not None else x.mean(),
    "nansum": lambda x, d, k: x.nansum(d, k),
    "amax": lambda x, d, k: x.amax(() if d is None else d, k),
    "amin": lambda x, d, k: ember.amin(x, () if d is None else d, keepdim=k),
    "std": lambda x, d, k: x.std(d, keepdim=k),
    "std_c0": lambda x, d, k: x.std(d, keepdim=k, correction=0),
    "var": lambda x, d, k: x.var(d, keepdim=k),
    "var_c2": lambda x, d, k: ember.var(x, dim=d, keepdim=k, correction=0.5),
    "norm": lambda x, d, k: x.norm(dim=d, keepdim=k),
    "norm1": lambda x, d, k: x.norm(1, d, k),
    "norm3": lambda x, d, k: x.norm(3, d, k),
    "norm1.5": lambda x, d, k: x.norm(1.5, d, k),
    "norm0.5": lambda x, d, k: x.norm(0.5, d, k),
    "norm-1": lambda x, d, k: x.norm(-1, d, k),
    "norminf": lambda x, d, k: x.norm(INF, d, k),
    "norm-inf": lambda x, d, k: x.norm(-INF, d, k),
    "logsumexp": lambda x, d, k: x.logsumexp(() if d is None else d, k),
}


def _slice_size(shape, dim):
    if dim is None or not shape or (isinstance(dim, list) and not dim):
        return int(np.prod(shape, dtype=np.int64))
    return int(np.prod([shape[d] for d in np.atleast_1d(dim)], dtype=np.int64))


@pytest.mark.parametrize("name", sorted(MULTI_DIM_OPS))
@pytest.mark.parametrize("shape,dim,keepdim", _reducer_cases(), ids=_id)
def test_gradcheck_multi_dim(name, shape, dim, keepdim):
    if name in ("std", "var") and _slice_size(shape, dim) <= 1:
        pytest.skip("one element per slice: the unbiased estimate is NaN")
    if name == "logsumexp" and dim is None:
        dim = list(range(len(shape)))
    fn = MULTI_DIM_OPS[name]
    _check_grad(lambda t: fn(t, dim, keepdim), _distinct(shape, seed=len(shape)))


SINGLE_DIM_OPS = {
    "prod": lambda x, d, k: x.prod() if d is None else x.prod(d, k),
    "max": lambda x, d, k: x.max() if d is None else x.max(d, k).values,
    "min": lambda x, d, k: x.min() if d is None else x.min(dim=d, keepdim=k)[0],
    "median": lambda x, d, k: x.median() if d is None else x.median(d, k).values,
    "aminmax": lambda x, d, k: ember.aminmax(x, dim=d, keepdim=k),
    "softmax": lambda x, d, k: x.softmax(0 if d is None else d),
    "log_softmax": lambda x, d, k: ember.log_softmax(x, dim=-1 if d is None else d),
    "cumsum": lambda x, d, k: x.cumsum(0 if d is None else d),
    "cumprod": lambda x, d, k: x.cumprod(0 if d is None else d),
    "var_mean": lambda x, d, k: ember.var_mean(x, d, keepdim=k),
    "std_mean": lambda x, d, k: ember.std_mean(x, d, keepdim=k, correction=0),
}


def _single_cases():
    cases = []
    for shape in SHAPES:
        for dim in [None, 0, -1]:
            for keepdim in (False, True):
                cases.append((shape, dim, keepdim))
    return cases


@pytest.mark.parametrize("name", sorted(SINGLE_DIM_OPS))
@pytest.mark.parametrize("shape,dim,keepdim", _single_cases(), ids=_id)
def test_gradcheck_single_dim(name, shape, dim, keepdim):
    fn = SINGLE_DIM_OPS[name]
    x = _distinct(shape, seed=3 + len(shape))
    if name == "var_mean" and _slice_size(shape, dim) <= 1:
        pytest.skip("one element per slice: the unbiased estimate is NaN")
    f = lambda t: fn(t, dim, keepdim)  # noqa: E731
    if name in ("aminmax", "var_mean", "std_mean"):
        _check_pair_grad(f, x)
    else:
        _check_grad(f, x)


def _check_pair_grad(f, x):
    """Gradient of ``sum(w0 * out0) + sum(w1 * out1)`` for a two-output op."""
    rng = np.random.default_rng(5)
    outs = f(ember.tensor(x))
    ws = [rng.uniform(0.5, 1.5, size=o.shape) for o in outs]

    def scalar(arr):
        o = f(ember.tensor(arr))
        return sum(np.sum(oi.numpy() * w) for oi, w in zip(o, ws))

    t = ember.tensor(np.array(x), requires_grad=True)
    o = f(t)
    ember.autograd.backward(list(o), [ember.tensor(w) for w in ws])
    num = np.zeros_like(x)
    flat, nflat = np.array(x).reshape(-1), num.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + 1e-6
        hi = scalar(flat.reshape(np.shape(x)))
        flat[i] = old - 1e-6
        lo = scalar(flat.reshape(np.shape(x)))
        flat[i] = old
        nflat[i] = (hi - lo) / 2e-6
    np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(5,), (3, 4)])
def test_gradcheck_prod_and_cumprod_with_zeros(shape):
    for zeros in ([1], [0, 2]):
        x = _distinct(shape, seed=9)
        flat = x.reshape(-1)
        flat[zeros] = 0.0
        _check_grad(lambda t: t.prod(), x)
        _check_grad(lambda t: t.prod(0), x)
        _check_grad(lambda t: t.prod(-1, keepdim=True), x)
        _check_grad(lambda t: t.cumprod(0), x)
        _check_grad(lambda t: t.cumprod(-1), x)


def test_gradcheck_sum_dtype_and_float32_input():
    _check_grad(lambda t: t.sum(dtype=ember.float64), _distinct((2, 3)))
    x = ember.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    y = x.sum(0, dtype=ember.float64)
    assert y.dtype == ember.float64
    y.backward(ember.ones(3, dtype=ember.float64))
    assert x.grad.dtype == ember.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3), np.float32))


# -- comparisons with torch ---------------------------------------------------------------

A = [[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]]
TIES = [[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]]
ZEROS = [[1.0, 0.0, 3.0], [0.0, 2.0, 0.0]]
ONE_ZERO = [[1.5, 0.0, 3.0], [2.0, 2.0, -1.0]]
NANS = [[1.0, float("nan"), 3.0], [float("nan"), float("nan"), -1.0]]
I = [[1, 2, 0], [3, -4, 5]]
B = [[True, False, True], [True, True, True]]

TORCH_CASES = [
    ("sum", lambda m, x: x.sum(), A, "float32"),
    ("sum0", lambda m, x: x.sum(0), A, "float32"),
    ("sum_none", lambda m, x: x.sum(dim=None), A, "float64"),
    ("sum_tuple_keep", lambda m, x: m.sum(x, (0, 1), True), A, "float64"),
    ("sum_list_empty", lambda m, x: x.sum([]), A, "float64"),
    ("sum_axis", lambda m, x: x.sum(axis=1), A, "float64"),
    ("sum_keepdims_alias", lambda m, x: x.sum(0, keepdims=True), A, "float64"),
    ("sum_int", lambda m, x: x.sum(1), I, "int32"),
    ("sum_bool", lambda m, x: x.sum(), B, "bool"),
    ("sum_dtype", lambda m, x: x.sum(dtype=m.float64), A, "float32"),
    ("sum_half", lambda m, x: x.sum(1), A, "float16"),
    ("sum_0d", lambda m, x: x.sum(0, keepdim=True), 2.5, "float64"),
    ("nansum", lambda m, x: x.nansum(1), NANS, "float64"),
    ("nansum_int", lambda m, x: m.nansum(x), I, "int64"),
    ("mean", lambda m, x: x.mean(), A, "float32"),
    ("mean_dim", lambda m, x: x.mean(-1, True), A, "float64"),
    ("mean_none", lambda m, x: x.mean(dim=None), A, "float64"),
    ("mean_int_dtype", lambda m, x: x.mean(dtype=m.float32), I, "int64"),
    ("mean_half", lambda m, x: x.mean(0), A, "float16"),
    ("prod", lambda m, x: x.prod(), A, "float64"),
    ("prod_dim", lambda m, x: x.prod(1, keepdim=True), A, "float64"),
    ("prod_ties_zero", lambda m, x: x.prod(), ONE_ZERO, "float64"),
    ("prod_two_zeros", lambda m, x: x.prod(), ZEROS, "float64"),
    ("prod_dim_zeros", lambda m, x: x.prod(0), ZEROS, "float64"),
    ("prod_dim_zeros1", lambda m, x: x.prod(1), ZEROS, "float64"),
    ("prod_int", lambda m, x: x.prod(0), I, "int32"),
    ("prod_bool", lambda m, x: x.prod(), B, "bool"),
    ("prod_dtype", lambda m, x: x.prod(dtype=m.float64), A, "float32"),
    ("max", lambda m, x: x.max(), A, "float32"),
    ("max_ties", lambda m, x: x.max(), TIES, "float64"),
    ("max_nan", lambda m, x: x.max(), NANS, "float64"),
    ("max_dim", lambda m, x: x.max(1), A, "float64"),
    ("max_dim_ties", lambda m, x: x.max(0, True), TIES, "float64"),
    ("max_dim_nan", lambda m, x: m.max(x, dim=1), NANS, "float64"),
    ("max_int", lambda m, x: x.max(0), I, "int64"),
    ("max_other", lambda m, x: m.max(x, m.zeros(3, dtype=m.float64)), TIES, "float64"),
    ("max_other_kw", lambda m, x: x.max(other=m.ones(3, dtype=m.float64)), A, "float64"),
    ("min", lambda m, x: x.min(), TIES, "float64"),
    ("min_dim", lambda m, x: x.min(dim=-1), TIES, "float64"),
    ("min_0d", lambda m, x: x.min(0, keepdim=True), 2.5, "float64"),
    ("amax", lambda m, x: x.amax(), TIES, "float64"),
    ("amax_dim", lambda m, x: x.amax(1), TIES, "float64"),
    ("amax_nan", lambda m, x: x.amax(), NANS, "float64"),
    ("amax_tuple", lambda m, x: m.amax(x, (0, 1), True), TIES, "float32"),
    ("amin_dim", lambda m, x: x.amin(0), TIES, "float64"),
    ("amin_int", lambda m, x: x.amin(1), I, "int64"),
    ("aminmax", lambda m, x: x.aminmax(), TIES, "float64"),
    ("aminmax_dim", lambda m, x: m.aminmax(x, dim=1, keepdim=True), TIES, "float64"),
    ("aminmax_nan", lambda m, x: x.aminmax(), NANS, "float64"),
    ("median", lambda m, x: x.median(), A, "float64"),
    ("median_ties", lambda m, x: x.median(), TIES, "float64"),
    ("median_dim", lambda m, x: x.median(1), A, "float64"),
    ("median_dim_keep", lambda m, x: x.median(0, True), A, "float64"),
    ("median_nan", lambda m, x: x.median(), NANS, "float64"),
    ("median_dim_nan", lambda m, x: x.median(1), NANS, "float64"),
    ("median_int", lambda m, x: x.median(1), I, "int64"),
    ("argmax", lambda m, x: x.argmax(), A, "float64"),
    ("argmax_dim", lambda m, x: x.argmax(1, True), TIES, "float64"),
    ("argmax_keep", lambda m, x: x.argmax(keepdim=True), A, "float64"),
    ("argmax_nan", lambda m, x: x.argmax(1), NANS, "float64"),
    ("argmin", lambda m, x: m.argmin(x, 0), TIES, "float64"),
    ("argmin_0d", lambda m, x: m.argmin(x, 0, True), 2.5, "float64"),
    ("std", lambda m, x: x.std(), A, "float32"),
    ("std_dim", lambda m, x: x.std(1, keepdim=True), A, "float64"),
    ("std_unbiased_pos", lambda m, x: x.std(0, False), A, "float64"),
    ("std_bool_first", lambda m, x: x.std(False), A, "float64"),
    ("std_correction", lambda m, x: m.std(x, dim=(0, 1), correction=2), A, "float64"),
    ("std_const", lambda m, x: x.std(0), [[1.0, 2.0], [1.0, 2.0]], "float64"),
    ("var", lambda m, x: x.var(), A, "float64"),
    ("var_dim", lambda m, x: x.var(0, True, True), A, "float64"),
    ("var_list", lambda m, x: x.var([0, 1]), A, "float64"),
    ("var_mean", lambda m, x: m.var_mean(x, 1), A, "float64"),
    ("var_mean_c0", lambda m, x: m.var_mean(x, correction=0), A, "float64"),
    ("std_mean", lambda m, x: m.std_mean(x, 0, keepdim=True), A, "float64"),
    ("norm", lambda m, x: x.norm(), A, "float32"),
    ("norm_fro_dim", lambda m, x: m.norm(x, "fro", 1), A, "float64"),
    ("norm_1", lambda m, x: x.norm(p=1), ONE_ZERO, "float64"),
    ("norm_inf_ties", lambda m, x: x.norm(p=INF), [[1.0, -3.0, 3.0]], "float64"),
    ("norm_-inf_ties", lambda m, x: x.norm(p=-INF, dim=1), [[1.0, -1.0, 3.0]], "float64"),
    ("norm_0", lambda m, x: x.norm(p=0), ONE_ZERO, "float64"),
    ("norm_3", lambda m, x: x.norm(3, (0, 1), True), A, "float64"),
    ("norm_0.5_zero", lambda m, x: x.norm(0.5), ONE_ZERO, "float64"),
    ("norm_-1_zero", lambda m, x: x.norm(-1), ONE_ZERO, "float64"),
    ("norm_1.5_zero", lambda m, x: x.norm(1.5, 1), ONE_ZERO, "float64"),
    ("norm_2_at_zero", lambda m, x: x.norm(), [0.0, 0.0, 0.0], "float64"),
    ("norm_3_at_zero", lambda m, x: x.norm(3), [0.0, 0.0, 0.0], "float64"),
    ("norm_1.5_at_zero", lambda m, x: x.norm(1.5), [0.0, 0.0, 0.0], "float64"),
    ("norm_inf_at_zero", lambda m, x: x.norm(INF), [0.0, 0.0, 0.0], "float64"),
    ("norm_dtype", lambda m, x: x.norm(2, 0, dtype=m.float64), A, "float32"),
    ("logsumexp", lambda m, x: x.logsumexp(1), A, "float32"),
    ("logsumexp_big", lambda m, x: m.logsumexp(x, (0, 1)), [[1000.0, 1000.0]], "float64"),
    ("logsumexp_-inf", lambda m, x: x.logsumexp(0), [-INF, -INF], "float64"),
    ("logsumexp_int", lambda m, x: x.logsumexp(0), I, "int64"),
    ("softmax", lambda m, x: x.softmax(1), A, "float32"),
    ("softmax_dim0", lambda m, x: m.softmax(x, dim=0), A, "float64"),
    ("softmax_big", lambda m, x: x.softmax(-1), [[1000.0, 0.0, -1000.0]], "float64"),
    ("softmax_dtype", lambda m, x: x.softmax(1, dtype=m.float64), A, "float32"),
    ("softmax_0d", lambda m, x: x.softmax(0), 2.5, "float64"),
    ("log_softmax", lambda m, x: x.log_softmax(0), A, "float64"),
    ("log_softmax_big", lambda m, x: m.log_softmax(x, 1), [[1000.0, 0.0, -1000.0]], "float64"),
    ("log_softmax_int_dtype", lambda m, x: x.log_softmax(1, m.float32), I, "int64"),
    ("cumsum", lambda m, x: x.cumsum(1), A, "float32"),
    ("cumsum_0", lambda m, x: m.cumsum(x, dim=0), A, "float64"),
    ("cumsum_int", lambda m, x: x.cumsum(1), I, "int32"),
    ("cumsum_bool", lambda m, x: x.cumsum(0), B, "bool"),
    ("cumsum_dtype", lambda m, x: x.cumsum(0, dtype=m.float64), A, "float32"),
    ("cumprod", lambda m, x: x.cumprod(1), A, "float64"),
    ("cumprod_zeros", lambda m, x: x.cumprod(1), ZEROS, "float64"),
    ("cumprod_zeros0", lambda m, x: x.cumprod(0), ZEROS, "float64"),
    ("cumprod_int", lambda m, x: x.cumprod(0), I, "int64"),
    ("all", lambda m, x: x.all(), B, "bool"),
    ("all_dim", lambda m, x: x.all(1), B, "bool"),
    ("all_float", lambda m, x: x.all(dim=0, keepdim=True), ZEROS, "float64"),
    ("all_uint8", lambda m, x: x.all(1), [[1, 2], [0, 3]], "uint8"),
    ("any", lambda m, x: m.any(x), B, "bool"),
    ("any_tuple", lambda m, x: x.any((0, 1)), ZEROS, "float64"),
    ("any_uint8", lambda m, x: x.any(0), [[1, 2], [0, 3]], "uint8"),
    ("count_nonzero", lambda m, x: x.count_nonzero(), ZEROS, "float64"),
    ("count_nonzero_dim", lambda m, x: m.count_nonzero(x, 0), ZEROS, "float64"),
    ("count_nonzero_tuple", lambda m, x: x.count_nonzero((0, 1)), I, "int64"),
]


@pytest.mark.parametrize("name,fn,data,dtype", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_matches_torch(name, fn, data, dtype):
    rtol, atol = (1e-6, 1e-7) if dtype != "float16" else (1e-3, 1e-3)
    if dtype == "float32":
        rtol, atol = 1e-5, 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_with_torch(fn, data, dtype, rtol=rtol, atol=atol)


EMPTY_CASES = [
    ("sum", lambda m, x: x.sum()),
    ("sum0", lambda m, x: x.sum(0)),
    ("prod0", lambda m, x: x.prod(0)),
    ("mean", lambda m, x: x.mean()),
    ("std", lambda m, x: x.std()),
    ("var0", lambda m, x: x.var(0)),
    ("median", lambda m, x: x.median()),
    ("median1", lambda m, x: x.median(1)),
    ("max1", lambda m, x: x.max(1)),
    ("amax1", lambda m, x: x.amax(1)),
    ("argmax1", lambda m, x: x.argmax(1)),
    ("aminmax1", lambda m, x: x.aminmax(dim=1)),
    ("logsumexp0", lambda m, x: x.logsumexp(0)),
    ("logsumexp1", lambda m, x: x.logsumexp(1)),
    ("softmax", lambda m, x: x.softmax(0)),
    ("cumsum", lambda m, x: x.cumsum(0)),
    ("cumprod", lambda m, x: x.cumprod(1)),
    ("norm", lambda m, x: x.norm()),
    ("norm_inf1", lambda m, x: x.norm(INF, 1)),
    ("all", lambda m, x: x.all()),
    ("any", lambda m, x: x.any()),
    ("count_nonzero", lambda m, x: x.count_nonzero(0)),
]


@pytest.mark.parametrize("name,fn", EMPTY_CASES, ids=[c[0] for c in EMPTY_CASES])
def test_empty_matches_torch(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_with_torch(fn, np.zeros((0, 3)), "float32", grad=False)


# -- hypothesis: random shapes, dims and keepdim against torch ---------------------------

HYP_OPS = {
    "sum": (lambda x, d, k: x.sum(d, k), "multi"),
    "mean": (lambda x, d, k: x.mean(d, k), "multi"),
    "prod": (lambda x, d, k: x.prod(d, k) if d is not None else x.prod(), "single"),
    "max": (lambda x, d, k: x.max(d, k)[0] if d is not None else x.max(), "single"),
    "amax": (lambda x, d, k: x.amax(() if d is None else d, k), "multi"),
    "std": (lambda x, d, k: x.std(d, keepdim=k), "multi"),
    "var": (lambda x, d, k: x.var(d, keepdim=k, correction=0), "multi"),
    "norm": (lambda x, d, k: x.norm(2, d, k), "multi"),
    "norm3": (lambda x, d, k: x.norm(3, d, k), "multi"),
    "logsumexp": (lambda x, d, k: x.logsumexp(d if d is not None else (), k), "multi"),
    "softmax": (lambda x, d, k: x.softmax(d if d is not None else 0), "single"),
    "log_softmax": (lambda x, d, k: x.log_softmax(d if d is not None else -1), "single"),
    "cumsum": (lambda x, d, k: x.cumsum(d if d is not None else 0), "single"),
    "cumprod": (lambda x, d, k: x.cumprod(d if d is not None else 0), "single"),
}


@st.composite
def _reduction_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=4)))
    name = draw(st.sampled_from(sorted(HYP_OPS)))
    kind = HYP_OPS[name][1]
    ndim = len(shape)
    axis_ids = list(range(-max(ndim, 1), max(ndim, 1)))
    if kind == "single" or ndim == 0:
        dim = draw(st.one_of(st.none(), st.sampled_from(axis_ids)))
    else:
        dim = draw(
            st.one_of(
                st.none(),
                st.sampled_from(axis_ids),
                st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(
                    tuple
                ),
            )
        )
    keepdim = draw(st.booleans())
    seed = draw(st.integers(0, 2**16))
    return name, shape, dim, keepdim, seed


@settings(derandomize=True, max_examples=50, deadline=None)
@given(_reduction_case())
def test_hypothesis_matches_torch(case):
    name, shape, dim, keepdim, seed = case
    fn = HYP_OPS[name][0]
    data = _distinct(shape, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_with_torch(lambda m, x: fn(x, dim, keepdim), data, "float64")


# -- error messages ---------------------------------------------------------------------------


def _same_error(fn, data, dtype=None):
    with pytest.raises(Exception) as te:
        fn(torch, _t(torch, data, dtype))
    with pytest.raises(type(te.value)) as ee:
        fn(ember, _t(ember, data, dtype))
    assert str(ee.value) == str(te.value)


ERROR_CASES = [
    ("mean_long", lambda m, x: x.mean(), I, "int64"),
    ("mean_int_dim", lambda m, x: x.mean(0), I, "int32"),
    ("mean_bool", lambda m, x: m.mean(x), B, "bool"),
    ("mean_dtype_long", lambda m, x: x.mean(dtype=m.int64), A, "float32"),
    ("sum_dim_range", lambda m, x: x.sum(2), A, "float32"),
    ("sum_dim_neg_range", lambda m, x: x.sum(-3), A, "float32"),
    ("sum_dim_repeat", lambda m, x: x.sum((0, 0)), A, "float32"),
    ("max_dim_range", lambda m, x: x.max(2), A, "float32"),
    ("softmax_dim_range", lambda m, x: x.softmax(2), A, "float32"),
    ("cumsum_dim_range", lambda m, x: x.cumsum(-3), A, "float32"),
    ("argmax_dim_range", lambda m, x: x.argmax(5), A, "float32"),
    ("0d_dim_range", lambda m, x: x.sum(1), 2.0, "float32"),
    ("max_empty", lambda m, x: x.max(), np.zeros((0, 3)), "float32"),
    ("min_empty", lambda m, x: x.min(), np.zeros((0, 3)), "float32"),
    ("max_empty_dim", lambda m, x: x.max(0), np.zeros((0, 3)), "float32"),
    ("max_empty_negdim", lambda m, x: x.max(-2), np.zeros((0, 3)), "float32"),
    ("amax_empty", lambda m, x: x.amax(), np.zeros((0, 3)), "float32"),
    ("amax_empty_dims", lambda m, x: x.amax((1, 0)), np.zeros((0, 3)), "float32"),
    ("argmax_empty", lambda m, x: x.argmax(), np.zeros((0, 3)), "float32"),
    ("argmin_empty_dim", lambda m, x: x.argmin(0), np.zeros((0, 3)), "float32"),
    ("median_empty_dim", lambda m, x: x.median(0), np.zeros((0, 3)), "float32"),
    ("aminmax_empty", lambda m, x: x.aminmax(), np.zeros((0, 3)), "float32"),
    ("aminmax_empty_dim", lambda m, x: x.aminmax(dim=0), np.zeros((0, 3)), "float32"),
    ("norm_inf_empty", lambda m, x: x.norm(INF), np.zeros((0, 3)), "float32"),
    ("norm_-inf_empty_dim", lambda m, x: x.norm(-INF, 0), np.zeros((0, 3)), "float32"),
    ("norm_int", lambda m, x: x.norm(), I, "int64"),
    ("norm_bad_order", lambda m, x: x.norm(p="abc"), A, "float32"),
    ("std_int", lambda m, x: x.std(), I, "int64"),
    ("var_int", lambda m, x: x.var(0), I, "int64"),
    ("var_mean_int", lambda m, x: m.var_mean(x), I, "int64"),
    ("std_mean_int", lambda m, x: m.std_mean(x), I, "int64"),
    ("softmax_int", lambda m, x: x.softmax(0), I, "int64"),
    ("log_softmax_int", lambda m, x: x.log_softmax(0), I, "int32"),
    ("softmax_no_dim", lambda m, x: x.softmax(), A, "float32"),
    ("log_softmax_no_dim", lambda m, x: m.log_softmax(x), A, "float32"),
    ("cumsum_no_dim", lambda m, x: x.cumsum(), A, "float32"),
    ("logsumexp_no_dim", lambda m, x: x.logsumexp(), A, "float32"),
    ("argmax_tuple", lambda m, x: x.argmax((0,)), A, "float32"),
    ("softmax_tuple", lambda m, x: x.softmax((0,)), A, "float32"),
    ("aminmax_tuple", lambda m, x: x.aminmax(dim=(0,)), A, "float32"),
    ("logsumexp_none", lambda m, x: x.logsumexp(None), A, "float32"),
    ("argmax_bool", lambda m, x: x.argmax(), B, "bool"),
    ("median_bool", lambda m, x: x.median(0), B, "bool"),
    ("norm_neg_empty", lambda m, x: x.norm(-1.5), np.zeros((0, 3)), "float32"),
    ("softmax_int_lastdim", lambda m, x: x.softmax(-1), I, "int64"),
    ("sum_int_dtype_grad", lambda m, x: x.requires_grad_().sum(0, dtype=m.int32), A, "float32"),
    ("cumsum_long_grad", lambda m, x: x.requires_grad_().cumsum(0, dtype=m.int64), A, "float32"),
    ("prod_bool_grad", lambda m, x: x.requires_grad_().prod(dtype=m.bool), A, "float32"),
]


def test_integer_dtype_without_grad():
    _compare_with_torch(lambda m, x: x.sum(0, dtype=m.int32), A, "float32", grad=False)
    _compare_with_torch(lambda m, x: x.cumprod(1, dtype=m.int64), A, "float64", grad=False)


@pytest.mark.parametrize("name,fn,data,dtype", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_messages_match_torch(name, fn, data, dtype):
    _same_error(fn, data, dtype)


def test_int_only_dims_raise_type_error():
    # torch's wording depends on which overloads it tried; only the type is compared.
    x = ember.tensor(A)
    for fn in [
        lambda: x.prod(None),
        lambda: ember.max(x, (0, 1)),
        lambda: x.min(dim=[0]),
        lambda: x.median(None),
        lambda: x.cumsum(None),
    ]:
        with pytest.raises(TypeError):
            fn()


def test_mean_int_message_text():
    with pytest.raises(RuntimeError) as e:
        ember.tensor([1, 2]).mean()
    assert str(e.value) == (
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        "complex dtype. Got: Long"
    )


def test_std_dof_warning_matches_torch():
    for name, fn in [
        ("std", lambda m, x: x.std()),
        ("var", lambda m, x: x.var(0)),
        ("var_mean", lambda m, x: m.var_mean(x)),
        ("std_mean", lambda m, x: m.std_mean(x, correction=2)),
    ]:
        msgs = []
        for lib in (torch, ember):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn(lib, _t(lib, [1.0], "float32"))
            msgs.append([str(x.message) for x in w if x.category is UserWarning])
        assert msgs[0] == msgs[1], name


def test_std_var_degenerate_gradients_match_torch():
    cases = [
        (lambda m, x: x.std(), [1.0]),
        (lambda m, x: x.var(), [2.0, 2.0]),
        (lambda m, x: x.var(correction=3), [1.0, 3.0]),
        (lambda m, x: x.var(0, correction=2), [[1.0, 3.0], [2.0, 2.0]]),
        (lambda m, x: x.std(0, correction=0), [[1.0, 3.0]]),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, data in cases:
            _compare_with_torch(fn, data, "float64")


# -- return types, methods, misc ----------------------------------------------------------


def test_return_type_repr_matches_torch():
    data = [[1.0, 2.0], [3.0, 0.0]]
    for fn in [
        lambda m, x: x.max(0),
        lambda m, x: x.min(1, keepdim=True),
        lambda m, x: x.median(0),
        lambda m, x: m.aminmax(x),
        lambda m, x: m.aminmax(x, dim=0),
    ]:
        e = fn(ember, _t(ember, data, "float32", requires_grad=True))
        t = fn(torch, _t(torch, data, "float32", requires_grad=True))
        assert repr(e) == repr(t)
        assert str(e) == str(t)
    e = ember.tensor([[1.0, 2.0], [3.0, 0.0]]).max(0)
    assert isinstance(e, tuple) and isinstance(e, return_types.max)
    values, indices = e
    assert values is e.values and indices is e.indices and e[1] is e.indices
    assert type(e).__name__ == "max" and e.n_fields == 2
    assert ember.return_types.aminmax is return_types.aminmax
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is return_types.max
    np.testing.assert_array_equal(back.indices.numpy(), [1, 0])


def test_functions_exported():
    for name in [
        "sum",
        "mean",
        "prod",
        "max",
        "min",
        "amax",
        "amin",
        "std",
        "var",
        "norm",
        "logsumexp",
        "all",
        "any",
        "argmax",
        "argmin",
        "softmax",
        "log_softmax",
        "cumsum",
        "cumprod",
        "aminmax",
        "count_nonzero",
        "nansum",
        "median",
        "var_mean",
        "std_mean",
    ]:
        assert callable(getattr(ember, name)), name


def test_no_grad_and_non_requiring_inputs_record_nothing():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.sum().grad_fn is None and not x.max(0).values.requires_grad
    x.requires_grad_()
    with ember.no_grad():
        assert x.softmax(0).grad_fn is None
        assert x.aminmax().min.grad_fn is None
    r = x.max(1)
    assert r.values.requires_grad and not r.indices.requires_grad
    assert r.indices.grad_fn is None


def test_results_hold_ndarrays_and_keep_float32():
    x = ember.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for y in [
        x.sum(),
        x.mean(),
        x.prod(),
        x.max(),
        x.amax(),
        x.std(),
        x.var(),
        x.norm(),
        x.logsumexp((0, 1)),
        x.median(),
        x.nansum(),
        x.argmax(),
        x.all(),
        x.count_nonzero(),
    ]:
        assert type(y._data) is np.ndarray
    for y in [x.sum(), x.mean(0), x.std(1), x.norm(), x.softmax(1), x.cumsum(0)]:
        assert y.dtype == ember.float32


def test_sum_grad_is_writable_copy():
    x = ember.ones(2, 3, requires_grad=True)
    x.sum().backward()
    x.grad.numpy()[0, 0] = 5.0  # must not alias a read-only broadcast view
    assert x.grad.numpy()[1, 1] == 1.0


def test_max_dim_grad_goes_to_returned_index():
    x = ember.tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    r = x.max(1)
    r.values.backward(ember.ones(1, dtype=ember.float32))
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0, 0.0]])
    assert int(r.indices) == 1


def test_backward_twice_through_max_dim_needs_retain_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.max(0).values
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


# -- higher order: the backward rules are recorded when create_graph=True ------------------

SECOND_ORDER = {
    "sum": lambda m, x: x.sum(1),
    "mean": lambda m, x: x.mean(0, keepdim=True),
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: x.prod(1),
    "max": lambda m, x: x.max(),
    "max_dim": lambda m, x: x.max(1).values,
    "amax": lambda m, x: x.amax(1),
    "median_dim": lambda m, x: x.median(1).values,
    "aminmax": lambda m, x: x.aminmax(dim=1).min * x.aminmax(dim=1).max,
    "std": lambda m, x: x.std(0),
    "var": lambda m, x: x.var(1, keepdim=True),
    "std_mean": lambda m, x: m.std_mean(x, 1)[0] * m.std_mean(x, 1)[1],
    "norm": lambda m, x: x.norm(dim=1),
    "norm3": lambda m, x: x.norm(3),
    "logsumexp": lambda m, x: x.logsumexp(1),
    "softmax": lambda m, x: x.softmax(1),
    "log_softmax": lambda m, x: x.log_softmax(0),
    "cumsum": lambda m, x: x.cumsum(1),
    "cumprod": lambda m, x: x.cumprod(1),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_matches_torch(name):
    data = np.array([[1.0, 2.0, -0.7], [3.0, 0.5, 1.2]])
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        y = SECOND_ORDER[name](lib, x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        grads.append(gg.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-8)


def test_numpy_reductions_dispatch_to_tensor_methods():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = np.sum(x)
    assert isinstance(s, ember.Tensor) and s.grad_fn.name() == "SumBackward0"
    assert float(np.max(x)) == 4.0 and float(np.mean(x)) == 2.5
