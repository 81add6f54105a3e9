"""``ember.nn.init``: in-place weight initialisation (torch.nn.init's formulas and errors).

Every function fills its tensor in place under ``no_grad`` (bumping the version counter)
from ember's global generator, or ``generator`` when given, and returns the tensor.

Example:
    >>> import ember
    >>> from ember.nn import init
    >>> w = ember.empty(2, 3)
    >>> init.constant_(w, 0.5)
    tensor([[0.5000, 0.5000, 0.5000],
            [0.5000, 0.5000, 0.5000]])
"""

from __future__ import annotations

import math

import numpy as np

from .. import _creation
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]


def _fill(tensor: Tensor, values) -> Tensor:
    """Write ``values`` into ``tensor`` in place, outside autograd."""
    a = tensor._data
    np.copyto(a, np.asarray(values), casting="unsafe")
    tensor._bump()
    return tensor


def _rng(generator):
    return _creation._rng(generator)


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for ``nonlinearity`` (``'relu'``: sqrt(2), ``'tanh'``: 5/3, ...).

    Example:
        >>> from ember.nn import init
        >>> init.calculate_gain("leaky_relu", 0.2)
        1.3867504905630728
    """
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of U(a, b).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> w = init.uniform_(ember.empty(1000), -1, 1)
        >>> bool((w >= -1).all() and (w < 1).all())
        True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with samples of N(mean, std**2).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> w = init.normal_(ember.empty(10000), 1.0, 0.5)
        >>> abs(w.mean().item() - 1.0) < 0.05
        True
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator=None,
) -> Tensor:
    """Fill with samples of N(mean, std**2) truncated to ``[a, b]``: redrawn until inside
    when ``[a, b]`` holds much of the mass, else drawn uniformly on ``[a, b]`` and accepted
    with the density's ratio to its peak (torch's two samplers).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> w = init.trunc_normal_(ember.empty(1000), std=0.02, a=-0.04, b=0.04)
        >>> bool((w.abs() <= 0.04).all())
        True
    """
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        _warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    if tensor.is_meta:  # no data to fill: nothing drawn, as in torch
        return tensor
    rng = _rng(generator)
    shape = tensor._data.shape
    dt = tensor._data.dtype
    lo, hi = float(np.asarray(a, dt)), float(np.asarray(b, dt))
    p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
    if p > 0.3:
        vals = rng.normal(mean, std, size=shape).astype(dt)
        bad = (vals < lo) | (vals > hi)
        while bad.any():
            vals[bad] = rng.normal(mean, std, size=int(bad.sum()))
            bad = (vals < lo) | (vals > hi)
    else:
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        vals = rng.uniform(a, b, size=shape)
        pending = np.log(rng.random(shape)) > -0.5 * ((vals - mean) / std) ** 2 - log_peak
        while pending.any():
            n = int(pending.sum())
            cand = rng.uniform(a, b, size=n)
            accept = np.log(rng.random(n)) <= -0.5 * ((cand - mean) / std) ** 2 - log_peak
            idx = np.flatnonzero(pending)[accept]
            vals.reshape(-1)[idx] = cand[accept]
            pending.reshape(-1)[idx] = False
    with no_grad():
        return _fill(tensor, vals)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> init.constant_(ember.empty(2, 2), 0.5)
        tensor([[0.5000, 0.5000],
                [0.5000, 0.5000]])
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> init.ones_(ember.empty(2, 3))
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> init.zeros_(ember.empty(2, 3))
        tensor([[0., 0., 0.],
                [0., 0., 0.]])
    """
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal of any rectangle).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> init.eye_(ember.empty(2, 3))
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor._data.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: the convolution keeps
    its input channels (in each of ``groups`` groups of output channels).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> init.dirac_(ember.empty(2, 2, 3))
        tensor([[[0., 1., 0.],
                 [0., 0., 0.]],
        <BLANKLINE>
                [[0., 0., 0.],
                 [0., 1., 0.]]])
    """
    dimensions = tensor.dim()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    values = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_chans_per_grp + d, d) + centre] = 1
    return _fill(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    """``(fan_in, fan_out)``: ``size(1)`` and ``size(0)`` times the receptive field size.

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> init._calculate_fan_in_and_fan_out(ember.empty(16, 3, 5, 5))
        (75, 400)
    """
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> w = init.xavier_uniform_(ember.empty(2, 4))  # a = sqrt(6 / (4 + 2)) = 1
        >>> bool((w.abs() <= 1).all())
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> _ = ember.manual_seed(0)
        >>> w = init.xavier_normal_(ember.empty(100, 100))  # std = sqrt(2 / 200) = 0.1
        >>> abs(w.std().item() - 0.1) < 0.01
        True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    """He's ``std = gain / sqrt(fan)`` for ``tensor``."""
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He); ``Linear`` and ``Conv2d``
    use ``a=sqrt(5)``.

    Example:
        >>> import ember, math
        >>> from ember.nn import init
        >>> w = init.kaiming_uniform_(ember.empty(4, 9), a=math.sqrt(5))
        >>> bool((w.abs() <= 1 / 3).all())
        True
    """
    if 0 in tensor.shape:
        _warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:
    """N(0, std**2) with ``std = gain / sqrt(fan)`` (He).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> _ = ember.manual_seed(0)
        >>> w = init.kaiming_normal_(ember.empty(200, 50), nonlinearity="relu")
        >>> abs(w.std().item() - 0.2) < 0.01  # std = sqrt(2) / sqrt(fan_in=50)
        True
    """
    if 0 in tensor.shape:
        _warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return normal_(tensor, 0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times ``gain``: the QR of a Gaussian matrix
    (dimensions after the first are flattened).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> w = init.orthogonal_(ember.empty(3, 5))
        >>> bool(ember.allclose(w @ w.T, ember.eye(3), atol=1e-6))
        True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:  # (meta: no data to fill, nothing drawn)
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tensor._data.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill a 2-D tensor with N(0, std**2) samples, then zero ``ceil(sparsity * rows)``
    random entries of each column (the rows are chosen with the global generator, as
    torch's ``randperm``).

    Example:
        >>> import ember
        >>> from ember.nn import init
        >>> w = init.sparse_(ember.empty(10, 4), sparsity=0.3)
        >>> (w == 0).sum(0).tolist()
        [3, 3, 3, 3]
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:  # no data to fill: nothing drawn, as in torch
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    values = _rng(generator).normal(0, std, size=(rows, cols))
    perm_rng = _rng(None)
    for col_idx in range(cols):
        values[perm_rng.permutation(rows)[:num_zeros], col_idx] = 0
    return _fill(tensor, values)


_DEPRECATED_DOC = """Deprecated alias of ``nn.init.{new}``: warns ``FutureWarning``, then calls it.

    Example:
        >>> import ember, warnings
        >>> from ember.nn import init
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = init.{old}({args})
        >>> print(caught[0].message)
        `nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.
    """


def _make_deprecate(meth, example_args: str):
    """The deprecated name without the trailing underscore; ``example_args`` are the
    arguments its docstring's example passes."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        _warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = _DEPRECATED_DOC.format(old=old_name, new=new_name, args=example_args)
    deprecated_init.__name__ = old_name
    return deprecated_init


# Each row: the deprecated function, and the arguments of its docstring's example call.
uniform = _make_deprecate(uniform_, "ember.empty(2, 3)")
normal = _make_deprecate(normal_, "ember.empty(2, 3)")
constant = _make_deprecate(constant_, "ember.empty(2, 3), 0.5")
eye = _make_deprecate(eye_, "ember.empty(2, 3)")
dirac = _make_deprecate(dirac_, "ember.empty(2, 2, 3)")
xavier_uniform = _make_deprecate(xavier_uniform_, "ember.empty(2, 3)")
xavier_normal = _make_deprecate(xavier_normal_, "ember.empty(2, 3)")
kaiming_uniform = _make_deprecate(kaiming_uniform_, "ember.empty(2, 3)")
kaiming_normal = _make_deprecate(kaiming_normal_, "ember.empty(2, 3)")
orthogonal = _make_deprecate(orthogonal_, "ember.empty(2, 3)")
sparse = _make_deprecate(sparse_, "ember.empty(4, 2), 0.5")
