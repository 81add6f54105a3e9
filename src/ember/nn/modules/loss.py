"""Loss modules: every torch loss but CTC, each a thin module over its functional form."""

from __future__ import annotations

from ..._aten import nn_loss as L
from ..._aten.nn_ctc import ctc_loss
from ..._aten.nn_layers import pairwise_distance
from ..._aten.nn_loss import _legacy_reduction
from .. import functional as F
from .module import Module

__all__ = [
    "MSELoss",
    "L1Loss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "SoftMarginLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "CosineEmbeddingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "CTCLoss",
]


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


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities (``reduction='batchmean'`` is the
    mathematical definition; ``log_target`` for log-probability targets).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> loss = nn.KLDivLoss(reduction="batchmean")
        >>> loss(ember.tensor([[-1.0, -0.5]]), ember.tensor([[0.5, 0.5]]))
        tensor(0.0569)
    """

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return L.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (``beta=0``: L1).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.SmoothL1Loss()(ember.tensor([0.5, 3.0]), ember.zeros(2))
        tensor(1.3125)
    """

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return L.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-scaled linear above.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.HuberLoss(delta=2.0)(ember.tensor([0.5, 3.0]), ember.zeros(2))
        tensor(2.0625)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return L.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss of +-1 targets.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.SoftMarginLoss()(ember.tensor([0.0]), ember.tensor([1.0]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return L.soft_margin_loss(input, target, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.MarginRankingLoss()(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([1.0]))
        tensor(1.)
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return L.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class HingeEmbeddingLoss(_Loss):
    """``x`` for target 1, ``max(0, margin - x)`` for target -1.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.HingeEmbeddingLoss()(ember.tensor([0.3, 2.0]), ember.tensor([-1.0, 1.0]))
        tensor(1.3500)
    """

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return L.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for target -1.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> a, b = ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]])
        >>> nn.CosineEmbeddingLoss()(a, b, ember.tensor([1.0]))
        tensor(0.2929)
    """

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return L.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss over class-index targets padded with -1.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> nn.MultiLabelMarginLoss()(x, ember.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """

    def forward(self, input, target):
        return L.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.MultiLabelSoftMarginLoss()(ember.zeros(1, 2), ember.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """

    def forward(self, input, target):
        return L.multilabel_soft_margin_loss(
            input, target, weight=self.weight, reduction=self.reduction
        )


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss (``p`` 1 or 2, ``margin``, class ``weight``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.MultiMarginLoss()(ember.tensor([[0.1, 0.8, 0.4]]), ember.tensor([1]))
        tensor(0.3000)
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight=None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D "
                "instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return L.multi_margin_loss(
            input,
            target,
            p=self.p,
            margin=self.margin,
            weight=self.weight,
            reduction=self.reduction,
        )


class TripletMarginLoss(_Loss):
    """``max(0, margin + d(a, p) - d(a, n))`` with the pairwise ``p``-norm distance.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> a, pos, neg = ember.zeros(1, 2), ember.ones(1, 2), ember.ones(1, 2) * 3
        >>> nn.TripletMarginLoss(eps=0.0)(a, pos, neg)
        tensor(0.)
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return L.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Loss):
    """``TripletMarginLoss`` with any ``distance_function`` (default pairwise distance).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> a, pos, neg = ember.zeros(1, 2), ember.ones(1, 2), ember.ones(1, 2) * 3
        >>> nn.TripletMarginWithDistanceLoss()(a, pos, neg)
        tensor(0.)
    """

    def __init__(
        self,
        *,
        distance_function=None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        self.distance_function = (
            distance_function if distance_function is not None else pairwise_distance
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return L.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


class PoissonNLLLoss(_Loss):
    """Poisson negative log likelihood (``log_input``, ``full``, ``eps``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.PoissonNLLLoss()(ember.tensor([0.0]), ember.tensor([2.0]))
        tensor(1.)
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average=None,
        eps: float = 1e-8,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return L.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood with a predicted variance (``full``, ``eps``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.GaussianNLLLoss()(ember.tensor([1.0]), ember.tensor([0.0]), ember.tensor([1.0]))
        tensor(0.5000)
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return L.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )


class CTCLoss(_Loss):
    """The Connectionist Temporal Classification loss (see ``ember.nn._ctc.ctc_loss``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> lp = ember.full((2, 1, 2), 0.5).log()
        >>> nn.modules.loss.CTCLoss(reduction="sum")(lp, ember.tensor([[1]]), (2,), (1,))
        tensor(0.2877)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )
