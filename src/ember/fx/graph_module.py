"""``GraphModule``: an ``nn.Module`` whose ``forward`` is generated from a Graph.

Example:
    >>> import ember
    >>> import ember.nn as nn
    >>> import ember.fx
    >>> net = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    >>> gm = ember.fx.symbolic_trace(net)
    >>> x = ember.randn(4, 3)
    >>> bool((gm(x) == net(x)).all())
    True
"""

from __future__ import annotations

import copy
import itertools
import linecache
from typing import Any

from .. import nn
from .._tensor import Tensor
from ..nn.modules.module import intercept_module_calls
from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_counter = itertools.count()


def _copy_attr(from_module: nn.Module, to_module: nn.Module, target: str) -> None:
    """Share ``from_module.<target>`` with ``to_module`` (creating empty parents)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # the whole submodule is already shared
        if t is None:
            t = nn.Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(value: Any, to_module: nn.Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = nn.Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(value, Tensor) and not isinstance(value, nn.Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


def _rebuild(state: dict, class_name: str) -> GraphModule:
    fake = nn.Module()
    fake.__dict__.update(state)
    gm = GraphModule(fake, state["_graph"], class_name)
    gm.meta = state.get("meta", {})
    return gm


class GraphModule(nn.Module):
    """A module built from ``root``'s submodules and parameters (shared, not copied) and
    a Graph; ``forward`` is Python code generated from the graph (see ``code``).

    Example:
        >>> import ember.nn as nn
        >>> import ember.fx
        >>> gm = ember.fx.symbolic_trace(nn.Sequential(nn.ReLU()))
        >>> print(gm.code.strip())
        def forward(self, input):
            input_1 = input
            _0 = getattr(self, "0")(input_1);  input_1 = None
            return _0
    """

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class so recompile() can set forward per instance
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):  # noqa: D101
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(
        self, root: nn.Module | dict, graph: Graph, class_name: str = "GraphModule"
    ) -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            # the real attributes, even when made while a trace runs (a tracer's hook making
            # a GraphModule): reads are not recorded here
            with intercept_module_calls(None):
                for node in graph.nodes:
                    if node.op in ("get_attr", "call_module"):
                        _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(
                            "Node "
                            + str(node)
                            + " referenced target "
                            + node.target
                            + " but that target was not provided in ``root``!"
                        )
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self._tracer_cls = graph._tracer_cls
        self.meta: dict = {}
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The Graph; assigning one regenerates ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of the generated ``forward``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``forward`` from ``self.graph`` (call after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        key = f"<eval_with_key>.{next(_counter)}"
        # keep the source reachable so tracebacks through forward show the generated lines
        linecache.cache[key] = (len(self._code), None, self._code.splitlines(True), key)
        globs = dict(python_code.globals)
        exec(compile(self._code, key, "exec"), globs)  # noqa: S102 (the code is generated)
        type(self).forward = globs["forward"]
        return python_code

    def print_readable(
        self,
        print_output: bool = True,
        include_stride: bool = False,
        include_device: bool = False,
        colored: bool = False,
    ) -> str:
        """The module as a class definition with the generated ``forward``; printed too."""
        body = self._code.strip("\n").rstrip()
        lines = [f"class {type(self).__name__}(ember.nn.Module):"]
        lines += ["    " + ln if ln.strip() else ln for ln in body.splitlines()]
        out = "\n".join(lines) + "\n"
        if print_output:
            print(out)
        return out

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code])

    def __deepcopy__(self, memo) -> GraphModule:
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake = nn.Module()
        fake.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, fake, fake.__dict__["_graph"], type(self).__name__)
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __reduce__(self):
        # the per-instance class cannot be pickled by name: rebuild from the state and graph
        state = {k: v for k, v in self.__dict__.items() if k != "_code"}
        return (_rebuild, (state, type(self).__name__))

    def __copy__(self) -> GraphModule:
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def add_submodule(self, target: str, m: nn.Module) -> bool:
        """Install ``m`` at the dotted path ``target`` (creating empty parents)."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = nn.Module()
                setattr(mod, item, sub)
            if not isinstance(sub, nn.Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, nn.Module):
                return False
        if field not in mod._modules:
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no ``call_module`` or ``get_attr`` node reaches."""
        used: set = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
            if node.op == "call_module":
                # a called module runs its children too
                try:
                    called = self.get_submodule(node.target)
                except AttributeError:
                    continue  # not installed yet (subgraph_rewriter copies it in next)
                used.update(f"{node.target}.{n}" for n, _ in called.named_modules() if n)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)
