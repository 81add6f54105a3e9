"""AdamW: Adam with decoupled weight decay."""

from __future__ import annotations

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """AdamW, torch.optim.AdamW's update rule (Adam with ``decoupled_weight_decay=True``).

    Each step first scales the parameters by ``1 - lr * weight_decay`` (default
    ``weight_decay=1e-2``), then applies the Adam update to the undecayed gradient.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> w
        tensor([0.8500], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
