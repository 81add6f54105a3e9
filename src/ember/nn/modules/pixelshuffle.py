"""``PixelShuffle`` and ``PixelUnshuffle``."""

from __future__ import annotations

from ..._aten.nn_layers import pixel_shuffle, pixel_unshuffle
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r), r = ``upscale_factor``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.PixelShuffle(2)
        PixelShuffle(upscale_factor=2)
        >>> nn.PixelShuffle(2)(ember.ones(1, 8, 3, 3)).shape
        torch.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W), r = ``downscale_factor``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.PixelUnshuffle(2)(ember.ones(1, 2, 6, 6)).shape
        torch.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
