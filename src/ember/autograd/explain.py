"""Explain a backward pass step by step: each node, its rule, and the gradients it moves.

``explain(out)`` walks the graph behind ``out`` in the order ``out.backward()`` would run
it and prints, for every node, the gradient it receives, its local rule as declared (the
``vjp`` of its ``defop`` declaration, e.g. ``grad_self = grad * other.conj()``), the gradient it
sends to each input, and finally what each leaf's ``.grad`` would receive. It replays the
rules on the saved values and changes nothing: no ``.grad`` is written, no hook runs, and
the graph is kept (so ``out.backward()`` still works afterwards).

Example (the tutorial's ``out = mean(3 (x + 2)^2)``, where each ``d out / d x`` is 4.5):
    >>> import ember as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = ((x + 2) * (x + 2) * 3).mean()
    >>> from ember.autograd.explain import explain
    >>> explain(out, inputs={"x": x})  # doctest: +ELLIPSIS
    backward of tensor(27., grad_fn=<MeanBackward0>)
    ...
    x.grad += tensor([[4.5000, 4.5000],
                      [4.5000, 4.5000]])
    >>> x.grad is None
    True
"""

from __future__ import annotations

import linecache
import re
import sys

import numpy as np

from .._tensor import Tensor
from .engine import _call_node, _dependencies, _fit
from .graph import AccumulateGrad, GraphRoot, edge_of, init_node

__all__ = ["explain", "rule_text"]

_INDENT = "    "


def explain(output, inputs=None, grad_output=None, file=None) -> None:
    """Print the backward pass of ``output``, node by node, without running it.

    Args:
        output: the tensor whose backward pass to explain.
        inputs: names for leaf tensors: ``{name: tensor}`` (e.g.
            ``dict(model.named_parameters())``) or a sequence of tensors (named
            ``input0``, ``input1``, ...). Unnamed leaves are named by their shape.
        grad_output: the gradient ``output.backward`` would start from (default: ones
            for a scalar ``output``, as ``backward()``).
        file: where to print (default ``sys.stdout``).

    Raises:
        RuntimeError: ``output`` does not require grad, or its graph was already freed by
            a backward pass (explain before it, or pass ``retain_graph=True`` to it).

    Example:
        >>> import ember as torch
        >>> w = torch.tensor([2.0, 3.0], requires_grad=True)
        >>> from ember.autograd.explain import explain
        >>> explain((w * w).sum(), inputs={"w": w})
        backward of tensor(13., grad_fn=<SumBackward0>)
        start: grad = tensor(1.)
        <BLANKLINE>
        [1] SumBackward0
            grad      = tensor(1.)  (shape [], float32)
            rule      : grad_self = _expand(grad, self_sym_sizes)
            grad_self = tensor([1., 1.]) -> MulBackward0
        [2] MulBackward0
            grad       = tensor([1., 1.])  (shape [2], float32)
            rule       : grad_self = grad * other.conj()
                         grad_other = grad * self.conj()
            grad_self  = tensor([2., 3.]) -> w (AccumulateGrad)
            grad_other = tensor([2., 3.]) -> w (AccumulateGrad)
        [3] AccumulateGrad
            w.grad += tensor([4., 6.])
        <BLANKLINE>
        w.grad += tensor([4., 6.])
    """
    out = sys.stdout if file is None else file
    for line in explain_lines(output, inputs, grad_output):
        print(line, file=out)


def explain_lines(output, inputs=None, grad_output=None) -> list:
    """The lines ``explain`` prints."""
    if not isinstance(output, Tensor) or not (output._rg or output.grad_fn is not None):
        raise RuntimeError("explain: the output does not require grad and has no grad_fn")
    names = _leaf_names(inputs)
    if grad_output is None:
        if output._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        g0 = np.ones(output._data.shape, output._data.dtype)
    else:
        g0 = np.array(grad_output._data if isinstance(grad_output, Tensor) else grad_output)
    root = init_node(GraphRoot.__new__(GraphRoot), (edge_of(output),), ())
    deps = _dependencies(root)
    lines = [f"backward of {_show(output._data, output)}", f"start: grad = {_show(g0)}", ""]
    leaf_totals: dict = {}  # AccumulateGrad node -> (name, total gradient)
    buffers: dict = {}
    ready = [(root, [g0])]
    step = 0
    with np.errstate(all="ignore"):
        # The engine's schedule (engine._execute): LIFO, a node once all its consumers ran.
        while ready:
            node, grads = ready.pop()
            if node is root:
                results = tuple(grads)
            else:
                step += 1
                results = _explain_node(node, grads, step, names, lines, leaf_totals)
            edges = node.next_functions
            results = (tuple(results) + (None,) * len(edges))[: len(edges)]
            for (nxt, nr), g in zip(reversed(edges), reversed(results)):
                if nxt is None:
                    continue
                deps[nxt] -= 1
                if g is not None:
                    shape, dt = nxt._meta[nr]
                    g = _fit(g, shape, dt, False)
                    buf = buffers.setdefault(nxt, [None] * len(nxt._meta))
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                if deps[nxt] == 0:
                    buf = buffers.pop(nxt, None)
                    ready.append((nxt, buf if buf is not None else [None] * len(nxt._meta)))
    lines.append("")
    for name, total in leaf_totals.values():
        lines.extend(_labelled(f"{name}.grad += ", _show(total)))
    return lines


def _explain_node(node, grads, step: int, names: dict, lines: list, leaf_totals: dict):
    """Print one node's step and return the gradients it sends (replaying its backward)."""
    leaf = type(node) is AccumulateGrad
    lines.append(f"[{step}] {'AccumulateGrad' if leaf else node.name()}")
    if leaf:
        name = _leaf_name(node.variable, names)
        g = grads[0]
        if g is not None:
            leaf_totals[node] = (name, g)
            lines.extend(_labelled(f"{_INDENT}{name}.grad += ", _show(g)))
        return ()
    width = max([len("grad"), *(len("grad_" + k) for k in _input_names(node))])
    multi = len(grads) > 1
    for i, g in enumerate(grads):
        label = f"grad[{i}]" if multi else "grad"
        if g is None:
            lines.append(f"{_INDENT}{label.ljust(width)} = None")
            continue
        shape = f"  (shape {list(g.shape)}, {_dtype_name(g)})"
        lines.extend(_labelled(f"{_INDENT}{label.ljust(width)} = ", _show(g), shape))
    rules = rule_lines(node)
    for k, text in enumerate(rules):
        head = f"{_INDENT}{'rule'.ljust(width)} : " if k == 0 else " " * (len(_INDENT) + width + 3)
        lines.append(head + text)
    if all(g is None for g in grads):
        return ()
    results = _call_node(node, grads, False)
    for k, (nxt, nr) in enumerate(node.next_functions):
        r = results[k] if k < len(results) else None
        label = "grad_" + _input_names(node)[k]
        if nxt is None:
            continue
        if r is None:
            lines.append(f"{_INDENT}{label.ljust(width)} = None -> {_dest(nxt, names)}")
            continue
        r = _fit(r._data if isinstance(r, Tensor) else r, *nxt._meta[nr], False)
        lines.extend(_labelled(f"{_INDENT}{label.ljust(width)} = ", _show(r), tail=""))
        lines[-1] += f" -> {_dest(nxt, names)}"
    return results


# -- rules as text -------------------------------------------------------------------------------


def _input_names(node) -> tuple:
    declared = getattr(type(node), "_inputs", None)
    n = len(node.next_functions)
    if declared and not getattr(type(node), "_variadic", False) and len(declared) == n:
        return tuple(declared)
    if n == 1:
        return ("self",)
    return tuple(f"input{i}" for i in range(n))


def rule_lines(node) -> list:
    """The node's local rules as text, one ``grad_<input> = <formula>`` line per input.

    Example:
        >>> import ember as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> from ember.autograd.explain import rule_lines
        >>> rule_lines((x * x).grad_fn)
        ['grad_self = grad * other.conj()', 'grad_other = grad * self.conj()']
    """
    cls = type(node)
    rules = getattr(cls, "_rules", None)
    if rules is None:
        qual = getattr(cls.backward, "__qualname__", cls.__name__ + ".backward")
        return [f"(not a declared op: {qual})"]
    out = []
    for name, rule in rules.items():
        if rule is not None:
            out.append(f"grad_{name} = {rule_text(rule[0])}")
    if not out:
        combined = getattr(cls.backward, "__globals__", {}).get("R")
        if combined is not None:
            grads = ", ".join("grad_" + k for k in cls._inputs)
            out.append(f"{grads} = {rule_text(combined)}")
        else:
            out.append("no gradient for any input")
    return out


def rule_text(fn) -> str:
    """A rule's formula: a lambda's body with its gradient argument named ``grad``, a named
    function's ``formula`` (the rules that run a C loop where one applies say the math they
    compute), or a named function's call (``_spread(grad, self_sym_sizes)``).

    Example:
        >>> from ember.autograd.explain import rule_text
        >>> rule_text(lambda g, other: g * other)
        'grad * other'
    """
    formula = getattr(fn, "formula", None)
    if formula is not None:
        return formula
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{getattr(fn, '__name__', repr(fn))}(grad, ...)"
    args = list(code.co_varnames[: code.co_argcount])
    if fn.__name__ != "<lambda>":
        return f"{fn.__name__}({', '.join(['grad', *args[1:]])})"
    body = _lambda_body(code, args)
    if body is None:
        return f"<lambda>({', '.join(['grad', *args[1:]])})"
    if args and args[0] != "grad":
        body = re.sub(rf"\b{re.escape(args[0])}\b", "grad", body)
    return _conj_as_method(body)


def _conj_as_method(text: str) -> str:
    """``cconj(x)`` (a no-op on real values) written as torch's formulas write it:
    ``x.conj()``, e.g. ``grad * other.conj()``."""
    while (i := text.find("cconj(")) >= 0:
        depth, j = 0, i + len("cconj")
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        inner = text[i + len("cconj(") : j]
        simple = re.fullmatch(r"[\w.]+(\(\))?", inner) is not None
        text = text[:i] + (inner if simple else f"({inner})") + ".conj()" + text[j + 1 :]
    return text


def _lambda_body(code, args: list) -> str | None:
    """The source text of a lambda's body, found from the lines where it is written."""
    lines = [linecache.getline(code.co_filename, code.co_firstlineno + k) for k in range(12)]
    text = "".join(lines)
    head = re.compile(r"lambda\s*" + r"\s*,\s*".join(map(re.escape, args)) + r"\s*:")
    m = head.search(text)
    if m is None:
        return None
    depth = 0
    i = m.end()
    start = i
    quote = None
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c in ",\n" and depth == 0:
            break
        i += 1
    body = " ".join(text[start:i].split())
    return body.replace("( ", "(").replace(" )", ")") or None


# -- printing --------------------------------------------------------------------------------


def _show(arr, tensor=None) -> str:
    """An array as torch prints a tensor (``tensor`` keeps its own repr: grad_fn...)."""
    if tensor is not None:
        return repr(tensor)
    return repr(Tensor._wrap(np.asarray(arr)))


def _labelled(label: str, text: str, tail: str = "") -> list:
    """``label`` + a (possibly multi-line) repr, continuation lines aligned under it."""
    parts = text.split("\n")
    pad = " " * len(label)
    out = [label + parts[0]] + [pad + p for p in parts[1:]]
    out[-1] += tail
    return out


def _dtype_name(arr) -> str:
    return str(np.asarray(arr).dtype)


def _leaf_names(inputs) -> dict:
    if inputs is None:
        return {}
    if isinstance(inputs, dict):
        return {id(t): name for name, t in inputs.items()}
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    return {id(t): f"input{i}" for i, t in enumerate(inputs)}


def _leaf_name(t, names: dict) -> str:
    return names.get(id(t), f"leaf{list(t._data.shape)}")


def _dest(node, names: dict) -> str:
    if type(node) is AccumulateGrad:
        return f"{_leaf_name(node.variable, names)} (AccumulateGrad)"
    return node.name()
