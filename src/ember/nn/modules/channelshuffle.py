"""``ChannelShuffle``."""

from __future__ import annotations

from ..._aten.nn_layers import channel_shuffle
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave ``groups`` groups of channels (dim 1).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ChannelShuffle(2)
        ChannelShuffle(groups=2)
        >>> nn.ChannelShuffle(2)(ember.arange(4.0).view(1, 4, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
