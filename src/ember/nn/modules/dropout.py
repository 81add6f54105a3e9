"""Dropout layers: ``Dropout``, ``Dropout1d/2d/3d`` (whole channels), ``AlphaDropout`` and
``FeatureAlphaDropout`` (for SELU networks)."""

from __future__ import annotations

from ..._aten import nn_layers as _layers
from .. import functional as F
from .module import Module

__all__ = [
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability ``p`` in training (scaling the rest by 1/(1-p));
    the identity in eval mode.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> drop = nn.Dropout(0.5).eval()
        >>> drop(ember.ones(3))
        tensor([1., 1., 1.])
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Dropout1d(0.2)
        Dropout1d(p=0.2, inplace=False)
    """

    def forward(self, input):
        return _layers.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) or (C, H, W) inputs with probability ``p``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Dropout2d(1.0)(ember.ones(1, 2, 2, 2)).sum()
        tensor(0.)
    """

    def forward(self, input):
        return _layers.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Dropout3d().eval()(ember.ones(1, 1, 1, 1, 2))
        tensor([[[[[1., 1.]]]]])
    """

    def forward(self, input):
        return _layers.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout: keeps zero mean and unit variance of SELU activations.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AlphaDropout(0.2).eval()(ember.ones(2))
        tensor([1., 1.])
    """

    def forward(self, input):
        return _layers.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.FeatureAlphaDropout(0.2).eval()(ember.ones(1, 2))
        tensor([[1., 1.]])
    """

    def forward(self, input):
        return _layers.feature_alpha_dropout(input, self.p, self.training)
