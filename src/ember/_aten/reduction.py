"""Reductions and scans: sum, mean, prod, max/min, std/var, norm, softmax, cumsum, ...

Each differentiable op is one ``defop`` declaration, named like torch 2.13's ``grad_fn``,
next to its public function. Rules are written with operators, NumPy ufuncs and the dual
helpers below (``_sumk``, ``_reshape``, ``_expand``, ``_where``), so the same line runs on
arrays in a plain backward and on Tensors in a recorded one (``create_graph=True``); the
few that need NumPy-only code (prod and cumprod with zeros) branch with ``is_raw`` and
write the Tensor case with ember ops, so higher orders stay exact. Forward mode: sum,
mean and cumsum are linear (``LINEAR``); every other op has an explicit JVP, most of them
``sum(tangent * partials)`` over the reduced dims, where the partials are the VJP of ones.

``return_types`` holds torch's named-tuple results (``torch.return_types.max`` ...); other
op modules can make more with ``make_return_type``, and declare selection ops (a value
picked by index along a dim: kthvalue, mode) with ``_select_op`` / ``_select_result``.
"""

from __future__ import annotations

import builtins as _b
import math
import sys
import types

import numpy as np

from .. import _dtype
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.opdef import cconj
from ..autograd.recording import cast_operand
from ._core import (
    LINEAR,
    QUIET,
    default_float,
    defop,
    is_raw,
    needs_grad,
    normalize_dim,
    normalize_dims,
    quiet_reset,
    quiet_set,
    record,
    record_multi,
    register,
    require_tensor,
    run,
    write_out,
)
from .elementwise import maximum, minimum, sgn, where
from .indexing import gather

_wrap = Tensor._wrap


# -- torch.return_types ---------------------------------------------------------------


class _StructSeq(tuple):
    """A tuple with named fields that prints like torch's ``torch.return_types.<name>``."""

    __slots__ = ()
    _fields: tuple = ()
    n_fields = 0
    n_sequence_fields = 0
    n_unnamed_fields = 0

    def __new__(cls, sequence=()):
        seq = tuple(sequence)
        if len(seq) != len(cls._fields):
            raise TypeError(
                f"torch.return_types.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                f"({len(seq)}-sequence given)"
            )
        return tuple.__new__(cls, seq)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    __str__ = __repr__

    def __reduce__(self):
        return (type(self), (tuple(self),))


return_types = types.ModuleType("ember.return_types", "torch.return_types: named results.")
# importable as a module too (``import torch.return_types``), as torch's is
sys.modules["ember.return_types"] = return_types


def make_return_type(name: str, fields: tuple) -> type:
    """A ``torch.return_types.<name>`` class with ``fields`` (also set on ``return_types``)."""
    ns = {"__slots__": (), "_fields": tuple(fields), "__module__": __name__}
    ns["__qualname__"] = f"return_types.{name}"
    ns["n_fields"] = ns["n_sequence_fields"] = len(fields)
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    cls = type(name, (_StructSeq,), ns)
    setattr(return_types, name, cls)
    return cls


for _name in (
    "max",
    "min",
    "median",
    "nanmedian",
    "mode",
    "kthvalue",
    "sort",
    "topk",
    "cummax",
    "cummin",
):
    make_return_type(_name, ("values", "indices"))
make_return_type("aminmax", ("min", "max"))


# -- shared helpers ----------------------------------------------------------------------


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()

_scalar_name = _dtype.scalar_name  # imported by nn and linalg


def _pick(dim, axis, keepdim, keepdims):
    """torch's aliases: ``axis`` for ``dim``, ``keepdims`` for ``keepdim``."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, _b.bool(keepdim)


def _np_dtype(dtype):
    return None if dtype is None else _dtype.to_numpy_dtype(dtype)


def _cast_for(input: Tensor, dtype) -> np.ndarray:
    """The input's array in the requested ``dtype=`` (torch refuses integer outputs that
    would need a gradient)."""
    a = input._data
    if dtype is None:
        return a
    nd = _np_dtype(dtype)
    if nd.kind not in "fcV" and needs_grad(input):
        raise RuntimeError(f"Autograd not support dtype: {_scalar_name(nd)}")
    return a.astype(nd, copy=False)


def _axes(ndim: int, dim) -> tuple:
    """Normalised reduction axes; ``None`` or an empty list means all of them."""
    if dim is None or dim is _UNSET:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        axes = normalize_dims(tuple(dim), ndim)
    else:
        axes = (normalize_dim(dim, ndim),)
    return axes if ndim else ()


def _single_axis(ndim: int, dim, fname: str, pos: str = " (position 1)") -> int | None:
    """One normalised axis (None for a 0-d tensor, whose only valid dims are 0 and -1)."""
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fname}(): argument 'dim'{pos} must be int, not {type(dim).__name__}")
    d = normalize_dim(dim, ndim)
    return d if ndim else None


def _keep_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _count(shape: tuple, axes: tuple) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def _arr(x, np_dtype=None) -> np.ndarray:
    """NumPy reductions return scalars for 0-d results; tensors always hold ndarrays."""
    return np.asarray(x, dtype=np_dtype if np_dtype is not None else np.asarray(x).dtype)


def _accumulated(input: Tensor, dtype) -> np.ndarray:
    """The input's array as a sum-like reduction takes it: in the ``dtype=`` asked for, or
    int64 for integer and bool inputs without one (torch's rule)."""
    a = _cast_for(input, dtype)
    if dtype is None and a.dtype.kind in "biu":
        a = a.astype(np.int64)
    return cast_operand(input, a)


def _check_nonempty(a: np.ndarray, axes: tuple, fname: str, dim_given: bool, sep="()") -> None:
    """torch's errors for reductions without an identity (max, amin, argmax, ...)."""
    if not dim_given and a.size == 0:
        raise RuntimeError(
            f"{fname}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    for d in axes:
        if a.shape[d] == 0:
            raise IndexError(f"{fname}{sep}: Expected reduction dim {d} to have non-zero size.")


def _first_empty_dim(a: np.ndarray, dim):
    """The first given dim of size 0, as written (torch checks dims one by one, in order)."""
    if a.size or a.ndim == 0 or dim is None:
        return None
    for d in tuple(dim) if isinstance(dim, (tuple, list)) else (dim,):
        if a.shape[normalize_dim(d, a.ndim)] == 0:
            return d
    return None


def _dof_warning(fname: str) -> None:
    _warn(
        f"{fname}(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "reduction factor (input numel divided by output numel). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)",
        UserWarning,
        stacklevel=4,
    )


# -- rule helpers: each runs on arrays (plain backward) and on Tensors (recorded) -------------


def _reshape(x, shape: tuple):
    if tuple(x.shape) == tuple(shape):
        return x
    return x.reshape(shape)


def _expand(x, shape: tuple):
    if tuple(x.shape) == tuple(shape):
        return x
    if is_raw(x):
        # A read-only broadcast view: no memory for the (often huge) gradient of a sum.
        return np.broadcast_to(x, shape)
    return x.expand(shape)


def _sumk(x, axes: tuple):
    """Sum over ``axes`` keeping them (a 0-d ``x`` is returned as it is)."""
    return x.sum(axis=axes, keepdims=True) if x.ndim else x


def _sum_dims(x, axes: tuple, keepdim: bool):
    """A tangent summed over a reduction's ``axes`` (none: ``x`` itself)."""
    return sum(x, axes, keepdim) if axes else x


def _keepdims(g, axes: tuple, keepdim: bool, sizes: tuple):
    """A reduction's result (or gradient) with its reduced ``axes`` back, of size 1."""
    return g if keepdim else _reshape(g, _keep_shape(tuple(sizes), axes))


def _where(cond, x, y):
    if isinstance(cond, Tensor) or isinstance(x, Tensor) or isinstance(y, Tensor):
        return where(cond, x, y)
    return np.where(cond, x, y)


def _isnan(x):
    return x != x


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


def _ones(t: Tensor) -> Tensor:
    """Ones shaped like ``t``: the output gradient whose VJP is the partial derivatives."""
    return _wrap(np.ones(t._data.shape, t._data.dtype))


def _positions(n: int, ndim: int, axis: int) -> np.ndarray:
    """``arange(n)`` laid along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = n
    return np.arange(n).reshape(shape)


# -- sum, nansum, mean ---------------------------------------------------------------------


def _half(dt: np.dtype) -> bool:
    """float16 or bfloat16 (ml_dtypes' kind "V"): reductions accumulate in float32."""
    return dt.itemsize == 2 and dt.kind in "fV"


def _sum_array(a: np.ndarray, axes, keepdim: bool, nan: bool = False):
    fn = np.nansum if nan else np.sum
    if _half(a.dtype):  # float16/bfloat16 accumulate in float32, as torch does
        return np.asarray(fn(a, axis=axes, keepdims=keepdim, dtype=np.float32), a.dtype)
    return fn(a, axis=axes, keepdims=keepdim, dtype=a.dtype)


# -- batching rules (vmap): the op on a leading batch dimension ----------------------------------


def _bdims(x: Tensor, dim) -> tuple:
    """Reduction dims of a batched ``x`` (its logical dims one to the right; () = all)."""
    return tuple(d + 1 for d in dim) if dim else tuple(range(1, x.dim()))


def _batched_reduce(x: Tensor, dim, keepdim: bool, op: str) -> Tensor:
    dims = _bdims(x, dim)
    return getattr(x, op)(dims, keepdim) if dims else x.clone()


SumBackward0 = defop(  # sum()
    "SumBackward0",
    batch=lambda x, self_sym_sizes: _batched_reduce(x, (), False, "sum"),
    params=("self_sym_sizes",),
    forward=lambda a, self_sym_sizes: _sum_array(a, None, False),
    vjp={"self": lambda g, self_sym_sizes: _expand(g, self_sym_sizes)},
    jvp=LINEAR,
)

SumBackward1 = defop(  # sum(dim)
    "SumBackward1",
    batch=lambda x, dim, keepdim, self_sym_sizes: _batched_reduce(x, dim, keepdim, "sum"),
    params=("dim", "keepdim", "self_sym_sizes"),
    forward=lambda a, dim, keepdim, self_sym_sizes: _sum_array(a, dim, keepdim),
    vjp={
        "self": lambda g, dim, keepdim, self_sym_sizes: _expand(
            _keepdims(g, dim, keepdim, self_sym_sizes), self_sym_sizes
        )
    },
    jvp=LINEAR,
)


@register("sum", method=True)
def sum(input, dim=_UNSET, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):  # noqa: A001
    """Sum over ``dim`` (int, tuple or None for all); ints and bools sum to int64.

    Example:
        >>> import ember
        >>> x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> ember.sum(x), x.sum(0), x.sum(1, keepdim=True).shape
        (tensor(10.), tensor([4., 6.]), torch.Size([2, 1]))
    """
    require_tensor(input, "sum")
    if axis is not None or keepdims is not None:
        dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dtype is not None or a.dtype.kind in "biu":  # (the test keeps float sums quick)
        a = _accumulated(input, dtype)
    token = quiet_set(QUIET)  # overflow to inf is silent in torch
    try:
        if dim is _UNSET:
            res = _sum_array(a, None, False)
        else:
            axes = _axes(a.ndim, dim)
            keepdim = _b.bool(keepdim)
            res = _sum_array(a, axes, keepdim)
    finally:
        quiet_reset(token)
    if dim is _UNSET:
        t = record(SumBackward0, res, (input,), (a.shape,))
    else:
        t = record(SumBackward1, res, (input,), (axes, keepdim, a.shape))
    return t if out is None else write_out("sum", t, out)


NansumBackward0 = defop(
    "NansumBackward0",
    params=("dim", "keepdim"),
    forward=lambda a, dim, keepdim: _sum_array(a, dim, keepdim, nan=True),
    vjp={
        "self": lambda g, self, dim, keepdim: (
            _keepdims(g, dim, keepdim, self.shape) * (self == self)
        )
    },
    jvp=lambda t_self, self, dim, keepdim: _sum_dims(
        _where(self == self, t_self, 0.0), dim, keepdim
    ),
)


@register("nansum", method=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Sum treating NaN as zero.

    Example:
        >>> import ember
        >>> ember.nansum(ember.tensor([1.0, float("nan"), 2.0]))
        tensor(3.)
    """
    require_tensor(input, "nansum")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = _accumulated(input, dtype)
    axes = _axes(a.ndim, dim)
    token = quiet_set(QUIET)
    try:
        res = _sum_array(a, axes, keepdim, nan=True)
    finally:
        quiet_reset(token)
    return write_out("nansum", record(NansumBackward0, res, (input,), (axes, keepdim)), out)


def _mean_array(a: np.ndarray, axes, keepdim: bool) -> np.ndarray:
    n = a.size if axes is None else _count(a.shape, axes)
    acc = np.float32 if _half(a.dtype) else None
    s = np.sum(a, axis=axes, keepdims=keepdim, dtype=acc)
    return np.asarray(s / n if n else s * np.nan, a.dtype)


MeanBackward0 = defop(  # mean()
    "MeanBackward0",
    batch=lambda x, sizes, numel: _batched_reduce(x, (), False, "mean"),
    params=("self_sym_sizes", "self_sym_numel"),
    forward=lambda a, self_sym_sizes, self_sym_numel: _mean_array(a, None, False),
    vjp={
        "self": lambda g, self_sym_sizes, self_sym_numel: _expand(
            g / self_sym_numel, self_sym_sizes
        )
    },
    jvp=LINEAR,
)


def _mean_backward(g, dim, keepdim, self_sym_sizes):
    g = _keepdims(g, dim, keepdim, self_sym_sizes)
    return _expand(g / _count(self_sym_sizes, dim), self_sym_sizes)


MeanBackward1 = defop(  # mean(dim)
    "MeanBackward1",
    batch=lambda x, dim, keepdim, sizes, numel: _batched_reduce(x, dim, keepdim, "mean"),
    params=("dim", "keepdim", "self_sym_sizes", "self_sym_numel"),
    forward=lambda a, dim, keepdim, self_sym_sizes, self_sym_numel: _mean_array(a, dim, keepdim),
    vjp={
        "self": lambda g, dim, keepdim, self_sym_sizes: _mean_backward(
            g, dim, keepdim, self_sym_sizes
        )
    },
    jvp=LINEAR,
)


@register("mean", method=True)
def mean(input, dim=_UNSET, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Arithmetic mean over ``dim``; integer inputs need ``dtype=`` (torch's rule).

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 2.0], [3.0, 4.0]]).mean(0)
        tensor([2., 3.])
    """
    require_tensor(input, "mean")
    if axis is not None or keepdims is not None:
        dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dtype is not None:
        nd = _np_dtype(dtype)
        if nd.kind not in "fcV":
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a floating "
                f"point or complex dtype. Got: {_scalar_name(nd)}"
            )
        a = a.astype(nd, copy=False)
    elif a.dtype.kind not in "fcV":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_name(a.dtype)}"
        )
    token = quiet_set(QUIET)  # the mean of nothing is NaN, silently
    try:
        if dim is _UNSET:
            res = _mean_array(a, None, False)
        else:
            axes = _axes(a.ndim, dim)
            keepdim = _b.bool(keepdim)
            res = _mean_array(a, axes, keepdim)
    finally:
        quiet_reset(token)
    if dim is _UNSET:
        t = record(MeanBackward0, res, (input,), (a.shape, a.size))
    else:
        t = record(MeanBackward1, res, (input,), (axes, keepdim, a.shape, a.size))
    return t if out is None else write_out("mean", t, out)


# -- prod ------------------------------------------------------------------------------------


def _prod_safe_zeros(a: np.ndarray, axis: int) -> np.ndarray:
    """The product of the other elements along ``axis``, exact with zeros (arrays)."""
    if a.size == 0:
        return np.ones(a.shape, a.dtype)
    ones_shape = list(a.shape)
    ones_shape[axis] = 1
    ones = np.ones(ones_shape, a.dtype)
    n = a.shape[axis]
    head = np.take(a, range(n - 1), axis=axis)
    excl_fwd = np.cumprod(np.concatenate([ones, head], axis=axis), axis=axis)
    tail = np.flip(np.take(a, range(1, n), axis=axis), axis=axis)
    excl_rev = np.flip(np.cumprod(np.concatenate([ones, tail], axis=axis), axis=axis), axis=axis)
    return excl_fwd * excl_rev


def _others_product_tensor(x: Tensor, axis: int) -> Tensor:
    """The product of the other elements along ``axis``, with ember ops: each element's is
    the product with that element replaced by one, so every order of derivative is exact."""
    n = x.shape[axis]
    pos = _positions(n, x.ndim, axis)
    res = None
    for i in range(n):
        onehot = _wrap(pos == i)
        col = prod(where(onehot, 1.0, x), axis, keepdim=True) * onehot
        res = col if res is None else res + col
    return res


def _others_product(x, result, axis):
    """d prod(x) / dx: the product of the other elements along ``axis`` (of every element
    when None), ``result`` having the reduced dims kept. ``result / x`` without zeros."""
    if not (_raw(x) == 0).any():
        return result / x
    if is_raw(x):
        if axis is None:
            return _prod_safe_zeros(x.reshape(-1), 0).reshape(x.shape)
        return _prod_safe_zeros(x, axis)
    if axis is None:
        return _others_product_tensor(x.reshape(-1), 0).reshape(x.shape)
    return _others_product_tensor(x, axis)


def _prod_all_vjp(g, self, result):
    return g if self.ndim == 0 else g * cconj(_others_product(self, result, None))


def _prod_all_jvp(t_self, self, result):
    if self.ndim == 0:
        return t_self
    return sum(t_self * _others_product(self, result, None))


ProdBackward0 = defop(  # prod()
    "ProdBackward0",
    forward=lambda a: _prod_array(a, None, False),
    vjp={"self": _prod_all_vjp},
    jvp=_prod_all_jvp,
)


def _prod_dim_vjp(g, self, result, dim, keepdim):
    if self.ndim == 0:
        return g
    g = _keepdims(g, (dim,), keepdim, self.shape)
    return g * cconj(_others_product(self, _keepdims(result, (dim,), keepdim, self.shape), dim))


def _prod_dim_jvp(t_self, self, result, dim, keepdim):
    if self.ndim == 0:
        return t_self
    partials = _others_product(self, _keepdims(result, (dim,), keepdim, self.shape), dim)
    return sum(t_self * partials, dim, keepdim)


ProdBackward1 = defop(  # prod(dim)
    "ProdBackward1",
    params=("dim", "keepdim"),
    forward=lambda a, dim, keepdim: _prod_array(a, (dim,) if a.ndim else (), keepdim),
    vjp={"self": _prod_dim_vjp},
    jvp=_prod_dim_jvp,
)


def _prod_array(a: np.ndarray, axes, keepdim: bool) -> np.ndarray:
    return _arr(np.prod(a, axis=axes, keepdims=keepdim, dtype=a.dtype), a.dtype)


@register("prod", method=True)
def prod(input, dim=_UNSET, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Product of all elements, or over one ``dim``; ints and bools give int64.

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1)
        tensor([ 2., 12.])
    """
    require_tensor(input, "prod")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = _accumulated(input, dtype)
    if dim is _UNSET:
        token = quiet_set(QUIET)
        try:
            res = _prod_array(a, None, False)
        finally:
            quiet_reset(token)
        return write_out("prod", record(ProdBackward0, res, (input,)), out)
    ax = _single_axis(a.ndim, dim, "prod")
    axes = () if ax is None else (ax,)
    token = quiet_set(QUIET)
    try:
        res = _prod_array(a, axes, keepdim)
    finally:
        quiet_reset(token)
    t = record(ProdBackward1, res, (input,), (0 if ax is None else ax, keepdim))
    return write_out("prod", t, out)


# -- max, min, amax, amin, aminmax, median, argmax, argmin ---------------------------------


def _evenly_mask(x, value):
    """Where ``x`` equals the selected ``value`` (NaN matching NaN)."""
    return (x == value) | (_isnan(x) & _isnan(value))


def _evenly_vjp(g, self, result):
    """torch's gradient for max()/min()/median(): shared evenly by the tied elements."""
    mask = _evenly_mask(self, result)
    return mask * (g / mask.sum())


def _evenly_jvp(t_self, self, result):
    mask = _evenly_mask(self, result)
    return (mask * t_self).sum() / mask.sum()


MaxBackward1 = defop(  # max()
    "MaxBackward1", forward=np.max, vjp={"self": _evenly_vjp}, jvp=_evenly_jvp
)
MinBackward1 = defop(  # min()
    "MinBackward1", forward=np.min, vjp={"self": _evenly_vjp}, jvp=_evenly_jvp
)
MedianBackward0 = defop("MedianBackward0", vjp={"self": _evenly_vjp}, jvp=_evenly_jvp)


def _select_vjp(grads, indices, dim, keepdim, self_sym_sizes):
    """The gradient of values picked by index along ``dim``: written at those indices
    (``indices`` has the reduced dim kept)."""
    g = grads[0]
    if g is None or not self_sym_sizes:
        return g
    onehot = _positions(self_sym_sizes[dim], len(self_sym_sizes), dim) == indices
    return (g if keepdim else g.reshape(indices.shape)) * onehot


def _select_jvp(t_self, indices, dim, keepdim, self_sym_sizes):
    """The tangent at the picked indices (the indices output gets none)."""
    if not self_sym_sizes:
        return [t_self, None]
    picked = gather(t_self, dim, _wrap(indices))
    return [picked if keepdim else picked.squeeze(dim), None]


def _select_op(name: str, forward=None):
    """Declare a node for ``(values, indices)`` picked along one dim (max/min/median(dim),
    and for other families kthvalue, mode...), recorded by ``_select_result``; ``forward``
    (array, dim, keepdim, self_sym_sizes) -> (values, indices, saved indices)."""
    return defop(
        name,
        forward=forward,
        outputs=("values", "indices_out"),
        differentiable=(True, False),
        params=("dim", "keepdim", "self_sym_sizes"),
        # the indices with the reduced dim kept (a copy when a gradient is needed, so that
        # changing the returned indices in place cannot change the gradient)
        saves=("indices",),
        vjp={"self": _select_vjp},
        jvp=_select_jvp,
    )


def _minmax_dim_array(a, ax: int, keepdim: bool, is_max: bool):
    """max/min(dim)'s values and indices of the array ``a`` (0-d: itself, index 0)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = np.argmax(a, axis=ax, keepdims=True) if is_max else np.argmin(a, axis=ax, keepdims=True)
    values = np.take_along_axis(a, idx, axis=ax)
    indices = idx.astype(np.int64, copy=False)
    if not keepdim:
        values, indices = values.squeeze(ax), indices.squeeze(ax)
    return values, indices


def _select_forward(pick):
    """The declared forward of a ``_select_op`` whose ``pick(a, dim, keepdim)`` gives
    (values, indices): those, and the indices with the dim kept (a copy: the returned
    indices may be changed in place)."""

    def forward(a, dim, keepdim, self_sym_sizes):
        values, indices = pick(a, dim, keepdim)
        kept = indices if keepdim or a.ndim == 0 else np.expand_dims(indices, dim)
        return values, indices, kept.copy()

    return forward


def _median_dim_array(a, ax: int, keepdim: bool):
    """median(dim)'s values and indices of the array ``a`` (0-d: itself, index 0)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    if a.size == 0:
        shape = _keep_shape(a.shape, (ax,))
        values, indices = np.empty(shape, a.dtype), np.empty(shape, np.int64)
    else:
        values, indices = _median_along(a, ax)
    if not keepdim:
        values, indices = values.squeeze(ax), indices.squeeze(ax)
    return values, indices


MaxBackward0 = _select_op(  # max(dim)
    "MaxBackward0", _select_forward(lambda a, ax, kd: _minmax_dim_array(a, ax, kd, True))
)
MinBackward0 = _select_op(  # min(dim)
    "MinBackward0", _select_forward(lambda a, ax, kd: _minmax_dim_array(a, ax, kd, False))
)
MedianBackward1 = _select_op("MedianBackward1", _select_forward(_median_dim_array))


def _select_result(cls, rtype, input, a, values, indices, ax):
    """Wrap ``(values, indices)`` of a reduction along ``ax`` (None for a 0-d ``a``) in
    ``rtype`` and record ``cls``, a node declared by ``_select_op``."""
    keepdim = ax is None or np.ndim(values) == a.ndim
    saved = indices if keepdim else indices.reshape(_keep_shape(a.shape, (ax,)))
    if needs_grad(input):
        saved = saved.copy()
    params = (0 if ax is None else ax, keepdim, a.shape)
    values_t, indices_t = record_multi(cls, [values, indices], (input,), params, (saved,))
    return rtype((values_t, indices_t))


def _minmax_dim(input, dim, keepdim, fname: str, is_max: bool):
    a = input._data
    ax = _single_axis(a.ndim, dim, fname)
    if ax is not None:
        _check_nonempty(a, (ax,), fname, True)
    values, indices = _minmax_dim_array(a, 0 if ax is None else ax, keepdim, is_max)
    cls = MaxBackward0 if is_max else MinBackward0
    rtype = return_types.max if is_max else return_types.min
    return _select_result(cls, rtype, input, a, values, indices, ax)


def _minmax(input, dim, keepdim, other, axis, keepdims, out, is_max: bool):
    fname = "max" if is_max else "min"
    require_tensor(input, fname)
    if isinstance(dim, Tensor):
        other, dim = dim, _UNSET
    if other is not None:
        return (maximum if is_max else minimum)(input, other, out=out)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    if dim is _UNSET:
        if keepdim:
            raise TypeError(
                f"{fname}() received an invalid combination of arguments - got (keepdim=bool, )"
            )
        a = input._data
        _check_nonempty(a, (), fname, False)
        res = a.max() if is_max else a.min()
        t = record(MaxBackward1 if is_max else MinBackward1, res, (input,))
        return write_out(fname, t, out)
    return _minmax_dim(input, dim, keepdim, fname, is_max)


@register("max", method=True)
def max(input, dim=_UNSET, keepdim=False, *, other=None, axis=None, keepdims=None, out=None):  # noqa: A001
    """Largest element; with ``dim``, ``(values, indices)``; with a tensor, ``maximum``.

    Example:
        >>> import ember
        >>> x = ember.tensor([[1.0, 5.0], [4.0, 2.0]])
        >>> x.max()
        tensor(5.)
        >>> x.max(0).indices
        tensor([1, 0])
    """
    return _minmax(input, dim, keepdim, other, axis, keepdims, out, True)


@register("min", method=True)
def min(input, dim=_UNSET, keepdim=False, *, other=None, axis=None, keepdims=None, out=None):  # noqa: A001
    """Smallest element; with ``dim``, ``(values, indices)``; with a tensor, ``minimum``.

    Example:
        >>> import ember
        >>> ember.tensor([3.0, 1.0, 2.0]).min()
        tensor(1.)
    """
    return _minmax(input, dim, keepdim, other, axis, keepdims, out, False)


def _amax_vjp(g, self, result, dim, keepdim):
    """torch's amax/amin rule: split evenly between the elements equal to the result."""
    mask = self == _keepdims(result, dim, keepdim, self.shape)
    return (_keepdims(g, dim, keepdim, self.shape) / _sumk(mask, dim)) * mask


def _amax_jvp(t_self, self, result, dim, keepdim):
    mask = self == _keepdims(result, dim, keepdim, self.shape)
    return _sum_dims(_where(mask, t_self, 0.0), dim, keepdim) / _sum_dims(mask, dim, keepdim)


AmaxBackward0 = defop(
    "AmaxBackward0",
    params=("dim", "keepdim"),
    forward=lambda a, dim, keepdim: np.max(a, axis=dim, keepdims=keepdim),
    vjp={"self": _amax_vjp},
    jvp=_amax_jvp,
)
AminBackward0 = defop(
    "AminBackward0",
    params=("dim", "keepdim"),
    forward=lambda a, dim, keepdim: np.min(a, axis=dim, keepdims=keepdim),
    vjp={"self": _amax_vjp},
    jvp=_amax_jvp,
)


def _amaxmin(input, dim, keepdim, axis, keepdims, out, is_max: bool):
    fname = "amax" if is_max else "amin"
    require_tensor(input, fname)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    given = not (dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0))
    empty = _first_empty_dim(a, dim) if given else None
    if empty is not None:
        raise IndexError(f"{fname}(): Expected reduction dim {empty} to have non-zero size.")
    axes = _axes(a.ndim, dim)
    _check_nonempty(a, axes, fname, given)
    cls = AmaxBackward0 if is_max else AminBackward0
    t = record(cls, cls.forward(a, axes, keepdim), (input,), (axes, keepdim))
    return write_out(fname, t, out)


@register("amax", method=True)
def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None, out=None):
    """Maximum over ``dim`` (all by default); the gradient is shared between ties.

    Example:
        >>> import ember
        >>> ember.amax(ember.tensor([[1.0, 5.0], [4.0, 2.0]]), 1)
        tensor([5., 4.])
    """
    return _amaxmin(input, dim, keepdim, axis, keepdims, out, True)


@register("amin", method=True)
def amin(input, dim=(), keepdim=False, *, axis=None, keepdims=None, out=None):
    """Minimum over ``dim`` (all by default); the gradient is shared between ties."""
    return _amaxmin(input, dim, keepdim, axis, keepdims, out, False)


def _aminmax_vjp(grads, self, min, max, dim, keepdim):
    g_min, g_max = grads
    total = None
    if g_min is not None:
        total = _amax_vjp(g_min, self, min, dim, keepdim)
    if g_max is not None:
        gm = _amax_vjp(g_max, self, max, dim, keepdim)
        total = gm if total is None else total + gm
    return total


def _aminmax_forward(a, dim, keepdim):
    mn = _arr(np.min(a, axis=dim, keepdims=keepdim), a.dtype)
    mx = _arr(np.max(a, axis=dim, keepdims=keepdim), a.dtype)
    return mn, mx, mn.copy(), mx.copy()


AminmaxBackward0 = defop(
    "AminmaxBackward0",
    outputs=("result0", "result1"),
    params=("dim", "keepdim"),
    forward=_aminmax_forward,
    # the results' arrays (copies when a gradient is needed, as for the select ops)
    saves=("min", "max"),
    vjp={"self": _aminmax_vjp},
    jvp=lambda t_self, self, min, max, dim, keepdim: [
        _amax_jvp(t_self, self, min, dim, keepdim),
        _amax_jvp(t_self, self, max, dim, keepdim),
    ],
)


@register("aminmax", method=True)
def aminmax(input, *, dim=None, keepdim=False, axis=None, keepdims=None):
    """``(min, max)`` over ``dim`` (or everything) as ``torch.return_types.aminmax``.

    Example:
        >>> import ember
        >>> ember.aminmax(ember.tensor([3.0, 1.0, 2.0]))
        torch.return_types.aminmax(
        min=tensor(1.),
        max=tensor(3.))
    """
    require_tensor(input, "aminmax")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dim is None:
        if a.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation "
                "has no identity."
            )
        axes = tuple(range(a.ndim))
    else:
        ax = _single_axis(a.ndim, dim, "aminmax", pos="")
        axes = () if ax is None else (ax,)
        _check_nonempty(a, axes, "aminmax", True, sep="")
    mn, mx, *saved = _aminmax_forward(a, axes, keepdim)
    mn_t, mx_t = record_multi(AminmaxBackward0, [mn, mx], (input,), (axes, keepdim), saved)
    return return_types.aminmax((mn_t, mx_t))


def _median_along(a: np.ndarray, ax: int):
    """Lower median and its index along ``ax`` (NaN wins, as in torch), keepdims."""
    n = a.shape[ax]
    order = np.argsort(a, axis=ax, kind="stable")
    if a.dtype.kind in "fcV":
        nan_count = np.sum(a != a, axis=ax, keepdims=True)
        pos = np.where(nan_count > 0, n - nan_count, (n - 1) // 2)
    else:
        pos = np.full(_keep_shape(a.shape, (ax,)), (n - 1) // 2)
    idx = np.take_along_axis(order, pos, axis=ax)
    return np.take_along_axis(a, idx, axis=ax), idx.astype(np.int64, copy=False)


@register("median", method=True)
def median(input, dim=_UNSET, keepdim=False, *, axis=None, keepdims=None):
    """Lower median of all elements, or ``(values, indices)`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.tensor([4.0, 1.0, 3.0, 2.0]).median()
        tensor(2.)
    """
    require_tensor(input, "median")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dim is _UNSET:
        if a.dtype == np.bool_ and a.size:
            raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        if a.size == 0:
            res = np.full((), np.nan, a.dtype)
        else:
            res = _arr(_median_along(a.reshape(-1), 0)[0].reshape(()), a.dtype)
        return record(MedianBackward0, res, (input,))
    ax = _single_axis(a.ndim, dim, "median")
    if ax is not None:
        _check_nonempty(a, (ax,), "median", True)
    if a.dtype == np.bool_ and (a.size or ax is None or a.shape[ax]):
        raise NotImplementedError("\"median_out\" not implemented for 'Bool'")
    values, indices = _median_dim_array(a, 0 if ax is None else ax, keepdim)
    return _select_result(MedianBackward1, return_types.median, input, a, values, indices, ax)


def _argmaxmin(input, dim, keepdim, axis, keepdims, is_max: bool):
    fname = "argmax" if is_max else "argmin"
    require_tensor(input, fname)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dim is not None and not isinstance(dim, (int, np.integer)):
        _single_axis(a.ndim, dim, fname)  # raises torch's TypeError
    if a.dtype == np.bool_:
        raise RuntimeError(f"{fname}(): does not support bool input")
    fn = np.argmax if is_max else np.argmin
    if dim is None:
        if a.size == 0:
            raise IndexError(
                f"{fname}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        res = np.asarray(fn(a.reshape(-1)), np.int64)
        if keepdim:
            res = res.reshape((1,) * a.ndim)
        return _wrap(res)
    ax = _single_axis(a.ndim, dim, fname)
    if ax is None:
        return _wrap(np.zeros((), np.int64))
    _check_nonempty(a, (ax,), fname, True)
    return _wrap(_arr(fn(a, axis=ax, keepdims=keepdim), np.int64))


@register("argmax", method=True)
def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the largest element (of the flattened tensor when ``dim`` is None).

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 5.0], [4.0, 2.0]]).argmax(1)
        tensor([1, 0])
    """
    return _argmaxmin(input, dim, keepdim, axis, keepdims, True)


@register("argmin", method=True)
def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    return _argmaxmin(input, dim, keepdim, axis, keepdims, False)


# -- std, var, var_mean, std_mean -----------------------------------------------------------
# ``dim`` is None when no dim was given (torch's rule for too few degrees of freedom
# differs then), else the normalised axes.


def _correction(unbiased, correction, fname: str) -> float:
    if unbiased is not None and correction is not None:
        raise TypeError(
            f"{fname}() received an invalid combination of arguments - got (correction=int, "
            "unbiased=bool, )"
        )
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _var_setup(input, dim, unbiased, keepdim, correction, axis, keepdims, fname):
    require_tensor(input, fname)
    if isinstance(dim, _b.bool):  # std(True): the legacy ``unbiased`` overload
        dim, unbiased = None, dim
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if a.dtype.kind not in "fcV":
        what = "std and var" if fname in ("std", "var") else fname
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    c = _correction(unbiased, correction, fname)
    axes = _axes(a.ndim, dim)
    n = _count(a.shape, axes)
    if n - c <= 0:
        _dof_warning(fname)
    params = (None if dim is None or dim is _UNSET else axes, c, keepdim)
    return a, axes, keepdim, n, params


def _var_array(a, axes, keepdim, c, n):
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        v, m = _var_array(a.astype(np.float32), axes, keepdim, c, n)
        return _arr(v, a.dtype), m.astype(a.dtype)
    m = _mean_array(a, axes, True)
    d = a - m
    sq = (d * np.conj(d)).real if a.dtype.kind == "c" else d * d
    acc = np.float32 if a.dtype == np.float16 else None
    v = np.sum(sq, axis=axes, keepdims=keepdim, dtype=acc) / _b.max(0, n - c)
    real = sq.dtype if a.dtype.kind == "c" else a.dtype
    return _arr(v, real), (m if keepdim else m.reshape(np.shape(v)))


def _all_axes(dim, ndim: int) -> tuple:
    return tuple(range(ndim)) if dim is None else dim


def _var_vjp(g, self, dim, correction, keepdim):
    shape = tuple(self.shape)
    axes = _all_axes(dim, len(shape))
    n = _count(shape, axes)
    g = _keepdims(g, axes, keepdim, shape)
    mean_x = _sumk(self, axes) / n if len(shape) else self
    dof = n - correction
    if dim is None and dof <= 0:
        return g * np.where(_raw(self == mean_x), np.nan, np.inf)
    scale = 2.0 / dof if dof != 0 else math.inf
    return (g * scale) * (self - mean_x)


def _real_of_complex_tangent(t_self, partials):
    """The tangent of a real function of ``x`` from its gradient ``partials`` (torch's
    convention): ``Re(conj(partials) * t)``, ``partials * t`` for real values."""
    d = t_self * cconj(partials)
    if d.dtype.kind == "c" if is_raw(d) else d.is_complex():
        return d.real
    return d


def _var_jvp(t_self, self, result, dim, correction, keepdim):
    partials = _var_vjp(_ones(result), self, dim, correction, keepdim)
    d = _real_of_complex_tangent(t_self, partials)
    return _sum_dims(d, _all_axes(dim, self.ndim), keepdim)


def _std_to_var(g, std):
    """A gradient (or tangent) of std as one of var: ``g / (2 std)``, zero where std is."""
    return _where(std == 0, 0, g / (std * 2))


def _var_forward(a, dim, correction, keepdim):
    axes = _all_axes(dim, a.ndim)
    return _var_array(a, axes, keepdim, correction, _count(a.shape, axes))[0]


VarBackward0 = defop(
    "VarBackward0",
    params=("dim", "correction", "keepdim"),
    forward=_var_forward,
    vjp={"self": _var_vjp},
    jvp=_var_jvp,
)

StdBackward0 = defop(
    "StdBackward0",
    params=("dim", "correction", "keepdim"),
    forward=lambda a, dim, correction, keepdim: np.sqrt(_var_forward(a, dim, correction, keepdim)),
    vjp={
        "self": lambda g, self, result, dim, correction, keepdim: _var_vjp(
            _std_to_var(g, result), self, dim, correction, keepdim
        )
    },
    jvp=lambda t_self, self, result, dim, correction, keepdim: _std_to_var(
        _var_jvp(t_self, self, result, dim, correction, keepdim), result
    ),
)


@register("var", method=True)
def var(
    input,
    dim=None,
    unbiased=None,
    keepdim=False,
    *,
    correction=None,
    axis=None,
    keepdims=None,
    out=None,
):
    """Variance over ``dim`` with Bessel's ``correction`` (1 unless ``unbiased=False``).

    Example:
        >>> import ember
        >>> ember.tensor([1.0, 2.0, 3.0, 4.0]).var()
        tensor(1.6667)
    """
    a, axes, keepdim, n, params = _var_setup(
        input, dim, unbiased, keepdim, correction, axis, keepdims, "var"
    )
    token = quiet_set(QUIET)
    try:
        v, _ = _var_array(a, axes, keepdim, params[1], n)
    finally:
        quiet_reset(token)
    return write_out("var", record(VarBackward0, v, (input,), params), out)


@register("std", method=True)
def std(
    input,
    dim=None,
    unbiased=None,
    keepdim=False,
    *,
    correction=None,
    axis=None,
    keepdims=None,
    out=None,
):
    """Standard deviation over ``dim`` (``sqrt`` of ``var``).

    Example:
        >>> import ember
        >>> ember.tensor([1.0, 2.0, 3.0, 4.0]).std(correction=0)
        tensor(1.1180)
    """
    a, axes, keepdim, n, params = _var_setup(
        input, dim, unbiased, keepdim, correction, axis, keepdims, "std"
    )
    token = quiet_set(QUIET)
    try:
        v, _ = _var_array(a, axes, keepdim, params[1], n)
        res = np.sqrt(v)
    finally:
        quiet_reset(token)
    return write_out("std", record(StdBackward0, res, (input,), params), out)


def _mean_part(gm, self, dim, keepdim):
    """The mean's share of var_mean's/std_mean's gradient."""
    shape = tuple(self.shape)
    axes = _all_axes(dim, len(shape))
    return _mean_backward(gm, axes, keepdim, shape)


def _mean_tangent(t_self, dim, keepdim):
    axes = _all_axes(dim, t_self.ndim)
    return _sum_dims(t_self, axes, keepdim) / _count(tuple(t_self.shape), axes)


def _var_mean_vjp(grads, self, dim, correction, keepdim):
    gv, gm = grads
    total = None if gv is None else _var_vjp(gv, self, dim, correction, keepdim)
    if gm is not None:
        m = _mean_part(gm, self, dim, keepdim)
        total = m if total is None else total + m
    return total


def _std_mean_vjp(grads, self, result0, dim, correction, keepdim):
    gs, gm = grads
    return _var_mean_vjp(
        [None if gs is None else _std_to_var(gs, result0), gm], self, dim, correction, keepdim
    )


def _var_mean_forward(take_sqrt: bool):
    def forward(a, dim, correction, keepdim):
        axes = _all_axes(dim, a.ndim)
        v, m = _var_array(a, axes, keepdim, correction, _count(a.shape, axes))
        return (np.sqrt(v) if take_sqrt else v), _arr(m, a.dtype)

    return forward


VarMeanBackward0 = defop(
    "VarMeanBackward0",
    outputs=("result0", "result1"),
    params=("dim", "correction", "keepdim"),
    forward=_var_mean_forward(False),
    vjp={"self": _var_mean_vjp},
    jvp=lambda t_self, self, result0, dim, correction, keepdim: [
        _var_jvp(t_self, self, result0, dim, correction, keepdim),
        _mean_tangent(t_self, dim, keepdim),
    ],
)

StdMeanBackward0 = defop(
    "StdMeanBackward0",
    outputs=("result0", "result1"),
    params=("dim", "correction", "keepdim"),
    forward=_var_mean_forward(True),
    vjp={"self": _std_mean_vjp},
    jvp=lambda t_self, self, result0, dim, correction, keepdim: [
        _std_to_var(_var_jvp(t_self, self, result0, dim, correction, keepdim), result0),
        _mean_tangent(t_self, dim, keepdim),
    ],
)


def _var_mean(input, dim, unbiased, keepdim, correction, axis, keepdims, take_sqrt: bool):
    fname = "std_mean" if take_sqrt else "var_mean"
    _, _, _, _, params = _var_setup(
        input, dim, unbiased, keepdim, correction, axis, keepdims, fname
    )
    cls = StdMeanBackward0 if take_sqrt else VarMeanBackward0
    first, second = run(cls, (input,), (input._data,), params)
    return first, second


@register("var_mean")
def var_mean(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """``(var, mean)`` over ``dim`` in one pass.

    Example:
        >>> import ember
        >>> ember.var_mean(ember.tensor([1.0, 2.0, 3.0]))
        (tensor(1.), tensor(2.))
    """
    return _var_mean(input, dim, unbiased, keepdim, correction, axis, keepdims, False)


@register("std_mean")
def std_mean(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """``(std, mean)`` over ``dim`` in one pass."""
    return _var_mean(input, dim, unbiased, keepdim, correction, axis, keepdims, True)


# -- norm -------------------------------------------------------------------------------------


def _norm_vjp(g, self, result, ord, dim, keepdim):
    p = ord
    if p == 0:
        return None
    x = self
    g = _keepdims(g, dim, keepdim, x.shape)
    norm = _keepdims(result, dim, keepdim, x.shape)
    if p == 1:
        return sgn(x) * g
    if p == 2:
        return g * _where(norm == 0, 0, x / norm)
    if math.isinf(p):
        ax = np.abs(x)
        mask = (ax == norm) | _isnan(ax)
        return sgn(x) * ((g / _sumk(mask, dim)) * mask)
    if p < 1:
        scaled = sgn(x) * _where(x == 0, 0, np.abs(x) ** (p - 1))
        return scaled * g * norm ** (1 - p)
    if p < 2:
        scaled = sgn(x) * np.abs(x) ** (p - 1)
    else:
        scaled = x * np.abs(x) ** (p - 2)
    return scaled * _where(norm == 0, 0, g / norm ** (p - 1))


def _norm_jvp(t_self, self, result, ord, dim, keepdim):
    partials = _norm_vjp(_ones(result), self, result, ord, dim, keepdim)
    if partials is None:
        return None
    return _sum_dims(_real_of_complex_tangent(t_self, partials), dim, keepdim)


LinalgVectorNormBackward0 = defop(
    "LinalgVectorNormBackward0",
    params=("ord", "dim", "keepdim"),
    forward=lambda a, ord, dim, keepdim: _vector_norm_array(a, ord, dim, keepdim),
    vjp={"self": _norm_vjp},
    jvp=_norm_jvp,
)


def _vector_norm_array(a: np.ndarray, p: float, axes: tuple, keepdim: bool) -> np.ndarray:
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        return _vector_norm_array(a.astype(np.float32), p, axes, keepdim).astype(a.dtype)
    ab = np.abs(a)
    real = ab.dtype
    if p == 2:
        r = np.sqrt(np.sum(ab * ab, axis=axes, keepdims=keepdim))
    elif p == 1:
        r = np.sum(ab, axis=axes, keepdims=keepdim)
    elif p == math.inf:
        r = np.max(ab, axis=axes, keepdims=keepdim)
    elif p == -math.inf:
        r = np.min(ab, axis=axes, keepdims=keepdim)
    elif p == 0:
        r = np.sum(ab != 0, axis=axes, keepdims=keepdim)
    else:
        r = np.sum(ab**p, axis=axes, keepdims=keepdim) ** (1.0 / p)
    return _arr(r, real)


def _format_order(p: float) -> str:
    if math.isinf(p):
        return "inf" if p > 0 else "-inf"
    return str(int(p)) if p.is_integer() else repr(p)


def _vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.vector_norm`` (node ``LinalgVectorNormBackward0``)."""
    require_tensor(input, "linalg.vector_norm")
    a = input._data
    if a.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_scalar_name(a.dtype)}"
        )
    src = input
    if dtype is not None:
        nd = _np_dtype(dtype)
        if nd != a.dtype:
            src = _to_copy(input, nd)
            a = src._data
    p = float(ord)
    if isinstance(dim, (tuple, list)) and not dim:
        dim = None
    if (p < 0 or p == math.inf) and a.size == 0:
        word = _format_order(p)
        if dim is None:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {word} norm on an empty tensor because "
                "the operation does not have an identity"
            )
        empty = _first_empty_dim(a, dim)
        if empty is not None:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {word} norm on the dimension {empty}"
                "because this dimension is empty and the operation does not have an identity"
            )
    axes = _axes(a.ndim, dim)
    keepdim = _b.bool(keepdim)
    token = quiet_set(QUIET)
    try:
        res = _vector_norm_array(a, p, axes, keepdim)
    finally:
        quiet_reset(token)
    return record(LinalgVectorNormBackward0, res, (src,), (p, axes, keepdim))


@register("norm", method=True)
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The vector p-norm over ``dim`` (all elements by default); ``'fro'`` is the 2-norm.

    Example:
        >>> import ember
        >>> ember.norm(ember.tensor([3.0, 4.0]))
        tensor(5.)
        >>> ember.tensor([[1.0, -2.0]]).norm(p=1, dim=1)
        tensor([3.])
    """
    require_tensor(input, "norm")
    if p is None or p == "fro":
        p = 2
    elif isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("ember: norm(p='nuc') (the nuclear norm) is not supported")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return write_out("norm", _vector_norm(input, p, dim, keepdim, dtype=dtype), out)


# -- logsumexp, softmax, log_softmax -------------------------------------------------------


def _missing_dim(fname: str):
    return TypeError(f'{fname}() missing 1 required positional arguments: "dim"')


def _logsumexp_partials(self, result, dim, keepdim):
    """d logsumexp / dx: the softmax of ``x`` over ``dim``."""
    return np.exp(self - _keepdims(result, dim, keepdim, self.shape))


def _logsumexp_array(a: np.ndarray, axes: tuple, keepdim: bool) -> np.ndarray:
    if a.dtype.kind not in "fcV":
        a = a.astype(default_float())
    if a.size == 0:
        return np.full(np.sum(a, axis=axes, keepdims=keepdim).shape, -np.inf, a.dtype)
    token = quiet_set(QUIET)
    try:
        m = np.max(a, axis=axes, keepdims=True)
        m = np.where(np.isinf(m), 0, m).astype(a.dtype, copy=False)
        s = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
    finally:
        quiet_reset(token)
    return _arr(s if keepdim else np.squeeze(s, axis=axes), a.dtype)


LogsumexpBackward0 = defop(
    "LogsumexpBackward0",
    params=("dim", "keepdim"),
    forward=_logsumexp_array,
    vjp={
        "self": lambda g, self, result, dim, keepdim: (
            _keepdims(g, dim, keepdim, self.shape)
            * cconj(_logsumexp_partials(self, result, dim, keepdim))
        )
    },
    jvp=lambda t_self, self, result, dim, keepdim: _sum_dims(
        t_self * _logsumexp_partials(self, result, dim, keepdim), dim, keepdim
    ),
)


@register("logsumexp", method=True)
def logsumexp(input, dim=_UNSET, keepdim=False, *, axis=None, keepdims=None, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the max).

    Example:
        >>> import ember
        >>> ember.logsumexp(ember.tensor([1000.0, 1000.0]), 0)
        tensor(1000.6932)
    """
    require_tensor(input, "logsumexp")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    if dim is _UNSET:
        raise _missing_dim("logsumexp")
    if dim is None:
        raise TypeError(
            "logsumexp(): argument 'dim' (position 1) must be tuple of ints, not NoneType"
        )
    a = input._data
    if a.dtype.kind not in "fcV":
        a = a.astype(default_float())
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and a.size and a.ndim:
        # torch's own logsumexp fails on an empty dim list (its result shape is wrong).
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * a.ndim}")
    axes = _axes(a.ndim, dim)
    t = record(LogsumexpBackward0, _logsumexp_array(a, axes, keepdim), (input,), (axes, keepdim))
    return write_out("logsumexp", t, out)


def _to_copy(input: Tensor, np_dtype) -> Tensor:
    """``input.to(dtype)``: recorded as ToCopyBackward0, as torch does for ``dtype=``."""
    return input.to(_dtype.from_numpy_dtype(np_dtype))


def _softmax_input(input, dim, dtype, fname: str):
    require_tensor(input, fname)
    if dim is _UNSET:
        raise _missing_dim(fname)
    if dtype is not None:
        nd = _np_dtype(dtype)
        if nd != input._data.dtype:
            input = _to_copy(input, nd)
    a = input._data
    ax = _single_axis(a.ndim, dim, fname)
    if a.dtype.kind not in "fcV" and a.size:
        kernel = "lastdim_kernel_impl" if ax is None or ax == a.ndim - 1 else "kernel_impl"
        raise NotImplementedError(
            f"\"{fname}_{kernel}\" not implemented for '{_scalar_name(a.dtype)}'"
        )
    return input, a, ax


def _softmax_array(a: np.ndarray, ax: int | None) -> np.ndarray:
    """softmax along ``ax`` (None: a 0-d tensor, one element)."""
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        return _softmax_array(a.astype(np.float32), ax).astype(a.dtype)
    if ax is None:
        return np.exp(a - a)
    e = np.exp(a - a.max(axis=ax, keepdims=True)) if a.size else np.exp(a)
    return e / e.sum(axis=ax, keepdims=True)


def _log_softmax_array(a: np.ndarray, ax: int | None) -> np.ndarray:
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        return _log_softmax_array(a.astype(np.float32), ax).astype(a.dtype)
    if ax is None:
        return a - a
    z = a - a.max(axis=ax, keepdims=True) if a.size else a
    return z - np.log(np.exp(z).sum(axis=ax, keepdims=True))


def _softmax_vjp(g, result, dim):
    # softmax's Jacobian diag(y) - y y^T is symmetric: this is also its JVP
    return result * (g - _sumk(g * result, (dim,)))


def _softmax_forward(a: np.ndarray, dim: int) -> np.ndarray:
    return _softmax_array(a, dim if a.ndim else None).astype(a.dtype, copy=False)


def _log_softmax_forward(a: np.ndarray, dim: int) -> np.ndarray:
    return _log_softmax_array(a, dim if a.ndim else None).astype(a.dtype, copy=False)


SoftmaxBackward0 = defop(
    "SoftmaxBackward0",
    batch=lambda x, dim: x.softmax(dim + 1) if x.dim() > 1 else (x - x).exp(),
    params=("dim",),
    forward=_softmax_forward,
    vjp={"self": _softmax_vjp},
    jvp=lambda t_self, result, dim: _softmax_vjp(t_self, result, dim),
)

LogSoftmaxBackward0 = defop(
    "LogSoftmaxBackward0",
    batch=lambda x, dim: x.log_softmax(dim + 1) if x.dim() > 1 else x - x,
    params=("dim",),
    forward=_log_softmax_forward,
    vjp={"self": lambda g, result, dim: g - np.exp(result) * _sumk(g, (dim,))},
    jvp=lambda t_self, result, dim: t_self - _sumk(np.exp(result) * t_self, (dim,)),
)


def _softmax_like(input, dim, dtype, axis, fname: str, cls, forward):
    if axis is not None:
        dim = axis
    src, a, ax = _softmax_input(input, dim, dtype, fname)
    token = quiet_set(QUIET)
    try:
        res = forward(a, ax)
    finally:
        quiet_reset(token)
    if res.dtype != a.dtype:
        res = res.astype(a.dtype)
    return record(cls, res, (src,), (0 if ax is None else ax,))


@register("softmax", method=True)
def softmax(input, dim=_UNSET, dtype=None, *, axis=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably.

    Example:
        >>> import ember
        >>> ember.softmax(ember.tensor([1.0, 1.0]), 0)
        tensor([0.5000, 0.5000])
    """
    return _softmax_like(input, dim, dtype, axis, "softmax", SoftmaxBackward0, _softmax_array)


@register("log_softmax", method=True)
def log_softmax(input, dim=_UNSET, dtype=None, *, axis=None):
    """``x - logsumexp(x)`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.log_softmax(ember.tensor([0.0, 0.0]), 0)
        tensor([-0.6931, -0.6931])
    """
    return _softmax_like(
        input, dim, dtype, axis, "log_softmax", LogSoftmaxBackward0, _log_softmax_array
    )


# -- cumsum, cumprod -------------------------------------------------------------------------


def _cumsum_array(a: np.ndarray, dim: int) -> np.ndarray:
    if a.ndim == 0:
        return a.copy()
    acc = np.float32 if _half(a.dtype) else a.dtype
    return _arr(np.cumsum(a, axis=dim, dtype=acc), a.dtype)


def _reverse_cumsum(g, dim: int):
    if is_raw(g):
        return np.flip(np.cumsum(np.flip(g, dim), dim), dim)
    return cumsum(g.flip(dim), dim).flip(dim)


def _cumsum_vjp(g, dim):
    if g.ndim == 0 or g.shape[dim] == 0:
        return g
    return _reverse_cumsum(g, dim)


CumsumBackward0 = defop(
    "CumsumBackward0",
    params=("dim",),
    forward=_cumsum_array,
    vjp={"self": _cumsum_vjp},
    jvp=LINEAR,
)


def _cumprod_grad_with_zeros(g: np.ndarray, x: np.ndarray, out: np.ndarray, ax: int):
    """cumprod's gradient where ``x`` has zeros along ``ax`` (no division by zero)."""
    gm = np.moveaxis(g, ax, -1).reshape(-1, x.shape[ax])
    xm = np.moveaxis(x, ax, -1).reshape(-1, x.shape[ax])
    om = np.moveaxis(out, ax, -1).reshape(-1, x.shape[ax])
    res = np.flip(np.cumsum(np.flip(gm * om, -1), -1), -1) / xm
    for r in np.nonzero((xm == 0).any(axis=1))[0]:
        row_x, row_g = xm[r], gm[r]
        z = int(np.argmax(row_x == 0))
        res[r, z:] = 0
        tail = np.cumprod(row_x[z + 1 :])
        res[r, z] = np.prod(row_x[:z]) * (row_g[z] + np.sum(row_g[z + 1 :] * tail))
    shape = np.moveaxis(x, ax, -1).shape
    return np.moveaxis(res.reshape(shape), -1, ax)


def _cumprod_columns(x: Tensor, dim: int):
    """For each position i along ``dim``: (one-hot of i, ``cumprod`` of ``x`` with ``x_i``
    replaced by one, from position i on); ember ops, so every order is exact with zeros."""
    n = x.shape[dim]
    pos = _positions(n, x.ndim, dim)
    for i in range(n):
        onehot = _wrap(pos == i)
        yield onehot, cumprod(where(onehot, 1.0, x), dim) * _wrap(pos >= i)


def _cumprod_vjp(g, self, result, dim):
    # torch's complex gradient: J^H g = conj(J^T conj(g)) (cumprod is holomorphic);
    # cconj returns real values unchanged.
    return cconj(_cumprod_transposed(cconj(g), self, result, dim))


def _cumprod_transposed(g, self, result, dim):
    """J^T g for the Jacobian J of cumprod (its vjp for real values)."""
    if self.ndim == 0 or self.shape[dim] == 0:
        return g
    if not (_raw(self) == 0).any():
        return _reverse_cumsum(g * result, dim) / self
    if is_raw(g):
        return _cumprod_grad_with_zeros(g, self, result, dim)
    # d out_k / d x_i = prod_{j <= k, j != i} x_j for k >= i
    res = None
    for onehot, col in _cumprod_columns(self, dim):
        term = sum(g * col, dim, True) * onehot
        res = term if res is None else res + term
    return res


def _cumprod_jvp(t_self, self, result, dim):
    if self.ndim == 0 or self.shape[dim] == 0:
        return t_self
    if not (_raw(self) == 0).any():
        return result * cumsum(t_self / self, dim)
    res = None
    for onehot, col in _cumprod_columns(self, dim):
        term = sum(t_self * onehot, dim, True) * col
        res = term if res is None else res + term
    return res


CumprodBackward0 = defop(
    "CumprodBackward0",
    params=("dim",),
    forward=lambda a, dim: _arr(
        a.copy() if a.ndim == 0 else np.cumprod(a, axis=dim, dtype=a.dtype), a.dtype
    ),
    vjp={"self": _cumprod_vjp},
    jvp=_cumprod_jvp,
)


def _scan(input, dim, dtype, fname: str):
    require_tensor(input, fname)
    if dim is _UNSET:
        raise _missing_dim(fname)
    a = _accumulated(input, dtype)
    return a, _single_axis(a.ndim, dim, fname)


@register("cumsum", method=True)
def cumsum(input, dim=_UNSET, *, dtype=None, axis=None, out=None):
    """Running sum along ``dim``; ints and bools accumulate in int64.

    Example:
        >>> import ember
        >>> ember.cumsum(ember.tensor([1.0, 2.0, 3.0]), 0)
        tensor([1., 3., 6.])
    """
    if axis is not None:
        dim = axis
    a, ax = _scan(input, dim, dtype, "cumsum")
    token = quiet_set(QUIET)
    try:
        res = _cumsum_array(a, ax)
    finally:
        quiet_reset(token)
    t = record(CumsumBackward0, res, (input,), (0 if ax is None else ax,))
    return write_out("cumsum", t, out)


@register("cumprod", method=True)
def cumprod(input, dim=_UNSET, *, dtype=None, axis=None, out=None):
    """Running product along ``dim``; exact gradients even with zeros.

    Example:
        >>> import ember
        >>> ember.cumprod(ember.tensor([1.0, 2.0, 3.0]), 0)
        tensor([1., 2., 6.])
    """
    if axis is not None:
        dim = axis
    a, ax = _scan(input, dim, dtype, "cumprod")
    token = quiet_set(QUIET)
    try:
        res = a.copy() if ax is None else np.cumprod(a, axis=ax, dtype=a.dtype)
    finally:
        quiet_reset(token)
    t = record(CumprodBackward0, _arr(res, a.dtype), (input,), (0 if ax is None else ax,))
    return write_out("cumprod", t, out)


# -- all, any, count_nonzero ----------------------------------------------------------------


def _logical_reduce(input, dim, keepdim, axis, keepdims, fname, np_fn):
    require_tensor(input, fname)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    # Unlike sum, an empty dim list reduces nothing here (torch's rule).
    axes = () if isinstance(dim, (tuple, list)) and not dim else _axes(a.ndim, dim)
    res = np.asarray(np_fn(a, axis=axes, keepdims=keepdim), np.bool_)
    return _wrap(res.astype(np.uint8) if a.dtype == np.uint8 else res)


@register("all", method=True)
def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """True where every element (over ``dim``) is nonzero; uint8 inputs give uint8.

    Example:
        >>> import ember
        >>> ember.tensor([[True, False], [True, True]]).all(1)
        tensor([False,  True])
    """
    return _logical_reduce(input, dim, keepdim, axis, keepdims, "all", np.all)


@register("any", method=True)
def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """True where some element (over ``dim``) is nonzero; uint8 inputs give uint8."""
    return _logical_reduce(input, dim, keepdim, axis, keepdims, "any", np.any)


@register("count_nonzero", method=True)
def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (int64).

    Example:
        >>> import ember
        >>> ember.count_nonzero(ember.tensor([[0.0, 1.0], [2.0, 0.0]]), 0)
        tensor([1, 1])
    """
    require_tensor(input, "count_nonzero")
    a = input._data
    axes = _axes(a.ndim, dim)
    return _wrap(
        _arr(np.count_nonzero(a, axis=axes), np.int64) if a.ndim else np.asarray(a != 0, np.int64)
    )


# -- running maximum and minimum with their positions ------------------------------------------


def _scatter_add_along(g: np.ndarray, idx: np.ndarray, ax: int) -> np.ndarray:
    """``zeros_like(g).scatter_add(ax, idx, g)`` on arrays (repeated indices sum)."""
    n = g.shape[ax]
    gm = np.moveaxis(g, ax, -1).reshape(-1, n)
    im = np.moveaxis(idx, ax, -1).reshape(-1, n)
    res = np.zeros_like(gm)
    np.add.at(res, (np.arange(gm.shape[0])[:, None], im), gm)
    return np.moveaxis(res.reshape(np.moveaxis(g, ax, -1).shape), -1, ax)


def _cum_select_vjp(grads, self, indices, dim):
    """Each running extreme's gradient goes back to the element it came from (summed)."""
    g = grads[0]
    if g is None:
        return None
    if not self.shape:
        return g
    if is_raw(g):
        return _scatter_add_along(g, indices, dim)
    return g.new_zeros(tuple(g.shape)).scatter_add(dim, _wrap(indices), g)


def _cum_select_jvp(t_self, indices, dim):
    if not t_self.shape:
        return [t_self, None]
    return [gather(t_self, dim, _wrap(indices)), None]


def _cum_select_forward(is_max: bool):
    """cummax/cummin on an array: values, indices and a copy of them to save."""

    def forward(a, dim):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64), np.zeros((), np.int64)
        acc = np.maximum.accumulate if is_max else np.minimum.accumulate
        values = acc(a, axis=dim)
        # The latest position holding the running extreme (torch takes the later of ties);
        # a NaN is its own extreme from where it appears.
        holds = (a == values) | (np.isnan(a) if a.dtype.kind in "fcV" else False)
        shape = [1] * a.ndim
        shape[dim] = a.shape[dim]
        positions = np.where(holds, np.arange(a.shape[dim]).reshape(shape), 0)
        indices = np.maximum.accumulate(positions, axis=dim).astype(np.int64)
        return values, indices, indices.copy()

    return forward


def _cum_select_op(name: str, is_max: bool):
    return defop(
        name,
        outputs=("values", "indices_out"),
        differentiable=(True, False),
        params=("dim",),
        forward=_cum_select_forward(is_max),
        saves=("indices",),
        vjp={"self": lambda grads, self, indices, dim: _cum_select_vjp(grads, self, indices, dim)},
        jvp=_cum_select_jvp,
    )


CummaxBackward0 = _cum_select_op("CummaxBackward0", True)
CumminBackward0 = _cum_select_op("CumminBackward0", False)


def _cum_select(input, dim, fname: str, is_max: bool):
    require_tensor(input, fname)
    a = input._data
    ax = 0 if a.ndim == 0 else normalize_dim(dim, a.ndim)
    cls = CummaxBackward0 if is_max else CumminBackward0
    values_t, indices_t = run(cls, (input,), (a,), (ax,))
    rtype = return_types.cummax if is_max else return_types.cummin
    return rtype((values_t, indices_t))


@register("cummax", method=True)
def cummax(input, dim):
    """Running maximum along ``dim`` and where each came from (the later of ties).

    Example:
        >>> import ember
        >>> ember.cummax(ember.tensor([1.0, 3.0, 2.0]), 0).indices
        tensor([0, 1, 1])
    """
    return _cum_select(input, dim, "cummax", True)


@register("cummin", method=True)
def cummin(input, dim):
    """Running minimum along ``dim`` and where each came from (the later of ties).

    Example:
        >>> import ember
        >>> ember.cummin(ember.tensor([3.0, 1.0, 2.0]), 0).values
        tensor([3., 1., 1.])
    """
    return _cum_select(input, dim, "cummin", False)


@register("bincount", method=True)
def bincount(input, weights=None, minlength=0):
    """How often each non-negative integer occurs in the 1-d ``input`` (weighted sums with
    ``weights``); not differentiable, as in torch.

    Example:
        >>> import ember
        >>> ember.bincount(ember.tensor([1, 1, 3]))
        tensor([0, 2, 0, 1])
    """
    require_tensor(input, "bincount")
    a = input._data
    if a.dtype.kind not in "iub":
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{_dtype.scalar_name(a.dtype)}'"
        )
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _wrap(np.bincount(a, minlength=minlength).astype(np.int64))
    w = weights._data if isinstance(weights, Tensor) else np.asarray(weights)
    if w.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = np.float32 if w.dtype == np.float32 else np.float64
    return _wrap(np.bincount(a, weights=w, minlength=minlength).astype(out_dtype))


# ``torch.return_types`` (the ops above are registered where they are defined).
