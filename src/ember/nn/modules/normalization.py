"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``, ``RMSNorm``,
``LocalResponseNorm`` (the instance norms are in ``instancenorm``)."""

from __future__ import annotations

import numpy as np

from ... import _creation
from ..._aten.nn_norm import batch_norm, group_norm, layer_norm, local_response_norm, rms_norm
from ..._tensor import Tensor
from ...autograd.recording import not_capturable, side_effect
from .. import init
from ..parameter import Parameter
from .linear import _factory, _init_bias_param
from .module import Module

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "GroupNorm",
    "LayerNorm",
    "LocalResponseNorm",
    "RMSNorm",
]


def _init_affine_params(module: Module, affine: bool, bias: bool, shape, kw: dict) -> None:
    """Uninitialised ``weight`` and (if ``bias``) ``bias`` parameters of ``shape`` when
    ``affine``; otherwise both are registered as None."""
    if affine:
        module.weight = Parameter(_creation.empty(shape, **kw))
        _init_bias_param(module, bias, shape, kw)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine_params(module: Module, affine: bool) -> None:
    """Weight 1 and bias (if any) 0, when ``affine``."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class _NormBase(Module):
    """What batch and instance norms share: the affine parameters and running statistics."""

    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _init_affine_params(self, self.affine, bias, num_features, kw)
        if self.track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, **kw))
            self.register_buffer("running_var", _creation.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", Tensor._wrap(np.zeros((), dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        """Reset the running statistics and set weight to 1 and bias to 0."""
        self.reset_running_stats()
        _reset_affine_params(self, self.affine)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
            "bias={use_bias}, track_running_stats={track_running_stats}".format(
                **self.__dict__, use_bias=self.bias is not None
            )
        )

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
    ) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else Tensor._wrap(np.zeros((), dtype=np.int64))
                )
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )


def _count_batch(num_batches_tracked: Tensor, cached=None) -> None:
    num_batches_tracked._data += 1
    num_batches_tracked._bump()


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            nbt = self.num_batches_tracked
            side_effect(_count_batch, nbt)  # replayed by compiled code
            if self.momentum is None:  # a factor from the buffer's value
                not_capturable("BatchNorm's cumulative average (momentum=None)")
                factor = 1.0 / float(nbt._data)
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return batch_norm(
            input,
            self.running_mean if use_stats else None,
            self.running_var if use_stats else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over (N, C) or (N, C, L) inputs, per channel.

    Training mode normalises with the batch statistics and updates ``running_mean`` and
    ``running_var`` (unbiased) with ``momentum`` (``None``: cumulative average); eval
    mode uses the running statistics.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> bn = nn.BatchNorm1d(2)
        >>> bn
        BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        >>> y = bn(ember.tensor([[1.0, 2.0], [3.0, 6.0]]))
        >>> bn.running_mean
        tensor([0.2000, 0.4000])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over (N, C, H, W) inputs, per channel (see ``BatchNorm1d``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.BatchNorm2d(3)(ember.randn(4, 3, 5, 5)).shape
        torch.Size([4, 3, 5, 5])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over (N, C, D, H, W) inputs, per channel (see ``BatchNorm1d``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.BatchNorm3d(2)(ember.randn(3, 2, 2, 2, 2)).shape
        torch.Size([3, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with elementwise affine
    ``weight`` (ones) and ``bias`` (zeros).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> ln = nn.LayerNorm(2)
        >>> ln
        LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> ln(ember.tensor([[1.0, 3.0]]))
        tensor([[-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _init_affine_params(self, self.elementwise_affine, bias, self.normalized_shape, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1, bias 0."""
        _reset_affine_params(self, self.elementwise_affine)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
            "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None)
        )


class GroupNorm(Module):
    """Normalise ``num_groups`` groups of channels per sample, with per-channel affine
    ``weight`` (ones) and ``bias`` (zeros).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> gn = nn.GroupNorm(2, 4)
        >>> gn
        GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
        >>> gn(ember.randn(3, 4, 5)).shape
        torch.Size([3, 4, 5])
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _init_affine_params(self, affine, bias, num_channels, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1, bias 0."""
        _reset_affine_params(self, self.affine)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None
        )


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, with an
    elementwise ``weight`` (ones); ``eps=None`` uses the input dtype's machine epsilon.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.RMSNorm(3)
        RMSNorm((3,), eps=None, elementwise_affine=True)
        >>> nn.RMSNorm(2, eps=0.0)(ember.tensor([[3.0, 4.0]]))
        tensor([[0.8485, 1.1314]], grad_fn=<MulBackward0>)
    """

    def __init__(
        self,
        normalized_shape,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, **kw))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__
        )


class LocalResponseNorm(Module):
    """Normalise each channel by the activity of ``size`` neighbouring channels.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.LocalResponseNorm(2)
        LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
        >>> nn.LocalResponseNorm(2)(ember.ones(1, 3, 4)).shape
        torch.Size([1, 3, 4])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
