"""In-place ops: the ``op_`` variant of every registered op, ``zero_``, ``fill_``, ``copy_``,
``t_`` and indexed assignment (``__setitem__``).

``op_`` runs the out-of-place op and stores its result into the tensor, which takes the op's
node as its history (``autograd.views.apply_inplace``: snapshots, version counters, views
and forward-AD tangents are handled there, once for all ops).
"""

from __future__ import annotations

import numpy as np

from .._mode import state as _state
from .._tensor import Tensor, _legacy_type_name
from ..autograd.recording import (
    _on,
    edges_of,
    inplace_tangent,
    make_node,
    suspended,
    tangent_of,
)
from ..autograd.views import apply_inplace, check_writable, set_history
from ._core import LINEAR, broadcast_error, defop, record, register
from .indexing import index_np, index_put
from .shape import expanded_size

_wrap = Tensor._wrap


def make_inplace(op, name: str):
    """The in-place Tensor method ``name`` (``add_``) of the out-of-place ``op``."""

    def method(self, *args, **kwargs):
        return apply_inplace(self, op, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of ``{op.__name__}``."
    return method


# -- zero_, fill_, copy_ ----------------------------------------------------------------------


def _overwritten(g):
    """The gradient of a value overwritten whole: torch's ``zeros_like(grad)`` (``g * 0``
    would be NaN where ``g`` is infinite or NaN), a constant in a recorded backward."""
    if isinstance(g, Tensor):
        return _wrap(np.zeros_like(g._data))
    return np.zeros_like(g)


ZeroBackward0 = defop(
    "ZeroBackward0",
    forward=np.zeros_like,
    vjp={"self": _overwritten},
    jvp=LINEAR,
)

FillBackward0 = defop(
    "FillBackward0",
    params=("value",),
    forward=lambda a, value: np.full_like(a, value),
    vjp={"self": _overwritten},
    jvp=lambda t_self: None,
)


@register("zero_", function=False, method=True)
def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place.

    Example:
        >>> import ember
        >>> ember.ones(2).zero_()
        tensor([0., 0.])
    """
    return apply_inplace(self, _new_value, ZeroBackward0, (), copy_old=False)


@register("fill_", function=False, method=True)
def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place.

    Example:
        >>> import ember
        >>> ember.zeros(2).fill_(3)
        tensor([3., 3.])
    """
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        value = value.item()
    return apply_inplace(self, _new_value, FillBackward0, (value,), copy_old=False)


def _new_value(self: Tensor, cls, params: tuple) -> Tensor:
    return record(cls, cls.forward(self._data, *params), (self,), params)


def fill_with(self: Tensor, values, cls) -> Tensor:
    """``self`` filled in place with ``values`` (random draws), recorded as ``cls``."""
    values = np.asarray(values).astype(self._data.dtype, copy=False)
    return apply_inplace(self, lambda s: record(cls, values, (s,)), copy_old=False)


def _copy_forward(a, src):
    return np.broadcast_to(src, a.shape).astype(a.dtype, copy=True)


CopyBackwards = defop(
    "CopyBackwards",
    inputs=("self", "src"),
    forward=_copy_forward,
    vjp={"self": _overwritten, "src": lambda g: g},
    jvp=LINEAR,
)


@register("copy_", function=False, method=True)
def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast) into this tensor in place; gradients flow to ``src``.

    Example:
        >>> import ember
        >>> ember.zeros(2).copy_(ember.tensor([1, 2]))
        tensor([1., 2.])
    """
    if not isinstance(src, Tensor):
        src = _wrap(np.asarray(src))
    try:
        np.broadcast_to(src._data, self._data.shape)
    except ValueError:
        raise broadcast_error(self._data.shape, src._data.shape) from None
    return apply_inplace(self, _copied, src, copy_old=False)


def _copied(self: Tensor, src: Tensor) -> Tensor:
    return record(CopyBackwards, _copy_forward(self._data, src._data), (self, src))


# -- t_ ------------------------------------------------------------------------------------------

TBackward1 = defop(  # the in-place transpose t_()
    "TBackward1",
    forward=lambda a: a.T,
    vjp={"self": lambda g: g.T},
    jvp=LINEAR,
)


@register("t_", function=False, method=True)
def t_(self: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims in place (the seed's ``y.t_()``).

    Example:
        >>> import ember
        >>> ember.zeros(2, 3).t_().shape
        torch.Size([3, 2])
    """
    if self._data.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D"
        )
    recording = _state.enabled and self._rg
    check_writable(self, recording, rebase=False)
    tangent = tangent_of(self) if _on else None
    node = None
    if recording:
        edges = edges_of((self,))
        self._data = self._data.T
        node = make_node(TBackward1, edges, self, (self,))
    else:
        self._data = self._data.T
    self._bump()
    set_history(self, node, None)
    if tangent is not None:
        with suspended:
            self._aux.tangent = tangent.t()
    return self


# -- indexed assignment ------------------------------------------------------------------------


def _assign(a, src, index):
    out = a.copy()
    out[index] = src
    return out


def _cut_out(g, index):
    if isinstance(g, np.ndarray):
        g_self = g.copy()
        g_self[index] = 0
        return g_self
    return index_put(g, index, 0.0)


def _part(g, index):
    if isinstance(g, np.ndarray):
        return np.asarray(g[index])
    return index_np(g, index)  # NumPy's indexing semantics, as the forward used


CopySlices = defop(  # self[index] = src on a tensor in the graph
    "CopySlices",
    inputs=("self", "src"),
    params=("index",),
    forward=_assign,
    vjp={"self": _cut_out, "src": _part},
    jvp=LINEAR,
)


def _index_key(key):
    """Turn Tensors inside an index into arrays NumPy understands."""
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        arr = key._data
        if arr.dtype.kind in "fV":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(key, list):
        return np.asarray([k._data if isinstance(k, Tensor) else k for k in key])
    return key


@register("__setitem__", function=False, method=True)
def setitem(self: Tensor, key, value) -> None:
    """``self[key] = value`` with torch's autograd semantics (CopySlices).

    Example:
        >>> import ember
        >>> m = ember.tensor([[2.0, 3.0]], requires_grad=True)
        >>> n = ember.zeros(1, 2)
        >>> n[0, 0] = m[0, 0] ** 2
        >>> n
        tensor([[4., 0.]], grad_fn=<CopySlices>)
    """
    idx = _index_key(key)
    if not isinstance(value, Tensor):
        if not isinstance(value, (int, float, bool, complex, np.generic)):
            kind = type(value)
            what = (
                kind.__name__
                if kind.__module__ == "builtins"
                else f"{kind.__module__}.{kind.__name__}"
            )
            raise TypeError(f"can't assign a {what} to a {_legacy_type_name(self._data.dtype)}")
        value = _wrap(np.asarray(value, dtype=self._data.dtype))
    recording = _state.enabled and (self._rg or value._rg)
    base = check_writable(self, recording)
    v = value._data
    try:
        target = self._data[idx]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    if v.shape != np.shape(target):
        _check_assignable(v.shape, np.shape(target), key, v.dtype)
    tangents = (tangent_of(self), tangent_of(value)) if _on else (None, None)
    edges = edges_of((self, value)) if recording else None
    self._data[idx] = v  # written straight into self: no copy of the whole tensor
    self._bump()
    if recording:
        set_history(self, make_node(CopySlices, edges, self, (self, value), (idx,)), base)
    if tangents != (None, None) and self._data.dtype.kind in "fcV":
        ts, tv = tangents
        with suspended:
            new = (ts if ts is not None else self.new_zeros(self._data.shape)).clone()
            new._data[idx] = 0 if tv is None else tv._data
        inplace_tangent(self, new)


def _is_basic_key(key) -> bool:
    """True for an index of ints, slices, None and Ellipsis only (a view of the tensor)."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(
        k is None
        or k is Ellipsis
        or isinstance(k, (slice, int, np.integer))
        or (isinstance(k, Tensor) and k._data.ndim == 0 and k._data.dtype.kind in "iu")
        for k in parts
    )


def _check_assignable(shape: tuple, target: tuple, key, np_dtype) -> None:
    """torch's error when a value of ``shape`` cannot be written to ``self[key]``."""
    if _is_basic_key(key):
        # torch drops the value's leading size-1 dims, then expands it to the target.
        while len(shape) > len(target) and shape[0] == 1:
            shape = shape[1:]
        expanded_size(shape, target, np_dtype)
        return
    try:
        np.broadcast_shapes(shape, target)
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(shape)} cannot be broadcast to "
            f"indexing result of shape {list(target)}"
        ) from None
