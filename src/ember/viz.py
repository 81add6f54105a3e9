"""Draw the autograd graph of a tensor: torchviz's ``make_dot`` for ember.

The picture is torchviz's, attribute for attribute: grey boxes are backward nodes named like
``grad_fn`` (``MulBackward0``), light blue boxes the leaf tensors that will receive ``.grad``
(named from ``params``, with their shape), orange boxes saved tensors (``show_saved``), and
green boxes the outputs (dark green for the base of an output that is a view). Edges point
the way the forward pass ran, from inputs to outputs.

Example:
    >>> import ember as torch
    >>> from ember.viz import make_dot
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = ((x + 2) * (x + 2) * 3).mean()
    >>> dot = make_dot(out, params={"x": x})
    >>> "MeanBackward0" in dot.source and "lightblue" in dot.source
    True
    >>> dot.render("graph", format="png")  # doctest: +SKIP

Needs the ``graphviz`` Python package (``pip install ember[viz]``); rendering an image also
needs Graphviz's ``dot`` program.
"""

from __future__ import annotations

from ._optional import require
from ._tensor import Tensor

__all__ = ["make_dot", "resize_graph"]

# Saved values and parameters of a backward node are its ``_saved_<name>`` attributes.
SAVED_PREFIX = "_saved_"


def _fn_name(fn, show_attrs: bool, max_attr_chars: int) -> str:
    """The node's label: its name, then (``show_attrs``) a table of its saved attributes."""
    name = str(type(fn).__name__)
    if not show_attrs:
        return name
    attrs = {}
    for attr in dir(fn):
        if not attr.startswith(SAVED_PREFIX):
            continue
        val = getattr(fn, attr)
        attr = attr[len(SAVED_PREFIX) :]
        if isinstance(val, Tensor):
            attrs[attr] = "[saved tensor]"
        elif isinstance(val, tuple) and any(isinstance(t, Tensor) for t in val):
            attrs[attr] = "[saved tensors]"
        else:
            attrs[attr] = str(val)
    if not attrs:
        return name
    max_attr_chars = max(max_attr_chars, 3)
    col1width = max(len(k) for k in attrs)
    col2width = min(max(len(str(v)) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1width + col2width + 2, len(name))
    attrstr = "%-" + str(col1width) + "s: %" + str(col2width) + "s"

    def truncate(s):
        return s[: col2width - 3] + "..." if len(s) > col2width else s

    params = "\n".join(attrstr % (k, truncate(str(v))) for (k, v) in attrs.items())
    return name + "\n" + sep + "\n" + params


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The Graphviz picture of the autograd graph that produced ``var`` (torchviz's API).

    Args:
        var: the output tensor, or a tuple of output tensors.
        params: ``{name: tensor}`` naming the leaf tensors that require grad (for example
            ``dict(model.named_parameters())``).
        show_attrs: also list each backward node's non-tensor saved attributes.
        show_saved: also draw the tensors each backward node saved (orange).
        max_attr_chars: with ``show_attrs``, the widest an attribute value is printed.

    Returns:
        a ``graphviz.Digraph``: ``.source`` is the DOT text, ``.render(...)`` draws it.

    Example:
        >>> import ember as torch
        >>> from ember.viz import make_dot
        >>> w = torch.ones(3, requires_grad=True)
        >>> dot = make_dot((w * 2).sum(), params={"w": w})
        >>> 'label="w\\n (3)" fillcolor=lightblue' in dot.source
        True
    """
    # Deferred: graphviz is an optional dependency (the viz extra), needed only to draw.
    Digraph = require("graphviz", "ember.viz.make_dot").Digraph

    if params is not None:
        if not all(isinstance(p, Tensor) for p in params.values()):
            raise TypeError("make_dot: every value of params must be a Tensor")
        param_map = {id(v): k for k, v in params.items()}
    else:
        param_map = {}

    node_attr = dict(
        style="filled",
        shape="box",
        align="left",
        fontsize="10",
        ranksep="0.1",
        height="0.2",
        fontname="monospace",
    )
    dot = Digraph(node_attr=node_attr, graph_attr=dict(size="12,12"))
    seen: set = set()  # ids of the nodes and tensors already drawn
    keep: list = []  # what ``seen`` refers to, alive until the drawing is done

    def see(obj) -> None:
        seen.add(id(obj))
        keep.append(obj)

    def size_to_str(size) -> str:
        return "(" + (", ").join([str(int(v)) for v in size]) + ")"

    def get_var_name(v, name=None) -> str:
        if not name:
            name = param_map[id(v)] if id(v) in param_map else ""
        return f"{name}\n {size_to_str(v.size())}"

    def enter(fn) -> bool:
        """Draw ``fn`` (and its leaf, saved values); False if it was drawn already."""
        if id(fn) in seen:
            return False
        see(fn)
        if show_saved:
            for attr in dir(fn):
                if not attr.startswith(SAVED_PREFIX):
                    continue
                val = getattr(fn, attr)
                see(val)
                attr = attr[len(SAVED_PREFIX) :]
                if isinstance(val, Tensor):
                    dot.edge(str(id(fn)), str(id(val)), dir="none")
                    dot.node(str(id(val)), get_var_name(val, attr), fillcolor="orange")
                if isinstance(val, tuple):
                    for i, t in enumerate(val):
                        if isinstance(t, Tensor):
                            name = f"{attr}[{i}]"
                            dot.edge(str(id(fn)), str(id(t)), dir="none")
                            dot.node(str(id(t)), get_var_name(t, name), fillcolor="orange")
        if hasattr(fn, "variable"):  # AccumulateGrad: draw the leaf it accumulates into
            leaf = fn.variable
            see(leaf)
            dot.node(str(id(leaf)), get_var_name(leaf), fillcolor="lightblue")
            dot.edge(str(id(leaf)), str(id(fn)))
        dot.node(str(id(fn)), _fn_name(fn, show_attrs, max_attr_chars))
        return True

    def leave(fn) -> None:
        # Custom Functions keep what they saved for backward in ``saved_tensors``.
        for t in getattr(fn, "saved_tensors", None) or ():
            see(t)
            dot.edge(str(id(t)), str(id(fn)), dir="none")
            dot.node(str(id(t)), get_var_name(t), fillcolor="orange")

    def add_nodes(fn) -> None:
        # torchviz's recursive walk (each input's edge, then that input's subgraph), kept
        # on an explicit stack so that deep graphs do not hit the recursion limit.
        if not enter(fn):
            return
        stack = [(fn, iter(getattr(fn, "next_functions", ())))]
        while stack:
            fn, inputs = stack[-1]
            for u, _ in inputs:
                if u is not None:
                    dot.edge(str(id(u)), str(id(fn)))
                    if enter(u):
                        stack.append((u, iter(getattr(u, "next_functions", ()))))
                        break
            else:
                stack.pop()
                leave(fn)

    def add_base_tensor(v, color="darkolivegreen1") -> None:
        if id(v) in seen:
            return
        see(v)
        dot.node(str(id(v)), get_var_name(v), fillcolor=color)
        if v.grad_fn is not None:
            add_nodes(v.grad_fn)
            dot.edge(str(id(v.grad_fn)), str(id(v)))
        base = v._base
        if base is not None:
            add_base_tensor(base, color="darkolivegreen3")
            dot.edge(str(id(base)), str(id(v)), style="dotted")

    if isinstance(var, tuple):
        for v in var:
            add_base_tensor(v)
    else:
        add_base_tensor(var)
    resize_graph(dot)
    return dot


def resize_graph(dot, size_per_element=0.15, min_size=12) -> None:
    """Grow ``dot``'s drawing size with the number of its statements (in place): the
    ``size`` attribute becomes ``size_per_element`` inches per statement, at least
    ``min_size``.

    Example:
        >>> import ember
        >>> from ember.viz import make_dot, resize_graph
        >>> dot = make_dot((ember.ones(2, requires_grad=True) * 2).sum())
        >>> resize_graph(dot)
        >>> dot.graph_attr["size"]
        '12,12'
    """
    num_rows = len(dot.body)
    content_size = num_rows * size_per_element
    size = max(min_size, content_size)
    size_str = str(size) + "," + str(size)
    dot.graph_attr.update(size=size_str)
