"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``."""

from __future__ import annotations

from ..._aten import nn_interp as _interp
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resample to ``size`` or by ``scale_factor`` with ``mode`` (``'nearest'``,
    ``'nearest-exact'``, ``'linear'``, ``'bilinear'``, ``'bicubic'``, ``'trilinear'``);
    ``F.interpolate`` as a layer.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> up = nn.Upsample(scale_factor=2)
        >>> up
        Upsample(scale_factor=2.0, mode='nearest')
        >>> up(ember.tensor([[[1.0, 2.0]]]))
        tensor([[[1., 1., 2., 2.]]])
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode: str = "nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return _interp.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling (``Upsample(mode='nearest')``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.UpsamplingNearest2d(scale_factor=2)(ember.ones(1, 1, 2, 2)).shape
        torch.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling with ``align_corners=True``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.UpsamplingBilinear2d(size=3)(ember.tensor([[[[0.0, 2.0]]]]))[0, 0, 0]
        tensor([0., 1., 2.])
    """

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
