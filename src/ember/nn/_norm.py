"""batch_norm and layer_norm: one node each (NativeBatchNormBackward0,
NativeLayerNormBackward0), with the closed-form backward rules."""

from __future__ import annotations

import numpy as np

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from ..ops.reduction import _scalar_name
from ._node import NNNode, arr, record_nn

_wrap = Tensor._wrap


def _bshape(ndim: int, c: int) -> tuple:
    return (1, c) + (1,) * (ndim - 2)


class NativeBatchNormBackward0(NNNode):
    __slots__ = ("axes", "eps", "training", "mean", "invstd")

    def vjp(self, g, x, w, b):
        shape = _bshape(x.ndim, x.shape[1])
        mean = self.mean.reshape(shape)
        invstd = self.invstd.reshape(shape)
        xhat = (x - mean) * invstd
        axes = self.axes
        gx = gw = gb = None
        if self.next_functions[0][0] is not None:
            scale = invstd if w is None else invstd * w.reshape(shape)
            if self.training:
                n = x.size // x.shape[1]
                gmean = g.sum(axis=axes, keepdims=True) / n
                gxmean = (g * xhat).sum(axis=axes, keepdims=True) / n
                gx = scale * (g - gmean - xhat * gxmean)
            else:
                gx = g * scale
        if w is not None and self.next_functions[1][0] is not None:
            gw = (g * xhat).sum(axis=axes)
        if b is not None and self.next_functions[2][0] is not None:
            gb = g.sum(axis=axes)
        return gx, gw, gb

    def composite(self, x, w, b):
        shape = _bshape(x.dim(), x.shape[1])
        if self.training:
            mean = x.mean(self.axes, keepdim=True)
            centered = x - mean
            var = (centered * centered).mean(self.axes, keepdim=True)
            y = centered / (var + self.eps).sqrt()
        else:
            dt = x._data.dtype
            mean = _wrap(self.mean.reshape(shape).astype(dt))
            y = (x - mean) * _wrap(self.invstd.reshape(shape).astype(dt))
        if w is not None:
            y = y * w.reshape(shape)
        if b is not None:
            y = y + b.reshape(shape)
        return y


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
    if not isinstance(input, Tensor):
        raise TypeError(
            f"batch_norm(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
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
    c = x.shape[1]
    _check_stat(running_mean, "running_mean", c)
    _check_stat(running_var, "running_var", c)
    _check_stat(weight, "weight", c)
    _check_stat(bias, "bias", c)
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"batch_norm\" not implemented for '{_scalar_name(x.dtype)}'")
    axes = (0,) + tuple(range(2, x.ndim))
    shape = _bshape(x.ndim, c)
    if training:
        mean = x.mean(axis=axes)
        centered = x - mean.reshape(shape)
        var = np.mean(centered * centered, axis=axes)
        invstd = 1.0 / np.sqrt(var + eps)
        if running_mean is not None or running_var is not None:
            n = x.size // c
            with no_grad():
                if running_mean is not None:
                    _update(running_mean, mean, momentum)
                if running_var is not None:
                    unbiased = var * (n / (n - 1)) if n > 1 else var
                    _update(running_var, unbiased, momentum)
    else:
        for stat, name in ((running_mean, "running_mean"), (running_var, "running_var")):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        mean = running_mean._data.astype(x.dtype, copy=False)
        centered = x - mean.reshape(shape)
        invstd = 1.0 / np.sqrt(running_var._data.astype(x.dtype, copy=False) + eps)
    out = centered * invstd.reshape(shape)
    if weight is not None:
        out = out * weight._data.reshape(shape)
    if bias is not None:
        out = out + bias._data.reshape(shape)
    out = np.asarray(out, dtype=x.dtype)
    return record_nn(
        NativeBatchNormBackward0,
        out,
        (input, weight, bias),
        axes=axes,
        eps=eps,
        training=bool(training),
        mean=np.asarray(mean, dtype=x.dtype),
        invstd=np.asarray(invstd, dtype=x.dtype),
    )


def _update(stat: Tensor, value: np.ndarray, momentum) -> None:
    """``stat = (1 - momentum) * stat + momentum * value`` in place (a version bump)."""
    m = 0.0 if momentum is None else float(momentum)
    a = stat._data
    new = (1.0 - m) * a + m * value.astype(a.dtype, copy=False)
    np.copyto(a, new.reshape(a.shape), casting="unsafe")
    stat._bump()


class NativeLayerNormBackward0(NNNode):
    __slots__ = ("nshape", "eps", "mean", "invstd")

    def vjp(self, g, x, w, b):
        k = len(self.nshape)
        axes = tuple(range(x.ndim - k, x.ndim))
        lead = tuple(range(x.ndim - k))
        xhat = (x - self.mean) * self.invstd
        gx = gw = gb = None
        if self.next_functions[0][0] is not None:
            gxh = g if w is None else g * w
            gx = self.invstd * (
                gxh
                - gxh.mean(axis=axes, keepdims=True)
                - xhat * (gxh * xhat).mean(axis=axes, keepdims=True)
            )
        if w is not None and self.next_functions[1][0] is not None:
            gw = (g * xhat).sum(axis=lead)
        if b is not None and self.next_functions[2][0] is not None:
            gb = g.sum(axis=lead)
        return gx, gw, gb

    def composite(self, x, w, b):
        k = len(self.nshape)
        axes = tuple(range(x.dim() - k, x.dim()))
        mean = x.mean(axes, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(axes, keepdim=True)
        y = centered / (var + self.eps).sqrt()
        if w is not None:
            y = y * w
        if b is not None:
            y = y + b
        return y


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then apply
    the optional elementwise ``weight`` and ``bias``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.layer_norm(ember.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"layer_norm(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
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
    if x.dtype.kind != "f":
        raise NotImplementedError(
            f"\"LayerNormKernelImpl\" not implemented for '{_scalar_name(x.dtype)}'"
        )
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=axes, keepdims=True)
    invstd = 1.0 / np.sqrt(var + eps)
    out = centered * invstd
    if weight is not None:
        out = out * arr(weight)
    if bias is not None:
        out = out + arr(bias)
    out = np.asarray(out, dtype=x.dtype)
    return record_nn(
        NativeLayerNormBackward0,
        out,
        (input, weight, bias),
        nshape=nshape,
        eps=eps,
        mean=mean.astype(x.dtype, copy=False),
        invstd=np.asarray(invstd, dtype=x.dtype),
    )
