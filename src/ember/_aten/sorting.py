"""Sorting and selection ops: sort, argsort, msort, topk, kthvalue, unique,
repeat_interleave, index_fill, the fused addcmul/addcdiv and the scaled sums of products
addr/addbmm.

Each op is a ``defop`` declaration next to its public function. Values chosen by index
(sort, topk, kthvalue) take their gradient back through the indices,
``zeros(input).scatter(dim, indices, grad)``, and their tangent is the input's tangent
gathered at the same indices; the indices output is saved as itself (modifying it in place
is an error in backward, as in torch). Node classes carry the names
``type(t.grad_fn).__name__`` has in torch 2.13 (``repeat_interleave`` with an int count
ends in torch's ``view``, so ember records one node under that name whose rule is the whole
op's gradient). A rule runs on arrays in a plain backward and calls the ember ops on
Tensors in a recorded one.
"""

from __future__ import annotations

import types

import numpy as np

from .._dtype import scalar_name
from .._tensor import Tensor
from ..autograd.opdef import cconj
from ..autograd.recording import no_jvp_error
from ._core import (
    ELEMENTWISE,
    LINEAR,
    defop,
    intp,
    is_raw,
    normalize_dim,
    record,
    record_multi,
    register,
    require_tensor,
    result_type,
    run,
    write_out,
)
from .indexing import gather, index_select, scatter
from .linalg import _check_expand, _cj, _int_scalar, _np_matmul, _scale, _scaled_tangent
from .linalg import bmm as _bmm
from .linalg import outer as _outer
from .reduction import return_types

_wrap = Tensor._wrap


def _argsort(a: np.ndarray, ax: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``ax``; NaN counts as the largest value (torch's order)."""
    if not descending:
        return np.argsort(a, axis=ax, kind="stable")
    n = a.shape[ax]
    rev = np.flip(np.argsort(np.flip(a, ax), axis=ax, kind="stable"), ax)
    return (n - 1) - rev


# -- values picked by index: sort, topk, kthvalue ------------------------------------------------


def _pick_vjp(g, indices, dim, keepdim, self_sym_sizes):
    """``zeros(self_sym_sizes).scatter(dim, indices, g)`` (indices unsqueezed at ``dim``
    unless ``keepdim``): each picked value's gradient goes back where it was picked."""
    if g is None:
        return None
    if not self_sym_sizes:  # a 0-d input: its one value was picked
        return g
    idx = indices._data if isinstance(indices, Tensor) else indices
    if not keepdim:
        idx = np.expand_dims(idx, dim)
    if is_raw(g):
        if not keepdim:
            g = np.expand_dims(g, dim)
        out = np.zeros(self_sym_sizes, g.dtype)
        np.put_along_axis(out, idx, g, axis=dim)
        return out
    if not keepdim:
        g = g.unsqueeze(dim)
    return scatter(_wrap(np.zeros(self_sym_sizes, g._data.dtype)), dim, _wrap(idx), g)


def _pick_jvp(t_self, indices, dim, keepdim):
    """The tangent gathered at the picked indices (the indices output gets none)."""
    idx = indices._data
    squeeze = not keepdim and t_self._data.ndim > 0
    if squeeze:
        idx = np.expand_dims(idx, dim)
    picked = gather(t_self, dim, _wrap(idx))
    return [picked.squeeze(dim) if squeeze else picked, None]


def _save_indices(inputs, edges, out, extras) -> tuple:
    return (out[1],)


def _keeps_indices(cls):
    """``cls`` saves its indices output as itself rather than as a ``SavedOutput``: the
    indices have no grad_fn (no reference cycle, and a recorded rule must not see them as
    this node's output), and their version counter makes an in-place change before
    backward torch's error."""
    assert cls._slots == ("indices",), cls.__name__
    cls._save = _save_indices
    return cls


# The gradient of the sorted values (no dim removed), and their tangent.
def _sorted_vjp(grads, indices, dim, self_sym_sizes):
    return _pick_vjp(grads[0], indices, dim, True, self_sym_sizes)


def _sorted_jvp(t_self, indices, dim):
    return _pick_jvp(t_self, indices, dim, True)


def _sort_forward(a, dim, self_sym_sizes, descending):
    if not a.ndim:
        return a.copy(), np.zeros((), np.int64)
    indices = _argsort(a, dim, descending).astype(np.int64, copy=False)
    return np.take_along_axis(a, indices, axis=dim), indices


def _topk_forward(a, dim, self_sym_sizes, k, largest):
    if not a.ndim:
        return a.copy(), np.zeros((), np.int64)
    order = _argsort(a, dim, largest)
    indices = np.take(order, np.arange(k), axis=dim).astype(np.int64, copy=False)
    return np.take_along_axis(a, indices, axis=dim), indices


def _kthvalue_forward(a, dim, keepdim, self_sym_sizes, k):
    if not a.ndim:
        return a.copy(), np.zeros((), np.int64)
    order = np.argsort(a, axis=dim, kind="stable")
    indices = np.take(order, [k - 1], axis=dim).astype(np.int64, copy=False)
    values = np.take_along_axis(a, indices, axis=dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def _sorted_op(name: str, forward, params=("dim", "self_sym_sizes", "_descending")):
    return _keeps_indices(
        defop(
            name,
            outputs=("values", "indices"),
            differentiable=(True, False),
            params=params,
            forward=forward,
            vjp={"self": _sorted_vjp},
            jvp=_sorted_jvp,
        )
    )


SortBackward0 = _sorted_op("SortBackward0", _sort_forward)
SortBackward1 = _sorted_op("SortBackward1", _sort_forward)  # sort called with stable=
TopkBackward0 = _sorted_op(
    "TopkBackward0", _topk_forward, ("dim", "self_sym_sizes", "_k", "_largest")
)

KthvalueBackward0 = _keeps_indices(
    defop(
        "KthvalueBackward0",
        outputs=("values", "indices"),
        differentiable=(True, False),
        params=("dim", "keepdim", "self_sym_sizes", "_k"),
        forward=_kthvalue_forward,
        vjp={
            "self": lambda grads, indices, dim, keepdim, self_sym_sizes: _pick_vjp(
                grads[0], indices, dim, keepdim, self_sym_sizes
            )
        },
        jvp=_pick_jvp,
    )
)


@register("sort", method=True)
def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    """Sorted values along ``dim`` and their indices (``torch.return_types.sort``).

    Example:
        >>> import ember
        >>> ember.sort(ember.tensor([3.0, 1.0, 2.0]))
        torch.return_types.sort(
        values=tensor([1., 2., 3.]),
        indices=tensor([1, 2, 0]))
    """
    require_tensor(input, "sort")
    a = input._data
    params = (normalize_dim(int(dim), a.ndim), a.shape, bool(descending))
    cls = SortBackward0 if stable is None else SortBackward1
    return return_types.sort(record_multi(cls, _sort_forward(a, *params), (input,), params))


@register("argsort", method=True)
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (int64, no gradient).

    Example:
        >>> import ember
        >>> ember.argsort(ember.tensor([3.0, 1.0, 2.0]), descending=True)
        tensor([0, 2, 1])
    """
    require_tensor(input, "argsort")
    a = input._data
    d = normalize_dim(int(dim), a.ndim)
    if not a.ndim:
        return _wrap(np.zeros((), np.int64))
    return _wrap(_argsort(a, d, bool(descending)).astype(np.int64, copy=False))


@register("msort", method=True)
def msort(input):
    """``sort(input, dim=0).values``: each column sorted, in ascending order.

    Example:
        >>> import ember
        >>> ember.msort(ember.tensor([[3.0, 1.0], [2.0, 4.0]]))
        tensor([[2., 1.],
                [3., 4.]])
    """
    require_tensor(input, "msort")
    return sort(input, 0).values


@register("topk", method=True)
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    Example:
        >>> import ember
        >>> ember.topk(ember.tensor([1.0, 4.0, 2.0, 3.0]), 2).values
        tensor([4., 3.])
    """
    require_tensor(input, "topk")
    a = input._data
    d = normalize_dim(int(dim), a.ndim)
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    params = (d, a.shape, int(k), bool(largest))
    outs = record_multi(TopkBackward0, _topk_forward(a, *params), (input,), params)
    return return_types.topk(outs)


@register("kthvalue", method=True)
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index.

    Example:
        >>> import ember
        >>> ember.kthvalue(ember.tensor([3.0, 1.0, 2.0]), 2).values
        tensor(2.)
    """
    require_tensor(input, "kthvalue")
    a = input._data
    d = normalize_dim(int(dim), a.ndim)
    n = a.shape[d] if a.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    params = (d, bool(keepdim), a.shape, int(k))
    outs = record_multi(KthvalueBackward0, _kthvalue_forward(a, *params), (input,), params)
    return return_types.kthvalue(outs)


# -- unique ------------------------------------------------------------------------------------


def _no_derivative(aten_name: str):
    """vjp and jvp rules of an op torch records but cannot differentiate (``_unique2``)."""

    def vjp(grads):
        raise NotImplementedError(f"the derivative for '{aten_name}' is not implemented.")

    def jvp():
        # no_jvp_error names the op after the class it is given: aten's name here.
        raise no_jvp_error(types.SimpleNamespace(__name__=aten_name))

    return {"self": vjp}, jvp


def _unique_op(name: str, aten_name: str):
    vjp, jvp = _no_derivative(aten_name)
    return defop(
        name,
        outputs=("output", "inverse_indices", "counts"),
        differentiable=(True, False, False),
        vjp=vjp,
        jvp=jvp,
    )


Unique2Backward0 = _unique_op("Unique2Backward0", "_unique2")
UniqueDimBackward0 = _unique_op("UniqueDimBackward0", "unique_dim")


@register("unique", method=True)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements (sorted), optionally with inverse indices and counts.

    Example:
        >>> import ember
        >>> ember.unique(ember.tensor([3, 1, 3, 2]))
        tensor([1, 2, 3])
    """
    require_tensor(input, "unique")
    a = input._data
    if dim is None:
        vals, inv, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape)
        cls = Unique2Backward0
    else:
        d = normalize_dim(int(dim), a.ndim)
        vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
        cls = UniqueDimBackward0
    res = record_multi(cls, (vals, inv.astype(np.int64), counts.astype(np.int64)), (input,))
    return _asked_outputs(res, return_inverse, return_counts)


def _asked_outputs(res, return_inverse: bool, return_counts: bool):
    """unique's result: the values alone, or a tuple with the inverse and counts asked for."""
    if not return_inverse and not return_counts:
        return res[0]
    picked = [res[0]]
    if return_inverse:
        picked.append(res[1])
    if return_counts:
        picked.append(res[2])
    return tuple(picked)


UniqueConsecutiveBackward0 = _unique_op("UniqueConsecutiveBackward0", "unique_consecutive")


def _unique_consecutive_arrays(a: np.ndarray, dim):
    """The first of each run of equal consecutive elements (of ``a`` flattened) or slices
    along ``dim``; the run each element belongs to; the runs' lengths."""
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.shape[0], dtype=bool)
        if flat.size > 1:
            starts[1:] = flat[1:] != flat[:-1]
        run_of = np.cumsum(starts) - 1
        values = flat[starts]
        inverse = run_of.reshape(a.shape)
    else:
        moved = np.moveaxis(a, dim, 0)
        n = moved.shape[0]
        starts = np.ones(n, dtype=bool)
        if n > 1:
            rows = moved.reshape(n, -1)
            starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        run_of = np.cumsum(starts) - 1
        values = np.moveaxis(moved[starts], 0, dim)
        inverse = run_of
    positions = np.flatnonzero(starts)
    counts = np.diff(np.append(positions, starts.shape[0]))
    return values.copy(), inverse.astype(np.int64), counts.astype(np.int64)


def _unique_consecutive_all(input, return_inverse=False, return_counts=False, dim=None):
    """unique_consecutive's three results, always (aten's op returns all of them)."""
    require_tensor(input, "unique_consecutive")
    a = input._data
    d = None if dim is None else normalize_dim(int(dim), a.ndim)
    values, inverse, counts = _unique_consecutive_arrays(a, d)
    return record_multi(UniqueConsecutiveBackward0, (values, inverse, counts), (input,))


def _unique_consecutive_aten(input, return_inverse=False, return_counts=False, dim=None):
    """``aten.unique_consecutive``: three tensors; without ``dim``, empty where not asked
    for (as torch)."""
    values, inverse, counts = _unique_consecutive_all(input, return_inverse, return_counts, dim)
    if dim is not None:
        return values, inverse, counts
    if not return_inverse:
        inverse = _wrap(np.empty(0, np.int64))
    if not return_counts:
        counts = _wrap(np.empty(0, np.int64))
    return values, inverse, counts


@register("unique_consecutive", method=True)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first element of each run of equal consecutive elements (of the flattened input,
    or slices along ``dim``), optionally with each element's run and the runs' lengths.

    Example:
        >>> import ember
        >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
        (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    res = _unique_consecutive_all(input, return_inverse, return_counts, dim)
    return _asked_outputs(res, return_inverse, return_counts)


# -- repeat_interleave ---------------------------------------------------------------------------


def _repeat_forward(a, repeats, dim, flat_sizes, self_sym_sizes):
    reps = repeats if isinstance(repeats, int) else intp(repeats)
    return np.repeat(a.reshape(flat_sizes), reps, axis=dim)


def _repeat_vjp(g, repeats, dim, flat_sizes, self_sym_sizes):
    """The copies of each element summed (the repeated axis split out, then reduced)."""
    split = flat_sizes[: dim + 1] + (repeats,) + flat_sizes[dim + 1 :]
    return g.reshape(split).sum(dim + 1).reshape(self_sym_sizes)


# repeat_interleave by an int: torch's graph ends in a view of the repeated copies.
# flat_sizes: the input's sizes as repeated (flattened without a dim, 1 element if 0-d).
ViewBackward0 = defop(
    "ViewBackward0",
    params=("repeats", "dim", "flat_sizes", "self_sym_sizes"),
    forward=_repeat_forward,
    vjp={"self": _repeat_vjp},
    jvp=LINEAR,
)


@register("repeat_interleave", method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times.

    Example:
        >>> import ember
        >>> ember.repeat_interleave(ember.tensor([1, 2]), 2)
        tensor([1, 1, 2, 2])
    """
    require_tensor(input, "repeat_interleave")
    if repeats is None:  # repeat_interleave(repeats): each index i, repeats[i] times
        r = input._data
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return _wrap(np.repeat(np.arange(r.size, dtype=np.int64), intp(r.reshape(-1))))
    a = input._data
    if dim is None:
        ax = 0
        flat_sizes = (a.size,)
    else:
        ax = normalize_dim(int(dim), a.ndim)
        flat_sizes = a.shape if a.ndim else (1,)
    n = flat_sizes[ax]
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        params = (int(repeats), ax, flat_sizes, a.shape)
        return record(ViewBackward0, _repeat_forward(a, *params), (input,), params)
    rep = repeats._data if isinstance(repeats, Tensor) else np.asarray(repeats)
    if rep.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if rep.ndim == 0:
        rep = np.full(n, int(rep), np.int64)
    elif rep.shape[0] != n:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {rep.shape[0]} and input.size(0) = {n}"
        )
    if rep.size and rep.min() < 0:
        raise RuntimeError("repeats can not be negative")
    base = input.reshape(-1) if dim is None or a.ndim == 0 else input
    idx = np.repeat(np.arange(n, dtype=np.int64), intp(rep))
    return index_select(base, ax, _wrap(idx))


# -- index_fill ----------------------------------------------------------------------------------


def _fill_key(dim: int, index) -> tuple:
    return (slice(None),) * dim + (index,)


def _fill_forward(a, value, dim, index):
    """``a`` with the slices ``index`` along ``dim`` set to ``value`` (a 0-d ``a`` is one
    slice)."""
    out = np.array(a)
    (out.reshape(1) if out.ndim == 0 else out)[_fill_key(dim, index)] = value
    return out


def _zero_filled(g, dim, index):
    """``g.index_fill(dim, index, 0)``: no gradient reaches the filled slices."""
    if is_raw(g):
        return _fill_forward(g, 0, dim, index)
    return index_fill(g, dim, _wrap(index), 0.0)


def _fill_value_vjp(g, dim, index):
    """The gradient of the filled slices summed (each slice once, repeated or not)."""
    idx = np.unique(index)
    if is_raw(g):
        g = np.asarray(g)
        return (g.reshape(1) if g.ndim == 0 else g)[_fill_key(dim, idx)].sum()
    return index_select(g.reshape(-1) if g._data.ndim == 0 else g, dim, _wrap(idx)).sum()


# index: the normalised flat index array (the index tensor's values, in range)
IndexFillBackward0 = defop(  # a number filled in: a constant there
    "IndexFillBackward0",
    params=("dim", "index", "value"),
    forward=lambda a, dim, index, value: _fill_forward(a, value, dim, index),
    vjp={"self": lambda g, dim, index: _zero_filled(g, dim, index)},
    jvp=lambda t_self, dim, index: _zero_filled(t_self, dim, index),
)

IndexFillBackward1 = defop(  # a 0-d tensor filled in
    "IndexFillBackward1",
    inputs=("self", "value"),
    params=("dim", "index"),
    forward=lambda a, v, dim, index: _fill_forward(a, v, dim, index),
    vjp={"self": _zero_filled, "value": _fill_value_vjp},
    jvp=LINEAR,
)


@register("index_fill", method=True, inplace=True)
def index_fill(input, dim, index, value):
    """``input`` with the slices ``index`` along ``dim`` set to ``value``.

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).index_fill(1, ember.tensor([0, 2]), 1.0)
        tensor([[1., 0., 1.],
                [1., 0., 1.]])
    """
    require_tensor(input, "index_fill")
    require_tensor(index, "index_fill", "index", 3)
    a = input._data
    idx = index._data
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    d = normalize_dim(int(dim), a.ndim)
    n = a.shape[d] if a.ndim else 1
    flat_idx = idx.reshape(-1)
    bad = flat_idx[(flat_idx >= n) | (flat_idx < -n)]
    if bad.size:
        raise IndexError(f"index {bad[0]} is out of bounds for dimension {d} with size {n}")
    flat_idx = flat_idx % n if n else flat_idx
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value._data.ndim} dimension(s)."
            )
        res = _fill_forward(a, value._data, d, flat_idx)
        return record(IndexFillBackward1, res, (input, value), (d, flat_idx))
    res = _fill_forward(a, value, d, flat_idx)
    return record(IndexFillBackward0, res, (input,), (d, flat_idx, value))


# -- addcmul, addcdiv ----------------------------------------------------------------------------

AddcmulBackward0 = defop(
    "AddcmulBackward0",
    inputs=("self", "tensor1", "tensor2"),
    params=("value",),
    forward=lambda a, b, c, value: (a + value * (b * c)).astype(a.dtype, copy=False),
    vjp={
        "self": lambda g: g,
        "tensor1": lambda g, tensor2, value: g * cconj(value * tensor2),
        "tensor2": lambda g, tensor1, value: g * cconj(value * tensor1),
    },
    jvp=ELEMENTWISE,
)

AddcdivBackward0 = defop(
    "AddcdivBackward0",
    inputs=("self", "tensor1", "tensor2"),
    params=("value",),
    forward=lambda a, b, c, value: (a + value * (b / c)).astype(a.dtype, copy=False),
    vjp={
        "self": lambda g: g,
        "tensor1": lambda g, tensor2, value: g * cconj(value / tensor2),
        "tensor2": lambda g, tensor1, tensor2, value: (
            -g * cconj(value * tensor1) / cconj(tensor2 * tensor2)
        ),
    },
    jvp=ELEMENTWISE,
)

_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release "
    "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
    "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
    "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
    "float inputs. The future addcdiv behavior is just the latter implementation: "
    "(input + value * tensor1 / tensor2), for all dtypes."
)


def _addc(cls, input, tensor1, tensor2, value, fname: str):
    require_tensor(input, fname)
    require_tensor(tensor1, fname, "tensor1", 2)
    require_tensor(tensor2, fname, "tensor2", 3)
    rt = result_type(input, tensor1, tensor2)
    if cls is AddcdivBackward0 and rt.kind in "biu":
        raise RuntimeError(_ADDCDIV_INT)
    arrays = tuple(x._data.astype(rt, copy=False) for x in (input, tensor1, tensor2))
    return run(cls, (input, tensor1, tensor2), arrays, (value,))


@register("addcmul", method=True, inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``.

    Example:
        >>> import ember
        >>> ember.addcmul(ember.ones(2), ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor([4., 9.])
    """
    return _addc(AddcmulBackward0, input, tensor1, tensor2, value, "addcmul")


@register("addcdiv", method=True, inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``.

    Example:
        >>> import ember
        >>> ember.addcdiv(ember.ones(2), ember.tensor([1.0, 2.0]), ember.tensor([2.0, 4.0]))
        tensor([1.5000, 1.5000])
    """
    return _addc(AddcdivBackward0, input, tensor1, tensor2, value, "addcdiv")


# -- addr, addbmm ----------------------------------------------------------------------------
# ``beta * input + alpha * product``: an outer product of vectors, or the sum of a batch of
# matrix products; ``input`` broadcasts to the result (beta == 0 ignores it, NaNs included).


def _add_scaled(x, product, beta, alpha):
    if x.dtype == np.bool_:  # torch's bool kernels: ``or`` and ``and``
        res = np.logical_and(product, bool(alpha))
        return np.logical_or(res, np.logical_and(x, bool(beta))) if beta else res
    if alpha != 1:
        product = product * alpha
    if beta != 0:
        product = product + (x if beta == 1 else x * beta)
    return np.asarray(product, dtype=x.dtype)


def _outer_tensors(a, b):
    return _outer(a, b)


def _batch_product_sum(a, b):
    return _bmm(a, b).sum(0)


AddrBackward0 = defop(
    "AddrBackward0",
    inputs=("self", "vec1", "vec2"),
    params=("beta", "alpha"),
    forward=lambda x, v1, v2, beta, alpha: _add_scaled(x, np.multiply.outer(v1, v2), beta, alpha),
    vjp={
        "self": lambda g, beta: _scale(g, beta),
        "vec1": lambda g, vec2, alpha: _scale(g @ _cj(vec2), alpha),
        "vec2": lambda g, vec1, alpha: _scale(g.mT @ _cj(vec1), alpha),
    },
    jvp=lambda t_self, t_vec1, t_vec2, vec1, vec2, beta, alpha: _scaled_tangent(
        _outer_tensors, t_self, t_vec1, t_vec2, vec1, vec2, beta, alpha
    ),
)

AddbmmBackward0 = defop(
    "AddbmmBackward0",
    inputs=("self", "batch1", "batch2"),
    params=("beta", "alpha"),
    forward=lambda x, b1, b2, beta, alpha: _add_scaled(
        x, _np_matmul(b1, b2, keep_float32=True).sum(0), beta, alpha
    ),
    vjp={
        "self": lambda g, beta: _scale(g, beta),
        "batch1": lambda g, batch2, alpha: _scale(g[None] @ _cj(batch2).mT, alpha),
        "batch2": lambda g, batch1, alpha: _scale(_cj(batch1).mT @ g[None], alpha),
    },
    jvp=lambda t_self, t_batch1, t_batch2, batch1, batch2, beta, alpha: _scaled_tangent(
        _batch_product_sum, t_self, t_batch1, t_batch2, batch1, batch2, beta, alpha
    ),
)


def _scalars(beta, alpha, dt) -> tuple:
    if dt.kind in "biu":
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, (float, complex)) or (isinstance(v, Tensor) and v.is_floating_point()):
                raise RuntimeError(
                    f"For integral input tensors, argument {name} must not be a floating "
                    "point number."
                )
    return _int_scalar(beta, dt), _int_scalar(alpha, dt)


@register("addr", method=True, inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``; ``input`` broadcasts to the result.

    Example:
        >>> import ember
        >>> ember.addr(ember.ones(2, 3), ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.0, -1.0]))
        tensor([[ 2.,  1.,  0.],
                [ 3.,  1., -1.]])
    """
    require_tensor(input, "addr", "input", 1)
    require_tensor(vec1, "addr", "vec1", 2)
    require_tensor(vec2, "addr", "vec2", 3)
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    shape = (vec1._data.shape[0], vec2._data.shape[0])
    _check_expand(input, shape)
    rt = result_type(input, vec1, vec2)
    params = _scalars(beta, alpha, rt)
    arrays = tuple(x._data.astype(rt, copy=False) for x in (input, vec1, vec2))
    return write_out("addr", run(AddrBackward0, (input, vec1, vec2), arrays, params), out)


@register("addbmm", method=True, inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``; ``input`` broadcasts to the
    result.

    Example:
        >>> import ember
        >>> ember.addbmm(ember.zeros(2, 2), ember.ones(3, 2, 4), ember.ones(3, 4, 2))
        tensor([[12., 12.],
                [12., 12.]])
    """
    require_tensor(input, "addbmm", "input", 1)
    require_tensor(batch1, "addbmm", "batch1", 2)
    require_tensor(batch2, "addbmm", "batch2", 3)
    x, a, b = input._data, batch1._data, batch2._data
    for name, arr in (("batch1", a), ("batch2", b)):
        if arr.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got {a.shape[0]} and {b.shape[0]}"
        )
    if a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({a.shape[1]}x{a.shape[2]} and "
            f"{b.shape[1]}x{b.shape[2]})"
        )
    _check_expand(input, (a.shape[1], b.shape[2]))
    for first, second, arr in (("self", "mat2", x), ("mat1", "mat2", a)):
        if arr.dtype != b.dtype:
            raise RuntimeError(
                f"{first} and {second} must have the same dtype, but got "
                f"{scalar_name(arr.dtype)} and {scalar_name(b.dtype)}"
            )
    params = _scalars(beta, alpha, b.dtype)
    t = run(AddbmmBackward0, (input, batch1, batch2), (x, a, b), params)
    return write_out("addbmm", t, out)
