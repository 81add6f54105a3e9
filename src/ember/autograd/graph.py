"""Graph nodes: the objects behind ``tensor.grad_fn`` and ``grad_fn.next_functions``.

A node is created by each recorded operation. It keeps edges ``(node, output_nr)`` to the
nodes of its inputs, what its backward rule needs (``_saved``), its non-tensor parameters
(``_params``), and the shape and dtype of each of its outputs so the engine can reduce
broadcast gradients in one place. Nodes know nothing about the engine; the engine knows
nothing about particular ops. Op nodes are declared with :func:`ember.autograd.opdef.defop`;
the few classes here are the graph's own machinery.

Saved values are objects with ``_data`` (what the rule receives) and ``_vc`` (the version
counter checked against in-place changes): input Tensors themselves, ``SavedOutput`` for an
op's own result (no reference cycle), ``SavedValue`` for arrays and numbers that no one can
modify in place, and ``UNSAVED`` for a slot a rule of this node will not read.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np

from .._hooks import RemovableHandle, add_hook
from .._tensor import Tensor, _legacy_type_name

_FREED = object()
_NO_EDGE = (None, 0)
# Version counter of values that cannot change in place (never incremented).
_CONSTANT_VC = (0,)

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)

__all__ = ["Node", "RemovableHandle", "save_on_cpu"]


class SavedOutput:
    """An op's output saved for its own backward, without a reference cycle to the node.

    Holds the output's array and version counter; ``_data``/``_vc`` match Tensor's so
    saved inputs and saved outputs are checked and unpacked alike.
    """

    __slots__ = ("_data", "_vc", "_output_nr")

    def __init__(self, tensor) -> None:
        self._data = tensor._data
        self._vc = tensor._vc
        self._output_nr = tensor._output_nr


class SavedValue:
    """An array computed in forward (indices, masks) or a Python number operand, saved for
    backward. Rules receive the value itself, in first and in higher order."""

    __slots__ = ("_data", "_vc")

    def __init__(self, value) -> None:
        self._data = value
        self._vc = _CONSTANT_VC


class _Unsaved:
    """A saved slot that no rule of this node will read (its input needs no gradient)."""

    __slots__ = ("_data", "_vc")

    def __init__(self) -> None:
        self._data = None
        self._vc = _CONSTANT_VC


UNSAVED = _Unsaved()


class _AllOutputs:
    """``_differentiable`` of nodes whose every output is differentiable."""

    __slots__ = ()

    def __getitem__(self, i: int) -> bool:
        return True


class Node:
    """Base class of every backward node (``AddBackward0``, ``AccumulateGrad``, ...).

    Subclasses implement ``backward(self, grad, *saved)`` returning one gradient per input
    (a tuple when there are several; ``None`` for an input that gets no gradient). The
    rule receives NumPy arrays, or Tensors when the backward pass is itself recorded.

    Example:
        >>> import ember
        >>> y = ember.tensor([2.0], requires_grad=True) * 3
        >>> isinstance(y.grad_fn, ember.autograd.graph.Node), y.grad_fn.name()
        (True, 'MulBackward0')
    """

    __slots__ = (
        "next_functions",
        "_saved",
        "_versions",
        "_meta",
        "_hooks",
        "_params",
        "__weakref__",
        "__dict__",
    )

    # Multi-output nodes (split, unbind, ...) receive the list of output gradients.
    _multi_output = False
    # True for single-output op nodes, which the engine runs on its fast path.
    _fast = True
    # What a declared op (autograd.opdef) generates; graph machinery keeps the defaults.
    _save = None  # fn(inputs, edges, out, extras) -> saved tuple
    _plan = 0  # how record saves (opdef.save_plan); 0: nothing
    _jvp = None  # fn(tangents, inputs, outputs, extras, params) -> output tangent(s)
    _view = False  # outputs are views of the first input
    _variadic = False  # takes any number of tensor inputs (cat, stack)
    _differentiable = _AllOutputs()  # per output: does it get a gradient

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
        """The saved values, checked against in-place changes since they were saved: raw
        arrays, or (``as_tensors``, a recorded backward) the tensors themselves."""
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        for item, version in zip(saved, self._versions):
            if item._vc[0] != version:
                _raise_modified(self, item, version)
        if not as_tensors:
            return [item._data for item in saved]
        return [unpack_as_tensor(self, item) for item in saved]

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
        return add_hook(self._hook_table().post, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """Register ``fn(grad_outputs)`` to run before this node's backward; may return new ones."""
        return add_hook(self._hook_table().pre, fn)

    def _register_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        return add_hook(self._hook_table().tensor, (output_nr, fn))

    def _num_outputs(self) -> int:
        return len(self._meta)


def unpack_as_tensor(node: Node, item):
    """What a recorded rule receives for a saved ``item`` of ``node``: the input Tensor, the
    output rebuilt as an output of ``node`` (so higher order flows through it), or the raw
    value (None for an unsaved slot)."""
    if type(item) is SavedOutput:
        t = Tensor._wrap(item._data)
        t.grad_fn = node
        t._rg = True
        t._vc = item._vc
        t._output_nr = item._output_nr
        return t
    if isinstance(item, Tensor):
        return item
    return item._data


class NodeHooks:
    """Hooks of one node, created only for nodes that have any (most never do)."""

    __slots__ = ("pre", "post", "tensor", "retain")

    def __init__(self) -> None:
        self.pre: dict = OrderedDict()  # fn(grad_outputs) -> new grad_outputs | None
        self.post: dict = OrderedDict()  # fn(grad_inputs, grad_outputs) -> new grad_inputs
        self.tensor: dict = OrderedDict()  # (output_nr, fn(grad) -> new grad | None)
        self.retain: dict = {}  # output_nr -> weakref to the tensor whose .grad is kept


def init_node(node: Node, next_functions: tuple, meta: tuple, saved: tuple = ()) -> Node:
    """Fill a node made with ``cls.__new__`` (graph machinery that is not a declared op)."""
    node.next_functions = next_functions
    node._saved = saved
    node._versions = tuple([s._vc[0] for s in saved]) if saved else ()
    node._meta = meta
    node._hooks = None
    node._params = ()
    return node


def op_name(node_name: str) -> str:
    """The op a node name stands for, as torch's messages write it: ``MulBackward0`` ->
    ``Mul``, ``SliceBackward1`` -> ``Slice1``."""
    head, sep, tail = node_name.partition("Backward")
    return head + tail if sep and tail != "0" else head if sep else node_name


def _raise_modified(node: Node, item, version: int) -> None:
    shape = list(item._data.shape)
    # torch names the producing op without its "Backward" infix: "output 0 of Exp".
    if type(item) is SavedOutput:
        where = f", which is output {item._output_nr} of {op_name(node.name())},"
    elif item.grad_fn is not None:
        where = f", which is output {item._output_nr} of {op_name(item.grad_fn.name())},"
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
        init_node(self, (), ((variable._data.shape, variable._data.dtype),))
        self.variable = variable

    def name(self) -> str:
        """``torch::autograd::AccumulateGrad``, the C++ name torch gives this node."""
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


class GraphRoot(Node):
    """Internal node standing for the gradients the caller passes to backward()."""

    __slots__ = ()
    _fast = False


def grad_accumulator(leaf: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node: one per tensor, alive as long as a graph uses it."""
    aux = leaf._aux_()
    ref = aux.accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        aux.accumulator = weakref.ref(node)
    return node


def edge_of(x) -> tuple:
    """The ``(node, output_nr)`` a gradient for ``x`` flows into (``(None, 0)`` if none)."""
    if isinstance(x, Tensor):
        fn = x.grad_fn
        aux = x._aux
        if aux is not None and aux.base is not None and x._rg and aux.fn_version != x._vc[0]:
            fn = current_view_fn(x)
        if fn is not None:
            return (fn, x._output_nr)
        if x._rg:
            return (grad_accumulator(x), 0)
    return _NO_EDGE


# views.regenerate_view, set when autograd.views is imported (it declares the node).
_regenerate_view: list = [None]


def current_view_fn(view):
    """The grad_fn of a view that requires grad, regenerated (torch's AsStridedBackward0 of
    its base's history) when its base was written in place since it was made: through
    another alias, or directly. Callers test first that the version counter moved."""
    return _regenerate_view[0](view)


def sum_to_shape(grad, shape: tuple):
    """Sum a broadcast gradient back to ``shape`` (the inverse of NumPy broadcasting)."""
    ndim = len(shape)
    lead = grad.ndim - ndim
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1
    )
    if axes:
        grad = grad.sum(axis=axes) if isinstance(grad, np.ndarray) else grad.sum(axes)
    if lead or grad.shape != shape:
        grad = grad.reshape(shape)
    if not shape and isinstance(grad, np.generic):
        grad = np.asarray(grad)  # NumPy reduces to scalars; gradients are arrays
    return grad


class save_on_cpu:
    """Context manager storing the tensors saved for backward on the CPU (torch's name).

    torch packs each saved tensor with ``tensor.cpu()`` and unpacks it with
    ``.to(original_device)``; both are the identity for tensors already on the CPU, which is
    every ember tensor, so the graph recorded inside is the one recorded outside.
    ``pin_memory=True`` needs a pinned-memory allocator, which a CPU build lacks: when
    ``device_type``'s module reports itself available (``"cpu"``) this raises torch's
    ``RuntimeError`` (torch raises it when the first tensor is saved; ember on entering).
    An unknown ``device_type`` falls back to ``cuda`` as in torch, where nothing is pinnable.

    Example:
        >>> import ember
        >>> a = ember.ones(3, requires_grad=True)
        >>> with ember.autograd.graph.save_on_cpu():
        ...     y = (a * a).sum()
        >>> y.backward()
        >>> a.grad
        tensor([2., 2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        # of the device modules (cpu, cuda, mps, ...) only ember.cpu reports itself available
        self._pin = bool(pin_memory) and device_type == "cpu"

    def __enter__(self):
        if self._pin:
            raise RuntimeError(
                "pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                "memory allocator is available on this system."
            )
        return self

    def __exit__(self, *exc) -> None:
        return None
