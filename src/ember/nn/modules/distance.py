"""``PairwiseDistance`` and ``CosineSimilarity``."""

from __future__ import annotations

from ..._aten.nn_layers import cosine_similarity, pairwise_distance
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dim.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.PairwiseDistance(eps=0.0)(ember.tensor([[3.0, 4.0]]), ember.zeros(1, 2))
        tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.CosineSimilarity()(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)
