"""What every op shares: unwrapping operands, torch's type promotion, recording a node.

An op function computes its result with NumPy, then calls ``record`` with the node class
and the inputs; ``record`` attaches the node only when grad mode is on and an input
requires grad, so the no-grad path is NumPy plus one Tensor allocation.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import INFERENCE_SAVE_MSG, Tensor
from ..autograd import grad_mode
from ..autograd.forward_ad import (
    _fw,  # noqa: F401  (ops reach forward-only nodes as _fw.node)
    _fw_record,
    _fw_record_multi,
    _on,
    saved_output,
    set_saved,
)
from ..autograd.graph import AccumulateGrad, Node, SavedOutput

_state = grad_mode.state
_wrap = Tensor._wrap
_new = object.__new__
_NO_EDGE = (None, 0)
_V0 = (0,)
_V00 = (0, 0)
_PY_SCALARS = (int, float, bool, complex)


def edge_of(x) -> tuple:
    """The ``(node, output_nr)`` a gradient for ``x`` flows into (``(None, 0)`` if none)."""
    if isinstance(x, Tensor):
        fn = x.grad_fn
        if fn is not None:
            return (fn, x._output_nr)
        if x._rg:
            return (x._grad_accumulator(), 0)
    return _NO_EDGE


def record(cls, out: np.ndarray, inputs: tuple, saved: tuple = (), save_output: bool = False):
    """Wrap ``out`` in a Tensor and, if gradients are needed, attach a ``cls`` node.

    inputs: the op's differentiable operands in order (Tensors or Python scalars); they
        become the node's ``next_functions``.
    saved: Tensors the backward rule needs (passed to it after the gradient).
    save_output: also pass the result itself to the rule (after ``saved``).
    Returns the result Tensor; ``result.grad_fn`` is the node (or None).
    """
    if type(out) is not np.ndarray:
        out = np.asarray(out)  # NumPy gives scalars for 0-d results; tensors hold arrays
    if _on:  # forward AD is on (a dual level exists): tangents, then the usual recording
        return _fw_record(cls, out, inputs, saved, save_output)
    edges = _edges(inputs) if _state.enabled and out.dtype.kind in "fc" else None
    # Inlined Tensor._wrap: this function is the hot path of every op.
    t = _new(Tensor)
    t._data = out
    t._output_nr = 0
    t._vc = [0]
    t._grad = None
    t._aux = None
    if edges is None:
        t._rg = False
        t.grad_fn = None
        if _state.inference:
            t._vc = None
        return t
    node = _new(cls)
    node.next_functions = edges
    node._meta = ((out.shape, out.dtype),)
    node._hooks = None
    if save_output:
        so = _new(SavedOutput)
        so._data = out
        so._vc = t._vc
        so._output_nr = 0
        saved = saved + (so,)
    node._saved = saved
    n = len(saved)
    # Saved tensors are nearly always at version 0: share those tuples instead of allocating.
    try:
        if n == 1:
            v = saved[0]._vc[0]
            node._versions = _V0 if v == 0 else (v,)
        elif n == 2:
            v, w = saved[0]._vc[0], saved[1]._vc[0]
            node._versions = _V00 if v == 0 and w == 0 else (v, w)
        elif n:
            node._versions = tuple([s._vc[0] for s in saved])
        else:
            node._versions = ()
    except TypeError:  # an inference tensor has no version counter
        raise RuntimeError(INFERENCE_SAVE_MSG) from None
    t.grad_fn = node
    t._rg = True
    return t


def _edges(inputs: tuple):
    """The ``next_functions`` for an op on ``inputs``, or None when none requires grad."""
    if len(inputs) == 1:
        # One input (unary ops): no list, no loop.
        x = inputs[0]
        if not (isinstance(x, Tensor) and x._rg):
            return None
        fn = x.grad_fn
        return ((fn, x._output_nr) if fn is not None else (x._grad_accumulator(), 0),)
    if len(inputs) == 2:
        # Binary ops, unrolled: this runs for every recorded +, -, *, /.
        x, y = inputs
        if isinstance(x, Tensor) and x._rg:
            fn = x.grad_fn
            ex = (fn, x._output_nr) if fn is not None else (x._grad_accumulator(), 0)
        else:
            ex = _NO_EDGE
        if isinstance(y, Tensor) and y._rg:
            fn = y.grad_fn
            return ex, ((fn, y._output_nr) if fn is not None else (y._grad_accumulator(), 0))
        return None if ex is _NO_EDGE else (ex, _NO_EDGE)
    edge_list = []
    needs = False
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            fn = x.grad_fn
            edge_list.append((fn, x._output_nr) if fn is not None else (x._grad_accumulator(), 0))
            needs = True
        else:
            edge_list.append(_NO_EDGE)
    return tuple(edge_list) if needs else None


def record_multi(cls, outs: list, inputs: tuple, saved: tuple = (), differentiable=None):
    """Like ``record`` for a node with several outputs (split, chunk, unbind, ...)."""
    if _on:
        return _fw_record_multi(cls, outs, inputs, saved, differentiable)
    tensors = [_wrap(np.asarray(o)) for o in outs]
    if not _state.enabled:
        return tensors
    edges = tuple(edge_of(x) for x in inputs)
    if all(e[0] is None for e in edges):
        return tensors
    node = cls.__new__(cls)
    node.next_functions = edges
    node._meta = tuple((o.shape, o.dtype) for o in outs)
    node._hooks = None
    node._saved = saved
    try:
        node._versions = tuple([s._vc[0] for s in saved]) if saved else ()
    except TypeError:  # an inference tensor has no version counter
        raise RuntimeError(INFERENCE_SAVE_MSG) from None
    for i, t in enumerate(tensors):
        if differentiable is None or differentiable[i]:
            if t._data.dtype.kind in "fc":
                t.grad_fn = node
                t._rg = True
                t._output_nr = i
    return tensors


def add_tangents(a, b):
    """``a + b`` for JVP rules, where None is a zero tangent."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def elementwise_jvp(self, tangents, inputs, *saved):
    """JVP of an elementwise op from its VJP rule: each input's Jacobian is diagonal (up to
    broadcasting), so ``backward`` applied to that input's tangent is the product."""
    res = None
    for i, tg in enumerate(tangents):
        if tg is None:
            continue
        g = self.backward(tg, *saved)
        if type(g) is tuple:
            g = g[i]
        res = add_tangents(res, g)
    return res


def needs_grad(*inputs) -> bool:
    """True when an op on ``inputs`` would be recorded."""
    if not _state.enabled:
        return False
    for x in inputs:
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


# -- operands and type promotion ------------------------------------------------------


def as_array(x) -> np.ndarray:
    """The ndarray behind ``x`` (a Tensor, array, or Python number/list)."""
    if isinstance(x, Tensor):
        return x._data
    return np.asarray(x)


def _group_type(x):
    """(group, numpy dtype) of an operand for torch's promotion: 0 dim, 1 zero-dim, 2 scalar."""
    if isinstance(x, Tensor):
        d = x._data
        return (0 if d.ndim else 1), d.dtype
    if isinstance(x, np.ndarray):
        return (0 if x.ndim else 1), x.dtype
    if isinstance(x, bool):
        return 2, np.dtype(np.bool_)
    if isinstance(x, int):
        return 2, np.dtype(np.int64)
    if isinstance(x, float):
        return 2, _dtype._default[0].np
    if isinstance(x, complex):
        return 2, np.dtype(np.complex64 if _dtype._default[0].np == np.float32 else np.complex128)
    if isinstance(x, np.generic):
        return 1, x.dtype
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types on NumPy dtypes (differs from NumPy for float16 with integers)."""
    if a == b:
        return a
    ka, kb = a.kind, b.kind
    if ka in "fc" and kb in "biu":
        return a
    if kb in "fc" and ka in "biu":
        return b
    return np.promote_types(a, b)


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    kh, kl = higher.kind, lower.kind
    if kh == "c":
        return higher
    if kl == "c":
        if kh == "f":
            return np.promote_types(higher, np.complex64)
        return lower
    if kh == "f":
        return higher
    if kh == "b" or kl == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> np.dtype:
    """The dtype torch gives ``op(*operands)``: dimensioned tensors outrank 0-d ones,
    which outrank Python scalars, unless a lower group has a higher category."""
    groups = [None, None, None]
    for x in operands:
        g, dt = _group_type(x)
        groups[g] = dt if groups[g] is None else promote_types(groups[g], dt)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def binary_operands(x, y):
    """Raw operands for a NumPy binary op whose result has torch's dtype."""
    # Fast paths cover the common cases where NumPy's own promotion already agrees.
    tx, ty = type(x), type(y)
    if tx is Tensor:
        a = x._data
        if ty is Tensor:
            b = y._data
            if a.dtype is b.dtype or a.dtype == b.dtype:
                return a, b
        elif ty is float:
            if a.dtype.kind in "fc":
                return a, y
        elif ty is int:
            if a.dtype.kind in "fiuc" and a.dtype != np.uint8:
                return a, y
    elif ty is Tensor:
        b = y._data
        if tx is float:
            if b.dtype.kind in "fc":
                return x, b
        elif tx is int:
            if b.dtype.kind in "fiuc" and b.dtype != np.uint8:
                return x, b
    return _promoted(x, y)


def _promoted(x, y):
    if not isinstance(x, (Tensor, np.ndarray, np.generic, *_PY_SCALARS)):
        x = np.asarray(x)
    if not isinstance(y, (Tensor, np.ndarray, np.generic, *_PY_SCALARS)):
        y = np.asarray(y)
    rt = result_type(x, y)
    return _cast(x, rt), _cast(y, rt)


def _cast(x, dt: np.dtype):
    if isinstance(x, Tensor):
        x = x._data
    if isinstance(x, (np.ndarray, np.generic)):
        return x if x.dtype == dt else x.astype(dt)
    return np.asarray(x, dtype=dt)


def default_float() -> np.dtype:
    return _dtype._default[0].np


def float_operand(a: np.ndarray) -> np.ndarray:
    """Integer/bool inputs to float functions (sin, exp, mean, ...) become the default dtype."""
    if a.dtype.kind in "fc":
        return a
    return a.astype(_dtype._default[0].np)


def normalize_dim(dim: int, ndim: int) -> int:
    """Wrap a negative dim; torch's IndexError when out of range."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def normalize_dims(dim, ndim: int) -> tuple:
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        out = tuple(normalize_dim(d, ndim) for d in dim)
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return out
    return (normalize_dim(dim, ndim),)


__all__ = [
    "add_tangents",
    "elementwise_jvp",
    "saved_output",
    "set_saved",
    "Node",
    "AccumulateGrad",
    "record",
    "record_multi",
    "edge_of",
    "needs_grad",
    "binary_operands",
    "result_type",
    "promote_types",
    "as_array",
    "float_operand",
    "default_float",
    "normalize_dim",
    "normalize_dims",
]
