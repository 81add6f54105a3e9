"""Sorting and selection ops: sort, argsort, msort, topk, kthvalue, unique,
repeat_interleave, index_fill and the fused addcmul/addcdiv.

Values chosen by index (sort, topk, kthvalue) take their gradient back through the
indices: ``zeros(input).scatter(dim, indices, grad)``; their JVP gathers the tangent at
the same indices. Node classes carry the names ``type(t.grad_fn).__name__`` has in torch
2.13 (``repeat_interleave`` with an int count ends in torch's ``view``, so ember records
one node under that name whose rule is the whole op's gradient).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, register_methods
from ._core import normalize_dim, result_type
from ._legacy import Node, _fw, _make_inplace, record, record_multi, set_saved
from .reduction import _select_result, _SelectNode, return_types

_wrap = Tensor._wrap


def _require_tensor(x, fname: str, arg: str = "input", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}"
        )


def _axis(a: np.ndarray, dim) -> int | None:
    """Normalised axis (None for a 0-d tensor, whose only valid dims are 0 and -1)."""
    d = normalize_dim(int(dim), a.ndim)
    return d if a.ndim else None


def _argsort(a: np.ndarray, ax: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``ax``; NaN counts as the largest value (torch's order)."""
    if not descending:
        return np.argsort(a, axis=ax, kind="stable")
    n = a.shape[ax]
    rev = np.flip(np.argsort(np.flip(a, ax), axis=ax, kind="stable"), ax)
    return (n - 1) - rev


# -- sort, argsort, msort, topk -------------------------------------------------------------


class _ScatterBackNode(Node):
    """Gradient of values picked by ``indices`` along ``axis`` (not reduced): scattered back."""

    __slots__ = ("in_shape", "axis")
    _multi_output = True

    def backward(self, grads, indices):
        g = grads[0]
        if g is None:
            return None
        if self.axis is None:
            return g
        if isinstance(g, np.ndarray):
            out = np.zeros(self.in_shape, g.dtype)
            np.put_along_axis(out, indices, g, axis=self.axis)
            return out
        from .indexing import scatter

        zeros = _wrap(np.zeros(self.in_shape, g._data.dtype))
        return scatter(zeros, self.axis, indices, g)

    def jvp(self, tangents, inputs, indices):
        t = tangents[0]
        if t is None or self.axis is None:
            return [t, None]
        from .indexing import gather

        return [gather(t, self.axis, indices), None]


class SortBackward0(_ScatterBackNode):
    __slots__ = ()


class SortBackward1(_ScatterBackNode):
    """``sort`` called with ``stable=`` (torch's other overload)."""

    __slots__ = ()


class TopkBackward0(_ScatterBackNode):
    __slots__ = ()


class KthvalueBackward0(_SelectNode):
    __slots__ = ()


def _picked(cls, rtype, input: Tensor, values: np.ndarray, indices: np.ndarray, ax):
    values_t, indices_t = record_multi(cls, [values, indices], (input,), (), (True, False))
    if (gf := values_t.grad_fn or _fw.node) is not None:
        set_saved(gf, (indices_t,))
        gf.in_shape = input._data.shape
        gf.axis = ax
    return rtype((values_t, indices_t))


def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    """Sorted values along ``dim`` and their indices (``torch.return_types.sort``).

    Example:
        >>> import ember
        >>> ember.sort(ember.tensor([3.0, 1.0, 2.0]))
        torch.return_types.sort(
        values=tensor([1., 2., 3.]),
        indices=tensor([1, 2, 0]))
    """
    _require_tensor(input, "sort")
    a = input._data
    ax = _axis(a, dim)
    if ax is None:
        values, indices = a.copy(), np.zeros((), np.int64)
    else:
        indices = _argsort(a, ax, bool(descending)).astype(np.int64, copy=False)
        values = np.take_along_axis(a, indices, axis=ax)
    cls = SortBackward0 if stable is None else SortBackward1
    return _picked(cls, return_types.sort, input, values, indices, ax)


def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (int64, no gradient).

    Example:
        >>> import ember
        >>> ember.argsort(ember.tensor([3.0, 1.0, 2.0]), descending=True)
        tensor([0, 2, 1])
    """
    _require_tensor(input, "argsort")
    a = input._data
    ax = _axis(a, dim)
    if ax is None:
        return _wrap(np.zeros((), np.int64))
    return _wrap(_argsort(a, ax, bool(descending)).astype(np.int64, copy=False))


def msort(input):
    """``sort(input, dim=0).values``."""
    _require_tensor(input, "msort")
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    Example:
        >>> import ember
        >>> ember.topk(ember.tensor([1.0, 4.0, 2.0, 3.0]), 2).values
        tensor([4., 3.])
    """
    _require_tensor(input, "topk")
    a = input._data
    ax = _axis(a, dim)
    n = 1 if ax is None else a.shape[ax]
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if ax is None:
        values, indices = a.copy(), np.zeros((), np.int64)
    else:
        order = _argsort(a, ax, bool(largest))
        indices = np.take(order, np.arange(k), axis=ax).astype(np.int64, copy=False)
        values = np.take_along_axis(a, indices, axis=ax)
    return _picked(TopkBackward0, return_types.topk, input, values, indices, ax)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` (1-based) and its index.

    Example:
        >>> import ember
        >>> ember.kthvalue(ember.tensor([3.0, 1.0, 2.0]), 2).values
        tensor(2.)
    """
    _require_tensor(input, "kthvalue")
    a = input._data
    ax = _axis(a, dim)
    n = 1 if ax is None else a.shape[ax]
    if not 1 <= k <= n:
        d = normalize_dim(int(dim), a.ndim)
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if ax is None:
        values, indices = a.copy(), np.zeros((), np.int64)
    else:
        order = np.argsort(a, axis=ax, kind="stable")
        indices = np.take(order, [k - 1], axis=ax).astype(np.int64, copy=False)
        values = np.take_along_axis(a, indices, axis=ax)
        if not keepdim:
            values, indices = values.squeeze(ax), indices.squeeze(ax)
    return _select_result(KthvalueBackward0, return_types.kthvalue, input, a, values, indices, ax)


# -- unique --------------------------------------------------------------------------------


class _NoDerivative(Node):
    __slots__ = ()
    _multi_output = True
    _name = ""

    def backward(self, grads):
        raise NotImplementedError(f"the derivative for '{self._name}' is not implemented.")

    def jvp(self, tangents, inputs):
        raise NotImplementedError(f"the derivative for '{self._name}' is not implemented.")


class Unique2Backward0(_NoDerivative):
    __slots__ = ()
    _name = "_unique2"


class UniqueDimBackward0(_NoDerivative):
    __slots__ = ()
    _name = "unique_dim"


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements (sorted), optionally with inverse indices and counts.

    Example:
        >>> import ember
        >>> ember.unique(ember.tensor([3, 1, 3, 2]))
        tensor([1, 2, 3])
    """
    _require_tensor(input, "unique")
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
    outs = [vals, inv.astype(np.int64), counts.astype(np.int64)]
    res = record_multi(cls, outs, (input,), (), (True, False, False))
    if not return_inverse and not return_counts:
        return res[0]
    picked = [res[0]]
    if return_inverse:
        picked.append(res[1])
    if return_counts:
        picked.append(res[2])
    return tuple(picked)


# -- repeat_interleave -----------------------------------------------------------------------


class ViewBackward0(Node):
    """``repeat_interleave`` by an int (torch ends it in a view): sums the copies."""

    __slots__ = ("in_shape", "split", "raxis")

    def backward(self, g):
        return g.reshape(self.split).sum(self.raxis).reshape(self.in_shape)

    def jvp(self, tangents, inputs):
        t = tangents[0]
        if t is None:
            return None
        ax = self.raxis
        one = self.split[:ax] + (1,) + self.split[ax + 1 :]
        return t.reshape(one).expand(self.split).reshape(self._meta[0][0])


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along ``dim``) ``repeats`` times.

    Example:
        >>> import ember
        >>> ember.repeat_interleave(ember.tensor([1, 2]), 2)
        tensor([1, 1, 2, 2])
    """
    _require_tensor(input, "repeat_interleave")
    if repeats is None:  # repeat_interleave(repeats): each index i, repeats[i] times
        r = input._data
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return _wrap(np.repeat(np.arange(r.size, dtype=np.int64), r.reshape(-1)))
    a = input._data
    if dim is None:
        ax = 0
        flat = a.reshape(-1)
    else:
        ax = normalize_dim(int(dim), a.ndim)
        flat = a if a.ndim else a.reshape(1)
    n = flat.shape[ax]
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        res = np.repeat(flat, int(repeats), axis=ax)
        t = record(ViewBackward0, res, (input,))
        if (gf := t.grad_fn or _fw.node) is not None:
            gf.in_shape = a.shape
            gf.split = flat.shape[: ax + 1] + (int(repeats),) + flat.shape[ax + 1 :]
            gf.raxis = ax + 1
        return t
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
    from .indexing import index_select

    base = input.reshape(-1) if dim is None or a.ndim == 0 else input
    idx = np.repeat(np.arange(n, dtype=np.int64), rep.astype(np.int64))
    return index_select(base, ax, _wrap(idx))


# -- index_fill -------------------------------------------------------------------------------


def _fill_key(ndim: int, ax: int, idx) -> tuple:
    return (slice(None),) * ax + (idx,)


class IndexFillBackward0(Node):
    __slots__ = ("axis", "index", "shape")

    def backward(self, g):
        return self._input_grad(g)

    def _input_grad(self, g):
        if isinstance(g, np.ndarray):
            g = g.reshape(self.shape).copy()
            g[_fill_key(g.ndim, self.axis, self.index)] = 0
            return g
        return index_fill(g.reshape(self.shape), self.axis, _wrap(self.index), 0.0)

    def _value_grad(self, g):
        idx = np.unique(self.index)
        if isinstance(g, np.ndarray):
            return g.reshape(self.shape)[_fill_key(g.ndim, self.axis, idx)].sum()
        from .indexing import index_select

        return index_select(g.reshape(self.shape), self.axis, _wrap(idx)).sum()

    def jvp(self, tangents, inputs):
        t = tangents[0]
        tv = tangents[1] if len(tangents) > 1 else None
        if t is None and tv is None:
            return None
        if t is None:
            t = _wrap(np.zeros(self.shape, self._meta[0][1]))
        t = t.reshape(self.shape)
        return index_fill(t, self.axis, _wrap(self.index), 0.0 if tv is None else tv)


class IndexFillBackward1(IndexFillBackward0):
    __slots__ = ()

    def backward(self, g):
        gi = self._input_grad(g) if self.next_functions[0][0] is not None else None
        gv = self._value_grad(g) if self.next_functions[1][0] is not None else None
        return gi, gv


def index_fill(input, dim, index, value):
    """``input`` with the slices ``index`` along ``dim`` set to ``value``.

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).index_fill(1, ember.tensor([0, 2]), 1.0)
        tensor([[1., 0., 1.],
                [1., 0., 1.]])
    """
    _require_tensor(input, "index_fill")
    _require_tensor(index, "index_fill", "index", 3)
    a = input._data
    idx = index._data
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    d = normalize_dim(int(dim), a.ndim)
    work = a if a.ndim else a.reshape(1)
    n = work.shape[d]
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
        cls, inputs, v = IndexFillBackward1, (input, value), value._data
    else:
        cls, inputs, v = IndexFillBackward0, (input,), value
    res = work.copy()
    res[_fill_key(res.ndim, d, flat_idx)] = v
    t = record(cls, res.reshape(a.shape), inputs)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.axis = d
        gf.index = flat_idx
        gf.shape = work.shape
    return t


# -- addcmul, addcdiv -----------------------------------------------------------------------


class AddcmulBackward0(Node):
    __slots__ = ("value",)

    def backward(self, g, t1, t2):
        nf = self.next_functions
        v = self.value
        return (
            g,
            g * (v * t2) if nf[1][0] is not None else None,
            g * (v * t1) if nf[2][0] is not None else None,
        )

    def jvp(self, tangents, inputs, t1, t2):
        ti, d1, d2 = tangents
        v = self.value
        out = ti
        if d1 is not None:
            out = d1 * t2 * v if out is None else out + d1 * t2 * v
        if d2 is not None:
            out = t1 * d2 * v if out is None else out + t1 * d2 * v
        return out


class AddcdivBackward0(Node):
    __slots__ = ("value",)

    def backward(self, g, t1, t2):
        nf = self.next_functions
        v = self.value
        return (
            g,
            g * (v / t2) if nf[1][0] is not None else None,
            -g * (v * t1) / (t2 * t2) if nf[2][0] is not None else None,
        )

    def jvp(self, tangents, inputs, t1, t2):
        ti, d1, d2 = tangents
        v = self.value
        out = ti
        if d1 is not None:
            out = d1 * v / t2 if out is None else out + d1 * v / t2
        if d2 is not None:
            term = -(t1 * d2) * v / (t2 * t2)
            out = term if out is None else out + term
        return out


def _addc(input, tensor1, tensor2, value, fname: str, div: bool):
    _require_tensor(input, fname)
    _require_tensor(tensor1, fname, "tensor1", 2)
    _require_tensor(tensor2, fname, "tensor2", 3)
    rt = result_type(input, tensor1, tensor2)
    if div and rt.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    a, b, c = (x._data.astype(rt, copy=False) for x in (input, tensor1, tensor2))
    with np.errstate(divide="ignore", invalid="ignore"):
        res = a + value * (b / c) if div else a + value * (b * c)
    res = np.asarray(res).astype(rt, copy=False)
    cls = AddcdivBackward0 if div else AddcmulBackward0
    t = record(cls, res, (input, tensor1, tensor2), (tensor1, tensor2))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.value = value
    return t


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2``.

    Example:
        >>> import ember
        >>> ember.addcmul(ember.ones(2), ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
        tensor([4., 9.])
    """
    return _addc(input, tensor1, tensor2, value, "addcmul", False)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2``.

    Example:
        >>> import ember
        >>> ember.addcdiv(ember.ones(2), ember.tensor([1.0, 2.0]), ember.tensor([2.0, 4.0]))
        tensor([1.5000, 1.5000])
    """
    return _addc(input, tensor1, tensor2, value, "addcdiv", True)


addcmul_ = _make_inplace(addcmul)
addcdiv_ = _make_inplace(addcdiv)
index_fill_ = _make_inplace(index_fill)


register_methods(
    {
        "sort": sort,
        "argsort": argsort,
        "msort": msort,
        "topk": topk,
        "kthvalue": kthvalue,
        "unique": unique,
        "repeat_interleave": repeat_interleave,
        "index_fill": index_fill,
        "index_fill_": index_fill_,
        "addcmul": addcmul,
        "addcmul_": addcmul_,
        "addcdiv": addcdiv,
        "addcdiv_": addcdiv_,
    }
)

__all__ = [
    "sort",
    "argsort",
    "msort",
    "topk",
    "kthvalue",
    "unique",
    "repeat_interleave",
    "index_fill",
    "addcmul",
    "addcdiv",
]
