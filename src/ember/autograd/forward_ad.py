"""Forward-mode automatic differentiation: ``torch.autograd.forward_ad`` on ember.

A *dual tensor* is a tensor with a *tangent* (its directional derivative) at the current
forward AD level. Inside ``dual_level()``, every recorded op whose inputs carry tangents
gives its result the tangent ``J @ tangents``, computed by the ``jvp`` method of the op's
node class (defined next to its ``backward`` in ``ember.ops``). Tangents live in
``TensorAux.tangent``, so plain tensors pay nothing for them.

How an op gets its tangent: ``record``/``record_multi`` (``ember.ops._core``) check one
module-level list, ``_on``, which is non-empty only while a level exists. Then they call
``_fw_record``, which records the op as usual and, when some input has a tangent, pins a
``_Pending`` JVP on the output. The node's parameters (``dim``, ``alpha``, ...) are set
by the op function *after* ``record`` returns; ops reach the node through
``t.grad_fn or _fw.node`` (``_fw.node`` is the node of the latest op that records no
graph). So the JVP runs a little later: when the tangent is first needed, and at the
latest when the next op is recorded (``_flush``), before anything can modify the inputs
in place.

JVP rules compute with ember ops on Tensors, with forward mode switched off. When a
tangent or a primal requires grad (and grad mode is on) the rule is recorded, so
reverse-over-forward works; backward rules recorded with ``create_graph=True`` run on
dual tensors, so forward-over-reverse (Hessian-vector products) works too.

Example:
    >>> import ember
    >>> import ember.autograd.forward_ad as fwAD
    >>> x = ember.tensor([0.0, 1.0], dtype=ember.float64)
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64)).exp()
    ...     fwAD.unpack_dual(y).tangent
    tensor([1.0000, 2.7183], dtype=torch.float64)
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import numpy as np

from .graph import _FREED, SavedOutput, _raise_modified

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]

# Non-empty exactly while forward AD is on (a level exists and it is not suspended).
# ``record`` tests it once per op: the whole cost of forward AD when it is off.
_on: list = []

_NO_EDGE = (None, 0)


class _FwState:
    """Module state: the current level, the JVPs not yet run, and the dual tensors."""

    __slots__ = ("level", "node", "pending", "duals", "prune_at", "suspended")

    def __init__(self) -> None:
        self.level = -1
        # The node of the latest recorded op when it got no graph node (forward AD only):
        # ops set their parameters through ``t.grad_fn or _fw.node``.
        self.node = None
        self.pending: list = []
        self.duals: list = []  # weak references to tensors that got a tangent
        self.prune_at = 4096  # drop dead references when the list grows past this
        self.suspended = 0


_fw = _FwState()

# Bound on first use (importing them here would be circular).
_Tensor: Any = None
_record: Any = None
_record_multi: Any = None
_PrimalView: Any = None


def _bind() -> None:
    global _Tensor, _record, _record_multi, _PrimalView
    if _Tensor is None:
        from .._tensor import Tensor
        from ..ops._core import record, record_multi
        from ..ops.shape import AliasBackward0

        _Tensor, _record, _record_multi = Tensor, record, record_multi
        # The node torch gives the primal of unpack_dual when it requires grad.
        _PrimalView = type("torch::autograd::Identity", (AliasBackward0,), {"__slots__": ()})


# -- levels ------------------------------------------------------------------------------


def enter_dual_level() -> int:
    """Enter a new forward grad level (torch supports one level at a time)."""
    _bind()
    if _fw.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _fw.level = 0
    _fw.node = None
    if not _fw.suspended:
        _on[:] = [True]
    return 0


def exit_dual_level(*, level=None) -> None:
    """Exit the level: every tangent made at this level is deleted."""
    if level is None:
        level = _fw.level
    if level != _fw.level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _on.clear()
    _fw.level = -1
    _fw.node = None
    _fw.pending = []
    duals, _fw.duals = _fw.duals, []
    _fw.prune_at = 4096
    for ref in duals:
        t = ref()
        if t is not None and t._aux is not None:
            t._aux.tangent = None


class dual_level:
    """Context manager (and decorator) for a forward AD level.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(ember.tensor([2.0]), ember.tensor([1.0]))
        ...     fwAD.unpack_dual(d * d).tangent
        tensor([4.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper


class _suspend:
    """Switch forward AD off for a block (JVP rules, a custom Function's forward)."""

    __slots__ = ()

    def __enter__(self):
        _fw.suspended += 1
        _fw.node = None
        _on.clear()

    def __exit__(self, *exc) -> None:
        _fw.suspended -= 1
        _fw.node = None
        if not _fw.suspended and _fw.level >= 0:
            _on[:] = [True]


_SUSPEND = _suspend()


# -- dual tensors ------------------------------------------------------------------------


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` as returned by :func:`unpack_dual`."""

    primal: Any
    tangent: Any


def _size(shape) -> list:
    return list(shape)


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` (same shape, floating point) at ``level``.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     d = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([0.5, 0.5]))
        ...     fwAD.unpack_dual(d.sin() * 2).tangent
        tensor([ 0.5403, -0.4161])
    """
    _bind()
    if level is None:
        level = _fw.level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if _fw.level < 0:
        raise RuntimeError(
            "Trying to access a forward AD level with an invalid index. This index was either "
            "not created or is already deleted."
        )
    if level != _fw.level:
        raise RuntimeError("Invalid level given to _make_dual")
    if _tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported."
        )
    if _tangent_of(tangent) is not None:
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level"
            f"{level} is not supported."
        )
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{_size(tensor._data.shape)} while the given forward gradient is of size "
            f"{_size(tangent._data.shape)}."
        )
    from ..ops.shape import ViewBackward0, _record_view

    with _SUSPEND:
        dual = _record_view(ViewBackward0, tensor._data.view(), tensor)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the primal is a view without the tangent; the
    tangent is None when ``tensor`` has none at ``level``.

    Example:
        >>> import ember
        >>> import ember.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     fwAD.unpack_dual(ember.ones(1)).tangent is None
        True
    """
    _bind()
    if level is None:
        level = _fw.level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, _Tensor):
        raise TypeError(
            "_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    # (A custom Function's forward, run with forward AD off, sees primals only.)
    tangent = None if _fw.suspended else _tangent_of(tensor)
    if tangent is not None and level != _fw.level:
        raise RuntimeError("Invalid level given to _fw_primal")
    if level != _fw.level:
        tangent = None
    from ..ops.shape import _as_view

    with _SUSPEND:
        primal = _as_view(_record(_PrimalView, tensor._data.view(), (tensor,)), tensor)
    return UnpackedDualTensor(primal, tangent)


def _tangent_of(x):
    """The tangent of ``x`` at the current level (running its pending JVP if needed)."""
    aux = x._aux
    if aux is None:
        return None
    tg = aux.tangent
    if tg is None or type(tg) is not _Pending:
        return tg
    tg.run()
    return aux.tangent


def _set_tangent(t, tangent) -> None:
    t._aux_().tangent = tangent
    duals = _fw.duals
    duals.append(weakref.ref(t))
    if len(duals) > _fw.prune_at:  # a long level: forget tensors that are gone
        duals[:] = [r for r in duals if r() is not None]
        _fw.prune_at = max(4096, 2 * len(duals))


def _input_tangents(inputs) -> tuple | None:
    """Tangents of the op's inputs (None where an input has none); None if none has one."""
    res = None
    for i, x in enumerate(inputs):
        if isinstance(x, _Tensor) and x._aux is not None and x._aux.tangent is not None:
            tg = _tangent_of(x)
            if tg is None:
                continue
            if res is None:
                res = [None] * len(inputs)
            res[i] = tg
    return None if res is None else tuple(res)


# -- the JVP of one recorded op ------------------------------------------------------------


class _Pending:
    """A JVP to run once the op's node is complete: ``node.jvp(tangents, inputs, *saved)``."""

    __slots__ = ("node", "tangents", "inputs", "outputs", "saved", "done")

    def __init__(self, node, tangents, inputs, outputs) -> None:
        self.node = node
        self.tangents = tangents
        self.inputs = inputs
        self.outputs = outputs  # output tensors, None where an output gets no tangent
        self.saved = node._saved
        self.done = False

    def run(self) -> None:
        if self.done:
            return
        self.done = True
        node = self.node
        try:
            with _SUSPEND:
                saved = node._saved
                if saved is _FREED:  # a backward ran first: use what was saved at record time
                    saved = self.saved
                values = _saved_values(node, saved)
                res = node.jvp(self.tangents, self.inputs, *values)
                outs = self.outputs
                if node._multi_output:
                    res = list(res) if res is not None else [None] * len(outs)
                    for i, o in enumerate(outs):
                        if o is not None:
                            o._aux.tangent = _fit(res[i], o)
                else:
                    outs[0]._aux.tangent = _fit(res, outs[0])
        except BaseException:
            for o in self.outputs:
                if o is not None and o._aux.tangent is self:
                    o._aux.tangent = None
            raise
        finally:
            self.node = self.tangents = self.inputs = self.saved = None


def _saved_values(node, saved) -> list:
    """``saved`` (None allowed) checked for in-place modification since ``node`` saved
    it; saved outputs are rebuilt as outputs of ``node`` so a recorded rule can use them.
    Also ``ctx.saved_tensors`` of custom Functions (outside any dual level)."""
    out = []
    if saved is _FREED:
        return out
    for item, version in zip(saved, node._versions):
        if item is None:
            out.append(None)
            continue
        if item._vc[0] != version:
            _raise_modified(node, item, version)
        if type(item) is SavedOutput:
            _bind()
            t = _Tensor._make_result(item._data, node)
            t._vc = item._vc
            t._output_nr = item._output_nr
            out.append(t)
        else:
            out.append(item)
    return out


def _fit(res, out):
    """The rule's result as the tangent of ``out``: a Tensor of its shape and dtype."""
    data = out._data
    if res is None:
        return _Tensor._wrap(np.zeros(data.shape, dtype=data.dtype))
    if not isinstance(res, _Tensor):
        res = _Tensor._wrap(np.asarray(res))
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


def _versions_of(saved) -> tuple:
    """Version counters of values kept for a JVP (0 where a value has none)."""
    return tuple(0 if s is None or s._vc is None else s._vc[0] for s in saved)


def _flush() -> None:
    pending, _fw.pending = _fw.pending, []
    for p in pending:
        p.run()


def _no_jvp(cls):
    """torch's error for an op without a forward-mode formula (ops named like aten's)."""
    import re

    from .graph import _op_name

    name = re.sub(r"(\d)D", r"\1d", _op_name(cls.__new__(cls)))  # MaxPool2D -> MaxPool2d
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()  # -> max_pool2d
    return NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        "been implemented yet."
    )


def _fw_node(cls, t, inputs, saved, save_output, meta):
    """A node that records no graph: it only holds what the JVP rule needs."""
    node = object.__new__(cls)
    node.next_functions = (_NO_EDGE,) * len(inputs)
    node._meta = meta
    node._hooks = None
    if save_output:
        saved = saved + (t,)
    node._saved = saved
    node._versions = _versions_of(saved)
    return node


def _tangents_and_record(record, inputs, *args):
    """Run pending JVPs, read the ``inputs``' tangents, then ``record(*args)`` as usual
    (forward AD off while it runs); return ``(tangents, record's result)``."""
    _fw.node = None
    if _fw.pending:
        _flush()
    tangents = _input_tangents(inputs)
    _on.clear()
    try:
        return tangents, record(*args)
    finally:
        _on.append(True)


def _fw_record(cls, out, inputs, saved, save_output):
    """``record`` while forward AD is on: record as usual, then schedule the op's JVP."""
    tangents, t = _tangents_and_record(_record, inputs, cls, out, inputs, saved, save_output)
    if tangents is None or t._data.dtype.kind not in "fc":
        return t
    if getattr(cls, "jvp", None) is None:
        raise _no_jvp(cls)
    node = t.grad_fn
    if node is None:
        node = _fw_node(cls, t, inputs, saved, save_output, ((t._data.shape, t._data.dtype),))
        _fw.node = node
    elif save_output:
        # Keep the output itself (with its tangent) for a backward run on dual tensors.
        node._saved = node._saved[:-1] + (t,)
    p = _Pending(node, tangents, inputs, (t,))
    _set_tangent(t, p)
    _fw.pending.append(p)
    return t


def _fw_record_multi(cls, outs, inputs, saved, differentiable):
    """``record_multi`` while forward AD is on (see ``_fw_record``)."""
    tangents, tensors = _tangents_and_record(
        _record_multi, inputs, cls, outs, inputs, saved, differentiable
    )
    if tangents is None:
        return tensors
    targets = [
        t if t._data.dtype.kind in "fc" and (differentiable is None or differentiable[i]) else None
        for i, t in enumerate(tensors)
    ]
    if all(t is None for t in targets):
        return tensors
    if getattr(cls, "jvp", None) is None:
        raise _no_jvp(cls)
    node = next((t.grad_fn for t in tensors if t.grad_fn is not None), None)
    if node is None:
        meta = tuple((t._data.shape, t._data.dtype) for t in tensors)
        node = _fw_node(cls, None, inputs, saved, False, meta)
        _fw.node = node
    p = _Pending(node, tangents, inputs, targets)
    for t in targets:
        if t is not None:
            _set_tangent(t, p)
    _fw.pending.append(p)
    return tensors


def saved_output(t):
    """What an op saves for its output ``t``: a SavedOutput, or ``t`` itself when it has
    a tangent (so a backward run on dual tensors sees it)."""
    if t._aux is not None and t._aux.tangent is not None:
        return t
    return SavedOutput(t)


def set_saved(node, saved: tuple) -> None:
    """Give a node of ``record_multi`` its saved values (ops set them after recording)."""
    node._saved = saved
    node._versions = _versions_of(saved)
    pending = _fw.pending
    if pending and pending[-1].node is node:
        pending[-1].saved = saved  # kept for the JVP even if a backward frees the node's


# -- in-place ops, custom Functions ----------------------------------------------------------


def inplace_begin() -> None:
    """Run pending JVPs before an op modifies a tensor in place."""
    _fw.node = None
    if _fw.pending:
        _flush()


def inplace_set(self, tangent) -> None:
    """Give ``self`` (modified in place) its new tangent (None: no tangent)."""
    if tangent is None:
        if self._aux is not None:
            self._aux.tangent = None
        return
    _set_tangent(self, tangent)


def fit_tangent(tangent, like):
    """``tangent`` broadcast and cast to the shape and dtype of ``like``."""
    return _fit(tangent, like)


def tangent_of(x):
    """The tangent of ``x`` (None if it has none), for ops outside ``record``."""
    if not isinstance(x, _Tensor):
        return None
    return _tangent_of(x)


def function_begin(args):
    """A custom Function's ``apply`` starts: the tangents of its Tensor arguments (None
    if none has one)."""
    inplace_begin()
    return _input_tangents(args)


def function_jvp(cls, ctx, args, tangents, result):
    """Run a custom Function's ``jvp`` and give its outputs their tangents."""
    Tensor = _Tensor
    grads = []
    for a, tg in zip(args, tangents):
        if not isinstance(a, Tensor):
            grads.append(None)
        elif tg is None:
            grads.append(Tensor._wrap(np.zeros(a._data.shape, dtype=a._data.dtype)))
        else:
            grads.append(tg)
    outs = result if isinstance(result, tuple) else (result,)
    fw_saved = getattr(ctx, "saved_for_forward", None) or ()
    prev = (ctx._saved, ctx._versions)
    ctx._saved = tuple(fw_saved)
    ctx._versions = _versions_of(fw_saved)
    try:
        with _SUSPEND:
            res = cls.jvp(ctx, *grads)
    finally:
        ctx._saved, ctx._versions = prev
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outs)} but got {len(res)})"
        )
    for o, tg in zip(outs, res):
        if not isinstance(o, Tensor) or tg is None or o._data.dtype.kind not in "fc":
            continue
        if tg._data.shape != o._data.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{_size(o._data.shape)} while the given forward gradient is of size "
                f"{_size(tg._data.shape)}."
            )
        _set_tangent(o, tg)
    # Outputs saved for backward keep their tangents (for a backward on dual tensors).
    saved = ctx._saved
    if saved and saved is not _FREED:
        by_data = {id(o._data): o for o in outs if isinstance(o, Tensor)}
        ctx._saved = tuple(
            by_data.get(id(s._data), s) if type(s) is SavedOutput else s for s in saved
        )


def suspended():
    """Context manager: forward AD off (a custom Function's forward runs on primals)."""
    return _SUSPEND
