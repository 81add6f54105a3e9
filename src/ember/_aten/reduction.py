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
from functools import partial

import numpy as np

from .. import _dtype
from .._meta import MetaArray, keep_array
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.opdef import cconj
from ..autograd.recording import cast_operand, check_values, untracked_call
from ._core import (
    COMPOSITE,
    LINEAR,
    QUIET,
    broadcast_error,
    default_float,
    defop,
    intp,
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
    result_type,
    run,
    with_eager_kernel,
    write_out,
)
from .complex import complex as _complex
from .elementwise import (
    DivBackward1,
    MulBackward1,
    _scalar_op,
    clamp,
    lerp,
    maximum,
    minimum,
    sgn_rule,
    where,
)
from .indexing import gather, select
from .shape import cat, narrow

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
make_return_type("histogram", ("hist", "bin_edges"))


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
    if type(x) is MetaArray:
        return keep_array(x, np_dtype)
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


@register("sum_to_size", method=True, function=False)
def sum_to_size(self: Tensor, *size) -> Tensor:
    """Sum this tensor down to ``size``, a shape it broadcasts from: the leading dims and
    the dims of size 1 in ``size`` are summed (``self`` itself when already that shape).

    Example:
        >>> import ember
        >>> ember.ones(2, 3, 4).sum_to_size(3, 1)
        tensor([[8.],
                [8.],
                [8.]])
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for i, n in enumerate(size):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(
                f"sum_to_size(): argument 'size' (position {i + 1}) must be tuple of ints, "
                f"not {type(n).__name__}"
            )
    size = tuple(int(n) for n in size)
    shape = self._data.shape
    lead = len(shape) - len(size)
    if lead < 0 or _b.any(n != 1 and n != shape[lead + i] for i, n in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(size) if n == 1 and shape[lead + i] != 1
    )
    out = self
    if dims:
        out = sum(out, dims, keepdim=True)
    return out.view(size) if lead > 0 else out


@register("nansum", method=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Sum treating NaN as zero.

    Example:
        >>> import ember
        >>> ember.nansum(ember.tensor([1.0, float("nan"), 2.0]))
        tensor(3.)
    """
    require_tensor(input, "nansum")
    if input._data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
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
    r = s / n if n else s * np.nan
    return np.asarray(r, a.dtype)


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
    return _selected_along(a, ax, keepdim, _median_along)


def _selected_along(a, ax: int, keepdim: bool, along):
    """``along(a, ax)``'s values and indices (kept dims) with torch's 0-d and empty cases,
    ``ax`` squeezed unless ``keepdim``: median's and nanmedian's dim forms."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    if a.size == 0:
        shape = _keep_shape(a.shape, (ax,))
        values, indices = np.empty(shape, a.dtype), np.empty(shape, np.int64)
    else:
        values, indices = along(a, ax)
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
    """Minimum over ``dim`` (all by default); the gradient is shared between ties.

    Example:
        >>> import ember
        >>> ember.amin(ember.tensor([[1.0, 5.0], [4.0, 2.0]]), 1)
        tensor([1., 2.])
    """
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
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    return _median_like(input, dim, keepdim, "median", _median_along, _median_dim_array)


def _median_like(input, dim, keepdim: bool, name: str, along, dim_array):
    """median or nanmedian (``name``): of all elements with ``along``, or ``(values,
    indices)`` along ``dim`` with ``dim_array``; their nodes are ``<Name>Backward0/1``."""
    require_tensor(input, name)
    whole, per_dim = _MEDIAN_NODES[name]
    a = input._data
    if dim is _UNSET:
        if a.dtype == np.bool_ and a.size:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
        if a.size == 0:
            res = np.full((), np.nan, a.dtype)
        else:
            res = _arr(along(a.reshape(-1), 0)[0].reshape(()), a.dtype)
        return record(whole, res, (input,))
    ax = _single_axis(a.ndim, dim, name)
    if ax is not None:
        _check_nonempty(a, (ax,), name, True)
    if a.dtype == np.bool_ and (a.size or ax is None or a.shape[ax]):
        raise NotImplementedError(f"\"{name}_out\" not implemented for 'Bool'")
    values, indices = dim_array(a, 0 if ax is None else ax, keepdim)
    rtype = getattr(return_types, name)
    return _select_result(per_dim, rtype, input, a, values, indices, ax)


# -- nanmedian, mode -------------------------------------------------------------------------


def _nanmedian_along(a: np.ndarray, ax: int):
    """Lower median of the values that are not NaN, and its index, along ``ax`` (keepdims;
    NaN where all are NaN)."""
    n = a.shape[ax]
    order = np.argsort(a, axis=ax, kind="stable")  # NaNs last
    if a.dtype.kind in "fcV":
        valid = n - np.sum(a != a, axis=ax, keepdims=True)
        pos = np.maximum((valid - 1) // 2, 0)
    else:
        pos = np.full(_keep_shape(a.shape, (ax,)), (n - 1) // 2)
    idx = np.take_along_axis(order, pos, axis=ax)
    return np.take_along_axis(a, idx, axis=ax), idx.astype(np.int64, copy=False)


def _nanmedian_dim_array(a, ax: int, keepdim: bool):
    """nanmedian(dim)'s values and indices of the array ``a`` (0-d: itself, index 0)."""
    return _selected_along(a, ax, keepdim, _nanmedian_along)


NanmedianBackward0 = defop("NanmedianBackward0", vjp={"self": _evenly_vjp}, jvp=_evenly_jvp)
NanmedianBackward1 = _select_op("NanmedianBackward1", _select_forward(_nanmedian_dim_array))


@register("nanmedian", method=True)
def nanmedian(input, dim=_UNSET, keepdim=False, *, axis=None, keepdims=None):
    """``median`` ignoring NaNs: the lower median of the other values (NaN where all are),
    of all elements or ``(values, indices)`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.tensor([4.0, float("nan"), 1.0, 3.0]).nanmedian()
        tensor(3.)
    """
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    return _median_like(input, dim, keepdim, "nanmedian", _nanmedian_along, _nanmedian_dim_array)


_MEDIAN_NODES = {
    "median": (MedianBackward0, MedianBackward1),
    "nanmedian": (NanmedianBackward0, NanmedianBackward1),
}


def _mode_array(a, ax: int, keepdim: bool):
    """mode's values and indices along ``ax``: the most frequent value (the smallest of
    equally frequent ones) and the index of its last occurrence, as torch's CPU kernel."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    rows = np.moveaxis(a, ax, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    values = np.empty(flat.shape[0], a.dtype)
    indices = np.empty(flat.shape[0], np.int64)
    for i, row in enumerate(flat):
        uniq, counts = np.unique(row, return_counts=True)
        best = uniq[np.argmax(counts)]
        values[i] = best
        indices[i] = np.flatnonzero((row == best) | ((row != row) & (best != best)))[-1]
    values = values.reshape(rows.shape[:-1])
    indices = indices.reshape(rows.shape[:-1])
    if keepdim:
        values, indices = np.expand_dims(values, ax), np.expand_dims(indices, ax)
    return values, indices


ModeBackward0 = _select_op("ModeBackward0", _select_forward(_mode_array))


@register("mode", method=True)
def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of
    equally frequent ones) and the index of its last occurrence.

    Example:
        >>> import ember
        >>> ember.tensor([[1, 3, 3, 2], [5, 2, 2, 2]]).mode(1)
        torch.return_types.mode(
        values=tensor([3, 2]),
        indices=tensor([2, 3]))
    """
    require_tensor(input, "mode")
    a = input._data
    ax = _single_axis(a.ndim, dim, "mode")
    if ax is not None and a.shape[ax] == 0:
        raise IndexError(f"mode(): Expected reduction dim {ax} to have non-zero size.")
    values, indices = _mode_array(a, 0 if ax is None else ax, bool(keepdim))
    return _select_result(ModeBackward0, return_types.mode, input, a, values, indices, ax)


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
        res = fn(a.reshape(-1))
        res = np.asarray(res, np.int64) if type(res) is not MetaArray else keep_array(res, np.int64)
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
    """Index of the smallest element (of the flattened tensor when ``dim`` is None).

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 5.0], [4.0, 2.0]]).argmin(1)
        tensor([0, 1])
    """
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
    """``(std, mean)`` over ``dim`` in one pass.

    Example:
        >>> import ember
        >>> ember.std_mean(ember.tensor([1.0, 2.0, 3.0]))
        (tensor(1.), tensor(2.))
    """
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
        return sgn_rule(x) * g
    if p == 2:
        return g * _where(norm == 0, 0, x / norm)
    if math.isinf(p):
        ax = np.abs(x)
        mask = (ax == norm) | _isnan(ax)
        return sgn_rule(x) * ((g / _sumk(mask, dim)) * mask)
    if p < 1:
        scaled = sgn_rule(x) * _where(x == 0, 0, np.abs(x) ** (p - 1))
        return scaled * g * norm ** (1 - p)
    if p < 2:
        scaled = sgn_rule(x) * np.abs(x) ** (p - 1)
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


# -- dist, renorm ------------------------------------------------------------------------------


def _every_axis(x) -> tuple:
    return tuple(range(x.ndim))


def _dist_vjp(g, self, other, result, p):
    d = self - other
    grad = _norm_vjp(g, d, result, p, _every_axis(d), False)
    if grad is None:  # p == 0: a count of nonzeros, constant almost everywhere
        grad = d * 0
    return grad, -grad


def _dist_jvp(t_self, t_other, self, other, result, p):
    if t_self is None:
        t = -t_other
    else:
        t = t_self if t_other is None else t_self - t_other
    d = self - other
    if t.shape != d.shape:
        t = t.expand(d.shape)
    return _norm_jvp(t, d, result, p, _every_axis(d), False)


DistBackward0 = defop(
    "DistBackward0",
    inputs=("self", "other"),
    params=("p",),
    forward=lambda a, b, p: _vector_norm_array(a - b, p, tuple(range(np.ndim(a - b))), False),
    vjp=_dist_vjp,
    jvp=_dist_jvp,
)


@register("dist", method=True)
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast).

    Example:
        >>> import ember
        >>> ember.dist(ember.tensor([3.0, 0.0]), ember.tensor([0.0, 4.0]))
        tensor(5.)
    """
    require_tensor(input, "dist")
    require_tensor(other, "dist", "other", 2)
    rt = result_type(input, other)
    if rt.kind not in "fcV":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_scalar_name(rt)} instead."
        )
    a, b = input._data.astype(rt, copy=False), other._data.astype(rt, copy=False)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    token = quiet_set(QUIET)
    try:
        res = DistBackward0.forward(a, b, float(p))
    finally:
        quiet_reset(token)
    return record(DistBackward0, res, (input, other), (float(p),))


def _renorm_factor(norm, maxnorm):
    """torch's renorm scale: ``maxnorm / (norm + 1e-7)`` where the norm exceeds ``maxnorm``."""
    return np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype)


def _renorm_forward(a, p, dim, maxnorm):
    axes = tuple(i for i in range(a.ndim) if i != dim)
    norm = _vector_norm_array(a, p, axes, True)
    return a * _renorm_factor(norm, maxnorm).astype(a.dtype, copy=False)


def _renorm_vjp(g, self, p, dim, maxnorm):
    """torch's renorm_backward (on arrays: recorded backwards differentiate the composite)."""
    axes = tuple(i for i in range(self.ndim) if i != dim)
    norm = _vector_norm_array(self, p, axes, True)
    go = np.conjugate(self) * g
    if go.dtype.kind == "c":
        go = go.real
    go = go.sum(axis=axes, keepdims=True)
    nb = _norm_vjp(go, self, norm, p, axes, True)
    invnorm = 1 / (norm + 1e-7)
    factor = invnorm * maxnorm
    return np.where(norm > maxnorm, factor * g - (factor * invnorm) * nb, g).astype(g.dtype)


def _renorm_composite(self, p, dim, maxnorm):
    axes = tuple(i for i in range(self.dim()) if i != dim)
    norm = _vector_norm(self, p, axes, True)
    return self * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


RenormBackward0 = defop(
    "RenormBackward0",
    params=("p", "dim", "maxnorm"),
    forward=_renorm_forward,
    vjp={"self": _renorm_vjp},
    composite=_renorm_composite,
    jvp=COMPOSITE,
)


@register("renorm", method=True, inplace=True)
def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice along ``dim`` rescaled to have ``p``-norm at most ``maxnorm`` (slices
    within it are left as they are).

    Example:
        >>> import ember
        >>> ember.renorm(ember.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    require_tensor(input, "renorm")
    a = input._data
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    d = normalize_dim(dim, a.ndim)
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if a.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_scalar_name(a.dtype)}"
        )
    t = run(RenormBackward0, (input,), (a,), (float(p), d, maxnorm))
    return write_out("renorm", t, out)


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
    """softmax along ``ax`` (None: a 0-d tensor, one element); the compiler's C row loop
    over the last dim where a C compiler is present (``with_eager_kernel``)."""
    return with_eager_kernel("softmax", _softmax_numpy, a, ax)


def _softmax_numpy(a: np.ndarray, ax: int | None) -> np.ndarray:
    """``_softmax_array`` in NumPy."""
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        return _softmax_numpy(a.astype(np.float32), ax).astype(a.dtype)
    if ax is None:
        return np.exp(a - a)
    e = np.exp(a - a.max(axis=ax, keepdims=True)) if a.size else np.exp(a)
    return e / e.sum(axis=ax, keepdims=True)


def _log_softmax_array(a: np.ndarray, ax: int | None) -> np.ndarray:
    """log_softmax along ``ax`` (None: a 0-d tensor, one element)."""
    return with_eager_kernel("log_softmax", _log_softmax_numpy, a, ax)


def _log_softmax_numpy(a: np.ndarray, ax: int | None) -> np.ndarray:
    """``_log_softmax_array`` in NumPy."""
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        return _log_softmax_numpy(a.astype(np.float32), ax).astype(a.dtype)
    if ax is None:
        return a - a
    z = a - a.max(axis=ax, keepdims=True) if a.size else a
    return z - np.log(np.exp(z).sum(axis=ax, keepdims=True))


def _softmax_vjp(g, result, dim):
    """softmax's derivative rule; C row loops on arrays as ``_softmax_array`` chooses."""
    return with_eager_kernel("softmax_grad", _softmax_vjp_numpy, g, result, dim)


def _softmax_vjp_numpy(g, result, dim):
    # softmax's Jacobian diag(y) - y y^T is symmetric: this is also its JVP
    return result * (g - _sumk(g * result, (dim,)))


def _log_softmax_vjp(g, result, dim):
    """log_softmax's derivative rule; C row loops on arrays as ``_softmax_array`` chooses."""
    return with_eager_kernel("log_softmax_grad", _log_softmax_vjp_numpy, g, result, dim)


def _log_softmax_vjp_numpy(g, result, dim):
    return g - np.exp(result) * _sumk(g, (dim,))


# What ``explain`` shows for them (the C loops compute the same).
_softmax_vjp.formula = "result * (grad - _sumk(grad * result, (dim,)))"
_log_softmax_vjp.formula = "grad - np.exp(result) * _sumk(grad, (dim,))"


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
    vjp={"self": _log_softmax_vjp},
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


@register("cumsum", method=True, inplace=True)
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


@register("cumprod", method=True, inplace=True)
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
    res = np_fn(a, axis=axes, keepdims=keepdim)
    res = np.asarray(res, np.bool_) if type(res) is not MetaArray else keep_array(res, np.bool_)
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
    """True where some element (over ``dim``) is nonzero; uint8 inputs give uint8.

    Example:
        >>> import ember
        >>> ember.tensor([[True, False], [False, False]]).any(1)
        tensor([ True, False])
    """
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
        return _wrap(np.bincount(intp(a), minlength=minlength).astype(np.int64))
    w = weights._data if isinstance(weights, Tensor) else np.asarray(weights)
    if w.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = np.float32 if w.dtype == np.float32 else np.float64
    return _wrap(np.bincount(intp(a), weights=w, minlength=minlength).astype(out_dtype))


# -- diff, nanmean ----------------------------------------------------------------------------


def _int_arg(x, fname: str, arg: str) -> int:
    """An int argument, with torch's message for keyword-style arguments (no position)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{fname}(): argument '{arg}' must be int, not {type(x).__name__}")
    return int(x)


def _diff_other(input: Tensor, other, dim, arg: str) -> None:
    """torch's checks of ``prepend``/``append`` against the input."""
    if other is None:
        return
    if not isinstance(other, Tensor):
        raise TypeError(f"diff(): argument '{arg}' must be Tensor, not {type(other).__name__}")
    ax = normalize_dim(dim, input.ndim)
    if other.ndim != input.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.ndim):
        if i != ax and other.shape[i] != input.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({i}) = {input.shape[i]}, "
                f"but got tensor.size({i}) = {other.shape[i]}"
            )


@register("diff", method=True)
def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``x[i + 1] - x[i]``, repeated), after
    concatenating ``prepend`` before and ``append`` after the input along ``dim``; bools
    give ``logical_xor``.

    Example:
        >>> import ember
        >>> ember.diff(ember.tensor([1.0, 4.0, 9.0, 16.0]))
        tensor([3., 5., 7.])
        >>> ember.tensor([1.0, 4.0, 9.0]).diff(prepend=ember.tensor([0.0]))
        tensor([1., 3., 5.])
    """
    require_tensor(input, "diff")
    n = _int_arg(n, "diff", "n")
    dim = _int_arg(dim, "diff", "dim")
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    _diff_other(input, prepend, dim, "prepend")
    _diff_other(input, append, dim, "append")
    if n == 0:  # torch: zeros_like(input).copy_(input), whatever prepend and append
        res = input.new_zeros(tuple(input.shape))
        res.copy_(input)
        return res
    x = input
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, input, append) if t is not None]
        x = cat(parts, dim)
    ax = normalize_dim(dim, x.ndim)
    size = x.shape[ax]
    out_len = size - 1
    is_bool = x._data.dtype == np.bool_
    for _ in range(_b.min(n, size)):
        hi, lo = narrow(x, ax, 1, out_len), narrow(x, ax, 0, out_len)
        x = hi.logical_xor(lo) if is_bool else hi - lo
        out_len -= 1
    return x


def _float_or_complex(dtype) -> bool:
    return np.dtype(dtype).kind in "fcV"


def _count_not_nan(t: Tensor, axes, keepdim: bool) -> Tensor:
    """How many elements over ``axes`` are not NaN (int64; made from values, no gradient)."""
    a = t._data
    return _wrap(_arr(np.sum(a == a, axis=axes, keepdims=keepdim, dtype=np.int64), np.int64))


def _any_nan(t: Tensor) -> Tensor:
    """Whether a NaN is along the last dim (kept, of size one)."""
    return _wrap(np.isnan(t._data).any(-1, keepdims=True))


@register("nanmean", method=True)
def nanmean(
    input: Tensor,
    dim=None,
    keepdim: bool = False,
    *,
    dtype=None,
    out: Tensor | None = None,
) -> Tensor:
    """The mean over ``dim`` of the elements that are not NaN (NaN where all are).

    Example:
        >>> import ember
        >>> ember.nanmean(ember.tensor([1.0, float("nan"), 3.0]))
        tensor(2.)
    """
    require_tensor(input, "nanmean")
    a = input._data
    if not _float_or_complex(a.dtype):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{_scalar_name(a.dtype)}"
        )
    if dtype is not None and not _float_or_complex(_np_dtype(dtype)):
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {_scalar_name(_np_dtype(dtype))}"
        )
    keepdim = _b.bool(keepdim)
    axes = _axes(a.ndim, dim) or None
    count = untracked_call(_count_not_nan, input, axes, keepdim)
    t = nansum(input, dim, keepdim, dtype=dtype) / count
    return write_out("nanmean", t, out)


# -- logcumsumexp -------------------------------------------------------------------------------


def _log_add_exp_complex(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """torch's ``_log_add_exp_helper`` for complex values (ordered by real part)."""
    y_first = np.isnan(y.real) | (y.real < x.real)
    lo = np.where(y_first, y, x)
    hi = np.where(y_first, x, y)
    finite = (lo.real != hi.real) | np.isfinite(lo.real)
    return np.where(finite, np.log1p(np.exp(lo - hi)) + hi, x)


def _logcumsumexp_array(a: np.ndarray, dim: int) -> np.ndarray:
    if a.ndim == 0 or a.size == 0:
        return a.copy()
    if a.dtype.kind == "c":
        m = np.moveaxis(a, dim, 0).copy()
        for i in range(1, m.shape[0]):
            m[i] = _log_add_exp_complex(m[i - 1], m[i])
        return np.moveaxis(m, 0, dim).astype(a.dtype, copy=False)
    if _half(a.dtype):  # float16/bfloat16 accumulate in float32, rounded once
        return np.logaddexp.accumulate(a.astype(np.float32), axis=dim).astype(a.dtype)
    return np.logaddexp.accumulate(a, axis=dim)


def _flip_logcumsumexp(x, dim: int):
    """``flip(logcumsumexp(flip(x)))``: the log of a reverse running sum of ``exp(x)``."""
    if is_raw(x):
        return np.flip(_logcumsumexp_array(np.flip(x, dim), dim), dim)
    return logcumsumexp(x.flip(dim), dim).flip(dim)


def _logcumsumexp_vjp(g, self, result, dim):
    # torch's rule: gradients split by sign so that every term is a logcumsumexp
    if g.ndim == 0 or g.size == 0 if is_raw(g) else g.numel() == 0:
        return g
    if (g.dtype.kind == "c") if is_raw(g) else g.is_complex():
        log_g = np.log(cconj(g))
        return cconj(np.exp(_flip_logcumsumexp(log_g - result, dim) + self))
    lowest = float(np.finfo(_raw(g).dtype).min)
    # log|g| of a g that is 1 where g is 0 (that branch is not taken): finite derivatives
    # there, so double backward has no 0 * inf
    log_abs = np.log(np.abs(_where(g == 0, 1.0, g)))
    pos = _where(g > 0, log_abs, lowest)
    neg = _where(g < 0, log_abs, lowest)
    out_pos = np.exp(_flip_logcumsumexp(pos - result, dim) + self)
    out_neg = np.exp(_flip_logcumsumexp(neg - result, dim) + self)
    return out_pos - out_neg


def _logcumsumexp_jvp(t_self, self, dim):
    # sum_{j<=i} t_j exp(x_j - y_i): torch's formula, cumsum(t * e) / cumsum(e) with
    # e = exp(x - max), where its running sums are normal numbers; the sign-split form (as
    # the backward) where exp(x - max) underflows (torch's tangent is 0 there). On arrays
    # in float64, rounded once; on Tensors (higher order) with ops, the shift a constant.
    if self.ndim == 0 or _raw(self).size == 0:
        return t_self
    s = _raw(self)
    if s.dtype.kind == "c":
        e = np.exp(self)
        return cumsum(e * t_self, dim) / cumsum(e, dim)
    raw = is_raw(self)
    if raw:
        self, t_self = s.astype(np.float64), np.asarray(t_self, dtype=np.float64)
        running_sum, running_lse = partial(np.cumsum, axis=dim), _logcumsumexp_array
    else:
        running_sum, running_lse = partial(cumsum, dim=dim), logcumsumexp
    shift = np.max(s, axis=dim, keepdims=True)
    e = np.exp(self - (shift if raw else _wrap(shift)))
    sums = running_sum(e)
    ok = _raw(sums) > np.finfo(np.float64).tiny ** 0.9
    if ok.all():
        out = running_sum(t_self * e) / sums
    else:
        split = _logcumsumexp_split(t_self, self, dim, running_lse)
        ok = ok if raw else _wrap(ok)
        out = _where(ok, running_sum(t_self * e) / _where(ok, sums, 1.0), split)
    return out.astype(s.dtype) if raw else out


def _logcumsumexp_split(t_self, self, dim, running_of):
    """The tangent as two logcumsumexps: sum_{j<=i} t_j exp(x_j - y_i) with t split by
    sign (no exp of a large value, nothing that underflows to 0/0)."""
    s = _raw(self)

    def running(x):
        return running_of(x, dim)

    result = running(self)
    lowest = float(np.finfo(s.dtype).min)
    log_abs = np.log(np.abs(_where(t_self == 0, 1.0, t_self)))  # (as in the backward)
    pos = _where(t_self > 0, log_abs, lowest)
    neg = _where(t_self < 0, log_abs, lowest)
    return np.exp(running(self + pos) - result) - np.exp(running(self + neg) - result)


LogcumsumexpBackward0 = defop(
    "LogcumsumexpBackward0",
    params=("dim",),
    forward=_logcumsumexp_array,
    vjp={"self": _logcumsumexp_vjp},
    jvp=_logcumsumexp_jvp,
)


@register("logcumsumexp", method=True)
def logcumsumexp(input: Tensor, dim=_UNSET, *, out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably.

    Example:
        >>> import ember
        >>> ember.logcumsumexp(ember.tensor([0.0, 0.0, 0.0]), 0)
        tensor([0.0000, 0.6931, 1.0986])
    """
    require_tensor(input, "logcumsumexp")
    if dim is _UNSET:
        raise _missing_dim("logcumsumexp")
    a = input._data
    ax = _single_axis(a.ndim, dim, "logcumsumexp")
    if a.dtype.kind not in "fcV":
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_scalar_name(a.dtype)}'"
        )
    t = run(LogcumsumexpBackward0, (input,), (a,), (0 if ax is None else ax,))
    return write_out("logcumsumexp", t, out)


# -- cov, corrcoef ---------------------------------------------------------------------------------


def _check_weights(w, kind: str, n_obs: int) -> None:
    if w.ndim > 1:
        raise RuntimeError(
            f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
            f"{w.ndim} dimensions"
        )
    k = w._data.dtype.kind
    ok = k in "iu" if kind == "fweights" else k in "fV"
    if not ok:
        want = "integral" if kind == "fweights" else "floating point"
        raise RuntimeError(
            f"cov(): expected {kind} to have {want} dtype but got {kind} with "
            f"{_scalar_name(w._data.dtype)} dtype"
        )
    if w.numel() != n_obs:
        raise RuntimeError(
            f"cov(): expected {kind} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n_obs}"
        )
    if n_obs:
        check_values(_weights_nonnegative, w._data, kind)


def _weights_nonnegative(w: np.ndarray, kind: str) -> None:
    if not (w.min() >= 0):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def _weights_sum_nonzero(w_sum: np.ndarray) -> None:
    if not np.all(w_sum != 0):  # (a batch of sums under vmap)
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")


def _cov_dof_warning() -> None:
    _warn(
        "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "number of observations. (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)",
        UserWarning,
        stacklevel=3,
    )


def _cov_dof_check(norm_factor: np.ndarray) -> None:
    if np.any(norm_factor <= 0):  # (a batch under vmap)
        _cov_dof_warning()


@register("cov", method=True)
def cov(
    input: Tensor,
    *,
    correction: int = 1,
    fweights: Tensor | None = None,
    aweights: Tensor | None = None,
) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    its columns), with frequency and observation weights and ``correction``.

    Example:
        >>> import ember
        >>> ember.cov(ember.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    require_tensor(input, "cov")
    correction = _int_arg(correction, "cov", "correction")
    if input.ndim > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        require_tensor(fweights, "cov", "fweights")
        _check_weights(fweights, "fweights", n_obs)
        w = fweights
    if aweights is not None:
        require_tensor(aweights, "cov", "aweights")
        _check_weights(aweights, "aweights", n_obs)
        w = aweights if w is None else w * aweights
    if w is None:  # every number below depends on shapes only
        w_sum = input.new_full((), n_obs, dtype=_dtype.int64)
        dof = n_obs - correction
        if dof <= 0:
            _cov_dof_warning()
            dof = 0
        norm_factor = input.new_full((), dof, dtype=_dtype.int64)
    else:
        w_sum = w.sum()
        check_values(_weights_sum_nonzero, w_sum._data)
        if correction != 0 and aweights is not None:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm_factor = w_sum - correction
        check_values(_cov_dof_check, norm_factor._data)
        norm_factor = clamp(norm_factor, 0)  # torch zeroes it when not positive
    avg = (x * w if w is not None else x).sum(1) / w_sum
    x = x - avg.unsqueeze(1)
    c = x.mm((x * w if w is not None else x).t().conj())
    return (c / norm_factor).squeeze()


@register("corrcoef", method=True)
def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the variables in the rows of ``input``.

    Example:
        >>> import ember
        >>> ember.corrcoef(ember.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    require_tensor(input, "corrcoef")
    if input.ndim > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{input.ndim} dimensions"
        )
    c = cov(input)
    if c.ndim == 0:  # one variable: NaN where c is NaN, inf or 0, else 1
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return _complex(clamp(c.real, -1, 1), clamp(c.imag, -1, 1))
    return clamp(c, -1, 1)


# -- histc, histogram (not differentiable) ------------------------------------------------------


def _linspace_edges(lo: float, hi: float, steps: int, dt: np.dtype) -> np.ndarray:
    """torch's CPU linspace in ``dt``, bit for bit: ``start + step * i`` up to the middle,
    ``end - step * (steps - 1 - i)`` after it, each a fused multiply-add (one rounding,
    emulated in long double)."""
    start, end = dt.type(lo), dt.type(hi)
    if steps == 1:
        return np.asarray([start], dt)
    step = dt.type((end - start) / dt.type(steps - 1))
    idx = np.arange(steps)
    wide = np.longdouble
    low = wide(start) + wide(step) * idx.astype(wide)
    high = wide(end) - wide(step) * (steps - 1 - idx).astype(wide)
    return np.where(idx < steps // 2, low, high).astype(dt)


def _bin_counts(a, edges, weight, dt, linear: bool, local_search: bool) -> np.ndarray:
    """torch's histogramdd kernel in one dimension: each element's bin (the last bin holds
    its right edge), weighted, elements outside the edges (and NaN) left out."""
    nbins = edges.size - 1
    flat = a.reshape(-1)
    lo, hi = edges[0], edges[-1]
    keep = (flat >= lo) & (flat <= hi)
    vals = flat[keep]
    if linear:
        pos = ((vals - lo) * dt.type(nbins) / (hi - lo)).astype(np.int64)
        if local_search:  # the first edge above the element, among three around ``pos``
            pmin = np.maximum(pos - 1, 0)
            pmax = np.minimum(pos + 2, nbins + 1)
            found = pmax
            for k in (2, 1, 0):
                i = pmin + k
                hit = (i < pmax) & (edges[np.minimum(i, nbins)] > vals)
                found = np.where(hit, i, found)
            pos = found - 1
    else:
        pos = np.searchsorted(edges, vals, side="right") - 1
    pos = np.where(pos == nbins, nbins - 1, pos)
    w = None if weight is None else weight.reshape(-1)[keep]
    hist = np.bincount(intp(pos), weights=w, minlength=nbins)[:nbins]
    return hist.astype(dt)


@register("histc", method=True)
def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """A histogram of ``input`` in ``bins`` equal bins between ``min`` and ``max`` (the data's
    range when they are equal); elements outside are ignored. Not differentiable.

    Example:
        >>> import ember
        >>> ember.histc(ember.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    require_tensor(input, "histc")
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)):
        raise TypeError(
            f"histc(): argument 'bins' (position 2) must be int, not {type(bins).__name__}"
        )
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{_scalar_name(a.dtype)}'"
        )
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(
            f"torch.histc: range of [{_fmt_edge(lo)}, {_fmt_edge(hi)}] is not finite"
        )
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    # float16/bfloat16 counted in float32 (torch works in the half type: ties may differ)
    dt = np.dtype(np.float32) if _half(a.dtype) else a.dtype
    edges = _linspace_edges(lo, hi, bins + 1, dt)
    hist = _bin_counts(a.astype(dt), edges, None, dt, True, False)
    return write_out("histc", _wrap(hist.astype(a.dtype)), out)


def _fmt_edge(v: float) -> str:
    """A range edge as torch's message prints it (C++ stream formatting)."""
    if math.isnan(v):
        return "-nan" if math.copysign(1, v) < 0 else "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


@register("histogram", method=True)
def histogram(
    input: Tensor,
    bins=100,
    *,
    range=None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
    out=None,
):
    """A histogram of ``input``: ``bins`` equal bins over ``range`` (the data's range by
    default), or the bins whose edges the 1-d tensor ``bins`` gives; optionally weighted,
    or normalized to a density. Returns ``(hist, bin_edges)``; not differentiable.

    Example:
        >>> import ember
        >>> ember.histogram(ember.tensor([1.0, 2.0, 1.0]), bins=4, range=(0.0, 3.0))
        torch.return_types.histogram(
        hist=tensor([0., 2., 1., 0.]),
        bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    require_tensor(input, "histogram")
    a = input._data
    tensor_bins = isinstance(bins, Tensor)
    if not tensor_bins and (
        isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer))
    ):
        raise TypeError(
            "histogram() received an invalid combination of arguments - got (Tensor, "
            f"bins={type(bins).__name__})"
        )
    if a.dtype.kind != "f" or a.dtype == np.float16:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_scalar_name(a.dtype)}'")
    dt = a.dtype
    if tensor_bins:
        if range is not None:
            raise TypeError(
                "histogram() received an invalid combination of arguments - got (Tensor, "
                "Tensor, range=tuple)"
            )
        e = bins._data
        if e.dtype != dt:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_dtype.cpp_name(dt)} and bins for dimension 0 with "
                f"dtype {_dtype.cpp_name(e.dtype)}"
            )
        if e.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{e.ndim} dimensions in the bins tensor for dimension 0"
            )
        if e.size == 0:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                "elements in the bins tensor for dimension 0"
            )
        if e.size == 1:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        edges = e.copy()
    else:
        nbins = int(bins)
        if nbins <= 0:
            raise RuntimeError(
                f"torch.histogram(): bins must be > 0, but got {nbins} for dimension 0"
            )
        if range is not None:
            rng = tuple(range)
            if len(rng) != 2:
                raise RuntimeError(
                    "torch.histogramdd: for a 1-dimensional histogram range should have 2 "
                    f"elements, but got {len(rng)}"
                )
            lo, hi = float(rng[0]), float(rng[1])
        elif a.size:
            lo, hi = float(np.min(a)), float(np.max(a))
        else:  # torch's default range without data
            lo, hi = 0.0, 1.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(
                f"torch.histogramdd: dimension 0's range [{_fmt_edge(lo)}, {_fmt_edge(hi)}] "
                "is not finite"
            )
        if lo > hi:
            raise RuntimeError(
                "torch.histogramdd: min should not exceed max, but got min "
                f"{_fmt_edge(lo)} max {_fmt_edge(hi)} for dimension 0"
            )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _linspace_edges(lo, hi, nbins + 1, dt)
    w = None
    if weight is not None:
        require_tensor(weight, "histogram", "weight")
        w = weight._data
        if w.dtype != dt:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({_dtype.cpp_name(dt)}), "
                f"and weight({_dtype.cpp_name(w.dtype)})"
            )
        if w.shape != a.shape:
            shape = f"{a.size}, 1"  # torch sees the input as (numel, 1)
            wshape = ", ".join(str(s) for s in w.shape)
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with "
                f"shape [{shape}] and weight with shape [{wshape}]"
            )
    if edges[0] > edges[-1]:  # torch counts nothing between edges that decrease
        hist = np.zeros(edges.size - 1, dt)
    else:
        hist = _bin_counts(a, edges, w, dt, not tensor_bins, True)
    if density:
        with np.errstate(all="ignore"):
            hist = (hist / hist.sum()).astype(dt) / np.diff(edges)
    res = return_types.histogram((_wrap(hist.astype(dt)), _wrap(edges)))
    if out is not None:
        write_out("histogram", res[0], out[0])
        write_out("histogram", res[1], out[1])
        return return_types.histogram((out[0], out[1]))
    return res


# -- quantile, nanquantile ------------------------------------------------------------------


def _squeeze_back(g, dim, self_sym_sizes):
    return _reshape(g, tuple(self_sym_sizes))


SqueezeBackward4 = defop(  # squeeze_(dim) ending quantile, on a result nobody else sees
    "SqueezeBackward4",
    params=("dim", "self_sym_sizes"),
    forward=lambda a, dim, self_sym_sizes: a.squeeze(dim),
    vjp={"self": _squeeze_back},
    jvp=LINEAR,
)

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_within(q: np.ndarray) -> None:
    if not ((q >= 0) & (q <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _quantile(input, q, dim, keepdim, interpolation, out, ignore_nan: bool):
    fname = "nanquantile" if ignore_nan else "quantile"
    require_tensor(input, fname)
    a = input._data
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not isinstance(q, (int, float, np.integer, np.floating)):
            raise TypeError(
                f"{fname}(): argument 'q' must be Tensor or float, not {type(q).__name__}"
            )
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
    if dim is not None:
        dim = _int_arg(dim, fname, "dim")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    if a.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    qt = input.new_full((), float(q)) if scalar_q else q
    if qt.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if qt._data.dtype != a.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if not scalar_q:
        check_values(_q_within, qt._data)
    ax = None if dim is None else normalize_dim(dim, a.ndim)
    # the output's shape: (q's size,) + the reduced shape
    if ax is not None and a.ndim > 0:
        out_shape = list(a.shape)
        if keepdim:
            out_shape[ax] = 1
        else:
            del out_shape[ax]
    else:
        out_shape = [1] * a.ndim if keepdim else []
    # sorted along the last dim (NaN last), as torch's quantile_compute
    if ax is None or a.ndim == 0:
        x = input.reshape(-1)
    else:
        x = input.unsqueeze(-1).transpose(ax, -1)
    x = x.sort(-1)[0]
    n = x.shape[-1]
    x = x.reshape(*out_shape, n)
    if ignore_nan:
        # ranks among the values that are not NaN (all NaN: rank 0, a NaN)
        ranks = clamp(qt * (untracked_call(_count_not_nan, x, -1, True) - 1), 0)
    else:  # with a NaN, the last rank (a NaN)
        ranks = where(untracked_call(_any_nan, x), n - 1, qt * (n - 1))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    values = gather(x, -1, below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = ranks.new_full(tuple(ranks.shape), 0.5)
        else:
            weights = ranks - below
        values = lerp(values, gather(x, -1, ranks.ceil().long()), weights)
    if qt.ndim == 0:
        res = record(SqueezeBackward4, values._data.squeeze(-1), (values,), (-1, values.shape))
    else:
        values = values.unsqueeze(0).transpose(0, -1)
        shape = tuple(values.shape)
        res = record(SqueezeBackward4, values._data.squeeze(-1), (values,), (-1, shape))
    return write_out(fname, res, out)


@register("quantile", method=True)
def quantile(
    input: Tensor,
    q,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Tensor | None = None,
) -> Tensor:
    """The ``q``-th quantiles of ``input`` over ``dim`` (all elements when None), ``q`` a
    number or a 1-d tensor in [0, 1] (its values along a new first dim); between two
    elements, ``interpolation`` picks linear, lower, higher, midpoint or nearest. NaN
    where the reduced elements hold one.

    Example:
        >>> import ember
        >>> ember.quantile(ember.tensor([0.0, 1.0, 2.0, 4.0]), 0.5)
        tensor(1.5000)
        >>> ember.tensor([[0.0, 1.0, 3.0]]).quantile(ember.tensor([0.25, 1.0]), dim=1)
        tensor([[0.5000],
                [3.0000]])
    """
    return _quantile(input, q, dim, keepdim, interpolation, out, False)


@register("nanquantile", method=True)
def nanquantile(
    input: Tensor,
    q,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    out: Tensor | None = None,
) -> Tensor:
    """``quantile`` ignoring NaN values (NaN where every reduced element is NaN).

    Example:
        >>> import ember
        >>> ember.nanquantile(ember.tensor([1.0, float("nan"), 3.0]), 0.5)
        tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, out, True)


# ``torch.return_types`` (the ops above are registered where they are defined).


# -- trapezoid -----------------------------------------------------------------------------------

_TRAPEZOID_ARGS = (
    "{name}() received an invalid combination of arguments - got (Tensor, Tensor, dx=float), "
    "but expected one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n"
    " * (Tensor y, *, Number dx = 1, int dim = -1)\n"
)


def _trapezoid_parts(name: str, y, x, dx, dim):
    """(``y`` as a float tensor, the axis, the spacing: a number or a tensor broadcastable
    to the intervals, the left and right ends of each interval; None for no samples)."""
    require_tensor(y, name)
    if x is not None and dx is not None:
        raise TypeError(_TRAPEZOID_ARGS.format(name=name))
    if y._data.dtype.kind not in "fcV":  # (torch's products by 0.5 promote to float)
        y = _wrap(y._data.astype(default_float()))
    ax = normalize_dim(dim, y.ndim)
    n = y.shape[ax]
    if n == 0:
        return y, ax, None, None, None
    left, right = narrow(y, ax, 0, n - 1), narrow(y, ax, 1, n - 1)
    if x is None:
        return y, ax, 1 if dx is None else dx, left, right
    require_tensor(x, name, "x", 2)
    if (x.shape[0] if x.ndim == 1 else x.shape[normalize_dim(dim, x.ndim)]) != n:
        raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    if x.ndim == 1:  # spacing along dim, broadcast over the other dims
        spacing = diff(x)
        shape = [1] * y.ndim
        shape[ax] = -1
        spacing = spacing.reshape(shape)
    else:
        spacing = diff(x, dim=dim)
    return y, ax, spacing, left, right


@register("trapezoid", "trapz")
def trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: the area under ``y`` sampled at ``x`` (or at
    points ``dx`` apart, 1 by default), as torch computes it.

    Example:
        >>> import ember
        >>> ember.trapezoid(ember.tensor([1.0, 2.0, 4.0]))
        tensor(4.5000)
        >>> ember.trapezoid(ember.tensor([1.0, 2.0, 4.0]), ember.tensor([0.0, 1.0, 3.0]))
        tensor(7.5000)
    """
    y, ax, spacing, left, right = _trapezoid_parts("trapezoid", y, x, dx, dim)
    if left is None:  # no samples: zeros
        shape = tuple(s for i, s in enumerate(y.shape) if i != ax)
        kind = y._data.dtype
        return _wrap(np.zeros(shape, dtype=kind if kind.kind in "fcV" else default_float()))
    if isinstance(spacing, Tensor):  # torch: (dx * (left + right)).sum(dim) / 2
        return _scalar_op(DivBackward1, sum(spacing * (left + right), ax), 2.0)
    # torch: (y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx
    ends = select(y, ax, 0) + select(y, ax, -1)
    return _scalar_op(MulBackward1, sum(y, ax) - _scalar_op(MulBackward1, ends, 0.5), spacing)


@register("cumulative_trapezoid")
def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim`` (one fewer element than ``y`` there).

    Example:
        >>> import ember
        >>> ember.cumulative_trapezoid(ember.tensor([1.0, 2.0, 4.0]))
        tensor([1.5000, 4.5000])
    """
    y, ax, spacing, left, right = _trapezoid_parts("cumulative_trapezoid", y, x, dx, dim)
    if left is None:  # no samples: an empty result
        return _wrap(np.zeros(y.shape, dtype=np.result_type(y._data.dtype, default_float())))
    if isinstance(spacing, Tensor):  # torch: (dx * (left + right)).cumsum(dim) / 2
        return _scalar_op(DivBackward1, cumsum(spacing * (left + right), ax), 2.0)
    # torch: (dx / 2 * (left + right)).cumsum(dim)
    return cumsum(_scalar_op(MulBackward1, left + right, spacing / 2), ax)
