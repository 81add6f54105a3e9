"""Recording ops into the graph: the one path every op takes, and forward AD's hook in it.

An op computes its result with NumPy, then calls ``record(NodeClass, result, inputs,
params, extras)``. ``record`` wraps the result in a Tensor and, when grad mode is on and
an input requires grad, attaches a node of the declared class (``autograd.opdef.defop``):
its edges to the inputs' nodes, its parameters, and the values its backward rules will
read (chosen by the class's ``_save``; only what the inputs that need gradients need).
The no-grad path is NumPy plus one Tensor allocation.

Forward AD hooks in here and nowhere else: while a dual level is active (``_on`` is
non-empty), ``record`` also gives the outputs their tangents, ``J @ tangents``, computed at
once by the class's ``_jvp`` from the inputs' tangents. Tangents live in
``TensorAux.tangent``; the tangent of a view is a view of its base's tangent, and an op that
modifies a tensor in place writes its new tangent into the existing tangent's storage, as
torch does (``inplace_tangent``).
"""

from __future__ import annotations

import re
import weakref
from threading import get_ident

import numpy as np

from .._meta import MADE as _META_MADE
from .._meta import MetaArray
from .._meta import propagate as propagate_meta
from .._mode import dispatch_count, dispatch_state
from .._mode import state as _state
from .._tensor import DATA_CLASSES, INFERENCE_SAVE_MSG, Tensor
from .graph import (
    UNSAVED,
    SavedOutput,
    SavedValue,
    current_view_fn,
    edge_of,
    grad_accumulator,
    op_name,
)

_new = object.__new__
_NO_EDGE = (None, 0)
_V0 = (0,)
_V00 = (0, 0)


class DualState:
    """Forward AD's module state: the current level and the tensors given tangents in it."""

    __slots__ = ("level", "suspended", "duals", "prune_at")

    def __init__(self) -> None:
        self.level = -1
        self.suspended = 0
        self.duals: list = []  # weak references to tensors that got a tangent
        self.prune_at = 4096  # drop dead references when the list grows past this


fw = DualState()
# Non-empty exactly while forward AD is on (a level exists and it is not suspended).
# ``record`` tests it once per op: the whole cost of forward AD when it is off.
_on: list = []
# Callbacks run on each node as it is recorded, ``fn(node)``: anomaly mode's forward
# traceback capture. Empty unless a tool is on; ``record`` then pays one truth test per
# node it creates.
_observe: list = []
# The compiler's capture (``ember.compile``): while it runs, ``active_capture()`` is told of
# every op its thread records, ``capture.op(cls, inputs, params, outputs, extras)``. A
# capture also sets ``_on``, so ``record`` pays nothing for it when it is off.
_capture: list = []


# The function that hands a declared op to this thread's innermost dispatch mode (set by
# ``utils._python_dispatch``: it knows torch's operator names, the autograd layer does not).
DISPATCH_HOOK: list = [None]


def refresh_on() -> None:
    """``_on`` from what needs the slow path of ``record``: a forward-AD level (not
    suspended), a compiler capture, a dispatch mode."""
    on = (fw.level >= 0 and not fw.suspended) or bool(_capture) or dispatch_count[0] > 0
    _on[:] = [True] if on else []


def active_capture():
    """The compiler's capture running in this thread, or None. (``_capture`` is
    process-wide: another thread's ops must not enter it, and it may end meanwhile.)"""
    for capture in _capture[:1]:  # a copy, read once
        if capture._thread == get_ident():
            return capture
    return None


# -- the recording path ------------------------------------------------------------------


def _edges(inputs: tuple):
    """The ``next_functions`` for an op on ``inputs``, or None when none requires grad."""
    # (A view whose base was written in place since it was made, by another alias or
    # directly, gets its grad_fn regenerated: ``aux.fn_version`` differs from its version
    # counter. Only views and leaves have an ``_aux``, so the test is one load for others.)
    if len(inputs) == 1:
        # One input (unary ops): no list, no loop.
        x = inputs[0]
        if not (isinstance(x, Tensor) and x._rg):
            return None
        fn = x.grad_fn
        if (aux := x._aux) is not None and aux.base is not None and aux.fn_version != x._vc[0]:
            fn = current_view_fn(x)
        return ((fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0),)
    if len(inputs) == 2:
        # Binary ops, unrolled: this runs for every recorded +, -, *, /.
        x, y = inputs
        if isinstance(x, Tensor) and x._rg:
            fn = x.grad_fn
            if (aux := x._aux) is not None and aux.base is not None:
                if aux.fn_version != x._vc[0]:
                    fn = current_view_fn(x)
            ex = (fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0)
        else:
            ex = _NO_EDGE
        if isinstance(y, Tensor) and y._rg:
            fn = y.grad_fn
            if (aux := y._aux) is not None and aux.base is not None:
                if aux.fn_version != y._vc[0]:
                    fn = current_view_fn(y)
            return ex, ((fn, y._output_nr) if fn is not None else (grad_accumulator(y), 0))
        return None if ex is _NO_EDGE else (ex, _NO_EDGE)
    edge_list = []
    needs = False
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            fn = x.grad_fn
            if (aux := x._aux) is not None and aux.base is not None:
                if aux.fn_version != x._vc[0]:
                    fn = current_view_fn(x)
            edge_list.append((fn, x._output_nr) if fn is not None else (grad_accumulator(x), 0))
            needs = True
        else:
            edge_list.append(_NO_EDGE)
    return tuple(edge_list) if needs else None


# SavedValue of common number operands (x * 0.5, x + 1), shared rather than allocated per
# op. Zero is never cached (0.0 == -0.0 as a key, but their signs differ in gradients).
_NUMBER_SLOTS: dict = {}


def _saved_value(x):
    """What a node saves for a non-Tensor operand (or a Tensor subclass: itself)."""
    sv = _NUMBER_SLOTS.get(x) if type(x) is float or type(x) is int else None
    if sv is None:
        if isinstance(x, Tensor):
            return x
        sv = SavedValue(x)
        if x and len(_NUMBER_SLOTS) < 256 and (type(x) is float or type(x) is int):
            _NUMBER_SLOTS[x] = sv
    return sv


def _versions(saved: tuple) -> tuple:
    n = len(saved)
    try:
        # Saved values are nearly always at version 0: share those tuples.
        if n == 1:
            v = saved[0]._vc[0]
            return _V0 if v == 0 else (v,)
        if n == 2:
            v, w = saved[0]._vc[0], saved[1]._vc[0]
            return _V00 if v == 0 and w == 0 else (v, w)
        return tuple([s._vc[0] for s in saved])
    except TypeError:  # an inference tensor has no version counter
        raise RuntimeError(INFERENCE_SAVE_MSG) from None


def record(
    cls, out: np.ndarray, inputs: tuple, params: tuple = (), extras: tuple = (), plain=False
):
    """Wrap ``out`` in a Tensor and, if gradients are needed, attach a ``cls`` node.

    inputs: the op's tensor operands in the declared order (Tensors, Python numbers or
        None); those that require grad become the node's ``next_functions``.
    params: the op's non-tensor parameters, in the declared order.
    extras: arrays computed in forward that the rules read (declared ``saves``).
    plain: record as when forward AD and captures are off (their own hooks call it so).
    Returns the result Tensor (a view of ``inputs[0]`` for view ops).

    The compiled core (``ember._compile.core``) replaces this function, where gcc is
    present, by its C version of the common path, which calls this one for the rest.
    """
    if type(out) is not np.ndarray and type(out) not in DATA_CLASSES:
        out = np.asarray(out)  # NumPy gives scalars for 0-d results; tensors hold arrays
    if _META_MADE[0] and type(out) is not MetaArray:
        out = propagate_meta(out, inputs)
    if _on and not plain:  # forward AD is on: the usual recording, then the outputs' tangents
        return _record_dual(cls, (out,), inputs, params, extras)[0]
    # Inlined Tensor._wrap: this function is the hot path of every op.
    t = _new(Tensor)
    t._data = out
    t._output_nr = 0
    t._vc = [0]
    t._grad = None
    t._aux = None
    enabled = _state.enabled
    edges = _edges(inputs) if enabled and out.dtype.kind in "fcV" else None
    if edges is None:
        t._rg = False
        t.grad_fn = None
        if not enabled and _state.inference:  # inference mode implies grad mode off
            t._vc = None
    else:
        node = _new(cls)
        node.next_functions = edges
        node._meta = ((out.shape, out.dtype),)
        node._hooks = None
        node._params = params
        # What to save: the class's plan (opdef.save_plan), its common cases inlined, with
        # their version counters (nearly always 0: shared tuples then).
        plan = cls._plan
        try:
            if plan == 0:
                node._saved = node._versions = ()
            elif plan == 1:  # the one input
                node._saved = inputs
                v = inputs[0]._vc[0]
                node._versions = _V0 if v == 0 else (v,)
            elif plan == 2:  # the one output (just made: version 0)
                so = _new(SavedOutput)
                so._data = out
                so._vc = t._vc
                so._output_nr = 0
                node._saved = (so,)
                node._versions = _V0
            elif plan == 3:  # each of two inputs' rules reads the other one (mul)
                x, y = inputs
                if edges[1][0] is None:
                    x = UNSAVED
                elif type(x) is not Tensor:
                    x = _saved_value(x)
                if edges[0][0] is None:
                    y = UNSAVED
                elif type(y) is not Tensor:
                    y = _saved_value(y)
                node._saved = (x, y)
                v, w = x._vc[0], y._vc[0]
                node._versions = _V00 if v == 0 and w == 0 else (v, w)
            else:
                node._saved = saved = cls._save(inputs, edges, t, extras)
                node._versions = tuple([s._vc[0] for s in saved])
        except TypeError:  # an inference tensor has no version counter
            raise RuntimeError(INFERENCE_SAVE_MSG) from None
        t.grad_fn = node
        t._rg = True
        if _observe:
            for fn in _observe:
                fn(node)
    if cls._view:
        as_view(t, inputs[0])
    return t


def record_multi(
    cls, outs, inputs: tuple, params: tuple = (), extras: tuple = (), plain=False
) -> list:
    """``record`` for a node with several outputs (split, unbind, max with dim, ...).

    Outputs the class declares non-differentiable (indices) never require grad.
    """
    outs = [o if type(o) is np.ndarray or type(o) in DATA_CLASSES else np.asarray(o) for o in outs]
    if _META_MADE[0]:
        outs = [o if type(o) is MetaArray else propagate_meta(o, inputs) for o in outs]
    if _on and not plain:
        return _record_dual(cls, outs, inputs, params, extras)
    tensors = [Tensor._wrap(o) for o in outs]
    edges = _edges(inputs) if _state.enabled else None
    if edges is not None:
        for i, t in enumerate(tensors):
            t._output_nr = i  # before saving: a saved output remembers which one it is
        _attach(cls, tensors, inputs, params, extras, edges)
    if cls._view:
        for t in tensors:
            as_view(t, inputs[0])
    return tensors


def _attach(cls, tensors: list, inputs, params, extras, edges) -> None:
    """Create the node of a multi-output op and make it the differentiable outputs' grad_fn."""
    node = make_node(cls, edges, tensors, inputs, params, extras)
    diff = cls._differentiable
    for i, t in enumerate(tensors):
        if diff[i] and t._data.dtype.kind in "fcV":
            t.grad_fn = node
            t._rg = True
            t._output_nr = i


def make_node(cls, edges: tuple, out, inputs: tuple, params: tuple = (), extras: tuple = ()):
    """A ``cls`` node for outputs ``out`` (a Tensor, or a list for several) with ``edges``
    (from ``edges_of(inputs)``, taken before an in-place op changes them)."""
    node = _new(cls)
    node.next_functions = edges
    outs = out if isinstance(out, list) else (out,)
    node._meta = tuple((t._data.shape, t._data.dtype) for t in outs)
    node._hooks = None
    node._params = params
    if cls._save is None:
        node._saved = node._versions = ()
    else:
        node._saved = saved = cls._save(inputs, edges, out, extras)
        node._versions = _versions(saved)
    if _observe:
        for fn in _observe:
            fn(node)
    return node


def needs_grad(*inputs) -> bool:
    """True when an op on ``inputs`` would be recorded."""
    if not _state.enabled:
        return False
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


# -- views ----------------------------------------------------------------------------------


def as_view(out: Tensor, src: Tensor) -> Tensor:
    """Mark ``out`` as a view of ``src``: shared version counter, root tensor as base."""
    out._vc = src._vc
    aux = src._aux
    base = aux.base if aux is not None and aux.base is not None else src
    out_aux = out._aux_()
    out_aux.base = base
    out_aux.fn_version = out._vc[0] if out._vc is not None else 0  # (inference: None)
    if not _state.enabled and (src._rg or base._rg):
        out_aux.no_grad_view = ""  # torch forbids recording an in-place change through it
    elif aux is not None and aux.no_grad_view is not None:
        out_aux.no_grad_view = out.grad_fn.name() if out.grad_fn is not None else ""
    return out


def view_geometry(view: np.ndarray, base: np.ndarray):
    """(offset, shape, strides) of ``view`` in elements of ``base``'s memory, or None when
    ``view`` is not a strided window of a C-contiguous ``base``."""
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


def region(arr: np.ndarray, geometry) -> np.ndarray:
    """The writable view of a C-contiguous base-shaped ``arr`` that ``geometry`` describes."""
    offset, shape, strides = geometry
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    item = arr.itemsize
    # An array on arr's memory: bounds-checked, and 10x cheaper than np.lib's as_strided.
    return np.ndarray(shape, arr.dtype, arr, offset * item, tuple(st * item for st in strides))


# -- forward AD ------------------------------------------------------------------------------


class _Suspend:
    """Switch forward AD off for a block (JVP rules, a custom Function's forward)."""

    __slots__ = ()

    def __enter__(self):
        capture = active_capture()
        if capture is not None:  # a custom Function or a tangent inside a compiled region
            capture.unsupported("a custom autograd.Function")
        fw.suspended += 1
        refresh_on()

    def __exit__(self, *exc) -> None:
        fw.suspended -= 1
        refresh_on()


suspended = _Suspend()


class resumed:
    """Forward AD back on inside a JVP rule (which runs with it suspended)."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = fw.suspended
        fw.suspended = 0
        _on[:] = [True]

    def __exit__(self, *exc) -> None:
        fw.suspended = self.prev
        refresh_on()


def set_tangent(t: Tensor, tangent) -> None:
    """Give ``t`` its tangent at the current level (forgotten when the level exits)."""
    t._aux_().tangent = tangent
    duals = fw.duals
    duals.append(weakref.ref(t))
    if len(duals) > fw.prune_at:  # a long level: forget tensors that are gone
        duals[:] = [r for r in duals if r() is not None]
        fw.prune_at = max(4096, 2 * len(duals))


def tangent_of(x):
    """The tangent of ``x`` at the current level, or None. A view without a tangent of its
    own shares its base's (a view of the base's tangent)."""
    if not isinstance(x, Tensor) or fw.level < 0:
        return None
    aux = x._aux
    if aux is None:
        return None
    if aux.tangent is not None:
        return aux.tangent
    base = aux.base
    if base is None or base._aux is None or base._aux.tangent is None:
        return None
    tangent = _view_of_base_tangent(x, base)
    if tangent is not None:
        set_tangent(x, tangent)
    return tangent


def _view_of_base_tangent(x: Tensor, base: Tensor):
    """``x``'s part of its base's tangent, sharing memory with it (None if not a window)."""
    geometry = view_geometry(x._data, base._data)
    if geometry is None:
        return None
    bt = base._aux.tangent
    if bt._data.strides != base._data.strides or not bt._data.flags.writeable:
        bt = Tensor._wrap(np.ascontiguousarray(bt._data)) if bt.grad_fn is None else bt.clone()
        set_tangent(base, bt)
    out = Tensor._wrap(region(bt._data, geometry))
    out._vc = bt._vc
    return out


def input_tangents(inputs) -> tuple | None:
    """Tangents of ``inputs`` (None where one has none); None if none has one."""
    res = None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x._aux is not None:
            tg = tangent_of(x)
            if tg is None:
                continue
            if res is None:
                res = [None] * len(inputs)
            res[i] = tg
    return None if res is None else tuple(res)


def fit_tangent(res, out: Tensor):
    """A rule's result as the tangent of ``out``: a fresh Tensor of its shape and dtype
    (zeros for None)."""
    data = out._data
    if res is None:
        return Tensor._wrap(np.zeros(data.shape, dtype=data.dtype))
    if not isinstance(res, Tensor):
        res = Tensor._wrap(np.asarray(res, dtype=data.dtype))
    rd = res._data
    if rd.shape != data.shape:
        try:
            np.broadcast_shapes(rd.shape, data.shape)
            res = res.expand(data.shape).contiguous()
        except ValueError:
            res = res.reshape(data.shape)
    if res._data.dtype != data.dtype:
        res = res.to(data.dtype)
    return res


def no_jvp_error(cls) -> NotImplementedError:
    """torch's error for an op without a forward-mode formula (named like aten's op)."""
    name = re.sub(r"(\d)D", r"\1d", op_name(cls.__name__))  # MaxPool2D -> MaxPool2d
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()  # -> max_pool2d
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        "been implemented yet.\nPlease file an issue to PyTorch at "
        "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we "
        "can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml"
    )


def _record_dual(cls, outs, inputs, params, extras):
    """``record``/``record_multi`` while forward AD is on: record as usual, then give the
    differentiable outputs their tangents ``J @ tangents`` right away. (Also the path of
    dispatch modes, which see the op first, and of the compiler's capture.)"""
    if dispatch_count[0] and dispatch_state.modes:
        outs = DISPATCH_HOOK[0](cls, outs, inputs, params)
    if _capture:
        return _record_captured(cls, outs, inputs, params, extras)
    tangents = input_tangents(inputs)
    tensors = _record_plainly(cls, outs, inputs, params, extras)
    if tangents is None:
        return tensors
    diff = cls._differentiable
    targets = [
        t if diff[i] and t._data.dtype.kind in "fcV" else None for i, t in enumerate(tensors)
    ]
    if all(t is None for t in targets):
        return tensors
    jvp = cls._jvp
    if jvp is None:
        raise no_jvp_error(cls)
    node = next((t.grad_fn for t in tensors if t.grad_fn is not None), None)
    if node is not None and node._saved:
        # A backward run on dual tensors must see the outputs with their tangents.
        node._saved = tuple(
            tensors[s._output_nr] if type(s) is SavedOutput else s for s in node._saved
        )
    with suspended, np.errstate(all="ignore"):
        res = jvp(tangents, inputs, tensors, extras, params)
        if not cls._multi_output:
            res = (res,)
        for t, r in zip(targets, res):
            if t is not None:
                set_tangent(t, fit_tangent(r, t))
    return tensors


def _record_captured(cls, outs, inputs, params, extras):
    """``record``/``record_multi`` while the compiler captures (forward AD is off then)."""
    tensors = _record_plainly(cls, outs, inputs, params, extras)
    capture = active_capture()
    if capture is not None:
        capture.op(cls, inputs, params, tensors, extras)
    return tensors


def _record_plainly(cls, outs, inputs, params, extras) -> list:
    """The outputs recorded as when neither forward AD nor a capture is on (``_on`` routes
    ``record`` here; it is process-wide, so it is not cleared: other threads read it)."""
    if len(outs) == 1 and not cls._multi_output:
        return [record(cls, outs[0], inputs, params, extras, True)]
    return record_multi(cls, outs, inputs, params, extras, True)


# Non-empty while vmap captures a function: autograd.grad inside it records its backward
# (create_graph), so the rules' ops are captured and batched like the rest.
record_backward: list = []

# Arrays computed from shapes and Python values alone (a pooling divisor, a Python list used
# as an index), which a compiled function may keep as constants. Filled only while the
# compiler captures; weak, so the arrays die with their users.
_shape_constants: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def shape_constant(a: np.ndarray) -> np.ndarray:
    """Mark ``a`` as computed from shapes and Python values only, and return it."""
    if _capture:
        _shape_constants[id(a)] = a
    return a


def cast_operand(t: Tensor, a: np.ndarray) -> np.ndarray:
    """``a``: ``t``'s array cast for an op's forward (torch's type promotion). A capture is
    told, since it replays the op on ``t``'s own array."""
    if _capture and a.dtype != t._data.dtype:
        capture = active_capture()
        if capture is not None:
            capture.note_cast(t, a.dtype)
    return a


def side_effect(fn, *args, cached=None) -> None:
    """Run ``fn(*args, cached=cached)``: an in-place update of tensors outside the graph
    (batch norm's running statistics). ``cached`` holds values the caller already computed;
    the compiler's capture records the call without it, to replay it from ``args``."""
    capture = active_capture() if _capture else None
    if capture is not None:
        capture.side_effect(fn, args, cached)
    else:
        fn(*args, cached=cached)


def untracked_call(fn, *args) -> Tensor:
    """``fn(*args)``: a tensor without gradient made outside the declared ops, of random
    numbers (dropout's mask) or from tensors' values (one_hot). The compiler's capture
    records the call, to make it again (fresh numbers, new values) at each run."""
    out = fn(*args)
    capture = active_capture() if _capture else None
    if capture is not None:
        capture.untracked_call(fn, args, out)
    return out


def check_values(fn, *args) -> None:
    """``fn(*args)``: a check of tensors' values (indices in range) that raises torch's
    error. The compiler's capture records it, so that the generated code checks new values
    too (NumPy would read a negative index from the end, silently)."""
    fn(*args)
    capture = active_capture() if _capture else None
    if capture is not None:
        capture.check_values(fn, args)


def not_capturable(what: str) -> None:
    """Tell a running compiler capture that ``what`` (code reading a value outside the
    graph) cannot be captured; nothing otherwise."""
    capture = active_capture() if _capture else None
    if capture is not None:
        capture.unsupported(what)


def inplace_tangent(self: Tensor, new) -> None:
    """``self`` was modified in place and its tangent is now ``new`` (None: zero): write it
    into the existing tangent's storage (shared with views and with the base), as torch does."""
    if self._data.dtype.kind not in "fcV":
        return
    old = tangent_of(self)
    aux = self._aux
    if old is None and aux is not None and aux.base is not None:
        base = aux.base
        if base._data.dtype.kind in "fcV" and view_geometry(self._data, base._data) is not None:
            set_tangent(base, Tensor._wrap(np.zeros(base._data.shape, base._data.dtype)))
            old = tangent_of(self)
    with suspended:
        if old is None:
            if new is not None:
                set_tangent(self, fit_tangent(new, self))
            return
        if new is None:
            new = Tensor._wrap(np.zeros((), old._data.dtype))
        if old.grad_fn is None and not old._rg and not (isinstance(new, Tensor) and new._rg):
            np.copyto(old._data, new._data if isinstance(new, Tensor) else new, casting="unsafe")
            old._bump()
        else:
            old.copy_(new)  # recorded: reverse-over-forward sees the update


def edges_of(inputs) -> tuple:
    """``edge_of`` for each input (graph machinery that is not a declared op)."""
    return tuple(edge_of(x) for x in inputs)
