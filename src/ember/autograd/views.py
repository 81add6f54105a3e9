"""Views and in-place changes: what the graph must do when a tensor changes under it.

A view (``reshape``, ``select``, ``transpose``, ...) shares its base's memory and version
counter (``recording.as_view``), so a saved tensor modified through any alias is caught.
An in-place op on a tensor in the graph is recorded as its out-of-place twin applied to a
snapshot of the old value; the tensor then takes the new value and the new ``grad_fn``
("rebasing its history", as torch says) and its version counter is bumped. Through a view,
NumPy has already changed the base's memory; what is left is the graph: as torch does,
the base's history becomes a ``CopySlices`` node wrapping the in-place op's node, and the
view becomes an ``AsStridedBackward0`` of the new base. A view is located inside its base
by its element offset and strides, so every kind of view works. ``CopySlices``' backward is
written with the declared ops ``as_strided`` and ``as_strided_scatter``, which record
themselves when the backward pass is recorded: differentiable again, to any order.

This module also declares the view nodes the autograd layer itself creates
(``ViewBackward0`` for ``make_dual``, ``AliasBackward0``, ``AsStridedBackward0``) and
``AsStridedScatterBackward0``; the op families import the first two.
"""

from __future__ import annotations

import numpy as np

from .._dtype import from_numpy_dtype, scalar_name
from .._mode import state as _state
from .._tensor import INFERENCE_INPLACE_MSG, Tensor
from . import graph
from .engine import _fit, retaining_graph
from .graph import Node, SavedOutput, edge_of, init_node, op_name, unpack_as_tensor
from .opdef import LINEAR, apply, defop
from .recording import (
    _capture,
    _on,
    active_capture,
    inplace_tangent,
    region,
    set_tangent,
    suspended,
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


def _as_strided_forward(a, _self_sizes, size, stride, storage_offset):
    return region(a, (storage_offset, size, stride))


def as_strided(g, self_sizes: tuple, geometry):
    """The window ``geometry`` of base-shaped ``g``: a copy for an array (the caller may
    write into ``g``), a recorded view for a Tensor."""
    offset, size, stride = geometry
    if isinstance(g, Tensor):
        return apply(AsStridedBackward0, (g,), (g._data,), (self_sizes, size, stride, offset))
    return region(g, geometry).copy()


def as_strided_scatter(g, src, geometry):
    """Base-shaped ``g`` with its window ``geometry`` replaced by ``src`` (broadcast), recorded
    when either is a Tensor. The window never overlaps itself: a tensor whose elements share
    memory cannot be written in place."""
    offset, size, stride = geometry
    if isinstance(g, Tensor) or isinstance(src, Tensor):
        g = g if isinstance(g, Tensor) else Tensor._wrap(np.asarray(g))
        src = src if isinstance(src, Tensor) else Tensor._wrap(np.asarray(src, g._data.dtype))
        return apply(
            AsStridedScatterBackward0, (g, src), (g._data, src._data), (size, stride, offset)
        )
    return _as_strided_scatter_forward(g, src, size, stride, offset)


def _as_strided_scatter_forward(a, src, size, stride, storage_offset):
    out = np.array(a, order="C", copy=True)
    region(out, (storage_offset, size, stride))[...] = src
    return out


def _zeros(like, shape: tuple):
    data = like._data if isinstance(like, Tensor) else like
    return np.zeros(shape, data.dtype)


# The view that was written in place, located in its base by element offset and strides (its
# history after the write), and its adjoint: torch's two nodes of these names. Rules of both
# read only parameters, so they record themselves on Tensors in a recorded backward.
def _as_strided_backward(g, _self_sizes, size, stride, storage_offset):
    """The gradient of a window of a tensor of ``self_sizes``: ``g`` added into zeros at the
    window. An expanded view's window holds each element several times (stride 0), and an
    unfolded one overlaps itself: every occurrence adds, as torch's ``as_strided_backward``."""
    expanded = tuple(d for d, (n, st) in enumerate(zip(size, stride)) if st == 0 and n > 1)
    if expanded:  # the repeats of each element, summed first: the rest is a plain window
        if isinstance(g, Tensor):
            g = g.sum(expanded, keepdim=True)
        else:
            g = g.sum(expanded, keepdims=True)
        size = tuple(1 if d in expanded else n for d, n in enumerate(size))
    if not _overlaps(size, stride):
        return as_strided_scatter(_zeros(g, _self_sizes), g, (storage_offset, size, stride))
    if isinstance(g, Tensor):
        raise NotImplementedError(
            "ember cannot differentiate twice through a view whose elements overlap (unfold) "
            "read after its base was written in place"
        )
    flat = np.zeros(int(np.prod(_self_sizes, dtype=np.int64)), g.dtype)
    index = np.full(size, storage_offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        index += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(size) - d - 1))
    np.add.at(flat, index.reshape(-1), np.broadcast_to(g, size).reshape(-1))
    return flat.reshape(_self_sizes)


def _overlaps(size, stride) -> bool:
    """May two elements of the window share a memory location? (torch's test: sorted by
    stride, each stride passes the extent of the smaller ones)."""
    extent = 0
    for st, n in sorted((abs(st), n) for n, st in zip(size, stride) if n > 1):
        if st <= extent:
            return True
        extent += st * (n - 1)
    return False


AsStridedBackward0 = defop(
    "AsStridedBackward0",
    params=("_self_sizes", "size", "stride", "storage_offset"),
    forward=_as_strided_forward,
    vjp={"self": _as_strided_backward},
    jvp=LINEAR,
    view=True,
)

AsStridedScatterBackward0 = defop(
    "AsStridedScatterBackward0",
    inputs=("self", "src"),
    params=("size", "stride", "storage_offset"),
    forward=_as_strided_scatter_forward,
    vjp={
        "self": lambda g, size, stride, storage_offset: as_strided_scatter(
            g, _zeros(g, size), (storage_offset, size, stride)
        ),
        "src": lambda g, size, stride, storage_offset: as_strided(
            g, tuple(g.shape), (storage_offset, size, stride)
        ),
    },
    jvp=LINEAR,
)


class CopySlices(Node):
    """The base's node after an in-place op on one of its views (torch's CopySlices): the
    op's node ``fn`` applied to the view's window of the gradient, whose old value's
    gradient replaces the window. Written with ``as_strided``/``as_strided_scatter``, which
    record themselves on Tensors, so a recorded backward (``create_graph``) is differentiable
    again like any op's rule."""

    __slots__ = ("fn", "geometry")

    def backward(self, g):
        fn = self.fn
        geometry = self.geometry
        base_shape, dtype = self._meta[0]
        recorded = isinstance(g, Tensor)
        g_view = as_strided(g, base_shape, geometry)
        saved = fn._unpack_saved(False)  # checked against in-place changes
        if recorded:
            saved = [self._recorded_saved(item) for item in fn._saved]
        grads = fn.backward(g_view, *saved)
        if not retaining_graph():
            fn._release()  # what fn saved is this node's: freed with it, as torch does
        grads = grads if type(grads) is tuple else (grads,)
        g_old = grads[0]
        g_old = _zeros(g, ()) if g_old is None else _fit(g_old, geometry[1], dtype, recorded)
        return (as_strided_scatter(g, g_old, geometry), *grads[1:])

    def _recorded_saved(self, item):
        """What ``fn``'s rule receives for ``item`` in a recorded backward. ``fn``'s output
        is the view after the write: its history is the view's, ``as_strided`` of this
        node (as torch unpacks the output of an in-place op on a view), so a higher order
        reaches ``fn`` only through this node, which owns what ``fn`` saved."""
        if type(item) is not SavedOutput and not (
            isinstance(item, Tensor) and item.grad_fn is self.fn
        ):
            return unpack_as_tensor(self.fn, item)
        out = Tensor._wrap(item._data)
        out._vc = item._vc
        out.grad_fn = _as_strided_node((self, 0), out, self._meta[0][0], self.geometry)
        out._rg = True
        if isinstance(item, Tensor) and (tangent := tangent_of(item)) is not None:
            set_tangent(out, tangent)  # a dual output (recording.py keeps it for this)
        return out


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
    view.grad_fn = _as_strided_node((copy_slices, 0), view, base._data.shape, geometry)
    view._rg = True
    view._output_nr = 0
    view._aux.fn_version = view._vc[0]


def regenerate_view(view: Tensor):
    """``view``'s grad_fn after its base was written in place since the view was made
    (through another alias or directly): as torch, an ``AsStridedBackward0`` of the base's
    history now, located by the view's offset and strides (graph.current_view_fn)."""
    aux = view._aux
    aux.fn_version = view._vc[0]
    base = aux.base
    geometry = view_geometry(view._data, base._data)
    if geometry is None or not base._rg:  # (its memory is no longer the base's: .data set)
        return view.grad_fn
    node = _as_strided_node(edge_of(base), view, base._data.shape, geometry)
    view.grad_fn = node
    view._output_nr = 0
    return node


graph._regenerate_view[0] = regenerate_view


def _as_strided_node(edge: tuple, view: Tensor, base_shape: tuple, geometry) -> Node:
    """An ``AsStridedBackward0`` node for ``view``, the window ``geometry`` of a tensor of
    ``base_shape`` whose gradient flows into ``edge`` (it saves nothing)."""
    offset, size, stride = geometry
    node = init_node(
        AsStridedBackward0.__new__(AsStridedBackward0),
        (edge,),
        ((view._data.shape, view._data.dtype),),
    )
    node._params = (base_shape, size, stride, offset)
    return node


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
        if copy:  # the write changes the tangent in place too: keep the old one for backward
            if tangent.grad_fn is None and not tangent._rg:
                tangent = Tensor._wrap(tangent._data.copy())
            else:
                with suspended:
                    tangent = tangent.clone()
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
    if base is not None and self._rg:
        edge_of(self)  # a view its base's writes made stale: its grad_fn regenerated first
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
