"""The ONNX exporter: trace with ``ember.fx``, then run the graph once on the example inputs
while emitting ONNX nodes for every fx node.

Each fx node gets a concrete value (from running the op eagerly: it gives shapes, dtypes and
ranks) and a representation in the ONNX graph: a ``_V`` (an ONNX value name plus the concrete
value) or a plain Python constant. Sizes read from tensors (``x.size(1)``, ``x.shape[0]``)
are ONNX ``Shape``/``Gather`` values, so dynamic axes stay dynamic through ``view`` etc.
Only imported by ``ember.onnx.export`` (it imports ``onnx``).
"""

from __future__ import annotations

import builtins
import inspect
import math
import operator
from typing import Any

import numpy as np

import onnx
from onnx import helper, numpy_helper

from .. import _creation, nn
from .._aten import elementwise as _ew
from .._aten import linalg as _la
from .._aten import shape as _sh
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..fx import Graph, Node, Proxy, Tracer
from ..fx._symbolic_trace import _assert, _assert_is_none
from ..fx.node import _public_name
from ..nn import functional as F
from ..nn.modules.module import intercept_module_calls
from ..version import release as _ember_release
from .errors import OnnxExporterError, OnnxExporterWarning, UnsupportedOperatorError

__all__ = ["build_model"]

INT64_MAX = 2**63 - 1


class _V:
    """A value of the ONNX graph: ``name`` and the concrete value it had while exporting.
    ``kind`` is 'tensor', 'shape' (a 1-D int64 of sizes; value is a tuple) or 'scalar'
    (a 0-d tensor standing for a Python int/float; value is the number)."""

    __slots__ = ("name", "value", "kind")

    def __init__(self, name: str, value: Any, kind: str = "tensor") -> None:
        self.name = name
        self.value = value
        self.kind = kind

    @property
    def np_dtype(self) -> np.dtype:
        if self.kind == "tensor":
            return _np_dtype(self.value.dtype)
        if self.kind == "shape":
            return np.dtype(np.int64)
        return _py_dtype(self.value)

    @property
    def rank(self) -> int:
        if self.kind == "tensor":
            return self.value.dim()
        return 1 if self.kind == "shape" else 0


_DTYPES: dict = {}


def _np_dtype(dtype) -> np.dtype:
    if dtype not in _DTYPES:
        _DTYPES[dtype] = np.dtype(_creation.empty(0, dtype=dtype).numpy().dtype)
    return _DTYPES[dtype]


def _py_dtype(v) -> np.dtype:
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    if isinstance(v, int):
        return np.dtype(np.int64)
    return np.dtype(np.float32)


def _onnx_type(dt: np.dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt))


def _conc(x):
    """The concrete value of a representation."""
    if isinstance(x, _V):
        return x.value
    if isinstance(x, tuple):
        return tuple(_conc(a) for a in x)
    if isinstance(x, list):
        return [_conc(a) for a in x]
    if isinstance(x, dict):
        return {k: _conc(v) for k, v in x.items()}
    if isinstance(x, slice):
        return slice(_conc(x.start), _conc(x.stop), _conc(x.step))
    return x


def _norm(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def _pair(v, n: int) -> list[int]:
    if isinstance(v, (tuple, list)):
        return [int(a) for a in v]
    return [int(v)] * n


_MATH_FUNCS = ("sqrt", "exp", "log", "floor", "ceil", "sin", "cos", "tanh", "fabs")


class _ValueProxy(Proxy):
    """A traced value that converts to a Python float (``math.sqrt(q.size(-1))``): ember.fx
    records no call into ``math`` (it patches nothing), so the exporter computes the value
    from the example inputs and the graph gets it as a constant, as torch.onnx's tracing
    exporter does with Python numbers."""

    def __float__(self) -> float:
        return float(self.tracer.value_of(self.node))


class _OnnxTracer(Tracer):
    """ember.nn's modules with an ONNX translation (and all other ember.nn modules except
    containers, which then fail with UnsupportedOperatorError) are leaves. A traced value
    given to ``math``'s functions is computed from the example inputs (``examples``: by
    placeholder name); it must not depend on a dynamic axis (``dynamic``: placeholder name
    to axes), which is checked by computing it again with those axes one shorter (or longer)."""

    def __init__(self) -> None:
        super().__init__()
        self._stack: list = []  # (path, scope string) of the modules being called
        self.node_scopes: dict = {}  # node -> torch-style scope, "/blocks.0/attn"
        self.examples: dict = {}
        self.dynamic: dict = {}
        self._values: dict = {}  # node -> value from the example inputs
        self._other_values: dict = {}  # node -> value from the inputs resized on dynamic axes

    def proxy(self, node: Node) -> Proxy:
        return _ValueProxy(node, self)

    def value_of(self, node: Node):
        """``node``'s value on the example inputs (see the class docstring)."""
        value = self._evaluate(node, self.examples, self._values)
        if not self.dynamic:
            return value
        other = _resized(self.examples, self.dynamic)
        try:
            changed = float(self._evaluate(node, other, self._other_values)) != float(value)
        except Exception:  # noqa: BLE001 (the model rejects other sizes: nothing to compare)
            changed = False
        if changed:
            raise OnnxExporterError(
                f"a math function is applied to {node.name}, which depends on a dynamic axis: "
                "the exported graph would keep the example's value. Compute it with ember's "
                "operations instead (x ** 0.5 for math.sqrt(x))"
            )
        return value

    def _evaluate(self, node: Node, examples: dict, env: dict):
        root = self.root
        # the model runs for real here: neither recorded nor differentiated
        with no_grad(), intercept_module_calls(None):
            for n in self.graph.nodes:
                if n not in env:
                    env[n] = _run_node(root, n, examples, env)
                if n is node:
                    break
        return env[node]

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        parent, scope = self._stack[-1] if self._stack else ("", "")
        rel = path[len(parent) + 1 :] if parent and path.startswith(parent + ".") else path
        self._stack.append((path, f"{scope}/{rel}" if rel else scope))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self._stack.pop()

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        if self._stack:
            self.node_scopes[node] = self._stack[-1][1]
        return node

    def is_leaf_module(self, m: nn.Module, qualname: str) -> bool:
        if isinstance(m, (nn.Sequential, nn.ModuleList, nn.ModuleDict)):
            return False
        return _module_converter(type(m)) is not None or super().is_leaf_module(m, qualname)


def _run_node(root, n: Node, examples: dict, env: dict):
    """One node of a partly traced graph, on concrete values."""

    def value(a):
        if isinstance(a, Node):
            return env[a]
        if isinstance(a, (tuple, list)):
            return type(a)(value(x) for x in a)
        if isinstance(a, dict):
            return {k: value(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(value(a.start), value(a.stop), value(a.step))
        return a

    if n.op == "placeholder":
        return _clone(examples[n.target])
    if n.op == "get_attr":
        obj = root
        for part in n.target.split("."):
            obj = getattr(obj, part)
        return obj
    args, kwargs = value(n.args), value(n.kwargs)
    if n.op == "call_function":
        return n.target(*args, **kwargs)
    if n.op == "call_method":
        return getattr(args[0], n.target)(*args[1:], **kwargs)
    return root.get_submodule(n.target)(*args, **kwargs)


def _clone(v):
    """The example inputs, copied: an in-place op of the model must not change them."""
    if isinstance(v, Tensor):
        return v.clone()
    if isinstance(v, (tuple, list)):
        return type(v)(_clone(x) for x in v)
    return v


def _resized(examples: dict, dynamic: dict) -> dict:
    """The examples with each dynamic axis one shorter (or, for sizes 1 and 2, longer: the
    last entry repeated), for telling what depends on them."""
    out = dict(examples)
    for name, axes in dynamic.items():
        t = out[name]
        for a in axes:
            n = t.shape[a]
            t = t.narrow(a, 0, n - 1) if n > 2 else _sh.cat([t, t.narrow(a, n - 1, 1)], a)
        out[name] = t
    return out


class _Ctx:
    """Builds the ONNX graph."""

    def __init__(self, root: nn.Module, opset: int) -> None:
        self.root = root
        self.opset = opset
        self.nodes: list = []
        self.initializers: dict = {}  # name -> TensorProto
        self.used_names: dict = {}
        self.scope = ""
        self.const_cache: dict = {}

    # -- naming and emission -----------------------------------------------------------------

    def _unique(self, base: str) -> str:
        n = self.used_names.get(base, 0)
        self.used_names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def op(self, op_type: str, inputs: list, n_out: int = 1, **attrs):
        """Emit one node; returns its output name (or list of names when ``n_out > 1``)."""
        name = self._unique(f"{self.scope}/{op_type}")
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, arr) -> str:
        """A Constant node holding ``arr`` (shared by equal small constants)."""
        arr = np.asarray(arr)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key in self.const_cache:
            return self.const_cache[key]
        saved, self.scope = self.scope, ""
        out = self.op("Constant", [], value=numpy_helper.from_array(arr))
        self.scope = saved
        self.const_cache[key] = out
        return out

    def ints(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64))

    def init(self, name: str, tensor) -> str:
        """An initializer named ``name`` (e.g. ``fc1.weight``)."""
        if name not in self.initializers:
            arr = np.ascontiguousarray(tensor.detach().numpy())
            self.initializers[name] = numpy_helper.from_array(arr, name)
        return name

    def cast(self, name: str, src: np.dtype, dst: np.dtype) -> str:
        if np.dtype(src) == np.dtype(dst):
            return name
        return self.op("Cast", [name], to=_onnx_type(dst))

    def tensor(self, x, dtype=None) -> str:
        """The ONNX name for a representation, cast to ``dtype`` if given."""
        if isinstance(x, _V):
            return x.name if dtype is None else self.cast(x.name, x.np_dtype, dtype)
        if isinstance(x, (bool, int, float)):
            return self.const(np.asarray(x, dtype=dtype or _py_dtype(x)))
        if isinstance(x, (tuple, list)):
            return self.shape_tensor(x)
        if isinstance(x, Tensor):
            return self.const(x.detach().numpy() if dtype is None else x.numpy().astype(dtype))
        raise OnnxExporterError(f"cannot use {x!r} as an ONNX value")

    def shape_tensor(self, items) -> str:
        """A 1-D int64 tensor from a list of ints and scalar/shape values."""
        if isinstance(items, _V):
            return self.cast(items.name, items.np_dtype, np.int64)
        items = list(items)
        if all(isinstance(i, int) for i in items):
            return self.ints(items)
        parts = []
        static: list = []
        for i in items:
            if isinstance(i, int):
                static.append(i)
                continue
            if static:
                parts.append(self.ints(static))
                static = []
            name = self.cast(i.name, i.np_dtype, np.int64)
            parts.append(
                name if i.kind == "shape" else self.op("Unsqueeze", [name, self.ints([0])])
            )
        if static:
            parts.append(self.ints(static))
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=0)

    def scalar_input(self, x, dtype) -> str:
        """A 0-d value of ``dtype`` (Python numbers become constants)."""
        return self.tensor(x, dtype)


def _out(ctx: _Ctx, name: str, value) -> _V:
    if isinstance(value, Tensor):
        return _V(name, value, "tensor")
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return _V(name, tuple(value), "shape")
    if isinstance(value, (int, float, bool)):
        return _V(name, value, "scalar")
    raise OnnxExporterError(f"unexpected value {type(value).__name__} in the exported graph")


def _dtype_of(value) -> np.dtype:
    if isinstance(value, Tensor):
        return _np_dtype(value.dtype)
    if isinstance(value, (tuple, list)):
        return np.dtype(np.int64)
    return _py_dtype(value)


# ---------------------------------------------------------------------------------------------
# converters: fn(ctx, A, out) -> representation; A holds the bound arguments ("input" first)
# ---------------------------------------------------------------------------------------------

# The converters, keyed by the implementation behind ember's public functions and Tensor
# methods (their ``_ember_impl``): ``ember.relu``, ``Tensor.relu`` and ``x.relu()`` share one
# implementation and so one entry, and so do aliases (``clip``/``clamp``); a form with its own
# implementation (``ember.nn.functional.relu``) is registered as well. Registered with the
# public objects (or, for functions only the torch namespace has, the implementation itself).
_FUNCS: dict = {}
# The in-place functional forms (``F.relu_``): their result replaces their input's value.
_INPLACE: set = set()


def _impl(fn):
    """The implementation behind a public function or method (itself if it is one)."""
    return getattr(fn, "_ember_impl", fn)


def _reg(*fns):
    def deco(conv):
        for fn in fns:
            _FUNCS[_impl(fn)] = conv
        return conv

    return deco


def _reg_inplace(*fns):
    """``_reg`` for in-place functional forms (``F.relu_``): converted as their out-of-place
    twin, and later reads of the input see the result (as for ``x.add_(1)``)."""
    _INPLACE.update(_impl(fn) for fn in fns)
    return _reg(*fns)


def _unary(onnx_op):
    def conv(ctx, A, out):
        return _out(ctx, ctx.op(onnx_op, [ctx.tensor(A["input"])]), out)

    return conv


_relu = _unary("Relu")
_reg(Tensor.relu, F.relu)(_relu)
_reg_inplace(F.relu_)(_relu)
_tanh = _reg(Tensor.tanh, F.tanh)(_unary("Tanh"))
_sigmoid = _reg(Tensor.sigmoid, F.sigmoid)(_unary("Sigmoid"))
_reg(Tensor.exp)(_unary("Exp"))
_reg(Tensor.log)(_unary("Log"))
_reg(Tensor.sqrt)(_unary("Sqrt"))
_reg(Tensor.abs)(_unary("Abs"))
_neg = _reg(Tensor.neg, Tensor.negative)(_unary("Neg"))
_reg(Tensor.erf)(_unary("Erf"))
_reg(Tensor.sin)(_unary("Sin"))
_reg(Tensor.cos)(_unary("Cos"))
_reg(Tensor.reciprocal)(_unary("Reciprocal"))
_reg(Tensor.floor)(_unary("Floor"))
_reg(Tensor.ceil)(_unary("Ceil"))
_reg(Tensor.logical_not)(_unary("Not"))
_softplus = _reg(F.softplus)(_unary("Softplus"))
_reg(F.softsign)(_unary("Softsign"))
_reg(Tensor.sign)(_unary("Sign"))
_reg(Tensor.round)(_unary("Round"))


@_reg(Tensor.contiguous, Tensor.clone, Tensor.detach, F.dropout, F.alpha_dropout)
def _identity(ctx, A, out):
    return A["input"]


@_reg(Tensor.rsqrt)
def _rsqrt(ctx, A, out):
    return _out(ctx, ctx.op("Reciprocal", [ctx.op("Sqrt", [ctx.tensor(A["input"])])]), out)


@_reg(F.silu)
def _silu(ctx, A, out):
    x = ctx.tensor(A["input"])
    return _out(ctx, ctx.op("Mul", [x, ctx.op("Sigmoid", [x])]), out)


@_reg(F.gelu)
def _gelu(ctx, A, out):
    x = ctx.tensor(A["input"])
    dt = _dtype_of(out)
    c = lambda v: ctx.const(np.asarray(v, dtype=dt))  # noqa: E731
    if A.get("approximate", "none") == "tanh":
        x3 = ctx.op("Mul", [ctx.op("Mul", [x, x]), x])
        inner = ctx.op("Add", [x, ctx.op("Mul", [x3, c(0.044715)])])
        t = ctx.op("Tanh", [ctx.op("Mul", [inner, c(math.sqrt(2.0 / math.pi))])])
    else:
        t = ctx.op("Erf", [ctx.op("Div", [x, c(math.sqrt(2.0))])])
    y = ctx.op("Mul", [ctx.op("Mul", [x, c(0.5)]), ctx.op("Add", [t, c(1.0)])])
    return _out(ctx, y, out)


@_reg(F.leaky_relu)
@_reg_inplace(F.leaky_relu_)
def _leaky_relu(ctx, A, out):
    alpha = float(A.get("negative_slope", 0.01))
    return _out(ctx, ctx.op("LeakyRelu", [ctx.tensor(A["input"])], alpha=alpha), out)


@_reg(F.elu)
@_reg_inplace(F.elu_)
def _elu(ctx, A, out):
    alpha = float(A.get("alpha", 1.0))
    return _out(ctx, ctx.op("Elu", [ctx.tensor(A["input"])], alpha=alpha), out)


def _clip(bounds):
    """Clip to ``bounds(A)``: (low, high), None where there is no bound."""

    def conv(ctx, A, out):
        dt = _dtype_of(out)
        lo, hi = bounds(A)
        ins = [ctx.tensor(A["input"]), "" if lo is None else ctx.tensor(lo, dt)]
        if hi is not None:
            ins.append(ctx.tensor(hi, dt))
        return _out(ctx, ctx.op("Clip", ins), out)

    return conv


_relu6 = _reg(F.relu6)(_clip(lambda A: (0.0, 6.0)))
_hardtanh = _clip(lambda A: (A.get("min_val", -1.0), A.get("max_val", 1.0)))
_reg(F.hardtanh)(_hardtanh)
_reg_inplace(F.hardtanh_)(_hardtanh)
_reg(Tensor.clamp)(_clip(lambda A: (A.get("min"), A.get("max"))))


def _softmax_like(onnx_op):
    def conv(ctx, A, out):
        x = A["input"]
        dim = A.get("dim", A.get("axis"))
        if dim is None:
            dim = 0 if x.rank in (0, 1, 3) else 1  # torch's legacy implicit dim
        name = ctx.tensor(x)
        if A.get("dtype") is not None:
            name = ctx.cast(name, x.np_dtype, _dtype_of(out))
        return _out(ctx, ctx.op(onnx_op, [name], axis=_norm(dim, x.rank)), out)

    return conv


_softmax = _reg(Tensor.softmax, F.softmax)(_softmax_like("Softmax"))
_log_softmax = _reg(Tensor.log_softmax, F.log_softmax)(_softmax_like("LogSoftmax"))


def _binary(onnx_op, swap=False):
    def conv(ctx, A, out):
        a, b = A["input"], A["other"]
        if swap:
            a, b = b, a
        dt = _dtype_of(out)
        bn = ctx.tensor(b, dt)
        if A.get("alpha", 1) != 1:
            bn = ctx.op("Mul", [bn, ctx.tensor(A["alpha"], dt)])
        return _out(ctx, ctx.op(onnx_op, [ctx.tensor(a, dt), bn]), out)

    return conv


_reg(Tensor.add)(_binary("Add"))
_reg(Tensor.sub, Tensor.subtract)(_binary("Sub"))
_reg(Tensor.mul, Tensor.multiply)(_binary("Mul"))
_reg(Tensor.div, Tensor.divide, Tensor.true_divide)(_binary("Div"))
_reg(_ew.rsub)(_binary("Sub", swap=True))
_reg(Tensor.maximum)(_binary("Max"))
_reg(Tensor.minimum)(_binary("Min"))
_pow_binary = _binary("Pow")


@_reg(Tensor.pow)
def _pow(ctx, A, out):
    if "input" not in A and "self" in A:
        A["input"] = A.pop("self")
    return _pow_binary(ctx, A, out)


def _compare(onnx_op, negate=False):
    def conv(ctx, A, out):
        a, b = A["input"], A["other"]
        dts = [x.np_dtype for x in (a, b) if isinstance(x, _V)]
        dt = np.result_type(*dts) if dts else _py_dtype(a)
        y = ctx.op(onnx_op, [ctx.tensor(a, dt), ctx.tensor(b, dt)])
        if negate:
            y = ctx.op("Not", [y])
        return _out(ctx, y, out)

    return conv


_reg(Tensor.eq)(_compare("Equal"))
_reg(Tensor.ne)(_compare("Equal", negate=True))
_reg(Tensor.lt)(_compare("Less"))
_reg(Tensor.gt)(_compare("Greater"))
_reg(Tensor.le)(_compare("LessOrEqual"))
_reg(Tensor.ge)(_compare("GreaterOrEqual"))


@_reg(Tensor.floor_divide)
def _floordiv(ctx, A, out):
    a, b = A["input"], A["other"]
    dt = _dtype_of(out)
    y = ctx.op("Div", [ctx.tensor(a, dt), ctx.tensor(b, dt)])
    if np.issubdtype(dt, np.floating):
        y = ctx.op("Floor", [y])
    return _out(ctx, y, out)


@_reg(Tensor.matmul, Tensor.bmm, Tensor.mm)
def _matmul(ctx, A, out):
    return _out(ctx, ctx.op("MatMul", [ctx.tensor(A["input"]), ctx.tensor(A["other"])]), out)


@_reg(_ew.where, Tensor.where)
def _where(ctx, A, out):
    dt = _dtype_of(out)
    cond = ctx.tensor(A["condition"], np.bool_)
    x, y = ctx.tensor(A["input"], dt), ctx.tensor(A["other"], dt)
    return _out(ctx, ctx.op("Where", [cond, x, y]), out)


@_reg(Tensor.masked_fill)
def _masked_fill(ctx, A, out):
    x = A["input"]
    mask = ctx.tensor(A["mask"], np.bool_)
    value = ctx.tensor(A["value"], x.np_dtype)
    return _out(ctx, ctx.op("Where", [mask, value, ctx.tensor(x)]), out)


def _trilu(name, upper):
    def conv(ctx, A, out):
        if ctx.opset < 14:
            raise UnsupportedOperatorError("aten::" + name, ctx.opset, 14)
        ins = [ctx.tensor(A["input"])]
        if A.get("diagonal", 0) != 0:
            ins.append(ctx.tensor(A["diagonal"], np.int64))
        return _out(ctx, ctx.op("Trilu", ins, upper=int(upper)), out)

    return conv


_reg(Tensor.tril)(_trilu("tril", upper=False))
_reg(Tensor.triu)(_trilu("triu", upper=True))


# -- reductions ---------------------------------------------------------------------------


def _reduce(onnx_op):
    def conv(ctx, A, out):
        x = A["input"]
        dim = A.get("dim", A.get("axis"))
        keep = int(bool(A.get("keepdim", A.get("keepdims") or False)))
        name = ctx.tensor(x)
        if A.get("dtype") is not None or (onnx_op == "ReduceSum" and x.np_dtype == np.bool_):
            name = ctx.cast(name, x.np_dtype, _dtype_of(out))
        if dim is None or dim == ():
            axes = None
        else:
            dims = dim if isinstance(dim, (tuple, list)) else [dim]
            axes = [_norm(int(d), x.rank) for d in dims]
        # ReduceSum takes axes as an input from opset 13, the others from 18
        if onnx_op == "ReduceSum" or ctx.opset >= 18:
            ins = [name] + ([ctx.ints(axes)] if axes is not None else [])
            y = ctx.op(onnx_op, ins, keepdims=keep)
        else:
            y = ctx.op(onnx_op, [name], axes=axes, keepdims=keep)
        return _out(ctx, y, out)

    return conv


_reg(Tensor.mean)(_reduce("ReduceMean"))
_reg(Tensor.sum)(_reduce("ReduceSum"))
_reg(Tensor.amax)(_reduce("ReduceMax"))
_reg(Tensor.amin)(_reduce("ReduceMin"))
_reg(Tensor.prod)(_reduce("ReduceProd"))


def _var(std):
    def conv(ctx, A, out):
        return _variance(ctx, A, out, std)

    return conv


def _variance(ctx, A, out, std: bool):
    x = A["input"]
    dim = A.get("dim")
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    correction = A.get("correction", 1 if A.get("unbiased", True) else 0)
    red = _reduce("ReduceMean")
    keep = bool(A.get("keepdim", False))
    name = ctx.tensor(x)
    mean = red(ctx, {"input": x, "dim": dims, "keepdim": True}, x.value).name
    d = ctx.op("Sub", [name, mean])
    sq = _V(ctx.op("Mul", [d, d]), x.value)
    v = red(ctx, {"input": sq, "dim": dims, "keepdim": keep}, out).name
    if correction:
        n = (
            x.value.numel()
            if dims is None
            else int(np.prod([x.value.shape[_norm(i, x.rank)] for i in dims]))
        )
        v = ctx.op("Mul", [v, ctx.const(np.asarray(n / max(n - correction, 1), x.np_dtype))])
    if std:
        v = ctx.op("Sqrt", [v])
    return _out(ctx, v, out)


_reg(Tensor.var)(_var(std=False))
_reg(Tensor.std)(_var(std=True))


def _minmax(onnx_reduce, onnx_arg, onnx_elem):
    def conv(ctx, A, out):
        x = A["input"]
        if "other" in A and A["other"] is not None:
            return _binary(onnx_elem)(ctx, A, out)
        dim = A.get("dim", A.get("axis"))
        if dim is None:
            return _reduce(onnx_reduce)(ctx, {"input": x}, out)
        keep = bool(A.get("keepdim", A.get("keepdims") or False))
        vals = _reduce(onnx_reduce)(ctx, {"input": x, "dim": dim, "keepdim": keep}, out[0])
        d = _norm(int(dim), x.rank)
        idx = ctx.op(onnx_arg, [ctx.tensor(x)], axis=d, keepdims=int(keep), select_last_index=0)
        return (vals, _out(ctx, idx, out[1]))

    return conv


_reg(Tensor.max)(_minmax("ReduceMax", "ArgMax", "Max"))
_reg(Tensor.min)(_minmax("ReduceMin", "ArgMin", "Min"))


def _arg(onnx_op):
    def conv(ctx, A, out):
        x = A["input"]
        dim = A.get("dim", A.get("axis"))
        keep = int(bool(A.get("keepdim", A.get("keepdims") or False)))
        name = ctx.tensor(x)
        if dim is None:
            name = ctx.op("Reshape", [name, ctx.ints([-1])])
            dim, keep = 0, 0
        return _out(
            ctx, ctx.op(onnx_op, [name], axis=_norm(dim, max(x.rank, 1)), keepdims=keep), out
        )

    return conv


_reg(Tensor.argmax)(_arg("ArgMax"))
_reg(Tensor.argmin)(_arg("ArgMin"))


@_reg(Tensor.cumsum)
def _cumsum(ctx, A, out):
    x = A["input"]
    dim = _norm(A.get("dim", A.get("axis")), x.rank)
    name = ctx.cast(ctx.tensor(x), x.np_dtype, _dtype_of(out))
    return _out(ctx, ctx.op("CumSum", [name, ctx.ints(dim)]), out)


@_reg(_la.einsum)
def _einsum(ctx, A, out):
    eq, *ops = A.get("args", ())
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    dt = _dtype_of(out)
    return _out(ctx, ctx.op("Einsum", [ctx.tensor(o, dt) for o in ops], equation=eq), out)


@_reg(F.pad)
def _pad(ctx, A, out):
    x = A["input"]
    pad = list(A["pad"])
    mode = A.get("mode", "constant")
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}.get(mode)
    if onnx_mode is None or not all(isinstance(p, int) for p in pad):
        raise UnsupportedOperatorError(f"aten::pad ({mode})", ctx.opset, None)
    # torch: (last_begin, last_end, prev_begin, prev_end, ...); ONNX: all begins, all ends
    begins, ends = [0] * x.rank, [0] * x.rank
    for i in range(len(pad) // 2):
        begins[x.rank - 1 - i] = pad[2 * i]
        ends[x.rank - 1 - i] = pad[2 * i + 1]
    ins = [ctx.tensor(x), ctx.ints(begins + ends)]
    if onnx_mode == "constant":
        ins.append(ctx.tensor(A.get("value") or 0, x.np_dtype))
    return _out(ctx, ctx.op("Pad", ins, mode=onnx_mode), out)


@_reg(Tensor.repeat)
def _repeat(ctx, A, out):
    x = A["input"]
    reps = _shape_args(A, "sizes")
    reps = list(reps) if not isinstance(reps, _V) else reps
    name = ctx.tensor(x)
    if isinstance(reps, list) and len(reps) > x.rank:
        extra = len(reps) - x.rank
        name = ctx.op("Reshape", [name, ctx.ints([1] * extra + list(x.value.shape))])
    return _out(ctx, ctx.op("Tile", [name, ctx.shape_tensor(reps)]), out)


_reg(Tensor.clamp_min)(_clip(lambda A: (A.get("min", A.get("arg1")), None)))
_reg(Tensor.clamp_max)(_clip(lambda A: (None, A.get("max", A.get("arg1")))))


@_reg(Tensor.square)
def _square(ctx, A, out):
    x = ctx.tensor(A["input"])
    return _out(ctx, ctx.op("Mul", [x, x]), out)


@_reg(F.hardsigmoid)
def _hardsigmoid(ctx, A, out):
    return _out(ctx, ctx.op("HardSigmoid", [ctx.tensor(A["input"])], alpha=1 / 6, beta=0.5), out)


@_reg(F.hardswish)
def _hardswish(ctx, A, out):
    return _out(ctx, ctx.op("HardSwish", [ctx.tensor(A["input"])]), out)


@_reg(F.mish)
def _mish(ctx, A, out):
    x = ctx.tensor(A["input"])
    return _out(ctx, ctx.op("Mul", [x, ctx.op("Tanh", [ctx.op("Softplus", [x])])]), out)


@_reg(F.conv_transpose1d, F.conv_transpose2d)
def _conv_transpose(ctx, A, out):
    x, w, b = A["input"], A["weight"], A.get("bias")
    n = x.rank - 2
    p = _pair(A.get("padding", 0), n)
    attrs = dict(
        kernel_shape=list(w.value.shape[2:]),
        strides=_pair(A.get("stride", 1), n),
        pads=p + p,
        output_padding=_pair(A.get("output_padding", 0), n),
        dilations=_pair(A.get("dilation", 1), n),
        group=int(A.get("groups", 1)),
    )
    ins = [ctx.tensor(x), ctx.tensor(w)] + ([ctx.tensor(b)] if b is not None else [])
    return _out(ctx, ctx.op("ConvTranspose", ins, **attrs), out)


def _reduce_mean(ctx, name: str, axes: list, keep: int = 1) -> str:
    if ctx.opset >= 18:
        return ctx.op("ReduceMean", [name, ctx.ints(axes)], keepdims=keep)
    return ctx.op("ReduceMean", [name], axes=axes, keepdims=keep)


def _affine(ctx, y: str, w, b, rank: int) -> str:
    """y * w + b with per-channel (dim 1) w and b."""
    axes = list(range(1, rank - 1))
    for t, op in ((w, "Mul"), (b, "Add")):
        if t is not None:
            tn = ctx.tensor(t)
            if axes:
                tn = ctx.op("Unsqueeze", [tn, ctx.ints(axes)])
            y = ctx.op(op, [y, tn])
    return y


@_reg(F.group_norm)
def _group_norm(ctx, A, out):
    x = A["input"]
    dt = x.np_dtype
    g = int(A["num_groups"])
    name = ctx.tensor(x)
    grouped = ctx.op("Reshape", [name, ctx.ints([0, g, -1])])
    mean = _reduce_mean(ctx, grouped, [2])
    d = ctx.op("Sub", [grouped, mean])
    var = _reduce_mean(ctx, ctx.op("Mul", [d, d]), [2])
    eps = ctx.const(np.asarray(float(A.get("eps", 1e-5)), dt))
    y = ctx.op("Div", [d, ctx.op("Sqrt", [ctx.op("Add", [var, eps])])])
    y = ctx.op("Reshape", [y, ctx.op("Shape", [name])])
    return _out(ctx, _affine(ctx, y, A.get("weight"), A.get("bias"), x.rank), out)


@_reg(F.instance_norm)
def _instance_norm(ctx, A, out):
    x = A["input"]
    if not A.get("use_input_stats", True):
        A = dict(A, momentum=0.1)
        return _batch_norm(ctx, A, out)
    c = x.value.shape[1]
    dt = x.np_dtype
    w, b = A.get("weight"), A.get("bias")
    ins = [
        ctx.tensor(x),
        ctx.tensor(w) if w is not None else ctx.const(np.ones(c, dt)),
        ctx.tensor(b) if b is not None else ctx.const(np.zeros(c, dt)),
    ]
    eps = float(A.get("eps", 1e-5))
    return _out(ctx, ctx.op("InstanceNormalization", ins, epsilon=eps), out)


@_reg(F.interpolate)
def _interpolate(ctx, A, out):
    x = A["input"]
    n = x.rank - 2
    mode = A.get("mode", "nearest")
    align = bool(A.get("align_corners") or False)
    if A.get("antialias") or mode not in ("nearest", "linear", "bilinear", "trilinear", "bicubic"):
        raise UnsupportedOperatorError(f"aten::upsample_{mode}", ctx.opset, None)
    attrs: dict = {}
    if mode == "nearest":
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric")
        attrs["nearest_mode"] = "floor"
    else:
        attrs = dict(mode="cubic" if mode == "bicubic" else "linear")
        attrs["coordinate_transformation_mode"] = "align_corners" if align else "pytorch_half_pixel"
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    name = ctx.tensor(x)
    size, sf = A.get("size"), A.get("scale_factor")
    if size is not None:
        size = list(size) if isinstance(size, (tuple, list)) else [size] * n
        lead = ctx.op("Slice", [ctx.op("Shape", [name]), ctx.ints([0]), ctx.ints([2])])
        sizes = ctx.op("Concat", [lead, ctx.shape_tensor(size)], axis=0)
        y = ctx.op("Resize", [name, "", "", sizes], **attrs)
    else:
        sf = [float(v) for v in sf] if isinstance(sf, (tuple, list)) else [float(sf)] * n
        if A.get("recompute_scale_factor"):
            raise UnsupportedOperatorError(
                "aten::upsample (recompute_scale_factor)", ctx.opset, None
            )
        scales = ctx.const(np.asarray([1.0, 1.0] + sf, np.float32))
        y = ctx.op("Resize", [name, "", scales], **attrs)
    return _out(ctx, y, out)


# -- shapes ---------------------------------------------------------------------------------


def _shape_args(A, key="shape"):
    s = A.get(key, A.get("size", ()))
    if isinstance(s, tuple) and len(s) == 1 and isinstance(s[0], (tuple, list, _V)):
        s = s[0]
        if isinstance(s, _V) and s.kind != "shape":
            s = (s,)
    return s


@_reg(Tensor.view, Tensor.reshape)
def _reshape(ctx, A, out):
    shape = _shape_args(A)
    return _out(ctx, ctx.op("Reshape", [ctx.tensor(A["input"]), ctx.shape_tensor(shape)]), out)


@_reg(Tensor.view_as, Tensor.reshape_as)
def _view_as(ctx, A, out):
    shape = ctx.op("Shape", [ctx.tensor(A["other"])])
    return _out(ctx, ctx.op("Reshape", [ctx.tensor(A["input"]), shape]), out)


@_reg(Tensor.flatten)
def _flatten(ctx, A, out):
    x = A["input"]
    r = x.rank
    s, e = _norm(A.get("start_dim", 0), r), _norm(A.get("end_dim", -1), r)
    if r == 0:
        return _out(ctx, ctx.op("Reshape", [ctx.tensor(x), ctx.ints([1])]), out)
    if e == r - 1 and s <= 1:
        y = ctx.op("Flatten", [ctx.tensor(x)], axis=s)
        if s == 0:
            y = ctx.op("Reshape", [y, ctx.ints([-1])])
        return _out(ctx, y, out)
    shp = ctx.op("Shape", [ctx.tensor(x)])
    parts = []
    if s > 0:
        parts.append(ctx.op("Slice", [shp, ctx.ints([0]), ctx.ints([s])]))
    parts.append(ctx.ints([-1]))
    if e < r - 1:
        parts.append(ctx.op("Slice", [shp, ctx.ints([e + 1]), ctx.ints([r])]))
    newshape = parts[0] if len(parts) == 1 else ctx.op("Concat", parts, axis=0)
    return _out(ctx, ctx.op("Reshape", [ctx.tensor(x), newshape]), out)


@_reg(Tensor.permute)
def _permute(ctx, A, out):
    x = A["input"]
    dims = A.get("dims")
    if isinstance(dims, tuple) and len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    perm = [_norm(int(d), x.rank) for d in dims]
    return _out(ctx, ctx.op("Transpose", [ctx.tensor(x)], perm=perm), out)


@_reg(Tensor.transpose, Tensor.swapaxes)
def _transpose(ctx, A, out):
    x = A["input"]
    d0 = _norm(A.get("dim0", A.get("axis0")), x.rank)
    d1 = _norm(A.get("dim1", A.get("axis1")), x.rank)
    perm = list(range(x.rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _out(ctx, ctx.op("Transpose", [ctx.tensor(x)], perm=perm), out)


@_reg(Tensor.t)
def _t(ctx, A, out):
    x = A["input"]
    if x.rank < 2:
        return x
    return _out(ctx, ctx.op("Transpose", [ctx.tensor(x)], perm=[1, 0]), out)


@_reg(Tensor.unsqueeze)
def _unsqueeze(ctx, A, out):
    x = A["input"]
    d = _norm(A["dim"], x.rank + 1)
    return _out(ctx, ctx.op("Unsqueeze", [ctx.tensor(x), ctx.ints([d])]), out)


@_reg(Tensor.squeeze)
def _squeeze(ctx, A, out):
    x = A["input"]
    dim = A.get("dim")
    if dim is None:
        dims = [i for i, s in enumerate(x.value.shape) if s == 1]
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_norm(d, x.rank) for d in dims if x.value.shape[_norm(d, x.rank)] == 1]
    if not dims:
        return x
    return _out(ctx, ctx.op("Squeeze", [ctx.tensor(x), ctx.ints(dims)]), out)


def _tensors(A) -> list:
    """cat's and stack's tensors (bound as "input" when given positionally)."""
    return A["tensors"] if "tensors" in A else A["input"]


@_reg(_sh.cat)
def _cat(ctx, A, out):
    ts = [t for t in _tensors(A) if not (isinstance(t, _V) and t.value.numel() == 0)]
    dt = _dtype_of(out)
    axis = _norm(A.get("dim", A.get("axis", 0)), out.dim())
    return _out(ctx, ctx.op("Concat", [ctx.tensor(t, dt) for t in ts], axis=axis), out)


@_reg(_sh.stack)
def _stack(ctx, A, out):
    dim = _norm(A.get("dim", 0), out.dim())
    dt = _dtype_of(out)
    ins = [ctx.op("Unsqueeze", [ctx.tensor(t, dt), ctx.ints([dim])]) for t in _tensors(A)]
    return _out(ctx, ctx.op("Concat", ins, axis=dim), out)


def _split_outputs(ctx, x, sizes, dim, out):
    names = ctx.op("Split", [ctx.tensor(x), ctx.ints(sizes)], n_out=len(sizes), axis=dim)
    names = names if isinstance(names, list) else [names]
    return tuple(_out(ctx, n, o) for n, o in zip(names, out))


@_reg(Tensor.split, Tensor.chunk, Tensor.tensor_split)
def _split(ctx, A, out):
    x = A["input"]
    dim = _norm(A.get("dim", 0), x.rank)
    return _split_outputs(ctx, x, [o.shape[dim] for o in out], dim, out)


@_reg(Tensor.unbind)
def _unbind(ctx, A, out):
    x = A["input"]
    dim = _norm(A.get("dim", 0), x.rank)
    parts = _split_outputs(ctx, x, [1] * len(out), dim, [o.unsqueeze(dim) for o in out])
    return tuple(
        _out(ctx, ctx.op("Squeeze", [p.name, ctx.ints([dim])]), o) for p, o in zip(parts, out)
    )


@_reg(Tensor.expand)
def _expand(ctx, A, out):
    x = A["input"]
    sizes = list(_shape_args(A, "sizes")) if not isinstance(_shape_args(A, "sizes"), _V) else None
    if sizes is None:
        shape = ctx.shape_tensor(_shape_args(A, "sizes"))
    else:
        # -1 keeps the input's size: take it from the input's shape
        shp = None
        items = []
        off = len(sizes) - x.rank
        for i, s in enumerate(sizes):
            if isinstance(s, int) and s == -1:
                shp = shp or ctx.op("Shape", [ctx.tensor(x)])
                g = ctx.op("Gather", [shp, ctx.ints(i - off)], axis=0)
                items.append(_V(g, x.value.shape[i - off], "scalar"))
            else:
                items.append(s)
        shape = ctx.shape_tensor(items)
    return _out(ctx, ctx.op("Expand", [ctx.tensor(x), shape]), out)


@_reg(Tensor.expand_as)
def _expand_as(ctx, A, out):
    shape = ctx.op("Shape", [ctx.tensor(A["other"])])
    return _out(ctx, ctx.op("Expand", [ctx.tensor(A["input"]), shape]), out)


@_reg(Tensor.size)
def _size(ctx, A, out):
    x = A["input"]
    shp = ctx.op("Shape", [ctx.tensor(x)])
    dim = A.get("dim")
    if dim is None:
        return _V(shp, tuple(x.value.shape), "shape")
    g = ctx.op("Gather", [shp, ctx.ints(_norm(dim, x.rank))], axis=0)
    return _V(g, out, "scalar")


@_reg(Tensor.dim, Tensor.ndimension)
def _dim(ctx, A, out):
    return A["input"].rank


@_reg(Tensor.numel)
def _numel(ctx, A, out):
    return _V(ctx.op("Size", [ctx.tensor(A["input"])]), out, "scalar")


def _cast_to(dtype_np):
    def conv(ctx, A, out):
        x = A["input"]
        return _V(ctx.cast(ctx.tensor(x), x.np_dtype, dtype_np), out, x.kind)

    return conv


_reg(Tensor.float)(_cast_to(np.float32))
_reg(Tensor.double)(_cast_to(np.float64))
_reg(Tensor.long)(_cast_to(np.int64))
_reg(Tensor.int)(_cast_to(np.int32))
_reg(Tensor.bool)(_cast_to(np.bool_))
_reg(Tensor.half)(_cast_to(np.float16))


@_reg(Tensor.to, Tensor.type, Tensor.type_as)
def _to(ctx, A, out):
    x = A["input"]
    if not isinstance(out, Tensor):
        return x
    return _out(ctx, ctx.cast(ctx.tensor(x), x.np_dtype, _dtype_of(out)), out)


def _filled(value):
    """ones/zeros/empty (``value``) and full (None: its fill_value)."""

    def conv(ctx, A, out):
        size = _shape_args(A, "size") if value is None else _shape_args(A, "shape")
        fill = _conc(A.get("fill_value")) if value is None else value
        arr = numpy_helper.from_array(np.asarray([fill], dtype=_dtype_of(out)))
        return _out(ctx, ctx.op("ConstantOfShape", [ctx.shape_tensor(size)], value=arr), out)

    return conv


def _filled_like(value):
    """ones_like/zeros_like/empty_like (``value``) and full_like (None: its fill_value)."""

    def conv(ctx, A, out):
        fill = _conc(A.get("fill_value")) if value is None else value
        arr = numpy_helper.from_array(np.asarray([fill], dtype=_dtype_of(out)))
        shp = ctx.op("Shape", [ctx.tensor(A["input"])])
        return _out(ctx, ctx.op("ConstantOfShape", [shp], value=arr), out)

    return conv


_reg(_creation.ones)(_filled(1))
_reg(_creation.zeros, _creation.empty)(_filled(0))
_reg(_creation.full)(_filled(None))
_reg(_creation.ones_like)(_filled_like(1))
_reg(_creation.zeros_like, _creation.empty_like)(_filled_like(0))
_reg(_creation.full_like)(_filled_like(None))


@_reg(_creation.arange)
def _arange(ctx, A, out):
    # arange(end) / arange(start, end[, step]); the signature binds them as start/end/step
    start, end, step = A.get("start"), A.get("end"), A.get("step", 1)
    if end is None:
        start, end = 0, start
    dt = _dtype_of(out)
    ins = [ctx.tensor(v, dt) for v in (start if start is not None else 0, end, step)]
    return _out(ctx, ctx.op("Range", ins), out)


# -- indexing -------------------------------------------------------------------------------


def _getitem(ctx, obj, idx, out):
    if isinstance(obj, (tuple, list)):
        return obj[idx]
    if not isinstance(obj, _V):
        return out
    if obj.kind == "scalar":
        raise UnsupportedOperatorError("aten::getitem", ctx.opset, None)
    idx = idx if isinstance(idx, tuple) else (idx,)
    rank = obj.rank
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    expanded: list = []
    for i in idx:
        if i is Ellipsis:
            expanded.extend([slice(None)] * (rank - n_real))
        else:
            expanded.append(i)
    name = ctx.tensor(obj)
    starts, ends, axes, steps = [], [], [], []
    gathers, nones = [], []
    axis = 0
    out_pos = 0
    for i in expanded:
        if i is None:
            nones.append(out_pos)
            out_pos += 1
        elif isinstance(i, slice):
            if not (i.start is None and i.stop is None and i.step is None):
                step = 1 if i.step is None else i.step
                if not isinstance(step, int) or step <= 0:
                    raise UnsupportedOperatorError("aten::slice", ctx.opset, None)
                starts.append(0 if i.start is None else i.start)
                ends.append(INT64_MAX if i.stop is None else i.stop)
                axes.append(axis)
                steps.append(step)
            axis += 1
            out_pos += 1
        elif isinstance(i, (int, _V)) and not (isinstance(i, _V) and i.kind == "tensor"):
            gathers.append((axis, i))
            axis += 1
        elif isinstance(i, _V) and i.kind == "tensor" and len(expanded) == 1:
            if i.np_dtype == np.bool_:
                raise UnsupportedOperatorError("aten::index", ctx.opset, None)
            y = ctx.op("Gather", [name, ctx.tensor(i, np.int64)], axis=0)
            return _V(y, out, obj.kind if obj.kind == "tensor" else "tensor")
        else:
            raise UnsupportedOperatorError("aten::index", ctx.opset, None)
    if axes:
        name = ctx.op(
            "Slice",
            [
                name,
                ctx.shape_tensor(starts),
                ctx.shape_tensor(ends),
                ctx.ints(axes),
                ctx.ints(steps),
            ],
        )
    for ax, i in reversed(gathers):
        ind = ctx.cast(ctx.tensor(i), _py_dtype(0) if isinstance(i, int) else i.np_dtype, np.int64)
        name = ctx.op("Gather", [name, ind], axis=ax)
    if nones:
        name = ctx.op("Unsqueeze", [name, ctx.ints(nones)])
    if obj.kind == "shape":
        return _out(ctx, name, out) if not isinstance(out, int) else _V(name, out, "scalar")
    return _out(ctx, name, out)


# -- nn -------------------------------------------------------------------------------------


@_reg(F.linear)
def _linear(ctx, A, out):
    x, w, b = A["input"], A["weight"], A.get("bias")
    if x.rank == 2:
        ins = [ctx.tensor(x), ctx.tensor(w)] + ([ctx.tensor(b)] if b is not None else [])
        return _out(ctx, ctx.op("Gemm", ins, alpha=1.0, beta=1.0, transB=1), out)
    wt = ctx.op("Transpose", [ctx.tensor(w)], perm=[1, 0])
    y = ctx.op("MatMul", [ctx.tensor(x), wt])
    if b is not None:
        y = ctx.op("Add", [y, ctx.tensor(b)])
    return _out(ctx, y, out)


@_reg(F.conv1d, F.conv2d, F.conv3d)
def _conv(ctx, A, out):
    x, w, b = A["input"], A["weight"], A.get("bias")
    n = x.rank - 2
    ks = list(w.value.shape[2:])
    stride = _pair(A.get("stride", 1), n)
    dil = _pair(A.get("dilation", 1), n)
    pad = A.get("padding", 0)
    if isinstance(pad, str):
        if pad == "valid":
            pads = [0] * (2 * n)
        else:  # 'same' (stride 1): the extra padding goes at the end, like torch
            tot = [d * (k - 1) for d, k in zip(dil, ks)]
            pads = [t // 2 for t in tot] + [t - t // 2 for t in tot]
    else:
        p = _pair(pad, n)
        pads = p + p
    ins = [ctx.tensor(x), ctx.tensor(w)] + ([ctx.tensor(b)] if b is not None else [])
    y = ctx.op(
        "Conv",
        ins,
        dilations=dil,
        group=int(A.get("groups", 1)),
        kernel_shape=ks,
        pads=pads,
        strides=stride,
    )
    return _out(ctx, y, out)


def _pool(onnx_op):
    def conv(ctx, A, out):
        x = A["input"]
        n = x.rank - 2
        k = _pair(A["kernel_size"], n)
        s = A.get("stride")
        s = k if s is None or s == [] or s == () else _pair(s, n)
        p = _pair(A.get("padding", 0), n)
        attrs = dict(
            kernel_shape=k, strides=s, pads=p + p, ceil_mode=int(A.get("ceil_mode", False))
        )
        if onnx_op == "MaxPool":
            d = _pair(A.get("dilation", 1), n)
            if A.get("return_indices"):
                raise UnsupportedOperatorError("aten::max_pool2d_with_indices", ctx.opset, None)
            if any(v != 1 for v in d):
                attrs["dilations"] = d
        else:
            if A.get("divisor_override") is not None:
                raise UnsupportedOperatorError("aten::avg_pool2d", ctx.opset, None)
            attrs["count_include_pad"] = int(A.get("count_include_pad", True))
        return _out(ctx, ctx.op(onnx_op, [ctx.tensor(x)], **attrs), out)

    return conv


_max_pool = _reg(F.max_pool1d, F.max_pool2d)(_pool("MaxPool"))
_avg_pool = _reg(F.avg_pool1d, F.avg_pool2d)(_pool("AveragePool"))


def _adaptive(onnx_global, fn_name):
    def conv(ctx, A, out):
        x = A["input"]
        n = x.rank - 2
        osz = A["output_size"]
        osz = [osz] * n if not isinstance(osz, (tuple, list)) else list(osz)
        if all(o == 1 for o in osz):
            return _out(ctx, ctx.op(onnx_global, [ctx.tensor(x)]), out)
        ins = list(x.value.shape[2:])
        osz = [i if o is None else o for i, o in zip(ins, osz)]
        if all(i % o == 0 for i, o in zip(ins, osz)):  # a plain pool with a static window
            k = [i // o for i, o in zip(ins, osz)]
            op = "AveragePool" if onnx_global == "GlobalAveragePool" else "MaxPool"
            return _out(ctx, ctx.op(op, [ctx.tensor(x)], kernel_shape=k, strides=k), out)
        raise UnsupportedOperatorError(f"aten::{fn_name}", ctx.opset, None)

    return conv


_adaptive_avg_pool1d = _adaptive("GlobalAveragePool", "adaptive_avg_pool1d")
_adaptive_avg_pool2d = _adaptive("GlobalAveragePool", "adaptive_avg_pool2d")
_adaptive_max_pool2d = _adaptive("GlobalMaxPool", "adaptive_max_pool2d")
_reg(F.adaptive_avg_pool1d)(_adaptive_avg_pool1d)
_reg(F.adaptive_avg_pool2d)(_adaptive_avg_pool2d)
_reg(F.adaptive_max_pool2d)(_adaptive_max_pool2d)


@_reg(F.batch_norm)
def _batch_norm(ctx, A, out):
    x = A["input"]
    c = x.value.shape[1]
    dt = x.np_dtype
    w = A.get("weight")
    b = A.get("bias")
    mean, var = A.get("running_mean"), A.get("running_var")
    if mean is None or var is None:
        raise UnsupportedOperatorError("aten::batch_norm", ctx.opset, None)
    ins = [
        ctx.tensor(x),
        ctx.tensor(w) if w is not None else ctx.const(np.ones(c, dt)),
        ctx.tensor(b) if b is not None else ctx.const(np.zeros(c, dt)),
        ctx.tensor(mean),
        ctx.tensor(var),
    ]
    eps = float(A.get("eps", 1e-5))
    y = ctx.op("BatchNormalization", ins, epsilon=eps, momentum=1.0 - float(A.get("momentum", 0.1)))
    return _out(ctx, y, out)


@_reg(F.layer_norm)
def _layer_norm(ctx, A, out):
    x = A["input"]
    ns = A["normalized_shape"]
    ns = [ns] if isinstance(ns, int) else list(ns)
    axis = x.rank - len(ns)
    dt = x.np_dtype
    w, b = A.get("weight"), A.get("bias")
    eps = float(A.get("eps", 1e-5))
    if ctx.opset >= 17:
        ins = [ctx.tensor(x), ctx.tensor(w) if w is not None else ctx.const(np.ones(ns, dt))]
        if b is not None:
            ins.append(ctx.tensor(b))
        return _out(ctx, ctx.op("LayerNormalization", ins, axis=axis, epsilon=eps), out)
    axes = list(range(axis, x.rank))
    name = ctx.tensor(x)
    mean = ctx.op("ReduceMean", [name], axes=axes, keepdims=1)
    d = ctx.op("Sub", [name, mean])
    var = ctx.op("ReduceMean", [ctx.op("Mul", [d, d])], axes=axes, keepdims=1)
    y = ctx.op("Div", [d, ctx.op("Sqrt", [ctx.op("Add", [var, ctx.const(np.asarray(eps, dt))])])])
    if w is not None:
        y = ctx.op("Mul", [y, ctx.tensor(w)])
    if b is not None:
        y = ctx.op("Add", [y, ctx.tensor(b)])
    return _out(ctx, y, out)


@_reg(F.embedding)
def _embedding(ctx, A, out):
    if A.get("max_norm") is not None:
        raise UnsupportedOperatorError("aten::embedding_renorm", ctx.opset, None)
    idx = A["input"]
    ind = ctx.tensor(idx) if idx.np_dtype in (np.int64, np.int32) else ctx.tensor(idx, np.int64)
    return _out(ctx, ctx.op("Gather", [ctx.tensor(A["weight"]), ind], axis=0), out)


@_reg(F.scaled_dot_product_attention)
def _sdpa(ctx, A, out):
    q, k, v = A["query"] if "query" in A else A["input"], A["key"], A["value"]
    dt = q.np_dtype
    mask = A.get("attn_mask")
    scale = A.get("scale")
    if A.get("enable_gqa"):
        raise UnsupportedOperatorError("aten::scaled_dot_product_attention", ctx.opset, None)
    qn, kn, vn = ctx.tensor(q), ctx.tensor(k), ctx.tensor(v)
    perm = list(range(k.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    kt = ctx.op("Transpose", [kn], perm=perm)
    if scale is None:  # 1/sqrt(E) from the query's last size (dynamic)
        e = ctx.op("Gather", [ctx.op("Shape", [qn]), ctx.ints(q.rank - 1)], axis=0)
        sc = ctx.op(
            "Div", [ctx.const(np.asarray(1.0, dt)), ctx.op("Sqrt", [ctx.cast(e, np.int64, dt)])]
        )
    else:
        sc = ctx.tensor(scale, dt)
    scores = ctx.op("Mul", [ctx.op("MatMul", [qn, kt]), sc])
    neg_inf = ctx.const(np.asarray(-np.inf, dt))
    if A.get("is_causal"):
        # ones(L, S) lower-triangular from the dynamic sizes of q and k
        L = ctx.op("Gather", [ctx.op("Shape", [qn]), ctx.ints([q.rank - 2])], axis=0)
        S = ctx.op("Gather", [ctx.op("Shape", [kn]), ctx.ints([k.rank - 2])], axis=0)
        ones = ctx.op(
            "ConstantOfShape",
            [ctx.op("Concat", [L, S], axis=0)],
            value=numpy_helper.from_array(np.asarray([1], np.bool_)),
        )
        keep = ctx.op("Trilu", [ones], upper=0)
        scores = ctx.op("Where", [keep, scores, neg_inf])
    if mask is not None:
        if mask.np_dtype == np.bool_:
            scores = ctx.op("Where", [ctx.tensor(mask), scores, neg_inf])
        else:
            scores = ctx.op("Add", [scores, ctx.tensor(mask, dt)])
    attn = ctx.op("Softmax", [scores], axis=-1)
    return _out(ctx, ctx.op("MatMul", [attn, vn]), out)


# -- operator / builtins ----------------------------------------------------------------------

# Python's operators, as the ember functions they run
_OPERATORS = {
    operator.add: Tensor.add,
    operator.sub: Tensor.sub,
    operator.mul: Tensor.mul,
    operator.truediv: Tensor.div,
    operator.pow: Tensor.pow,
    operator.matmul: Tensor.matmul,
    operator.floordiv: Tensor.floor_divide,
    operator.eq: Tensor.eq,
    operator.ne: Tensor.ne,
    operator.lt: Tensor.lt,
    operator.gt: Tensor.gt,
    operator.le: Tensor.le,
    operator.ge: Tensor.ge,
}


def _operator_call(ctx, target, args, out):
    if target is operator.getitem:
        return _getitem(ctx, args[0], args[1], out)
    if target is builtins.getattr:
        obj, attr = args
        if isinstance(obj, tuple) and attr in ("values", "indices"):
            return obj[0 if attr == "values" else 1]
        if attr == "shape" and isinstance(obj, _V):
            return _V(ctx.op("Shape", [ctx.tensor(obj)]), tuple(obj.value.shape), "shape")
        if attr in ("T", "mT") and isinstance(obj, _V):
            perm = list(range(obj.rank))[::-1] if attr == "T" else None
            if perm is None:
                perm = list(range(obj.rank))
                perm[-1], perm[-2] = perm[-2], perm[-1]
            return _out(ctx, ctx.op("Transpose", [ctx.tensor(obj)], perm=perm), out)
        if attr in ("dtype", "device", "ndim", "is_cuda", "requires_grad", "training"):
            return obj.rank if attr == "ndim" and isinstance(obj, _V) else out
        raise UnsupportedOperatorError(f"aten::{attr}", ctx.opset, None)
    if target is operator.neg:
        return _neg(ctx, {"input": args[0]}, out)
    if target is operator.pos:
        return args[0]
    if target in (operator.and_, operator.or_, operator.xor):
        op = {operator.and_: "And", operator.or_: "Or", operator.xor: "Xor"}[target]
        if _dtype_of(out) != np.bool_:
            raise UnsupportedOperatorError(
                f"aten::bitwise_{target.__name__.strip('_')}", ctx.opset, None
            )
        return _out(
            ctx, ctx.op(op, [ctx.tensor(args[0], np.bool_), ctx.tensor(args[1], np.bool_)]), out
        )
    if target is operator.invert and _dtype_of(out) == np.bool_:
        return _out(ctx, ctx.op("Not", [ctx.tensor(args[0])]), out)
    fn = _OPERATORS.get(target)
    if fn is None:
        raise UnsupportedOperatorError(
            f"aten::{getattr(target, '__name__', target)}", ctx.opset, None
        )
    return _FUNCS[_impl(fn)](ctx, {"input": args[0], "other": args[1]}, out)


_MATH_ORIG = {getattr(math, n) for n in _MATH_FUNCS}
_MATH_OPS = {"sqrt": "Sqrt", "exp": "Exp", "log": "Log", "floor": "Floor", "ceil": "Ceil"}
_MATH_OPS.update(sin="Sin", cos="Cos", tanh="Tanh", fabs="Abs")


def _math_call(ctx, target, args, out):
    (x,) = args
    if target.__name__ not in _MATH_OPS:
        raise UnsupportedOperatorError(f"math::{target.__name__}", ctx.opset, None)
    y = ctx.op(_MATH_OPS[target.__name__], [ctx.tensor(x, np.float32)])
    if isinstance(out, int):  # floor/ceil return ints
        y = ctx.cast(y, np.float32, np.int64)
    return _V(y, out, "scalar")


# -- modules ----------------------------------------------------------------------------------

# The converters of ember.nn's modules, keyed by the class: conv(ctx, m, path, args, kwargs,
# out), path being the module's name in the model (its parameters' prefix).
_MODULES: dict = {}


def _reg_module(*classes):
    def deco(conv):
        for cls in classes:
            _MODULES[cls] = conv
        return conv

    return deco


def _module_converter(cls):
    """The converter for a module of class ``cls``: its own class's, or its nearest base
    class's if ``cls`` runs that base's ``forward`` (a user's ``Linear`` subclass that adds
    attributes or its own initialisation: it computes what Linear does); None otherwise (a
    subclass with its own ``forward`` is traced through like any module of the user's)."""
    for base in cls.__mro__:
        conv = _MODULES.get(base)
        if conv is not None:
            return conv if cls.forward is base.forward else None
    return None


def _one_input(fn):
    """A module converter for modules called with their input alone: fn(ctx, m, path, x, out)."""

    def conv(ctx, m, path, args, kwargs, out):
        if args[1:] or kwargs:
            raise OnnxExporterError(f"module {path} called with extra arguments")
        return fn(ctx, m, path, args[0], out)

    return conv


def _pfx(path: str) -> str:
    return f"{path}." if path else ""


@_reg_module(nn.Linear)
@_one_input
def _mod_linear(ctx, m, path, x, out):
    w = _V(ctx.init(f"{_pfx(path)}weight", m.weight), m.weight)
    b = _V(ctx.init(f"{_pfx(path)}bias", m.bias), m.bias) if m.bias is not None else None
    return _linear(ctx, {"input": x, "weight": w, "bias": b}, out)


@_reg_module(nn.Conv1d, nn.Conv2d, nn.Conv3d)
@_one_input
def _mod_conv(ctx, m, path, x, out):
    if getattr(m, "padding_mode", "zeros") != "zeros":
        raise UnsupportedOperatorError(f"ember::nn.{type(m).__name__}", ctx.opset, None)
    w = _V(ctx.init(f"{_pfx(path)}weight", m.weight), m.weight)
    b = _V(ctx.init(f"{_pfx(path)}bias", m.bias), m.bias) if m.bias is not None else None
    A = dict(input=x, weight=w, bias=b, stride=m.stride, padding=m.padding)
    A.update(dilation=m.dilation, groups=m.groups)
    return _conv(ctx, A, out)


def _pool_args(m, x) -> dict:
    A = dict(input=x, kernel_size=m.kernel_size, stride=m.stride, padding=m.padding)
    A["ceil_mode"] = m.ceil_mode
    return A


@_reg_module(nn.MaxPool1d, nn.MaxPool2d)
@_one_input
def _mod_max_pool(ctx, m, path, x, out):
    A = _pool_args(m, x)
    A.update(dilation=m.dilation, return_indices=getattr(m, "return_indices", False))
    return _max_pool(ctx, A, out)


@_reg_module(nn.AvgPool1d, nn.AvgPool2d)
@_one_input
def _mod_avg_pool(ctx, m, path, x, out):
    A = _pool_args(m, x)
    A["count_include_pad"] = m.count_include_pad
    # AvgPool1d has no divisor_override (as torch's)
    A["divisor_override"] = getattr(m, "divisor_override", None)
    return _avg_pool(ctx, A, out)


def _mod_adaptive(conv):
    @_one_input
    def mod(ctx, m, path, x, out):
        return conv(ctx, {"input": x, "output_size": m.output_size}, out)

    return mod


_reg_module(nn.AdaptiveAvgPool1d)(_mod_adaptive(_adaptive_avg_pool1d))
_reg_module(nn.AdaptiveAvgPool2d)(_mod_adaptive(_adaptive_avg_pool2d))
_reg_module(nn.AdaptiveMaxPool2d)(_mod_adaptive(_adaptive_max_pool2d))


@_reg_module(nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
@_one_input
def _mod_batch_norm(ctx, m, path, x, out):
    def p(name):
        t = getattr(m, name)
        return None if t is None else _V(ctx.init(f"{_pfx(path)}{name}", t), t)

    if m.training and m.track_running_stats is not False:
        pass  # export runs in eval mode (training=EVAL), so running stats are used
    if getattr(m, "running_mean", None) is None:
        raise UnsupportedOperatorError(f"ember::nn.{type(m).__name__}", ctx.opset, None)
    A = dict(input=x, weight=p("weight"), bias=p("bias"))
    A.update(running_mean=p("running_mean"), running_var=p("running_var"), eps=m.eps)
    A["momentum"] = m.momentum if m.momentum is not None else 0.1
    return _batch_norm(ctx, A, out)


@_reg_module(nn.LayerNorm)
@_one_input
def _mod_layer_norm(ctx, m, path, x, out):
    w = _V(ctx.init(f"{_pfx(path)}weight", m.weight), m.weight) if m.weight is not None else None
    b = (
        _V(ctx.init(f"{_pfx(path)}bias", m.bias), m.bias)
        if getattr(m, "bias", None) is not None
        else None
    )
    A = dict(input=x, normalized_shape=m.normalized_shape, weight=w, bias=b, eps=m.eps)
    return _layer_norm(ctx, A, out)


@_reg_module(nn.ConvTranspose1d, nn.ConvTranspose2d)
@_one_input
def _mod_conv_transpose(ctx, m, path, x, out):
    w = _V(ctx.init(f"{_pfx(path)}weight", m.weight), m.weight)
    b = _V(ctx.init(f"{_pfx(path)}bias", m.bias), m.bias) if m.bias is not None else None
    A = dict(input=x, weight=w, bias=b, stride=m.stride, padding=m.padding)
    A.update(output_padding=m.output_padding, dilation=m.dilation, groups=m.groups)
    return _conv_transpose(ctx, A, out)


def _param(ctx, m, path, name):
    t = getattr(m, name, None)
    return None if t is None else _V(ctx.init(f"{_pfx(path)}{name}", t), t)


@_reg_module(nn.GroupNorm)
@_one_input
def _mod_group_norm(ctx, m, path, x, out):
    weight, bias = _param(ctx, m, path, "weight"), _param(ctx, m, path, "bias")
    A = dict(input=x, num_groups=m.num_groups, weight=weight, bias=bias, eps=m.eps)
    return _group_norm(ctx, A, out)


@_reg_module(nn.InstanceNorm1d, nn.InstanceNorm2d)
@_one_input
def _mod_instance_norm(ctx, m, path, x, out):
    def p(name):
        return _param(ctx, m, path, name)

    use_input = not (m.track_running_stats and getattr(m, "running_mean", None) is not None)
    A = dict(input=x, weight=p("weight"), bias=p("bias"), eps=m.eps, use_input_stats=use_input)
    if not use_input:
        A.update(running_mean=p("running_mean"), running_var=p("running_var"))
    return _instance_norm(ctx, A, out)


@_reg_module(nn.Upsample)
@_one_input
def _mod_upsample(ctx, m, path, x, out):
    A = dict(input=x, size=m.size, scale_factor=m.scale_factor, mode=m.mode)
    A.update(align_corners=m.align_corners, recompute_scale_factor=m.recompute_scale_factor)
    return _interpolate(ctx, A, out)


@_reg_module(nn.MultiheadAttention)
def _mod_mha(ctx, m, path, args, kwargs, out):
    """nn.MultiheadAttention (eval): in-projection, scaled dot-product attention per head,
    out-projection; the weights averaged over heads (or not) when asked for."""
    A = _bind(m.forward, args, kwargs)
    if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
        raise UnsupportedOperatorError("ember::nn.MultiheadAttention", ctx.opset, None)
    q, k, v = A["input"], A["key"], A["value"]
    E, H = m.embed_dim, m.num_heads
    D = E // H
    dt = q.np_dtype
    unbatched = q.rank == 2

    def prep(t):
        n = ctx.tensor(t)
        if unbatched:
            return ctx.op("Unsqueeze", [n, ctx.ints([0])])
        return n if m.batch_first else ctx.op("Transpose", [n], perm=[1, 0, 2])

    W = ctx.init(f"{_pfx(path)}in_proj_weight", m.in_proj_weight)
    B = (
        ctx.init(f"{_pfx(path)}in_proj_bias", m.in_proj_bias)
        if m.in_proj_bias is not None
        else None
    )

    def project(t, i):
        w = ctx.op("Slice", [W, ctx.ints([i * E]), ctx.ints([(i + 1) * E]), ctx.ints([0])])
        y = ctx.op("MatMul", [t, ctx.op("Transpose", [w], perm=[1, 0])])
        if B is not None:
            y = ctx.op("Add", [y, ctx.op("Slice", [B, ctx.ints([i * E]), ctx.ints([(i + 1) * E])])])
        y = ctx.op("Reshape", [y, ctx.ints([0, 0, H, D])])  # (N, L, H, D)
        return ctx.op("Transpose", [y], perm=[0, 2, 1, 3])  # (N, H, L, D)

    qh, kh, vh = project(prep(q), 0), project(prep(k), 1), project(prep(v), 2)
    scores = ctx.op("MatMul", [qh, ctx.op("Transpose", [kh], perm=[0, 1, 3, 2])])
    scores = ctx.op("Mul", [scores, ctx.const(np.asarray(1.0 / math.sqrt(D), dt))])
    neg_inf = ctx.const(np.asarray(-np.inf, dt))
    mask = A.get("attn_mask")
    if mask is None and A.get("is_causal"):
        raise UnsupportedOperatorError("ember::nn.MultiheadAttention (is_causal)", ctx.opset, None)
    if mask is not None:
        mn = ctx.tensor(mask)
        if mask.rank == 3:  # (N*H, L, S) -> (N, H, L, S)
            tail = ctx.op("Slice", [ctx.op("Shape", [mn]), ctx.ints([1]), ctx.ints([3])])
            mn = ctx.op("Reshape", [mn, ctx.op("Concat", [ctx.ints([-1, H]), tail], axis=0)])
        if mask.np_dtype == np.bool_:  # True: not allowed to attend
            scores = ctx.op("Where", [mn, neg_inf, scores])
        else:
            scores = ctx.op("Add", [scores, ctx.cast(mn, mask.np_dtype, dt)])
    kpm = A.get("key_padding_mask")
    if kpm is not None:
        kn = ctx.tensor(kpm)
        kn = ctx.op("Unsqueeze", [kn, ctx.ints([0] if unbatched else [1, 2])])
        if unbatched:
            kn = ctx.op("Unsqueeze", [kn, ctx.ints([1, 2])])
        if kpm.np_dtype == np.bool_:
            scores = ctx.op("Where", [kn, neg_inf, scores])
        else:
            scores = ctx.op("Add", [scores, ctx.cast(kn, kpm.np_dtype, dt)])
    attn = ctx.op("Softmax", [scores], axis=-1)
    y = ctx.op("Transpose", [ctx.op("MatMul", [attn, vh])], perm=[0, 2, 1, 3])
    y = ctx.op("Reshape", [y, ctx.ints([0, 0, E])])
    ow = ctx.init(f"{_pfx(path)}out_proj.weight", m.out_proj.weight)
    y = ctx.op("MatMul", [y, ctx.op("Transpose", [ow], perm=[1, 0])])
    if m.out_proj.bias is not None:
        y = ctx.op("Add", [y, ctx.init(f"{_pfx(path)}out_proj.bias", m.out_proj.bias)])
    if unbatched:
        y = ctx.op("Squeeze", [y, ctx.ints([0])])
    elif not m.batch_first:
        y = ctx.op("Transpose", [y], perm=[1, 0, 2])
    o, w = out
    weights = None
    if w is not None:
        wn = attn
        if A.get("average_attn_weights", True):
            wn = _reduce_mean(ctx, wn, [1], keep=0)
        if unbatched:
            wn = ctx.op("Squeeze", [wn, ctx.ints([0])])
        weights = _out(ctx, wn, w)
    return (_out(ctx, y, o), weights)


@_reg_module(nn.Embedding)
@_one_input
def _mod_embedding(ctx, m, path, x, out):
    w = _V(ctx.init(f"{_pfx(path)}weight", m.weight), m.weight)
    return _embedding(ctx, {"input": x, "weight": w, "max_norm": m.max_norm}, out)


def _mod_simple(conv, **fields):
    """A module that is its functional form: ``conv`` with the module's attributes
    (``fields``: argument name -> attribute) as arguments."""

    @_one_input
    def mod(ctx, m, path, x, out):
        A = {"input": x}
        for k, attr in fields.items():
            A[k] = getattr(m, attr)
        return conv(ctx, A, out)

    return mod


@_reg_module(nn.LSTM)
def _mod_lstm(ctx, m, path, args, kwargs, out):
    """nn.LSTM (unidirectional or bidirectional, any number of layers, no projections) as
    ONNX LSTM nodes, one per layer. ONNX orders the gates i, o, f, c; torch i, f, g, o."""
    x = args[0]
    extra = list(args[1:]) + list(kwargs.values())
    hx = extra[0] if extra else None
    if getattr(m, "proj_size", 0):
        raise UnsupportedOperatorError("ember::nn.LSTM", ctx.opset, None)
    H = m.hidden_size
    dirs = 2 if m.bidirectional else 1
    dt = x.np_dtype
    seq = ctx.tensor(x)
    if m.batch_first:
        seq = ctx.op("Transpose", [seq], perm=[1, 0, 2])
    h0c0 = None
    if hx is not None:
        h0c0 = (ctx.tensor(hx[0]), ctx.tensor(hx[1]))

    def reorder(t):  # (4H, ...) torch i,f,g,o -> onnx i,o,f,c
        a = t.detach().numpy()
        i, f, g, o = np.split(a, 4, axis=0)
        return np.concatenate([i, o, f, g], axis=0)

    hs, cs = [], []
    for layer in range(m.num_layers):
        Ws, Rs, Bs = [], [], []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            Ws.append(reorder(getattr(m, "weight_ih" + sfx)))
            Rs.append(reorder(getattr(m, "weight_hh" + sfx)))
            if m.bias:
                b = np.concatenate(
                    [reorder(getattr(m, "bias_ih" + sfx)), reorder(getattr(m, "bias_hh" + sfx))]
                )
            else:
                b = np.zeros(8 * H, dt)
            Bs.append(b)
        W = ctx.const(np.stack(Ws).astype(dt))
        R = ctx.const(np.stack(Rs).astype(dt))
        B = ctx.const(np.stack(Bs).astype(dt))
        ins = [seq, W, R, B, ""]
        if h0c0 is not None:
            sl = [ctx.ints([layer * dirs]), ctx.ints([(layer + 1) * dirs]), ctx.ints([0])]
            ins += [ctx.op("Slice", [h0c0[0], *sl]), ctx.op("Slice", [h0c0[1], *sl])]
        y, yh, yc = ctx.op(
            "LSTM",
            ins,
            n_out=3,
            hidden_size=H,
            direction="bidirectional" if dirs == 2 else "forward",
        )
        # Y: (seq, dirs, batch, H) -> (seq, batch, dirs*H)
        y = ctx.op("Transpose", [y], perm=[0, 2, 1, 3])
        seq = ctx.op("Reshape", [y, ctx.ints([0, 0, -1])])
        hs.append(yh)
        cs.append(yc)
    if m.batch_first:
        seq = ctx.op("Transpose", [seq], perm=[1, 0, 2])
    h = hs[0] if len(hs) == 1 else ctx.op("Concat", hs, axis=0)
    c = cs[0] if len(cs) == 1 else ctx.op("Concat", cs, axis=0)
    o, (ho, co) = out
    return (_out(ctx, seq, o), (_out(ctx, h, ho), _out(ctx, c, co)))


_reg_module(nn.Hardsigmoid)(_mod_simple(_hardsigmoid))
_reg_module(nn.Hardswish)(_mod_simple(_hardswish))
_reg_module(nn.Mish)(_mod_simple(_mish))
_reg_module(nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.AlphaDropout, nn.Identity)(
    _mod_simple(_identity)
)
_reg_module(nn.ReLU)(_mod_simple(_relu))
_reg_module(nn.ReLU6)(_mod_simple(_relu6))
_reg_module(nn.Tanh)(_mod_simple(_tanh))
_reg_module(nn.Sigmoid)(_mod_simple(_sigmoid))
_reg_module(nn.SiLU)(_mod_simple(_silu))
_reg_module(nn.ELU)(_mod_simple(_elu, alpha="alpha"))
_reg_module(nn.Softplus)(_mod_simple(_softplus))
_reg_module(nn.GELU)(_mod_simple(_gelu, approximate="approximate"))
_reg_module(nn.LeakyReLU)(_mod_simple(_leaky_relu, negative_slope="negative_slope"))
_reg_module(nn.Hardtanh)(_mod_simple(_hardtanh, min_val="min_val", max_val="max_val"))
_reg_module(nn.Softmax)(_mod_simple(_softmax, dim="dim"))
_reg_module(nn.LogSoftmax)(_mod_simple(_log_softmax, dim="dim"))
_reg_module(nn.Flatten)(_mod_simple(_flatten, start_dim="start_dim", end_dim="end_dim"))


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------


def _bind(fn, args, kwargs) -> dict:
    try:
        sig = inspect.signature(fn)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        A = {"input": args[0] if args else None}
        A.update({f"arg{i}": a for i, a in enumerate(args[1:], 1)})
        A.update(kwargs)
        return A
    A = dict(bound.arguments)
    params = list(sig.parameters)
    first = next(iter(sig.parameters.values()), None)
    if (
        first is not None
        and first.name in A
        and "input" not in params
        and first.kind is not inspect.Parameter.VAR_POSITIONAL
    ):
        A["input"] = A.pop(first.name)
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD and p.name in A:
            A.update(A.pop(p.name))
    return A


def _method_converter(name: str):
    """(converter, Tensor's method) for a method called by name; an in-place method
    (``add_``) converts as its out-of-place twin, which the caller rebinds."""
    if name.endswith("_") and not name.startswith("_"):
        name = name.rstrip("_")
    fn = getattr(Tensor, name, None)
    return (None if fn is None else _FUNCS.get(_impl(fn))), fn


def _display_name(target) -> str:
    """The op's name in UnsupportedOperatorError: ``aten::<name>``, as torch's."""
    if isinstance(target, str):
        name = target
    else:
        name = (_public_name(target) or getattr(target, "__name__", str(target))).rsplit(".")[-1]
    return name.rstrip("_") if name.endswith("_") and not name.startswith("_") else name


# Public functions defined in the package root itself (ember/__init__.py), which the exporter
# does not import (it would import the whole package): known by their public name, as the
# Tensor method they compute, until they move to a module of their own.
_ROOT_FUNCTIONS = {"ember.numel": Tensor.numel}


def _convert_function(ctx, node, args, kwargs, out):
    target = node.target
    if target in (_assert, _assert_is_none):
        return None
    if node.op == "call_method":
        conv, fn = _method_converter(target)
    else:
        if isinstance(target, type(operator.add)) and getattr(target, "__module__", None) in (
            "_operator",
            "operator",
            "builtins",
        ):
            return _operator_call(ctx, target, args, out)
        if target in _OPERATORS or target is operator.getitem or target is builtins.getattr:
            return _operator_call(ctx, target, args, out)
        if getattr(target, "__module__", None) == "math" or target in _MATH_ORIG:
            return _math_call(ctx, target, args, out)
        fn = target
        try:
            conv = _FUNCS.get(_impl(target))
        except TypeError:  # an unhashable callable: not one of ember's functions
            conv = None
        if conv is None and _is_tensor_method(target):  # Tensor.add_(x, 1): as x.add_(1)
            conv, method = _method_converter(target.__name__)
            fn = target if method is None else method
        if conv is None and _public_name(target) in _ROOT_FUNCTIONS:
            conv = _FUNCS.get(_impl(_ROOT_FUNCTIONS[_public_name(target)]))
    if conv is None:
        raise UnsupportedOperatorError(f"aten::{_display_name(target)}", ctx.opset, None)
    A = _bind(fn, args, kwargs) if fn is not None else {"input": args[0]}
    for alias in ("mat2", "exponent", "target"):
        if alias in A and "other" not in A:
            A["other"] = A.pop(alias)
    return conv(ctx, A, out)


def _is_tensor_method(fn) -> bool:
    name = getattr(fn, "__name__", None)
    return isinstance(name, str) and vars(Tensor).get(name) is fn


def _flatten_outputs(rep, value, acc):
    if isinstance(rep, (tuple, list)) and not (isinstance(rep, _V)):
        for r, v in zip(rep, value):
            _flatten_outputs(r, v, acc)
    elif isinstance(rep, dict):
        for k in rep:
            _flatten_outputs(rep[k], value[k], acc)
    elif rep is not None:
        acc.append((rep, value))


def build_model(
    model,
    args: tuple,
    kwargs: dict,
    opset: int,
    input_names,
    output_names,
    dynamic_axes,
    export_params: bool,
    keep_initializers_as_inputs: bool,
    do_constant_folding: bool = True,
):
    """Trace ``model`` and return (onnx.ModelProto, flat eager outputs)."""
    if not isinstance(model, nn.Module):
        raise OnnxExporterError(f"ember.onnx.export needs an nn.Module, got {type(model).__name__}")
    sig = inspect.signature(type(model).forward)
    params = [p for p in list(sig.parameters.values())[1:]]
    # which forward parameters get example values
    given: dict = {}
    for p, a in zip(params, args):
        given[p.name] = a
    given.update(kwargs or {})
    concrete: dict = {}
    tensor_params = []
    for p in params:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise OnnxExporterError("ember.onnx.export does not support *args/**kwargs in forward")
        if p.name in given and _is_tensor_tree(given[p.name]):
            tensor_params.append(p.name)
        elif p.name in given:
            concrete[p.name] = given[p.name]
        elif p.default is not inspect.Parameter.empty:
            concrete[p.name] = p.default
        else:
            raise OnnxExporterError(f"no example value for forward's argument '{p.name}'")
    tracer = _OnnxTracer()
    tracer.examples = {p: given[p] for p in tensor_params}
    tracer.examples.update({f"{k}_1": v for k, v in concrete.items()})  # specialised args
    dyn = _normalize_dynamic_axes(dynamic_axes or {})
    names = list(input_names or [])
    flat_i = 0
    for p in tensor_params:  # input names count the tensors of nested inputs one by one
        name = names[flat_i] if flat_i < len(names) else p
        flat_i += len(_flat([given[p]]))
        if isinstance(given[p], Tensor) and dyn.get(name):
            tracer.dynamic[p] = sorted(dyn[name])
    if tracer.is_leaf_module(model, ""):
        # the root itself is an ember.nn module: record it as a single call
        graph = Graph()
        phs = [
            graph.placeholder(p.name) if p.name in tensor_params else concrete[p.name]
            for p in params
        ]
        graph.output(graph.call_module("", tuple(phs)))
        root = model
    else:
        graph = tracer.trace(model, concrete_args=concrete or None)
        root = tracer.root
    ctx = _Ctx(root, opset)

    in_names = list(input_names or [])
    graph_inputs = []
    env: dict = {}
    reps: dict = {}
    tensor_i = 0

    def lookup(a, table=reps):
        if isinstance(a, Node):
            return table[a]
        if isinstance(a, tuple):
            return tuple(lookup(x, table) for x in a)
        if isinstance(a, list):
            return [lookup(x, table) for x in a]
        if isinstance(a, dict):
            return {k: lookup(v, table) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(lookup(a.start, table), lookup(a.stop, table), lookup(a.step, table))
        return a

    modules = dict(root.named_modules())
    out_rep = out_val = None
    scopes = tracer.node_scopes
    for node in graph.nodes:
        ctx.scope = scopes.get(node, "")
        if node.op == "placeholder":
            pname = node.target
            if pname not in tensor_params:
                key = pname[:-2] if pname.endswith("_1") and pname[:-2] in concrete else pname
                env[node] = concrete.get(key)
                reps[node] = concrete.get(key)
                continue
            value = given[pname]

            def make_input(v, default):
                # nested tuples of tensors (an LSTM state) become one input per tensor
                nonlocal tensor_i
                if isinstance(v, (tuple, list)):
                    return type(v)(make_input(x, f"{default}_{i}") for i, x in enumerate(v))
                name = in_names[tensor_i] if tensor_i < len(in_names) else default
                tensor_i += 1
                graph_inputs.append((name, v))
                return _V(name, v)

            env[node] = value
            reps[node] = make_input(value, pname)
            continue
        if node.op == "get_attr":
            obj = root
            for part in node.target.split("."):
                obj = getattr(obj, part)
            env[node] = obj
            reps[node] = _V(ctx.init(node.target, obj), obj) if isinstance(obj, Tensor) else obj
            continue
        if node.op == "output":
            out_rep = lookup(node.args[0])
            out_val = lookup(node.args[0], env)
            break
        args = lookup(node.args)
        kwargs = lookup(node.kwargs)
        cargs, ckwargs = lookup(node.args, env), lookup(node.kwargs, env)
        if node.op == "call_function":
            value = node.target(*cargs, **ckwargs)
        elif node.op == "call_method":
            value = getattr(cargs[0], node.target)(*cargs[1:], **ckwargs)
        else:
            value = modules[node.target](*cargs, **ckwargs)
        if node.op == "call_module":
            m = modules[node.target]
            conv = _module_converter(type(m))
            if conv is None:
                raise UnsupportedOperatorError(f"ember::nn.{type(m).__name__}", opset, None)
            ctx.scope = scopes.get(node, "/" + node.target if node.target else "")
            rep = conv(ctx, m, node.target, tuple(args), kwargs, value)
        else:
            all_static = not any(
                isinstance(x, _V) for x in _flat(args) + _flat(list(kwargs.values()))
            )
            rep = value if all_static else _convert_function(ctx, node, args, kwargs, value)
        if isinstance(rep, _V) and isinstance(value, Tensor) and rep.value is not value:
            rep = _V(rep.name, value, rep.kind)  # e.g. contiguous(): same ONNX value
        env[node] = value
        reps[node] = rep
        inplace = (
            (
                node.op == "call_method"
                and node.target.endswith("_")
                and not node.target.startswith("_")
            )
            or node.kwargs.get("inplace") is True
            or (node.op == "call_function" and _impl(node.target) in _INPLACE)
        )
        if inplace and node.args and isinstance(node.args[0], Node) and isinstance(rep, _V):
            reps[node.args[0]] = rep  # x.add_(1): later reads of x see the new value

    # outputs
    flat: list = []
    _flatten_outputs(out_rep, out_val, flat)
    out_names = list(output_names or [])
    renames: dict = {}
    graph_outputs = []
    input_set = {n for n, _ in graph_inputs} | set(ctx.initializers)
    for i, (rep, value) in enumerate(flat):
        if not isinstance(rep, _V):
            rep = _V(ctx.tensor(rep), value)
        default = "output" if len(flat) == 1 else f"output_{i}"
        want = out_names[i] if i < len(out_names) else default
        src = rep.name
        if src in input_set or src in renames or any(src == o for o, _ in graph_outputs):
            ctx.scope = ""
            ctx.nodes.append(helper.make_node("Identity", [renames.get(src, src)], [want]))
        else:
            renames[src] = want
        graph_outputs.append((want, value if isinstance(value, Tensor) else rep.value))
    for n in ctx.nodes:
        for lst in (n.input, n.output):
            for j, s in enumerate(lst):
                if s in renames:
                    lst[j] = renames[s]

    dyn = _normalize_dynamic_axes(dynamic_axes or {})
    known = {n for n, _ in graph_inputs} | {n for n, _ in graph_outputs}
    for key in dyn:
        if key not in known:
            _warn(
                f"Provided key {key} for dynamic axes is not a valid input/output name",
                OnnxExporterWarning,
                stacklevel=3,
            )

    def vinfo(name, value):
        if isinstance(value, Tensor):
            shape = list(value.shape)
            dt = _np_dtype(value.dtype)
        else:
            arr = np.asarray(value)
            shape, dt = list(arr.shape), arr.dtype if arr.dtype != np.float64 else np.float32
        dims = [dyn.get(name, {}).get(i, s) for i, s in enumerate(shape)]
        return helper.make_tensor_value_info(name, _onnx_type(dt), dims)

    inputs = [vinfo(n, v) for n, v in graph_inputs]
    inits = list(ctx.initializers.values())
    if not export_params or keep_initializers_as_inputs:
        inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    if not export_params:
        inits = []
    outputs = []
    for n, v in graph_outputs:
        vi = vinfo(n, v)
        for d in vi.type.tensor_type.shape.dim:  # filled in from shape inference below
            if not d.dim_param:
                d.Clear()
        outputs.append(vi)
    g = helper.make_graph(ctx.nodes, "main_graph", inputs, outputs, initializer=inits)
    proto = helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="ember",
        producer_version=_ember_release,
    )
    proto.ir_version = min(proto.ir_version, _max_ir_version(opset))
    if do_constant_folding:
        for _ in range(4):  # folding reshapes makes more shapes static: repeat
            if not _fold_constants(proto):
                break
    _fill_output_shapes(proto, dyn)
    return proto


def _shapes(proto) -> dict:
    """name -> list of dims (int, or None when not static) from ONNX shape inference."""
    inferred = onnx.shape_inference.infer_shapes(proto)
    g = inferred.graph
    out = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        tt = vi.type.tensor_type
        if tt.HasField("shape"):
            out[vi.name] = [
                d.dim_value if d.HasField("dim_value") else d.dim_param or None
                for d in tt.shape.dim
            ]
    return out


_FOLDABLE = {
    "Shape",
    "Gather",
    "Unsqueeze",
    "Squeeze",
    "Concat",
    "Cast",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Slice",
    "Range",
    "Sqrt",
    "Reciprocal",
    "Floor",
    "Ceil",
    "Neg",
    "Equal",
    "Not",
    "Reshape",
    "Size",
    "Exp",
    "Log",
}
_FOLD_MAX = 4096  # elements: larger results stay computed at run time


def _fold_constants(proto) -> bool:
    """torch's do_constant_folding for what matters here: sizes of static dimensions and the
    arithmetic on them become constants (dynamic axes stay Shape/Gather). Initializers are
    not folded, so parameters keep their names."""
    from onnx.reference import ReferenceEvaluator  # deferred: slow to import, folding only

    shapes = _shapes(proto)
    g = proto.graph
    consts: dict = {}
    partial: dict = {}  # Shape outputs with some static dims
    new_nodes = []
    changed = False
    for node in g.node:
        if (
            node.op_type == "Constant"
            and len(node.attribute) == 1
            and node.attribute[0].name == "value"
        ):
            consts[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
            new_nodes.append(node)
            continue
        value = None
        if node.op_type == "Shape" and not node.attribute:
            dims = shapes.get(node.input[0])
            if dims is not None and all(isinstance(d, int) for d in dims):
                value = np.asarray(dims, dtype=np.int64)
            elif dims is not None:
                partial[node.output[0]] = dims
        elif (
            node.op_type == "Gather"
            and node.input[0] in partial
            and node.input[1] in consts
            and not any(a.name == "axis" and a.i != 0 for a in node.attribute)
        ):
            # a static size of a tensor with dynamic axes: x.size(-1) with x (batch, seq, 16)
            dims = partial[node.input[0]]
            ind = consts[node.input[1]].astype(np.int64)
            picked = [dims[int(i)] for i in np.ravel(ind)]
            if all(isinstance(d, int) for d in picked):
                value = np.asarray(picked, dtype=np.int64).reshape(ind.shape)
        elif (
            node.op_type in _FOLDABLE
            and len(node.output) == 1
            and node.input
            and all(i == "" or i in consts for i in node.input)
        ):
            try:
                feeds = {i: consts[i] for i in node.input if i}
                value = ReferenceEvaluator(node).run(None, feeds)[0]
            except Exception:  # pragma: no cover - keep the node if the reference fails
                value = None
            if value is not None and np.asarray(value).size > _FOLD_MAX:
                value = None
        if value is None:
            new_nodes.append(node)
            continue
        value = np.asarray(value)
        consts[node.output[0]] = value
        new_nodes.append(
            helper.make_node(
                "Constant",
                [],
                [node.output[0]],
                name=node.name,
                value=numpy_helper.from_array(value),
            )
        )
        changed = True
    if not changed:
        return False
    # drop the nodes nothing reads any more
    needed = {o.name for o in g.output}
    kept = []
    for node in reversed(new_nodes):
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(i for i in node.input if i)
    del g.node[:]
    g.node.extend(reversed(kept))
    return True


def _fill_output_shapes(proto, dyn: dict) -> None:
    """Output dims: the dynamic_axes names, else what shape inference found (a size or a
    symbol), else ``<output>_dim_<i>``."""
    shapes = _shapes(proto)
    for vi in proto.graph.output:
        inferred = shapes.get(vi.name)
        for i, d in enumerate(vi.type.tensor_type.shape.dim):
            if vi.name in dyn and i in dyn[vi.name]:
                d.dim_param = dyn[vi.name][i]
            elif inferred is not None and i < len(inferred) and isinstance(inferred[i], int):
                d.dim_value = inferred[i]
            elif inferred is not None and i < len(inferred) and isinstance(inferred[i], str):
                d.dim_param = inferred[i]
            else:
                d.dim_param = f"{vi.name}_dim_{i}"


def _is_tensor_tree(v) -> bool:
    if isinstance(v, Tensor):
        return True
    return isinstance(v, (tuple, list)) and len(v) > 0 and all(_is_tensor_tree(x) for x in v)


def _flat(xs) -> list:
    out = []
    for x in xs:
        if isinstance(x, (tuple, list)):
            out.extend(_flat(x))
        elif isinstance(x, dict):
            out.extend(_flat(list(x.values())))
        elif isinstance(x, slice):
            out.extend(_flat([x.start, x.stop, x.step]))
        else:
            out.append(x)
    return out


def _max_ir_version(opset: int) -> int:
    # onnxruntime reads IR versions up to its own; opset 20 needs IR 9
    table = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}
    return table.get(opset, onnx.IR_VERSION)


def _normalize_dynamic_axes(dynamic_axes) -> dict:
    """torch's rule: a list of axes gets names ``<name>_dynamic_axes_<i+1>``."""
    out = {}
    for key, axes in dynamic_axes.items():
        if isinstance(axes, dict):
            out[key] = {int(k): str(v) for k, v in axes.items()}
        else:
            out[key] = {int(a): f"{key}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
    return out
