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
import operator
import sys
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from .graph import Graph
from .node import Argument, Node, Target, map_aggregate

__all__ = ["Attribute", "GraphAppendingTracer", "Proxy", "TraceError", "TracerBase"]

# recording stand-in -> the ember function it stands for, while a trace patches ember's
# namespaces (see _symbolic_trace); nodes always hold the original
_ORIGINAL: dict = {}


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
        if kind == "call_function":
            target = _ORIGINAL.get(target, target)
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
    on it record Nodes. ``bool()``, ``len()`` and loops over it cannot be traced.

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
