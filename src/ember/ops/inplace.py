"""In-place ops (``add_``, ``mul_``, ``zero_``, ``t_``, ``copy_``, ``__setitem__``, ...).

An in-place op on a tensor that is part of the graph is recorded as its out-of-place
twin applied to a snapshot of the old value; the tensor then takes the new value and
the new ``grad_fn`` ("rebasing its history", as torch says), and its version counter is
bumped so that backward rules that saved the old value refuse to run.
"""

from __future__ import annotations

import numpy as np

from .._dtype import scalar_name
from .._tensor import INFERENCE_INPLACE_MSG, Tensor, _legacy_type_name, register_methods
from ..autograd import forward_ad as fw
from ..autograd import grad_mode
from ..autograd.graph import _init_node, op_name, sum_to_shape
from . import elementwise as ew
from ._core import Node, _on, edge_of, needs_grad, record
from .shape import expanded_size

_state = grad_mode.state
_wrap = Tensor._wrap

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_MSG = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def _check_writable(self: Tensor, recording: bool, rebase: bool = True):
    """Refuse in-place changes torch refuses; return the base a view's change must be
    recorded on (None when ``self`` is not a view or nothing is recorded)."""
    if self._vc is None and not _state.inference:
        raise RuntimeError(INFERENCE_INPLACE_MSG)
    aux = self._aux
    if aux is not None and aux.no_grad_view is not None and _state.enabled:
        raise RuntimeError(_no_grad_view_msg(aux.no_grad_view))
    if not recording:
        return None
    if self.grad_fn is None and self._rg:
        raise RuntimeError(LEAF_MSG)
    if aux is None or aux.base is None:
        return None
    base = aux.base
    if base.grad_fn is None and base._rg:
        raise RuntimeError(VIEW_LEAF_MSG)
    if not rebase or _view_geometry(self._data, base._data) is None:
        raise RuntimeError(
            "ember does not support recording this in-place operation on a view of a tensor "
            "that is part of the autograd graph; use the out-of-place operation instead"
        )
    return base


def _no_grad_view_msg(view_node: str) -> str:
    head = (
        f"Output 0 of {op_name(view_node)} is a view of a view which was created in no_grad mode"
        if view_node
        else "A view was created in no_grad mode"
    )
    return (
        f"{head} and is being modified inplace with grad mode enabled. Given that this use "
        "case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
        "moving both the view and the inplace either both inside the no_grad block (if you "
        "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
        "tracked)."
    )


# -- in-place changes through views --------------------------------------------------------
# NumPy views share memory, so writing through a view already changes its base; what is
# left is the graph. As torch does, the base's history becomes a CopySlices node wrapping
# the in-place op's node (whose first input was the view), and the view itself becomes an
# AsStridedBackward0 of the new base. A view is located inside its base by its element
# offset and strides, so every kind of view (select, slice, transpose, diagonal, ...) works.


def _view_geometry(view: np.ndarray, base: np.ndarray):
    """(offset, shape, strides) of ``view`` in elements of the C-contiguous ``base``."""
    if not base.flags.c_contiguous or view.dtype != base.dtype:
        return None
    item = base.itemsize
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset % item or any(st % item for st in view.strides):
        return None
    offset //= item
    if not 0 <= offset <= base.size or not np.may_share_memory(view, base):
        return None if view.size else (0, view.shape, (0,) * view.ndim)
    return offset, view.shape, tuple(st // item for st in view.strides)


def _region(arr: np.ndarray, geometry) -> np.ndarray:
    """The writable view of a C-contiguous base-shaped ``arr`` that ``geometry`` describes."""
    offset, shape, strides = geometry
    flat = arr.reshape(-1)
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=shape, strides=tuple(st * arr.itemsize for st in strides)
    )


class CopySlicesView(Node):
    """The base's node after an in-place op on one of its views (torch's CopySlices)."""

    __slots__ = ("fn", "geometry")

    def backward(self, g):
        if not isinstance(g, np.ndarray):
            raise NotImplementedError(
                "ember cannot differentiate twice through an in-place operation on a view"
            )
        fn = self.fn
        g_base = np.array(g, order="C", copy=True)
        region = _region(g_base, self.geometry)
        g_view = region.copy()
        grads = fn.backward(g_view, *fn._unpack_saved(False))
        grads = grads if type(grads) is tuple else (grads,)
        g_old = grads[0]
        region[...] = 0 if g_old is None else sum_to_shape(np.asarray(g_old), g_view.shape)
        return (g_base, *grads[1:])


CopySlicesView.__name__ = CopySlicesView.__qualname__ = "CopySlices"


class AsStridedBackward0(Node):
    """A view after an in-place op through it: its gradient lands in its region of the base."""

    __slots__ = ("geometry", "base_shape")

    def backward(self, g):
        if not isinstance(g, np.ndarray):
            raise NotImplementedError(
                "ember cannot differentiate twice through an in-place operation on a view"
            )
        g_base = np.zeros(self.base_shape, dtype=g.dtype)
        _region(g_base, self.geometry)[...] = g
        return g_base


def _rebase_view(view: Tensor, base: Tensor) -> None:
    """After an in-place op recorded as ``view.grad_fn``, move that history onto ``base``."""
    fn = view.grad_fn
    geometry = _view_geometry(view._data, base._data)
    meta = ((base._data.shape, base._data.dtype),)
    if fn is None:
        return
    copy_slices = _init_node(
        CopySlicesView.__new__(CopySlicesView), (edge_of(base),) + fn.next_functions[1:], meta
    )
    copy_slices.fn = fn
    copy_slices.geometry = geometry
    base.grad_fn = copy_slices
    base._rg = True
    base._output_nr = 0
    as_strided = _init_node(
        AsStridedBackward0.__new__(AsStridedBackward0),
        ((copy_slices, 0),),
        ((view._data.shape, view._data.dtype),),
    )
    as_strided.geometry = geometry
    as_strided.base_shape = base._data.shape
    view.grad_fn = as_strided
    view._rg = True
    view._output_nr = 0


def _snapshot(self: Tensor) -> Tensor:
    """The pre-modification value, attached to the same place in the graph."""
    pre = _wrap(self._data.copy())
    pre.grad_fn = self.grad_fn
    pre._rg = self._rg
    pre._output_nr = self._output_nr
    if _on and (tangent := fw.tangent_of(self)) is not None:
        fw.inplace_set(pre, tangent)
    return pre


# -- forward AD: an in-place op gives the tensor the tangent of its out-of-place twin ------


def _fw_take(self: Tensor, tangent) -> None:
    """``self`` was modified in place: its tangent becomes ``tangent`` (fitted to it)."""
    if self._data.dtype.kind not in "fc":
        return
    if tangent is not None:
        with fw.suspended():
            tangent = fw.fit_tangent(tangent, self)
    fw.inplace_set(self, tangent)


def _store(self: Tensor, value: np.ndarray) -> None:
    if value.dtype != self._data.dtype and not np.can_cast(
        value.dtype, self._data.dtype, "same_kind"
    ):
        from .._dtype import from_numpy_dtype

        raise RuntimeError(
            f"result type {_type_word(from_numpy_dtype(value.dtype))} can't be cast to the "
            f"desired output type {_type_word(from_numpy_dtype(self._data.dtype))}"
        )
    if value.shape != self._data.shape:
        try:
            np.broadcast_to(value, self._data.shape)
        except ValueError:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(value.shape)}"
            ) from None
        if np.broadcast_shapes(value.shape, self._data.shape) != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(np.broadcast_shapes(value.shape, self._data.shape))}"
            )
    np.copyto(self._data, value, casting="unsafe")
    self._bump()


def _type_word(d) -> str:
    return scalar_name(d)


def _inplace(self: Tensor, op, *args, **kwargs) -> Tensor:
    recording = _state.enabled and (self._rg or needs_grad(*args, *kwargs.values()))
    base = _check_writable(self, recording)
    if not recording:
        with grad_mode.no_grad():
            result = op(self, *args, **kwargs)
        tangent = fw.tangent_of(result) if _on else None  # its JVP runs before self changes
        _store(self, result._data)
        if _on:
            _fw_take(self, tangent)
        return self
    result = op(_snapshot(self), *args, **kwargs)
    tangent = fw.tangent_of(result) if _on else None
    _store(self, result._data)
    if _on:
        _fw_take(self, tangent)
    self.grad_fn = result.grad_fn
    self._rg = result._rg
    self._output_nr = 0
    if base is not None:
        _rebase_view(self, base)
    return self


def _make_inplace(op):
    def method(self, *args, **kwargs):
        return _inplace(self, op, *args, **kwargs)

    method.__name__ = op.__name__ + "_"
    method.__doc__ = f"In-place version of ``{op.__name__}``."
    return method


class ZeroBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return g * 0


class FillBackward0(Node):
    __slots__ = ()

    def backward(self, g):
        return g * 0


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place.

    Example:
        >>> import ember
        >>> ember.ones(2).zero_()
        tensor([0., 0.])
    """
    return _fill(self, 0, ZeroBackward0)


def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        value = value.item()
    return _fill(self, value, FillBackward0)


def _fill(self: Tensor, value, node_cls) -> Tensor:
    recording = _state.enabled and self._rg
    base = _check_writable(self, recording)
    if _on:
        fw.inplace_begin()
        if fw.tangent_of(self) is not None:
            _fw_take(self, _wrap(np.zeros_like(self._data)))
    self._data[...] = value
    self._bump()
    if recording:
        node = _init_node(
            node_cls.__new__(node_cls), (edge_of(self),), ((self._data.shape, self._data.dtype),)
        )
        self.grad_fn = node
        self._output_nr = 0
        if base is not None:
            _rebase_view(self, base)
    return self


class CopyBackwards(Node):
    __slots__ = ()

    def backward(self, g):
        return g * 0, g


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast) into this tensor in place; gradients flow to ``src``.

    Example:
        >>> import ember
        >>> ember.zeros(2).copy_(ember.tensor([1, 2]))
        tensor([1., 2.])
    """
    if not isinstance(src, Tensor):
        src = _wrap(np.asarray(src))
    recording = _state.enabled and (self._rg or src._rg)
    base = _check_writable(self, recording)
    try:
        np.broadcast_to(src._data, self._data.shape)
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({self._data.shape[-1] if self._data.ndim else 1}) must match "
            f"the size of tensor b ({src._data.shape[-1] if src._data.ndim else 1}) at "
            "non-singleton dimension 0"
        ) from None
    if _on:
        fw.inplace_begin()
        ts = fw.tangent_of(src)
        if ts is not None or fw.tangent_of(self) is not None:
            _fw_take(self, ts if ts is not None else _wrap(np.zeros_like(self._data)))
    np.copyto(self._data, src._data, casting="unsafe")
    self._bump()
    if recording:
        node = _init_node(
            CopyBackwards.__new__(CopyBackwards),
            (edge_of(self), edge_of(src)),
            ((self._data.shape, self._data.dtype),),
        )
        self.grad_fn = node
        self._rg = True
        self._output_nr = 0
        if base is not None:
            _rebase_view(self, base)
    return self


class TBackward1(Node):
    """Node of the in-place transpose ``t_()``."""

    __slots__ = ()

    def backward(self, g):
        return g.T


def t_(self: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims in place (the seed's ``y.t_()``)."""
    if self._data.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D"
        )
    recording = _state.enabled and self._rg
    _check_writable(self, recording, rebase=False)
    if _on:
        fw.inplace_begin()
        if (tangent := fw.tangent_of(self)) is not None:
            with fw.suspended():
                fw.inplace_set(self, tangent.t())
    self._data = self._data.T
    self._bump()
    if recording:
        node = _init_node(
            TBackward1.__new__(TBackward1),
            (edge_of(self),),
            ((self._data.shape, self._data.dtype),),
        )
        self.grad_fn = node
        self._output_nr = 0
    return self


# -- indexed assignment ------------------------------------------------------------------


class CopySlices(Node):
    """``tensor[index] = value`` on a tensor in the graph (torch's CopySlices)."""

    __slots__ = ("index",)

    def backward(self, g):
        idx = self.index
        if isinstance(g, np.ndarray):
            g_self = g.copy()
            g_self[idx] = 0
            return g_self, np.asarray(g[idx])
        from .indexing import index_np, index_put

        # index_np: NumPy's indexing semantics, as the forward used.
        return index_put(g, idx, 0.0), index_np(g, idx)


def _index_key(key):
    """Turn Tensors inside an index into arrays NumPy understands."""
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        arr = key._data
        if arr.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(key, list):
        return np.asarray([k._data if isinstance(k, Tensor) else k for k in key])
    return key


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
    base = _check_writable(self, recording)
    if _on:
        fw.inplace_begin()  # pending JVPs run before self changes
    v = value._data
    try:
        target = self._data[idx]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    if v.shape != np.shape(target):
        _check_assignable(v.shape, np.shape(target), key, v.dtype)
    self._data[idx] = v
    self._bump()
    if _on:
        _fw_setitem(self, idx, value)
    if recording:
        node = _init_node(
            CopySlices.__new__(CopySlices),
            (edge_of(self), edge_of(value)),
            ((self._data.shape, self._data.dtype),),
        )
        node.index = idx
        self.grad_fn = node
        self._rg = True
        self._output_nr = 0
        if base is not None:
            _rebase_view(self, base)


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


def _fw_setitem(self: Tensor, idx, value: Tensor) -> None:
    """Forward AD for ``self[idx] = value``: the tangent's ``[idx]`` becomes value's."""
    tv = fw.tangent_of(value)
    ts = fw.tangent_of(self)
    if (tv is None and ts is None) or self._data.dtype.kind not in "fc":
        return
    from .indexing import index_put

    dt = self._data.dtype
    with fw.suspended():
        base = ts.to(dt) if ts is not None else _wrap(np.zeros(self._data.shape, dt))
        new = index_put(base, idx, tv.to(dt) if tv is not None else 0.0)
    fw.inplace_set(self, new)


_METHODS = {
    "zero_": zero_,
    "fill_": fill_,
    "copy_": copy_,
    "t_": t_,
    "__setitem__": setitem,
}
for _name in (
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "neg",
    "clamp",
    "clamp_min",
    "clamp_max",
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "reciprocal",
    "square",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "fmod",
    "remainder",
    "lerp",
    "atan2",
    "rsqrt",
    "log1p",
    "expm1",
    "tan",
    "log2",
    "frac",
):
    _op = getattr(ew, _name)
    _METHODS[_name + "_"] = _make_inplace(_op)
_METHODS["clip_"] = _METHODS["clamp_"]
_METHODS["subtract_"] = _METHODS["sub_"]
_METHODS["multiply_"] = _METHODS["mul_"]
_METHODS["divide_"] = _METHODS["div_"]
_METHODS["negative_"] = _METHODS["neg_"]
_METHODS["absolute_"] = _METHODS["abs_"]
for _dunder, _name in (
    ("__iadd__", "add_"),
    ("__isub__", "sub_"),
    ("__imul__", "mul_"),
    ("__itruediv__", "div_"),
    ("__ipow__", "pow_"),
):
    _METHODS[_dunder] = _METHODS[_name]

register_methods(_METHODS)

__all__ = ["zero_", "fill_", "copy_", "t_", "setitem", "CopySlices", "sum_to_shape", "record"]
