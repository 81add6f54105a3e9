"""``torch.nn.modules.batchnorm``: the batch-norm layers (defined with the other norms) and
``SyncBatchNorm``, batch norm whose statistics are those of the whole process group."""

from __future__ import annotations

import sys

from ... import _creation
from ..._aten.nn_norm import batch_norm
from ..._aten.shape import cat
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ...autograd.recording import side_effect
from .normalization import (  # noqa: F401
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,
    _count_batch,
    _NormBase,
)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class _AllReduceSum(Function):
    """``all_reduce(SUM)`` as a differentiable op: the gradient of a sum over ranks is the
    sum over ranks of the gradients (torch's sync_batch_norm backward reduces the same)."""

    @staticmethod
    def forward(ctx, tensor, group, dist):
        ctx.group, ctx.dist = group, dist
        out = tensor.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        ctx.dist.all_reduce(grad, group=ctx.group)
        return grad, None, None


def _distributed():
    """ember.distributed when it is loaded and a default group exists, else None (a program
    that never imported it has no process group: no need to load MPI to know)."""
    dist = sys.modules.get(__name__.split(".")[0] + ".distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist
    return None


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose training statistics are computed over the batch of every
    process of ``process_group`` (default: the world), all-reduced through
    ``ember.distributed``; without an initialized process group, or in eval mode, it is
    ``BatchNorm`` (over inputs of any number of dims >= 2).

    torch runs the synchronized path only on GPU tensors; ember's process groups (MPI) hold
    CPU tensors, so ember synchronizes them.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> bn = nn.SyncBatchNorm(2)
        >>> bn(ember.tensor([[1.0, 2.0], [3.0, 6.0]]))
        tensor([[-1.0000, -1.0000],
                [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)
        >>> model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm1d(3)))
        >>> type(model[0]).__name__
        'SyncBatchNorm'
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group=None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            side_effect(_count_batch, self.num_batches_tracked)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked._data)
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        running_mean = self.running_mean if use_stats else None
        running_var = self.running_var if use_stats else None
        dist = _distributed() if bn_training and self.training else None
        group = None
        if dist is not None:
            group = self.process_group or dist.group.WORLD
            if dist.get_world_size(group) <= 1:
                dist = None
        if dist is None:
            return batch_norm(
                input,
                running_mean,
                running_var,
                self.weight,
                self.bias,
                bn_training,
                factor,
                self.eps,
            )
        return self._synced(input, running_mean, running_var, factor, group, dist)

    def _synced(self, input, running_mean, running_var, factor: float, group, dist):
        """The batch norm of the statistics of all ranks: per channel, the count, sum and
        sum of squares are all-reduced (differentiably), as torch's sync_batch_norm does."""
        c = input.size(1)
        dims = [0, *range(2, input.dim())]
        local = input.numel() // c
        count = _creation.full((1,), float(local), dtype=input.dtype)
        sums = input.sum(dims)
        squares = (input * input).sum(dims)
        total = _AllReduceSum.apply(cat([count, sums, squares]), group, dist)
        n = total[0]
        mean = total[1 : 1 + c] / n
        var = total[1 + c :] / n - mean * mean
        shape = [1, c] + [1] * (input.dim() - 2)
        out = (input - mean.reshape(shape)) * (var + self.eps).rsqrt().reshape(shape)
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        if running_mean is not None:
            with no_grad():
                n_all = float(n.item())
                unbiased = var.detach() * (n_all / max(n_all - 1, 1))
                running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                running_var.mul_(1 - factor).add_(unbiased * factor)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*D`` layer (itself included) replaced by a
        ``SyncBatchNorm`` holding the same parameters and buffers.

        Example:
            >>> from ember import nn
            >>> m = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2d(4))
            >>> type(m).__name__, m.num_features
            ('SyncBatchNorm', 4)
        """
        module_output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            module_output = SyncBatchNorm(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
            )
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
