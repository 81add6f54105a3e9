"""``torch.nn.utils.fusion``: fold an eval-mode BatchNorm into the convolution or linear
layer before it, so one layer computes both (``y = W' x + b'`` with
``W' = W * gamma / sqrt(var + eps)`` per output channel and
``b' = (b - mean) * gamma / sqrt(var + eps) + beta``).

Example:
    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils.fusion import fuse_conv_bn_eval
    >>> conv, bn = nn.Conv2d(3, 4, 3).eval(), nn.BatchNorm2d(4).eval()
    >>> x = ember.randn(1, 3, 5, 5)
    >>> ember.allclose(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6)
    True
"""

from __future__ import annotations

import copy

from ... import _torch as torch
from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def _check_eval(layer, bn) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _bn_scale(bn_rv, bn_eps, bn_w):
    """``gamma / sqrt(var + eps)``, the per-channel factor BatchNorm applies."""
    return bn_w * torch.rsqrt(bn_rv + bn_eps)


def fuse_conv_bn_weights(
    conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose: bool = False
) -> tuple[Parameter, Parameter]:
    """The weight and bias of a convolution followed by an eval-mode BatchNorm, as one
    convolution's (``transpose``: a transposed convolution, channels on dim 1).

    Example:
        >>> import ember
        >>> from ember.nn.utils.fusion import fuse_conv_bn_weights
        >>> w, b = fuse_conv_bn_weights(ember.ones(2, 1, 1, 1), None, ember.zeros(2),
        ...                             ember.ones(2), 0.0, ember.tensor([2.0, 3.0]), None)
        >>> w.detach().flatten(), b.detach()
        (tensor([2., 3.]), tensor([0., 0.]))
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = torch.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = torch.ones_like(bn_rm)
    if bn_b is None:
        bn_b = torch.zeros_like(bn_rm)
    scale = _bn_scale(bn_rv, bn_eps, bn_w)
    channels = [1, -1] if transpose else [-1, 1]
    shape = channels + [1] * (conv_w.dim() - 2)
    fused_w = (conv_w * scale.reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of the eval-mode ``conv`` that computes ``bn(conv(x))``.

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils.fusion import fuse_conv_bn_eval
        >>> fuse_conv_bn_eval(nn.Conv1d(2, 2, 1).eval(), nn.BatchNorm1d(2).eval())
        Conv1d(2, 2, kernel_size=(1,), stride=(1,))
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight,
        fused.bias,
        bn.running_mean,
        bn.running_var,
        bn.eps,
        bn.weight,
        bn.bias,
        transpose,
    )
    return fused


def fuse_linear_bn_weights(
    linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b
) -> tuple[Parameter, Parameter]:
    """The weight and bias of a linear layer followed by an eval-mode BatchNorm, as one
    linear layer's.

    Example:
        >>> import ember
        >>> from ember.nn.utils.fusion import fuse_linear_bn_weights
        >>> w, b = fuse_linear_bn_weights(ember.ones(2, 3), ember.ones(2), ember.zeros(2),
        ...                               ember.ones(2), 0.0, ember.tensor([2.0, 3.0]),
        ...                               ember.zeros(2))
        >>> w.detach().sum(1), b.detach()
        (tensor([6., 9.]), tensor([2., 3.]))
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = torch.zeros_like(bn_rm)
    scale = _bn_scale(bn_rv, bn_eps, bn_w)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode ``linear`` that computes ``bn(linear(x))`` (BatchNorm1d
    over the linear layer's output features, or a single feature).

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils.fusion import fuse_linear_bn_eval
        >>> fuse_linear_bn_eval(nn.Linear(3, 2).eval(), nn.BatchNorm1d(2).eval())
        Linear(in_features=3, out_features=2, bias=True)
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features must equal bn.num_features OR bn.num_features must be 1"
        )
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused
