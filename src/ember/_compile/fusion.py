"""The kernel code path of ``codegen``: elementwise statements gathered into fused kernels.

``codegen.generate(..., kernels=True)`` writes the forward as lines and ``_Elem``
statements (each op whose declared forward traces into an expression, see ``kernels``),
and the backward twice: the NumPy backward, and ``static_backward``, written for
gradients known to exist, where derivative rules that trace and gradient sums are
``_Elem`` statements too. ``rematerialize`` lets the kernel backward recompute values the
forward computed from the inputs alone instead of saving them; ``fuse`` turns each run of
consecutive statements of one shape into one kernel call.
"""

from __future__ import annotations

import ast
import re

import numpy as np

from ..autograd.engine import _cast
from .capture import Capture, Literal, Op, SlotRef, has_slot
from .kernels import Group, Sym, Untraceable, _Node, leaf, trace

__all__ = ["Elem", "NAME", "Undefined", "fuse", "rematerialize", "static_backward", "trace_forward"]

# The generated code's array variables: values (v), saved extras (x), fake nodes (n),
# gradients (g, g_k), incoming gradients (h), rule results (t), node results (r).
NAME = re.compile(r"\b(?:v\d+|x\d+_\d+|n\d+|g\d+(?:_\d+)?|h\d+|t\d+_\d+|r\d+)\b")


class Undefined(Exception):
    """A rule returned no gradient where the kernel backward expected one."""


def _rebuild(node, leaf_for):
    """``node`` with each leaf replaced by ``leaf_for(leaf)`` (None: give up), sharing
    unchanged subtrees; iterative, for deep expressions."""
    done: dict = {}
    stack = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if not isinstance(n, _Node) or id(n) in done:
            continue
        if n.tmpl is None:
            done[id(n)] = leaf_for(n)
            if done[id(n)] is None:
                return None
        elif not ready:
            stack.append((n, True))
            stack.extend((a, False) for a in n.args)
        else:
            args = tuple(done[id(a)] if isinstance(a, _Node) else a for a in n.args)
            same = all(x is y for x, y in zip(args, n.args))
            done[id(n)] = n if same else _Node(n.tmpl, args, n.dtype, n.shape)
    return done[id(node)]


# At most this many operations are recomputed for one saved value (a bound: shared
# subexpressions count once per use), so kernels stay small and quick to build.
REMAT_MAX_OPS = 64


def rematerialize(fwd: list, static: list, saved_names: list, params_in: list):
    """Saved values that forward kernels computed from the inputs alone, and that only
    backward kernels read, are recomputed there from the (saved) inputs instead of stored:
    less memory between forward and backward and fewer arrays written (``tanh(x*w+b)``
    costs less to recompute than to write and read back). Returns ``{name: expression}``,
    the kernel backward with the expressions substituted, and the names still saved."""
    inputs = set(params_in)
    expanded: dict = {}
    ops: dict = dict.fromkeys(inputs, 0)  # an upper bound of each expansion's operations
    for it in fwd:
        if not isinstance(it, Elem) or not it.reads <= ops.keys():
            continue
        cost = _count_ops(it.node) + sum(ops[n] for n in it.reads)
        if cost <= REMAT_MAX_OPS:
            ops[it.target] = cost
            expanded[it.target] = _rebuild(
                it.node, lambda n: n if n.name in inputs else expanded[n.name]
            )
    opaque: set = set()
    for it in static:
        if not isinstance(it, Elem) and not it.endswith("= saved"):  # (not the unpacking)
            opaque.update(NAME.findall(it.split("#")[0]))
    read = set().union(*(it.reads for it in static if isinstance(it, Elem)))
    remat = {n: expanded[n] for n in saved_names if n in expanded and n in read - opaque}
    if not remat:
        return {}, static, saved_names
    static = [
        Elem(it.target, _rebuild(it.node, lambda n: remat.get(n.name, n)), it.label)
        if isinstance(it, Elem) and it.reads & remat.keys()
        else it
        for it in static
    ]
    kept = [n for n in saved_names if n not in remat]
    for node in remat.values():
        for name in sorted(Elem("", node, "").reads):
            if name not in kept:
                kept.append(name)
    return remat, static, kept


def _count_ops(node) -> int:
    """The operations of one statement's own expression (its leaves not expanded)."""
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, _Node) and n.tmpl not in (None, "const") and id(n) not in seen:
            seen.add(id(n))
            stack.extend(n.args)
    return len(seen)


def _grad_in(g, shape: tuple, dtype):
    """An output's incoming gradient for the kernel backward (it exists: see dispatch)."""
    if type(g) is not np.ndarray:
        g = np.asarray(g)
    return g if g.dtype == dtype else _cast(g, dtype)


class Elem:
    """A statement ``target = node`` of the kernel code path: an elementwise expression
    that ``_fuse`` gathers with its neighbours into one kernel."""

    __slots__ = ("target", "node", "shape", "reads", "label")

    def __init__(self, target: str, node, label: str) -> None:
        self.target, self.node, self.shape, self.label = target, node, node.shape, label
        self.reads: set = set()
        stack, seen = [node], set()
        while stack:
            n = stack.pop()
            if not hasattr(n, "tmpl") or id(n) in seen:
                continue
            seen.add(id(n))
            if n.tmpl is None:
                self.reads.add(n.name)
            stack.extend(n.args)


def trace_forward(op: Op, j: int, cap: Capture, meta: dict):
    """The op's declared forward traced into expressions (``Elem`` per output and saved
    value), or None when it is not elementwise in the kernels' sense."""
    cls = op.cls
    if cls._variadic or cls._multi_output:
        return None
    args: list = []
    try:
        for a, dt in zip(op.args, op.casts or (None,) * len(op.args)):
            if isinstance(a, SlotRef):
                arg = leaf(f"v{a.k}", *meta[f"v{a.k}"])
                args.append(arg if dt is None else arg.astype(dt))
            elif isinstance(a, Literal):
                args.append(a.value)
            else:
                return None
    except Untraceable:
        return None
    for p in op.params:
        if has_slot(p):
            return None
        args.append(p.value if isinstance(p, Literal) else p)
    res = trace(cls.forward, tuple(args))
    results = (res,) if not op.n_saves else res
    if type(results) is not tuple or len(results) != 1 + op.n_saves:
        return None
    if not all(isinstance(r, Sym) and r.node.tmpl is not None for r in results):
        return None
    shape, dtype = meta[f"v{op.outs[0]}"]
    if results[0].shape != shape or results[0].dtype != dtype:
        return None
    if any(r.shape != shape for r in results):
        return None
    names = [f"v{op.outs[0]}"] + [f"x{j}_{i}" for i in range(op.n_saves)]
    for name, r in zip(names[1:], results[1:]):
        meta[name] = (r.shape, r.dtype)
    return [Elem(name, r.node, cls.__name__) for name, r in zip(names, results)]


def _trace_rule(fn, gin: str, exprs: list, meta: dict, env: dict):
    """A derivative rule traced on its operands (the generated code's sources ``exprs``),
    or None."""
    try:
        args = [leaf(gin, *meta[gin])]
        for e in exprs:
            if e in meta:
                args.append(leaf(e, *meta[e]))
            elif e in env:
                v = env[e]
                if isinstance(v, np.ndarray) and v.size != 1:
                    return None
                args.append(v)
            else:
                args.append(ast.literal_eval(e))  # a literal operand: 1.0, None...
    except (Untraceable, ValueError, SyntaxError, KeyError):
        return None
    res = trace(fn, tuple(args))
    return res if isinstance(res, Sym) else None


def static_backward(cap, out_slots, grad_of, grad_slots, bwd_ops, saved_names, meta, env):
    """The backward for the kernel code: every output's gradient exists (the dispatcher
    checks), so which gradients flow is known here, and elementwise rules and gradient sums
    become ``Elem`` statements that ``_fuse`` gathers into kernels. A rule that returns
    None raises ``Undefined`` (the dispatcher then runs the NumPy backward)."""
    env["_grad_in"] = _grad_in
    items: list = ["def _backward_kernels(grads, saved):"]
    if saved_names:  # taken out of the list: each array is freed after its last use
        items.append(f"    {''.join(n + ', ' for n in saved_names)}= saved")
        items.append("    saved.clear()")
    cur: dict = {}  # value slot -> the variable holding its gradient so far
    count = [0]
    dtypes: dict = {}

    def dname(dtype) -> str:
        if dtype not in dtypes:
            dtypes[dtype] = f"D{len(dtypes)}"
            env[dtypes[dtype]] = dtype
        return dtypes[dtype]

    def accumulate(k: int, contribution, label: str = "") -> None:
        """Add a gradient (a Sym, or a variable name) into slot ``k``'s."""
        shape, dtype = meta[f"v{k}"]
        if k not in cur and isinstance(contribution, str):
            cur[k] = contribution
            return
        count[0] += 1
        name = f"g{k}_{count[0]}"
        meta[name] = (shape, dtype)
        total = contribution
        if k in cur:
            total = None
            try:
                prev = leaf(cur[k], shape, dtype)
                other = contribution
                if isinstance(other, str):
                    other = leaf(other, shape, dtype)
                total = trace(lambda a, b: a + b, (prev, other))
            except Untraceable:
                pass
            if total is None or total.shape != shape or total.dtype != dtype:
                if not isinstance(contribution, str):  # cannot happen: both are leaves
                    raise Untraceable("a gradient sum")
                items.append(f"    {name} = {cur[k]} + {contribution}")
                cur[k] = name
                return
        items.append(Elem(name, total.node, label + (" + sum" if k in cur else "")))
        cur[k] = name

    for i, k in enumerate(out_slots):
        if k in grad_of and cap.values[k]._rg:
            shape, dtype = meta[f"v{k}"]
            name = f"h{i}"
            meta[name] = (shape, dtype)
            items.append(f"    {name} = _grad_in(grads[{i}], {shape!r}, {dname(dtype)})")
            accumulate(k, name)
    for j, op, node, slot_exprs in reversed(bwd_ops):
        if not any(o in cur for o in op.outs):
            continue  # no gradient reaches this op
        if op.cls._multi_output:
            gin = "[" + ", ".join(cur.get(o, "None") for o in op.outs) + "]"
        else:
            gin = cur[op.outs[0]]
        args = op.args[0] if op.cls._variadic else op.args
        multi_in = len(args) > 1 or op.cls._variadic
        if node is None:
            direct = {i: (call, fn, exprs) for i, call, _, fn, exprs in slot_exprs}
        else:
            call = f"{node}.backward({gin}{''.join(', ' + s for s in slot_exprs)})"
            items.append(f"    r{j} = {call}  # {op.cls.__name__}")
            if multi_in:
                items.append(f"    if type(r{j}) is not tuple: r{j} = (r{j},)")
        for i, (a, e) in enumerate(zip(args, op.edges)):
            if not (e and isinstance(a, SlotRef) and a.k in grad_of):
                continue
            shape, dtype = meta[f"v{a.k}"]
            if node is None:
                if i not in direct:
                    continue
                call, fn, exprs = direct[i]
                sym = None
                if not op.cls._multi_output:
                    sym = _trace_rule(fn, gin, exprs, meta, env)
                if sym is not None and sym.node.tmpl is None:  # the gradient itself
                    if sym.shape == shape and sym.dtype == dtype:
                        accumulate(a.k, sym.node.name)
                        continue
                elif sym is not None and sym.shape == shape:
                    try:
                        if sym.dtype != dtype:
                            sym = sym.astype(dtype)
                        accumulate(a.k, sym, f"{op.cls.__name__}.{op.cls._inputs[i]}")
                        continue
                    except Untraceable:
                        pass
                src = call.replace("GRAD", gin) + f"  # {op.cls.__name__}: {op.cls._inputs[i]}"
            else:
                src = f"r{j}[{i}]" if multi_in else f"r{j}"
            t = f"t{j}_{i}"
            d = dname(dtype)
            items.append(f"    {t} = {src}")
            items.append(f"    if {t} is None: raise _Undefined")
            items.append(f"    if {t}.shape != {shape!r}: {t} = sum_to_shape({t}, {shape!r})")
            if not shape:
                items.append(f"    if type({t}) is not np.ndarray: {t} = np.asarray({t})")
            items.append(f"    if {t}.dtype != {d}: {t} = _cast({t}, {d})")
            meta[t] = (shape, dtype)
            accumulate(a.k, t)
    items.append(f"    return ({''.join(cur.get(k, 'None') + ', ' for k in grad_slots)})")
    return items


# Statements per kernel at most: gcc's time grows faster than a function's length (a
# 1000-op chain in one loop takes 4 s to build, in chunks of 32 about 0.7 s).
KERNEL_MAX_STATEMENTS = 32


def fuse(items: list, functions: dict, parallel: bool = True) -> list:
    """Lines of code: each run of consecutive ``Elem`` statements of one element count
    becomes one kernel call (its C source added to ``functions``) returning the values
    that later statements read; the rest of the run stays inside the kernel. Long loops
    are split over the cores only when ``parallel`` (see ``codegen._serial``)."""
    last: dict = {}
    for idx, it in enumerate(items):
        names = it.reads if isinstance(it, Elem) else NAME.findall(it.split("#")[0])
        for name in names:
            last[name] = idx
    out: list = []
    i = 0
    while i < len(items):
        it = items[i]
        if not isinstance(it, Elem):
            out.append(it)
            i += 1
            continue
        j = i
        while (
            j < len(items)
            and isinstance(items[j], Elem)
            and items[j].shape == it.shape
            and j - i < KERNEL_MAX_STATEMENTS
        ):
            j += 1
        group = Group(it.shape)
        group.members = [(m.target, m.node) for m in items[i:j]]
        group.outputs = [m.target for m in items[i:j] if last.get(m.target, -1) >= j]
        if group.outputs:
            fname = f"k{len(functions)}"
            functions[fname] = group.source(fname, parallel)
            lhs = ", ".join(group.outputs)
            call = f"_{fname}({', '.join(group.inputs)})"
            labels = [m.label for m in items[i:j] if m.label]
            what = ", ".join(labels[:4])
            if len(labels) > 4:
                what += f" and {len(labels) - 4} more"
            out.append(f"    {lhs} = {call}  # fused: {what}")
        i = j
    return out
