"""Custom differentiable operations: ``torch.autograd.Function`` on ember's engine.

A subclass defines ``forward`` and ``backward`` as static methods; ``apply`` runs the
forward under ``no_grad`` on the raw inputs and records one node whose class is
``<Name>Backward``. As in PyTorch, that node *is* the ``ctx`` object the methods receive,
so attributes set on ``ctx`` are visible as ``output.grad_fn.<attr>``.

The engine calls the node with the incoming gradients (NumPy arrays, or Tensors when
``create_graph=True``); the node wraps them as Tensors, calls the user's ``backward`` and
checks its result the way torch does (count, non-tensor inputs, shapes). With
``create_graph=True`` grad mode is on while ``backward`` runs, so a backward written with
Tensor operations is itself recorded and can be differentiated again (unless it is
decorated with :func:`once_differentiable`).

Example:
    >>> import ember
    >>> from ember.autograd.function import Function
    >>> class Cube(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x**3
    ...
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x**2 * grad
    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y
    tensor([1., 8.], grad_fn=<CubeBackward>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .._overrides import warn as _warn
from .._tensor import INFERENCE_SAVE_MSG, Tensor
from . import grad_mode
from .graph import (
    _FREED,
    SECOND_BACKWARD_MSG,
    Node,
    SavedOutput,
    _raise_modified,
    edge_of,
    grad_accumulator,
    unpack_as_tensor,
)
from .recording import _on, fit_tangent, input_tangents, set_tangent, suspended

__all__ = [
    "Function",
    "FunctionCtx",
    "BackwardCFunction",
    "InplaceFunction",
    "once_differentiable",
]

_state = grad_mode.state
_NO_EDGE = (None, 0)


def _type_name(x) -> str:
    t = type(x)
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


def _expandable(shape: tuple, to: tuple) -> bool:
    """True when ``shape`` broadcasts to ``to`` (torch's ``is_expandable_to``)."""
    if len(shape) > len(to):
        return False
    for s, t in zip(reversed(shape), reversed(to)):
        if s != t and s != 1:
            return False
    return True


class FunctionCtx:
    """The methods ``forward``/``setup_context`` use on ``ctx`` (saving, marking outputs).

    Example:
        >>> import ember
        >>> class Square(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = ember.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).backward()
        >>> x.grad
        tensor([6.])
    """

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for ``backward``; read them back as ``ctx.saved_tensors``.

        Saved tensors are checked against in-place modification when unpacked.
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Save tensors for a custom ``jvp`` (forward-mode AD)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args) -> None:
        """Declare outputs that get no gradient (``requires_grad=False``)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (default) or None for outputs without a gradient."""
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs) -> None:
        raise RuntimeError(
            "mark_shared_storage is deprecated. Tensors with shared storages are "
            "automatically tracked. Note that calls to `set_()` are not tracked"
        )


class BackwardCFunction(FunctionCtx, Node):
    """Base of the ``<Name>Backward`` node classes: the graph node and ``ctx`` in one object."""

    # One gradient per output of forward (non-tensor outputs included), always as a list.
    _multi_output = True
    _forward_cls = None

    # -- saved tensors ------------------------------------------------------------------

    def _unpack_saved(self, as_tensors: bool):
        # Saved tensors are unpacked lazily by ``ctx.saved_tensors``, like torch.
        return ()

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked for in-place modification."""
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        return tuple(_saved_values(self, saved))

    saved_variables = saved_tensors

    # -- running the user's backward ----------------------------------------------------

    def apply(self, *grad_outputs):
        """Call the user's ``backward`` (or ``vjp``) with this node as ``ctx``."""
        return self._forward_cls._backward_impl(self, *grad_outputs)

    def apply_jvp(self, *tangents):
        """Call the user's ``jvp`` with this node as ``ctx``."""
        return self._forward_cls.jvp(self, *tangents)

    def backward(self, grads, *_saved):
        """Engine entry: ``grads`` has one entry per forward output (None where none arrived)."""
        as_tensors = _state.enabled
        materialize = self.materialize_grads
        wrapped = []
        for g, meta in zip(grads, self._meta):
            if g is None:
                if materialize and meta is not None:
                    g = Tensor._wrap(np.zeros(meta[0], dtype=meta[1]))
            elif not isinstance(g, Tensor):
                g = Tensor._wrap(g)
            wrapped.append(g)
        result = self._forward_cls._backward_impl(self, *wrapped)
        return self._check_grads(result, as_tensors, Tensor)

    def _check_grads(self, result, as_tensors: bool, Tensor) -> tuple:
        name = self.name()
        if not isinstance(result, tuple):
            result = (result,)
        positions = self._fn_positions
        expected = len(positions)
        if len(result) != expected:
            if len(result) > expected and all(r is None for r in result[expected:]):
                result = result[:expected]
            else:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected "
                    f"{expected}, got {len(result)})"
                )
        out = []
        for i, (r, k) in enumerate(zip(result, positions)):
            if k < 0:
                if r is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable"
                    )
                continue
            if r is None:
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {_type_name(r)})")
            shape = self._fn_input_shapes[k]
            if r._data.shape != shape and not _expandable(shape, r._data.shape):
                raise RuntimeError(
                    f"Function {name} returned an invalid gradient at index {k} - got "
                    f"{list(r._data.shape)} but expected shape compatible with {list(shape)}"
                )
            if self.next_functions[k][0] is None:
                out.append(None)  # the input does not require grad: drop it, like torch
            else:
                out.append(r if as_tensors else r._data)
        return tuple(out)


class _FunctionMeta(type):
    """Creates the ``<Name>Backward`` node class of every Function subclass."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls.__module__ = cls.__module__
        backward_cls.__qualname__ = name + "Backward"
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base class of custom autograd operations (``torch.autograd.Function``).

    Subclasses implement static ``forward(ctx, *args, **kwargs)`` and
    ``backward(ctx, *grad_outputs)`` (returning one gradient per forward argument, None
    for non-tensors), or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``.
    Call them through ``apply``.

    Example:
        >>> import ember
        >>> from ember.autograd.function import Function
        >>> class Double(Function):
        ...     @staticmethod
        ...     def forward(ctx, x, scale=2.0):
        ...         ctx.scale = scale
        ...         return x * scale
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad * ctx.scale, None
        >>> x = ember.ones(2, requires_grad=True)
        >>> Double.apply(x, 3.0).sum().backward()
        >>> x.grad
        tensor([3., 3.])
    """

    def __init__(self, *args, **kwargs) -> None:
        _warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. Instantiating "
            "an autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    # Set to True to let vmap generate a batching rule (accepted, unused by ember).
    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (runs under ``no_grad``)."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs: tuple, output):
        """Optional: save what ``backward`` needs, given the inputs and the forward's output."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Return the gradient for each input of ``forward`` (None for non-tensors)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode rule: the tangents of the outputs given those of the inputs (zeros
        for Tensor inputs without one, None for other arguments). Called with ``ctx``
        inside ``forward_ad.dual_level()``; ``ctx.saved_tensors`` are the tensors given
        to ``ctx.save_for_forward``."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def _backward_impl(cls, ctx, *grad_outputs):
        # Like torch: a subclass may define either ``backward`` or ``vjp``.
        backward = cls.backward
        if backward is Function.backward:
            backward = cls.vjp
        elif cls.vjp is not Function.vjp and cls.vjp is not backward:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        return backward(ctx, *grad_outputs)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and record a ``<Name>Backward`` node for its outputs.

        Example:
            >>> import ember
            >>> from ember.autograd.function import Function
            >>> class Id(Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         return x.clone()
            ...
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         return g
            >>> Id.apply(ember.ones(1, requires_grad=True)).grad_fn.name()
            'IdBackward'
        """
        has_setup = _has_setup_context(cls)
        if has_setup:
            sig = inspect.signature(cls.forward)
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}

        ctx = object.__new__(cls._backward_cls)
        ctx.next_functions = ()
        ctx._saved = ()
        ctx._versions = ()
        ctx._meta = ()
        ctx._hooks = None
        ctx.to_save = ()
        ctx.dirty_tensors = ()
        ctx.non_differentiable = ()
        ctx.materialize_grads = True

        tensor_args = []
        positions = []
        for a in args:
            if isinstance(a, Tensor):
                positions.append(len(tensor_args))
                tensor_args.append(a)
            else:
                positions.append(-1)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        ctx._fn_positions = tuple(positions)
        ctx._fn_input_shapes = tuple(t._data.shape for t in tensor_args)
        recording = _state.enabled and any(t._rg for t in tensor_args)
        # Edges are taken before forward runs: mark_dirty rebases the inputs' history.
        if recording:
            edges = tuple(edge_of(t) for t in tensor_args)
        else:
            edges = ()
        # Forward AD: the inputs' tangents; forward itself runs on the primals.
        tangents = input_tangents(args) if _on else None

        prev = _state.enabled
        _state.enabled = False
        try:
            with suspended:
                if has_setup:
                    output = cls.forward(*args)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = prev

        result = _wrap_outputs(ctx, tensor_args, edges, output, recording, Tensor)
        if tangents is not None:
            _function_jvp(cls, ctx, args, tangents, result)
        return result


def _has_setup_context(cls) -> bool:
    return cls.setup_context is not Function.setup_context


def _wrap_outputs(ctx, tensor_args, edges, output, recording, Tensor):
    is_tuple = isinstance(output, tuple)
    raw = output if is_tuple else (output,)
    dirty = ctx.dirty_tensors or ()
    non_diff = ctx.non_differentiable or ()
    dirty_ids = {id(t) for t in dirty}
    non_diff_ids = {id(t) for t in non_diff}
    if dirty_ids - {id(o) for o in raw}:
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function."
        )
    input_ids = {id(t) for t in tensor_args}
    seen: set = set()
    results = []
    meta = []
    for i, o in enumerate(raw):
        if not isinstance(o, Tensor):
            results.append(o)
            meta.append(None)
            continue
        meta.append((o._data.shape, o._data.dtype))
        oid = id(o)
        is_dirty = oid in dirty_ids
        if is_dirty:
            if recording:
                _check_dirty(o)
            o._bump()
        differentiable = recording and oid not in non_diff_ids and o._data.dtype.kind in "fcV"
        if is_dirty:
            out = o
        elif oid in input_ids or oid in seen or o.grad_fn is not None or o._rg:
            if not recording and oid not in seen:
                out = o
            else:
                # An input (or a tensor already in a graph) returned as is: a fresh alias
                # sharing its data and version counter, like torch's view.
                out = Tensor._wrap(o._data)
                out._vc = o._vc
        else:
            out = o
        seen.add(oid)
        if differentiable:
            out.grad_fn = ctx
            out._rg = True
            out._output_nr = i
        elif is_dirty and recording:
            out.grad_fn = None
            out._rg = False
            out._output_nr = 0
        results.append(out)

    if recording:
        ctx.next_functions = edges
        ctx._meta = tuple(meta)
    _save(ctx, Tensor)
    # Like torch, drop the raw references: they may hold outputs (a cycle through ctx).
    ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None
    return tuple(results) if is_tuple else results[0]


def _check_dirty(t) -> None:
    if t.grad_fn is None and t._rg:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )
    aux = t._aux
    if aux is not None and aux.base is not None and (aux.base._rg or aux.base.grad_fn):
        raise RuntimeError(
            "ember does not support mark_dirty on a view of a tensor that is part of the "
            "autograd graph; modify and return the base tensor instead"
        )


def _save(ctx, Tensor) -> None:
    to_save = ctx.to_save
    if not to_save:
        return
    items = []
    versions = []
    for i, t in enumerate(to_save):
        if t is None:
            items.append(None)
            versions.append(0)
            continue
        if not isinstance(t, Tensor):
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{i} is of type {_type_name(t)}"
            )
        if t.grad_fn is ctx:
            # An output of this node: keep its data, not the tensor (no reference cycle).
            so = object.__new__(SavedOutput)
            so._data = t._data
            so._vc = t._vc
            so._output_nr = t._output_nr
            items.append(so)
        else:
            items.append(t)
        if t._vc is None:
            raise RuntimeError(INFERENCE_SAVE_MSG)
        versions.append(t._vc[0])
    ctx._saved = tuple(items)
    ctx._versions = tuple(versions)


def _saved_values(node, saved) -> list:
    """``saved`` (None allowed) checked for in-place modification since ``node`` saved
    it; saved outputs are rebuilt as outputs of ``node`` so a recorded rule can use them."""
    out = []
    for item, version in zip(saved, node._versions):
        if item is None:
            out.append(None)
            continue
        if item._vc[0] != version:
            _raise_modified(node, item, version)
        out.append(unpack_as_tensor(node, item))
    return out


def _function_jvp(cls, ctx, args, tangents, result) -> None:
    """Run a custom Function's ``jvp`` and give its outputs their tangents."""
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
    ctx._versions = tuple(0 if s is None or s._vc is None else s._vc[0] for s in fw_saved)
    try:
        with suspended:
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
        if not isinstance(o, Tensor) or tg is None or o._data.dtype.kind not in "fcV":
            continue
        if tg._data.shape != o._data.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(o._data.shape)} while the given forward gradient is of size "
                f"{list(tg._data.shape)}."
            )
        set_tangent(o, fit_tangent(tg, o))
    # Outputs saved for backward keep their tangents (for a backward on dual tensors).
    saved = ctx._saved
    if saved and saved is not _FREED:
        by_data = {id(o._data): o for o in outs if isinstance(o, Tensor)}
        ctx._saved = tuple(
            by_data.get(id(s._data), s) if type(s) is SavedOutput else s for s in saved
        )


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (torch's legacy helper base class).

    Example:
        >>> import ember
        >>> from ember.autograd.function import InplaceFunction
        >>> class AddOne(InplaceFunction):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x + 1
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad
        >>> AddOne.apply(ember.ones(2)), AddOne(inplace=True).inplace
        (tensor([2., 2.]), True)
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


# -- once_differentiable ----------------------------------------------------------------

_ONCE_MSG = "trying to differentiate twice a function that was marked with @once_differentiable"


class Error(Node):
    """The node behind gradients of a ``once_differentiable`` backward: raises if reached."""

    _multi_output = True

    def backward(self, grads, *saved):
        raise RuntimeError(_ONCE_MSG)


def _delayed_error(outputs: tuple) -> tuple:
    """Give each output an ``Error`` grad_fn (torch's DelayedError)."""
    node = object.__new__(Error)
    edges = []
    meta = []
    results = []
    for o in outputs:
        if isinstance(o, Tensor) and o._data.dtype.kind in "fcV":
            leaf = Tensor._wrap(o._data)
            leaf._rg = True
            edges.append((grad_accumulator(leaf), 0))
            out = Tensor._wrap(o._data)
            out.grad_fn = node
            out._rg = True
            out._output_nr = len(meta)
            results.append(out)
        else:
            edges.append(_NO_EDGE)
            results.append(o)
        meta.append((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None)
    node.next_functions = tuple(edges)
    node._saved = ()
    node._versions = ()
    node._meta = tuple(meta)
    node._hooks = None
    return tuple(results)


def once_differentiable(fn):
    """Decorate a ``backward`` that is not itself differentiable.

    It runs under ``no_grad``; when a graph is being created (``create_graph=True``) its
    results get a node that raises torch's error if differentiated again.

    Example:
        >>> import ember
        >>> from ember.autograd.function import Function, once_differentiable
        >>> class Sq(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...
        ...     @staticmethod
        ...     @once_differentiable
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> x = ember.tensor([3.0], requires_grad=True)
        >>> ember.autograd.grad(Sq.apply(x).sum(), x)
        (tensor([6.]),)
    """

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.enabled
        _state.enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _state.enabled = prev
        if not _state.enabled:
            return outputs
        # As in torch, only the incoming gradients decide whether the result needs a node.
        if not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        wrapped = _delayed_error(outputs if is_tuple else (outputs,))
        return wrapped if is_tuple else wrapped[0]

    return wrapper
