"""Nodes of an fx ``Graph``: one operation each, linked in program order.

Example:
    >>> import ember.fx
    >>> g = ember.fx.Graph()
    >>> x = g.placeholder("x")
    >>> x.op, x.name, x.target
    ('placeholder', 'x', 'x')
"""

from __future__ import annotations

import builtins
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

from .. import _overrides
from ..overrides import is_tensor_method_or_property

__all__ = ["Argument", "Node", "Target", "map_aggregate", "map_arg"]

Target = Any  # a str (method, module or attribute name) or a callable
Argument = Any  # nested tuples / lists / dicts / slices of Nodes and constants

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")

# Functions whose calls must survive dead-code elimination (they act through side effects).
_SIDE_EFFECTFUL: set = set()


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """Apply ``fn`` to every leaf of ``a`` (tuples, lists, dicts and slices are traversed).

    Example:
        >>> from ember.fx.node import map_aggregate
        >>> map_aggregate((1, [2, {"k": 3}]), lambda v: v * 10)
        (10, [20, {'k': 30}])
    """
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        # namedtuples keep their type (torch.return_types and friends)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(
            map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn)
        )
    return fn(a)


def map_arg(a: Argument, fn: Callable[[Node], Argument]) -> Argument:
    """Apply ``fn`` to every Node in the (nested) argument ``a``.

    Example:
        >>> import ember.fx
        >>> from ember.fx.node import map_arg
        >>> g = ember.fx.Graph()
        >>> x = g.placeholder("x")
        >>> map_arg((x, [x, 2]), lambda n: n.name)
        ('x', ['x', 2])
    """
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _format_arg(arg: Any) -> str:
    """torch's rendering of arguments in ``Graph.__str__``: nodes as ``%name``."""
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


def _pretty_print_target(target: Any) -> str:
    if isinstance(target, str):
        return target
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", None)
    if name is not None and module == "builtins":
        return f"builtins.{name}"
    if name is not None and module in ("_operator", "operator"):
        return f"operator.{name}"
    return _qualified_name(target)


# torch's namespaces as ember spells them, in order of preference for a function they share
_NAMESPACE_ORDER = ("torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft")
# (how many of _overrides.NAMESPACES it holds, function -> dotted name): replaced whole, so
# a thread reading it while another rebuilds it sees one table or the other
_public_names: tuple = (0, {})


def _public_name(fn: Any) -> str | None:
    """``ember.relu``, ``ember.nn.functional.gelu``... for ember's public functions (by
    identity), ``ember.Tensor.add`` for Tensor's methods, else None.

    Example:
        >>> import ember
        >>> from ember.fx.node import _public_name
        >>> _public_name(ember.nn.functional.relu), _public_name(ember.Tensor.add)
        ('ember.nn.functional.relu', 'ember.Tensor.add')
    """
    global _public_names
    namespaces = _overrides.NAMESPACES
    if _public_names[0] != len(namespaces):  # a namespace was installed since
        table: dict = {}
        order = {m: i for i, m in enumerate(_NAMESPACE_ORDER)}
        for module, namespace in sorted(namespaces, key=lambda mn: -order.get(mn[0], 99)):
            prefix = "ember" + module[len("torch") :]
            for name, obj in list(namespace.items()):
                if isinstance(obj, types.FunctionType) and not name.startswith("_"):
                    # preferred namespaces come last and win; a function's own name wins
                    # over its aliases within one namespace
                    if obj not in table or name == obj.__name__ or table[obj][1] != module:
                        table[obj] = (f"{prefix}.{name}", module)
        _public_names = (len(namespaces), {f: name for f, (name, _) in table.items()})
    try:
        found = _public_names[1].get(fn)
    except TypeError:  # unhashable callables
        return None
    if found is None and is_tensor_method_or_property(fn):
        found = f"ember.Tensor.{fn.__name__}"
    return found


class _PublicFunction:
    """A pickled reference to one of ember's public functions, by its dotted name."""

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname

    def resolve(self) -> Callable:
        obj = sys.modules[__name__.split(".")[0]]
        for atom in self.qualname.split(".")[1:]:
            obj = getattr(obj, atom)
        return obj


def _wrapped_original(fn: Any) -> Any:
    """The function ``fx.wrap`` wrapped, if ``fn`` is such a wrapper, else None (read from
    the instance dict: a Proxy answers every attribute read)."""
    d = getattr(fn, "__dict__", None)
    return d.get("_fx_wrapped") if isinstance(d, dict) else None


def _qualified_name(fn: Any) -> str:
    """The dotted name generated code uses to reach ``fn``: ``ember.relu``,
    ``ember.nn.functional.gelu``, or ``module.qualname`` for other functions (a function
    registered with ``fx.wrap`` by its original's name)."""
    original = _wrapped_original(fn)
    if original is not None:
        fn = original
    public = _public_name(fn)
    if public is not None:
        return public
    module = getattr(fn, "__module__", None) or ""
    qualname = getattr(fn, "__qualname__", "")
    if module.split(".")[0] == "ember" and "<" not in qualname:
        # ember's internals are reachable from the ``ember`` global of generated code
        return f"{module}.{qualname}"
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return fn.__name__
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return f"operator.{fn.__name__}"
    module = getattr(fn, "__module__", None) or "__main__"
    return f"{module}.{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}"


class Node:
    """One operation of a Graph: ``op`` (placeholder, call_function, call_method,
    call_module, get_attr or output), ``target``, ``args``/``kwargs`` and its ``users``.

    Example:
        >>> import operator
        >>> import ember.fx
        >>> g = ember.fx.Graph()
        >>> x = g.placeholder("x")
        >>> y = g.call_function(operator.add, (x, 1))
        >>> y.format_node()
        '%add : [num_users=0] = call_function[target=operator.add](args = (%x, 1), kwargs = {})'
    """

    def __init__(
        self,
        graph,
        name: str,
        op: str,
        target: Target,
        args: tuple,
        kwargs: dict,
        return_type: Any = None,
    ) -> None:
        if op not in _OPS:
            raise AssertionError(f"Unsupported node op: {op}")
        if op in ("call_method", "call_module", "get_attr", "placeholder", "output"):
            if not isinstance(target, str):
                raise ValueError(
                    f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                    f"{type(target)} but a str is expected for {op}"
                )
        elif op == "call_function" and not callable(target):
            raise ValueError(
                f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                f"{type(target)} but a Callable is expected"
            )
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # -- the linked list ------------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The node after this one (the graph's root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Insert ``x`` before this node (moving it if it is already in the graph)."""
        if self is x:
            raise AssertionError("Cannot prepend a node to itself")
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Insert ``x`` after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        # The node keeps its own pointers so iteration over a graph survives erasing it.
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # -- arguments and uses ---------------------------------------------------------------

    @property
    def args(self) -> tuple:
        """The positional arguments; assigning updates the users of the nodes involved."""
        return self._args

    @args.setter
    def args(self, a) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword arguments; assigning updates the users of the nodes involved."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """The distinct Nodes among ``args`` and ``kwargs``, in order of appearance."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, new_args, new_kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = tuple(map_arg(tuple(new_args), self._note_input))
        self._kwargs = dict(map_arg(dict(new_kwargs), self._note_input))
        for inp in self._input_nodes:
            inp.users.setdefault(self)

    def _note_input(self, n: Node) -> Node:
        if n.graph is not self.graph:
            raise AssertionError(
                f"Argument '{n}' of Node '{self}' was used before it has been defined! "
                "Please check that Nodes in the graph are topologically ordered"
            )
        self._input_nodes.setdefault(n)
        return n

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set ``args[idx]``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Argument) -> None:
        """Insert a positional argument at ``idx``."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set ``kwargs[key]``."""
        self.kwargs = {**self.kwargs, key: arg}

    def replace_all_uses_with(
        self,
        replace_with: Node,
        delete_user_cb: Callable[[Node], bool] = lambda user: True,
        *,
        propagate_meta: bool = False,
    ) -> list:
        """Make every user of this node use ``replace_with`` instead; returns those users.

        Example:
            >>> import operator
            >>> import ember.fx
            >>> g = ember.fx.Graph()
            >>> x = g.placeholder("x")
            >>> a = g.call_function(operator.add, (x, 1))
            >>> out = g.output(a)
            >>> with g.inserting_after(a):
            ...     m = g.call_function(operator.mul, (x, 1))
            >>> a.replace_all_uses_with(m)
            [output]
        """
        if propagate_meta:
            if len(replace_with.meta) != 0:
                raise AssertionError(
                    "Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                    "but replace_with already has .meta keys"
                )
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Replace every occurrence of ``old_input`` in this node's arguments."""

        def swap(n):
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self.args, swap), map_arg(self.kwargs, swap))

    def is_impure(self, impure_random: bool = True) -> bool:
        """True if dead-code elimination must keep this node although nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _SIDE_EFFECTFUL
        if self.op == "call_module":
            owner = self.graph.owning_module
            if owner is not None:
                try:
                    mod = owner.get_submodule(self.target)
                except AttributeError:
                    return False
                return bool(getattr(mod, "_is_impure", False))
        return False

    @property
    def stack_trace(self):
        """Where the node was traced from, when recorded (``meta['stack_trace']``)."""
        return self.meta.get("stack_trace")

    # -- printing -------------------------------------------------------------------------

    def format_node(
        self, placeholder_names: list | None = None, maybe_return_typename: list | None = None
    ) -> str | None:
        """The node as one line of ``Graph.__str__`` (torch's format)."""
        users = f"[num_users={len(self.users)}]"
        if self.op == "placeholder":
            if placeholder_names:
                placeholder_names.append(self.target)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : {users} = placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : {users} = get_attr[target={_pretty_print_target(self.target)}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        return (
            f"%{self.name} : {users} = {self.op}[target={_pretty_print_target(self.target)}]"
            f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})"
        )

    def __repr__(self) -> str:
        return self.name

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if self.op == "call_function":
            public = _public_name(self.target)
            if public is not None:
                # by name: ember's public functions say torch's module (torch.relu), so
                # pickle cannot find them by reference
                state["target"] = _PublicFunction(public)
        return state

    def __setstate__(self, state: dict) -> None:
        target = state.get("target")
        if isinstance(target, _PublicFunction):
            state["target"] = target.resolve()
        self.__dict__.update(state)

    def _rename(self, candidate: str) -> None:
        if candidate == self.name:
            return
        name = self.graph._graph_namespace.create_name(candidate, None)
        self.name = name
        self.graph._graph_namespace._rename_object(self, name)
