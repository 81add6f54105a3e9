"""Reductions: values, dtypes, grad_fn names, gradients (finite differences and torch), errors."""

import importlib
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
from ember._aten.reduction import return_types
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


def _compare_with_torch(
    fn, data, dtype="float64", rtol=1e-6, atol=1e-7, grad=True, undefined_grad=None
):
    """Run ``fn(lib, x)`` with ember and torch; compare values, dtypes, names and grads.

    ``undefined_grad`` marks input entries where the derivative does not exist (True: all
    of them, or a boolean mask): their gradient is still computed but not compared, since
    torch's value there is an arbitrary choice, not a reference."""
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
    assert tuple(ex.grad.shape) == tuple(tx.grad.shape)
    keep = np.ones(tuple(tx.grad.shape), bool)
    if undefined_grad is not None:
        keep &= ~np.broadcast_to(np.asarray(undefined_grad, bool), keep.shape)
    np.testing.assert_allclose(
        ex.grad.numpy()[keep], tx.grad.numpy()[keep], rtol=rtol * 10, atol=atol * 10, equal_nan=True
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


# With one element per slice the unbiased (correction=1) estimate is NaN: no gradient to check.
_UNBIASED = ("std", "var", "var_mean")


def _multi_dim_cases():
    return [
        pytest.param(name, shape, dim, keepdim, id=f"{name}-{_id(shape)}-{_id(dim)}-{keepdim}")
        for name in sorted(MULTI_DIM_OPS)
        for shape, dim, keepdim in _reducer_cases()
        if not (name in _UNBIASED and _slice_size(shape, dim) <= 1)
    ]


@pytest.mark.parametrize("name,shape,dim,keepdim", _multi_dim_cases())
def test_gradcheck_multi_dim(name, shape, dim, keepdim):
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


def _single_dim_cases():
    return [
        pytest.param(name, shape, dim, keepdim, id=f"{name}-{_id(shape)}-{_id(dim)}-{keepdim}")
        for name in sorted(SINGLE_DIM_OPS)
        for shape, dim, keepdim in _single_cases()
        if not (name in _UNBIASED and _slice_size(shape, dim) <= 1)
    ]


@pytest.mark.parametrize("name,shape,dim,keepdim", _single_dim_cases())
def test_gradcheck_single_dim(name, shape, dim, keepdim):
    fn = SINGLE_DIM_OPS[name]
    x = _distinct(shape, seed=3 + len(shape))
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
# One NaN per row: which of two NaNs is "the" maximum or median is not defined (torch
# documents first-index tie-breaking for max/argmax over ordered values only, and no rule at
# all for median(dim)), so the ops returning an index get an unambiguous row.
NANS_ONE = [[1.0, float("nan"), 3.0], [float("nan"), 2.0, -1.0]]
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
    ("max_dim_nan", lambda m, x: m.max(x, dim=1), NANS_ONE, "float64"),
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
    ("median_dim_nan", lambda m, x: x.median(1), NANS_ONE, "float64"),
    ("median_int", lambda m, x: x.median(1), I, "int64"),
    ("argmax", lambda m, x: x.argmax(), A, "float64"),
    ("argmax_dim", lambda m, x: x.argmax(1, True), TIES, "float64"),
    ("argmax_keep", lambda m, x: x.argmax(keepdim=True), A, "float64"),
    ("argmax_nan", lambda m, x: x.argmax(1), NANS_ONE, "float64"),
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

# Gradients at points where the derivative does not exist are not compared with torch
# (values, dtypes and grad_fn names still are): torch's autograd notes call the gradient
# at NaN inputs arbitrary (max() shares it among the NaNs, amax() returns NaN everywhere);
# logsumexp of all -inf has a direction-dependent limit (torch: 0/0); |t|**0.5 has
# infinite one-sided slopes of opposite signs at 0.
# Kept on purpose, because torch documents the rule and ember implements it: ties of
# max()/min()/amax/amin/aminmax and the inf/-inf norms (shared evenly, as amax/amin are
# documented), max/min/argmax over a dim (first index), median() (documented deterministic,
# the even share), and the convex kinks (p-norms and std at zero spread, |x| at 0: the
# minimum-norm subgradient 0 of the autograd notes). prod/cumprod at zeros are polynomials.
UNDEFINED_GRAD = {
    "max_nan": True,
    "amax_nan": True,
    "aminmax_nan": True,
    "median_nan": True,
    "logsumexp_-inf": True,
    "norm_0.5_zero": np.asarray(ONE_ZERO) == 0,
}


def _tolerances(fn, data, dtype):
    """(rtol, atol) for the least precise dtype among the input and the outputs (e.g.
    ``log_softmax(dtype=float32)`` of an int64 tensor is a float32 result)."""
    names = {dtype} | {_dtype_name(o) for o in _outputs(fn(ember, _t(ember, data, dtype)))}
    if "float16" in names:
        return 1e-3, 1e-3
    if "float32" in names:
        return 1e-5, 1e-6
    return 1e-6, 1e-7


@pytest.mark.parametrize("name,fn,data,dtype", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_matches_torch(name, fn, data, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rtol, atol = _tolerances(fn, data, dtype)
        _compare_with_torch(
            fn, data, dtype, rtol=rtol, atol=atol, undefined_grad=UNDEFINED_GRAD.get(name)
        )


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
    # The unbiased std of one element is 0/0: its value (NaN) is compared, its gradient is not
    # defined (torch: NaN, arbitrary by its autograd notes).
    undefined = name == "std" and _slice_size(shape, dim) <= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_with_torch(
            lambda m, x: fn(x, dim, keepdim), data, "float64", undefined_grad=undefined or None
        )


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
    # (fn, data, gradient defined?). Where the divisor max(0, N - correction) is 0 the value
    # is NaN or inf (compared: torch documents that divisor) and the derivative does not
    # exist, so torch's NaN/inf gradient is not a reference. var at zero spread is smooth
    # (gradient 0); std there is a convex kink whose minimum-norm subgradient is 0.
    cases = [
        (lambda m, x: x.std(), [1.0], False),
        (lambda m, x: x.var(), [2.0, 2.0], True),
        (lambda m, x: x.var(correction=3), [1.0, 3.0], False),
        (lambda m, x: x.var(0, correction=2), [[1.0, 3.0], [2.0, 2.0]], False),
        (lambda m, x: x.std(0, correction=0), [[1.0, 3.0]], True),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, data, defined in cases:
            _compare_with_torch(fn, data, "float64", undefined_grad=None if defined else True)


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


# -- forward mode against torch ------------------------------------------------------------

# Distinct values (no ties where max/min/median pick one element), with variants: 0-d,
# keepdim, several dims, dtype=, zeros for prod/cumprod, NaN for nansum, ties for amax
# (documented: the tangent is the mean over the tied elements).
D = _distinct((3, 4), seed=11)
D3 = _distinct((2, 3, 4), seed=12)
ONE_ZERO_ROW = np.array([[1.5, 0.0, -2.0, 0.7], [0.3, -1.1, 2.2, 1.4]])
AMAX_TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
WITH_NAN = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, -1.0]])

JVP_CASES = [
    ("sum", lambda m, x: x.sum(), D),
    ("sum_dims_keepdim", lambda m, x: x.sum((0, 2), keepdim=True), D3),
    ("sum_dtype", lambda m, x: x.float().sum(1, dtype=m.float64), D),
    ("sum_0d", lambda m, x: x.sum(), np.array(1.5)),
    ("nansum_nan", lambda m, x: x.nansum(1), WITH_NAN),
    ("mean", lambda m, x: x.mean(), D),
    ("mean_dims", lambda m, x: x.mean((-1, 0)), D3),
    ("prod", lambda m, x: x.prod(), D),
    ("prod_dim_keepdim", lambda m, x: x.prod(1, keepdim=True), D),
    ("prod_zero", lambda m, x: x.prod(), ONE_ZERO_ROW),
    ("prod_dim_zero", lambda m, x: x.prod(1), ONE_ZERO_ROW),
    ("prod_0d", lambda m, x: x.prod(0), np.array(-2.0)),
    ("max", lambda m, x: x.max(), D),
    ("min_dim", lambda m, x: x.min(0).values, D),
    ("max_dim_keepdim", lambda m, x: x.max(-1, keepdim=True).values, D3),
    ("max_dim_0d", lambda m, x: x.max(0).values, np.array(0.25)),
    ("median", lambda m, x: x.median(), D),
    ("median_dim", lambda m, x: x.median(0, keepdim=True).values, D),
    ("amax_ties", lambda m, x: x.amax(1), AMAX_TIES),
    ("amin_dims", lambda m, x: x.amin((0, 2)), D3),
    ("aminmax", lambda m, x: tuple(x.aminmax(dim=0)), D),
    ("aminmax_all", lambda m, x: tuple(x.aminmax()), D),
    ("std", lambda m, x: x.std(), D),
    ("std_dims_keepdim", lambda m, x: x.std((0, 2), keepdim=True, correction=0), D3),
    ("var", lambda m, x: x.var(1), D),
    ("var_correction", lambda m, x: x.var(0, correction=2), D),
    ("var_mean", lambda m, x: m.var_mean(x, (0, 1)), D3),
    ("std_mean", lambda m, x: m.std_mean(x, 1, keepdim=True), D),
    ("norm", lambda m, x: x.norm(), D),
    ("norm_p1", lambda m, x: x.norm(1, 0), D),
    ("norm_p0.5", lambda m, x: x.norm(0.5, 1, keepdim=True), D),
    ("norm_p1.5", lambda m, x: x.norm(1.5), D3),
    ("norm_p3", lambda m, x: x.norm(3, (0, 2)), D3),
    ("norm_inf", lambda m, x: x.norm(INF, 1), D),
    ("norm_p0", lambda m, x: x.norm(0), D),
    ("vector_norm_dtype", lambda m, x: m.linalg.vector_norm(x, 2, 1, dtype=m.float64), D),
    ("logsumexp", lambda m, x: x.logsumexp(1), D),
    ("logsumexp_dims_keepdim", lambda m, x: x.logsumexp((0, 2), True), D3),
    ("softmax", lambda m, x: x.softmax(0), D),
    ("softmax_dtype", lambda m, x: x.float().softmax(-1, dtype=m.float64), D3),
    ("softmax_0d", lambda m, x: x.softmax(0), np.array(0.5)),
    ("log_softmax", lambda m, x: x.log_softmax(-1), D3),
    ("log_softmax_0d", lambda m, x: x.log_softmax(0), np.array(0.5)),
    ("cumsum", lambda m, x: x.cumsum(0), D),
    ("cumsum_0d", lambda m, x: x.cumsum(0), np.array(0.5)),
    ("cumprod", lambda m, x: x.cumprod(1), D),
    ("cumprod_zero", lambda m, x: x.cumprod(1), ONE_ZERO_ROW),
    ("cumprod_0d", lambda m, x: x.cumprod(0), np.array(0.5)),
]


def _jvp(lib, fn, data, tangent):
    fw = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
    with fw.dual_level():
        x = fw.make_dual(lib.tensor(data), lib.tensor(tangent))
        outs = _outputs(fn(lib, x))
        res = []
        for o in outs:
            primal, t = fw.unpack_dual(o)
            res.append((primal.detach().numpy(), None if t is None else t.detach().numpy()))
    return res


@pytest.mark.parametrize("name,fn,data", JVP_CASES, ids=[c[0] for c in JVP_CASES])
def test_forward_mode_matches_torch(name, fn, data):
    tangent = np.random.default_rng(8).standard_normal(np.shape(data))
    mine = _jvp(ember, fn, data, tangent)
    theirs = _jvp(torch, fn, data, tangent)
    assert len(mine) == len(theirs)
    for (p, t), (tp, tt) in zip(mine, theirs):
        np.testing.assert_allclose(p, tp, rtol=1e-6, atol=1e-7, equal_nan=True)
        assert (t is None) == (tt is None)
        if t is not None:
            assert t.dtype == tt.dtype and t.shape == tt.shape
            np.testing.assert_allclose(t, tt, rtol=1e-6, atol=1e-7, equal_nan=True)


def _tangent_weights(outs):
    rng = np.random.default_rng(10)
    return [rng.standard_normal(np.shape(p)) for p, _ in outs]


# Not checked by central differences in x: amax's tangent jumps at its ties, and a float32
# step (``.float()``) is far coarser than the difference step.
_ROF_CASES = [c for c in JVP_CASES if c[0] not in ("amax_ties", "softmax_dtype", "sum_dtype")]


@pytest.mark.parametrize("name,fn,data", _ROF_CASES, ids=[c[0] for c in _ROF_CASES])
def test_reverse_over_forward_matches_torch(name, fn, data):
    """The tangent is differentiable in the primal and in the input tangent. References
    (torch's own reverse-over-forward fails for several of these ops): the tangent is
    ``J t``, so its gradient in ``t`` is torch's VJP ``J^T w``; its gradient in ``x`` is the
    central difference of torch's tangent."""
    t0 = np.random.default_rng(9).standard_normal(np.shape(data))
    ws = _tangent_weights(_jvp(torch, fn, data, t0))

    fw = importlib.import_module("ember.autograd.forward_ad")
    x = ember.tensor(data, requires_grad=True)
    t = ember.tensor(t0, requires_grad=True)
    with fw.dual_level():
        outs = _outputs(fn(ember, fw.make_dual(x, t)))
        total = _b_sum(
            (fw.unpack_dual(o).tangent * ember.tensor(w)).sum()
            for o, w in zip(outs, ws)
            if fw.unpack_dual(o).tangent is not None
        )
        if total.requires_grad:
            grads = ember.autograd.grad(total, (x, t), allow_unused=True)
        else:  # a constant tangent (the 0-"norm")
            grads = (None, None)
    gx, gt = [np.zeros(np.shape(data)) if g is None else g.detach().numpy() for g in grads]

    xt = torch.tensor(data, requires_grad=True)
    touts = [o for o in _outputs(fn(torch, xt)) if o.requires_grad]
    tw = [torch.tensor(w) for w, o in zip(ws, _outputs(fn(torch, xt))) if o.requires_grad]
    (want_t,) = torch.autograd.grad(touts, xt, tw, allow_unused=True, materialize_grads=True)
    np.testing.assert_allclose(gt, want_t.numpy(), rtol=1e-6, atol=1e-7)

    def tangent_dot(arr):
        return _b_sum(
            float((tt * w).sum())
            for (_, tt), w in zip(_jvp(torch, fn, arr, t0), ws)
            if tt is not None
        )

    want_x = np.zeros(np.shape(data))
    flat, wflat = np.array(data, dtype=np.float64).reshape(-1), want_x.reshape(-1)
    for j in range(flat.size):
        orig = flat[j]
        flat[j] = orig + 1e-6
        hi = tangent_dot(flat.reshape(np.shape(data)))
        flat[j] = orig - 1e-6
        lo = tangent_dot(flat.reshape(np.shape(data)))
        flat[j] = orig
        wflat[j] = (hi - lo) / 2e-6
    want_x = np.nan_to_num(want_x)  # perturbing a NaN input changes nothing
    np.testing.assert_allclose(gx, want_x, rtol=1e-5, atol=1e-6)


def _b_sum(items):
    total = None
    for it in items:
        total = it if total is None else total + it
    return total


# -- higher orders with zeros: the Tensor branch of prod's and cumprod's rules -------------

HIGHER_WITH_ZEROS = {
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: x.prod(1),
    "prod_dim_keepdim": lambda m, x: x.prod(0, keepdim=True),
    "cumprod": lambda m, x: x.cumprod(1),
    "cumprod_dim0": lambda m, x: x.cumprod(0),
}


@pytest.mark.parametrize("name", sorted(HIGHER_WITH_ZEROS))
@pytest.mark.parametrize(
    "data",
    [ONE_ZERO_ROW, np.array([[0.0, 1.5, 0.0, 2.0], [1.2, -0.4, 0.9, 0.0]])],
    ids=["one_zero", "zeros"],
)
def test_third_order_with_zeros_matches_torch(name, data):
    fn = HIGHER_WITH_ZEROS[name]
    res = []
    for lib in (torch, ember):
        x = lib.tensor(data, requires_grad=True)
        y = fn(lib, x)
        w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad((gg * gg).sum(), x)
        res.append([a.detach().numpy() for a in (g, gg, ggg)])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-10)


# -- the graph: saved values and out= ------------------------------------------------------

SAVED_CASES = {
    "sum": lambda m, x: x.sum(),
    "sum_dim": lambda m, x: x.sum(1),
    "nansum": lambda m, x: x.nansum(0),
    "mean": lambda m, x: x.mean(),
    "mean_dim": lambda m, x: x.mean(1),
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: x.prod(1),
    "max": lambda m, x: x.max(),
    "max_dim": lambda m, x: x.max(1).values,
    "min_dim": lambda m, x: x.min(1).values,
    "amax": lambda m, x: x.amax(1),
    "aminmax": lambda m, x: x.aminmax(dim=1).min,
    "median": lambda m, x: x.median(),
    "median_dim": lambda m, x: x.median(1).values,
    "std": lambda m, x: x.std(),
    "var": lambda m, x: x.var(1),
    "var_mean": lambda m, x: m.var_mean(x, 1)[0],
    "std_mean": lambda m, x: m.std_mean(x, 1)[0],
    "norm": lambda m, x: x.norm(p=1, dim=1),
    "logsumexp": lambda m, x: x.logsumexp(1),
    "softmax": lambda m, x: x.softmax(1),
    "log_softmax": lambda m, x: x.log_softmax(1),
    "cumsum": lambda m, x: x.cumsum(1),
    "cumprod": lambda m, x: x.cumprod(1),
}


@pytest.mark.parametrize("name", sorted(SAVED_CASES))
def test_saved_value_names_match_torch(name):
    names = []
    for lib in (torch, ember):
        y = SAVED_CASES[name](lib, lib.tensor(D, requires_grad=True))
        names.append(sorted(a for a in dir(y.grad_fn) if a.startswith("_saved_")))
    assert names[1] == names[0]


def test_saved_values_match_torch():
    for lib in (torch, ember):
        x = lib.tensor(D, requires_grad=True)
        s = x.sum(1, keepdim=True).grad_fn
        assert tuple(s._saved_self_sym_sizes) == (3, 4) and s._saved_keepdim is True
        sm = x.softmax(1).grad_fn
        np.testing.assert_allclose(sm._saved_result.detach().numpy(), x.softmax(1).detach())
        v = x.var(1, correction=2).grad_fn
        assert v._saved_correction == 2 and v._saved_self is x


def test_out_with_grad_names_the_op_like_torch():
    for name, fn in [
        ("sum", lambda m, x, o: m.sum(x, 0, out=o)),
        ("mean", lambda m, x, o: m.mean(x, 0, out=o)),
        ("prod", lambda m, x, o: m.prod(x, 0, out=o)),
        ("cumsum", lambda m, x, o: m.cumsum(x, 0, out=o)),
    ]:
        msgs = []
        for lib in (torch, ember):
            x = lib.tensor(D, requires_grad=True)
            with pytest.raises(RuntimeError) as e:
                fn(lib, x, lib.empty(0, dtype=lib.float64))
            msgs.append(str(e.value))
        assert msgs[1] == msgs[0], name


def test_gradient_ignores_later_changes_to_returned_indices():
    # The indices are saved as they were returned (ember copies them; torch refuses the
    # backward instead): the gradient goes where the op put the values.
    x = ember.tensor(D, requires_grad=True)
    values, indices = x.max(1)
    want = indices.numpy().copy()
    indices.add_(1)
    values.sum().backward()
    expected = np.zeros_like(D)
    expected[np.arange(3), want] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_forward_over_reverse_matches_torch():
    # A backward run on dual tensors reads the saved values (indices, results) of every
    # reduction with their tangents: the Hessian-vector product of a sum of reductions.
    rng = np.random.default_rng(0)
    x0, v0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def f(m, x):
        return (
            (x.max(1).values ** 2).sum()
            + x.aminmax(dim=0).max.pow(3).sum()
            + (x.amin(1) * x.median()).sum()
            + m.std_mean(x, 1)[0].sum() * x.var()
            + x.prod(1).sum()
            + x.cumprod(1).sum()
            + (x.softmax(1) * x.log_softmax(0)).sum()
            + x.logsumexp(1).sum() * x.norm(3)
            + x.nansum(0).pow(2).sum()
        )

    res = []
    for m in (torch, ember):
        fw = importlib.import_module(m.__name__ + ".autograd.forward_ad")
        x = m.tensor(x0, requires_grad=True)
        with fw.dual_level():
            (g,) = m.autograd.grad(f(m, fw.make_dual(x, m.tensor(v0))), x, create_graph=True)
            res.append(fw.unpack_dual(g).tangent.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-9, atol=1e-10)


# -- diff, nanmean, logcumsumexp, quantile, cov, corrcoef, histc, histogram ---------------------

_NAN = float("nan")
_V = [1.0, 2.0, 2.0, 5.0, 3.0, -1.5, 0.25]


def _q(m, values, x):
    return m.tensor(values, dtype=x.dtype)


NEW_VALUE_CASES = [
    ("diff_bool", lambda m, x: m.diff(x), [True, False, False, True], "bool"),
    ("diff_int", lambda m, x: m.diff(x, 2), [1, 5, 2, 9], "int64"),
    ("diff_uint8_wraps", lambda m, x: m.diff(x), [1, 5, 2], "uint8"),
    ("diff_n_above_size", lambda m, x: m.diff(x, n=10), A, "float64"),
    ("diff_n_equal_size", lambda m, x: m.diff(x, 3, 1), A, "float64"),
    ("diff_empty_dim", lambda m, x: m.diff(x, dim=1), np.zeros((3, 0)), "float32"),
    ("diff_n0_any_dim", lambda m, x: m.diff(x, n=0, dim=7), A, "float32"),
    (
        "diff_prepend_int",
        lambda m, x: m.diff(x, 1, 0, m.zeros(1, 3, dtype=m.int64)),
        A,
        "float32",
    ),
    (
        "diff_append_float32",
        lambda m, x: m.diff(x, dim=0, append=m.zeros(2, 3)),
        A,
        "float64",
    ),
    ("diff_n0_prepend", lambda m, x: m.diff(x, n=0, prepend=x), A, "float64"),
    ("nanmean_dtype", lambda m, x: m.nanmean(x, dtype=m.float32), A, "float64"),
    ("nanmean_dims_keepdim", lambda m, x: m.nanmean(x, (0, 1), True), A, "float64"),
    ("nanmean_none_keepdim", lambda m, x: x.nanmean(None, keepdim=True), A, "float64"),
    ("nanmean_all_nan", lambda m, x: m.nanmean(x, 0), [[_NAN, 1.0], [_NAN, 3.0]], "float64"),
    ("nanmean_empty", lambda m, x: m.nanmean(x), np.zeros(0), "float32"),
    (
        "logcumsumexp_specials",
        lambda m, x: m.logcumsumexp(x, 0),
        [-INF, 1.0, INF, _NAN],
        "float64",
    ),
    (
        "logcumsumexp_large",
        lambda m, x: m.logcumsumexp(x, 1),
        [[1000.0, 1000.0, -1000.0]],
        "float32",
    ),
    ("logcumsumexp_half", lambda m, x: m.logcumsumexp(x, 0), [1.0, 2.0, 0.5], "float16"),
    (
        "logcumsumexp_complex",
        lambda m, x: m.logcumsumexp(x, 0),
        [1 + 1j, 2 - 1j, -1j],
        "complex128",
    ),
    ("logcumsumexp_0d", lambda m, x: m.logcumsumexp(x, -1), 2.5, "float64"),
    ("logcumsumexp_empty", lambda m, x: m.logcumsumexp(x, 0), np.zeros((0, 3)), "float32"),
    ("quantile_nan", lambda m, x: m.quantile(x, 0.5), [1.0, _NAN, 3.0], "float32"),
    (
        "quantile_nan_dim",
        lambda m, x: m.quantile(x, 0.5, 1),
        [[1.0, _NAN, 3.0], [1.0, 2.0, 4.0]],
        "float64",
    ),
    ("nanquantile_nan", lambda m, x: m.nanquantile(x, 0.5), [1.0, _NAN, 3.0], "float32"),
    (
        "nanquantile_all_nan",
        lambda m, x: m.nanquantile(x, 0.5, 0),
        [[_NAN, 1.0], [_NAN, 2.0]],
        "float64",
    ),
    ("quantile_int_q", lambda m, x: m.quantile(x, 1), _V, "float64"),
    ("quantile_bool_q", lambda m, x: m.quantile(x, q=True), _V, "float64"),
    ("quantile_0d", lambda m, x: m.quantile(x, 0.3, dim=0, keepdim=True), 2.0, "float32"),
    ("quantile_0d_q", lambda m, x: m.quantile(x, _q(m, 0.5, x)), _V, "float64"),
    (
        "quantile_keepdim_all",
        lambda m, x: m.quantile(x, _q(m, [0.2, 0.5], x), keepdim=True),
        A,
        "float64",
    ),
    (
        "quantile_keepdim_dim0",
        lambda m, x: m.quantile(x, _q(m, [0.2, 0.5], x), 0, True),
        A,
        "float64",
    ),
    (
        "quantile_ties_nearest",
        lambda m, x: m.quantile(x, _q(m, [0.25, 0.5, 0.75], x), interpolation="nearest"),
        [1.0, 2.0, 3.0],
        "float64",
    ),
    (
        "quantile_midpoint_ends",
        lambda m, x: m.quantile(x, _q(m, [0.0, 1.0], x), interpolation="midpoint"),
        _V,
        "float64",
    ),
    ("cov_int", lambda m, x: m.cov(x), I, "int64"),
    ("cov_1d_int", lambda m, x: m.cov(x), [1, 2, 4], "int64"),
    ("cov_0d", lambda m, x: m.cov(x), 3.0, "float32"),
    ("cov_no_observations", lambda m, x: m.cov(x), np.zeros((2, 0)), "float32"),
    ("cov_dof_zero", lambda m, x: m.cov(x, correction=2), [1.0, 2.0], "float32"),
    ("cov_complex", lambda m, x: m.cov(x), [[1 + 2j, 2 - 1j, 0.5j], [1, 2j, 3]], "complex64"),
    (
        "cov_fweights_correction",
        lambda m, x: m.cov(x, correction=2, fweights=m.tensor([1, 2, 1])),
        A,
        "float64",
    ),
    (
        "cov_fweights_uint8",
        lambda m, x: m.cov(x, fweights=m.tensor([1, 2, 1], dtype=m.uint8)),
        A,
        "float64",
    ),
    (
        "cov_aweights_float32",
        lambda m, x: m.cov(x, aweights=m.tensor([1.0, 2.0, 0.5])),
        A,
        "float64",
    ),
    (
        "cov_aweights_double_input_float",
        lambda m, x: m.cov(x, aweights=m.tensor([1.0, 2.0, 0.5], dtype=m.float64)),
        A,
        "float32",
    ),
    (
        "cov_both_weights",
        lambda m, x: m.cov(
            x,
            correction=3,
            fweights=m.tensor([1, 2, 1]),
            aweights=m.tensor([1.0, 2.0, 0.5], dtype=m.float64),
        ),
        A,
        "float64",
    ),
    (
        "cov_weights_dof_zero",
        lambda m, x: m.cov(x, correction=5, fweights=m.tensor([1, 2, 1])),
        A,
        "float64",
    ),
    ("corrcoef_1d", lambda m, x: m.corrcoef(x), [1.0, 2.0, 4.0], "float32"),
    ("corrcoef_int", lambda m, x: m.corrcoef(x), I, "int64"),
    (
        "corrcoef_constant_row",
        lambda m, x: m.corrcoef(x),
        [[1.0, 2.0, 4.0], [2.0, 2.0, 2.0]],
        "float32",
    ),
    (
        "corrcoef_complex",
        lambda m, x: m.corrcoef(x),
        [[1 + 2j, 2 - 1j, 0.5j], [1, 2j, 3]],
        "complex128",
    ),
    ("histc", lambda m, x: m.histc(x, 4), _V, "float32"),
    ("histc_range", lambda m, x: x.histc(bins=3, min=1, max=4), _V, "float64"),
    ("histc_equal_min_max", lambda m, x: m.histc(x, 4, 2, 2), _V, "float32"),
    ("histc_constant", lambda m, x: m.histc(x, 4), [2.0, 2.0], "float32"),
    ("histc_empty", lambda m, x: m.histc(x, 3), np.zeros(0), "float32"),
    ("histc_nan_in_range", lambda m, x: m.histc(x, 3, 0, 3), [1.0, _NAN, 2.0], "float32"),
    ("histc_half", lambda m, x: m.histc(x, 3), _V, "float16"),
    ("histc_2d_many", lambda m, x: m.histc(x, 7), np.linspace(-3, 3, 60).reshape(6, 10), "float32"),
    ("histogram", lambda m, x: m.histogram(x, 3), _V, "float32"),
    ("histogram_default_bins", lambda m, x: x.histogram(), np.linspace(-3, 3, 60), "float64"),
    ("histogram_range", lambda m, x: m.histogram(x, 3, range=(0.0, 4.0)), _V, "float32"),
    ("histogram_int_range", lambda m, x: m.histogram(x, 3, range=(1, 2)), _V, "float32"),
    ("histogram_edges", lambda m, x: m.histogram(x, m.tensor([0.0, 1.0, 2.5, 5.0])), _V, "float32"),
    (
        "histogram_decreasing_edges",
        lambda m, x: m.histogram(x, m.tensor([3.0, 1.0])),
        _V,
        "float32",
    ),
    ("histogram_weight", lambda m, x: m.histogram(x, 3, weight=x.abs()), _V, "float64"),
    ("histogram_density", lambda m, x: m.histogram(x, 3, density=True), _V, "float32"),
    (
        "histogram_edges_density_weight",
        lambda m, x: m.histogram(x, m.tensor([0.0, 1.0, 2.5, 5.0]), density=True, weight=x.abs()),
        _V,
        "float32",
    ),
    ("histogram_constant", lambda m, x: m.histogram(x, 2), [2.0, 2.0], "float32"),
    ("histogram_equal_range", lambda m, x: m.histogram(x, 3, range=(2.0, 2.0)), _V, "float32"),
    ("histogram_empty", lambda m, x: m.histogram(x, 2), np.zeros(0), "float32"),
    (
        "histogram_2d",
        lambda m, x: m.histogram(x, 5),
        np.linspace(-3, 3, 60).reshape(6, 10),
        "float32",
    ),
]


@pytest.mark.parametrize("name,fn,data,dtype", NEW_VALUE_CASES, ids=[c[0] for c in NEW_VALUE_CASES])
def test_new_reductions_match_torch(name, fn, data, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_with_torch(fn, data, dtype, rtol=1e-6, atol=1e-6, grad=False)


NEW_ERROR_CASES = [
    ("diff_0d", lambda m, x: m.diff(x), 1.0, "float32"),
    ("diff_negative_n", lambda m, x: m.diff(x, n=-1), A, "float32"),
    ("diff_dim_range", lambda m, x: m.diff(x, dim=5), A, "float32"),
    ("diff_float_dim", lambda m, x: m.diff(x, dim=1.0), A, "float32"),
    ("diff_prepend_shape", lambda m, x: m.diff(x, prepend=m.zeros(1, 1)), A, "float32"),
    ("diff_prepend_ndim", lambda m, x: m.diff(x, prepend=m.zeros(2)), A, "float32"),
    ("diff_append_ndim", lambda m, x: m.diff(x, append=m.zeros(2, 1, 1)), A, "float32"),
    ("diff_prepend_number", lambda m, x: m.diff(x, prepend=1.0), A, "float32"),
    ("nanmean_int", lambda m, x: m.nanmean(x), I, "int64"),
    ("nanmean_complex", lambda m, x: m.nanmean(x, 1), [[1 + 2j, 3j]], "complex128"),
    ("nansum_complex", lambda m, x: x.nansum(), [[1 + 2j, 3j]], "complex128"),
    ("nanmean_int_dtype", lambda m, x: m.nanmean(x, dtype=m.int64), A, "float32"),
    ("logcumsumexp_int", lambda m, x: m.logcumsumexp(x, 0), I, "int64"),
    ("logcumsumexp_no_dim", lambda m, x: m.logcumsumexp(x), A, "float32"),
    ("logcumsumexp_dim_range", lambda m, x: x.logcumsumexp(2), A, "float32"),
    ("quantile_q_above", lambda m, x: m.quantile(x, 1.5), A, "float64"),
    ("quantile_q_below", lambda m, x: m.quantile(x, -0.1), A, "float64"),
    ("quantile_q_tensor_range", lambda m, x: m.quantile(x, _q(m, [0.5, 1.5], x)), A, "float64"),
    ("quantile_q_dtype", lambda m, x: m.quantile(x, m.tensor([0.5])), A, "float64"),
    ("quantile_q_2d", lambda m, x: m.quantile(x, _q(m, [[0.5]], x)), A, "float64"),
    ("quantile_int", lambda m, x: m.quantile(x, 0.5), I, "int64"),
    ("quantile_half", lambda m, x: m.quantile(x, 0.5), A, "float16"),
    ("quantile_empty", lambda m, x: m.quantile(x, 0.5), np.zeros(0), "float32"),
    ("quantile_empty_dim", lambda m, x: m.quantile(x, 0.5, dim=0), np.zeros((3, 0)), "float32"),
    ("quantile_interpolation", lambda m, x: m.quantile(x, 0.5, interpolation="foo"), A, "float64"),
    ("nanquantile_q_above", lambda m, x: m.nanquantile(x, 1.5), A, "float64"),
    ("nanquantile_interpolation", lambda m, x: x.nanquantile(0.5, interpolation="x"), A, "float64"),
    ("quantile_dim_range", lambda m, x: m.quantile(x, 0.5, dim=3), A, "float64"),
    ("cov_3d", lambda m, x: m.cov(x.reshape(1, 2, 3)), A, "float32"),
    ("cov_bool", lambda m, x: m.cov(x), B, "bool"),
    ("cov_fweights_float", lambda m, x: m.cov(x, fweights=m.tensor([1.0, 2.0, 1.0])), A, "float64"),
    (
        "cov_fweights_bool",
        lambda m, x: m.cov(x, fweights=m.tensor([True, True, True])),
        A,
        "float64",
    ),
    ("cov_fweights_2d", lambda m, x: m.cov(x, fweights=m.tensor([[1, 2, 1]])), A, "float64"),
    ("cov_fweights_numel", lambda m, x: m.cov(x, fweights=m.tensor([1, 2])), A, "float64"),
    ("cov_fweights_negative", lambda m, x: m.cov(x, fweights=m.tensor([1, -2, 1])), A, "float64"),
    ("cov_aweights_int", lambda m, x: m.cov(x, aweights=m.tensor([1, 2, 1])), A, "float64"),
    ("cov_aweights_2d", lambda m, x: m.cov(x, aweights=m.tensor([[1.0, 2.0, 1.0]])), A, "float64"),
    ("cov_aweights_numel", lambda m, x: m.cov(x, aweights=m.tensor([1.0, 2.0])), A, "float64"),
    (
        "cov_aweights_negative",
        lambda m, x: m.cov(x, aweights=m.tensor([1.0, -2.0, 1.0])),
        A,
        "float64",
    ),
    ("cov_weights_zero", lambda m, x: m.cov(x, fweights=m.tensor([0, 0, 0])), A, "float64"),
    ("cov_float_correction", lambda m, x: m.cov(x, correction=1.5), A, "float64"),
    ("corrcoef_3d", lambda m, x: m.corrcoef(x.reshape(1, 2, 3)), A, "float32"),
    ("histc_int", lambda m, x: m.histc(x, 4), I, "int64"),
    ("histc_zero_bins", lambda m, x: m.histc(x, 0), A, "float32"),
    ("histc_negative_bins", lambda m, x: m.histc(x, -2), A, "float32"),
    ("histc_float_bins", lambda m, x: m.histc(x, 3.0), A, "float32"),
    ("histc_max_below_min", lambda m, x: m.histc(x, 4, 3, 1), A, "float32"),
    ("histc_infinite_range", lambda m, x: m.histc(x, 4, 0, INF), A, "float32"),
    ("histc_infinite_data", lambda m, x: m.histc(x, 4), [1.0, INF, 2.0], "float32"),
    ("histogram_int", lambda m, x: m.histogram(x, 3), I, "int64"),
    ("histogram_half", lambda m, x: m.histogram(x, 3), A, "float16"),
    ("histogram_zero_bins", lambda m, x: m.histogram(x, 0), A, "float32"),
    ("histogram_range_reversed", lambda m, x: m.histogram(x, 3, range=(4.0, 0.0)), A, "float32"),
    ("histogram_range_infinite", lambda m, x: m.histogram(x, 3, range=(0.0, INF)), A, "float32"),
    ("histogram_range_length", lambda m, x: m.histogram(x, 3, range=(1.0, 2.0, 3.0)), A, "float32"),
    (
        "histogram_edges_dtype",
        lambda m, x: m.histogram(x, m.tensor([0.0, 1.0], dtype=m.float64)),
        A,
        "float32",
    ),
    ("histogram_edges_2d", lambda m, x: m.histogram(x, m.tensor([[0.0, 1.0]])), A, "float32"),
    ("histogram_edges_one", lambda m, x: m.histogram(x, m.tensor([1.0])), A, "float32"),
    ("histogram_edges_none", lambda m, x: m.histogram(x, m.tensor([])), A, "float32"),
    ("histogram_weight_shape", lambda m, x: m.histogram(x, 3, weight=m.ones(3)), A, "float32"),
    (
        "histogram_weight_dtype",
        lambda m, x: m.histogram(x, 3, weight=m.ones(2, 3, dtype=m.float64)),
        A,
        "float32",
    ),
]


@pytest.mark.parametrize("name,fn,data,dtype", NEW_ERROR_CASES, ids=[c[0] for c in NEW_ERROR_CASES])
def test_new_reduction_errors_match_torch(name, fn, data, dtype):
    _same_error(fn, data, dtype)


def test_new_reductions_type_errors():
    # torch's wording lists its overloads; only the type is compared.
    x = ember.tensor(A)
    for fn in [
        lambda: ember.quantile(x, 0.5, dim=1.0),
        lambda: ember.histogram(x, bins=3.5),
        lambda: ember.histogram(x, ember.tensor([0.0, 1.0]), range=(1.0, 2.0)),
    ]:
        with pytest.raises(TypeError):
            fn()


def test_cov_dof_warning_matches_torch():
    def messages(lib, data, **kw):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.cov(lib.tensor(data), **kw)
        return [str(m.message) for m in w]

    want = messages(torch, [1.0, 2.0], correction=2)
    assert want and messages(ember, [1.0, 2.0], correction=2) == want
    kw = {"correction": 5}
    got = messages(ember, A, fweights=ember.tensor([1, 2, 1]), **kw)
    assert got == messages(torch, A, fweights=torch.tensor([1, 2, 1]), **kw) == want


def test_histc_and_histogram_are_not_differentiable():
    x = ember.tensor(_V, requires_grad=True)
    h = ember.histc(x, 4)
    assert not h.requires_grad and h.grad_fn is None
    assert not torch.histc(torch.tensor(_V, requires_grad=True), 4).requires_grad
    hist, edges = ember.histogram(x.detach(), 3)
    assert type(ember.histogram(x.detach(), 3)) is ember.return_types.histogram
    assert repr(ember.histogram(x.detach(), 2)).startswith("torch.return_types.histogram(\nhist=")
    assert not hist.requires_grad and not edges.requires_grad


def test_quantile_q_gradient_matches_torch():
    def grads(lib):
        x = lib.tensor(_distinct((3, 5)), requires_grad=True)
        q = lib.tensor([0.3, 0.65], dtype=lib.float64, requires_grad=True)
        y = lib.quantile(x, q, dim=1, keepdim=True)
        return lib.autograd.grad(y.sum() + (y * y).sum(), (x, q))

    for e, t in zip(grads(ember), grads(torch)):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)


def test_logcumsumexp_gradient_of_large_values_matches_torch():
    data = [[900.0, -900.0, 899.0, 0.0], [-5.0, 3.0, 800.0, 800.5]]

    def grads(lib):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = lib.logcumsumexp(x, 1)
        w = lib.tensor([[1.0, -2.0, 0.0, 0.5], [0.25, 1.0, -1.0, 2.0]], dtype=lib.float64)
        return lib.autograd.grad((y * w).sum(), x)[0]

    np.testing.assert_allclose(grads(ember).numpy(), grads(torch).numpy(), rtol=1e-10, atol=1e-12)


def test_histograms_match_torch_bit_for_bit_on_random_data():
    """Bin edges are torch's linspace exactly; elements on or near edges fall in the same
    bins (histc by division, histogram with its local search)."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        dt = "float32" if trial % 2 else "float64"
        n, bins = int(rng.integers(1, 120)), int(rng.integers(1, 120))
        a = rng.standard_normal(n) * rng.uniform(0.1, 100)
        if trial % 3 == 0:
            a = np.round(a * 4) / 4  # many values on edges
        cases = [
            lambda m, x, bins=bins: (m.histc(x, bins),),
            lambda m, x, bins=bins: (m.histc(x, bins, min=-1.0, max=1.5),),
            lambda m, x, bins=bins: tuple(m.histogram(x, bins)),
            lambda m, x, bins=bins: tuple(m.histogram(x, bins, range=(-1.0, 2.0), weight=x.abs())),
            lambda m, x, bins=bins: tuple(m.histogram(x, bins, density=True)),
        ]
        for fn in cases:
            got = fn(ember, _t(ember, a, dt))
            want = fn(torch, _t(torch, a, dt))
            for e, t in zip(got, want):
                assert _dtype_name(e) == _dtype_name(t)
                np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=0)
