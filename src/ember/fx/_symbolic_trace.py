"""Symbolic tracing: run a module's ``forward`` on Proxies and record what it does.

ember has no ``__torch_function__``, so while a trace runs the public functions of
``ember``, ``ember.nn.functional``, ``ember.special``, ``ember.linalg`` and ``ember.fft``
are temporarily replaced by wrappers that record a ``call_function`` node when an argument
is a Proxy (and call the real op otherwise); ``nn.Module.__call__``/``__getattr__`` are
patched so leaf modules become ``call_module`` and parameters ``get_attr``. Everything is
restored afterwards, so ember's ops carry no cost outside tracing.

Example:
    >>> import ember
    >>> import ember.fx
    >>> def f(x):
    ...     return ember.relu(x) + 1
    >>> print(ember.fx.symbolic_trace(f).code.strip())
    def forward(self, x):
        relu = ember.relu(x);  x = None
        add = relu + 1;  relu = None
        return add
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import math
import sys
import types
from collections.abc import Callable
from typing import Any

import ember
import ember.nn as nn

from .._overrides import warn as _warn
from .graph import Graph
from .graph_module import GraphModule
from .node import _SIDE_EFFECTFUL, Argument, map_aggregate
from .proxy import _ORIGINAL, Proxy, TracerBase

__all__ = ["PH", "PHBase", "Tracer", "symbolic_trace", "wrap"]

_PATCHED_MODULE_NAMES = (
    "ember",
    "ember.nn.functional",
    "ember.special",
    "ember.linalg",
    "ember.fft",
)

# Functions that must run even on Proxies (they inspect types, not values) or are not ops.
_NEVER_PATCH = {
    "is_tensor",
    "is_storage",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "get_default_dtype",
    "set_default_dtype",
    "manual_seed",
    "seed",
    "initial_seed",
    "typename",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
}

# original -> its recording stand-in, while a trace runs
_ACTIVE: dict = {}
_DEPTH = 0
_PUBLIC_NAMES: dict | None = None

# (id(globals), name) -> globals dict, for functions registered by ``wrap``
_wrapped_fns_to_patch: dict = {}


def _public_name(fn: Any) -> str | None:
    """``ember.relu`` for ember's public functions (by identity), else None."""
    global _PUBLIC_NAMES
    fn = _ORIGINAL.get(fn, fn)
    if _PUBLIC_NAMES is None:
        table: dict = {}
        for modname in reversed(_PATCHED_MODULE_NAMES):
            mod = sys.modules.get(modname)
            for name, obj in vars(mod).items() if mod is not None else ():
                if isinstance(obj, types.FunctionType) and not name.startswith("_"):
                    obj = _ORIGINAL.get(obj, obj)
                    # a function's own name wins over its aliases
                    if obj not in table or name == obj.__name__:
                        table[obj] = f"{modname}.{name}"
        _PUBLIC_NAMES = table
    try:
        return _PUBLIC_NAMES.get(fn)
    except TypeError:  # unhashable callables
        return None


def _find_proxy(args, kwargs):
    found = []

    def look(x):
        if isinstance(x, Proxy) and not found:
            found.append(x)
        return x

    map_aggregate(args, look)
    map_aggregate(kwargs, look)
    return found[0] if found else None


def _recording(orig: Callable) -> Callable:
    """A stand-in for ``orig`` that records a call_function node when given a Proxy."""
    if orig in _ACTIVE:
        return _ACTIVE[orig]  # one stand-in per function, whatever names it has

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig(*args, **kwargs)
        return proxy.tracer.create_proxy("call_function", orig, args, kwargs)

    _ORIGINAL[wrapper] = orig
    _ACTIVE[orig] = wrapper
    return wrapper


_TENSOR_BINARY = [
    f"__{n}__"
    for n in (
        "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow "
        "matmul rmatmul and rand or ror xor rxor lshift rshift eq ne lt le gt ge".split()
    )
]


def _defer_to_proxy(orig: Callable) -> Callable:
    # ``tensor + proxy``: give Python the chance to call ``Proxy.__radd__``
    @functools.wraps(orig)
    def method(self, other):
        if isinstance(other, Proxy):
            return NotImplemented
        return orig(self, other)

    return method


class _Patcher:
    """Set attributes for the duration of a trace and put the originals back."""

    def __init__(self) -> None:
        self._undo: list = []

    def setattr(self, obj, name: str, value) -> None:
        had = name in vars(obj) if not isinstance(obj, dict) else name in obj
        old = (vars(obj) if not isinstance(obj, dict) else obj).get(name)
        if isinstance(obj, dict):
            obj[name] = value
        else:
            setattr(obj, name, value)
        self._undo.append((obj, name, had, old))

    def restore(self) -> None:
        for obj, name, had, old in reversed(self._undo):
            if isinstance(obj, dict):
                if had:
                    obj[name] = old
                else:
                    obj.pop(name, None)
            elif had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)
        self._undo.clear()


def _patch_ember(patcher: _Patcher) -> None:
    _public_name(None)  # build the name table from the unpatched namespaces
    for modname in _PATCHED_MODULE_NAMES:
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        for name, obj in list(vars(mod).items()):
            if (
                isinstance(obj, types.FunctionType)
                and not name.startswith("_")
                and name not in _NEVER_PATCH
                and obj not in _ORIGINAL
                and (obj.__module__ or "").startswith("ember")
            ):
                patcher.setattr(mod, name, _recording(obj))
    for dunder in _TENSOR_BINARY:
        orig = vars(ember.Tensor).get(dunder)
        if orig is not None:
            patcher.setattr(ember.Tensor, dunder, _defer_to_proxy(orig))
    for (_, name), globs in _wrapped_fns_to_patch.items():
        orig = globs.get(name, getattr(builtins, name, None))
        if orig is not None:
            patcher.setattr(globs, name, _recording(orig))


def _patch_imported_names(patcher: _Patcher, fn: Callable, root: nn.Module) -> None:
    """``from ember import relu`` binds the unpatched function in the user's module: patch
    such names in the globals of the traced function and of the root's module classes."""
    seen: set = set()
    fns = [fn] + [vars(c).get("forward") for m in root.modules() for c in type(m).__mro__]
    for f in fns:
        globs = getattr(f, "__globals__", None)
        if globs is None or id(globs) in seen or globs.get("__name__", "").startswith("ember."):
            continue
        seen.add(id(globs))
        for name, obj in list(globs.items()):
            if isinstance(obj, types.FunctionType) and obj not in _ORIGINAL:
                if _public_name(obj) is not None and obj.__name__ not in _NEVER_PATCH:
                    patcher.setattr(globs, name, _recording(obj))


@contextlib.contextmanager
def _tracing_patches():
    """ember's functions record nodes for Proxies within the block (see module docstring)."""
    global _DEPTH
    patcher = _Patcher()
    _DEPTH += 1
    try:
        if _DEPTH == 1:  # a trace inside a trace reuses the patches already in place
            _patch_ember(patcher)
        yield patcher
    finally:
        patcher.restore()
        _DEPTH -= 1
        if _DEPTH == 0:
            for wrapper in _ACTIVE.values():
                _ORIGINAL.pop(wrapper, None)
            _ACTIVE.clear()


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """Register a module-level function (or its name) to be recorded as a single
    ``call_function`` node instead of being traced through. Call it at module scope.

    Example:
        >>> import ember.fx
        >>> def my_len(x):
        ...     return len(x)
        >>> _ = ember.fx.wrap(my_len)  # doctest: +SKIP
    """
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError(
            "Unsupported type for global function! Must be either a callable or string name"
        )
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    globs = frame.f_globals
    _wrapped_fns_to_patch[(id(globs), name)] = globs
    return fn_or_name


class PHBase:
    """The type of ``PH``: a value in ``concrete_args`` that stays a graph input."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _assert(condition: Any, message: str = "") -> None:
    """``torch._assert``: raise AssertionError(message) unless ``condition`` holds."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value: Any, msg: str) -> None:
    if value is not None:
        raise AssertionError(msg)


_SIDE_EFFECTFUL.update({_assert, _assert_is_none})


class Tracer(TracerBase):
    """Records a module's or function's ``forward`` as a Graph. Subclass it and override
    ``is_leaf_module`` (or ``create_node``, ``call_module``, ...) to change what is recorded.

    Example:
        >>> import ember.nn as nn
        >>> import ember.fx
        >>> class NoLeaves(ember.fx.Tracer):
        ...     def is_leaf_module(self, m, qualname):
        ...         return False
        >>> g = NoLeaves().trace(nn.Sequential(nn.ReLU()))
        >>> [n.op for n in g.nodes]
        ['placeholder', 'call_function', 'output']
    """

    def __init__(
        self,
        autowrap_modules: tuple = (math,),
        autowrap_functions: tuple = (),
        param_shapes_constant: bool = False,
    ) -> None:
        super().__init__()
        self.param_shapes_constant = param_shapes_constant
        self.proxy_buffer_attributes = True
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}
        self.submodule_paths: dict | None = None
        self.root: nn.Module | None = None
        self.tensor_attrs: dict = {}

    # -- hooks subclasses override ----------------------------------------------------------

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        """ember.nn's (and torch.nn's) own modules are leaves, except Sequential."""
        mod = type(m).__module__ or ""
        return (mod.startswith("ember.nn") or mod.startswith("torch.nn")) and not isinstance(
            m, nn.Sequential
        )

    def path_of_module(self, mod: nn.Module) -> str:
        """The qualified name of ``mod`` inside the traced root."""
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: nn.Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A leaf becomes a ``call_module`` node; any other module is traced through."""
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A parameter (or buffer) read from a module becomes a ``get_attr`` node."""
        if isinstance(attr_val, nn.Parameter):
            found = self._attr_path(attr_val, self.root.named_parameters())
        elif self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            found = self._attr_path(attr_val, self.root.named_buffers())
        else:
            return attr_val
        if found is None:
            return attr_val
        if found not in parameter_proxy_cache:
            parameter_proxy_cache[found] = self.create_proxy("get_attr", found, (), {})
        return parameter_proxy_cache[found]

    @staticmethod
    def _attr_path(value, named) -> str | None:
        for name, v in named:
            if v is value:
                return name
        return None

    def create_arg(self, a: Any) -> Argument:
        """Parameters and tensors become ``get_attr`` nodes; other values pass through."""
        if isinstance(a, ember.Tensor) and not isinstance(a, Proxy):
            path = self.tensor_attrs.get(id(a))
            if path is not None and self.root is not None:
                return self.create_node("get_attr", path, (), {})
            # a tensor constant: stored on the root so the generated code can read it
            i = 0
            while hasattr(self.root, f"_tensor_constant{i}"):
                i += 1
            qualname = f"_tensor_constant{i}"
            setattr(self.root, qualname, a)
            self.tensor_attrs[id(a)] = qualname
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, nn.Module):
            raise RuntimeError(
                f"Unsupported node type {type(a)}: modules can only be called, not passed"
            )
        return super().create_arg(a)

    # -- tracing ---------------------------------------------------------------------------

    def trace(self, root: nn.Module | Callable, concrete_args: dict | None = None) -> Graph:
        """Run ``root`` on Proxies and return the recorded Graph.

        Example:
            >>> import ember.nn as nn
            >>> import ember.fx
            >>> g = ember.fx.Tracer().trace(nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
            >>> [n.name for n in g.nodes]
            ['input_1', '_0', '_1', 'output']
        """
        if isinstance(root, nn.Module):
            self.root = root
            fn = type(root).forward
            bound_self = (root,)
        else:
            self.root = nn.Module()
            fn = root
            bound_self = ()
        self.traced_func_name = getattr(fn, "__name__", "forward")
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = {m: name for name, m in self.root.named_modules()}
        self.tensor_attrs = {}
        for name, p in self.root.named_parameters():
            self.tensor_attrs.setdefault(id(p), name)
        for name, b in self.root.named_buffers():
            self.tensor_attrs.setdefault(id(b), name)
        args = self._placeholders(fn, bound_self, concrete_args or {})
        cache: dict = {}
        orig_call = nn.Module.__call__
        orig_getattr = nn.Module.__getattr__
        tracer = self

        def module_call(mod, *a, **kw):
            def forward(*a2, **kw2):
                return orig_call(mod, *a2, **kw2)

            return tracer.call_module(mod, forward, a, kw)

        def module_getattr(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), cache)

        with _tracing_patches() as patcher:
            patcher.setattr(nn.Module, "__call__", module_call)
            patcher.setattr(nn.Module, "__getattr__", module_getattr)
            _patch_imported_names(patcher, fn, self.root)
            result = fn(*bound_self, *args)
            self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=None)
        self.submodule_paths = None
        return self.graph

    def _concrete_placeholder(self, p: inspect.Parameter, value: Any) -> Any:
        """A specialised argument: ``value`` is used while tracing; the argument stays in the
        signature (as ``name_1``, like torch) and the graph asserts it is passed that value."""
        default = () if p.default is inspect.Parameter.empty else (p.default,)
        out = self.create_proxy("placeholder", f"{p.name}_1", default, {})
        if isinstance(value, PHBase):
            return out
        if type(value) in (bool, int, float, str, complex):
            msg = f"{p.name} has been specialized to have value {value} but got another value"
            self.create_proxy("call_function", _assert, (out == value, msg), {})
        elif value is None:
            msg = f"{p.name} has been specialized to have value None but got another value"
            self.create_proxy("call_function", _assert_is_none, (out, msg), {})
        else:
            _warn(
                f"Was not able to add assertion to guarantee correct input {p.name} to "
                "specialized function. It is up to the user to make sure that your inputs match "
                "the inputs you specialized the function with.",
                stacklevel=4,
            )
        return value

    def _placeholders(self, fn: Callable, bound_self: tuple, concrete_args: dict) -> list:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[len(bound_self) :]
        args: list = []
        for p in params:
            if p.name in concrete_args:
                args.append(self._concrete_placeholder(p, concrete_args[p.name]))
                continue
            if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise RuntimeError(
                    "ember.fx.symbolic_trace does not support *args or **kwargs in the "
                    "traced signature"
                )
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {}))
        return args


def symbolic_trace(root: nn.Module | Callable, concrete_args: dict | None = None):
    """Trace ``root`` (a Module or a function) into a GraphModule.

    Example:
        >>> import ember.nn as nn
        >>> import ember.fx
        >>> gm = ember.fx.symbolic_trace(nn.Sequential(nn.Linear(3, 2), nn.ReLU()))
        >>> [n.op for n in gm.graph.nodes]
        ['placeholder', 'call_module', 'call_module', 'output']
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
