"""What the profiler records of forward ops: a ``TorchFunctionMode`` on the profiled thread.

While a profiler records, ``ember.autograd.profiler`` pushes ``ProfilerMode`` (registered
here) on its thread's mode stack: every public function, Tensor method, operator and
``ember.ops`` op called there reaches the mode, which times it as an event named as torch's
profiler names it (``aten::mul`` for ``x * y``, ``aten::linalg_solve`` for
``ember.linalg.solve``). Nothing is replaced anywhere, no other thread is affected, and
with no profiler running no mode is on any stack.

Example:
    >>> import ember
    >>> from ember.profiler import profile
    >>> with profile() as prof:
    ...     y = ember.ones(2) * 3
    >>> [e.name for e in prof.events()]
    ['aten::ones', 'aten::mul']
"""

from __future__ import annotations

from .. import _overrides
from .. import ops as _op_namespaces
from .._tensor import Tensor
from ..autograd import profiler as _core
from ..overrides import TorchFunctionMode

__all__ = ["ProfilerMode", "aten_name", "event_name"]

# Dunder methods -> the aten op torch reports for them.
_DUNDER = {
    "truediv": "div",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "getitem": "index",
    "setitem": "index_put_",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "invert": "bitwise_not",
    "pos": "positive",
    "iter": "unbind",
}

_DUNDER_BASE = {
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
}


def aten_name(name: str) -> str:
    """The name torch's profiler gives the op behind a function or method name.

    Example:
        >>> from ember.profiler._ops import aten_name
        >>> aten_name("__radd__"), aten_name("__itruediv__"), aten_name("matmul")
        ('aten::add', 'aten::div_', 'aten::matmul')
    """
    if name.startswith("__") and name.endswith("__"):
        core = name[2:-2]
        suffix = ""
        if core.startswith("i") and core[1:] in _DUNDER_BASE:
            core, suffix = core[1:], "_"
        elif core.startswith("r") and core[1:] in _DUNDER_BASE:
            core = core[1:]
        name = _DUNDER.get(core, core) + suffix
    return "aten::" + name


# Public functions and methods that compute no op torch's profiler would show: they
# inspect, convert to Python, or drive autograd (their ops, if any, are recorded inside).
_NOT_OPS = frozenset(
    """__repr__ __str__ __format__ __len__ __bool__ __index__ __int__ __float__ __complex__
    __hash__ __array__ __deepcopy__ size dim ndimension numel nelement tolist numpy
    element_size data_ptr get_device stride is_complex is_contiguous is_floating_point
    is_inference type cpu cuda pin_memory backward register_hook
    register_post_accumulate_grad_hook retain_grad requires_grad_ tensor as_tensor asarray
    result_type""".split()
)

# Properties that are ops in torch (the others, shape, grad, dtype..., are not).
_PROPERTY_OPS = {
    "T": "aten::numpy_T",
    "mT": "aten::mT",
    "H": "aten::adjoint",
    "mH": "aten::mH",
    "real": "aten::real",
    "imag": "aten::imag",
}

# nn.functional functions whose aten op torch names otherwise.
_FUNCTIONAL = {
    "cross_entropy": "aten::cross_entropy_loss",
    "nll_loss": "aten::nll_loss_nd",
    "logsigmoid": "aten::log_sigmoid",
}

_PREFIX = {"torch.linalg": "linalg_", "torch.special": "special_", "torch.fft": "fft_"}


def _getitem_name(args) -> str:
    """``x[key]``'s op as torch names it: a number selects, a slice slices, None adds a
    dimension, tensors and lists index (a tuple by its first entry that is not ``:``)."""
    key = args[1] if len(args) > 1 else None
    if type(key) is tuple:
        # (types compared before values: a tensor entry must not be compared)
        rest = [k for k in key if not (k is Ellipsis or (type(k) is slice and k == _ALL))]
        key = rest[0] if rest else (_ALL if key else Ellipsis)
    if type(key) is int:
        return "aten::select"
    if type(key) is slice:
        return "aten::slice"
    if key is None:
        return "aten::unsqueeze"
    if key is Ellipsis:
        return "aten::alias"
    return "aten::index"


_ALL = slice(None)

# func -> its event name, or None for calls that are not timed (filled on first use; the
# profiled calls look it up, so it holds every public function and method)
_NAMES: dict = {}


def _build() -> None:
    names: dict = {}
    # the torch namespace last: a function in it and another namespace gets its plain name
    for module, namespace in sorted(_overrides.NAMESPACES, key=lambda m: m[0] == "torch"):
        prefix = _PREFIX.get(module, "")
        for name, fn in list(namespace.items()):
            if name.startswith("_") or getattr(fn, "_ember_impl", None) is None:
                continue
            if name in _NOT_OPS:
                names[fn] = None
            elif module == "torch.nn.functional" and name in _FUNCTIONAL:
                names[fn] = _FUNCTIONAL[name]
            else:
                names[fn] = aten_name(prefix + name)
    for name, attr in list(vars(Tensor).items()):
        if isinstance(attr, property):
            if name in _PROPERTY_OPS and attr.fget is not None:
                names[attr.__get__] = _PROPERTY_OPS[name]
        elif getattr(attr, "_ember_impl", None) is not None:
            names[attr] = None if name in _NOT_OPS else aten_name(name)
    names[Tensor.__getitem__] = _getitem_name  # named by its key
    _NAMES.update(names)


def event_name(func, args: tuple = ()) -> str | None:
    """The event a profiled call of ``func`` with ``args`` records (None: not timed).

    Example:
        >>> import ember
        >>> from ember.profiler._ops import event_name
        >>> event_name(ember.add), event_name(ember.Tensor.__rmul__), event_name(ember.Tensor.size)
        ('aten::add', 'aten::mul', None)
        >>> event_name(ember.ops.aten.mm.default), event_name(ember.linalg.solve)
        ('aten::mm', 'aten::linalg_solve')
    """
    if not _NAMES:
        _build()
    try:
        name = _NAMES[func]
        return name if name is None or type(name) is str else name(args)
    except KeyError:
        pass
    except TypeError:  # an unhashable callable
        return None
    if isinstance(func, _op_namespaces.OpOverload):  # aten::add, as torch's profiler
        name = None if func.namespace == "profiler" else func._schema.name
    elif isinstance(func, _op_namespaces.OpOverloadPacket):
        name = None if func._namespace == "profiler" else func._qualified_op_name
    else:
        name = None  # a function outside ember (handle_torch_function), not an op
    _NAMES[func] = name
    return name


class ProfilerMode(TorchFunctionMode):
    """The mode a running profiler keeps on its thread: times each op called (see the
    module docstring). Internal: ``ember.autograd.profiler`` pushes and removes it.

    The calls an op makes through public names are its children, as torch's nested ops:
    when no other mode is active and no argument overrides ``__torch_function__``, the op
    runs with this mode back on the stack (a mode is off the stack while it handles a
    call); otherwise it runs as any mode's call does, and what it calls is not recorded.

    Example:
        >>> import ember
        >>> from ember.profiler import profile
        >>> from ember.profiler._ops import ProfilerMode
        >>> with profile():
        ...     type(ember.overrides._get_current_function_mode()) is ProfilerMode
        True
    """

    def __init__(self, recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        try:
            name = _NAMES[func]
            if name is not None and type(name) is not str:
                name = name(args)
        except (KeyError, TypeError):
            name = event_name(func, args)
        rec = self.recorder
        if name is None or not rec.running:
            return self._run(func, types, args, kwargs)
        event = rec.begin(name, args)
        out = None
        try:
            out = self._run(func, types, args, kwargs)
            return out
        finally:
            rec.end(event, out)

    def _run(self, func, types, args, kwargs):
        impl = getattr(func, "_ember_impl", None)
        modes = _overrides.state.modes
        if impl is None or types or modes:
            return func(*args, **kwargs)
        modes.append(self)  # (counted in MODES since the profiler began)
        try:
            return impl(*args, **kwargs)
        finally:
            if modes and modes[-1] is self:
                modes.pop()
            elif self in modes:  # the profiler stopped inside the call
                modes.remove(self)


_core.register_op_mode(ProfilerMode)
