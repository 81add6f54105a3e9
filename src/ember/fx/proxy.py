"""Proxies: stand-ins for values during symbolic tracing. Every operation on a Proxy
records a Node in the tracer's graph instead of computing.

Example:
    >>> import ember.fx
    >>> from ember.fx.proxy import GraphAppendingTracer
    >>> g = ember.fx.Graph()
    >>> a = ember.fx.Proxy(g.placeholder("a"), GraphAppendingTracer(g))
    >>> b = ember.fx.Proxy(g.placeholder("b"), GraphAppendingTracer(g))
    >>> c = 2 * a + b
    >>> _ = g.output(c.node)
    >>> [n.name for n in g.nodes]
    ['a', 'b', 'mul', 'add', 'output']
"""

from __future__ import annotations

import builtins
import dis
import inspect
import math
import operator
import sys
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

from .._overrides import OPERATOR_METHODS
from .._tensor import Tensor
from ..overrides import is_tensor_method_or_property
from .graph import Graph
from .node import Argument, Node, Target, _wrapped_original, map_aggregate

__all__ = ["Attribute", "GraphAppendingTracer", "Proxy", "TraceError", "TracerBase"]


class TraceError(ValueError):
    """Raised when a traced value is used where tracing cannot follow (control flow)."""


class TracerBase:
    """The part of a tracer that turns operations on Proxies into Nodes."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    module_stack: dict = {}
    node_name_to_scope: dict = {}

    def create_node(
        self,
        kind: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Insert a node in ``self.graph`` (override to annotate or rewrite nodes)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        """Wrap ``node`` in a Proxy of this tracer."""
        return Proxy(node, self)

    def create_proxy(
        self,
        kind: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        name: str | None = None,
        type_expr: Any | None = None,
        proxy_factory_fn: Callable[[Node], Proxy] | None = None,
    ) -> Proxy:
        """Record an operation (its arguments turned into graph values) and return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """Turn a value appearing as an argument into something a Node can hold."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, (tuple, list, dict, slice)):
            return map_aggregate(
                a, lambda x: x if isinstance(x, (tuple, list, dict, slice)) else self.create_arg(x)
            )
        return a

    def to_bool(self, obj: Proxy) -> bool:
        """Called for ``bool(proxy)``: tracing cannot decide a branch."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy):
        """Called for ``iter(proxy)`` outside tuple unpacking."""
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
            "loop or"
            " as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
            "more detailed explanation of what types of control flow can be traced, and check "
            "out the"
            " Proxy docstring for help troubleshooting Proxy iteration errors"
        )

    def keys(self, obj: Proxy):
        """Called for ``**proxy``: records a ``keys()`` call."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to ``graph``: for building graphs from Proxies by hand.

    Example:
        >>> import ember.fx
        >>> from ember.fx.proxy import GraphAppendingTracer
        >>> g = ember.fx.Graph()
        >>> x = ember.fx.Proxy(g.placeholder("x"), GraphAppendingTracer(g))
        >>> (x.relu() + 1).node.name
        'add'
    """

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """A value being traced: operators, method calls, attribute reads, indexing and calls
    on it record Nodes, and so do ember's functions given one (``ember.relu(proxy)``,
    ``ember.cat([proxy, proxy])``, ``tensor + proxy``: ``__torch_function__``). ``bool()``,
    ``len()`` and loops over it cannot be traced.

    Example:
        >>> import ember.fx
        >>> from ember.fx.proxy import GraphAppendingTracer
        >>> g = ember.fx.Graph()
        >>> x = ember.fx.Proxy(g.placeholder("x"), GraphAppendingTracer(g))
        >>> y = x.view(-1)[0] * 2
        >>> [n.name for n in g.nodes]
        ['x', 'view', 'getitem', 'mul']
    """

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # called only for names a Proxy lacks: record a method call or an attribute read
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo) -> Proxy:
        return Proxy(self.node, self.tracer)

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy`` is traceable: the caller's bytecode says how many items it wants
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        if sys.version_info >= (3, 11):
            inst = insts[bisect_left([i.offset for i in insts], frame.f_lasti)]
        else:
            inst = insts[frame.f_lasti // 2]
        if inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be "
            "recorded, please call torch.fx.wrap('len') at module scope"
        )

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", builtins.abs, (self,), {})

    def __hash__(self) -> int:
        return id(self)

    def __floor__(self) -> Proxy:
        # math.floor(proxy): recorded as torch records it (torch patches ``math`` to do so)
        return self.tracer.create_proxy("call_function", math.floor, (self,), {})

    def __ceil__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", math.ceil, (self,), {})

    def __trunc__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", math.trunc, (self,), {})

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None) -> Proxy:
        """An ember function, Tensor method or operator called with a Proxy among its
        arguments (``ember.relu(p)``, ``ember.cat([p, p])``, ``tensor + p``): recorded as a
        ``call_method`` node for Tensor methods (named as torch names them: ``tensor + p`` is
        ``add``), else as a ``call_function`` node whose target is the public function.

        Example:
            >>> import ember
            >>> import ember.fx
            >>> g = ember.fx.Graph()
            >>> p = ember.fx.Proxy(g.placeholder("x"))
            >>> _ = g.output(ember.cat([ember.relu(p), p], dim=1).node)
            >>> print(g.python_code("self").src.strip())
            def forward(self, x):
                relu = ember.relu(x)
                cat = ember.cat([relu, x], dim = 1);  relu = x = None
                return cat
        """
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict = {}

        def find_tracer(a):
            if isinstance(a, Proxy):
                tracers[a.tracer] = None
            return a

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(
                f"Found multiple different tracers {list(tracers.keys())} while "
                f"trying to trace operations {orig_method}"
            )
        tracer = next(iter(tracers))
        args, kwargs = _as_called(orig_method, args, kwargs)
        if is_tensor_method_or_property(orig_method):
            name = orig_method.__name__
            name = _TORCH_METHOD_NAMES.get(name, name)
            return tracer.create_proxy("call_method", name, args, kwargs)
        proxy = tracer.create_proxy(
            "call_function",
            orig_method,
            args,
            kwargs,
            name=tracer.graph._target_to_str(orig_method),
        )
        if _wrapped_original(orig_method) is not None:
            proxy.node.meta["is_wrapped"] = True  # generated code re-registers it (as torch)
        return proxy

    def keys(self):
        """``**proxy`` support."""
        return self.tracer.keys(self)


class Attribute(Proxy):
    """``proxy.name``: a ``call_method`` when called, else a ``getattr`` node (made lazily)."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        """The ``getattr`` node of this read, recorded on first use."""
        # only a read that is not a method call becomes a getattr node
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", builtins.getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args, **kwargs) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


_REFLECTABLE = [
    "add",
    "sub",
    "mul",
    "floordiv",
    "truediv",
    "mod",
    "pow",
    "lshift",
    "rshift",
    "and_",
    "or_",
    "xor",
    "matmul",
]
_MAGIC = _REFLECTABLE + ["eq", "ne", "lt", "gt", "le", "ge", "pos", "neg", "invert", "getitem"]


def _define_magic(name: str) -> None:
    fn = getattr(operator, name)

    def impl(*args):
        tracer = next(a.tracer for a in args if isinstance(a, Proxy))
        return tracer.create_proxy("call_function", fn, args, {})

    impl.__name__ = f"__{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


def _define_reflected(name: str) -> None:
    fn = getattr(operator, name)
    dunder = f"__r{name.strip('_')}__"

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", fn, (rhs, self), {})

    impl.__name__ = dunder
    setattr(Proxy, dunder, impl)


for _m in _MAGIC:
    _define_magic(_m)
for _m in _REFLECTABLE:
    _define_reflected(_m)
del _m


# -- what __torch_function__ records ---------------------------------------------------------

# Tensor operators as torch's dispatch names them: ``tensor + proxy`` reaches
# ``__torch_function__`` as ``Tensor.add`` in torch (its C operators share the methods'
# dispatch), so the node is ``call_method[target=add]``.
_TORCH_METHOD_NAMES = {
    name: method
    for name, method in OPERATOR_METHODS.items()
    if hasattr(Tensor, method)  # generated code must be able to call it
}

_MISSING = object()
# code object -> (instruction offsets, instructions): the call sites looked at so far
_CALL_SITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# public wrapper -> its parameters (see _signature)
_SIGNATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _signature(func) -> tuple:
    """(positional names, *args?, keyword-only names, **kwargs?, defaults by name) of a
    public wrapper (it has its implementation's signature)."""
    sig = _SIGNATURES.get(func)
    if sig is None:
        # the implementation's: a wrapper may also take NumPy's aliases (axis=), which
        # reach __torch_function__ under torch's names
        impl = getattr(func, "_ember_impl", func)
        code = impl.__code__
        n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
        names = code.co_varnames
        positional = names[:n_pos]
        keyword = names[n_pos : n_pos + n_kw]
        star = bool(code.co_flags & inspect.CO_VARARGS)
        starstar = bool(code.co_flags & inspect.CO_VARKEYWORDS)
        defaults = dict(zip(positional[::-1], (impl.__defaults__ or ())[::-1]))
        defaults.update(impl.__kwdefaults__ or {})
        sig = _SIGNATURES[func] = (positional, star, keyword, starstar, defaults)
    return sig


def _call_shape(frame) -> tuple | None:
    """(number of positional arguments, keyword names) of the call ``frame`` is making, read
    from its bytecode; None for ``f(*args, **kwargs)`` and calls made from C."""
    code = frame.f_code
    table = _CALL_SITES.get(code)
    if table is None:
        insts = list(dis.get_instructions(code))
        table = _CALL_SITES[code] = ([i.offset for i in insts], insts)
    offsets, insts = table
    # f_lasti is the call instruction or one of its inline caches
    k = bisect_right(offsets, frame.f_lasti) - 1
    if k < 0 or insts[k].opname not in ("CALL", "CALL_KW"):
        return None
    argc = insts[k].arg
    kwnames: tuple = ()
    j = k - 1
    while j >= 0 and insts[j].opname == "PRECALL":  # 3.11: KW_NAMES; PRECALL; CALL
        j -= 1
    if insts[k].opname == "CALL_KW":  # 3.13: the names are a constant pushed last
        if j < 0 or not isinstance(insts[j].argval, tuple):
            return None
        kwnames = insts[j].argval
    elif j >= 0 and insts[j].opname == "KW_NAMES":
        kwnames = code.co_consts[insts[j].arg]
    return argc - len(kwnames), tuple(kwnames)


def _rebuild(sig: tuple, args: tuple, kwargs: dict, n_pos: int, kwnames: tuple):
    """The call with ``n_pos`` positional arguments and ``kwnames`` by keyword, if it is
    the call the wrapper received (every argument left out is its default, by identity)."""
    positional, _star, keyword, _starstar, defaults = sig
    if len(args) > len(positional):  # *args received some: all were positional
        if n_pos != len(args):
            return None
    elif n_pos > len(positional):
        return None
    values = dict(zip(positional, args))
    values.update(kwargs)
    given = set(positional[:n_pos])
    for name in kwnames:
        if name not in values or name in given:
            return None
        given.add(name)
    for name in positional[n_pos:] + keyword:
        if name not in given and values.get(name, _MISSING) is not defaults.get(name, _MISSING):
            return None
    if any(name not in given for name in kwargs if name not in keyword):
        return None  # **kwargs entries the call site does not name
    return tuple(args[:n_pos]), {name: values[name] for name in kwnames}


def _as_called(func, args: tuple, kwargs: dict) -> tuple:
    """The arguments as the caller wrote them.

    ember's public functions are wrappers with their implementation's signature, so the
    arguments reaching ``__torch_function__`` are all of the parameters (``ember.sum(p)``
    arrives as ``(p, None, False), {"dtype": None}``) where torch passes what was written.
    The caller's call instruction tells how many arguments were positional and which were
    keywords: that call is recorded when it is the one the wrapper received; otherwise (a
    call through ``*args``, ``functools.partial``) the arguments left at their defaults are
    dropped (trailing positional ones, keyword ones)."""
    if getattr(func, "_ember_impl", None) is None or not hasattr(func, "__code__"):
        return args, kwargs
    sig = _signature(func)
    frame = sys._getframe(2)
    for _ in range(8):  # up to the wrapper's frame (dispatch, modes in between)
        if frame is None or frame.f_code is func.__code__:
            break
        frame = frame.f_back
    shape = None
    if frame is not None and frame.f_code is func.__code__ and frame.f_back is not None:
        shape = _call_shape(frame.f_back)
    if shape is not None:
        n_pos, kwnames = shape
        # ``t.add(p)`` passes ``t`` as self without counting it: try that reading first
        tries = (n_pos + 1, n_pos) if is_tensor_method_or_property(func) else (n_pos,)
        for n in tries:
            rebuilt = _rebuild(sig, args, kwargs, n, kwnames)
            if rebuilt is not None:
                return rebuilt
    positional, _star, _keyword, _starstar, defaults = sig
    n = len(args)
    if n <= len(positional):
        while n > 0 and args[n - 1] is defaults.get(positional[n - 1], _MISSING):
            n -= 1
    kwargs = {k: v for k, v in kwargs.items() if v is not defaults.get(k, _MISSING)}
    return tuple(args[:n]), kwargs
