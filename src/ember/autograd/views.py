"""Views and in-place changes: what the graph must do when a tensor changes under it.

A view (``reshape``, ``select``, ``transpose``, ...) shares its base's memory and version
counter (``recording.as_view``), so a saved tensor modified through any alias is caught.
An in-place op on a tensor in the graph is recorded as its out-of-place twin applied to a
snapshot of the old value; the tensor then takes the new value and the new ``grad_fn``
("rebasing its history", as torch says) and its version counter is bumped. Through a view,
NumPy has already changed the base's memory; what is left is the graph: as torch does,
the base's history becomes a ``CopySlices`` node wrapping the in-place op's node, and the
view becomes an ``AsStridedBackward0`` of the new base. A view is located inside its base
by its element offset and strides, so every kind of view works.

This module also declares the two view nodes the autograd layer itself creates
(``ViewBackward0`` for ``make_dual``, ``AliasBackward0``); the op families import them.
"""

from __future__ import annotations

import numpy as np

from .._dtype import from_numpy_dtype, scalar_name
from .._mode import state as _state
from .._tensor import INFERENCE_INPLACE_MSG, Tensor
from .graph import Node, edge_of, init_node, op_name, sum_to_shape
from .opdef import LINEAR, defop
from .recording import (
    _capture,
    _on,
    active_capture,
    inplace_tangent,
    region,
    set_tangent,
    tangent_of,
    view_geometry,
)

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_LEAF_MSG = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)

ViewBackward0 = defop(
    "ViewBackward0",
    batch=lambda x, self_sizes, size: x.reshape((x.shape[0],) + tuple(size)),
    params=("self_sizes", "size"),
    forward=lambda a, self_sizes, size: a.reshape(size),
    vjp={"self": lambda g, self_sizes: g.reshape(self_sizes)},
    jvp=LINEAR,
    view=True,
)

AliasBackward0 = defop(
    "AliasBackward0",
    forward=lambda a: a.view(),
    vjp={"self": lambda g: g},
    jvp=LINEAR,
    view=True,
)


# -- may this tensor be changed in place? ------------------------------------------------------


def check_writable(self: Tensor, recording: bool, rebase: bool = True):
    """Refuse the in-place changes torch refuses; return the base a view's change must be
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
    if not rebase or view_geometry(self._data, base._data) is None:
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


# -- the graph after an in-place change through a view ------------------------------------------


class CopySlices(Node):
    """The base's node after an in-place op on one of its views (torch's CopySlices)."""

    __slots__ = ("fn", "geometry")

    def backward(self, g):
        if not isinstance(g, np.ndarray):
            raise NotImplementedError(
                "ember cannot differentiate twice through an in-place operation on a view"
            )
        fn = self.fn
        g_base = np.array(g, order="C", copy=True)
        part = region(g_base, self.geometry)
        g_view = part.copy()
        grads = fn.backward(g_view, *fn._unpack_saved(False))
        grads = grads if type(grads) is tuple else (grads,)
        g_old = grads[0]
        part[...] = 0 if g_old is None else sum_to_shape(np.asarray(g_old), g_view.shape)
        return (g_base, *grads[1:])


class AsStridedBackward0(Node):
    """A view after an in-place op through it: its gradient lands in its region of the base."""

    __slots__ = ("geometry", "base_shape")

    def backward(self, g):
        if not isinstance(g, np.ndarray):
            raise NotImplementedError(
                "ember cannot differentiate twice through an in-place operation on a view"
            )
        g_base = np.zeros(self.base_shape, dtype=g.dtype)
        region(g_base, self.geometry)[...] = g
        return g_base


def rebase_view(view: Tensor, base: Tensor) -> None:
    """After an in-place op recorded as ``view.grad_fn``, move that history onto ``base``."""
    fn = view.grad_fn
    if fn is None:
        return
    geometry = view_geometry(view._data, base._data)
    meta = ((base._data.shape, base._data.dtype),)
    copy_slices = init_node(
        CopySlices.__new__(CopySlices), (edge_of(base),) + fn.next_functions[1:], meta
    )
    copy_slices.fn = fn
    copy_slices.geometry = geometry
    base.grad_fn = copy_slices
    base._rg = True
    base._output_nr = 0
    as_strided = init_node(
        AsStridedBackward0.__new__(AsStridedBackward0),
        ((copy_slices, 0),),
        ((view._data.shape, view._data.dtype),),
    )
    as_strided.geometry = geometry
    as_strided.base_shape = base._data.shape
    view.grad_fn = as_strided
    view._rg = True
    view._output_nr = 0


def set_history(self: Tensor, node, base: Tensor | None) -> None:
    """``self`` was changed in place by the op recorded as ``node`` (None: not recorded)."""
    if node is None:
        return
    self.grad_fn = node
    self._rg = True
    self._output_nr = 0
    if base is not None:
        rebase_view(self, base)


# -- an op applied in place ----------------------------------------------------------------------


def _snapshot(self: Tensor, copy: bool) -> Tensor:
    """The pre-modification value (a copy when the op may save it), attached to the same
    place in the graph."""
    pre = Tensor._wrap(self._data.copy() if copy else self._data)
    pre.grad_fn = self.grad_fn
    pre._rg = self._rg
    pre._output_nr = self._output_nr
    if _on and (tangent := tangent_of(self)) is not None:
        set_tangent(pre, tangent)
    return pre


def store(self: Tensor, value: np.ndarray) -> None:
    """Write ``value`` into ``self``'s memory (torch's cast and shape rules) and bump its
    version counter."""
    if value.dtype != self._data.dtype and not np.can_cast(
        value.dtype, self._data.dtype, "same_kind"
    ):
        raise RuntimeError(
            f"result type {scalar_name(from_numpy_dtype(value.dtype))} can't be cast to the "
            f"desired output type {scalar_name(from_numpy_dtype(self._data.dtype))}"
        )
    if value.shape != self._data.shape:
        try:
            shape = np.broadcast_shapes(value.shape, self._data.shape)
        except ValueError:
            shape = value.shape
        if shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
    np.copyto(self._data, value, casting="unsafe")
    self._bump()


def apply_inplace(self: Tensor, op, *args, copy_old: bool = True, **kwargs) -> Tensor:
    """``self.op_(*args)``: ``op`` (out-of-place) computes the new value, which is stored
    into ``self``; when recorded, ``self`` takes the op's node as its history.

    copy_old: False for ops whose backward never reads the old value (fill, copy): they
        skip copying it.
    """
    recording = _state.enabled and (self._rg or _any_requires_grad(args, kwargs))
    base = check_writable(self, recording)
    capture = active_capture() if _capture else None
    if capture is not None and base is None and capture.rebinds(self):
        # The compiler's capture: the op out of place, ``self`` now names its result.
        pre = _snapshot(self, copy_old)
        capture.same_value(pre, self)
        result = op(pre, *args, **kwargs)
        capture.rebind(self, result, lambda: store(self, result._data))
        if recording:
            self.grad_fn, self._rg, self._output_nr = result.grad_fn, result._rg, 0
        return self
    if not recording:
        prev = _state.enabled
        _state.enabled = False
        try:
            result = op(self, *args, **kwargs)
        finally:
            _state.enabled = prev
    else:
        result = op(_snapshot(self, copy_old), *args, **kwargs)
    tangent = tangent_of(result) if _on else None
    store(self, result._data)
    if _on:
        inplace_tangent(self, tangent)
    if recording:
        self.grad_fn = result.grad_fn
        self._rg = result._rg
        self._output_nr = 0
        if base is not None:
            rebase_view(self, base)
    return self


def _any_requires_grad(args, kwargs) -> bool:
    for x in args:
        if isinstance(x, Tensor) and x._rg:
            return True
    for x in kwargs.values():
        if isinstance(x, Tensor) and x._rg:
            return True
    return False
