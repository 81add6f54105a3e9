"""SparseAdam: the lazy Adam variant for sparse gradients."""

from __future__ import annotations

from .._tensor import Tensor
from ._functional import _check_betas
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, torch.optim.SparseAdam's interface.

    torch's SparseAdam only accepts sparse gradients (as produced by
    ``nn.Embedding(sparse=True)``) and raises for dense ones. ember has no sparse tensor
    layout, so every gradient is dense: construction and the option checks behave as in
    torch, and ``step`` raises torch's error whenever a parameter has a gradient (use
    ``Adam``, which gives the same update for dense gradients).

    Example:
        >>> import ember
        >>> w = ember.zeros(2, requires_grad=True)
        >>> opt = ember.optim.SparseAdam([w], lr=0.1)
        >>> opt.param_groups[0]["betas"]
        (0.9, 0.999)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)

        complex_params = [
            [index, d_index]
            for index, group in enumerate(self.param_groups)
            for d_index, d_param in enumerate(group["params"])
            if d_param._data.dtype.kind == "c"
        ]
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    def step(self, closure=None):
        """Raise torch's dense-gradient error if any parameter has a gradient."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            for _ in self._params_with_grad(group):
                raise RuntimeError(
                    "SparseAdam does not support dense gradients, please consider Adam instead"
                )
        return loss
