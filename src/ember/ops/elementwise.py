"""Elementwise ops: arithmetic, comparisons and unary math, each with its backward rule.

Rules are written with operators and NumPy ufuncs only, so the same line runs on raw
arrays (plain backward) and on Tensors (a recorded backward, through
``Tensor.__array_ufunc__``). Broadcasting is undone by the engine, not here.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, register_methods
from ._core import (
    Node,
    _fw,
    binary_operands,
    default_float,
    float_operand,
    record,
)
from ._core import add_tangents as _add_tangents
from ._core import elementwise_jvp as _elementwise_jvp

_wrap = Tensor._wrap


def _require_tensor(x, fname: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )


_PASS_THROUGH = frozenset((Tensor, int, float, bool, complex))


def _scalar_or_tensor(x):
    """Python numbers stay numbers (torch's 'wrapped scalars'); arrays become Tensors."""
    if type(x) in _PASS_THROUGH or isinstance(x, (Tensor, int, float, bool, complex)):
        return x
    return Tensor._wrap(np.asarray(x))


# -- binary arithmetic ----------------------------------------------------------------


class AddBackward0(Node):
    __slots__ = ()
    alpha = 1  # set on the instance only when it is not 1 (nodes keep a __dict__ for that)

    def backward(self, g):
        return g, (g if self.alpha == 1 else g * self.alpha)

    def jvp(self, tangents, inputs):
        ta, tb = tangents
        if tb is not None and self.alpha != 1:
            tb = tb * self.alpha
        return _add_tangents(ta, tb)


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting.

    Example:
        >>> import ember
        >>> ember.add(ember.tensor([1.0, 2.0]), 10, alpha=2)
        tensor([21., 22.])
    """
    if type(other) not in _PASS_THROUGH:
        other = _scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    t = record(AddBackward0, (a + b) if alpha == 1 else (a + b * alpha), (input, other))
    if alpha != 1 and (gf := t.grad_fn or _fw.node) is not None:
        gf.alpha = alpha
    return t if out is None else _out(t, out)


class SubBackward0(Node):
    __slots__ = ()
    alpha = 1  # set on the instance only when it is not 1 (nodes keep a __dict__ for that)

    def backward(self, g):
        return g, (-g if self.alpha == 1 else g * -self.alpha)

    def jvp(self, tangents, inputs):
        ta, tb = tangents
        if tb is not None:
            tb = -tb if self.alpha == 1 else tb * -self.alpha
        return _add_tangents(ta, tb)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other`` with broadcasting.

    Example:
        >>> import ember
        >>> ember.sub(ember.tensor([5.0]), ember.tensor([1.0]))
        tensor([4.])
    """
    other = _scalar_or_tensor(other)
    _check_bool_sub(input, other)
    a, b = binary_operands(input, other)
    t = record(SubBackward0, (a - b) if alpha == 1 else (a - b * alpha), (input, other))
    if alpha != 1 and (gf := t.grad_fn or _fw.node) is not None:
        gf.alpha = alpha
    return _out(t, out)


def _check_bool_sub(x, y) -> None:
    bx = isinstance(x, Tensor) and x._data.dtype == np.bool_
    by = isinstance(y, Tensor) and y._data.dtype == np.bool_
    if bx and by:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
            "`^` or `logical_xor()` operator instead."
        )
    if bx or by:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


class RsubBackward1(Node):
    __slots__ = ()
    alpha = 1  # set on the instance only when it is not 1 (nodes keep a __dict__ for that)

    def backward(self, g):
        return (-g if self.alpha == 1 else g * -self.alpha), None

    def jvp(self, tangents, inputs):
        ta, tb = tangents
        if ta is not None:
            ta = -ta if self.alpha == 1 else ta * -self.alpha
        return _add_tangents(ta, tb)


class RsubBackward0(Node):
    """rsub of two tensors: ``other - alpha * input``."""

    __slots__ = ()
    alpha = 1  # set on the instance only when it is not 1 (nodes keep a __dict__ for that)

    def backward(self, g):
        return (-g if self.alpha == 1 else g * -self.alpha), g

    jvp = RsubBackward1.jvp


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``2 - x`` in Python)."""
    other = _scalar_or_tensor(other)
    _check_bool_sub(input, other)
    a, b = binary_operands(input, other)
    cls = RsubBackward0 if isinstance(other, Tensor) else RsubBackward1
    t = record(cls, (b - a) if alpha == 1 else (b - a * alpha), (input, other))
    if alpha != 1 and (gf := t.grad_fn or _fw.node) is not None:
        gf.alpha = alpha
    return t


class MulBackward0(Node):
    __slots__ = ("other",)  # the Python-number operand, when there is one

    def backward(self, g, a, b=None):
        if b is None:
            return g * self.other, None
        (fa, _), (fb, _) = self.next_functions
        # Skip the product for an operand that takes no gradient (often a big input).
        return (None if fa is None else g * b), (None if fb is None else g * a)

    def jvp(self, tangents, inputs, *saved):
        # The product rule (the other operand may be a Python number).
        (ta, tb), (a, b) = tangents, inputs
        return _add_tangents(None if ta is None else ta * b, None if tb is None else a * tb)


def mul(input, other, *, out=None):
    """Elementwise product with broadcasting.

    Example:
        >>> import ember
        >>> ember.mul(ember.tensor([1.0, 2.0]), 3)
        tensor([3., 6.])
    """
    if type(other) not in _PASS_THROUGH:
        other = _scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    if isinstance(other, Tensor):
        t = record(MulBackward0, a * b, (input, other), (input, other))
    elif isinstance(input, Tensor):
        t = record(MulBackward0, a * b, (input, other), (input,))
        if (gf := t.grad_fn or _fw.node) is not None:
            gf.other = other
    else:
        return _out(mul(other, input), out)
    return t if out is None else _out(t, out)


def _saved2(x, y):
    # Python scalars are saved as 0-d Tensors so the rule can use them like arrays.
    if not isinstance(x, Tensor):
        x = _wrap(np.asarray(x))
    if not isinstance(y, Tensor):
        y = _wrap(np.asarray(y))
    return (x, y)


class DivBackward0(Node):
    __slots__ = ("other",)  # the Python-number divisor, when there is one

    def jvp(self, tangents, inputs, *saved):
        if not saved:
            return None  # rounding_mode='floor'/'trunc': piecewise constant
        (ta, tb), (a, b) = tangents, inputs
        return _add_tangents(
            None if ta is None else ta / b, None if tb is None else -tb * a / (b * b)
        )

    def backward(self, g, a, b=None):
        if b is None:
            return g / self.other, None
        ga = g / b
        return (ga if self.next_functions[0][0] is not None else None), (
            None if self.next_functions[1][0] is None else -ga * a / b
        )


def div(input, other, *, rounding_mode=None, out=None):
    """True division (or ``rounding_mode='trunc'|'floor'``) with broadcasting.

    Example:
        >>> import ember
        >>> ember.div(ember.tensor([1, 2]), 2)
        tensor([0.5000, 1.0000])
    """
    other = _scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    if rounding_mode is not None:
        if rounding_mode == "floor":
            res = np.floor_divide(a, b) if _is_int(a) else np.floor(a / b)
        elif rounding_mode == "trunc":
            res = np.trunc(a / b) if not _is_int(a) else _int_trunc_div(a, b)
        else:
            raise RuntimeError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        return _out(record(DivBackward0, np.asarray(res), (input, other), ()), out)
    if _is_int(a):
        # Integer 0/0 is NaN in torch, silently; NumPy would warn.
        dt = default_float()
        with np.errstate(divide="ignore", invalid="ignore"):
            res = np.asarray(a, dtype=dt) / np.asarray(b, dtype=dt)
    else:
        res = a / b
    if type(res) is not np.ndarray:
        res = np.asarray(res)
    if isinstance(other, Tensor):
        t = record(DivBackward0, res, (input, other), _saved2(input, other))
    elif isinstance(input, Tensor):
        t = record(DivBackward0, res, (input, other), (input,))
        if (gf := t.grad_fn or _fw.node) is not None:
            gf.other = other
    else:
        t = record(DivBackward0, res, (input, other), _saved2(input, other))
    return t if out is None else _out(t, out)


def _is_int(a) -> bool:
    return np.asarray(a).dtype.kind in "biu"


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return q + fix


def rtruediv(input, other):
    """``other / input`` (``2 / x``): torch records it as reciprocal then multiply."""
    recip = _UNARY_OPS["reciprocal"]
    return mul(recip(input if input._data.dtype.kind in "fc" else input.float()), other)


class PowBackward0(Node):
    __slots__ = ("exponent",)
    jvp = _elementwise_jvp  # diagonal Jacobian: the VJP rule applied to the tangent

    def backward(self, g, a):
        e = self.exponent
        if e == 0:
            return g * 0
        if e == 2:
            return g * 2 * a
        return g * e * a ** (e - 1)


class PowBackward1(Node):
    __slots__ = ()

    def backward(self, g, a, b, result):
        # torch's conventions: no gradient for the base where the exponent is 0 (not
        # 0 * inf at a == 0), none for the exponent where the base is 0 (not 0 * -inf).
        ga = g * _zero_where(b == 0, b * a ** (b - 1))
        gb = g * _zero_where(a == 0, result * np.log(a))
        return ga, gb

    def jvp(self, tangents, inputs, a, b, result):
        ta, tb = tangents
        return _add_tangents(
            None if ta is None else ta * _zero_where(b == 0, b * a ** (b - 1)),
            None if tb is None else tb * _zero_where(a == 0, result * np.log(a)),
        )


class PowBackward2(Node):
    __slots__ = ("base",)

    def backward(self, g, b, result):
        base = self.base
        if base == 0:  # torch's convention: no gradient through 0 ** b (not 0 * -inf)
            return None, g * 0
        # log of a negative base is NaN, as in torch (the gradient is undefined there).
        return None, g * result * (math.log(base) if base > 0 else math.nan)

    def jvp(self, tangents, inputs, b, result):
        return self.backward(tangents[1], b, result)[1]


def _zero_where(cond, value):
    """``value`` with zeros where ``cond`` holds (arrays, or Tensors in a recorded rule)."""
    if isinstance(value, np.ndarray) or not isinstance(value, Tensor):
        return np.where(cond, 0, value)
    return where(cond, 0.0, value)


def pow(input, exponent, *, out=None):
    """``input ** exponent`` for tensor or scalar base/exponent.

    Example:
        >>> import ember
        >>> ember.pow(ember.tensor([2.0, 3.0]), 2)
        tensor([4., 9.])
    """
    if not isinstance(input, Tensor):
        return _out(_rpow(input, exponent), out)
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool):
        a = input._data
        if a.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        a, _ = binary_operands(input, exponent)
        res = np.square(a) if exponent == 2 else np.power(a, exponent)
        t = record(PowBackward0, np.asarray(res), (input,), (input,))
        if (gf := t.grad_fn or _fw.node) is not None:
            gf.exponent = exponent
        return _out(t, out)
    exponent = _scalar_or_tensor(exponent)
    a, b = binary_operands(input, exponent)
    return _out(
        record(PowBackward1, np.power(a, b), (input, exponent), (input, exponent), True), out
    )


def _rpow(base, exponent: Tensor):
    """``base ** tensor`` for a Python-number base (PowBackward2)."""
    a, b = binary_operands(base, exponent)
    t = record(PowBackward2, np.power(a, b), (None, exponent), (exponent,), True)
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.base = base
    return t


class NegBackward0(Node):
    __slots__ = ()
    jvp = _elementwise_jvp  # diagonal Jacobian: the VJP rule applied to the tangent

    def backward(self, g):
        return -g


def neg(input, *, out=None):
    """``-input``."""
    _require_tensor(input, "neg")
    if input._data.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return _out(record(NegBackward0, np.negative(input._data), (input,)), out)


negative = neg


class MaximumBackward0(Node):
    __slots__ = ()

    def backward(self, g, a, b):
        # Ties split the gradient evenly, as torch does.
        wa = (a > b) + (a == b) * 0.5
        wb = (b > a) + (a == b) * 0.5
        return g * wa, g * wb

    def jvp(self, tangents, inputs, a, b):
        (ta, tb), w = tangents, (a == b) * 0.5
        return _add_tangents(
            None if ta is None else ta * ((a > b) + w), None if tb is None else tb * ((b > a) + w)
        )


class MinimumBackward0(Node):
    __slots__ = ()

    def backward(self, g, a, b):
        wa = (a < b) + (a == b) * 0.5
        wb = (b < a) + (a == b) * 0.5
        return g * wa, g * wb

    def jvp(self, tangents, inputs, a, b):
        (ta, tb), w = tangents, (a == b) * 0.5
        return _add_tangents(
            None if ta is None else ta * ((a < b) + w), None if tb is None else tb * ((b < a) + w)
        )


def maximum(input, other, *, out=None):
    """Elementwise maximum (NaN propagates).

    Example:
        >>> import ember
        >>> ember.maximum(ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0]))
        tensor([3., 5.])
    """
    _require_other_tensor(other, "maximum")
    a, b = binary_operands(input, other)
    return _out(record(MaximumBackward0, np.maximum(a, b), (input, other), (input, other)), out)


def minimum(input, other, *, out=None):
    """Elementwise minimum (NaN propagates)."""
    _require_other_tensor(other, "minimum")
    a, b = binary_operands(input, other)
    return _out(record(MinimumBackward0, np.minimum(a, b), (input, other), (input, other)), out)


def _require_other_tensor(other, fname):
    if not isinstance(other, Tensor):
        raise TypeError(
            f"{fname}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )


class Atan2Backward0(Node):
    __slots__ = ()

    def backward(self, g, a, b):
        denom = a * a + b * b
        return g * b / denom, -g * a / denom

    def jvp(self, tangents, inputs, a, b):
        ta, tb = tangents
        num = _add_tangents(None if ta is None else ta * b, None if tb is None else -tb * a)
        return num / (a * a + b * b)


def atan2(input, other, *, out=None):
    """Elementwise arctangent of ``input / other`` using the signs of both."""
    a, b = binary_operands(input, other)
    a, b = float_operand(np.asarray(a)), float_operand(np.asarray(b))
    return _out(record(Atan2Backward0, np.arctan2(a, b), (input, other), (input, other)), out)


arctan2 = atan2


class WhereBackward0(Node):
    __slots__ = ()

    def backward(self, g, cond):
        zero = g * 0
        return None, _where(cond, g, zero), _where(cond, zero, g)

    def jvp(self, tangents, inputs, cond):
        _, ta, tb = tangents
        ref = ta if ta is not None else tb
        zero = ref * 0
        return _where(cond, zero if ta is None else ta, zero if tb is None else tb)


def _where(cond, x, y):
    if isinstance(x, Tensor):
        return where(cond, x, y)
    return np.where(cond, x, y)


def where(condition, input=None, other=None, *, out=None):
    """Pick ``input`` where ``condition`` holds, else ``other`` (broadcasting all three).

    Example:
        >>> import ember
        >>> x = ember.tensor([-1.0, 2.0])
        >>> ember.where(x > 0, x, 0.0)
        tensor([0., 2.])
    """
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    c = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if c.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype if isinstance(condition, Tensor) else c.dtype}"
        )
    input = _scalar_or_tensor(input)
    other = _scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    cond_t = condition if isinstance(condition, Tensor) else _wrap(c)
    return _out(record(WhereBackward0, np.where(c, a, b), (None, input, other), (cond_t,)), out)


class ClampBackward1(Node):
    __slots__ = ("lo", "hi")
    jvp = _elementwise_jvp  # diagonal Jacobian: the VJP rule applied to the tangent

    def backward(self, g, a):
        lo, hi = self.lo, self.hi
        mask = True
        if lo is not None:
            mask = a >= lo
        if hi is not None:
            mask = mask & (a <= hi) if lo is not None else a <= hi
        return g * mask


class ClampBackward0(Node):
    """clamp with tensor bounds; a missing bound is saved as an infinite one."""

    __slots__ = ()

    def backward(self, g, a, lo, hi):
        return g * ((a >= lo) & (a <= hi)), g * (a < lo), g * (a > hi)

    def jvp(self, tangents, inputs, a, lo, hi):
        # min(max(a, lo), hi): hi's tangent where max(a, lo) > hi (crossed bounds too),
        # else lo's where a < lo, else a's.
        tx, tlo, thi = tangents
        at_hi = (a > hi) | (lo > hi)
        at_lo = (a < lo) & ~at_hi
        res = None if tx is None else tx * ~(at_hi | at_lo)
        res = _add_tangents(res, None if tlo is None else tlo * at_lo)
        return _add_tangents(res, None if thi is None else thi * at_hi)


def clamp(input, min=None, max=None, *, out=None):
    """Limit values to ``[min, max]``; gradient flows where the input was inside.

    Example:
        >>> import ember
        >>> ember.clamp(ember.tensor([-2.0, 0.5, 3.0]), min=0, max=1)
        tensor([0.0000, 0.5000, 1.0000])
    """
    _require_tensor(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        a = input._data
        lo = _bound(min, -np.inf, a.dtype)
        hi = _bound(max, np.inf, a.dtype)
        res = np.minimum(np.maximum(a, lo._data), hi._data).astype(a.dtype, copy=False)
        t = record(ClampBackward0, res, (input, min, max), (input, lo, hi))
        return _out(t, out)
    a = input._data
    if a.dtype.kind in "iub" and (isinstance(min, float) or isinstance(max, float)):
        a = a.astype(default_float())
    res = (
        np.clip(a, min, max) if (min is None or max is None or min <= max) else np.full_like(a, max)
    )
    t = record(ClampBackward1, np.asarray(res, dtype=a.dtype), (input,), (input,))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.lo = min
        gf.hi = max
    return _out(t, out)


def _bound(b, missing: float, np_dtype) -> Tensor:
    if isinstance(b, Tensor):
        return b
    return _wrap(np.asarray(missing if b is None else b, dtype=np_dtype))


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


clip = clamp


# -- unary math -------------------------------------------------------------------------
# Each row: name, node name, forward on the array, VJP rule, and what the rule needs:
# "x" the input, "out" the result, "x,out" both. One row per op keeps them side by side.


def _sign(x):
    return np.sign(x)


_UNARY_ROWS = [
    ("exp", "ExpBackward0", np.exp, "out", lambda g, out: g * out),
    ("exp2", "Exp2Backward0", np.exp2, "out", lambda g, out: g * out * math.log(2.0)),
    ("expm1", "Expm1Backward0", np.expm1, "out", lambda g, out: g * (out + 1)),
    ("log", "LogBackward0", np.log, "x", lambda g, x: g / x),
    ("log2", "Log2Backward0", np.log2, "x", lambda g, x: g / (x * math.log(2.0))),
    ("log10", "Log10Backward0", np.log10, "x", lambda g, x: g / (x * math.log(10.0))),
    ("log1p", "Log1PBackward0", np.log1p, "x", lambda g, x: g / (x + 1)),
    ("sqrt", "SqrtBackward0", np.sqrt, "out", lambda g, out: g / (2 * out)),
    ("rsqrt", "RsqrtBackward0", lambda a: 1 / np.sqrt(a), "out", lambda g, out: -0.5 * g * out**3),
    ("sin", "SinBackward0", np.sin, "x", lambda g, x: g * np.cos(x)),
    ("cos", "CosBackward0", np.cos, "x", lambda g, x: -g * np.sin(x)),
    ("tan", "TanBackward0", np.tan, "out", lambda g, out: g * (1 + out * out)),
    ("asin", "AsinBackward0", np.arcsin, "x", lambda g, x: g / np.sqrt(1 - x * x)),
    ("acos", "AcosBackward0", np.arccos, "x", lambda g, x: -g / np.sqrt(1 - x * x)),
    ("atan", "AtanBackward0", np.arctan, "x", lambda g, x: g / (1 + x * x)),
    ("sinh", "SinhBackward0", np.sinh, "x", lambda g, x: g * np.cosh(x)),
    ("cosh", "CoshBackward0", np.cosh, "x", lambda g, x: g * np.sinh(x)),
    ("tanh", "TanhBackward0", np.tanh, "out", lambda g, out: _tanh_vjp(g, out)),
    ("asinh", "AsinhBackward0", np.arcsinh, "x", lambda g, x: g / np.sqrt(x * x + 1)),
    ("acosh", "AcoshBackward0", np.arccosh, "x", lambda g, x: g / np.sqrt(x * x - 1)),
    ("atanh", "AtanhBackward0", np.arctanh, "x", lambda g, x: g / (1 - x * x)),
    ("sigmoid", "SigmoidBackward0", None, "out", lambda g, out: _sigmoid_vjp(g, out)),
    ("relu", "ReluBackward0", None, "out", lambda g, out: g * (out > 0)),
    ("abs", "AbsBackward0", np.abs, "x", lambda g, x: g * _sign(x)),
    ("sign", "SignBackward0", np.sign, "", lambda g: g * 0),
    ("reciprocal", "ReciprocalBackward0", np.reciprocal, "out", lambda g, out: -g * out * out),
    ("square", "PowBackward0", np.square, "x", lambda g, x: g * 2 * x),
    ("floor", "FloorBackward0", np.floor, "", lambda g: g * 0),
    ("ceil", "CeilBackward0", np.ceil, "", lambda g: g * 0),
    ("round", "RoundBackward0", np.round, "", lambda g: g * 0),
    ("trunc", "TruncBackward0", np.trunc, "", lambda g: g * 0),
    ("frac", "FracBackward0", lambda a: a - np.trunc(a), "", lambda g: g),
]


def _sigmoid_stable(a):
    """1 / (1 + exp(-a)) without overflow: exp only ever sees -|a|."""
    if a.ndim == 0:  # NumPy returns scalars for 0-d inputs, which cannot take out=
        return _sigmoid_stable(a.reshape(1)).reshape(())
    e = np.abs(a)
    np.negative(e, out=e)
    np.exp(e, out=e)  # e = exp(-|a|), in (0, 1]
    den = e + 1
    num = np.where(a < 0, e, np.ones((), a.dtype))
    num /= den
    return num


def _sigmoid_forward(a):
    if a.size < 4096:
        return _sigmoid_stable(a)
    # Large arrays: 1 / (1 + exp(-a)) in place, one temporary. exp overflows to inf only
    # where the exact result is below the smallest normal number; 1 / inf gives 0 there,
    # as torch does. The error-state switch costs microseconds, nothing at this size.
    with np.errstate(over="ignore"):
        e = np.negative(a)
        np.exp(e, out=e)
    e += 1
    np.reciprocal(e, out=e)
    return e


def _tanh_vjp(g, out):
    if type(out) is np.ndarray and type(g) is np.ndarray and out.ndim:
        d = out * out  # g * (1 - out**2), reusing one temporary
        np.subtract(1, d, out=d)
        d *= g
        return d
    return g * (1 - out * out)


def _sigmoid_vjp(g, out):
    if type(out) is np.ndarray and type(g) is np.ndarray and out.ndim:
        d = 1 - out  # g * out * (1 - out), reusing one temporary
        d *= out
        d *= g
        return d
    return g * out * (1 - out)


def _relu_forward(a):
    return np.maximum(a, 0)


# Ops that keep integer dtypes (others promote integers to the default float dtype).
_KEEPS_INT = {"abs", "sign", "square", "relu", "floor", "ceil", "round", "trunc"}


def _make_unary(name, node_name, forward, needs, rule):
    if name == "sigmoid":
        forward = _sigmoid_forward
    elif name == "relu":
        forward = _relu_forward

    # The row's rule takes (grad, *saved) exactly as the engine passes them: use it as the
    # node's backward directly (a static method), saving a call per node.
    backward = staticmethod(rule)

    # The Jacobian is diagonal: the JVP is the same rule applied to the tangent.
    if needs == "x":

        def jvp(self, tangents, inputs, x):
            return rule(tangents[0], x)
    elif needs == "out":

        def jvp(self, tangents, inputs, out):
            return rule(tangents[0], out)
    else:

        def jvp(self, tangents, inputs):
            return rule(tangents[0])

    node_cls = type(node_name, (Node,), {"__slots__": (), "backward": backward, "jvp": jvp})
    keeps_int = name in _KEEPS_INT
    save_x = needs == "x"
    save_out = needs == "out"

    def op(input, *, out=None):
        if not isinstance(input, Tensor):
            _require_tensor(input, name)
        a = input._data
        if not keeps_int:
            if a.dtype.kind not in "fc":
                a = float_operand(a)
        elif name == "square" and a.dtype == np.bool_:
            a = a.astype(np.int64)
        res = forward(a)
        if type(res) is not np.ndarray:
            res = np.asarray(res, dtype=a.dtype)
        t = record(node_cls, res, (input,), (input,) if save_x else (), save_out)
        return t if out is None else _out(t, out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise ``{name}`` (backward node ``{node_name}``)."
    return node_cls, op


_UNARY_OPS = {}
for _row in _UNARY_ROWS:
    _cls, _fn = _make_unary(*_row)
    globals()[_row[1] if _row[0] != "square" else "_SquareBackward"] = _cls
    _UNARY_OPS[_row[0]] = _fn
    globals()[_row[0]] = _fn

arcsin, arccos, arctan = _UNARY_OPS["asin"], _UNARY_OPS["acos"], _UNARY_OPS["atan"]
arcsinh, arccosh, arctanh = _UNARY_OPS["asinh"], _UNARY_OPS["acosh"], _UNARY_OPS["atanh"]
absolute = _UNARY_OPS["abs"]
fix = _UNARY_OPS["trunc"]


class ErfBackward0(Node):
    __slots__ = ()
    jvp = _elementwise_jvp  # diagonal Jacobian: the VJP rule applied to the tangent

    def backward(self, g, x):
        return g * (2 / math.sqrt(math.pi)) * np.exp(-x * x)


def erf_array(a: np.ndarray) -> np.ndarray:
    """The error function of a float array, in its dtype (SciPy's vectorised kernel, imported
    on first use so that ``import ember`` stays light)."""
    from scipy.special import erf as _scipy_erf

    if a.dtype == np.float16:
        return _scipy_erf(a.astype(np.float32)).astype(np.float16)
    return np.asarray(_scipy_erf(a))


def erf(input, *, out=None):
    """The Gauss error function."""
    _require_tensor(input, "erf")
    a = float_operand(input._data)
    return _out(record(ErfBackward0, erf_array(a), (input,), (input,)), out)


# -- comparisons and logical ops (not differentiable) ------------------------------------


def _compare(np_fn):
    def op(input, other, *, out=None):
        other = _scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        return _out(_wrap(np.asarray(np_fn(a, b))), out)

    op.__name__ = np_fn.__name__
    return op


eq = _compare(np.equal)
ne = _compare(np.not_equal)
lt = _compare(np.less)
le = _compare(np.less_equal)
gt = _compare(np.greater)
ge = _compare(np.greater_equal)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def logical_not(input):
    return _wrap(np.logical_not(input._data))


def logical_and(input, other):
    return _wrap(np.logical_and(input._data, _raw(other)))


def logical_or(input, other):
    return _wrap(np.logical_or(input._data, _raw(other)))


def logical_xor(input, other):
    return _wrap(np.logical_xor(input._data, _raw(other)))


def _raw(x):
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _bitwise(np_fn, symbol):
    def op(input, other):
        other = _scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        if np.asarray(a).dtype.kind not in "biu":
            raise TypeError(f"unsupported operand type(s) for {symbol}: 'Tensor' and 'Tensor'")
        return _wrap(np.asarray(np_fn(a, b)))

    return op


bitwise_and = _bitwise(np.bitwise_and, "&")
bitwise_or = _bitwise(np.bitwise_or, "|")
bitwise_xor = _bitwise(np.bitwise_xor, "^")


def bitwise_not(input):
    if input._data.dtype.kind not in "biu":
        raise RuntimeError("bitwise_not is only implemented for integer and boolean tensors")
    return _wrap(np.invert(input._data))


def isnan(input):
    """Elementwise NaN test (a bool tensor)."""
    return _wrap(np.isnan(input._data))


def isinf(input):
    return _wrap(np.isinf(input._data))


def isfinite(input):
    return _wrap(np.isfinite(input._data))


def signbit(input):
    return _wrap(np.signbit(input._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when all elements are close (same formula as torch and NumPy)."""
    return bool(np.allclose(input._data, _raw(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _wrap(np.isclose(input._data, _raw(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other) -> bool:
    """True when both tensors have the same shape and elements."""
    a, b = input._data, _raw(other)
    return a.shape == b.shape and bool(np.array_equal(a, b))


class FmodBackward1(Node):
    __slots__ = ()

    def backward(self, g, a, b):
        return g, -g * np.trunc(a / b)

    def jvp(self, tangents, inputs, a, b):
        ta, tb = tangents
        return _add_tangents(ta, None if tb is None else -tb * np.trunc(a / b))


class RemainderBackward1(Node):
    __slots__ = ()

    def backward(self, g, a, b):
        return g, -g * np.floor(a / b)

    def jvp(self, tangents, inputs, a, b):
        ta, tb = tangents
        return _add_tangents(ta, None if tb is None else -tb * np.floor(a / b))


def fmod(input, other):
    other = _scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    return record(FmodBackward1, np.fmod(a, b), (input, other), _saved2(input, other))


def remainder(input, other):
    other = _scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    return record(RemainderBackward1, np.remainder(a, b), (input, other), _saved2(input, other))


class LerpBackward0(Node):
    __slots__ = ("weight",)

    def backward(self, g):
        w = self.weight
        return g * (1 - w), g * w

    def jvp(self, tangents, inputs):
        (ta, tb), w = tangents, self.weight
        return _add_tangents(None if ta is None else ta * (1 - w), None if tb is None else tb * w)


class LerpBackward1(Node):
    """lerp with a tensor weight."""

    __slots__ = ()

    def backward(self, g, a, b, w):
        return g * (1 - w), g * w, g * (b - a)

    def jvp(self, tangents, inputs, a, b, w):
        ta, tb, tw = tangents
        res = None if ta is None else ta * (1 - w)
        res = _add_tangents(res, None if tb is None else tb * w)
        return _add_tangents(res, None if tw is None else tw * (b - a))


def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` is a number or a tensor.

    Example:
        >>> import ember
        >>> ember.lerp(ember.tensor([0.0]), ember.tensor([10.0]), 0.25)
        tensor([2.5000])
    """
    if isinstance(weight, Tensor):
        a, b = binary_operands(input, end)
        w = weight._data
        res = np.asarray(a + w * (b - a), dtype=np.result_type(a, b))
        return record(LerpBackward1, res, (input, end, weight), (input, end, weight))
    a, b = binary_operands(input, end)
    t = record(LerpBackward0, np.asarray(a + weight * (b - a)), (input, end))
    if (gf := t.grad_fn or _fw.node) is not None:
        gf.weight = weight
    return t


# -- helpers -----------------------------------------------------------------------------


def _out(t: Tensor, out):
    if out is None:
        return t
    from .inplace import copy_

    out._data = np.empty_like(t._data) if out._data.shape != t._data.shape else out._data
    with _no_grad():
        copy_(out, t)
    return out


def _no_grad():
    from ..autograd.grad_mode import no_grad

    return no_grad()


def _reflected(fn):
    def op(self, other):
        return (
            fn(_scalar_or_tensor(other), self) if not isinstance(other, Tensor) else fn(other, self)
        )

    return op


def _radd(self, other):
    # other + self: addition commutes, and torch records AddBackward0 either way.
    return add(self, other)


def _rmul(self, other):
    return mul(self, other)


def _rsub(self, other):
    return rsub(self, other)


def _rpow_method(self, other):
    return _rpow(other, self)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented  # torch: unsupported operand type(s) for @
    from .linalg import matmul

    return matmul(other, self)


def _matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    from .linalg import matmul

    return matmul(self, other)


def _floordiv(self, other):
    return div(self, other, rounding_mode="floor")


def _rfloordiv(self, other):
    return (
        div(
            _scalar_or_tensor(other) if not isinstance(other, Tensor) else other,
            self,
            rounding_mode="floor",
        )
        if isinstance(other, Tensor)
        else div(_wrap(np.asarray(other, dtype=self._data.dtype)), self, rounding_mode="floor")
    )


def _eq_method(self, other):
    if other is None:
        return False
    return eq(self, other)


def _ne_method(self, other):
    if other is None:
        return True
    return ne(self, other)


register_methods(
    {
        "add": add,
        "sub": sub,
        "subtract": sub,
        "mul": mul,
        "multiply": mul,
        "div": div,
        "divide": div,
        "true_divide": div,
        "pow": pow,
        "neg": neg,
        "negative": neg,
        "maximum": maximum,
        "minimum": minimum,
        "atan2": atan2,
        "arctan2": atan2,
        "clamp": clamp,
        "clip": clamp,
        "clamp_min": clamp_min,
        "clamp_max": clamp_max,
        "erf": erf,
        "fmod": fmod,
        "remainder": remainder,
        "lerp": lerp,
        "eq": eq,
        "ne": ne,
        "lt": lt,
        "le": le,
        "gt": gt,
        "ge": ge,
        "greater": gt,
        "greater_equal": ge,
        "less": lt,
        "less_equal": le,
        "not_equal": ne,
        "logical_not": logical_not,
        "logical_and": logical_and,
        "logical_or": logical_or,
        "logical_xor": logical_xor,
        "bitwise_not": bitwise_not,
        "isnan": isnan,
        "isinf": isinf,
        "isfinite": isfinite,
        "signbit": signbit,
        "allclose": allclose,
        "isclose": isclose,
        "equal": equal,
        "where": lambda self, condition, other: where(condition, self, other),
        "arcsin": arcsin,
        "arccos": arccos,
        "arctan": arctan,
        "arcsinh": arcsinh,
        "arccosh": arccosh,
        "arctanh": arctanh,
        "absolute": absolute,
        "fix": fix,
        **_UNARY_OPS,
        "__add__": add,
        "__radd__": _radd,
        "__sub__": sub,
        "__rsub__": _rsub,
        "__mul__": mul,
        "__rmul__": _rmul,
        "__truediv__": div,
        "__rtruediv__": rtruediv,
        "__floordiv__": _floordiv,
        "__rfloordiv__": _rfloordiv,
        "__mod__": remainder,
        "__pow__": pow,
        "__rpow__": _rpow_method,
        "__matmul__": _matmul,
        "__rmatmul__": _rmatmul,
        "__neg__": neg,
        "__pos__": lambda self: self,
        "__abs__": _UNARY_OPS["abs"],
        "__invert__": bitwise_not,
        "__and__": bitwise_and,
        "__or__": bitwise_or,
        "__xor__": bitwise_xor,
        "__rand__": bitwise_and,
        "__ror__": bitwise_or,
        "__rxor__": bitwise_xor,
        "__eq__": _eq_method,
        "__ne__": _ne_method,
        "__lt__": lt,
        "__le__": le,
        "__gt__": gt,
        "__ge__": ge,
    },
    ufuncs={
        "add": add,
        "subtract": sub,
        "multiply": mul,
        "true_divide": div,
        "divide": div,
        "power": pow,
        "negative": neg,
        "maximum": maximum,
        "minimum": minimum,
        "arctan2": atan2,
        "equal": eq,
        "not_equal": ne,
        "less": lt,
        "less_equal": le,
        "greater": gt,
        "greater_equal": ge,
        "logical_not": logical_not,
        "logical_and": logical_and,
        "logical_or": logical_or,
        "absolute": _UNARY_OPS["abs"],
        "arcsin": arcsin,
        "arccos": arccos,
        "arctan": arctan,
        "arcsinh": arcsinh,
        "arccosh": arccosh,
        "arctanh": arctanh,
        "reciprocal": _UNARY_OPS["reciprocal"],
        **{
            k: v
            for k, v in _UNARY_OPS.items()
            if hasattr(np, k) and isinstance(getattr(np, k), np.ufunc)
        },
    },
)
