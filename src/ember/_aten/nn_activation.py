"""Activation ops of ``ember.nn.functional`` (torch.nn.functional's activations).

Each differentiable activation is one ``defop`` declaration with torch's node name. Rules
run on arrays (a plain backward) and on Tensors (a recorded one, ``create_graph=True``):
where an array-only function is needed (the sigmoid, softplus), the helpers below branch
with ``is_raw``. Every elementwise activation has ``ELEMENTWISE`` forward mode; ``glu``
declares its tangent. In-place variants record torch's in-place nodes (``EluBackward1``,
``CeluBackward1``, ``ThresholdBackward1``, ``RreluWithNoiseBackward1``) through
``apply_inplace``; where torch composes (``softsign``, ``tanhshrink``, ``softmin``) ember
composes the same ops.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._dtype import scalar_name
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._overrides import warn as _warn
from .._tensor import Tensor, normalize_dim
from ..autograd.views import apply_inplace
from . import elementwise as _ew
from . import reduction as _red
from ._core import (
    ELEMENTWISE,
    QUIET,
    defop,
    is_raw,
    quiet_reset,
    quiet_set,
    record,
    register_methods,
    require_tensor,
    run,
    with_eager_kernel,
)
from .shape import cat as _cat

__all__ = [
    "threshold",
    "threshold_",
    "hardtanh",
    "hardtanh_",
    "relu6",
    "elu",
    "elu_",
    "selu",
    "selu_",
    "celu",
    "celu_",
    "prelu",
    "rrelu",
    "rrelu_",
    "glu",
    "logsigmoid",
    "hardshrink",
    "tanhshrink",
    "softsign",
    "softplus",
    "softmin",
    "softshrink",
    "hardsigmoid",
    "silu",
    "mish",
    "hardswish",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# -- helpers: one line for arrays and Tensors ------------------------------------------------


def _select(cond, x, y):
    """``where(cond, x, y)`` on arrays, or recorded when an operand is a Tensor."""
    if isinstance(cond, Tensor) or isinstance(x, Tensor) or isinstance(y, Tensor):
        return _ew.where(cond, x, y)
    return np.where(cond, x, y)


def _sigmoid(x):
    if is_raw(x):
        return _ew._sigmoid_forward(np.asarray(x))
    return _ew.sigmoid(x)


def _tanh(x):
    return np.tanh(x) if is_raw(x) else _ew.tanh(x)


def _exp(x):
    return np.exp(x) if is_raw(x) else _ew.exp(x)


def _softplus1(x):
    """``log(1 + exp(x))`` without overflow."""
    return np.logaddexp(0, x) if is_raw(x) else softplus(x)


def _float_input(input, fname: str, kernel: str) -> np.ndarray:
    """``input``'s array, after torch's checks: a Tensor of a floating dtype."""
    require_tensor(input, fname)
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(a.dtype)}'")
    return a


def _same_dtype(out, a: np.ndarray) -> np.ndarray:
    out = np.asarray(out)
    return out if out.dtype == a.dtype else out.astype(a.dtype)


# -- threshold -----------------------------------------------------------------------------------


def _threshold_forward(a, threshold, value):
    return _same_dtype(np.where(a <= threshold, value, a), a)


def _threshold_rule(g, self, threshold):
    return _select(self <= threshold, 0.0, g)


ThresholdBackward0 = defop(
    "ThresholdBackward0",
    params=("threshold", "value"),
    forward=_threshold_forward,
    vjp={"self": _threshold_rule},
    jvp=ELEMENTWISE,
)

# threshold_: torch's in-place node (it reads the input as it was before the op).
ThresholdBackward1 = defop(
    "ThresholdBackward1",
    params=("threshold", "value"),
    forward=_threshold_forward,
    vjp={"self": _threshold_rule},
    jvp=ELEMENTWISE,
)


def _threshold(input, threshold, value, cls=ThresholdBackward0):
    return run(cls, (input,), (input._data,), (threshold, value))


def threshold(input, threshold, value, inplace: bool = False):
    """``value`` where ``input <= threshold``, else ``input``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.threshold(ember.tensor([-1.0, 0.5, 2.0]), 1.0, 9.0)
        tensor([9., 9., 2.])
    """
    require_tensor(input, "threshold")
    if inplace:
        return threshold_(input, threshold, value)
    return _threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place ``threshold`` (``ThresholdBackward1``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 0.5, 2.0])
        >>> _ = F.threshold_(x, 1.0, 9.0)
        >>> x
        tensor([9., 9., 2.])
    """
    require_tensor(input, "threshold_")
    return apply_inplace(input, _threshold, threshold, value, ThresholdBackward1)


# -- hardtanh / relu6 -----------------------------------------------------------------------------


def _hardtanh_forward(a, min_val, max_val):
    return _same_dtype(np.minimum(np.maximum(a, min_val), max_val), a)


HardtanhBackward0 = defop(
    "HardtanhBackward0",
    params=("min_val", "max_val"),
    forward=_hardtanh_forward,
    vjp={
        "self": lambda g, self, min_val, max_val: _select(
            (self <= min_val) | (self >= max_val), 0.0, g
        )
    },
    jvp=ELEMENTWISE,
)


def _hardtanh(input, min_val, max_val):
    a = input._data
    if a.dtype == np.bool_:
        raise NotImplementedError("\"hardtanh\" not implemented for 'Bool'")
    return run(HardtanhBackward0, (input,), (a,), (min_val, max_val))


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``input`` clamped to ``[min_val, max_val]``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.hardtanh(ember.tensor([-2.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    require_tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return apply_inplace(input, _hardtanh, min_val, max_val)
    return _hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """In-place ``hardtanh``: ``input`` clamped to ``[min_val, max_val]``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-2.0, 0.5, 3.0])
        >>> _ = F.hardtanh_(x)
        >>> x
        tensor([-1.0000,  0.5000,  1.0000])
    """
    require_tensor(input, "hardtanh_")
    return apply_inplace(input, _hardtanh, min_val, max_val)


def relu6(input, inplace: bool = False):
    """``min(max(input, 0), 6)`` (``hardtanh(input, 0, 6)``, as torch records it).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.relu6(ember.tensor([-1.0, 3.0, 7.0]))
        tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


# -- elu / selu / celu --------------------------------------------------------------------------


def _elu_forward(a, alpha, scale, input_scale):
    neg = np.expm1(a * input_scale) * (alpha * scale)
    return _same_dtype(np.where(a > 0, a * scale, neg), a)


def _elu_rule(g, self, alpha, scale, input_scale):
    # exp of the negative part only: exp(large x) is inf on the branch not taken, and a
    # recorded backward would differentiate it to 0 * inf = NaN (differential program 1741)
    negative = _select(self > 0, 0.0, self)
    return _select(
        self > 0, g * scale, g * (alpha * scale * input_scale) * _exp(negative * input_scale)
    )


def _elu_result_rule(g, result, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead."
        )
    return _select(result > 0, g * scale, g * input_scale * (result + alpha * scale))


EluBackward0 = defop(
    "EluBackward0",
    params=("alpha", "scale", "input_scale"),
    forward=_elu_forward,
    vjp={"self": _elu_rule},
    jvp=ELEMENTWISE,
)

# elu_ and selu_: the rule reads the result (the input is overwritten).
EluBackward1 = defop(
    "EluBackward1",
    params=("alpha", "scale", "input_scale"),
    forward=_elu_forward,
    vjp={"self": _elu_result_rule},
    jvp=ELEMENTWISE,
)

CeluBackward0 = defop(
    "CeluBackward0",
    params=("alpha", "scale", "input_scale"),
    forward=_elu_forward,
    vjp={"self": _elu_rule},
    jvp=ELEMENTWISE,
)

CeluBackward1 = defop(
    "CeluBackward1",
    params=("alpha", "scale", "input_scale"),
    forward=_elu_forward,
    vjp={"self": _elu_result_rule},
    jvp=ELEMENTWISE,
)


def _elu(input, alpha, scale, input_scale, cls):
    return run(cls, (input,), (input._data,), (alpha, scale, input_scale))


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``input`` where positive, else ``alpha * (exp(input) - 1)``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.elu(ember.tensor([-1.0, 2.0]))
        tensor([-0.6321,  2.0000])
    """
    _float_input(input, "elu", "elu_cpu")
    if inplace:
        return elu_(input, alpha)
    return _elu(input, alpha, 1.0, 1.0, EluBackward0)


def elu_(input, alpha: float = 1.0):
    """In-place ``elu`` (``EluBackward1``: its rule reads the result).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 2.0])
        >>> _ = F.elu_(x)
        >>> x
        tensor([-0.6321,  2.0000])
    """
    _float_input(input, "elu_", "elu_cpu")
    return apply_inplace(input, _elu, alpha, 1.0, 1.0, EluBackward1, copy_old=False)


def selu(input, inplace: bool = False):
    """``scale * elu(input, alpha)`` with the self-normalising constants (``EluBackward0``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.selu(ember.tensor([-1.0, 1.0]))
        tensor([-1.1113,  1.0507])
    """
    _float_input(input, "selu", "elu_cpu")
    if inplace:
        return selu_(input)
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward0)


def selu_(input):
    """In-place ``selu`` (``EluBackward1``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 2.0])
        >>> _ = F.selu_(x)
        >>> x
        tensor([-1.1113,  2.1014])
    """
    _float_input(input, "selu_", "elu_cpu")
    return apply_inplace(input, _elu, _SELU_ALPHA, _SELU_SCALE, 1.0, EluBackward1, copy_old=False)


def _celu_alpha(alpha) -> float:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return 1.0 / alpha


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.celu(ember.tensor([-1.0, 2.0]), alpha=2.0)
        tensor([-0.7869,  2.0000])
    """
    _float_input(input, "celu", "elu_cpu")
    if inplace:
        return celu_(input, alpha)
    return _elu(input, alpha, 1.0, _celu_alpha(alpha), CeluBackward0)


def celu_(input, alpha: float = 1.0):
    """In-place ``celu`` (``CeluBackward1``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 2.0])
        >>> _ = F.celu_(x, alpha=2.0)
        >>> x
        tensor([-0.7869,  2.0000])
    """
    _float_input(input, "celu_", "elu_cpu")
    inv = _celu_alpha(alpha)
    return apply_inplace(input, _elu, alpha, 1.0, inv, CeluBackward1, copy_old=False)


# -- prelu ----------------------------------------------------------------------------------------

PreluKernelBackward0 = defop(
    "PreluKernelBackward0",
    inputs=("self", "weight"),
    forward=lambda a, w: np.where(a > 0, a, w * a),
    vjp={
        "self": lambda g, self, weight: _select(self > 0, g, g * weight),
        "weight": lambda g, self: _select(self > 0, 0.0, g * self),
    },
    jvp=ELEMENTWISE,
)


def prelu(input, weight):
    """``input`` where positive, else ``weight * input``; ``weight`` has one element or one
    per channel (dimension 1).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.prelu(ember.tensor([[-1.0, 2.0]]), ember.tensor([0.25]))
        tensor([[-0.2500,  2.0000]])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        input, weight = autocast_lower(input, weight)
    require_tensor(input, "prelu")
    require_tensor(weight, "prelu", "weight", 2)
    a, w = input._data, weight._data
    if a.dtype != w.dtype:
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {scalar_name(a.dtype)} and "
            f"{scalar_name(w.dtype)}"
        )
    ndim = a.ndim
    if w.size != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = a.shape[1] if ndim > 1 else 1
        if channels != w.size:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {w.size} and channel size = {channels}."
            )
    if w.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {w.ndim}"
        )
    if a.dtype.kind not in "fV":
        raise NotImplementedError(f"\"prelu_cpu\" not implemented for '{scalar_name(a.dtype)}'")
    if ndim != w.ndim:
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = w.size
        weight = weight.reshape(shape)
    return run(PreluKernelBackward0, (input, weight), (a, weight._data))


# -- rrelu ----------------------------------------------------------------------------------------

# The slopes (``noise``: 1 where the input is positive) are a parameter: the gradient is
# ``g * noise``, which never reads the input.
RreluWithNoiseBackward0 = defop(
    "RreluWithNoiseBackward0",
    params=("noise",),
    forward=lambda a, noise: a * noise,
    vjp={"self": lambda g, noise: g * noise},
    jvp=ELEMENTWISE,
)

# rrelu_: torch has no forward mode for it.
RreluWithNoiseBackward1 = defop(
    "RreluWithNoiseBackward1",
    params=("noise",),
    forward=lambda a, noise: a * noise,
    vjp={"self": lambda g, noise: g * noise},
    jvp=None,
)


def _rrelu_noise(a: np.ndarray, lower, upper, training: bool) -> np.ndarray:
    if training:
        if lower > upper:
            raise RuntimeError("Lower bound should be less than or equal to the upper bound")
        slopes = _creation._rng(None).uniform(lower, upper, size=a.shape)
    else:
        slopes = (lower + upper) / 2
    return np.where(a > 0, 1.0, slopes).astype(a.dtype)


def _rrelu(input, lower, upper, training, cls):
    a = input._data
    return run(cls, (input,), (a,), (_rrelu_noise(a, lower, upper, training),))


def rrelu(
    input,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
):
    """Randomised leaky ReLU: negative inputs times a slope drawn from U(lower, upper)
    (ember's global generator) when ``training``, else times ``(lower + upper) / 2``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.rrelu(ember.tensor([-1.0, 2.0]), 0.1, 0.3)
        tensor([-0.2000,  2.0000])
    """
    _float_input(input, "rrelu", "rrelu_with_noise_out_cpu")
    if inplace:
        return rrelu_(input, lower, upper, training)
    return _rrelu(input, lower, upper, training, RreluWithNoiseBackward0)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """In-place ``rrelu`` (``RreluWithNoiseBackward1``); outside ``training`` the slope is
    ``(lower + upper) / 2``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 2.0])
        >>> _ = F.rrelu_(x, 0.1, 0.3)
        >>> x
        tensor([-0.2000,  2.0000])
    """
    _float_input(input, "rrelu_", "rrelu_with_noise_out_cpu")
    return apply_inplace(
        input, _rrelu, lower, upper, training, RreluWithNoiseBackward1, copy_old=False
    )


# -- glu ------------------------------------------------------------------------------------------


def _halves(x, dim):
    n = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[lead + (slice(0, n),)], x[lead + (slice(n, None),)]


def _glu_forward(a, dim):
    first, second = _halves(a, dim)
    return first * _ew._sigmoid_forward(np.array(second))


def _glu_rule(g, self, dim):
    first, second = _halves(self, dim)
    s = _sigmoid(second)
    da = g * s
    db = g * first * s * (1 - s)
    return np.concatenate((da, db), axis=dim) if is_raw(da) else _cat((da, db), dim)


def _glu_jvp(t_self, self, dim):
    first, second = _halves(self, dim)
    t_first, t_second = _halves(t_self, dim)
    s = _sigmoid(second)
    return t_first * s + first * s * (1 - s) * t_second


GluBackward0 = defop(
    "GluBackward0",
    params=("dim",),
    forward=_glu_forward,
    vjp={"self": _glu_rule},
    jvp=_glu_jvp,
)


def glu(input, dim: int = -1):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a``, ``b`` of ``input`` along
    ``dim``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.glu(ember.tensor([[1.0, 2.0, 0.0, 0.0]]))
        tensor([[0.5000, 1.0000]])
    """
    require_tensor(input, "glu")
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, input.dim())
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    _float_input(input, "glu", "glu_cpu")
    return run(GluBackward0, (input,), (input._data,), (d,))


# -- logsigmoid / softplus ---------------------------------------------------------------------


def _logsigmoid_forward(a):
    return _same_dtype(np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a))), a)


LogSigmoidBackward0 = defop(
    "LogSigmoidBackward0",
    forward=_logsigmoid_forward,
    vjp={"self": lambda g, self: g * _sigmoid(-self)},
    jvp=ELEMENTWISE,
)


def logsigmoid(input):
    """``log(sigmoid(input))``, stable for large ``|input|``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.logsigmoid(ember.tensor([0.0, -100.0]))
        tensor([  -0.6931, -100.0000])
    """
    a = _float_input(input, "logsigmoid", "log_sigmoid_cpu")
    return run(LogSigmoidBackward0, (input,), (a,))


def _softplus_forward(a, beta, threshold):
    z = a * beta
    return _same_dtype(np.where(z > threshold, a, np.logaddexp(0, z) / beta), a)


SoftplusBackward0 = defop(
    "SoftplusBackward0",
    params=("beta", "threshold"),
    forward=_softplus_forward,
    vjp={
        "self": lambda g, self, beta, threshold: _select(
            self * beta > threshold, g, g * _sigmoid(self * beta)
        )
    },
    jvp=ELEMENTWISE,
)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.softplus(ember.tensor([0.0, 30.0]))
        tensor([ 0.6931, 30.0000])
    """
    a = _float_input(input, "softplus", "softplus_cpu")
    return run(SoftplusBackward0, (input,), (a,), (beta, threshold))


# -- shrinkage ---------------------------------------------------------------------------------


def _shrink_rule(g, self, lambd):
    return _select((self >= -lambd) & (self <= lambd), 0.0, g)


HardshrinkBackward0 = defop(
    "HardshrinkBackward0",
    params=("lambd",),
    forward=lambda a, lambd: _same_dtype(np.where((a >= -lambd) & (a <= lambd), 0, a), a),
    vjp={"self": _shrink_rule},
    jvp=ELEMENTWISE,
)


def hardshrink(input, lambd: float = 0.5):
    """``input`` where ``|input| > lambd``, else 0.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.hardshrink(ember.tensor([-1.0, 0.2, 0.7]))
        tensor([-1.0000,  0.0000,  0.7000])
    """
    a = _float_input(input, "hardshrink", "hardshrink_cpu")
    return run(HardshrinkBackward0, (input,), (a,), (lambd,))


def _softshrink_forward(a, lambd):
    out = np.where(a > lambd, a - lambd, np.where(a < -lambd, a + lambd, 0))
    return _same_dtype(out, a)


SoftshrinkBackward0 = defop(
    "SoftshrinkBackward0",
    params=("lambd",),
    forward=_softshrink_forward,
    vjp={"self": _shrink_rule},
    jvp=ELEMENTWISE,
)


def softshrink(input, lambd: float = 0.5):
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.softshrink(ember.tensor([-1.0, 0.2, 0.75]))
        tensor([-0.5000,  0.0000,  0.2500])
    """
    a = _float_input(input, "softshrink", "softshrink_check")
    if not 0 <= lambd <= np.finfo(a.dtype).max:
        raise RuntimeError(
            f"lambda must be in range [0, {float(np.finfo(a.dtype).max):g}] for input dtype "
            f"{scalar_name(a.dtype)}, but found {lambd:g}"
        )
    return run(SoftshrinkBackward0, (input,), (a,), (lambd,))


def tanhshrink(input):
    """``input - tanh(input)`` (composed, as torch does).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.tanhshrink(ember.tensor([1.0]))
        tensor([0.2384])
    """
    return input - input.tanh()


def softsign(input):
    """``input / (1 + |input|)`` (composed, as torch does).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.softsign(ember.tensor([-3.0, 1.0]))
        tensor([-0.7500,  0.5000])
    """
    return input / (input.abs() + 1)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``softmax(-input, dim)``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.softmin(ember.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    require_tensor(input, "softmin")
    if dim is None:
        _warn(
            "Implicit dimension choice for softmin has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=_stacklevel,
        )
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return _red.softmax(-input, dim, dtype=dtype)


# -- silu / mish / hardswish / hardsigmoid ---------------------------------------------------


def _silu_rule(g, self):
    s = _sigmoid(self)
    return g * s * (1 + self * (1 - s))


SiluBackward0 = defop(
    "SiluBackward0",
    forward=lambda a: _same_dtype(a * _ew._sigmoid_forward(np.array(a)), a),
    vjp={"self": _silu_rule},
    jvp=ELEMENTWISE,
)


def _mish_rule(g, self):
    t = _tanh(_softplus1(self))
    return g * (t + self * _sigmoid(self) * (1 - t * t))


MishBackward0 = defop(
    "MishBackward0",
    forward=lambda a: _same_dtype(a * np.tanh(np.logaddexp(0, a)), a),
    vjp={"self": _mish_rule},
    jvp=ELEMENTWISE,
)


def _hardswish_rule(g, self):
    return _select(self < -3, 0.0, _select(self <= 3, g * (self / 3 + 0.5), g))


HardswishBackward0 = defop(
    "HardswishBackward0",
    forward=lambda a: _same_dtype(a * np.minimum(np.maximum(a + 3, 0), 6) / 6, a),
    vjp={"self": _hardswish_rule},
    jvp=ELEMENTWISE,
)

# torch's kernel multiplies by 1/6 rounded to float32, in every dtype.
_ONE_SIXTH = float(np.float32(1.0 / 6.0))

HardsigmoidBackward0 = defop(
    "HardsigmoidBackward0",
    forward=lambda a: _same_dtype(np.minimum(np.maximum(a + 3, 0), 6) / 6, a),
    vjp={"self": lambda g, self: _select((self > -3) & (self < 3), g * _ONE_SIXTH, 0.0)},
    jvp=ELEMENTWISE,
)


def _unary(cls, fname: str, kernel: str):
    """The functional form of a one-input activation with an ``inplace`` flag."""

    def apply_op(input):
        return run(cls, (input,), (input._data,))

    def fn(input, inplace: bool = False):
        _float_input(input, fname, kernel)
        if inplace:
            return apply_inplace(input, apply_op)
        return apply_op(input)

    fn.__name__ = fn.__qualname__ = fname
    return fn


_silu = _unary(SiluBackward0, "silu", "silu_cpu")
_mish = _unary(MishBackward0, "mish", "mish_cpu")
_hardswish = _unary(HardswishBackward0, "hardswish", "hardswish_cpu")
_hardsigmoid = _unary(HardsigmoidBackward0, "hardsigmoid", "hardsigmoid_cpu")


def silu(input, inplace: bool = False):
    """``input * sigmoid(input)`` (swish).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.silu(ember.tensor([0.0, 1.0]))
        tensor([0.0000, 0.7311])
    """
    return _silu(input, inplace)


def mish(input, inplace: bool = False):
    """``input * tanh(softplus(input))``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.mish(ember.tensor([0.0, 1.0]))
        tensor([0.0000, 0.8651])
    """
    return _mish(input, inplace)


def hardswish(input, inplace: bool = False):
    """``input * relu6(input + 3) / 6``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.hardswish(ember.tensor([-1.0, 1.0, 4.0]))
        tensor([-0.3333,  0.6667,  4.0000])
    """
    return _hardswish(input, inplace)


def hardsigmoid(input, inplace: bool = False):
    """``relu6(input + 3) / 6``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.hardsigmoid(ember.tensor([-4.0, 0.0, 4.0]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    return _hardsigmoid(input, inplace)


# -- leaky_relu, gelu ----------------------------------------------------------------------------


def _select_g(cond, a, b):
    """``where(cond, a, b)`` on arrays, or recorded on Tensors (a rule's two worlds)."""
    return np.where(cond, a, b) if is_raw(a) else _ew.where(cond, a, b)


LeakyReluBackward0 = defop(
    "LeakyReluBackward0",
    params=("negative_slope",),
    forward=lambda a, negative_slope: np.where(a > 0, a, a * negative_slope),
    vjp={"self": lambda g, self, negative_slope: _select_g(self > 0, g, g * negative_slope)},
    jvp=ELEMENTWISE,
)


def _leaky_relu_inplace_rule(g, result, negative_slope):
    if negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )
    return _select_g(result > 0, g, g * negative_slope)


# leaky_relu_: the rule reads the result (the input is overwritten).
LeakyReluBackward1 = defop(
    "LeakyReluBackward1",
    params=("negative_slope",),
    forward=LeakyReluBackward0.forward,
    vjp={"self": _leaky_relu_inplace_rule},
    jvp=ELEMENTWISE,
)


def _leaky_relu(input, negative_slope=0.01, cls=LeakyReluBackward0):
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"leaky_relu_cpu\" not implemented for '{scalar_name(a.dtype)}'"
        )
    out = np.where(a > 0, a, a * negative_slope)
    if out.dtype != a.dtype:
        out = out.astype(a.dtype)
    return record(cls, out, (input,), (negative_slope,))


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.leaky_relu(ember.tensor([-1.0, 2.0]), 0.1)
        tensor([-0.1000,  2.0000])
    """
    require_tensor(input, "leaky_relu")
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place ``leaky_relu`` (``LeakyReluBackward1``: its rule reads the result).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([-1.0, 2.0])
        >>> _ = F.leaky_relu_(x, 0.1)
        >>> x
        tensor([-0.1000,  2.0000])
    """
    return apply_inplace(input, _leaky_relu, negative_slope, LeakyReluBackward1, copy_old=False)


_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_KAPPA = 0.044715


def _gelu_array(a: np.ndarray, approximate: str):
    """``(gelu(a), aux)``: ``aux`` is the normal CDF of ``a`` (or the tanh of the
    approximation), which the derivative reuses instead of evaluating erf again."""
    if a.dtype.kind == "V":  # bfloat16: computed in float32, rounded once (as torch)
        out, aux = _gelu_array(a.astype(np.float32), approximate)
        return out.astype(a.dtype), aux
    if approximate == "tanh":
        aux = np.tanh(_SQRT_2_OVER_PI * (a + _KAPPA * a * a * a))
        return _in_dtype(0.5 * a * (1 + aux), a.dtype), aux
    return with_eager_kernel("gelu", _gelu_numpy, a)  # one C pass where gcc is present


def _gelu_numpy(a: np.ndarray):
    """Exact GELU of a float array in NumPy: ``(a * Phi(a), Phi(a))``."""
    aux = _in_dtype(0.5 * (1 + _ew.erf_array(a / _SQRT_2)), a.dtype)
    return _in_dtype(a * aux, a.dtype), aux


def _gelu_grad_numpy(g: np.ndarray, x: np.ndarray, aux: np.ndarray) -> np.ndarray:
    """``g * gelu'(x)`` of float arrays in NumPy, from the saved ``aux = Phi(x)``."""
    res = g * (aux + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI)
    return res.astype(g.dtype) if is_raw(res) and res.dtype != g.dtype else res


def _in_dtype(x, dtype):
    """``x`` as an array of ``dtype`` (NumPy returns scalars for 0-d operands); written with
    ``astype`` so that the compiler's tracer can follow it."""
    if isinstance(x, (np.generic, float, int)):
        return np.asarray(x, dtype=dtype)
    return x.astype(dtype, copy=False)


def _gelu_rule(g, self, aux, approximate):
    """``g * gelu'(x)``: from the saved CDF (or tanh) on arrays, ember ops on Tensors."""
    x = self
    if approximate == "tanh":
        t = aux if is_raw(x) else _ew.tanh((x + x * x * x * _KAPPA) * _SQRT_2_OVER_PI)
        d = (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * _SQRT_2_OVER_PI * (x * x * (3 * _KAPPA) + 1)
    elif is_raw(x):
        return with_eager_kernel("gelu_grad", _gelu_grad_numpy, g, x, aux)  # as the forward
    else:
        d = (_ew.erf(x / _SQRT_2) + 1) * 0.5 + x * _ew.exp(x * x * -0.5) * _INV_SQRT_2PI
    res = g * d
    if is_raw(res) and res.dtype != g.dtype:
        res = res.astype(g.dtype)
    return res


GeluBackward0 = defop(
    "GeluBackward0",
    params=("approximate",),
    saves=("aux",),
    forward=_gelu_array,
    vjp={"self": _gelu_rule},
    jvp=ELEMENTWISE,
)


def gelu(input, approximate: str = "none"):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses
    ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.gelu(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.1587,  0.0000,  0.8413])
    """
    require_tensor(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    a = input._data
    if a.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"GeluKernelImpl\" not implemented for '{scalar_name(a.dtype)}'"
        )
    token = quiet_set(QUIET)
    try:
        out, aux = _gelu_array(a, approximate)
    finally:
        quiet_reset(token)
    return record(GeluBackward0, out, (input,), (approximate,), (aux,))


# torch's Tensor methods among the activations (the functions are ``torch.hardshrink`` and
# ``torch.prelu`` too: bound in ember/_torch.py).
register_methods({"hardshrink": hardshrink, "prelu": prelu})
