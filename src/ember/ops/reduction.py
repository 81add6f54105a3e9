"""Reductions and scans: sum, mean, prod, max/min, std/var, norm, softmax, cumsum, ...

Each op computes its result with NumPy and records a node named like torch 2.13's
``grad_fn``. Backward rules use operators, NumPy ufuncs and the small dual helpers below
(``_sumk``, ``_reshape``, ``_expand``, ``_where``) so that most of them also run on
Tensors when the backward pass is itself recorded (``create_graph=True``). The few rules
that need NumPy-only functions (prod/cumprod with zeros) fall back to constants there.

``return_types`` holds torch's named-tuple results (``torch.return_types.max`` ...); other
op modules can make more with ``make_return_type``.
"""

from __future__ import annotations

import builtins as _b
import math
import types
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor, register_methods
from ._core import (
    default_float,
    needs_grad,
    normalize_dim,
    normalize_dims,
)
from ._legacy import Node, _fw, record, record_multi, saved_output, set_saved

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


class _RNode(Node):
    """Base of this module's nodes (single-output unless a subclass says otherwise)."""

    __slots__ = ()
    _multi_output = False


def _require_tensor(x, fname: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )


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
    if nd.kind not in "fc" and needs_grad(input):
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


def _int_to_long(a: np.ndarray, dtype) -> np.ndarray:
    """Without ``dtype=``, integer and bool inputs accumulate in int64 (torch's rule)."""
    return a.astype(np.int64) if dtype is None and a.dtype.kind in "biu" else a


def _reshape(x, shape: tuple):
    if tuple(x.shape) == tuple(shape):
        return x
    return x.reshape(shape)


def _expand(x, shape: tuple):
    if tuple(x.shape) == tuple(shape):
        return x
    if isinstance(x, np.ndarray):
        # A read-only broadcast view: no memory for the (often huge) gradient of a sum.
        return np.broadcast_to(x, shape)
    return x.expand(shape) if hasattr(x, "expand") else x * _wrap(np.ones(shape, x._data.dtype))


def _sumk(x, axes: tuple):
    """Sum over ``axes`` keeping them (ndarray or Tensor)."""
    if isinstance(x, np.ndarray):
        return np.sum(x, axis=axes, keepdims=True) if x.ndim else x
    return sum(x, axes, keepdim=True) if x.ndim else x


def _where(cond, x, y):
    if not isinstance(cond, Tensor) and not isinstance(x, Tensor) and not isinstance(y, Tensor):
        return np.where(cond, x, y)
    from .elementwise import where

    return where(cond, x, y)


def _isnan(x):
    return x != x


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


def _const_like(res, ref):
    """Wrap a NumPy-only rule's result for a recorded backward (no higher-order graph)."""
    return _wrap(np.asarray(res)) if isinstance(ref, Tensor) else res


def _finish(t: Tensor, out):
    if out is None:
        return t
    from ._core import write_out

    return write_out("reduction", t, out)


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
    warnings.warn(
        f"{fname}(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "reduction factor (input numel divided by output numel). (Triggered internally at "
        "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)",
        UserWarning,
        stacklevel=4,
    )


# -- forward-mode helpers -------------------------------------------------------------------
# Each input element feeds exactly one output element of a reduction, so the VJP of a
# gradient of ones is the partial derivative of its output w.r.t. each input: the JVP
# sums ``tangent * partials`` over the reduced dims (``_partials_jvp``).


def _out_shape(node, i: int = 0) -> tuple:
    return node._meta[i][0]


def _ones_like_out(node, i: int = 0):
    shape, dt = node._meta[i]
    return _wrap(np.ones(shape, dt))


def _reduce_tangent(t, axes: tuple, out_shape: tuple):
    """``t`` summed over ``axes`` (the output's reduced dims), shaped like the output."""
    if t is None:
        return None
    return _reshape(_sumk(t, axes) if axes else t, out_shape)


def _reduced_axes(keep_shape: tuple) -> tuple:
    return tuple(i for i, k in enumerate(keep_shape) if k == 1)


def _partials_jvp(node, t, saved, axes: tuple):
    partials = node.backward(_ones_like_out(node), *saved)
    if partials is None:
        return None
    return _reduce_tangent(t * partials, axes, _out_shape(node))


# -- sum, nansum, mean ---------------------------------------------------------------------


class _ExpandNode(_RNode):
    """Gradient of a sum: the incoming gradient spread back over the reduced dims."""

    __slots__ = ("in_shape", "keep_shape")

    def backward(self, g):
        return _expand(_reshape(g, self.keep_shape), self.in_shape)

    def jvp(self, tangents, inputs):
        # Linear: the same sum, of the tangent.
        return _reduce_tangent(tangents[0], _reduced_axes(self.keep_shape), _out_shape(self))


class SumBackward0(_ExpandNode):
    __slots__ = ()


class SumBackward1(_ExpandNode):
    __slots__ = ()


class NansumBackward0(_RNode):
    __slots__ = ("keep_shape",)

    def backward(self, g, x):
        return _reshape(g, self.keep_shape) * (x == x)

    def jvp(self, tangents, inputs, x):
        t = tangents[0] * (x == x)
        return _reduce_tangent(t, _reduced_axes(self.keep_shape), _out_shape(self))


def _sum_array(a: np.ndarray, axes, keepdim: bool, nan: bool = False) -> np.ndarray:
    fn = np.nansum if nan else np.sum
    if a.dtype == np.float16:  # accumulate in float32, as torch does
        return _arr(fn(a, axis=axes, keepdims=keepdim, dtype=np.float32), np.float16)
    return _arr(fn(a, axis=axes, keepdims=keepdim, dtype=a.dtype), a.dtype)


def _set_expand(t: Tensor, in_shape: tuple, axes: tuple) -> Tensor:
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.in_shape = in_shape
        gf.keep_shape = _keep_shape(in_shape, axes)
    return t


def sum(input, dim=_UNSET, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):  # noqa: A001
    """Sum over ``dim`` (int, tuple or None for all); ints and bools sum to int64.

    Example:
        >>> import ember
        >>> x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> ember.sum(x), x.sum(0), x.sum(1, keepdim=True).shape
        (tensor(10.), tensor([4., 6.]), torch.Size([2, 1]))
    """
    _require_tensor(input, "sum")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = _int_to_long(_cast_for(input, dtype), dtype)
    axes = _axes(a.ndim, dim)
    res = _sum_array(a, axes, keepdim)
    cls = SumBackward0 if dim is _UNSET else SumBackward1
    return _finish(_set_expand(record(cls, res, (input,)), a.shape, axes), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Sum treating NaN as zero.

    Example:
        >>> import ember
        >>> ember.nansum(ember.tensor([1.0, float("nan"), 2.0]))
        tensor(3.)
    """
    _require_tensor(input, "nansum")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = _int_to_long(_cast_for(input, dtype), dtype)
    axes = _axes(a.ndim, dim)
    res = _sum_array(a, axes, keepdim, nan=True)
    t = record(NansumBackward0, res, (input,), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.keep_shape = _keep_shape(a.shape, axes)
    return _finish(t, out)


class _MeanNode(_RNode):
    __slots__ = ("in_shape", "keep_shape", "n")

    def backward(self, g):
        return _expand(_reshape(g, self.keep_shape) / self.n, self.in_shape)

    def jvp(self, tangents, inputs):
        t = _reduce_tangent(tangents[0], _reduced_axes(self.keep_shape), _out_shape(self))
        return t / self.n


class MeanBackward0(_MeanNode):
    __slots__ = ()


class MeanBackward1(_MeanNode):
    __slots__ = ()


def _mean_array(a: np.ndarray, axes: tuple, keepdim: bool) -> np.ndarray:
    n = _count(a.shape, axes)
    acc = np.float32 if a.dtype == np.float16 else None
    s = np.sum(a, axis=axes, keepdims=keepdim, dtype=acc)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _arr(s / n if n else s * np.nan, a.dtype)


def mean(input, dim=_UNSET, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Arithmetic mean over ``dim``; integer inputs need ``dtype=`` (torch's rule).

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 2.0], [3.0, 4.0]]).mean(0)
        tensor([2., 3.])
    """
    _require_tensor(input, "mean")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dtype is not None:
        nd = _np_dtype(dtype)
        if nd.kind not in "fc":
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a floating "
                f"point or complex dtype. Got: {_scalar_name(nd)}"
            )
        a = a.astype(nd, copy=False)
    elif a.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_name(a.dtype)}"
        )
    axes = _axes(a.ndim, dim)
    res = _mean_array(a, axes, keepdim)
    t = record(MeanBackward0 if dim is _UNSET else MeanBackward1, res, (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.n = _count(a.shape, axes)
    return _finish(_set_expand(t, a.shape, axes), out)


# -- prod ------------------------------------------------------------------------------------


def _prod_safe_zeros(g, a: np.ndarray, axis: int) -> np.ndarray:
    """Product of the other elements along ``axis`` times ``g`` (exact with zeros)."""
    if a.size == 0:
        return np.broadcast_to(g, a.shape).copy()
    ones_shape = list(a.shape)
    ones_shape[axis] = 1
    ones = np.ones(ones_shape, a.dtype)
    n = a.shape[axis]
    head = np.take(a, range(n - 1), axis=axis)
    excl_fwd = np.cumprod(np.concatenate([ones, head], axis=axis), axis=axis)
    tail = np.flip(np.take(a, range(1, n), axis=axis), axis=axis)
    excl_rev = np.flip(np.cumprod(np.concatenate([ones, tail], axis=axis), axis=axis), axis=axis)
    return g * (excl_fwd * excl_rev)


class ProdBackward0(_RNode):
    __slots__ = ()

    def backward(self, g, x, result):
        if x.ndim == 0:
            return g
        xr = _raw(x)
        if not (xr == 0).any():
            return g * (result / x)
        res = _prod_safe_zeros(_raw(g), xr.reshape(-1), 0).reshape(xr.shape)
        return _const_like(res, x)

    def jvp(self, tangents, inputs, x, result):
        return _partials_jvp(self, tangents[0], (x, result), tuple(range(x.ndim)))


class ProdBackward1(_RNode):
    __slots__ = ("keep_shape", "axis")

    def backward(self, g, x, result):
        if x.ndim == 0:
            return g
        g = _reshape(g, self.keep_shape)
        result = _reshape(result, self.keep_shape)
        xr = _raw(x)
        if not (xr == 0).any():
            return g * (result / x)
        return _const_like(_prod_safe_zeros(_raw(g), xr, self.axis), x)

    def jvp(self, tangents, inputs, x, result):
        axes = () if self.axis is None else (self.axis,)
        return _partials_jvp(self, tangents[0], (x, result), axes)


def _prod_array(a: np.ndarray, axes, keepdim: bool) -> np.ndarray:
    return _arr(np.prod(a, axis=axes, keepdims=keepdim, dtype=a.dtype), a.dtype)


def prod(input, dim=_UNSET, keepdim=False, *, dtype=None, axis=None, keepdims=None, out=None):
    """Product of all elements, or over one ``dim``; ints and bools give int64.

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1)
        tensor([ 2., 12.])
    """
    _require_tensor(input, "prod")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = _int_to_long(_cast_for(input, dtype), dtype)
    if dim is _UNSET:
        t = record(ProdBackward0, _prod_array(a, None, False), (input,), (input,), True)
        return _finish(t, out)
    ax = _single_axis(a.ndim, dim, "prod")
    axes = () if ax is None else (ax,)
    t = record(ProdBackward1, _prod_array(a, axes, keepdim), (input,), (input,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.keep_shape = _keep_shape(a.shape, axes)
        gf.axis = ax
    return _finish(t, out)


# -- max, min, amax, amin, aminmax, median, argmax, argmin ---------------------------------


def _evenly_distribute(g, x, value):
    """torch's gradient for max()/min()/median(): shared evenly by the tied elements."""
    mask = (x == value) | (_isnan(x) & _isnan(value))
    return mask * (g / mask.sum())


class _EvenlyNode(_RNode):
    __slots__ = ()

    def backward(self, g, x, result):
        return _evenly_distribute(g, x, result)

    def jvp(self, tangents, inputs, x, result):
        return _partials_jvp(self, tangents[0], (x, result), tuple(range(x.ndim)))


class MaxBackward1(_EvenlyNode):
    __slots__ = ()


class MinBackward1(_EvenlyNode):
    __slots__ = ()


class MedianBackward0(_EvenlyNode):
    __slots__ = ()


class _SelectNode(_RNode):
    """Gradient of a value chosen by index along an axis (max(dim), median(dim), ...)."""

    __slots__ = ("in_shape", "keep_shape", "axis")
    _multi_output = True

    def backward(self, grads, indices):
        g = grads[0]
        if g is None:
            return None
        if self.axis is None:
            return g
        n = self.in_shape[self.axis]
        pos_shape = [1] * len(self.in_shape)
        pos_shape[self.axis] = n
        onehot = np.arange(n).reshape(pos_shape) == _raw(_reshape(indices, self.keep_shape))
        return _reshape(g, self.keep_shape) * onehot

    def jvp(self, tangents, inputs, indices):
        # The tangent at the chosen index (the indices output gets none).
        t = tangents[0]
        if self.axis is None:
            return [t, None]
        from .indexing import gather

        picked = gather(t, self.axis, _reshape(indices, self.keep_shape))
        return [_reshape(picked, _out_shape(self)), None]


class MaxBackward0(_SelectNode):
    __slots__ = ()


class MinBackward0(_SelectNode):
    __slots__ = ()


class MedianBackward1(_SelectNode):
    __slots__ = ()


def _select_result(cls, rtype, input, a, values, indices, ax):
    """Wrap (values, indices) of a dim reduction and record the selecting node."""
    values_t, indices_t = record_multi(cls, [values, indices], (input,), (), (True, False))
    fn = values_t.grad_fn or _fw.node
    if fn is not None:
        set_saved(fn, (indices_t,))
        fn.in_shape = a.shape
        fn.axis = ax
        fn.keep_shape = _keep_shape(a.shape, () if ax is None else (ax,))
    return rtype((values_t, indices_t))


def _minmax_dim(input, dim, keepdim, fname: str, is_max: bool):
    a = input._data
    ax = _single_axis(a.ndim, dim, fname)
    if ax is None:
        values, indices = a.copy(), np.zeros((), np.int64)
    else:
        _check_nonempty(a, (ax,), fname, True)
        idx = (
            np.argmax(a, axis=ax, keepdims=True) if is_max else np.argmin(a, axis=ax, keepdims=True)
        )
        values = np.take_along_axis(a, idx, axis=ax)
        indices = idx.astype(np.int64, copy=False)
        if not keepdim:
            values = values.squeeze(ax)
            indices = indices.squeeze(ax)
    cls = MaxBackward0 if is_max else MinBackward0
    rtype = return_types.max if is_max else return_types.min
    return _select_result(cls, rtype, input, a, values, indices, ax)


def _minmax(input, dim, keepdim, other, axis, keepdims, out, is_max: bool):
    fname = "max" if is_max else "min"
    _require_tensor(input, fname)
    if isinstance(dim, Tensor):
        other, dim = dim, _UNSET
    if other is not None:
        from .elementwise import maximum, minimum

        return (maximum if is_max else minimum)(input, other, out=out)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    if dim is _UNSET:
        if keepdim:
            raise TypeError(
                f"{fname}() received an invalid combination of arguments - got (keepdim=bool, )"
            )
        a = input._data
        _check_nonempty(a, (), fname, False)
        res = _arr(np.max(a) if is_max else np.min(a), a.dtype)
        t = record(MaxBackward1 if is_max else MinBackward1, res, (input,), (input,), True)
        return _finish(t, out)
    return _minmax_dim(input, dim, keepdim, fname, is_max)


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


def min(input, dim=_UNSET, keepdim=False, *, other=None, axis=None, keepdims=None, out=None):  # noqa: A001
    """Smallest element; with ``dim``, ``(values, indices)``; with a tensor, ``minimum``.

    Example:
        >>> import ember
        >>> ember.tensor([3.0, 1.0, 2.0]).min()
        tensor(1.)
    """
    return _minmax(input, dim, keepdim, other, axis, keepdims, out, False)


def _scale_grad_by_count(g, x, result, keep_shape, axes):
    """torch's amax/amin rule: split evenly between the elements equal to the result."""
    mask = x == _reshape(result, keep_shape)
    return (_reshape(g, keep_shape) / _sumk(mask, axes)) * mask


class _AmaxNode(_RNode):
    __slots__ = ("keep_shape", "axes")

    def backward(self, g, x, result):
        return _scale_grad_by_count(g, x, result, self.keep_shape, self.axes)

    def jvp(self, tangents, inputs, x, result):
        return _partials_jvp(self, tangents[0], (x, result), self.axes)


class AmaxBackward0(_AmaxNode):
    __slots__ = ()


class AminBackward0(_AmaxNode):
    __slots__ = ()


def _amaxmin(input, dim, keepdim, axis, keepdims, out, is_max: bool):
    fname = "amax" if is_max else "amin"
    _require_tensor(input, fname)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    given = not (dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0))
    empty = _first_empty_dim(a, dim) if given else None
    if empty is not None:
        raise IndexError(f"{fname}(): Expected reduction dim {empty} to have non-zero size.")
    axes = _axes(a.ndim, dim)
    _check_nonempty(a, axes, fname, given)
    fn = np.max if is_max else np.min
    res = _arr(fn(a, axis=axes, keepdims=keepdim), a.dtype)
    t = record(AmaxBackward0 if is_max else AminBackward0, res, (input,), (input,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.keep_shape = _keep_shape(a.shape, axes)
        gf.axes = axes
    return _finish(t, out)


def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None, out=None):
    """Maximum over ``dim`` (all by default); the gradient is shared between ties.

    Example:
        >>> import ember
        >>> ember.amax(ember.tensor([[1.0, 5.0], [4.0, 2.0]]), 1)
        tensor([5., 4.])
    """
    return _amaxmin(input, dim, keepdim, axis, keepdims, out, True)


def amin(input, dim=(), keepdim=False, *, axis=None, keepdims=None, out=None):
    """Minimum over ``dim`` (all by default); the gradient is shared between ties."""
    return _amaxmin(input, dim, keepdim, axis, keepdims, out, False)


class AminmaxBackward0(_RNode):
    __slots__ = ("keep_shape", "axes")
    _multi_output = True

    def backward(self, grads, x, mn, mx):
        g_min, g_max = grads
        total = None
        if g_min is not None:
            total = _scale_grad_by_count(g_min, x, mn, self.keep_shape, self.axes)
        if g_max is not None:
            gm = _scale_grad_by_count(g_max, x, mx, self.keep_shape, self.axes)
            total = gm if total is None else total + gm
        return total

    def jvp(self, tangents, inputs, x, mn, mx):
        t = tangents[0]
        w_min = self.backward([_ones_like_out(self, 0), None], x, mn, mx)
        w_max = self.backward([None, _ones_like_out(self, 1)], x, mn, mx)
        return [
            _reduce_tangent(t * w_min, self.axes, _out_shape(self, 0)),
            _reduce_tangent(t * w_max, self.axes, _out_shape(self, 1)),
        ]


def aminmax(input, *, dim=None, keepdim=False, axis=None, keepdims=None):
    """``(min, max)`` over ``dim`` (or everything) as ``torch.return_types.aminmax``.

    Example:
        >>> import ember
        >>> ember.aminmax(ember.tensor([3.0, 1.0, 2.0]))
        torch.return_types.aminmax(
        min=tensor(1.),
        max=tensor(3.))
    """
    _require_tensor(input, "aminmax")
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
    mn = _arr(np.min(a, axis=axes, keepdims=keepdim), a.dtype)
    mx = _arr(np.max(a, axis=axes, keepdims=keepdim), a.dtype)
    mn_t, mx_t = record_multi(AminmaxBackward0, [mn, mx], (input,))
    fn = mn_t.grad_fn or _fw.node
    if fn is not None:
        saved = (input, saved_output(mn_t), saved_output(mx_t))
        set_saved(fn, saved)
        fn.keep_shape = _keep_shape(a.shape, axes)
        fn.axes = axes
    return return_types.aminmax((mn_t, mx_t))


def _median_along(a: np.ndarray, ax: int):
    """Lower median and its index along ``ax`` (NaN wins, as in torch), keepdims."""
    n = a.shape[ax]
    order = np.argsort(a, axis=ax, kind="stable")
    if a.dtype.kind in "fc":
        nan_count = np.sum(a != a, axis=ax, keepdims=True)
        pos = np.where(nan_count > 0, n - nan_count, (n - 1) // 2)
    else:
        pos = np.full(_keep_shape(a.shape, (ax,)), (n - 1) // 2)
    idx = np.take_along_axis(order, pos, axis=ax)
    return np.take_along_axis(a, idx, axis=ax), idx.astype(np.int64, copy=False)


def median(input, dim=_UNSET, keepdim=False, *, axis=None, keepdims=None):
    """Lower median of all elements, or ``(values, indices)`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.tensor([4.0, 1.0, 3.0, 2.0]).median()
        tensor(2.)
    """
    _require_tensor(input, "median")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if dim is _UNSET:
        if a.dtype == np.bool_ and a.size:
            raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
        if a.size == 0:
            res = np.full((), np.nan, a.dtype)
        else:
            res = _arr(_median_along(a.reshape(-1), 0)[0].reshape(()), a.dtype)
        return record(MedianBackward0, res, (input,), (input,), True)
    ax = _single_axis(a.ndim, dim, "median")
    if ax is not None:
        _check_nonempty(a, (ax,), "median", True)
    if a.dtype == np.bool_ and (a.size or ax is None or a.shape[ax]):
        raise NotImplementedError("\"median_out\" not implemented for 'Bool'")
    if ax is None:
        values, indices = a.copy(), np.zeros((), np.int64)
    else:
        if a.size == 0:
            shape = _keep_shape(a.shape, (ax,))
            values, indices = np.empty(shape, a.dtype), np.empty(shape, np.int64)
        else:
            values, indices = _median_along(a, ax)
        if not keepdim:
            values, indices = values.squeeze(ax), indices.squeeze(ax)
    return _select_result(MedianBackward1, return_types.median, input, a, values, indices, ax)


def _argmaxmin(input, dim, keepdim, axis, keepdims, is_max: bool):
    fname = "argmax" if is_max else "argmin"
    _require_tensor(input, fname)
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


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the largest element (of the flattened tensor when ``dim`` is None).

    Example:
        >>> import ember
        >>> ember.tensor([[1.0, 5.0], [4.0, 2.0]]).argmax(1)
        tensor([1, 0])
    """
    return _argmaxmin(input, dim, keepdim, axis, keepdims, True)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    return _argmaxmin(input, dim, keepdim, axis, keepdims, False)


# -- std, var, var_mean, std_mean -----------------------------------------------------------


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
    _require_tensor(input, fname)
    if isinstance(dim, _b.bool):  # std(True): the legacy ``unbiased`` overload
        dim, unbiased = None, dim
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    if a.dtype.kind not in "fc":
        what = "std and var" if fname in ("std", "var") else fname
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    c = _correction(unbiased, correction, fname)
    axes = _axes(a.ndim, dim)
    n = _count(a.shape, axes)
    if n - c <= 0:
        _dof_warning(fname)
    return a, axes, keepdim, c, n, (dim is None or dim is _UNSET)


def _var_array(a, axes, keepdim, c, n):
    m = _mean_array(a, axes, True)
    d = a - m
    sq = (d * np.conj(d)).real if a.dtype.kind == "c" else d * d
    acc = np.float32 if a.dtype == np.float16 else None
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.sum(sq, axis=axes, keepdims=keepdim, dtype=acc) / _b.max(0, n - c)
    real = sq.dtype if a.dtype.kind == "c" else a.dtype
    return _arr(v, real), (m if keepdim else m.reshape(np.shape(v)))


def _var_backward(g, x, keep_shape, axes, c, n, all_dims: bool):
    g = _reshape(g, keep_shape)
    mean_x = _sumk(x, axes) / n if x.ndim else x
    dof = n - c
    if all_dims and dof <= 0:
        inf_nan = np.where(_raw(x == mean_x), np.nan, np.inf)
        return g * inf_nan
    scale = 2.0 / dof if dof != 0 else math.inf
    return (g * scale) * (x - mean_x)


def _std_grad_to_var(g, std):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where(std == 0, 0, g / (std * 2))


class _VarNode(_RNode):
    __slots__ = ("keep_shape", "axes", "c", "n", "all_dims")


class VarBackward0(_VarNode):
    __slots__ = ()

    def backward(self, g, x):
        return _var_backward(g, x, self.keep_shape, self.axes, self.c, self.n, self.all_dims)

    def jvp(self, tangents, inputs, x):
        return _partials_jvp(self, tangents[0], (x,), self.axes)


class StdBackward0(_VarNode):
    __slots__ = ()

    def backward(self, g, x, result):
        gv = _std_grad_to_var(g, result)
        return _var_backward(gv, x, self.keep_shape, self.axes, self.c, self.n, self.all_dims)

    def jvp(self, tangents, inputs, x, result):
        return _partials_jvp(self, tangents[0], (x, result), self.axes)


def _set_var(fn, a, axes, c, n, all_dims):
    fn.keep_shape = _keep_shape(a.shape, axes)
    fn.axes = axes
    fn.c = c
    fn.n = n
    fn.all_dims = all_dims


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
    a, axes, keepdim, c, n, all_dims = _var_setup(
        input, dim, unbiased, keepdim, correction, axis, keepdims, "var"
    )
    v, _ = _var_array(a, axes, keepdim, c, n)
    t = record(VarBackward0, v, (input,), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        _set_var(gf, a, axes, c, n, all_dims)
    return _finish(t, out)


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
    a, axes, keepdim, c, n, all_dims = _var_setup(
        input, dim, unbiased, keepdim, correction, axis, keepdims, "std"
    )
    v, _ = _var_array(a, axes, keepdim, c, n)
    t = record(StdBackward0, _arr(np.sqrt(v)), (input,), (input,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        _set_var(gf, a, axes, c, n, all_dims)
    return _finish(t, out)


class _VarMeanNode(_VarNode):
    __slots__ = ("in_shape",)
    _multi_output = True

    def _mean_grad(self, g):
        return _expand(_reshape(g, self.keep_shape) / self.n, self.in_shape)

    def jvp(self, tangents, inputs, *saved):
        t = tangents[0]
        partials = self.backward([_ones_like_out(self, 0), None], *saved)
        return [
            _reduce_tangent(t * partials, self.axes, _out_shape(self, 0)),
            _reduce_tangent(t, self.axes, _out_shape(self, 1)) / self.n,
        ]


class VarMeanBackward0(_VarMeanNode):
    __slots__ = ()

    def backward(self, grads, x):
        gv, gm = grads
        total = None
        if gv is not None:
            total = _var_backward(gv, x, self.keep_shape, self.axes, self.c, self.n, self.all_dims)
        if gm is not None:
            m = self._mean_grad(gm)
            total = m if total is None else total + m
        return total


class StdMeanBackward0(_VarMeanNode):
    __slots__ = ()

    def backward(self, grads, x, std_out):
        gs, gm = grads
        total = None
        if gs is not None:
            gv = _std_grad_to_var(gs, std_out)
            total = _var_backward(gv, x, self.keep_shape, self.axes, self.c, self.n, self.all_dims)
        if gm is not None:
            m = self._mean_grad(gm)
            total = m if total is None else total + m
        return total


def _var_mean(input, dim, unbiased, keepdim, correction, axis, keepdims, take_sqrt: bool):
    fname = "std_mean" if take_sqrt else "var_mean"
    a, axes, keepdim, c, n, all_dims = _var_setup(
        input, dim, unbiased, keepdim, correction, axis, keepdims, fname
    )
    v, m = _var_array(a, axes, keepdim, c, n)
    if take_sqrt:
        v = _arr(np.sqrt(v))
    cls = StdMeanBackward0 if take_sqrt else VarMeanBackward0
    first, second = record_multi(cls, [v, _arr(m, a.dtype)], (input,))
    fn = first.grad_fn or _fw.node
    if fn is not None:
        saved = (input, saved_output(first)) if take_sqrt else (input,)
        set_saved(fn, saved)
        _set_var(fn, a, axes, c, n, all_dims)
        fn.in_shape = a.shape
    return first, second


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


def std_mean(
    input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None
):
    """``(std, mean)`` over ``dim`` in one pass."""
    return _var_mean(input, dim, unbiased, keepdim, correction, axis, keepdims, True)


# -- norm -------------------------------------------------------------------------------------


class LinalgVectorNormBackward0(_RNode):
    __slots__ = ("p", "keep_shape", "axes")

    def backward(self, g, x, norm):
        p = self.p
        if p == 0:
            return None
        g = _reshape(g, self.keep_shape)
        norm = _reshape(norm, self.keep_shape)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if p == 1:
                return np.sign(x) * g
            if p == 2:
                return g * _where(norm == 0, 0, x / norm)
            if math.isinf(p):
                ax = np.abs(x)
                mask = (ax == norm) | _isnan(ax)
                return np.sign(x) * ((g / _sumk(mask, self.axes)) * mask)
            if p < 1:
                scaled = np.sign(x) * _where(x == 0, 0, np.abs(x) ** (p - 1))
                return scaled * g * norm ** (1 - p)
            if p < 2:
                scaled = np.sign(x) * np.abs(x) ** (p - 1)
            else:
                scaled = x * np.abs(x) ** (p - 2)
            return scaled * _where(norm == 0, 0, g / norm ** (p - 1))

    def jvp(self, tangents, inputs, x, norm):
        return _partials_jvp(self, tangents[0], (x, norm), self.axes)


def _vector_norm_array(a: np.ndarray, p: float, axes: tuple, keepdim: bool) -> np.ndarray:
    ab = np.abs(a)
    real = ab.dtype
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
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
    _require_tensor(input, "linalg.vector_norm")
    a = input._data
    if a.dtype.kind not in "fc":
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
    res = _vector_norm_array(a, p, axes, keepdim)
    t = record(LinalgVectorNormBackward0, res, (src,), (src,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.p = p
        gf.keep_shape = _keep_shape(a.shape, axes)
        gf.axes = axes
    return t


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The vector p-norm over ``dim`` (all elements by default); ``'fro'`` is the 2-norm.

    Example:
        >>> import ember
        >>> ember.norm(ember.tensor([3.0, 4.0]))
        tensor(5.)
        >>> ember.tensor([[1.0, -2.0]]).norm(p=1, dim=1)
        tensor([3.])
    """
    _require_tensor(input, "norm")
    if p is None or p == "fro":
        p = 2
    elif isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("ember: norm(p='nuc') (the nuclear norm) is not supported")
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    t = _vector_norm(input, p, dim, keepdim, dtype=dtype)
    return _finish(t, out)


# -- logsumexp, softmax, log_softmax -------------------------------------------------------


def _missing_dim(fname: str):
    return TypeError(f'{fname}() missing 1 required positional arguments: "dim"')


class LogsumexpBackward0(_RNode):
    __slots__ = ("keep_shape",)

    def backward(self, g, x, result):
        with np.errstate(invalid="ignore"):
            return _reshape(g, self.keep_shape) * np.exp(x - _reshape(result, self.keep_shape))

    def jvp(self, tangents, inputs, x, result):
        return _partials_jvp(self, tangents[0], (x, result), _reduced_axes(self.keep_shape))


def logsumexp(input, dim=_UNSET, keepdim=False, *, axis=None, keepdims=None, out=None):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the max).

    Example:
        >>> import ember
        >>> ember.logsumexp(ember.tensor([1000.0, 1000.0]), 0)
        tensor(1000.6932)
    """
    _require_tensor(input, "logsumexp")
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    if dim is _UNSET:
        raise _missing_dim("logsumexp")
    if dim is None:
        raise TypeError(
            "logsumexp(): argument 'dim' (position 1) must be tuple of ints, not NoneType"
        )
    a = input._data
    if a.dtype.kind not in "fc":
        a = a.astype(default_float())
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and a.size and a.ndim:
        # torch's own logsumexp fails on an empty dim list (its result shape is wrong).
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape {[1] * a.ndim}")
    axes = _axes(a.ndim, dim)
    if a.size == 0:
        res = np.full(np.sum(a, axis=axes, keepdims=keepdim).shape, -np.inf, a.dtype)
    else:
        m = np.max(a, axis=axes, keepdims=True)
        m = np.where(np.isinf(m), 0, m).astype(a.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
        res = _arr(s if keepdim else np.squeeze(s, axis=axes), a.dtype)
    t = record(LogsumexpBackward0, res, (input,), (input,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.keep_shape = _keep_shape(a.shape, axes)
    return _finish(t, out)


def _to_copy(input: Tensor, np_dtype) -> Tensor:
    """``input.to(dtype)``: recorded as ToCopyBackward0, as torch does for ``dtype=``."""
    return input.to(_dtype.from_numpy_dtype(np_dtype))


def _softmax_input(input, dim, dtype, fname: str):
    _require_tensor(input, fname)
    if dim is _UNSET:
        raise _missing_dim(fname)
    if dtype is not None:
        nd = _np_dtype(dtype)
        if nd != input._data.dtype:
            input = _to_copy(input, nd)
    a = input._data
    ax = _single_axis(a.ndim, dim, fname)
    if a.dtype.kind not in "fc" and a.size:
        kernel = "lastdim_kernel_impl" if ax is None or ax == a.ndim - 1 else "kernel_impl"
        raise NotImplementedError(
            f"\"{fname}_{kernel}\" not implemented for '{_scalar_name(a.dtype)}'"
        )
    return input, a, ax


def _shifted(a: np.ndarray, ax: int | None):
    """``(a - max, axis)`` along ``ax``; a 0-d tensor is treated as one element."""
    if ax is None:
        return a - a, None
    if a.size == 0:
        return a, ax
    return a - np.max(a, axis=ax, keepdims=True), ax


class SoftmaxBackward0(_RNode):
    __slots__ = ("axes",)

    def backward(self, g, out):
        return out * (g - _sumk(g * out, self.axes))

    def jvp(self, tangents, inputs, out):
        # softmax's Jacobian diag(out) - out out^T is symmetric: the VJP rule is the JVP.
        return self.backward(tangents[0], out)


class LogSoftmaxBackward0(_RNode):
    __slots__ = ("axes",)

    def backward(self, g, out):
        return g - np.exp(out) * _sumk(g, self.axes)

    def jvp(self, tangents, inputs, out):
        t = tangents[0]
        return t - _sumk(np.exp(out) * t, self.axes)


def softmax(input, dim=_UNSET, dtype=None, *, axis=None):
    """``exp(x) / sum(exp(x))`` along ``dim``, computed stably.

    Example:
        >>> import ember
        >>> ember.softmax(ember.tensor([1.0, 1.0]), 0)
        tensor([0.5000, 0.5000])
    """
    if axis is not None:
        dim = axis
    src, a, ax = _softmax_input(input, dim, dtype, "softmax")
    z, ax = _shifted(a, ax)
    with np.errstate(invalid="ignore"):
        e = np.exp(z)
        res = e if ax is None else e / np.sum(e, axis=ax, keepdims=True)
    t = record(SoftmaxBackward0, _arr(res, a.dtype), (src,), (), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.axes = () if ax is None else (ax,)
    return t


def log_softmax(input, dim=_UNSET, dtype=None, *, axis=None):
    """``x - logsumexp(x)`` along ``dim``.

    Example:
        >>> import ember
        >>> ember.log_softmax(ember.tensor([0.0, 0.0]), 0)
        tensor([-0.6931, -0.6931])
    """
    if axis is not None:
        dim = axis
    src, a, ax = _softmax_input(input, dim, dtype, "log_softmax")
    z, ax = _shifted(a, ax)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = z if ax is None else z - np.log(np.sum(np.exp(z), axis=ax, keepdims=True))
    t = record(LogSoftmaxBackward0, _arr(res, a.dtype), (src,), (), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.axes = () if ax is None else (ax,)
    return t


# -- cumsum, cumprod -------------------------------------------------------------------------


def _reverse_cumsum(g, ax: int):
    if isinstance(g, np.ndarray):
        return np.flip(np.cumsum(np.flip(g, ax), ax), ax)
    return _sumk(g, (ax,)) - cumsum(g, ax) + g


class CumsumBackward0(_RNode):
    __slots__ = ("axis",)

    def backward(self, g):
        if self.axis is None or g.shape[self.axis] == 0:
            return g
        return _reverse_cumsum(g, self.axis)

    def jvp(self, tangents, inputs):
        t = tangents[0]
        return t if self.axis is None else cumsum(t, self.axis)


def _cumprod_grad_with_zeros(g: np.ndarray, x: np.ndarray, out: np.ndarray, ax: int):
    """cumprod's gradient where ``x`` has zeros along ``ax`` (no division by zero)."""
    gm = np.moveaxis(g, ax, -1).reshape(-1, x.shape[ax])
    xm = np.moveaxis(x, ax, -1).reshape(-1, x.shape[ax])
    om = np.moveaxis(out, ax, -1).reshape(-1, x.shape[ax])
    with np.errstate(divide="ignore", invalid="ignore"):
        res = np.flip(np.cumsum(np.flip(gm * om, -1), -1), -1) / xm
    for r in np.nonzero((xm == 0).any(axis=1))[0]:
        row_x, row_g = xm[r], gm[r]
        z = int(np.argmax(row_x == 0))
        res[r, z:] = 0
        tail = np.cumprod(row_x[z + 1 :])
        res[r, z] = np.prod(row_x[:z]) * (row_g[z] + np.sum(row_g[z + 1 :] * tail))
    shape = np.moveaxis(x, ax, -1).shape
    return np.moveaxis(res.reshape(shape), -1, ax)


def _cumprod_jvp_with_zeros(t: np.ndarray, x: np.ndarray, ax: int) -> np.ndarray:
    """cumprod's JVP where ``x`` has zeros: column i of the Jacobian is the running
    product of ``x`` with ``x_i`` replaced by one, from position i on."""
    tm = np.moveaxis(t, ax, -1)
    xm = np.moveaxis(x, ax, -1)
    res = np.zeros(np.broadcast_shapes(tm.shape, xm.shape), dtype=np.result_type(t, x))
    for i in range(xm.shape[-1]):
        y = xm.copy()
        y[..., i] = 1
        col = np.cumprod(y, axis=-1)
        res[..., i:] += tm[..., i : i + 1] * col[..., i:]
    return np.moveaxis(res, -1, ax)


class CumprodBackward0(_RNode):
    __slots__ = ("axis",)

    def backward(self, g, x, out):
        ax = self.axis
        if ax is None or x.shape[ax] == 0:
            return g
        xr = _raw(x)
        if not (xr == 0).any():
            return _reverse_cumsum(g * out, ax) / x
        return _const_like(_cumprod_grad_with_zeros(_raw(g), xr, _raw(out), ax), x)

    def jvp(self, tangents, inputs, x, out):
        # d out_k = sum_{i <= k} t_i prod_{j <= k, j != i} x_j
        t, ax = tangents[0], self.axis
        if ax is None or x.shape[ax] == 0:
            return t
        if not (_raw(x) == 0).any():
            return out * cumsum(t / x, ax)
        return _const_like(_cumprod_jvp_with_zeros(_raw(t), _raw(x), ax), x)


def _scan(input, dim, dtype, fname: str):
    _require_tensor(input, fname)
    if dim is _UNSET:
        raise _missing_dim(fname)
    a = _int_to_long(_cast_for(input, dtype), dtype)
    return a, _single_axis(a.ndim, dim, fname)


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
    acc = np.float32 if a.dtype == np.float16 else a.dtype
    res = a.copy() if ax is None else np.cumsum(a, axis=ax, dtype=acc)
    t = record(CumsumBackward0, _arr(res, a.dtype), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.axis = ax
    return _finish(t, out)


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
    res = a.copy() if ax is None else np.cumprod(a, axis=ax, dtype=a.dtype)
    src = input if a.dtype == input._data.dtype else _wrap(a)
    t = record(CumprodBackward0, _arr(res, a.dtype), (input,), (src,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.axis = ax
    return _finish(t, out)


# -- all, any, count_nonzero ----------------------------------------------------------------


def _logical_reduce(input, dim, keepdim, axis, keepdims, fname, np_fn):
    _require_tensor(input, fname)
    dim, keepdim = _pick(dim, axis, keepdim, keepdims)
    a = input._data
    # Unlike sum, an empty dim list reduces nothing here (torch's rule).
    axes = () if isinstance(dim, (tuple, list)) and not dim else _axes(a.ndim, dim)
    res = np.asarray(np_fn(a, axis=axes, keepdims=keepdim), np.bool_)
    return _wrap(res.astype(np.uint8) if a.dtype == np.uint8 else res)


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """True where every element (over ``dim``) is nonzero; uint8 inputs give uint8.

    Example:
        >>> import ember
        >>> ember.tensor([[True, False], [True, True]]).all(1)
        tensor([False,  True])
    """
    return _logical_reduce(input, dim, keepdim, axis, keepdims, "all", np.all)


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """True where some element (over ``dim``) is nonzero; uint8 inputs give uint8."""
    return _logical_reduce(input, dim, keepdim, axis, keepdims, "any", np.any)


def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (int64).

    Example:
        >>> import ember
        >>> ember.count_nonzero(ember.tensor([[0.0, 1.0], [2.0, 0.0]]), 0)
        tensor([1, 1])
    """
    _require_tensor(input, "count_nonzero")
    a = input._data
    axes = _axes(a.ndim, dim)
    return _wrap(
        _arr(np.count_nonzero(a, axis=axes), np.int64) if a.ndim else np.asarray(a != 0, np.int64)
    )


register_methods(
    {
        "sum": sum,
        "nansum": nansum,
        "mean": mean,
        "prod": prod,
        "max": max,
        "min": min,
        "amax": amax,
        "amin": amin,
        "aminmax": aminmax,
        "median": median,
        "argmax": argmax,
        "argmin": argmin,
        "std": std,
        "var": var,
        "norm": norm,
        "logsumexp": logsumexp,
        "softmax": softmax,
        "log_softmax": log_softmax,
        "cumsum": cumsum,
        "cumprod": cumprod,
        "all": all,
        "any": any,
        "count_nonzero": count_nonzero,
    }
)

__all__ = [
    "return_types",
    "sum",
    "nansum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "aminmax",
    "median",
    "argmax",
    "argmin",
    "std",
    "var",
    "var_mean",
    "std_mean",
    "norm",
    "logsumexp",
    "softmax",
    "log_softmax",
    "cumsum",
    "cumprod",
    "all",
    "any",
    "count_nonzero",
]
