"""The fx ``Graph``: a list of Nodes in program order, editable, printable in torch's format
and compiled to a Python ``forward`` by ``python_code``.

Example:
    >>> import operator
    >>> import ember.fx
    >>> g = ember.fx.Graph()
    >>> x = g.placeholder("x")
    >>> g.output(g.call_function(operator.add, (x, 1)))
    output
    >>> print(g.python_code("self").src.strip())
    def forward(self, x):
        add = x + 1;  x = None
        return add
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import enum
import inspect
import keyword
import math
import operator
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .node import (
    Argument,
    Node,
    Target,
    _public_name,
    _qualified_name,
    _wrapped_original,
    map_arg,
)

__all__ = ["Graph", "PythonCode"]

_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])").sub
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")

# Names a node may not take unless it is that very object (keywords, builtins).
_illegal_names: dict = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_illegal_names.update({"inf": math.inf, "nan": math.nan, "ember": object()})


def _snake_case(s: str) -> str:
    return _snake_case_sub(r"_\1", s).lower()


def _is_magic(x: str) -> bool:
    return x.startswith("__") and x.endswith("__")


class _Namespace:
    """Unique names, each tied to at most one object, never shadowing a builtin."""

    def __init__(self) -> None:
        self._obj_to_name: dict = {}
        self._used_names: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str, obj: object | None) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: object) -> None:
        self._obj_to_name.setdefault(obj, name)

    def _rename_object(self, obj: object, name: str) -> None:
        self._obj_to_name[obj] = name
        self._used_names.add(name)


@dataclass
class PythonCode:
    """Source of a generated ``forward`` and the globals it runs with."""

    src: str
    globals: dict


class _NodeList:
    """A live view of a graph's nodes (forwards or reversed); erasing the node being
    visited is allowed."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self._graph = graph
        self._dir = direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self):
        root = self._graph._root
        cur = getattr(root, self._dir)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self._dir)

    def __reversed__(self):
        return iter(_NodeList(self._graph, "_prev" if self._dir == "_next" else "_next"))

    def __repr__(self) -> str:
        return repr(list(self))


# operator functions generated code writes as Python operators
_BINARY = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def _format_target(base: str, target: str) -> str:
    r = base
    for e in target.split("."):
        r = f"{r}.{e}" if e.isidentifier() else f'getattr({r}, "{e}")'
    return r


class Graph:
    """A program as a list of Nodes; build it by hand or with ``symbolic_trace``.

    Example:
        >>> import ember.fx
        >>> g = ember.fx.Graph()
        >>> a, b = g.placeholder("a"), g.placeholder("b")
        >>> import operator
        >>> _ = g.output(g.call_function(operator.add, (a, b)))
        >>> [n.op for n in g.nodes]
        ['placeholder', 'placeholder', 'call_function', 'output']
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        """The nodes in program order (a live view; ``reversed`` works)."""
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Target | None = None, sort: bool = True) -> list:
        """The nodes with this ``op`` (and ``target``, if given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- building -------------------------------------------------------------------------

    def create_node(
        self,
        op: str,
        target: Target,
        args: tuple | None = None,
        kwargs: dict | None = None,
        name: str | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Create a node and insert it at the current insertion point (the end by default)."""
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args or (), kwargs or {}, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(
        self, name: str, type_expr: Any | None = None, default_value: Any = inspect.Signature.empty
    ) -> Node:
        """An input of the graph (an argument of ``forward``)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any | None = None) -> Node:
        """Read an attribute (parameter, buffer, constant) of the owning module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(
        self,
        module_name: str,
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Call the submodule at ``module_name``."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(
        self,
        method_name: str,
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Call method ``method_name`` on ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(
        self,
        the_function: Callable,
        args: tuple | None = None,
        kwargs: dict | None = None,
        type_expr: Any | None = None,
    ) -> Node:
        """Call a free function."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any | None = None) -> Node:
        """The graph's return value."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(
        self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x
    ) -> Node:
        """Copy ``node`` (from any graph) into this one, mapping its inputs by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Copy every node of ``g`` into this graph; ``val_map`` maps old nodes to new.
        Returns the value ``g`` outputs (in this graph's nodes)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __getstate__(self) -> dict:
        # the owning module pickles the graph, not the other way round
        return {**self.__dict__, "_owning_module": None}

    def __deepcopy__(self, memo=None) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, val_map={}, return_output_node=True)
        if out is not None:
            rv, old = out
            new = g.output(rv, type_expr=old.type)
            new.meta = copy.copy(old.meta)
        return g

    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None):
        """Within the block, new nodes go before ``n`` (the start of the graph for None)."""
        if n is None:
            with self.inserting_after(self._root):
                yield
            return
        saved, self._insert = self._insert, n.prepend
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None):
        """Within the block, each new node goes right after ``n`` (so several new nodes end
        up in reverse order, as in torch); the end of the graph for None."""
        if n is None:
            with self.inserting_before(self._root):
                yield
            return
        saved, self._insert = self._insert, n.append
        try:
            yield
        finally:
            self._insert = saved

    # -- editing --------------------------------------------------------------------------

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nothing uses."""
        if len(to_erase.users) > 0:
            raise RuntimeError(
                f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                f"users in the graph: {to_erase.users}!"
            )
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(
            map_arg(to_erase.args, lambda n: None), map_arg(to_erase.kwargs, lambda n: None)
        )

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase the nodes whose values nobody uses (side effects kept); True if any.

        Example:
            >>> import operator
            >>> import ember.fx
            >>> g = ember.fx.Graph()
            >>> x = g.placeholder("x")
            >>> _ = g.call_function(operator.add, (x, 1))
            >>> _ = g.output(x)
            >>> g.eliminate_dead_code(), len(g.nodes)
            (True, 2)
        """
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph is well formed: inputs defined before use, names unique,
        targets of the owning module exist. Raises RuntimeError otherwise."""
        seen_names: set = set()
        seen_values: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.op not in (
                "placeholder",
                "call_method",
                "call_module",
                "call_function",
                "get_attr",
                "output",
            ):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Arg {arg} of Node {node} does not belong to this Graph, "
                        f"but {node} uses it!"
                    )
                if arg not in seen_values:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' was used before it has been "
                        "defined! Please check that Nodes in the graph are topologically "
                        f"ordered\n{self}"
                    )
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            seen_values.add(node)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    obj = self.owning_module
                    for i, atom in enumerate(node.target.split(".")):
                        if not hasattr(obj, atom):
                            seen = ".".join(node.target.split(".")[:i])
                            raise RuntimeError(
                                f"Node {node} target {node.target} references nonexistent "
                                f"attribute {atom} of {seen}"
                            )
                        obj = getattr(obj, atom)

    # -- printing and code ----------------------------------------------------------------

    def _target_to_str(self, target: Target) -> str:
        if callable(target):
            # a public function by the name it has in ember's namespace (aliases share one
            # function object, whose __name__ is its first namespace's: special.expit for
            # ember.sigmoid)
            public = _public_name(target)
            op = public.rsplit(".", 1)[-1] if public is not None else target.__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    def __str__(self) -> str:
        lines = [n.format_node() for n in self.nodes]
        return "graph():" + "".join("\n    " + s for s in lines if s)

    def print_tabular(self) -> None:
        """Print the nodes as a table: opcode, name, target, args, kwargs (like torch,
        which formats it with the ``tabulate`` package)."""
        rows = [[n.op, n.name, str(n.target), str(n.args), str(n.kwargs)] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

        def line(cells):
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

        out = [line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]
        print("\n".join(out))

    def python_code(self, root_module: str, *, verbose: bool = False) -> PythonCode:
        """The source of ``forward(self, ...)`` computing this graph, and its globals."""
        # the package itself: generated code reaches ember's functions as ``ember.relu``
        ember = sys.modules[__name__.split(".")[0]]
        namespace = _Namespace()
        for n in self.nodes:
            namespace.create_name(n.name, n)
        globals_: dict = {
            "ember": ember,
            "inf": math.inf,
            "nan": math.nan,
            "NoneType": type(None),
            "device": ember.device,
        }

        def add_global(obj) -> str:
            qual = _qualified_name(obj)
            original = _wrapped_original(obj)
            if original is not None and getattr(builtins, qual, None) is original:
                return qual  # ``wrap("len")``: the generated code's own wrap binds ``len``
            if (qual.startswith("ember.") or qual == "ember") and _resolve(ember, qual) is obj:
                return qual
            if getattr(builtins, qual, None) is obj:
                return qual
            if qual.startswith("operator."):
                globals_["operator"] = operator
                return qual
            name = namespace.create_name(qual, obj)
            globals_[name] = obj
            return name

        def rep(a) -> str:
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple) and not hasattr(a, "_fields"):
                items = ", ".join(rep(x) for x in a)
                return f"({items},)" if len(a) == 1 else f"({items})"
            if isinstance(a, tuple):
                return add_global(type(a)) + "(" + ", ".join(rep(x) for x in a) + ")"
            if isinstance(a, list):
                return "[" + ", ".join(rep(x) for x in a) + "]"
            if isinstance(a, dict):
                return "{" + ", ".join(f"{k!r}: {rep(v)}" for k, v in a.items()) + "}"
            if isinstance(a, slice):
                return f"slice({rep(a.start)}, {rep(a.stop)}, {rep(a.step)})"
            if isinstance(a, ember.dtype):
                return f"ember.{str(a).split('.')[-1]}"
            if isinstance(a, ember.Tensor):
                # as torch writes a tensor argument (not meant to run: symbolic_trace stores
                # tensors as attributes; this is for graphs built by hand)
                dtype = str(a.dtype).split(".")[-1]
                return f"ember.Tensor(size={list(a.shape)}, dtype={dtype})"
            if isinstance(a, enum.Enum):
                cls = type(a)
                name = namespace.create_name(cls.__name__, cls)
                globals_[name] = cls
                return f"{name}.{a.name}"
            if isinstance(a, float) and math.isinf(a):
                return "inf" if a > 0 else "-inf"
            if isinstance(a, type) and a.__module__ == "builtins":
                return a.__name__
            if callable(a):
                return add_global(a)
            return repr(a)

        def fmt_args(args, kwargs) -> str:
            parts = [rep(a) for a in args] + [f"{k} = {rep(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        # the last user of each node frees it (torch's generated code does the same)
        last_use: dict = {}
        user_last: dict = {}
        for node in reversed(self.nodes):
            for inp in _ordered_inputs(node):
                if inp not in last_use:
                    last_use[inp] = node
                    user_last.setdefault(node, []).append(inp)

        params: list = []
        body: list = []
        wrapped_fns: dict = {}  # fx.wrap'ed functions the code calls (re-registered, as torch)
        for node in self.nodes:
            op, t = node.op, node.target
            if op == "placeholder":
                p = t
                if node.args:
                    p += f" = {rep(node.args[0])}"
                params.append(p)
                if node.name != t.lstrip("*"):
                    body.append(f"{node.name} = {t.lstrip('*')}")
                continue
            if op == "output":
                body.append(f"return {rep(node.args[0])}")
                continue
            if op == "call_method":
                method = _format_target(rep(node.args[0]), t)
                expr = f"{method}({fmt_args(node.args[1:], node.kwargs)})"
            elif op == "call_module":
                expr = f"{_format_target(root_module, t)}({fmt_args(node.args, node.kwargs)})"
            elif op == "get_attr":
                expr = _format_target(root_module, t)
            elif t in _BINARY and len(node.args) == 2 and not node.kwargs:
                expr = f"{rep(node.args[0])} {_BINARY[t]} {rep(node.args[1])}"
            elif t in _UNARY and len(node.args) == 1 and not node.kwargs:
                expr = f"{_UNARY[t]}{rep(node.args[0])}"
            elif t is operator.getitem and len(node.args) == 2 and not node.kwargs:
                expr = f"{rep(node.args[0])}[{rep(node.args[1])}]"
            elif (
                t is builtins.getattr
                and len(node.args) == 2
                and isinstance(node.args[1], str)
                and node.args[1].isidentifier()
            ):
                expr = f"{rep(node.args[0])}.{node.args[1]}"
            else:
                fn_name = add_global(t)
                expr = f"{fn_name}({fmt_args(node.args, node.kwargs)})"
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(fn_name)
            line = f"{node.name} = {expr}"
            dead = list(user_last.get(node, []))
            if not node.users:
                dead.append(node)
            if dead:
                line += ";  " + " = ".join([d.name for d in dead] + ["None"])
            body.append(line)
        if not any(n.op == "output" for n in self.nodes):
            body.append("pass")
        prologue = f"def forward({', '.join([root_module] + params)}):"
        wrap_stmts = ""
        if wrapped_fns:
            wrap_name = "ember.fx._symbolic_trace.wrap"
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        src = f"\n{wrap_stmts}\n\n{prologue}\n" + "".join(f"    {b}\n" for b in body) + "    "
        return PythonCode(src, globals_)


def _resolve(package, qualname: str):
    """The object ``qualname`` (``ember.nn.functional.relu``) names, or None."""
    obj = package
    for atom in qualname.split(".")[1:]:
        obj = getattr(obj, atom, None)
        if obj is None:
            return None
    return obj


def _ordered_inputs(node: Node) -> list:
    found: dict = {}
    map_arg(node.args, lambda n: found.setdefault(n))
    map_arg(node.kwargs, lambda n: found.setdefault(n))
    return list(found)
