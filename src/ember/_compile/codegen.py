"""Code generation: a captured op list becomes two plain Python functions of arrays.

``forward(a0, a1, ...)`` calls each declaration's ``forward`` in order on arrays (no
Tensors, no nodes, no saved-value bookkeeping) and returns the outputs and what backward
reads. ``backward(grads, saved...)`` runs the declarations' backward rules in reverse
order, reduces broadcast gradients and casts them as the engine does, and returns one
gradient per input that requires grad. Only what backward reads is kept from forward.

The functions are generated as source (``CompiledGraph.code``) so they can be read, and
every value is a local variable: the interpreter's fastest storage. Results nobody reads
are not computed. With ``kernels``, elementwise runs become fused C kernels (``fusion``).
"""

from __future__ import annotations

import numpy as np

from .._aten import elementwise as _elementwise
from .._aten import linalg as _linalg
from .._aten import nn_norm as _norm
from .._tensor import Tensor
from ..autograd.engine import _cast
from ..autograd.graph import sum_to_shape
from .capture import (
    CallOp,
    Capture,
    CheckOp,
    Literal,
    Op,
    SideEffectOp,
    SlotRef,
    ViewOf,
    has_slot,
    view_of,
)
from .fusion import NAME, Elem, Undefined, fuse, rematerialize, static_backward, trace_forward
from .kernels import available as _kernels_unavailable
from .kernels import build
from .lowerings import LoweredNode, batch_norm_relu_grad, batch_norm_relu_train, lowered

__all__ = ["CompiledGraph", "generate"]

_new = object.__new__


class CompiledGraph:
    """The generated functions of one capture, and what the caller needs to run them."""

    def __init__(self) -> None:
        self.forward = None
        self.backward = None
        self.code = ""
        self.arg_positions: list = []  # which of the call's tensors forward takes (no repeats)
        self.attrs: list = []  # tensors read at every call (parameters, buffers, closures)
        self.grad_inputs: list = []  # positions (in inputs + attrs) that get a gradient
        self.out_slots: list = []
        self.out_rg: list = []  # per output: requires grad
        self.out_meta: list = []  # per output: (shape, dtype)
        self.out_alias: list = []  # per output: index of the input/attr it is, or None
        self.n_ops = 0
        self.kernels = 0  # fused C kernels the code calls
        self.kernel_code = ""  # their C source
        self.lowered: list = []  # ops run by hand-written C loops (``lowerings``)
        self.saved_inputs: list = []  # positions of the inputs backward reads
        self.backward_numpy = None


def _fake_node(op: Op, params):
    """A node of the op's class holding what its backward reads besides saved values."""
    node = _new(op.cls)
    node.next_functions = tuple((True, 0) if e else (None, 0) for e in op.edges)
    node._params = params
    node._meta = op.meta
    node._hooks = None
    node._saved = node._versions = ()
    return node


def _direct_rules(op: Op, j: int, expr, env: dict, grad_of: set, lowered_ops, parallel=True):
    """Per input that takes a gradient, the call of its declared rule (``GRAD`` standing for
    the incoming gradient) and the values it reads; None when the op has one combined rule
    or variadic operands (its node's backward is called instead)."""
    cls = op.cls
    if cls._variadic:
        return None
    rules = [cls._rules[k] for k in cls._inputs]
    if all(r is None for r in rules):
        return None
    out = []
    for i, (rule, a, e) in enumerate(zip(rules, op.args, op.edges)):
        if rule is None or not (e and isinstance(a, SlotRef) and a.k in grad_of):
            continue
        fn, names = rule
        if lowered_ops is not None:
            fn = _lower(cls, cls._inputs[i], fn, lowered_ops, parallel)
        exprs, reads = [], []
        for name in names:
            if name in cls._inputs:
                value = op.args[cls._inputs.index(name)]
                e_ = expr(value)
                if isinstance(value, SlotRef):
                    reads.append(e_)
            elif name in cls._outputs:
                e_ = f"v{op.outs[cls._outputs.index(name)]}"
                reads.append(e_)
            elif name in cls._saves:
                e_ = f"x{j}_{cls._saves.index(name)}"
                reads.append(e_)
            elif name in cls._param_names:
                value = op.params[cls._param_names.index(name)]
                e_ = expr(value)
                reads += [f"v{k}" for k in _slot_refs(value)]
            else:  # needs_input_grad
                e_ = repr(tuple(bool(x) for x in op.edges))
            exprs.append(e_)
        rname = f"R{j}_{i}"
        out.append((i, f"{rname}(GRAD{''.join(', ' + x for x in exprs)})", reads, fn, exprs))
        env[rname] = fn
    return out


def _lower(cls, part: str, fn, lowered_ops: set, parallel: bool = True):
    """``fn``, or its hand-written C version (then ``cls`` is noted in ``lowered_ops``)."""
    low = lowered(cls, part, fn, parallel)
    if low is not fn:
        lowered_ops.add(cls.__name__)
    return low


# Ops whose code spends its time in BLAS (matrix products, convolutions, recurrent layers,
# attention, factorizations). A graph with one runs its C loops on one core: OpenMP's threads
# and OpenBLAS's, each spinning a while after its own work, took turns on a small machine
# (the W10 conv step took 1.5-2x longer with its ReLU and pooling loops split over two cores).
_BLAS_OPS = frozenset(
    """MmBackward0 MvBackward0 BmmBackward0 DotBackward0 VdotBackward0 AddmmBackward0
    AddmvBackward0 AddbmmBackward0 BaddbmmBackward0 AddrBackward0 ConvolutionBackward0
    ScaledDotProductFlashAttentionForCpuBackward0 LstmLayerBackward0 GruLayerBackward0
    TrilinearBackward0 CdistBackward0 EuclideanDistBackward0 CholeskyBackward0
    CholeskyInverseBackward0 CholeskySolveBackward0 TriangularSolveBackward0""".split()
)


def _serial(cap: Capture) -> bool:
    """Should the graph's C loops run on one core (it calls BLAS: ``_BLAS_OPS``)?"""
    for op in cap.ops:
        cls = getattr(op, "cls", None)
        name = getattr(cls, "__name__", "")
        if name in _BLAS_OPS or name.startswith("Linalg"):
            return True
    return False


class _Norm:
    """A BatchNorm in training of the graph: the update of its running statistics (the
    index of the side effect, which reads the variance it computed) and the ReLU applied to
    its result alone (the index of that op; kernel code only), or None."""

    __slots__ = ("update", "relu")

    def __init__(self) -> None:
        self.update = self.relu = None


def _batch_norms(cap: Capture, out_slots: list, fuse_relu: bool) -> dict:
    """``{op index: _Norm}``: the BatchNorms in training whose running statistics are
    updated (eagerly that update reuses the batch's mean and variance: so does the
    generated code, instead of computing them again) or, with ``fuse_relu``, whose result
    only a ReLU reads (computed together: ``lowerings.batch_norm_relu_train``)."""
    norms: dict = {}
    for j, op in enumerate(cap.ops):
        if (
            type(op) is Op
            and op.cls is _norm.NativeBatchNormBackward0
            and _value(op.params[0]) is True  # training
            and isinstance(op.args[0], SlotRef)
        ):
            norms[j] = _Norm()
    for s, op in enumerate(cap.ops):
        if type(op) is SideEffectOp and op.fn is _norm._update_running:
            x = op.args[0]
            for j in sorted(norms, reverse=True):  # the latest BatchNorm of that input
                if j < s and isinstance(x, SlotRef) and cap.ops[j].args[0].k == x.k:
                    if norms[j].update is None:
                        norms[j].update = s
                    break
    if fuse_relu and norms:
        reads: dict = {}
        for op in cap.ops:
            for k in _reads(op):
                reads[k] = reads.get(k, 0) + 1
        by_out = {cap.ops[j].outs[0]: j for j in norms}
        for k, op in enumerate(cap.ops):
            if (
                type(op) is Op
                and op.cls is _elementwise.ReluBackward0
                and not op.params
                and not any(op.casts or ())
                and isinstance(op.args[0], SlotRef)
                and op.args[0].k in by_out
                and reads.get(op.args[0].k) == 1
                and op.args[0].k not in out_slots
                and not any(cap.ops[by_out[op.args[0].k]].casts or ())
            ):
                norms[by_out[op.args[0].k]].relu = k
    return {j: p for j, p in norms.items() if p.update is not None or p.relu is not None}


def _value(param):
    """A parameter's Python value (a ``Literal``'s)."""
    return param.value if isinstance(param, Literal) else param


def _reads(op) -> list:
    """The value slots an op of the capture reads (operands, parameters, arguments)."""
    if type(op) is Op:
        found = list(_slot_refs(_operands(op))) if op.cls is not None else []
        return found + list(_slot_refs(list(op.args) if op.cls is None else list(op.params)))
    return list(_slot_refs(list(op.args) + list(getattr(op, "kwargs", {}).values())))


_BN_RELU = "NativeBatchNormBackward0 + ReluBackward0"


def _bn_relu_forward(relu, parallel: bool):
    """The forward of a BatchNorm (training) and its ReLU (``relu``: the op's forward):
    ``(relu result, mean, 1 / std, biased variance)``."""

    def forward(x, w, b, training, eps, running_mean, running_var):
        return batch_norm_relu_train(relu, x, w, b, eps, parallel)

    return forward


class _FusedDecl:
    """What the backward generators read of a declaration, for a fused pair of ops."""

    _multi_output = _variadic = False

    def __init__(self, name: str, inputs: tuple) -> None:
        self.__name__, self._inputs = name, inputs


class _FusedOp:
    """A BatchNorm and its ReLU as one op of the backward: the ReLU's result (its output),
    the BatchNorm's operands."""

    __slots__ = ("cls", "args", "edges", "outs")

    def __init__(self, norm: Op, relu: Op) -> None:
        self.cls = _FusedDecl(_BN_RELU, norm.cls._inputs)
        self.args, self.edges, self.outs = norm.args, norm.edges, relu.outs


def _bn_relu_backward(j: int, op: Op, relu: Op, expr, env: dict, keep, parallel: bool):
    """The backward entry (``bwd_ops``) of BatchNorm ``op`` (the ``j``-th) and its ReLU:
    one node whose backward is ``lowerings.batch_norm_relu_grad``, reading the ReLU's
    result, the BatchNorm's operands and its saved statistics."""
    rule = relu.cls._rules[relu.cls._inputs[0]][0]
    needs = tuple(bool(e) for e in op.edges)

    def backward(node, gy, y, x, w, b, mean, invstd):
        return batch_norm_relu_grad(rule, needs, gy, y, x, w, b, mean, invstd, parallel)

    node = f"N{j}"
    env[node] = LoweredNode(_fake_node(op, ()), backward)
    slots = [f"v{relu.outs[0]}", *(expr(a) for a in op.args), f"x{j}_0", f"x{j}_1"]
    for name in slots:
        if NAME.fullmatch(name):
            keep(name)
    return (j, _FusedOp(op, relu), node, slots)


def _slot_needed(op: Op, name: str) -> bool:
    """Does a rule of an input that takes a gradient read saved slot ``name``?"""
    cls = op.cls
    if name in cls._saves or cls.composite is not None:
        return True
    rules = [cls._rules[k] for k in cls._inputs]
    if all(r is None for r in rules):  # one combined rule for every input
        return True
    return any(e and r is not None and name in r[1] for e, r in zip(op.edges, rules))


def generate(cap: Capture, out_slots: list, kernels: bool = False) -> CompiledGraph:
    """Generate the forward and backward functions of a capture whose results are the
    values in ``out_slots``. With ``kernels``, runs of elementwise ops (forward, and
    backward rules) become fused C kernels (see ``kernels``); the backward is then
    written for gradients known to exist at generation time (missing ones are zeros), and
    ops with a hand-written C version (``lowerings``) call it."""
    g = CompiledGraph()
    lowered_ops: set = set()
    parallel = not _serial(cap)
    meta: dict = {}  # array variable -> (shape, dtype): what kernels may read
    env: dict = {"np": np, "sum_to_shape": sum_to_shape, "_cast": _cast, "_fake": _fake_node}
    env["_view"] = view_of
    env["_T"] = Tensor._wrap
    const_n = [0]

    def const(value) -> str:
        name = f"K{const_n[0]}"
        const_n[0] += 1
        env[name] = value
        return name

    def expr(value) -> str:
        """Source for an operand or parameter."""
        if isinstance(value, SlotRef):
            return f"v{value.k}"
        if isinstance(value, ViewOf):
            return f"_view(v{value.k}, {value.offset}, {value.shape!r}, {value.strides!r})"
        if isinstance(value, Literal):
            value = value.value
        if isinstance(value, tuple) and has_slot(value):
            return "(" + "".join(expr(v) + ", " for v in value) + ")"
        if isinstance(value, list) and has_slot(value):
            return "[" + ", ".join(expr(v) for v in value) + "]"
        if (
            value is None
            or type(value) in (bool, int)
            or (type(value) is float and np.isfinite(value))
        ):
            return repr(value)
        return const(value)

    # -- the inputs: the call's tensors, then the tensors read from outside ------------------
    arg_of: dict = {}
    params_in = []
    for i, k in enumerate(cap.input_slots):
        if k not in arg_of:
            arg_of[k] = len(params_in)
            params_in.append(f"v{k}")
            g.arg_positions.append(i)
    for k, kind in enumerate(cap.kinds):
        if kind == "attr":
            arg_of[k] = len(params_in)
            params_in.append(f"v{k}")
            g.attrs.append(cap.values[k])
    for k, value in enumerate(cap.values):
        meta[f"v{k}"] = (value._data.shape, value._data.dtype)
    header = []
    for k, kind in enumerate(cap.kinds):
        if kind == "const":
            header.append(f"    v{k} = {const(cap.values[k]._data)}")

    # -- which values get a gradient (static: from the outputs that require grad) ------------
    grad_of = set()
    for k, rg in zip(out_slots, [cap.values[k]._rg for k in out_slots]):
        if rg:
            grad_of.add(k)
    on_path = []
    for op in reversed(cap.ops):
        if (
            type(op) in (CallOp, SideEffectOp, CheckOp)
            or op.cls is None
            or not any(o in grad_of for o in op.outs)
        ):
            on_path.append(False)
            continue
        on_path.append(True)
        args = op.args[0] if op.cls._variadic else op.args
        for a, e in zip(args, op.edges):
            if e and isinstance(a, SlotRef):
                grad_of.add(a.k)
    on_path.reverse()
    grad_slots = [k for k in arg_of if k in grad_of and cap.values[k]._rg]
    g.grad_inputs = [arg_of[k] for k in grad_slots]

    # -- forward ----------------------------------------------------------------------------
    fwd = [f"def forward({', '.join(params_in)}):"] + header
    saved_names: list = []
    saved_set: set = set()

    def keep(name: str) -> None:
        if name not in saved_set:
            saved_set.add(name)
            saved_names.append(name)

    bwd_ops = []  # (op, node expr, slot exprs)
    norms = _batch_norms(cap, out_slots, kernels and not _kernels_unavailable())
    updates = {p.update: j for j, p in norms.items() if p.update is not None}
    absorbed = {p.relu for p in norms.values() if p.relu is not None}
    for j, op in enumerate(cap.ops):
        outs = ", ".join(f"v{o}" for o in op.outs)
        if type(op) is SideEffectOp:  # an in-place update of tensors outside the graph
            env[f"F{j}"] = op.fn
            args = [f"_T({expr(a)})" if isinstance(a, SlotRef) else expr(a) for a in op.args]
            if j in updates:  # the batch's statistics, as eagerly: not computed again
                args.append(f"cached=(x{updates[j]}_0, x{updates[j]}_2)")
            fwd.append(f"    F{j}({', '.join(args)})  # {op.fn.__name__}")
            continue
        if j in absorbed:  # a ReLU its BatchNorm applies (see _batch_norms)
            continue
        if type(op) is CheckOp:  # indices in range...: raises torch's error (then run eagerly)
            env[f"F{j}"] = op.fn
            fwd.append(f"    F{j}({', '.join(expr(a) for a in op.args)})  # {op.fn.__name__}")
            continue
        if type(op) is CallOp:  # no gradient: the public function on tensors of the arrays
            env[f"F{j}"] = op.fn
            args = [f"_T({expr(a)})" if isinstance(a, SlotRef) else expr(a) for a in op.args]
            kwargs = [
                f"{k!r}: " + (f"_T({expr(a)})" if isinstance(a, SlotRef) else expr(a))
                for k, a in op.kwargs.items()
            ]
            call = f"F{j}({''.join(a + ', ' for a in args)}**{{{', '.join(kwargs)}}})"
            fwd.append(f"    {outs} = {call}._data  # {op.fn.__name__}")
            continue
        if op.cls is None:  # an alias (detach): the same array, no gradient
            fwd.append(f"    {outs} = {expr(op.args[0])}")
            continue
        env[f"F{j}"] = (
            _lower(op.cls, "forward", op.cls.forward, lowered_ops, parallel)
            if kernels
            else op.cls.forward
        )
        if op.cls._variadic:
            call_args = ["[" + ", ".join(expr(a) for a in op.args[0]) + "]"]
        else:
            call_args = [expr(a) for a in op.args]
            for i, dt in enumerate(op.casts or ()):
                if dt is not None:
                    call_args[i] = f"_cast({call_args[i]}, {const(dt)})"
        call_args += [expr(p) for p in op.params]
        saves = [f"x{j}_{i}" for i in range(op.n_saves)]
        norm = norms.get(j)
        elems = trace_forward(op, j, cap, meta) if kernels and norm is None else None
        if norm is not None:
            relu = None if norm.relu is None else cap.ops[norm.relu]
            out = f"v{op.outs[0] if relu is None else relu.outs[0]}"
            env[f"F{j}"] = _norm._batch_norm_arrays
            if relu is not None:
                env[f"F{j}"] = _bn_relu_forward(relu.cls.forward, parallel)
                lowered_ops.add(_BN_RELU)
            # (then the batch's biased variance, read by the running statistics' update)
            line = f"    {out}, {', '.join(saves)}, x{j}_2 = F{j}({', '.join(call_args)})"
            fwd.append(f"{line}  # {op.cls.__name__}" + (" + ReluBackward0" if relu else ""))
            if relu is not None and on_path[j]:
                bwd_ops.append(_bn_relu_backward(j, op, relu, expr, env, keep, parallel))
                continue
        elif elems is not None:
            fwd += elems
        else:
            targets = ", ".join([f"v{o}" for o in op.outs] + saves)
            if op.cls._multi_output and not saves:
                targets = outs + ","
            line = f"    {targets} = F{j}({', '.join(call_args)})  # {op.cls.__name__}"
            if _pure(op.cls):
                line = _PureLine(line, [f"v{o}" for o in op.outs] + saves)
            fwd.append(line)
        if not on_path[j]:
            continue
        direct = _direct_rules(
            op, j, expr, env, grad_of, lowered_ops if kernels else None, parallel
        )
        if direct is not None:  # each input's rule called directly: no node, no tuple
            for _i, _call, names, _fn, _exprs in direct:
                for name in names:
                    keep(name)
            bwd_ops.append((j, op, None, direct))
            continue
        if has_slot(op.params):
            node = f"n{j}"
            env[f"C{j}"] = op
            fwd.append(f"    n{j} = _fake(C{j}, {expr(op.params)})")
            keep(node)
        else:
            node = f"N{j}"
            env[node] = _fake_node(op, op.params)
            if kernels:
                low = _lower(op.cls, "backward", None, lowered_ops, parallel)
                if low is not None:
                    env[node] = LoweredNode(env[node], low)
        slot_exprs = []
        for name in op.cls._slots:
            if not _slot_needed(op, name):  # only rules of inputs without a gradient read it
                slot_exprs.append("None")
                continue
            decl_inputs = op.cls._inputs
            if name in decl_inputs:
                value = op.args[decl_inputs.index(name)]
            elif name in op.cls._outputs:
                value = SlotRef(op.outs[op.cls._outputs.index(name)])
            else:
                value = f"x{j}_{op.cls._saves.index(name)}"
            if isinstance(value, str):
                slot_exprs.append(value)
                keep(value)
            else:
                e = expr(value)
                slot_exprs.append(e)
                if isinstance(value, SlotRef):
                    keep(e)
        if op.cls._variadic and op.cls._save is not None:  # saves its operands
            slot_exprs = [expr(a) for a in op.args[0]]
            for a in op.args[0]:
                if isinstance(a, SlotRef):
                    keep(expr(a))
        if has_slot(op.params):
            for k in _slot_refs(op.params):
                keep(f"v{k}")
        bwd_ops.append((j, op, node, slot_exprs))
    out_exprs = []
    for k in out_slots:
        out_exprs.append(f"v{k}")
    outs_tuple = "".join(e + ", " for e in out_exprs)
    saved_tuple = "".join(n + ", " for n in saved_names)
    fwd.append(f"    return ({outs_tuple}), ({saved_tuple})")

    fwd = _eliminate_dead(fwd)

    # -- backward ---------------------------------------------------------------------------
    bwd = _dynamic_backward(cap, out_slots, grad_of, grad_slots, bwd_ops, saved_names, const)
    if kernels:
        # The kernel backward assumes every gradient exists; when one does not at run time
        # (an output nobody differentiated, a rule that returned None) the NumPy backward
        # runs instead, so an input no gradient reached gets None, as eagerly.
        static = static_backward(
            cap, out_slots, grad_of, grad_slots, bwd_ops, saved_names, meta, env
        )
        remat, static, kept = rematerialize(fwd, static, saved_names, params_in)
        if remat:  # fewer saved values: the forward returns, and both backwards unpack, these
            fwd[-1] = f"    return ({outs_tuple}), ({''.join(n + ', ' for n in kept)})"
            fwd = _eliminate_dead(fwd)
            unpack = f"    {''.join(n + ', ' for n in kept)}= saved"
            for lines in (static, bwd):
                lines[1] = unpack if kept else "    pass"
            # the NumPy backward reads the recomputed values: it computes them first
            bwd[2:2] = [Elem(n, node, "recomputed") for n, node in remat.items()]
            saved_names = kept
        functions: dict = {}
        fwd = fuse(fwd, functions, parallel)
        if remat:
            bwd = fuse(bwd, functions, parallel)
        static = _free_dead(fuse(static, functions, parallel), skip=set())
        g.kernel_code = "\n\n".join(functions.values())
        if functions:
            module = build(functions)
            for name in functions:
                env["_" + name] = getattr(module, name)
        env["_Undefined"] = Undefined
        needed = [i for i, k in enumerate(out_slots) if k in grad_of and cap.values[k]._rg]
        may_raise = any("raise _Undefined" in line for line in static)
        bwd[0] = "def _backward_numpy(grads, saved):"
        dispatch = ["def backward(grads, saved):"]
        if needed:
            missing = " or ".join(f"grads[{i}] is None" for i in needed)
            dispatch.append(f"    if {missing}: return _backward_numpy(grads, saved)")
        if may_raise:
            dispatch += [
                "    kept = list(saved)",
                "    try:",
                "        return _backward_kernels(grads, saved)",
                "    except _Undefined:",
                "        return _backward_numpy(grads, kept)",
            ]
        else:
            dispatch.append("    return _backward_kernels(grads, saved)")
        bwd = _free_dead(bwd, skip=set()) + [""] + static + [""] + dispatch
    else:
        bwd = _free_dead(bwd, skip=set())
    g.kernels = len(functions) if kernels else 0
    g.lowered = sorted(lowered_ops)
    fwd = _free_dead(fwd, skip=set(params_in))
    source = "\n".join(fwd) + "\n\n\n" + "\n".join(bwd) + "\n"
    namespace = dict(env)
    exec(compile(source, "<ember.compile>", "exec"), namespace)  # noqa: S102 - our own source
    g.forward = namespace["forward"]
    g.backward = namespace["backward"]
    g.backward_numpy = namespace.get("_backward_numpy")  # (kernel code: its fallback)
    g.code = source
    g.out_slots = list(out_slots)
    g.out_rg = [bool(cap.values[k]._rg) for k in out_slots]
    g.out_meta = [(cap.values[k]._data.shape, cap.values[k]._data.dtype) for k in out_slots]
    g.out_alias = [arg_of.get(k) if cap.kinds[k] in ("input", "attr") else None for k in out_slots]
    # Inputs saved as operands of ops are version-checked before backward; those only
    # passed as parameters (BatchNorm's running statistics) are not, as eagerly.
    operands = {f"v{a.k}" for op in cap.ops for a in _operands(op) if isinstance(a, SlotRef)}
    g.saved_inputs = [params_in.index(n) for n in saved_names if n in params_in and n in operands]
    g.n_ops = len(cap.ops)
    return g


def _dynamic_backward(cap, out_slots, grad_of, grad_slots, bwd_ops, saved_names, const) -> list:
    """The backward for the plain NumPy code: a gradient may be None at run time (an
    output nobody differentiated), so each op runs only when its gradient exists."""
    bwd = ["def backward(grads, saved):"]
    if saved_names:  # taken out of the list: each array is freed after its last use
        bwd.append(f"    {''.join(n + ', ' for n in saved_names)}= saved")
        bwd.append("    saved.clear()")
    gvars = sorted(grad_of)
    if gvars:
        bwd.append("    " + " = ".join(f"g{k}" for k in gvars) + " = None")
    for i, k in enumerate(out_slots):
        if k in grad_of and cap.values[k]._rg:
            bwd.append(f"    if grads[{i}] is not None:")
            bwd.append(f"        g{k} = grads[{i}] if g{k} is None else g{k} + grads[{i}]")
    for _j, op, node, slot_exprs in reversed(bwd_ops):
        if op.cls._multi_output:
            gin = "[" + ", ".join(f"g{o}" if o in grad_of else "None" for o in op.outs) + "]"
            bwd.append(
                f"    if {' or '.join(f'g{o} is not None' for o in op.outs if o in grad_of)}:"
            )
        else:
            gin = f"g{op.outs[0]}"
            bwd.append(f"    if {gin} is not None:")
        args = op.args[0] if op.cls._variadic else op.args
        multi_in = len(args) > 1 or op.cls._variadic
        if node is None:
            calls = {i: call for i, call, *_ in slot_exprs}
        else:
            call = f"{node}.backward({gin}{''.join(', ' + s for s in slot_exprs)})"
            bwd.append(f"        r = {call}  # {op.cls.__name__}")
            if multi_in:
                bwd.append("        if type(r) is not tuple: r = (r,)")
        for i, (a, e) in enumerate(zip(args, op.edges)):
            if not (e and isinstance(a, SlotRef) and a.k in grad_of):
                continue
            shape, dtype = cap.values[a.k]._data.shape, cap.values[a.k]._data.dtype
            if node is None:
                if i not in calls:
                    continue
                src = calls[i].replace("GRAD", gin)
                src += f"  # {op.cls.__name__}: {op.cls._inputs[i]}"
            else:
                src = f"r[{i}]" if multi_in else "r"
            bwd.append(f"        t = {src}")
            bwd.append("        if t is not None:")
            bwd.append(f"            if t.shape != {shape!r}: t = sum_to_shape(t, {shape!r})")
            if not shape:
                bwd.append("            if type(t) is not np.ndarray: t = np.asarray(t)")
            dname = const(dtype)
            bwd.append(f"            if t.dtype != {dname}: t = _cast(t, {dname})")
            bwd.append(f"            g{a.k} = t if g{a.k} is None else g{a.k} + t")
    bwd.append(f"    return ({''.join(f'g{k}, ' for k in grad_slots)})")
    return bwd


# Modules whose ops' forwards are pure functions of their operands (no random draws, no
# writes): a result nobody reads need not be computed.
_PURE_MODULES = frozenset(
    f"ember._aten.{m}"
    for m in "elementwise linalg reduction shape indexing sorting special complex".split()
)
# torch.linalg's solves and factorizations (declared in ember/linalg.py until they joined
# _aten/linalg.py) are computed even when unread, as they were there: leaving this set out
# would let a compiled graph drop an unused one like the other linalg ops.
_KEPT = frozenset(
    {
        _linalg.LinalgSolveExBackward0,
        _linalg.LinalgCholeskyExBackward0,
        _linalg.LinalgSvdBackward0,
        _linalg.LinalgSolveTriangularBackward0,
        _linalg.LinalgQrBackward0,
        _linalg.LinalgEighBackward0,
        _linalg.LinalgHouseholderProductBackward0,
        _linalg.LinalgPinvBackward0,
        _linalg.LinalgMatrixExpBackward0,
    }
)


def _pure(cls) -> bool:
    """Is the op's forward a pure function (its statement dead when nothing reads it)?"""
    # A forward may be a bare ufunc, which has no ``__module__`` before NumPy 2.1 (later
    # ones say "numpy", not a pure module either).
    return getattr(cls.forward, "__module__", None) in _PURE_MODULES and cls not in _KEPT


class _PureLine(str):
    """A line of generated code that only defines ``defs`` (dead when none is read)."""

    defs: list

    def __new__(cls, text: str, defs: list):
        line = super().__new__(cls, text)
        line.defs = defs
        return line


def _eliminate_dead(items: list) -> list:
    """Drop the pure statements whose results nothing reads (a value computed on the way
    to one that is not returned: ``g @ v`` when only its gradient is)."""
    live: set = set()
    keep = []
    for it in reversed(items):
        if isinstance(it, Elem):
            defs, reads = [it.target], it.reads
        else:
            defs = it.defs if isinstance(it, _PureLine) else None
            reads = NAME.findall(it.split("#")[0])
        if defs is not None and not live.intersection(defs):
            continue
        live.update(reads)
        keep.append(it)
    keep.reverse()
    return keep


def _free_dead(lines: list, skip: set) -> list:
    """Insert ``del`` after the statement that last reads each value, so intermediate
    arrays are released as soon as possible (function locals otherwise live to the end).
    A statement is a line at the body's indentation with its nested lines."""
    head, body = lines[0], lines[1:]
    units: list = []
    for line in body:
        if line.startswith("     ") and units:
            units[-1].append(line)
        else:
            units.append([line])
    last: dict = {}
    for i, unit in enumerate(units):
        for line in unit:
            for name in NAME.findall(line.split("#")[0]):
                last[name] = i
    dying: dict = {}
    for name, i in last.items():
        if name not in skip:
            dying.setdefault(i, []).append(name)
    out = [head]
    for i, unit in enumerate(units):
        out += unit
        if unit[0].lstrip().startswith("return"):
            continue
        dead = sorted(dying.get(i, ()))
        if dead:
            out.append(f"    del {', '.join(dead)}")
    return out


def _operands(op) -> list:
    if type(op) in (CallOp, SideEffectOp, CheckOp) or op.cls is None:
        return []
    return list(op.args[0]) if op.cls._variadic else list(op.args)


def _slot_refs(value):
    if isinstance(value, (SlotRef, ViewOf)):
        yield value.k
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _slot_refs(v)
