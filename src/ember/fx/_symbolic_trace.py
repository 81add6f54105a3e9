"""Symbolic tracing: run a module's ``forward`` on Proxies and record what it does.

Nothing is replaced while a trace runs (torch patches ``nn.Module.__call__``/``__getattr__``,
``math``'s functions and the names ``fx.wrap`` registered, for the duration of the trace):

- ember's functions, Tensor methods and operators hand calls with a Proxy argument to
  ``Proxy.__torch_function__`` (the ``__torch_function__`` protocol), which records them;
- module calls and parameter reads reach the tracer through a hook of ``nn.Module``
  (``intercept_module_calls``: this thread's tracer, pushed for the trace);
- ``wrap`` binds a dispatching function once, when it is called (at import).

So traces in several threads, and traces inside traces, do not disturb one another.

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
import functools
import inspect
import math
import sys
import threading
from collections.abc import Callable
from typing import Any

from .. import nn
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..nn.modules.module import intercept_module_calls
from ..overrides import handle_torch_function, has_torch_function
from .graph import Graph
from .graph_module import GraphModule
from .node import _SIDE_EFFECTFUL, Argument, _wrapped_original
from .proxy import TracerBase

__all__ = ["PH", "PHBase", "Tracer", "is_fx_tracing", "symbolic_trace", "wrap"]


class _TracingState(threading.local):
    """Per thread: how many symbolic traces run, and the wrapped functions whose node is
    being created (called again from there, they run their body)."""

    def __init__(self) -> None:
        self.depth = 0
        self.recording: list = []


_state = _TracingState()


def is_fx_tracing() -> bool:
    """True while ``symbolic_trace`` (or ``Tracer.trace``) runs in this thread.

    Example:
        >>> import ember.fx
        >>> ember.fx._symbolic_trace.is_fx_tracing()
        False
    """
    return _state.depth > 0


def _wrapped(fn: Callable) -> Callable:
    """``fn`` as a function that, while this thread traces, hands calls with a Proxy among
    its arguments to ``__torch_function__`` (so they become one ``call_function`` node)."""
    if _wrapped_original(fn) is not None:
        return fn

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        st = _state
        if st.depth and wrapped not in st.recording:
            relevant = args + tuple(kwargs.values())
            if has_torch_function(relevant):
                st.recording.append(wrapped)
                try:
                    return handle_torch_function(wrapped, relevant, *args, **kwargs)
                finally:
                    st.recording.pop()
        return fn(*args, **kwargs)

    wrapped._fx_wrapped = fn
    return wrapped


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """Record calls to a module-level function as one ``call_function`` node instead of
    tracing through it (a "leaf function"). Call it at module scope, after the function is
    defined, with the function or its name, or use it as a decorator.

    Unlike torch (which replaces the name in the module's globals while each trace runs),
    ember binds the name, once, when ``wrap`` is called, to a function that dispatches
    through ``__torch_function__`` while a trace runs in the calling thread and calls the
    original otherwise. So ``from module import fn`` made after the ``wrap`` sees the
    wrapped function too, and the name must be defined (or a builtin) when ``wrap`` is
    called. The recorded target is that function (``node.target is fn`` holds, as in torch).

    Example:
        >>> import ember.fx
        >>> @ember.fx.wrap
        ... def twice(x):
        ...     return x * 2 if x.dim() > 0 else x
        >>> gm = ember.fx.symbolic_trace(lambda x: twice(x) + 1)
        >>> [n.target is twice for n in gm.graph.nodes if n.op == "call_function"]
        [True, False]
    """
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise RuntimeError(
            "Unsupported type for global function! Must be either a callable or string name"
        )
    frame = sys._getframe(1)
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    globs = frame.f_globals
    if callable(fn_or_name):
        fn = fn_or_name
    else:
        fn = globs.get(name, getattr(builtins, name, None))
        if fn is None:
            raise NameError(
                f"ember.fx.wrap({name!r}): no function of that name in this module or in "
                "builtins yet (ember binds the wrapped function when wrap is called: "
                "call it after the definition)"
            )
    wrapped = _wrapped(fn)
    globs[name] = wrapped
    return wrapped if callable(fn_or_name) else fn_or_name


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


class _ModuleHook:
    """The interceptor a trace pushes (see ``intercept_module_calls``): module calls go to
    ``Tracer.call_module``, parameter and buffer reads to ``Tracer.getattr``."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer
        self.parameter_proxy_cache: dict = {}

    def module_call(self, module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        return self.tracer.call_module(module, forward, args, kwargs)

    def module_getattr(self, module, name: str, value: Any) -> Any:
        return self.tracer.getattr(name, value, self.parameter_proxy_cache)


class Tracer(TracerBase):
    """Records a module's or function's ``forward`` as a Graph. Subclass it and override
    ``is_leaf_module`` (or ``create_node``, ``call_module``, ``getattr``, ...) to change what
    is recorded.

    ``autowrap_modules`` and ``autowrap_functions`` are accepted for torch's signature but
    do nothing: torch records ``math.sqrt(proxy)`` by replacing ``math``'s functions during
    the trace, which ember does not do (``math.floor``/``ceil``/``trunc`` are recorded all
    the same, through Proxy's ``__floor__``...; register other functions with ``wrap``).

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
        elif self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
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
        if isinstance(a, Tensor):
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
        _state.depth += 1
        try:
            with intercept_module_calls(_ModuleHook(self)):
                args = self._placeholders(fn, bound_self, concrete_args or {})
                result = fn(*bound_self, *args)
                self.create_node("output", "output", (self.create_arg(result),), {}, type_expr=None)
        finally:
            _state.depth -= 1
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
