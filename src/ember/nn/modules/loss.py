"""Loss modules: ``MSELoss``, ``L1Loss``, ``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``,
``BCEWithLogitsLoss``."""

from __future__ import annotations

from .. import functional as F
from .._loss import _legacy_reduction
from .module import Module

__all__ = ["MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"]


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.MSELoss()(ember.tensor([1.0, 3.0]), ember.tensor([0.0, 0.0]))
        tensor(5.)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.L1Loss(reduction="sum")(ember.tensor([1.0, -3.0]), ember.tensor([0.0, 0.0]))
        tensor(4.)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities
    (``weight``, ``ignore_index``, ``label_smoothing``, ``reduction``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> loss = nn.CrossEntropyLoss()
        >>> loss(ember.tensor([[2.0, 0.0, 0.0]]), ember.tensor([0]))
        tensor(0.2395)
    """

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices given log-probabilities.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.NLLLoss()(ember.tensor([[-0.1, -2.0]]), ember.tensor([1]))
        tensor(2.)
    """

    def __init__(
        self,
        weight=None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities (logs clamped at -100).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.BCELoss()(ember.tensor([0.5]), ember.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, computed stably (``weight``, ``pos_weight``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.BCEWithLogitsLoss()(ember.tensor([0.0]), ember.tensor([1.0]))
        tensor(0.6931)
    """

    def __init__(
        self,
        weight=None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight=None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )
