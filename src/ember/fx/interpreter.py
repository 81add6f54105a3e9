"""Running a graph node by node (``Interpreter``) and rewriting it while doing so
(``Transformer``). Override one method per opcode to change what a node does.

Example:
    >>> import ember
    >>> import ember.fx
    >>> def f(x):
    ...     return ember.sigmoid(x) * 2
    >>> gm = ember.fx.symbolic_trace(f)
    >>> class NegSigmoid(ember.fx.Interpreter):
    ...     def call_function(self, target, args, kwargs):
    ...         if target is ember.sigmoid:
    ...             return ember.neg(*args)
    ...         return super().call_function(target, args, kwargs)
    >>> NegSigmoid(gm).run(ember.tensor([0.0])).tolist()
    [-0.0]
"""

from __future__ import annotations

import inspect
from typing import Any

from .. import nn
from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, Target, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Executes a GraphModule's graph one node at a time: ``run_node`` dispatches to
    ``placeholder``, ``get_attr``, ``call_function``, ``call_method``, ``call_module`` and
    ``output``.

    Example:
        >>> import ember
        >>> import ember.nn as nn
        >>> import ember.fx
        >>> gm = ember.fx.symbolic_trace(nn.Sequential(nn.ReLU()))
        >>> ember.fx.Interpreter(gm).run(ember.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """

    def __init__(
        self, module: nn.Module, garbage_collect_values: bool = True, graph: Graph | None = None
    ) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # free each value after its last use, as the generated code does
            last_use: dict = {}
            self.user_to_last_uses: dict = {}
            for node in reversed(self.graph.nodes):
                for n in node.all_input_nodes:
                    if n not in last_use:
                        last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env: dict | None = None, enable_io_processing: bool = True) -> Any:
        """Run the graph on ``args`` and return its output."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list: list) -> Any:
        """``run`` on a list of arguments, clearing the list."""
        args_iter = list(args_list)
        args_list.clear()
        return self.run(*args_iter)

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its arguments from the environment and dispatch on ``op``."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise AssertionError("fetch_args_kwargs_from_env must return (tuple, dict)")
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per opcode -------------------------------------------------------------

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The next positional input (or the default in ``args``)."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from si

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The module's attribute at the dotted path ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """``args[0].<target>(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """Call the submodule at ``target``."""
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    def output(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """The graph's result."""
        return args[0]

    # -- helpers ---------------------------------------------------------------------------

    def fetch_attr(self, target: str) -> Any:
        """Walk the dotted path ``target`` from the module."""
        atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[: i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple:
        """``n``'s args and kwargs with each Node replaced by its computed value."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """Replace the Nodes in ``args`` by their values."""

        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to "
                    "diagnose such issues"
                )
            return self.env[n_arg]

        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        return True


class Transformer(Interpreter):
    """An Interpreter that runs the graph on Proxies, so each node's override records
    new nodes: ``transform()`` returns the rewritten GraphModule.

    Example:
        >>> import ember
        >>> import ember.fx
        >>> def f(x):
        ...     return ember.add(x, x)
        >>> class AddToMul(ember.fx.Transformer):
        ...     def call_function(self, target, args, kwargs):
        ...         if target is ember.add:
        ...             target = ember.mul
        ...         return super().call_function(target, args, kwargs)
        >>> new = AddToMul(ember.fx.symbolic_trace(f)).transform()
        >>> new(ember.tensor([3.0])).tolist()
        [9.0]
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph (keeping the default value)."""
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: tuple, kwargs: dict) -> Proxy:
        """A get_attr of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """A call_module of the new graph."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Target, args: tuple, kwargs: dict) -> Any:
        """A call_function of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the graph on Proxies and return the GraphModule of the recorded graph."""
        self.tracer.submodule_paths = {m: name for name, m in self.module.named_modules()}
        try:
            # ember's functions an override calls on Proxies record nodes by themselves
            # (``__torch_function__``)
            result = super().run(enable_io_processing=False)
            if result is not None:
                self.new_graph.output(
                    map_aggregate(
                        result, lambda a: self.tracer.create_arg(a) if isinstance(a, Proxy) else a
                    )
                )
        finally:
            self.tracer.submodule_paths = None
        return GraphModule(self.module, self.new_graph)
