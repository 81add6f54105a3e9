"""Elementwise ops: arithmetic, comparisons and unary math.

Each differentiable op is one ``defop`` declaration (its forward on arrays, one derivative
per input, its forward-mode kind) next to its public function. Rules are written with
operators and NumPy ufuncs only, so the same line runs on raw arrays (plain backward) and
on Tensors (a recorded backward, through ``Tensor.__array_ufunc__``). Broadcasting is undone
by the engine, not here; every derivative here is elementwise, so forward mode follows.
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from .._alloc import from_numpy_error
from .._dtype import scalar_name
from .._meta import keep_array
from .._tensor import Tensor
from ..autograd.opdef import cconj
from ._core import (
    ELEMENTWISE,
    QUIET,
    binary_operands,
    broadcast_error,
    broadcast_shapes,
    default_float,
    defop,
    float_operand,
    quiet_reset,
    quiet_set,
    record,
    register,
    register_methods,
    require_tensor,
    result_type,
    run,
    scalar_or_tensor,
    with_eager_kernel,
    write_out,
)
from .indexing import nonzero

_wrap = Tensor._wrap
_PASS_THROUGH = frozenset((Tensor, int, float, bool, complex))
_ALPHA_1 = (1,)


def _select(cond, x, y):
    """``where(cond, x, y)`` on arrays, or recorded when ``x``/``y`` is a Tensor."""
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        return where(cond, x, y)
    return np.where(cond, x, y)


def _zero_where(cond, value):
    """``value`` with zeros where ``cond`` holds (not 0 * inf: torch's conventions)."""
    return _select(cond, 0.0 if isinstance(value, Tensor) else 0, value)


def _zeros_like(x):
    """Zeros shaped like ``x``: torch's ``zeros_like`` in a rule, where ``x * 0`` would be
    NaN at an infinite or NaN gradient."""
    if isinstance(x, Tensor):
        return _wrap(np.zeros_like(x._data))
    return np.zeros_like(x)


# -- add, sub, rsub ----------------------------------------------------------------------------

AddBackward0 = defop(
    "AddBackward0",
    inputs=("self", "other"),
    params=("alpha",),
    forward=lambda a, b, alpha: (a + b) if alpha == 1 else (a + b * alpha),
    vjp={
        "self": lambda g: g,
        "other": lambda g, alpha: g if alpha == 1 else g * alpha,
    },
    jvp=ELEMENTWISE,
)


@register("add", method=True, inplace=True, ufunc="add")
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting.

    Example:
        >>> import ember
        >>> ember.add(ember.tensor([1.0, 2.0]), 10, alpha=2)
        tensor([21., 22.])
    """
    if type(other) not in _PASS_THROUGH:
        other = scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    # AddBackward0.forward, inlined with run's error handling: + is the hottest op.
    token = quiet_set(QUIET)
    try:
        res = (a + b) if alpha == 1 else (a + b * alpha)
    except ValueError:
        raise broadcast_error(np.shape(a), np.shape(b)) from None
    except MemoryError as e:  # e.g. an expanded view plus 1: torch's RuntimeError
        raise from_numpy_error(e) from None
    finally:
        quiet_reset(token)
    t = record(AddBackward0, res, (input, other), _ALPHA_1 if alpha == 1 else (alpha,))
    return t if out is None else write_out("add", t, out)


SubBackward0 = defop(
    "SubBackward0",
    inputs=("self", "other"),
    params=("alpha",),
    forward=lambda a, b, alpha: (a - b) if alpha == 1 else (a - b * alpha),
    vjp={
        "self": lambda g: g,
        "other": lambda g, alpha: -g if alpha == 1 else g * -alpha,
    },
    jvp=ELEMENTWISE,
)


@register("sub", "subtract", method=True, inplace=True, ufunc="subtract")
def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other`` with broadcasting.

    Example:
        >>> import ember
        >>> ember.sub(ember.tensor([5.0]), ember.tensor([1.0]))
        tensor([4.])
    """
    if type(other) not in _PASS_THROUGH:
        other = scalar_or_tensor(other)
    _check_bool_sub(input, other)
    a, b = binary_operands(input, other)
    t = run(SubBackward0, (input, other), (a, b), _ALPHA_1 if alpha == 1 else (alpha,))
    return t if out is None else write_out("sub", t, out)


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


_rsub_forward = lambda a, b, alpha: (b - a) if alpha == 1 else (b - a * alpha)  # noqa: E731
_rsub_self = lambda g, alpha: -g if alpha == 1 else g * -alpha  # noqa: E731

RsubBackward0 = defop(  # other - alpha * self, both tensors
    "RsubBackward0",
    inputs=("self", "other"),
    params=("alpha",),
    forward=_rsub_forward,
    vjp={"self": _rsub_self, "other": lambda g: g},
    jvp=ELEMENTWISE,
)

RsubBackward1 = defop(  # other - alpha * self, other a number
    "RsubBackward1",
    params=("other", "alpha"),
    forward=lambda a, other, alpha: _rsub_forward(a, other, alpha),
    vjp={"self": _rsub_self},
    jvp=ELEMENTWISE,
)


@register("rsub")
def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``2 - x`` in Python).

    Example:
        >>> import ember
        >>> ember.rsub(ember.tensor([1.0]), 5)
        tensor([4.])
    """
    other = scalar_or_tensor(other)
    _check_bool_sub(input, other)
    a, b = binary_operands(input, other)
    params = _ALPHA_1 if alpha == 1 else (alpha,)
    if isinstance(other, Tensor):
        return run(RsubBackward0, (input, other), (a, b), params)
    return run(RsubBackward1, (input,), (a,), (b, alpha))


# -- mul, div --------------------------------------------------------------------------------

MulBackward0 = defop(
    "MulBackward0",
    inputs=("self", "other"),
    forward=np.multiply,
    vjp={
        # torch's complex convention: g * conj(d/dz); cconj is free for real values.
        "self": lambda g, other: g * cconj(other),
        "other": lambda g, self: g * cconj(self),
    },
    jvp=ELEMENTWISE,
)


@register("mul", "multiply", method=True, inplace=True, ufunc="multiply")
def mul(input, other, *, out=None):
    """Elementwise product with broadcasting.

    Example:
        >>> import ember
        >>> ember.mul(ember.tensor([1.0, 2.0]), 3)
        tensor([3., 6.])
    """
    if type(other) not in _PASS_THROUGH:
        other = scalar_or_tensor(other)
    if not isinstance(input, Tensor):  # mul(2, x): multiplication commutes
        input, other = other, input
    a, b = binary_operands(input, other)
    # MulBackward0.forward, inlined with run's error handling: * is the hottest op.
    token = quiet_set(QUIET)
    try:
        res = a * b
    except ValueError:
        raise broadcast_error(np.shape(a), np.shape(b)) from None
    except MemoryError as e:
        raise from_numpy_error(e) from None
    finally:
        quiet_reset(token)
    t = record(MulBackward0, res, (input, other))
    return t if out is None else write_out("mul", t, out)


def _true_divide(a, b):
    kind = a.dtype.kind if hasattr(a, "dtype") else ("i" if isinstance(a, int) else "f")
    if kind in "biu":
        dt = default_float()  # integer division gives the default float dtype, as torch
        return np.asarray(a, dtype=dt) / np.asarray(b, dtype=dt)
    return a / b


DivBackward0 = defop(
    "DivBackward0",
    inputs=("self", "other"),
    forward=_true_divide,
    vjp={
        "self": lambda g, other: g / cconj(other),
        # torch's order: self / other / other, not self / other**2 (which underflows to
        # 0 and overflows to inf where torch's quotients stay finite)
        "other": lambda g, self, other: -g * cconj(self / other / other),
    },
    jvp=ELEMENTWISE,
)


def _rounded_divide(a, b, rounding_mode):
    kind = _result_kind(a, b)
    if kind in "iub":  # torch raises where NumPy gives 0
        _check_int_divisor(kind, a, b, f"div_{rounding_mode}_cpu")
        return np.floor_divide(a, b) if rounding_mode == "floor" else _int_trunc_div(a, b)
    # floor: torch's div_floor_floating is NumPy's floor_divide (fmod based: NaN for an
    # infinite dividend, -1 for 1 // -inf), not floor(a / b)
    return np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(a / b)


def _result_kind(a, b) -> str:
    """The result dtype's kind of operands from binary_operands: an array operand has the
    result's dtype (the other may be a Python number of another kind)."""
    return (b if type(b) is np.ndarray else np.asarray(a)).dtype.kind


def _check_int_divisor(kind: str, a, b, kernel: str) -> None:
    """torch's errors for integer division of ``kind``, where NumPy gives 0: by zero (even
    one zero divisor), and of bools (torch has no bool kernel)."""
    if kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if type(b) is np.ndarray:
        # count_nonzero: one C call, no ufunc machinery (a small tensor's hot path)
        if np.count_nonzero(b) == b.size:
            return
    elif b:
        return
    if math.prod(np.broadcast_shapes(np.shape(a), np.shape(b))):  # an empty quotient: none
        raise RuntimeError("ZeroDivisionError")


DivBackward2 = defop(  # div with rounding_mode: piecewise constant
    "DivBackward2",
    inputs=("self", "other"),
    params=("rounding_mode",),
    forward=_rounded_divide,
    vjp={"self": _zeros_like, "other": _zeros_like},  # torch's zeros, even for inf/NaN grads
    jvp=ELEMENTWISE,
)


@register(
    "div", "divide", "true_divide", method=True, inplace=True, ufunc=("true_divide", "divide")
)
def div(input, other, *, rounding_mode=None, out=None):
    """True division (or ``rounding_mode='trunc'|'floor'``) with broadcasting.

    Example:
        >>> import ember
        >>> ember.div(ember.tensor([1, 2]), 2)
        tensor([0.5000, 1.0000])
    """
    if type(other) not in _PASS_THROUGH:
        other = scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    if rounding_mode is not None:
        if rounding_mode not in ("floor", "trunc"):
            raise RuntimeError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        t = run(DivBackward2, (input, other), (a, b), (rounding_mode,))
    else:
        t = run(DivBackward0, (input, other), (a, b))
    return t if out is None else write_out("div", t, out)


def _int_trunc_div(a, b):
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return q + fix


NotImplemented_ = defop(  # torch's floor_divide has no derivative: a node that says so
    "NotImplemented",
    inputs=("self", "other"),
    forward=lambda a, b: _rounded_divide(a, b, "floor"),
    vjp=lambda g: _no_derivative("aten::floor_divide"),
    jvp=lambda t_self, t_other: _no_forward_derivative("aten::floor_divide"),
)


def _no_derivative(op: str):
    raise RuntimeError(f"derivative for {op} is not implemented")


def _no_forward_derivative(op: str):
    raise NotImplementedError(f"Trying to use forward AD with {op} that does not support it.")


@register("floor_divide", method=True, inplace=True, ufunc="floor_divide")
def floor_divide(input, other, *, out=None):
    """``input // other`` rounded toward minus infinity (not differentiable, as in torch).

    Example:
        >>> import ember
        >>> ember.floor_divide(ember.tensor([7, -7]), 2)
        tensor([ 3, -4])
    """
    other = scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    t = run(NotImplemented_, (input, other), (a, b))
    return t if out is None else write_out("floor_divide", t, out)


# -- pow -----------------------------------------------------------------------------------------


def _cube(a):
    return np.multiply(np.square(a), a)  # torch's x * x * x, rounded as it is


def _inv_square(a):
    return np.reciprocal(np.square(a))  # torch's 1 / (x * x)


def _rsqrt(a):
    return np.reciprocal(np.sqrt(a))  # torch's rsqrt: 1 / sqrt(x), -inf at -0.0


def _complex_reciprocal(a):
    return 1 / a  # NumPy's complex division is torch's: 1 / 0j is inf+nanj (np.reciprocal: nan)


def _cpow(a, b):
    """Complex ``a ** b`` as torch's kernel computes it (C's cpow): exp(b * log(a)), so
    0 ** 0 is NaN and 0 ** -1 inf+nanj where NumPy's power gives 1 and nan+nanj."""
    return np.exp(b * np.log(a))


# torch's pow(tensor, number) kernel runs these exponents as products, sqrt, 1/sqrt and
# 1/x, whose rounding and special values differ from pow's (rsqrt(-0.0) is -inf where
# pow(-0.0, -0.5) is inf; x*x*x rounds twice), and fills or copies for 0 and 1. NumPy's
# loop takes sqrt, 1/x and x*x for 0.5, -1 and 2 too, but a direct ufunc is faster.
_POW_KERNELS = {
    3: _cube,
    -2: _inv_square,
    0.5: np.sqrt,
    -0.5: _rsqrt,
    -1: np.reciprocal,
}
_COMPLEX_POW_KERNELS = {
    3: _cube,
    -2: lambda a: 1 / np.square(a),
    0.5: np.sqrt,
    -0.5: lambda a: 1 / np.sqrt(a),
    -1: _complex_reciprocal,
    1: np.positive,  # torch copies (NumPy's complex power loses the sign of a zero)
    0: np.ones_like,  # torch fills ones (cpow(0, 0) would be NaN)
}


def _pow_scalar(a, exponent):
    """``a ** exponent`` on an array with a number exponent, as torch's kernel computes it."""
    if exponent == 2:
        return np.square(a)
    kind = a.dtype.kind
    if kind == "f":
        kernel = _POW_KERNELS.get(exponent)
        if kernel is None or a.dtype.itemsize == 2:  # torch's float16 pow has no shortcuts
            return np.power(a, exponent)
        return kernel(a)
    if kind == "c":
        kernel = _COMPLEX_POW_KERNELS.get(exponent)
        return _cpow(a, exponent) if kernel is None else kernel(a)
    return np.power(a, exponent)


def _pow_tensors(a, b):
    """``a ** b`` on arrays of any dtype, as torch's pow(tensor, tensor) kernel computes it."""
    try:
        res = np.power(a, b)
    except ValueError:
        return _int_pow(a, b)
    kind = res.dtype.kind
    if kind == "c":
        return _cpow(a, b)
    if kind == "f" and type(b) is np.ndarray and _may_broadcast(b, res):
        res = np.asarray(res)
        _fix_broadcast_sqrt(res, a, b)
    return res


def _may_broadcast(b, res) -> bool:
    """Whether NumPy's loop may see the exponent with a stride of 0: broadcast, 0-dim, or a
    view (an expanded tensor's). A few attribute reads; a false positive costs a check."""
    return b.size != res.size or not b.ndim or b.base is not None


def _fix_broadcast_sqrt(res, a, b) -> None:
    """NumPy's pow loop takes sqrt for an exponent of 0.5 it sees with a stride of 0:
    -0.0 and NaN at -0.0 and -inf, where torch's pow gives 0.0 and inf. In place."""
    fast = (b == 0.5) & ((a == 0) | (a == -np.inf))
    if fast.any():
        np.copyto(res, np.abs(a), where=fast)


def _int_pow(a, b):
    """torch's integer pow where NumPy refuses negative exponents: 1 ** b is 1, (-1) ** b
    is 1 or -1 by b's parity, any other base gives 0 (0 ** -1 included)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        raise  # not the negative-exponent refusal: the caller's ValueError stands
    neg = b < 0
    res = np.power(a, np.where(neg, 0, b))
    odd = (b % 2) != 0
    sign = np.where(odd, a, np.ones_like(a))  # (-1) ** odd is -1, 1 ** b is 1
    return np.where(neg, np.where((a == 1) | (a == -1), sign, 0), res).astype(res.dtype)


def _pow_number(x, exponent):
    """``x ** exponent`` for a number exponent on an array (torch's kernels) or a Tensor."""
    return x**exponent if isinstance(x, Tensor) else _pow_scalar(x, exponent)


def _pow_pair(x, y):
    """``x ** y`` on arrays (torch's kernel) or Tensors (recorded)."""
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        return pow(x, y)
    return _pow_tensors(x, y)


def _pow_scalar_grad(g, self, exponent):
    if exponent == 0:
        return _zeros_like(self)  # torch's zeros, whatever the gradient
    if exponent == 2:
        return g * cconj(2 * self)
    return g * cconj(exponent * _pow_number(self, exponent - 1))


PowBackward0 = defop(  # tensor ** number
    "PowBackward0",
    params=("exponent",),
    forward=_pow_scalar,
    vjp={"self": _pow_scalar_grad},
    jvp=ELEMENTWISE,
)


def _nonnegative(exponent):
    """torch's test for ``0 ** exponent`` having no exponent gradient: a real exponent >= 0."""
    if exponent.is_complex() if isinstance(exponent, Tensor) else np.iscomplexobj(exponent):
        return (np.imag(exponent) == 0) & (np.real(exponent) >= 0)
    return exponent >= 0


_POW_TENSORS_VJP = {
    # torch's conventions: no gradient for the base where the exponent is 0, none for the
    # exponent where the base is 0 and the exponent >= 0 (result * log(0) is -inf or NaN
    # elsewhere, as in torch).
    "self": lambda g, self, exponent: _zero_where(
        exponent == 0, g * cconj(exponent * _pow_pair(self, exponent - 1))
    ),
    "exponent": lambda g, self, exponent, result: (
        g * cconj(_zero_where((self == 0) & _nonnegative(exponent), result * np.log(self)))
    ),
}
PowBackward1 = defop(  # tensor ** tensor
    "PowBackward1",
    inputs=("self", "exponent"),
    forward=_pow_tensors,
    vjp=_POW_TENSORS_VJP,
    jvp=ELEMENTWISE,
)


def _rpow_grad(g, result, base, exponent):
    if base == 0:
        # torch: no gradient where the exponent is real and >= 0, else result * log(0):
        # inf * -inf where e < 0, NaN where e is NaN
        return g * cconj(_zero_where(_nonnegative(exponent), result * -math.inf))
    if isinstance(base, complex) or np.iscomplexobj(base) or np.iscomplexobj(result):
        return g * cconj(result * cmath.log(base))
    # The log of a negative base is NaN, as in torch (the gradient is undefined there).
    return g * cconj(result * (math.log(base) if base > 0 else math.nan))


def _rpow_forward(e, base):
    try:
        res = np.power(base, e)
    except ValueError:
        return _int_pow(base, e)
    if res.dtype.kind == "c":
        if base == 1:  # torch fills 1s (NumPy's 1 ** inf and cpow's inf * log(1) are NaN)
            return np.ones_like(res)
        return _cpow(np.asarray(base, res.dtype), e)  # log(-1) complex, in e's precision
    return res


PowBackward2 = defop(  # number ** tensor
    "PowBackward2",
    inputs=("exponent",),
    params=("base",),
    forward=_rpow_forward,
    vjp={"exponent": _rpow_grad},
    jvp=ELEMENTWISE,
)

# torch's C type names, for its message on a number exponent out of an integer dtype's range
_C_INT_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int"}


@register("pow", method=True, inplace=True, ufunc="power")
def pow(input, exponent, *, out=None):  # noqa: A001
    """``input ** exponent`` for tensor or scalar base/exponent.

    Example:
        >>> import ember
        >>> ember.pow(ember.tensor([2.0, 3.0]), 2)
        tensor([4., 9.])
    """
    if not isinstance(input, Tensor):
        t = _rpow(input, exponent)
    elif isinstance(exponent, (int, float, complex)) and not isinstance(exponent, bool):
        if input._data.dtype.kind in "iub" and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        try:
            a, _ = binary_operands(input, exponent)
            t = run(PowBackward0, (input,), (a,), (exponent,))
        except OverflowError:  # NumPy: an int exponent out of the tensor's integer dtype
            name = _C_INT_NAMES.get(input._data.dtype.name, input._data.dtype.name)
            raise RuntimeError(
                f"value cannot be converted to type {name} without overflow"
            ) from None
    else:
        exponent = scalar_or_tensor(exponent)
        a, b = binary_operands(input, exponent)
        if a.dtype.kind == "b":
            return _bool_pow(input, exponent, out)
        t = run(PowBackward1, (input, exponent), (a, b))
    return t if out is None else write_out("pow", t, out)


def _bool_pow(input, exponent, out):
    """pow with a bool result: torch copies for ``True``, fills ones for ``False`` and has
    no bool kernel for anything else."""
    if exponent is True or exponent is False:
        t = input.clone() if exponent else _wrap(np.ones_like(input._data))
        return t if out is None else write_out("pow", t, out)
    raise NotImplementedError("\"pow\" not implemented for 'Bool'")


def _rpow(base, exponent: Tensor):
    """``base ** tensor`` for a Python-number base."""
    try:
        a, b = binary_operands(base, exponent)
    except OverflowError:  # an int base out of a uint8 exponent's range: wrapped, below
        a, b = binary_operands(_wrap_int(base, exponent._data.dtype), exponent)
    kind = b.dtype.kind
    if kind in "biuc":
        if kind == "b":
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        if type(a) is int and kind != "c":
            # torch converts the base to the exponent's dtype, wrapping (300 is 44 in uint8)
            a = np.asarray(_wrap_int(a, b.dtype), dtype=b.dtype)
    return run(PowBackward2, (exponent,), (b,), (a,))


def _wrap_int(value: int, dtype: np.dtype) -> int:
    bits = dtype.itemsize * 8
    value %= 1 << bits
    return value - (1 << bits) if dtype.kind == "i" and value >= 1 << (bits - 1) else value


# -- maximum, minimum, atan2 ---------------------------------------------------------------


def _tie_weight(self, other, sign):
    """Where ``self`` wins the comparison: 1, 0.5 at ties (torch splits ties evenly)."""
    wins = (self > other) if sign > 0 else (self < other)
    return wins + (self == other) * 0.5


MaximumBackward0 = defop(
    "MaximumBackward0",
    inputs=("self", "other"),
    forward=np.maximum,
    vjp={
        "self": lambda g, self, other: g * _tie_weight(self, other, 1),
        "other": lambda g, self, other: g * _tie_weight(other, self, 1),
    },
    jvp=ELEMENTWISE,
)

MinimumBackward0 = defop(
    "MinimumBackward0",
    inputs=("self", "other"),
    forward=np.minimum,
    vjp={
        "self": lambda g, self, other: g * _tie_weight(self, other, -1),
        "other": lambda g, self, other: g * _tie_weight(other, self, -1),
    },
    jvp=ELEMENTWISE,
)


def _require_other_tensor(other, fname):
    require_tensor(other, fname, "other", 2)


@register("maximum", method=True, ufunc="maximum")
def maximum(input, other, *, out=None):
    """Elementwise maximum (NaN propagates).

    Example:
        >>> import ember
        >>> ember.maximum(ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0]))
        tensor([3., 5.])
    """
    _require_other_tensor(other, "maximum")
    a, b = binary_operands(input, other)
    return write_out("maximum", run(MaximumBackward0, (input, other), (a, b)), out)


@register("minimum", method=True, ufunc="minimum")
def minimum(input, other, *, out=None):
    """Elementwise minimum (NaN propagates).

    Example:
        >>> import ember
        >>> ember.minimum(ember.tensor([1.0, 5.0]), ember.tensor([3.0, 2.0]))
        tensor([1., 2.])
    """
    _require_other_tensor(other, "minimum")
    a, b = binary_operands(input, other)
    return write_out("minimum", run(MinimumBackward0, (input, other), (a, b)), out)


Atan2Backward0 = defop(
    "Atan2Backward0",
    inputs=("self", "other"),
    forward=np.arctan2,
    vjp={
        "self": lambda g, self, other: g * other / (self * self + other * other),
        "other": lambda g, self, other: -g * self / (self * self + other * other),
    },
    jvp=ELEMENTWISE,
)


@register("atan2", "arctan2", method=True, inplace=True, ufunc="arctan2")
def atan2(input, other, *, out=None):
    """Elementwise arctangent of ``input / other`` using the signs of both.

    Example:
        >>> import ember
        >>> ember.atan2(ember.tensor([1.0]), ember.tensor([1.0]))
        tensor([0.7854])
    """
    a, b = binary_operands(input, other)
    a, b = float_operand(np.asarray(a)), float_operand(np.asarray(b))
    return write_out("atan2", run(Atan2Backward0, (input, other), (a, b)), out)


# -- where, clamp ---------------------------------------------------------------------------------

WhereBackward0 = defop(
    "WhereBackward0",
    inputs=("self", "other"),
    params=("condition",),  # a bool array: not a tensor input (no edge), as in torch
    forward=lambda a, b, condition: np.where(condition, a, b),
    vjp={
        "self": lambda g, condition: _select(condition, g, g * 0),
        "other": lambda g, condition: _select(condition, g * 0, g),
    },
    jvp=lambda t_self, t_other, condition: _select(
        condition,
        t_self if t_self is not None else 0.0,
        t_other if t_other is not None else 0.0,
    ),
)


@register("where", ufunc=())
def where(condition, input=None, other=None, *, out=None):
    """Pick ``input`` where ``condition`` holds, else ``other`` (broadcasting all three).

    Example:
        >>> import ember
        >>> x = ember.tensor([-1.0, 2.0])
        >>> ember.where(x > 0, x, 0.0)
        tensor([0., 2.])
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    c = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if c.dtype != np.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype if isinstance(condition, Tensor) else c.dtype}"
        )
    input = scalar_or_tensor(input)
    other = scalar_or_tensor(other)
    a, b = binary_operands(input, other)
    try:
        np.broadcast_shapes(c.shape, np.shape(a), np.shape(b))
    except ValueError:
        raise broadcast_error(c.shape, np.shape(a), np.shape(b)) from None
    return write_out("where", run(WhereBackward0, (input, other), (a, b), (c,)), out)


def _clamp_mask(self, min, max):  # noqa: A002
    mask = True
    if min is not None:
        mask = self >= min
    if max is not None:
        mask = mask & (self <= max) if min is not None else self <= max
    return mask


def _clip(a, min, max):  # noqa: A002
    if min is not None and max is not None and min > max:
        return np.full_like(a, max)
    # A Python number bound promotes bfloat16 to float32 (a float on any NumPy, an int
    # before NumPy 2.1.3).
    return np.clip(a, min, max).astype(a.dtype, copy=False)


ClampBackward1 = defop(  # number bounds
    "ClampBackward1",
    params=("min", "max"),
    forward=_clip,
    vjp={"self": lambda g, self, min, max: g * _clamp_mask(self, min, max)},
    jvp=ELEMENTWISE,
)

ClampMinBackward0 = defop(
    "ClampMinBackward0",
    params=("min",),
    forward=lambda a, min: np.maximum(a, np.asarray(min, a.dtype)),
    vjp={"self": lambda g, self, min: g * (self >= min)},
    jvp=ELEMENTWISE,
)

ClampMaxBackward0 = defop(
    "ClampMaxBackward0",
    params=("max",),
    forward=lambda a, max: np.minimum(a, np.asarray(max, a.dtype)),
    vjp={"self": lambda g, self, max: g * (self <= max)},
    jvp=ELEMENTWISE,
)


def _clamp_masks(self, min, max):  # noqa: A002
    """Where min(max(x, lo), hi) takes hi (crossed bounds too), and where it takes lo."""
    at_hi = (self > max) | (min > max)
    return at_hi, (self < min) & ~at_hi


def _clamp_tensor_jvp(t_self, t_min, t_max, self, min, max):  # noqa: A002
    at_hi, at_lo = _clamp_masks(self, min, max)
    res = None if t_self is None else t_self * ~(at_hi | at_lo)
    if t_min is not None:
        res = t_min * at_lo if res is None else res + t_min * at_lo
    if t_max is not None:
        res = t_max * at_hi if res is None else res + t_max * at_hi
    return res


def _clamp_self_grad(g, self, min, max):  # noqa: A002
    at_hi, at_lo = _clamp_masks(self, min, max)
    return g * ~(at_hi | at_lo)


ClampBackward0 = defop(  # tensor bounds (a missing bound is an infinite one)
    "ClampBackward0",
    inputs=("self", "min", "max"),
    forward=lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi).astype(a.dtype, copy=False),
    vjp={
        "self": _clamp_self_grad,
        "min": lambda g, self, min, max: g * _clamp_masks(self, min, max)[1],
        "max": lambda g, self, min, max: g * _clamp_masks(self, min, max)[0],
    },
    jvp=_clamp_tensor_jvp,
)


@register("clamp", "clip", method=True, inplace=True)
def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    """Limit values to ``[min, max]``; gradient flows where the input was inside.

    Example:
        >>> import ember
        >>> ember.clamp(ember.tensor([-2.0, 0.5, 3.0]), min=0, max=1)
        tensor([0.0000, 0.5000, 1.0000])
    """
    require_tensor(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    a = input._data
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = _bound(min, -np.inf, a.dtype)
        hi = _bound(max, np.inf, a.dtype)
        t = run(ClampBackward0, (input, lo, hi), (a, lo._data, hi._data))
    else:
        t = run(ClampBackward1, (input,), (_clamp_operand(input, min, max),), (min, max))
    return write_out("clamp", t, out)


def _clamp_operand(input: Tensor, *bounds) -> np.ndarray:
    """The input's array; integer inputs with a float bound clamp in the default float."""
    a = input._data
    if a.dtype.kind in "iub" and any(isinstance(b, float) for b in bounds):
        return a.astype(default_float())
    return a


def _bound(b, missing: float, np_dtype) -> Tensor:
    if isinstance(b, Tensor):
        return b
    return _wrap(np.asarray(missing if b is None else b, dtype=np_dtype))


@register("clamp_min", method=True, inplace=True)
def clamp_min(input, min):  # noqa: A002
    """``clamp(input, min=min)``.

    Example:
        >>> import ember
        >>> ember.clamp_min(ember.tensor([-1.0, 2.0]), 0.0)
        tensor([0., 2.])
    """
    if isinstance(min, Tensor):
        return clamp(input, min=min)
    require_tensor(input, "clamp_min")
    return run(ClampMinBackward0, (input,), (_clamp_operand(input, min),), (min,))


@register("clamp_max", method=True, inplace=True)
def clamp_max(input, max):  # noqa: A002
    """``clamp(input, max=max)``.

    Example:
        >>> import ember
        >>> ember.clamp_max(ember.tensor([-1.0, 2.0]), 0.0)
        tensor([-1.,  0.])
    """
    if isinstance(max, Tensor):
        return clamp(input, max=max)
    require_tensor(input, "clamp_max")
    return run(ClampMaxBackward0, (input,), (_clamp_operand(input, max),), (max,))


# -- unary math ---------------------------------------------------------------------------------
# One row per op: name, node name, forward on the array, the derivative (its arguments say
# what it reads: ``self`` the input, ``result`` the output). Rows are declared as ops below.


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


# Arrays of fewer elements run the NumPy code: the C loops' checks and calls cost more than
# they save there (a few microseconds an op).
_C_LOOP_MIN = 16384


def _sigmoid_forward(a):
    if type(a) is np.ndarray and a.size >= _C_LOOP_MIN:
        return with_eager_kernel("sigmoid", sigmoid_numpy, a)
    return sigmoid_numpy(a)


def sigmoid_numpy(a):
    """The logistic function in NumPy, without overflow warnings."""
    if a.dtype.kind == "c":  # torch's sigmoid of complex values: the formula itself
        return 1 / (1 + np.exp(-a))
    if a.size < 4096:
        return _sigmoid_stable(a)
    # Large arrays: 1 / (1 + exp(-a)) in place, one temporary. exp overflows to inf only
    # where the exact result is below the smallest normal number; 1 / inf gives 0 there,
    # as torch does.
    e = np.negative(a)
    np.exp(e, out=e)
    e += 1
    np.reciprocal(e, out=e)
    return e


def _tanh_vjp(g, result):
    if type(g) is np.ndarray and g.size >= _C_LOOP_MIN:
        return with_eager_kernel("tanh_grad", tanh_grad_numpy, g, result)
    return tanh_grad_numpy(g, result)


def tanh_grad_numpy(g, result):
    """``g * conj(1 - result**2)`` in NumPy (ember ops on Tensors)."""
    if type(result) is np.ndarray and type(g) is np.ndarray and result.ndim:
        d = result * result  # g * conj(1 - result**2), reusing one temporary
        np.subtract(1, d, out=d)
        if d.dtype.kind == "c":
            np.conjugate(d, out=d)
        d *= g
        return d
    return g * cconj(1 - result * result)


def _sigmoid_vjp(g, result):
    if type(g) is np.ndarray and g.size >= _C_LOOP_MIN:
        return with_eager_kernel("sigmoid_grad", sigmoid_grad_numpy, g, result)
    return sigmoid_grad_numpy(g, result)


def sigmoid_grad_numpy(g, result):
    """``g * conj(result * (1 - result))`` in NumPy (ember ops on Tensors)."""
    if type(result) is np.ndarray and type(g) is np.ndarray and result.ndim:
        d = 1 - result  # g * conj(result * (1 - result)), reusing one temporary
        d *= result
        if d.dtype.kind == "c":
            np.conjugate(d, out=d)
        d *= g
        return d
    return g * cconj(result * (1 - result))


def _erf_vjp(g, self):
    return g * (2 / math.sqrt(math.pi)) * np.exp(-self * self)


def relu_numpy(a):
    """ReLU in NumPy. A zero of the input's dtype, not 0: NumPy < 2.1.3 promotes bfloat16
    with a Python int to float32."""
    return np.maximum(a, np.zeros((), a.dtype))


def _relu_forward(a):
    """``max(a, 0)``: one C pass on large contiguous float arrays where a C compiler is
    present (checked bit for bit against ``relu_numpy``), else NumPy's."""
    if type(a) is np.ndarray and a.size >= _C_LOOP_MIN:
        return with_eager_kernel("relu", relu_numpy, a)
    return relu_numpy(a)


def relu_grad_numpy(g, result):
    """ReLU's derivative rule ``g * (result > 0)`` in NumPy (ember ops on Tensors)."""
    return g * (result > 0)


def _relu_vjp(g, result):
    """``g * (result > 0)``: one C pass as ``_relu_forward`` chooses it (checked bit for
    bit), else NumPy's two."""
    if type(g) is np.ndarray and g.size >= _C_LOOP_MIN:
        return with_eager_kernel("relu_grad", relu_grad_numpy, g, result)
    return relu_grad_numpy(g, result)


def erf_array(a: np.ndarray) -> np.ndarray:
    """The error function of a float array, in its dtype (SciPy's vectorised kernel, imported
    on first use so that ``import ember`` stays light)."""
    from scipy.special import erf as _scipy_erf

    if a.dtype == np.float16:
        return _scipy_erf(a.astype(np.float32)).astype(np.float16)
    out = _scipy_erf(a)
    return np.asarray(out) if isinstance(out, np.generic) else out


def example_doc(summary: str, call: str, output: str) -> str:
    """A docstring for an op built by a factory: ``summary``, then an example that runs
    ``call`` after ``import ember`` and shows ``output`` (doctest compares it with what ember
    prints, so it is pasted from a run, never computed at import).

    Example:
        >>> from ember._aten.elementwise import example_doc
        >>> doc = example_doc("``-input``.", "ember.neg(ember.tensor([1.0]))", "tensor([-1.])")
        >>> doc.splitlines()[-2:]
        ['    >>> ember.neg(ember.tensor([1.0]))', '    tensor([-1.])']
    """
    shown = output.replace("\n", "\n    ")
    return f"{summary}\n\nExample:\n    >>> import ember\n    >>> {call}\n    {shown}\n"


# What ``explain`` shows for the rules that run a C loop where one applies.
_relu_vjp.formula = "grad * (result > 0)"
_tanh_vjp.formula = "grad * (1 - result * result).conj()"
_sigmoid_vjp.formula = "grad * (result * (1 - result)).conj()"

_LN2, _LN10 = math.log(2.0), math.log(10.0)

_UNARY_ROWS = [
    # Holomorphic ops: g * conj(f'(z)) as torch (cconj returns real values unchanged).
    ("exp", "ExpBackward0", np.exp, lambda g, result: g * cconj(result)),
    ("exp2", "Exp2Backward0", np.exp2, lambda g, result: g * cconj(result) * _LN2),
    ("expm1", "Expm1Backward0", np.expm1, lambda g, result: g * cconj(result + 1)),
    ("log", "LogBackward0", np.log, lambda g, self: g / cconj(self)),
    ("log2", "Log2Backward0", np.log2, lambda g, self: g / cconj(self * _LN2)),
    ("log10", "Log10Backward0", np.log10, lambda g, self: g / cconj(self * _LN10)),
    ("log1p", "Log1PBackward0", np.log1p, lambda g, self: g / cconj(self + 1)),
    ("sqrt", "SqrtBackward0", np.sqrt, lambda g, result: g / cconj(2 * result)),
    (
        "rsqrt",
        "RsqrtBackward0",
        lambda a: np.ones((), a.dtype) / np.sqrt(a),  # not 1: see relu
        lambda g, result: -0.5 * g * cconj(result**3),
    ),
    ("sin", "SinBackward0", np.sin, lambda g, self: g * cconj(np.cos(self))),
    ("cos", "CosBackward0", np.cos, lambda g, self: -g * cconj(np.sin(self))),
    ("tan", "TanBackward0", np.tan, lambda g, result: g * cconj(1 + result * result)),
    ("asin", "AsinBackward0", np.arcsin, lambda g, self: g / cconj(np.sqrt(1 - self * self))),
    ("acos", "AcosBackward0", np.arccos, lambda g, self: -g / cconj(np.sqrt(1 - self * self))),
    ("atan", "AtanBackward0", np.arctan, lambda g, self: g / cconj(1 + self * self)),
    ("sinh", "SinhBackward0", np.sinh, lambda g, self: g * cconj(np.cosh(self))),
    ("cosh", "CoshBackward0", np.cosh, lambda g, self: g * cconj(np.sinh(self))),
    ("tanh", "TanhBackward0", np.tanh, _tanh_vjp),
    ("asinh", "AsinhBackward0", np.arcsinh, lambda g, self: g / cconj(np.sqrt(self * self + 1))),
    ("acosh", "AcoshBackward0", np.arccosh, lambda g, self: g / cconj(np.sqrt(self * self - 1))),
    ("atanh", "AtanhBackward0", np.arctanh, lambda g, self: g / cconj(1 - self * self)),
    ("sigmoid", "SigmoidBackward0", _sigmoid_forward, _sigmoid_vjp),
    (
        "relu",
        "ReluBackward0",
        _relu_forward,
        _relu_vjp,
    ),
    ("abs", "AbsBackward0", np.abs, lambda g, self: g * sgn_rule(self)),
    ("sign", "SignBackward0", np.sign, lambda g: g * 0),
    (
        "reciprocal",
        "ReciprocalBackward0",
        np.reciprocal,
        lambda g, result: -g * cconj(result * result),  # torch's order: r * r first
    ),
    ("square", "PowBackward0", np.square, lambda g, self: g * cconj(2 * self)),
    ("floor", "FloorBackward0", np.floor, lambda g: g * 0),
    ("ceil", "CeilBackward0", np.ceil, lambda g: g * 0),
    ("round", "RoundBackward0", np.round, lambda g: g * 0),
    ("trunc", "TruncBackward0", np.trunc, lambda g: g * 0),
    ("frac", "FracBackward0", lambda a: a - np.trunc(a), lambda g: g),
    ("erf", "ErfBackward0", erf_array, _erf_vjp),
]
# Each op's docstring, in the table's order: what it computes, an example input (the values
# of ``ember.tensor(...)``) and what ember prints for ``ember.<op>(ember.tensor(<input>))``.
_UNARY_DOCS = {
    "exp": ("The exponential ``e ** input``.", "[0.0, 1.0]", "tensor([1.0000, 2.7183])"),
    "exp2": ("``2 ** input``.", "[0.0, 3.0]", "tensor([1., 8.])"),
    "expm1": (
        "``exp(input) - 1``, accurate for small ``input``.",
        "[0.0, 1.0]",
        "tensor([0.0000, 1.7183])",
    ),
    "log": ("The natural logarithm of ``input``.", "[1.0, 10.0]", "tensor([0.0000, 2.3026])"),
    "log2": ("The base-2 logarithm of ``input``.", "[1.0, 8.0]", "tensor([0., 3.])"),
    "log10": ("The base-10 logarithm of ``input``.", "[1.0, 2.0]", "tensor([0.0000, 0.3010])"),
    "log1p": (
        "``log(1 + input)``, accurate for small ``input``.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.6931])",
    ),
    "sqrt": ("The square root of ``input``.", "[0.0, 1.0, 4.0]", "tensor([0., 1., 2.])"),
    "rsqrt": ("``1 / sqrt(input)``.", "[1.0, 4.0]", "tensor([1.0000, 0.5000])"),
    "sin": ("The sine of ``input`` (radians).", "[0.0, 1.0]", "tensor([0.0000, 0.8415])"),
    "cos": ("The cosine of ``input`` (radians).", "[0.0, 1.0]", "tensor([1.0000, 0.5403])"),
    "tan": ("The tangent of ``input`` (radians).", "[0.0, 1.0]", "tensor([0.0000, 1.5574])"),
    "asin": ("The arcsine of ``input``, in radians.", "[0.0, 1.0]", "tensor([0.0000, 1.5708])"),
    "acos": ("The arccosine of ``input``, in radians.", "[1.0, 0.0]", "tensor([0.0000, 1.5708])"),
    "atan": (
        "The arctangent of ``input``, in radians.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.7854])",
    ),
    "sinh": ("The hyperbolic sine of ``input``.", "[0.0, 1.0]", "tensor([0.0000, 1.1752])"),
    "cosh": ("The hyperbolic cosine of ``input``.", "[0.0, 1.0]", "tensor([1.0000, 1.5431])"),
    "tanh": ("The hyperbolic tangent of ``input``.", "[0.0, 1.0]", "tensor([0.0000, 0.7616])"),
    "asinh": (
        "The inverse hyperbolic sine of ``input``.",
        "[0.0, 1.0]",
        "tensor([0.0000, 0.8814])",
    ),
    "acosh": (
        "The inverse hyperbolic cosine of ``input`` (defined from 1).",
        "[1.0, 2.0]",
        "tensor([0.0000, 1.3170])",
    ),
    "atanh": (
        "The inverse hyperbolic tangent of ``input`` (defined on ``(-1, 1)``).",
        "[0.0, 0.5]",
        "tensor([0.0000, 0.5493])",
    ),
    "sigmoid": (
        "The logistic sigmoid ``1 / (1 + exp(-input))``.",
        "[0.0, 2.0]",
        "tensor([0.5000, 0.8808])",
    ),
    "relu": ("``max(input, 0)``.", "[-1.0, 0.0, 2.0]", "tensor([0., 0., 2.])"),
    "abs": (
        "The absolute value of ``input`` (the modulus of complex values).",
        "[-1.5, 2.0]",
        "tensor([1.5000, 2.0000])",
    ),
    "sign": ("-1, 0 or 1: the sign of ``input``.", "[-2.0, 0.0, 3.0]", "tensor([-1.,  0.,  1.])"),
    "reciprocal": ("``1 / input``.", "[2.0, 4.0]", "tensor([0.5000, 0.2500])"),
    "square": ("``input * input``.", "[-2.0, 3.0]", "tensor([4., 9.])"),
    "floor": (
        "Rounds down: the largest integer not above ``input``.",
        "[-1.5, 1.5]",
        "tensor([-2.,  1.])",
    ),
    "ceil": (
        "Rounds up: the smallest integer not below ``input``.",
        "[-1.5, 1.5]",
        "tensor([-1.,  2.])",
    ),
    "round": (
        "Rounds to the nearest integer, halves to the even one.",
        "[0.5, 1.5, 2.7]",
        "tensor([0., 2., 3.])",
    ),
    "trunc": ("Rounds toward zero.", "[-1.7, 1.7]", "tensor([-1.,  1.])"),
    "frac": (
        "The fractional part ``input - trunc(input)`` (with the sign of ``input``).",
        "[-1.5, 2.25]",
        "tensor([-0.5000,  0.2500])",
    ),
    "erf": ("The error function.", "[0.0, 1.0]", "tensor([0.0000, 0.8427])"),
}
# torch's other names for some of them (function and Tensor method alike).
_ALIASES = {
    "asin": ("arcsin",),
    "acos": ("arccos",),
    "atan": ("arctan",),
    "asinh": ("arcsinh",),
    "acosh": ("arccosh",),
    "atanh": ("arctanh",),
    "abs": ("absolute",),
    "trunc": ("fix",),
}
# Ops that keep integer dtypes (others promote integers to the default float dtype).
_KEEPS_INT = {"abs", "sign", "square", "relu", "floor", "ceil", "round", "trunc"}
# Ops that cannot raise NumPy floating-point warnings: they skip the quiet error state.
_EXACT = {"abs", "sign", "floor", "ceil", "round", "trunc", "relu"}
# NumPy ufuncs with another name than ember's function.
_UFUNC_NAMES = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "abs": "absolute",
}


def unary_op(
    name: str,
    node_name: str,
    forward,
    rule,
    *,
    keeps_int: bool = False,
    exact: bool = False,
    aliases: tuple = (),
    ufunc: str | None = None,
    jvp=ELEMENTWISE,
    namespace: str = "torch",
    method: bool = True,
    doc: str | None = None,
):
    """Declare an elementwise one-input op and register its function and methods.

    forward: the op on a float array (integer inputs become the default float dtype
        unless ``keeps_int``); rule: its derivative, reading ``self`` and/or ``result``.
    exact: the op cannot raise NumPy floating-point warnings (no quiet error state).
    doc: the function's docstring (``example_doc``'s).
    Returns ``(node class, function)``.
    """
    node_cls = defop(node_name, forward=forward, vjp={"self": rule}, jvp=jvp)

    def op(input, *, out=None):
        if not isinstance(input, Tensor):
            require_tensor(input, name)
        a = input._data
        if not keeps_int:
            if a.dtype.kind not in "fc":
                a = float_operand(a)
        elif name == "square" and a.dtype == np.bool_:
            a = a.astype(np.int64)
        if exact:
            res = forward(a)
        else:
            token = quiet_set(QUIET)
            try:
                res = forward(a)
            finally:
                quiet_reset(token)
        if type(res) is not np.ndarray:
            res = np.asarray(res, dtype=a.dtype)
        t = record(node_cls, res, (input,))
        return t if out is None else write_out(name, t, out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc or f"Elementwise ``{name}`` (backward node ``{node_name}``)."
    ufunc = ufunc or name
    is_ufunc = isinstance(getattr(np, ufunc, None), np.ufunc)
    register(
        name,
        *aliases,
        namespace=namespace,
        method=method,
        inplace=method,
        ufunc=ufunc if is_ufunc else (),
    )(op)
    return node_cls, op


def sgn_rule(x):
    """torch's ``sgn`` for rules on arrays and Tensors: ``sign(x)`` for reals, ``z / |z|``
    (0 at 0) for complex values, written with differentiable ops for higher orders."""
    if not (x.dtype.kind == "c" if type(x) is np.ndarray else x.is_complex()):
        return np.sign(x)
    a = np.abs(x)
    zero = a == 0
    return _zero_where(zero, x / _select(zero, 1.0, a))


def _abs_jvp(t_self, self):
    """torch's tangent of abs: ``Re(conj(sgn(z)) * t)`` (``sign(x) * t`` for reals)."""
    d = t_self * cconj(sgn_rule(self))
    if d.dtype.kind == "c" if type(d) is np.ndarray else d.is_complex():
        return d.real
    return d


# Explicit forward-mode rules (the others are ELEMENTWISE: derived from the rule above).
_UNARY_JVPS = {"abs": _abs_jvp}


def _unary(name: str, node_name: str, forward, rule):
    summary, values, output = _UNARY_DOCS[name]
    aliases = _ALIASES.get(name, ())
    if aliases:
        summary += " Also ``" + "``, ``".join(f"ember.{a}" for a in aliases) + "``."
    return unary_op(
        name,
        node_name,
        forward,
        rule,
        jvp=_UNARY_JVPS.get(name, ELEMENTWISE),
        keeps_int=name in _KEEPS_INT,
        exact=name in _EXACT,
        aliases=aliases,
        ufunc=_UFUNC_NAMES.get(name),
        doc=example_doc(summary, f"ember.{name}(ember.tensor({values}))", output),
    )


_UNARY_OPS = {}
for _row in _UNARY_ROWS:
    _node, _fn = _unary(*_row)
    if _row[0] != "square":  # square's node is PowBackward0, declared above for tensor ** 2
        globals()[_row[1]] = _node
    globals()[_row[0]] = _fn
    _UNARY_OPS[_row[0]] = _fn


# -- sgn ------------------------------------------------------------------------------------


def _sgn_forward(a):
    """``sign`` of real values, ``z / |z|`` (0 at 0) of complex ones."""
    if a.dtype == np.bool_:
        return a.copy()
    if a.dtype.kind != "c":
        return np.sign(a)
    m = np.abs(a)
    zero = m == 0
    return np.where(zero, 0, a / np.where(zero, 1, m)).astype(a.dtype, copy=False)


def _sgn_vjp(g, self, result):
    """torch's sgn_backward: zero for reals; ``(g - sgn * Re(conj(sgn) g)) / |z|`` (0 at 0)
    for complex values (its own adjoint: forward mode applies the same formula)."""
    if not (self.dtype.kind == "c" if type(self) is np.ndarray else self.is_complex()):
        return _zeros_like(g)
    m = np.abs(self)
    zero = m == 0
    return _zero_where(zero, (g - result * (cconj(result) * g).real) / _select(zero, 1.0, m))


SgnBackward0, sgn = unary_op(
    "sgn",
    "SgnBackward0",
    _sgn_forward,
    _sgn_vjp,
    keeps_int=True,
    jvp=lambda t_self, self, result: _sgn_vjp(t_self, self, result),
    doc=example_doc(
        "``sign`` of real values, ``z / |z|`` of complex ones (0 at 0).",
        "ember.sgn(ember.tensor([3 + 4j, 0j, -2 + 0j]))",
        "tensor([ 0.6000+0.8000j,  0.0000+0.0000j, -1.0000+0.0000j])",
    ),
)


def _round_decimals(a, decimals):
    """torch's rounding to ``decimals`` places: scale by a power of ten in the input's
    dtype, round halves to even, scale back (a negative ``decimals`` rounds to tens...).
    (``abs`` here is this module's op, not the builtin.)"""
    ten = np.asarray(10.0 ** (decimals if decimals >= 0 else -decimals), dtype=a.dtype)
    if decimals >= 0:
        return np.rint(a * ten) / ten
    return np.rint(a / ten) * ten


RoundBackward1 = defop(  # round(decimals=): piecewise constant, as decimals=None is
    "RoundBackward1",
    params=("decimals",),
    forward=_round_decimals,
    vjp={"self": lambda g: g * 0},
    jvp=ELEMENTWISE,
)
_round_to_integers = round  # the table's op: round(input) keeps integer dtypes


@register("round", method=True, inplace=True)
def round(input, *, decimals=None, out=None):
    """Rounds to the nearest integer, halves to the even one; with ``decimals``, to that
    many decimal places (negative: to tens, hundreds...).

    Example:
        >>> import ember
        >>> ember.round(ember.tensor([0.5, 1.5, 2.7]))
        tensor([0., 2., 3.])
        >>> ember.round(ember.tensor([1.2345, 1234.5]), decimals=2)
        tensor([1.2300e+00, 1.2345e+03])
        >>> ember.round(ember.tensor([1234.5]), decimals=-2)
        tensor([1200.])
    """
    if decimals is None:
        return _round_to_integers(input, out=out)
    if not isinstance(input, Tensor):
        require_tensor(input, "round")
    a = input._data
    if a.dtype.kind not in "fcV":
        kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(a.dtype)}'")
    t = run(RoundBackward1, (input,), (a,), (int(decimals),))
    return t if out is None else write_out("round", t, out)


NegBackward0 = defop(
    "NegBackward0", forward=np.negative, vjp={"self": lambda g: -g}, jvp=ELEMENTWISE
)


@register("neg", "negative", method=True, inplace=True, ufunc="negative")
def neg(input, *, out=None):
    """``-input``.

    Example:
        >>> import ember
        >>> ember.neg(ember.tensor([1.0, -2.0]))
        tensor([-1.,  2.])
    """
    require_tensor(input, "neg")
    if input._data.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return write_out("neg", record(NegBackward0, np.negative(input._data), (input,)), out)


@register("positive", method=True)
def positive(input):
    """``+input``: ``input`` itself (torch returns the same tensor, no graph node).

    Example:
        >>> import ember
        >>> t = ember.tensor([1.0, -2.0])
        >>> ember.positive(t) is t
        True
    """
    require_tensor(input, "positive")
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# -- hypot ---------------------------------------------------------------------------------------

HypotBackward0 = defop(
    "HypotBackward0",
    inputs=("self", "other"),
    forward=np.hypot,
    vjp={
        "self": lambda g, self, result: g * self / result,
        "other": lambda g, other, result: g * other / result,
    },
    jvp=ELEMENTWISE,
)


@register("hypot", method=True, inplace=True, ufunc="hypot")
def hypot(input, other, *, out=None):
    """``sqrt(input**2 + other**2)``, elementwise with broadcasting.

    Example:
        >>> import ember
        >>> ember.hypot(ember.tensor([3.0]), ember.tensor([4.0]))
        tensor([5.])
    """
    a, b = binary_operands(input, other)
    return write_out("hypot", run(HypotBackward0, (input, other), (a, b)), out)


# -- fmod, remainder, lerp -----------------------------------------------------------------


def _fmod(a, b):
    kind = _result_kind(a, b)
    if kind in "iub":  # torch raises where NumPy gives 0
        _check_int_divisor(kind, a, b, "fmod_cpu")
    return np.fmod(a, b)


def _remainder(a, b):
    kind = _result_kind(a, b)
    if kind in "iub":  # torch raises where NumPy gives 0
        _check_int_divisor(kind, a, b, "remainder_cpu")
    return np.remainder(a, b)


FmodBackward0 = defop(
    "FmodBackward0",
    params=("other",),
    forward=_fmod,
    vjp={"self": lambda g: g},
    jvp=ELEMENTWISE,
)
FmodBackward1 = defop(
    "FmodBackward1",
    inputs=("self", "other"),
    forward=_fmod,
    vjp={"self": lambda g: g, "other": lambda g, self, other: -g * np.trunc(self / other)},
    jvp=ELEMENTWISE,
)
RemainderBackward0 = defop(
    "RemainderBackward0",
    params=("other",),
    forward=_remainder,
    vjp={"self": lambda g: g},
    jvp=ELEMENTWISE,
)
RemainderBackward1 = defop(
    "RemainderBackward1",
    inputs=("self", "other"),
    forward=_remainder,
    vjp={"self": lambda g: g, "other": lambda g, self, other: -g * np.floor(self / other)},
    jvp=ELEMENTWISE,
)


def _modulo(tensor_cls, scalar_cls, fname):
    def op(input, other, *, out=None):
        other = scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        if isinstance(other, Tensor) or not isinstance(input, Tensor):
            t = run(tensor_cls, (input, other), (a, b))
        else:
            t = run(scalar_cls, (input,), (a,), (b,))
        return write_out(fname, t, out)

    op.__name__ = op.__qualname__ = fname
    return op


fmod = register("fmod", method=True, inplace=True, ufunc="fmod")(
    _modulo(FmodBackward1, FmodBackward0, "fmod")
)
fmod.__doc__ = """Remainder of ``input / other`` with the sign of ``input`` (C's fmod).

    Example:
        >>> import ember
        >>> ember.fmod(ember.tensor([-3.0, 3.0]), 2)
        tensor([-1.,  1.])
    """
remainder = register("remainder", method=True, inplace=True, ufunc="remainder")(
    _modulo(RemainderBackward1, RemainderBackward0, "remainder")
)
remainder.__doc__ = """Remainder of ``input / other`` with the sign of ``other`` (Python's %).

    Example:
        >>> import ember
        >>> ember.remainder(ember.tensor([-3.0, 3.0]), 2)
        tensor([1., 1.])
    """

LerpBackward0 = defop(  # number weight
    "LerpBackward0",
    inputs=("self", "end"),
    params=("weight",),
    forward=lambda a, b, weight: a + weight * (b - a),
    vjp={
        "self": lambda g, weight: g * cconj(1 - weight),
        "end": lambda g, weight: g * cconj(weight),
    },
    jvp=ELEMENTWISE,
)
LerpBackward1 = defop(  # tensor weight
    "LerpBackward1",
    inputs=("self", "end", "weight"),
    forward=lambda a, b, w: np.asarray(a + w * (b - a), dtype=np.result_type(a, b)),
    vjp={
        "self": lambda g, weight: g * cconj(1 - weight),
        "end": lambda g, weight: g * cconj(weight),
        "weight": lambda g, self, end: g * cconj(end - self),
    },
    jvp=ELEMENTWISE,
)


@register("lerp", method=True, inplace=True)
def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` is a number or a tensor.

    Example:
        >>> import ember
        >>> ember.lerp(ember.tensor([0.0]), ember.tensor([10.0]), 0.25)
        tensor([2.5000])
    """
    a, b = binary_operands(input, end)
    if isinstance(weight, Tensor):
        return run(LerpBackward1, (input, end, weight), (a, b, weight._data))
    return run(LerpBackward0, (input, end), (a, b), (weight,))


# -- comparisons and logical ops (not differentiable) ------------------------------------


def _compare(np_fn, fname: str, doc: str, aliases: tuple = ()):
    def op(input, other, *, out=None):
        other = scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        try:
            res = np_fn(a, b)
        except ValueError:
            raise broadcast_error(np.shape(a), np.shape(b)) from None
        return write_out(fname, _wrap(res if type(res) is np.ndarray else keep_array(res)), out)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    return register(fname, *aliases, method=True, inplace=True, ufunc=np_fn.__name__)(op)


_COMPARED = "with broadcasting, as a bool tensor; ``other`` is a tensor or a number."
eq = _compare(
    np.equal,
    "eq",
    example_doc(
        f"``input == other`` {_COMPARED}",
        "ember.eq(ember.tensor([1, 2, 3]), 2)",
        "tensor([False,  True, False])",
    ),
)
ne = _compare(
    np.not_equal,
    "ne",
    example_doc(
        f"``input != other`` {_COMPARED} Also ``ember.not_equal``.",
        "ember.ne(ember.tensor([1, 2, 3]), 2)",
        "tensor([ True, False,  True])",
    ),
    ("not_equal",),
)
lt = _compare(
    np.less,
    "lt",
    example_doc(
        f"``input < other`` {_COMPARED} Also ``ember.less``.",
        "ember.lt(ember.tensor([1, 2, 3]), 2)",
        "tensor([ True, False, False])",
    ),
    ("less",),
)
le = _compare(
    np.less_equal,
    "le",
    example_doc(
        f"``input <= other`` {_COMPARED} Also ``ember.less_equal``.",
        "ember.le(ember.tensor([1, 2, 3]), 2)",
        "tensor([ True,  True, False])",
    ),
    ("less_equal",),
)
gt = _compare(
    np.greater,
    "gt",
    example_doc(
        f"``input > other`` {_COMPARED} Also ``ember.greater``.",
        "ember.gt(ember.tensor([1, 2, 3]), 2)",
        "tensor([False, False,  True])",
    ),
    ("greater",),
)
ge = _compare(
    np.greater_equal,
    "ge",
    example_doc(
        f"``input >= other`` {_COMPARED} Also ``ember.greater_equal``.",
        "ember.ge(ember.tensor([1, 2, 3]), 2)",
        "tensor([False,  True,  True])",
    ),
    ("greater_equal",),
)
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _logical(np_fn, fname: str, doc: str):
    def op(input, other=None, *, out=None):
        args = (input._data,) if other is None else (input._data, _raw(other))
        try:
            res = np_fn(*args)
        except ValueError:
            raise broadcast_error(*(np.shape(a) for a in args)) from None
        return write_out(fname, _wrap(res if type(res) is np.ndarray else keep_array(res)), out)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    return register(fname, method=True, inplace=True, ufunc=fname)(op)


# Nonzero elements count as True.
logical_not = _logical(
    np.logical_not,
    "logical_not",
    example_doc(
        "Elementwise logical NOT (True where ``input`` is zero), as a bool tensor.",
        "ember.logical_not(ember.tensor([0.0, 2.0]))",
        "tensor([ True, False])",
    ),
)
logical_and = _logical(
    np.logical_and,
    "logical_and",
    example_doc(
        "Elementwise logical AND of ``input`` and ``other`` (nonzero is True), as a bool tensor.",
        "ember.logical_and(ember.tensor([1, 0, 2]), ember.tensor([1, 1, 0]))",
        "tensor([ True, False, False])",
    ),
)
logical_or = _logical(
    np.logical_or,
    "logical_or",
    example_doc(
        "Elementwise logical OR of ``input`` and ``other`` (nonzero is True), as a bool tensor.",
        "ember.logical_or(ember.tensor([1, 0, 0]), ember.tensor([0, 2, 0]))",
        "tensor([ True,  True, False])",
    ),
)
logical_xor = _logical(
    np.logical_xor,
    "logical_xor",
    example_doc(
        "Elementwise logical XOR of ``input`` and ``other`` (nonzero is True), as a bool tensor.",
        "ember.logical_xor(ember.tensor([1, 0, 2]), ember.tensor([1, 1, 0]))",
        "tensor([False,  True,  True])",
    ),
)


def _raw(x):
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _bitwise(np_fn, symbol: str, fname: str, doc: str):
    def op(input, other):
        other = scalar_or_tensor(other)
        a, b = binary_operands(input, other)
        if np.asarray(a).dtype.kind not in "biu":
            raise TypeError(f"unsupported operand type(s) for {symbol}: 'Tensor' and 'Tensor'")
        try:
            res = np_fn(a, b)
            return _wrap(res if type(res) is np.ndarray else keep_array(res))
        except ValueError:
            raise broadcast_error(np.shape(a), np.shape(b)) from None

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    return register(fname, method=True, inplace=True)(op)


# 12 is 0b1100, 10 is 0b1010.
bitwise_and = _bitwise(
    np.bitwise_and,
    "&",
    "bitwise_and",
    example_doc(
        "Elementwise ``input & other`` of integer or bool tensors.",
        "ember.bitwise_and(ember.tensor([12, 3]), ember.tensor([10, 1]))",
        "tensor([8, 1])",
    ),
)
bitwise_or = _bitwise(
    np.bitwise_or,
    "|",
    "bitwise_or",
    example_doc(
        "Elementwise ``input | other`` of integer or bool tensors.",
        "ember.bitwise_or(ember.tensor([12, 3]), ember.tensor([10, 1]))",
        "tensor([14,  3])",
    ),
)
bitwise_xor = _bitwise(
    np.bitwise_xor,
    "^",
    "bitwise_xor",
    example_doc(
        "Elementwise ``input ^ other`` of integer or bool tensors.",
        "ember.bitwise_xor(ember.tensor([12, 3]), ember.tensor([10, 1]))",
        "tensor([6, 2])",
    ),
)


@register("bitwise_not", method=True, inplace=True, ufunc="invert")
def bitwise_not(input):
    """Elementwise ``~`` of an integer or bool tensor.

    Example:
        >>> import ember
        >>> ember.bitwise_not(ember.tensor([True, False]))
        tensor([False,  True])
    """
    if input._data.dtype.kind not in "biu":
        raise RuntimeError("bitwise_not is only implemented for integer and boolean tensors")
    return _wrap(np.invert(input._data))


def _shift(input, other, out, left: bool):
    """``input << other`` or ``input >> other`` of integer tensors, as torch computes them:
    a shift by a negative amount or by the dtype's bit width or more gives 0 (``<<``) or
    the sign (``>>``), where C (and NumPy) leave it undefined."""
    fname = "bitwise_left_shift" if left else "bitwise_right_shift"
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        require_tensor(input, fname)
    x, y = scalar_or_tensor(input), scalar_or_tensor(other)
    dt = result_type(x, y)
    a, b = np.asarray(_raw(x)), np.asarray(_raw(y))
    if dt.kind not in "iu":
        kernel = "lshift_cpu" if left else "rshift_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(dt)}'")
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    outside = (b < 0) | (b >= dt.itemsize * 8)
    amount = np.where(outside, 0, b).astype(dt, copy=False)
    if left:
        res = np.where(outside, 0, np.left_shift(a, amount))
    else:
        res = np.where(outside, np.where(a < 0, -1, 0), np.right_shift(a, amount))
    res = np.broadcast_to(np.asarray(res, dtype=dt), shape).copy()
    return write_out(fname, _wrap(res), out)


@register("bitwise_left_shift", method=True, inplace=True)
def bitwise_left_shift(input, other, *, out=None):
    """Elementwise ``input << other`` of integer tensors (0 where the shift is negative or
    at least the bit width).

    Example:
        >>> import ember
        >>> ember.bitwise_left_shift(ember.tensor([1, -3]), ember.tensor([2, 1]))
        tensor([ 4, -6])
    """
    return _shift(input, other, out, True)


@register("bitwise_right_shift", method=True, inplace=True)
def bitwise_right_shift(input, other, *, out=None):
    """Elementwise ``input >> other`` of integer tensors, arithmetic for signed ones (the
    sign where the shift is negative or at least the bit width).

    Example:
        >>> import ember
        >>> ember.bitwise_right_shift(ember.tensor([16, -7]), ember.tensor([2, 1]))
        tensor([ 4, -4])
    """
    return _shift(input, other, out, False)


register_methods(
    {
        "__lshift__": bitwise_left_shift,
        "__rshift__": bitwise_right_shift,
        "__rlshift__": lambda self, other: bitwise_left_shift(other, self),
        "__rrshift__": lambda self, other: bitwise_right_shift(other, self),
        "__ilshift__": lambda self, other: self.bitwise_left_shift_(other),
        "__irshift__": lambda self, other: self.bitwise_right_shift_(other),
    }
)


@register("isreal", method=True)
def isreal(input):
    """True where an element has no imaginary part (every element of a real tensor).

    Example:
        >>> import ember
        >>> ember.isreal(ember.tensor([1 + 0j, 1 + 2j]))
        tensor([ True, False])
    """
    require_tensor(input, "isreal")
    a = input._data
    if a.dtype.kind != "c":
        return _wrap(np.ones(a.shape, dtype=np.bool_))
    return _wrap(np.asarray(a.imag == 0))


def _test(np_fn, fname: str, doc: str):
    def op(input):
        return _wrap(np_fn(input._data))

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = doc
    return register(fname, method=True, ufunc=fname)(op)


isnan = _test(
    np.isnan,
    "isnan",
    example_doc(
        "True where ``input`` is NaN (a bool tensor).",
        "ember.isnan(ember.tensor([1.0, float('nan'), float('inf')]))",
        "tensor([False,  True, False])",
    ),
)
isinf = _test(
    np.isinf,
    "isinf",
    example_doc(
        "True where ``input`` is positive or negative infinity (a bool tensor).",
        "ember.isinf(ember.tensor([1.0, float('nan'), -float('inf')]))",
        "tensor([False, False,  True])",
    ),
)
isfinite = _test(
    np.isfinite,
    "isfinite",
    example_doc(
        "True where ``input`` is neither infinite nor NaN (a bool tensor).",
        "ember.isfinite(ember.tensor([1.0, float('nan'), -float('inf')]))",
        "tensor([ True, False, False])",
    ),
)
signbit = _test(
    np.signbit,
    "signbit",
    example_doc(
        "True where the sign bit of ``input`` is set, ``-0.0`` included (a bool tensor).",
        "ember.signbit(ember.tensor([-1.0, -0.0, 0.0, 2.0]))",
        "tensor([ True,  True, False, False])",
    ),
)


def _infinity_test(np_fn, fname: str, sign: str):
    def op(input, *, out=None):
        if input._data.dtype.kind == "c":
            raise RuntimeError(f"{fname} does not support complex inputs.")
        return write_out(fname, _wrap(np_fn(input._data)), out)

    op.__name__ = op.__qualname__ = fname
    op.__doc__ = (
        f"Elementwise: is the value {sign} infinity (a bool tensor)?\n\n"
        "    Example:\n"
        "        >>> import ember\n"
        f"        >>> ember.{fname}(ember.tensor([-float('inf'), float('inf'), 1.0]))\n"
        f"        tensor([{'False,  True' if sign == 'positive' else ' True, False'}, False])\n"
    )
    return register(fname, method=True)(op)


isposinf = _infinity_test(np.isposinf, "isposinf", "positive")
isneginf = _infinity_test(np.isneginf, "isneginf", "negative")


@register("allclose", method=True)
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when all elements are close (same formula as torch and NumPy).

    Example:
        >>> import ember
        >>> ember.allclose(ember.tensor([1.0]), ember.tensor([1.0 + 1e-9]))
        True
    """
    b = _raw(other)
    broadcast_shapes(input._data.shape, np.shape(b))
    return bool(np.allclose(input._data, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@register("isclose", method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise closeness (a bool tensor).

    Example:
        >>> import ember
        >>> ember.isclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.1]))
        tensor([ True, False])
    """
    b = _raw(other)
    broadcast_shapes(input._data.shape, np.shape(b))
    return _wrap(np.isclose(input._data, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@register("equal", method=True)
def equal(input, other) -> bool:
    """True when both tensors have the same shape and elements.

    Example:
        >>> import ember
        >>> ember.equal(ember.tensor([1, 2]), ember.tensor([1, 2]))
        True
    """
    a, b = input._data, _raw(other)
    return a.shape == b.shape and bool(np.array_equal(a, b))


# -- Python operators ----------------------------------------------------------------------


def _radd(self, other):
    # other + self: addition commutes, and torch records AddBackward0 either way.
    return add(self, other)


def _rmul(self, other):
    return mul(self, other)


def _rsub(self, other):
    return rsub(self, other)


def _rtruediv(self, other):
    """``other / self`` (``2 / x``): torch records reciprocal then multiply."""
    recip = self if self._data.dtype.kind in "fc" else self.float()
    return mul(_UNARY_OPS["reciprocal"](recip), other)


def _rpow_method(self, other):
    return _rpow(other, self)


def _matmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return self.matmul(other)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented  # torch: unsupported operand type(s) for @
    return other.matmul(self)


def _rfloordiv(self, other):
    other = other if isinstance(other, Tensor) else _wrap(np.asarray(other, self._data.dtype))
    return floor_divide(other, self)


def _eq_method(self, other):
    if other is None:
        return False
    return eq(self, other)


def _ne_method(self, other):
    if other is None:
        return True
    return ne(self, other)


def _where_method(self, condition, other):
    """``self`` where ``condition`` holds, else ``other``: ``ember.where(condition, self,
    other)``.

    Example:
        >>> import ember
        >>> x = ember.tensor([-1.0, 2.0])
        >>> x.where(x > 0, 0.0)
        tensor([0., 2.])
    """
    return where(condition, self, other)


register_methods(
    {
        "where": _where_method,
        "__add__": add,
        "__radd__": _radd,
        "__sub__": sub,
        "__rsub__": _rsub,
        "__mul__": mul,
        "__rmul__": _rmul,
        "__truediv__": div,
        "__rtruediv__": _rtruediv,
        "__rdiv__": _rtruediv,
        "__floordiv__": floor_divide,
        "__rfloordiv__": _rfloordiv,
        "__mod__": remainder,
        "__rmod__": lambda self, other: remainder(other, self),
        "__pow__": pow,
        "__rpow__": _rpow_method,
        "__matmul__": _matmul,
        "__rmatmul__": _rmatmul,
        "__neg__": neg,
        "__pos__": positive,
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
        "__iadd__": lambda self, other: self.add_(other),
        "__isub__": lambda self, other: self.sub_(other),
        "__imul__": lambda self, other: self.mul_(other),
        "__itruediv__": lambda self, other: self.div_(other),
        "__ipow__": lambda self, other: self.pow_(other),
        "__ifloordiv__": lambda self, other: self.floor_divide_(other),
        "__imod__": lambda self, other: self.remainder_(other),
        "__iand__": lambda self, other: self.bitwise_and_(other),
        "__ior__": lambda self, other: self.bitwise_or_(other),
        "__ixor__": lambda self, other: self.bitwise_xor_(other),
    }
)


# -- arithmetic with a number, as torch's C++ composites record it --------------------------

# torch's C++ composites (losses, trapezoid) multiply, divide and add numbers through the
# Scalar overloads, whose nodes differ from the Tensor ones a Python expression records.
MulBackward1 = defop(
    "MulBackward1",
    params=("other",),
    forward=lambda a, other: a * other,
    vjp={"self": lambda g, other: g * other},
    jvp=ELEMENTWISE,
)

DivBackward1 = defop(
    "DivBackward1",
    params=("other",),
    forward=lambda a, other: a / other,
    vjp={"self": lambda g, other: g / other},
    jvp=ELEMENTWISE,
)

AddBackward1 = defop(
    "AddBackward1",
    params=("other",),
    forward=lambda a, other: a + other,
    vjp={"self": lambda g: g},
    jvp=ELEMENTWISE,
)


def _scalar_op(cls, t: Tensor, number) -> Tensor:
    a = t._data
    token = quiet_set(QUIET)
    try:
        out = cls.forward(a, number)
    finally:
        quiet_reset(token)
    return record(cls, np.asarray(out, dtype=a.dtype), (t,), (number,))
