"""``Flatten``."""

from __future__ import annotations

from .module import Module

__all__ = ["Flatten"]


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` (by default all but the batch dim).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Flatten()(ember.ones(2, 3, 4)).shape
        torch.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
