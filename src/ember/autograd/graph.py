"""Graph nodes: the objects behind ``tensor.grad_fn`` and ``grad_fn.next_functions``.

A node is created by each recorded operation. It keeps edges ``(node, output_nr)`` to the
nodes of its inputs, what its backward rule needs (``_saved``), and the shape and dtype
of each of its outputs so the engine can reduce broadcast gradients in one place.
Nodes know nothing about the engine; the engine knows nothing about particular ops.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict

import numpy as np

_FREED = object()

_handle_ids = itertools.count()

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self.id = next(_handle_ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class SavedOutput:
    """An op output saved for backward without a reference cycle to its node.

    Holds the output's array and version counter; ``_data``/``_vc`` match Tensor's
    so the unpacking code treats saved inputs (Tensors) and saved outputs alike.
    """

    __slots__ = ("_data", "_vc", "_output_nr")

    def __init__(self, tensor) -> None:
        self._data = tensor._data
        self._vc = tensor._vc
        self._output_nr = tensor._output_nr


class Node:
    """Base class of every backward node (``AddBackward0``, ``AccumulateGrad``, ...).

    Subclasses implement ``backward(self, grad, *saved)`` returning one gradient per input
    (a tuple when there are several; ``None`` for an input that gets no gradient). The
    rule receives NumPy arrays, or Tensors when the backward pass is itself recorded.
    """

    __slots__ = (
        "next_functions",
        "_saved",
        "_versions",
        "_meta",
        "_hooks",
        "__weakref__",
        "__dict__",
    )

    # Multi-output nodes (split, unbind, ...) receive the list of output gradients.
    _multi_output = False
    # True for single-output op nodes, which the engine runs on its fast path.
    _fast = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._fast = not cls._multi_output and "_fast" not in cls.__dict__

    def name(self) -> str:
        """The node's name as PyTorch prints it, e.g. ``MulBackward0``."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    def backward(self, grad, *saved):
        raise NotImplementedError

    @property
    def metadata(self) -> dict:
        try:
            return self.__dict__["_metadata"]
        except KeyError:
            self.__dict__["_metadata"] = d = {}
            return d

    # -- saved values -------------------------------------------------------------

    def _unpack_saved(self, as_tensors: bool):
        """Return the saved values, checking none was modified in place since it was saved."""
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        if not as_tensors and len(saved) == 1:
            item = saved[0]
            if item._vc[0] != self._versions[0]:
                _raise_modified(self, item, self._versions[0])
            return (item._data,)
        for item, version in zip(saved, self._versions):
            if item._vc[0] != version:
                _raise_modified(self, item, version)
        if not as_tensors:
            return [item._data for item in saved]
        from .._tensor import Tensor

        out = []
        for item in saved:
            if type(item) is SavedOutput:
                # Rebuild the output as a graph tensor so higher-order backward can use it.
                t = Tensor._make_result(item._data, self)
                t._vc = item._vc
                t._output_nr = item._output_nr
                out.append(t)
            else:
                out.append(item)
        return out

    def _release(self) -> None:
        if self._saved:
            self._saved = _FREED

    # -- hooks ----------------------------------------------------------------------

    def _hook_table(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    def register_hook(self, fn) -> RemovableHandle:
        """Register ``fn(grad_inputs, grad_outputs)`` to run after this node's backward.

        It may return new grad_inputs.
        """
        return _add(self._hook_table().post, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """Register ``fn(grad_outputs)`` to run before this node's backward; may return new ones."""
        return _add(self._hook_table().pre, fn)

    def _register_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        return _add(self._hook_table().tensor, (output_nr, fn))

    def _num_outputs(self) -> int:
        return len(self._meta)


class NodeHooks:
    """Hooks of one node, created only for nodes that have any (most never do)."""

    __slots__ = ("pre", "post", "tensor", "retain")

    def __init__(self) -> None:
        self.pre: dict = OrderedDict()  # fn(grad_outputs) -> new grad_outputs | None
        self.post: dict = OrderedDict()  # fn(grad_inputs, grad_outputs) -> new grad_inputs
        self.tensor: dict = OrderedDict()  # (output_nr, fn(grad) -> new grad | None)
        self.retain: dict = {}  # output_nr -> weakref to the tensor whose .grad is kept


def _add(table: dict, value) -> RemovableHandle:
    h = RemovableHandle(table)
    table[h.id] = value
    return h


def _init_node(node: Node, next_functions: tuple, meta: tuple) -> Node:
    node.next_functions = next_functions
    node._saved = ()
    node._versions = ()
    node._meta = meta
    node._hooks = None
    return node


def _op_name(node: Node) -> str:
    return op_name(node.name())


def op_name(node_name: str) -> str:
    """The op a node name stands for, as torch's messages write it: ``MulBackward0`` ->
    ``Mul``, ``SliceBackward1`` -> ``Slice1``."""
    head, sep, tail = node_name.partition("Backward")
    return head + tail if sep and tail != "0" else head if sep else node_name


def _raise_modified(node: Node, item, version: int) -> None:
    from .._tensor import _legacy_type_name

    shape = list(item._data.shape)
    # torch names the producing op without its "Backward" infix: "output 0 of Exp".
    if type(item) is SavedOutput:
        where = f", which is output {item._output_nr} of {_op_name(node)},"
    elif item.grad_fn is not None:
        where = f", which is output {item._output_nr} of {_op_name(item.grad_fn)},"
    else:
        where = ""  # a leaf
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{_legacy_type_name(item._data.dtype)} {shape}]{where} is at "
        f"version {item._vc[0]}; expected version {version} instead. Hint: enable "
        "anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


class AccumulateGrad(Node):
    """The sink node of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable",)
    _fast = False

    def __init__(self, variable) -> None:
        _init_node(self, (), ((variable._data.shape, variable._data.dtype),))
        self.variable = variable


class GraphRoot(Node):
    """Internal node standing for the gradients the caller passes to backward()."""

    __slots__ = ()
    _fast = False


def sum_to_shape(grad, shape: tuple):
    """Sum a broadcast gradient back to ``shape`` (the inverse of NumPy broadcasting)."""
    ndim = len(shape)
    lead = grad.ndim - ndim
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1
    )
    if axes:
        grad = grad.sum(axis=axes) if type(grad) is np.ndarray else grad.sum(axes)
    if lead or grad.shape != shape:
        grad = grad.reshape(shape)
    return grad
