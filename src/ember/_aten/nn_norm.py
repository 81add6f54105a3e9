"""batch_norm, layer_norm and group_norm: one node each (NativeBatchNormBackward0,
NativeLayerNormBackward0, NativeGroupNormBackward0), with the closed-form backward rules on
arrays, the op written with ember ops (``composite``) for higher orders, and forward mode
through that composite. instance_norm, rms_norm, local_response_norm and normalize are
composed of ember ops as torch composes them.
"""

from __future__ import annotations

import functools

import numpy as np

from .._dtype import scalar_name
from .._mode import state as _grad_mode
from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.recording import side_effect
from ._core import (
    COMPOSITE,
    defop,
    eager_kernel,
    quiet,
    record,
    record_result,
    require_tensor,
    with_eager_kernel,
)
from .elementwise import div
from .shape import cat

_wrap = Tensor._wrap


def _bshape(ndim: int, c: int) -> tuple:
    return (1, c) + (1,) * (ndim - 2)


def _not_differentiable(fname: str, arg: str) -> RuntimeError:
    return RuntimeError(
        f"The function '{fname}' is not differentiable with respect to argument '{arg}'. "
        "This input cannot have requires_grad True."
    )


# -- batch_norm --------------------------------------------------------------------------------


def _rows(a: np.ndarray) -> np.ndarray:
    """(N, C, L): each sample's values of a channel in one row."""
    return a.reshape(a.shape[0], a.shape[1], -1)


def _channel_sums(a: np.ndarray) -> np.ndarray:
    """The sum over every dim but the channel's (1): along the rows, then over samples."""
    return _rows(a).sum(axis=2).sum(axis=0)


def _channel_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(a * b)`` summed over every dim but the channel's, without the product array: one
    dot product (BLAS) per sample and channel."""
    return np.matmul(_rows(a)[:, :, None, :], _rows(b)[:, :, :, None]).sum(axis=0).reshape(-1)


_BN_EXACT = (np.dtype(np.float32), np.dtype(np.float64))


def _in_float32(fn):
    """``fn`` on float32 copies of half-precision arrays (bfloat16, float16), its array
    results rounded back once, as torch's CPU kernels accumulate them in float."""

    @functools.wraps(fn)  # (the op's declaration reads the rule's parameter names)
    def run(x, *args):
        if x.dtype in _BN_EXACT:
            return fn(x, *args)
        up = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in (x, *args)]
        res = fn(*up)
        return tuple(r if r is None else r.astype(x.dtype) for r in res)

    return run


def _bn_stats(x, training, eps, running_mean, running_var):
    """(mean, biased variance, 1/sqrt(var + eps), x - mean): the batch's statistics in
    training (two passes: the mean, then the squares of the centred values), else the
    running ones (Tensors in eager code, their arrays in compiled code; no centred array)."""
    if training:
        mean = _channel_sums(x) / (x.size // x.shape[1])
        centered = x - mean.reshape(_bshape(x.ndim, x.shape[1]))
        var = _channel_dots(centered, centered) / (x.size // x.shape[1])
    else:
        mean = getattr(running_mean, "_data", running_mean).astype(x.dtype, copy=False)
        var = getattr(running_var, "_data", running_var).astype(x.dtype, copy=False)
        centered = None
    return mean, var, 1.0 / np.sqrt(var + eps), centered


def _normalize(x, w, b, mean, invstd, centered=None):
    """``(x - mean) * invstd * w + b`` in two passes over ``x``: with the centred values
    when training made them, else torch's ``x * alpha + beta``."""
    shape = _bshape(x.ndim, x.shape[1])
    alpha = invstd if w is None else invstd * w
    if centered is not None:
        out = centered * alpha.reshape(shape)
        if b is not None:
            out += b.reshape(shape)
    else:
        beta = -mean * alpha if b is None else b - mean * alpha
        out = x * alpha.reshape(shape)
        out += beta.reshape(shape)
    return np.asarray(out, dtype=x.dtype)


@_in_float32
def _batch_norm_arrays(x, w, b, training, eps, running_mean, running_var):
    """The normalisation, the mean and 1/std it used, and the biased variance: in training,
    the compiler's C loops where a C compiler is present (checked against the NumPy code,
    ``_batch_norm_numpy``, on the first call per shape), else the NumPy code."""
    if training:
        kernel = eager_kernel("batch_norm_train")
        res = None if kernel is None else kernel(x, w, b, eps)
        if res is not None:
            return res
    return _batch_norm_numpy(x, w, b, training, eps, running_mean, running_var)


def _batch_norm_numpy(x, w, b, training, eps, running_mean, running_var):
    """``_batch_norm_arrays`` in NumPy."""
    mean, var, invstd, centered = _bn_stats(x, training, eps, running_mean, running_var)
    dt = x.dtype
    out = _normalize(x, w, b, mean, invstd, centered)
    return out, np.asarray(mean, dt), np.asarray(invstd, dt), np.asarray(var, dt)


def _batch_norm_forward(x, w, b, training, eps, running_mean, running_var):
    """The normalisation, then the statistics it used (saved as torch's result1/result2)."""
    return _batch_norm_arrays(x, w, b, training, eps, running_mean, running_var)[:3]


@_in_float32
def _batch_norm_vjp(g, input, weight, bias, training, result1, result2, needs_input_grad):
    """The three gradients from two per-channel reductions of ``g``: its sum, and its dot
    product with the centred input (torch's ``dotp``)."""
    x = input
    invstd = result2
    if training and needs_input_grad[0]:  # (the C loops as _batch_norm_arrays chooses them)
        gx, sum_g, dot = with_eager_kernel(
            "batch_norm_train_grad", _batch_norm_train_grad, g, x, weight, result1, invstd
        )
        gw = dot * invstd if weight is not None and needs_input_grad[1] else None
        gb = sum_g if bias is not None and needs_input_grad[2] else None
        return gx, gw, gb
    shape = _bshape(x.ndim, x.shape[1])
    gx = gw = gb = None
    if needs_input_grad[0]:  # evaluation mode: the statistics are constants
        scale = invstd if weight is None else invstd * weight
        gx = g * scale.reshape(shape)
    if weight is not None and needs_input_grad[1]:
        gw = _channel_dots(g, x - result1.reshape(shape)) * invstd
    if bias is not None and needs_input_grad[2]:
        gb = _channel_sums(g)
    return gx, gw, gb


def _batch_norm_train_grad(g, x, w, mean, invstd):
    """In training, the input's gradient and the channel sums of ``g`` and of
    ``g * (x - mean)`` (the weight's and bias's gradients follow from them), in NumPy."""
    shape = _bshape(x.ndim, x.shape[1])
    m = x.size // x.shape[1]
    sum_g = _channel_sums(g)
    centered = x - mean.reshape(shape)
    dot = _channel_dots(g, centered)
    scale = invstd if w is None else invstd * w
    gx = g * scale.reshape(shape)
    gx -= centered * (scale * invstd * invstd * dot / m).reshape(shape)
    gx -= (scale * sum_g / m).reshape(shape)
    return gx, sum_g, dot


def _batch_norm_composite(input, weight, bias, training, eps, running_mean, running_var):
    shape = _bshape(input.dim(), input.shape[1])
    if training:
        axes = (0,) + tuple(range(2, input.dim()))
        m = input.mean(axes, keepdim=True)
        centered = input - m
        var = (centered * centered).mean(axes, keepdim=True)
        y = centered / (var + eps).sqrt()
    else:
        dt = input._data.dtype
        mean, _, invstd, _ = _bn_stats(input._data, False, eps, running_mean, running_var)
        y = (input - _wrap(mean.reshape(shape).astype(dt))) * _wrap(
            invstd.reshape(shape).astype(dt)
        )
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


NativeBatchNormBackward0 = defop(
    "NativeBatchNormBackward0",
    inputs=("input", "weight", "bias"),
    # The running statistics are parameters (Tensors, read in evaluation mode); the
    # statistics the forward normalised with are saved as torch's result1/result2.
    params=("training", "eps", "running_mean", "running_var"),
    saves=("result1", "result2"),
    forward=_batch_norm_forward,
    vjp=_batch_norm_vjp,
    composite=_batch_norm_composite,
    jvp=COMPOSITE,
)


def _check_stat(t, name: str, c: int) -> None:
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-05,
):
    """Batch normalisation over the channel dim 1 of ``input`` (N, C, ...).

    In training mode the batch statistics normalise the input and, when given,
    ``running_mean``/``running_var`` are updated in place with ``momentum`` (the variance
    unbiased); otherwise the running statistics are used.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.tensor([[1.0], [3.0]])
        >>> rm, rv = ember.zeros(1), ember.ones(1)
        >>> F.batch_norm(x, rm, rv, training=True)
        tensor([[-1.0000],
                [ 1.0000]])
        >>> rm, rv
        (tensor([0.2000]), tensor([1.1000]))
    """
    require_tensor(input, "batch_norm")
    x = input._data
    if x.ndim < 2:
        raise ValueError(f"expected 2D or higher input (got {x.ndim}D input)")
    if training:
        n_per_channel = x.size // max(x.shape[1], 1)
        if n_per_channel == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{Size(x.shape)}"
            )
    if _grad_mode.enabled:
        for stat, name in ((running_mean, "running_mean"), (running_var, "running_var")):
            if stat is not None and stat._rg:
                raise _not_differentiable("native_batch_norm", name)
    c = x.shape[1]
    _check_stat(running_mean, "running_mean", c)
    _check_stat(running_var, "running_var", c)
    _check_stat(weight, "weight", c)
    _check_stat(bias, "bias", c)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"batch_norm\" not implemented for '{scalar_name(x.dtype)}'")
    with quiet:  # torch is silent on inf and nan
        return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    x = input._data
    if not training:
        for stat, name in ((running_mean, "running_mean"), (running_var, "running_var")):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    w = None if weight is None else weight._data
    b = None if bias is None else bias._data
    *res, var = _batch_norm_arrays(x, w, b, training, eps, running_mean, running_var)
    mean = res[1]
    params = (bool(training), eps, running_mean, running_var)
    out = record_result(NativeBatchNormBackward0, tuple(res), (input, weight, bias), params)
    if training and (running_mean is not None or running_var is not None):
        # An in-place update the compiler replays (it recomputes the statistics from x).
        side_effect(_update_running, input, running_mean, running_var, momentum, cached=(mean, var))
    return out


def _update_running(x: Tensor, running_mean, running_var, momentum, cached=None) -> None:
    """The running statistics moved towards the batch's (the variance unbiased), in place."""
    a = x._data
    if cached is None:
        _, mean, _, var = _batch_norm_arrays(a, None, None, True, 0.0, None, None)
    else:
        mean, var = cached
    n = a.size // a.shape[1]
    with no_grad():
        if running_mean is not None:
            _update(running_mean, mean, momentum)
        if running_var is not None:
            _update(running_var, var * (n / (n - 1)) if n > 1 else var, momentum)


def _update(stat: Tensor, value: np.ndarray, momentum) -> None:
    """``stat = (1 - momentum) * stat + momentum * value`` in place (a version bump)."""
    m = 0.0 if momentum is None else float(momentum)
    a = stat._data
    new = (1.0 - m) * a + m * value.astype(a.dtype, copy=False)
    np.copyto(a, new.reshape(a.shape), casting="unsafe")
    stat._bump()


# -- layer_norm --------------------------------------------------------------------------------


def _layer_norm_forward(x, w, b, nshape, eps):
    """The normalisation over the trailing ``nshape`` dims, and its mean and 1 / std: the
    compiler's C row loops where a C compiler is present (checked against the NumPy code,
    ``_layer_norm_numpy``, on the first call per shape), else the NumPy code."""
    return with_eager_kernel("layer_norm", _layer_norm_numpy, x, w, b, nshape, eps)


def _layer_norm_numpy(x, w, b, nshape, eps):
    """``_layer_norm_forward`` in NumPy."""
    if x.dtype.kind == "V":  # bfloat16: float32 throughout (mean and 1/std stay float32)
        f = np.float32
        out, mean, invstd = _layer_norm_numpy(
            x.astype(f),
            None if w is None else w.astype(f),
            None if b is None else b.astype(f),
            nshape,
            eps,
        )
        return out.astype(x.dtype), mean, invstd
    axes = tuple(range(x.ndim - len(nshape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=axes, keepdims=True)
    invstd = 1.0 / np.sqrt(var + eps)
    out = centered * invstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    dt = x.dtype
    return np.asarray(out, dtype=dt), mean.astype(dt, copy=False), np.asarray(invstd, dtype=dt)


def _layer_norm_vjp(g, input, weight, bias, mean, invstd, normalized_shape, needs_input_grad):
    """The gradients of ``layer_norm``: C row loops as ``_layer_norm_forward`` chooses them,
    else ``_layer_norm_vjp_numpy``."""
    args = (g, input, weight, bias, mean, invstd, normalized_shape, needs_input_grad)
    return with_eager_kernel("layer_norm_grad", _layer_norm_vjp_numpy, *args)


def _layer_norm_vjp_numpy(g, input, weight, bias, mean, invstd, normalized_shape, needs_input_grad):
    """``_layer_norm_vjp`` in NumPy."""
    x = input
    k = len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    xhat = (x - mean) * invstd
    gx = gw = gb = None
    if needs_input_grad[0]:
        gxh = g if weight is None else g * weight
        gx = invstd * (
            gxh
            - gxh.mean(axis=axes, keepdims=True)
            - xhat * (gxh * xhat).mean(axis=axes, keepdims=True)
        )
    if weight is not None and needs_input_grad[1]:
        gw = (g * xhat).sum(axis=lead)
    if bias is not None and needs_input_grad[2]:
        gb = g.sum(axis=lead)
    return gx, gw, gb


def _layer_norm_composite(input, weight, bias, nshape, eps):
    k = len(nshape)
    axes = tuple(range(input.dim() - k, input.dim()))
    mean = input.mean(axes, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(axes, keepdim=True)
    y = centered / (var + eps).sqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


NativeLayerNormBackward0 = defop(
    "NativeLayerNormBackward0",
    inputs=("input", "weight", "bias"),
    params=("normalized_shape", "eps"),
    saves=("mean", "invstd"),
    forward=_layer_norm_forward,
    vjp=_layer_norm_vjp,
    composite=_layer_norm_composite,
    jvp=COMPOSITE,
)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then apply
    the optional elementwise ``weight`` and ``bias``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.layer_norm(ember.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    require_tensor(input, "layer_norm")
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{type(normalized_shape).__name__}"
        )
    nshape = tuple(int(s) for s in normalized_shape)
    x = input._data
    k = len(nshape)
    if k == 0 or x.ndim < k or tuple(x.shape[x.ndim - k :]) != nshape:
        raise RuntimeError(
            f"Given normalized_shape={list(nshape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in nshape)}], but got input of size"
            f"{list(x.shape)}"
        )
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != nshape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {list(nshape)}"
            )
    if x.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"LayerNormKernelImpl\" not implemented for '{scalar_name(x.dtype)}'"
        )
    w = None if weight is None else weight._data
    b = None if bias is None else bias._data
    with quiet:  # torch is silent on inf and nan
        out, mean, invstd = _layer_norm_forward(x, w, b, nshape, eps)
    return record(
        NativeLayerNormBackward0, out, (input, weight, bias), (nshape, eps), (mean, invstd)
    )


# -- group_norm --------------------------------------------------------------------------------


def _group_stats(x: np.ndarray, group: int, eps):
    """Per (sample, group) mean and 1 / std of ``x`` (N, C, *), shaped (N, G)."""
    xg = x.reshape(x.shape[0], group, -1)
    mean = xg.mean(axis=-1)
    centered = xg - mean[..., None]
    var = np.mean(centered * centered, axis=-1)
    return mean, 1.0 / np.sqrt(var + eps)


def _group_xhat(x, mean, rstd, group: int):
    shape = (x.shape[0], group, -1)
    return ((x.reshape(shape) - mean[..., None]) * rstd[..., None]).reshape(x.shape)


def _group_norm_forward(x, w, b, group, eps):
    mean, rstd = _group_stats(x, group, eps)
    out = _group_xhat(x, mean, rstd, group)
    shape = _bshape(x.ndim, x.shape[1])
    if w is not None:
        out = out * w.reshape(shape)
    if b is not None:
        out = out + b.reshape(shape)
    dt = x.dtype
    return (
        np.asarray(out, dtype=dt),
        np.asarray(mean, dtype=dt),
        np.asarray(rstd, dtype=dt),
    )


def _group_norm_vjp(g, input, weight, bias, mean, rstd, group, eps, needs_input_grad):
    """Closed-form gradients on arrays (recorded backwards go through the composite)."""
    x = input
    shape = _bshape(x.ndim, x.shape[1])
    xhat = _group_xhat(x, mean, rstd, group)
    axes = (0,) + tuple(range(2, x.ndim))
    gx = gw = gb = None
    if needs_input_grad[0]:
        gxh = g if weight is None else g * weight.reshape(shape)
        gg = gxh.reshape(x.shape[0], group, -1)
        xg = xhat.reshape(gg.shape)
        gx = rstd[..., None] * (
            gg - gg.mean(axis=-1, keepdims=True) - xg * (gg * xg).mean(axis=-1, keepdims=True)
        )
        gx = gx.reshape(x.shape)
    if weight is not None and needs_input_grad[1]:
        gw = (g * xhat).sum(axis=axes)
    if bias is not None and needs_input_grad[2]:
        gb = g.sum(axis=axes)
    return gx, gw, gb


def _group_norm_composite(input, weight, bias, group, eps):
    xg = input.reshape(input.shape[0], group, -1)
    mean = xg.mean(-1, keepdim=True)
    centered = xg - mean
    var = (centered * centered).mean(-1, keepdim=True)
    y = (centered / (var + eps).sqrt()).reshape(input.shape)
    shape = _bshape(input.dim(), input.shape[1])
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


NativeGroupNormBackward0 = defop(
    "NativeGroupNormBackward0",
    inputs=("input", "weight", "bias"),
    params=("group", "eps"),
    saves=("mean", "rstd"),
    forward=_group_norm_forward,
    vjp=_group_norm_vjp,
    composite=_group_norm_composite,
    jvp=COMPOSITE,
)


def _verify_batch_size(size) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-05):
    """Normalise each of ``num_groups`` groups of channels of (N, C, *) input per sample
    (biased variance), then apply the per-channel ``weight`` and ``bias``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.group_norm(ember.tensor([[1.0, 3.0, 0.0, 4.0]]), 2)
        tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
    """
    require_tensor(input, "group_norm")
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    shape = list(input.shape)
    n, c = shape[0], shape[1]
    _verify_batch_size([n * c // num_groups, num_groups] + shape[2:])
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {shape} and num_groups={num_groups}"
        )
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape {shape}"
            )
    x = input._data
    if x.dtype.kind not in "fV":
        raise RuntimeError(f"\"GroupNormKernelImpl\" not implemented for '{scalar_name(x.dtype)}'")
    w = None if weight is None else weight._data
    b = None if bias is None else bias._data
    with quiet:
        out, mean, rstd = _group_norm_forward(x, w, b, num_groups, eps)
    return record(
        NativeGroupNormBackward0, out, (input, weight, bias), (num_groups, eps), (mean, rstd)
    )


# -- instance_norm -----------------------------------------------------------------------------


def _verify_spatial_size(size) -> None:
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {size}"
        )


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-05,
):
    """Normalise each channel of each sample of (N, C, *) input over its spatial dims, as
    torch does it: a batch norm of the (1, N C, *) view, the running statistics (if given)
    updated with the mean over the batch.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.instance_norm(ember.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
        tensor([[[-1.0000,  1.0000],
                 [-1.0000,  1.0000]]])
    """
    require_tensor(input, "instance_norm")
    if use_input_stats:
        _verify_spatial_size(input.shape)
    elif running_mean is None or running_var is None:
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    shape = tuple(input.shape)
    b, c = shape[0], shape[1]

    def repeat(t):
        return None if t is None else t.repeat(b)

    rm, rv = repeat(running_mean), repeat(running_var)
    flat = input.contiguous().view(1, b * c, *shape[2:])
    out = batch_norm(flat, rm, rv, repeat(weight), repeat(bias), use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(shape)


# -- rms_norm ----------------------------------------------------------------------------------


def _check_normalized_shape(x_shape, nshape: tuple, weight) -> None:
    k = len(nshape)
    if k == 0 or len(x_shape) < k or tuple(x_shape[len(x_shape) - k :]) != nshape:
        raise RuntimeError(
            f"Given normalized_shape={list(nshape)}, expected input with shape "
            f"[*{', '.join(str(s) for s in nshape)}], but got input of size{list(x_shape)}"
        )
    if weight is not None and tuple(weight.shape) != nshape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of "
            f"shape {list(weight.shape)} and normalized_shape = {list(nshape)}"
        )


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input ** 2) + eps) * weight`` over the trailing
    ``normalized_shape`` dims (``eps=None``: the dtype's machine epsilon, as torch).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.rms_norm(ember.tensor([[3.0, 4.0]]), (2,), eps=0.0)
        tensor([[0.8485, 1.1314]])
    """
    require_tensor(input, "rms_norm")
    if not isinstance(normalized_shape, (tuple, list, Size)):
        raise TypeError(
            "rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{type(normalized_shape).__name__}"
        )
    nshape = tuple(int(s) for s in normalized_shape)
    _check_normalized_shape(tuple(input.shape), nshape, weight)
    dt = input._data.dtype
    if dt.kind not in "fV":
        raise RuntimeError(f"\"rms_norm\" not implemented for '{scalar_name(dt)}'")
    if eps is None:
        eps = float(np.finfo(dt).eps)
    dims = tuple(range(input.dim() - len(nshape), input.dim()))
    rstd = (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    out = input.mul(rstd)
    if weight is not None:
        out = out.mul(weight)
    return out


# -- local_response_norm / normalize -----------------------------------------------------------


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75, k=1.0):
    """``input / (k + alpha * mean of input ** 2 over ``size`` neighbouring channels) **
    beta`` (the window zero-padded, as torch's average pooling).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.local_response_norm(ember.ones(1, 2, 1), 2, alpha=1.0, beta=1.0)
        tensor([[[0.6667],
                 [0.5000]]])
    """
    require_tensor(input, "local_response_norm")
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input (got "
            f"{dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input.mul(input)
    lo, hi = size // 2, (size - 1) // 2
    pad_shape = list(input.shape)
    pads = []
    for amount in (lo, hi):
        pad_shape[1] = amount
        pads.append(input.new_zeros(pad_shape))
    padded = cat([pads[0], sq, pads[1]], 1)
    acc = padded.narrow(1, 0, c)
    for j in range(1, size):
        acc = acc + padded.narrow(1, j, c)
    div = (acc / size).mul(alpha).add(k).pow(beta)
    return input / div


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.normalize(ember.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    require_tensor(input, "normalize")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return div(input, denom, out=out)
