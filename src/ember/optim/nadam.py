"""NAdam: Adam with Nesterov momentum."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._functional import (
    _addcdiv_,
    _check_betas,
    _check_capturable,
    _check_lr,
    _check_non_negative,
    _param_and_grad,
    _zeros_state,
)
from .optimizer import (
    Optimizer,
    _bump_step,
    _lerp_,
    _new_step,
    _real,
    _scalar_dtype,
    _to_float,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, torch.optim.NAdam's update rule.

    The momentum coefficient follows ``mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay))``
    and the step combines the current gradient and the first moment Nesterov-style, each
    scaled by the product of the ``mu``s; ``decoupled_weight_decay=True`` gives NAdamW.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.NAdam([w], lr=0.1)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> round(w.item(), 4)
        0.8944
    """

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(eps, "epsilon value")
        _check_betas(betas)
        _check_non_negative(weight_decay, "weight_decay value")
        _check_non_negative(momentum_decay, "momentum_decay value")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(
            maximize=False,
            foreach=None,
            capturable=False,
            differentiable=False,
            decoupled_weight_decay=False,
        )
        self._restore_step_tensors()
        for p_state in self.state.values():
            if "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                p_state["mu_product"] = Tensor._wrap(
                    np.array(p_state["mu_product"], dtype=_scalar_dtype())
                )

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum_decay = group["momentum_decay"]
            decoupled = group["decoupled_weight_decay"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["mu_product"] = Tensor._wrap(np.ones((), dtype=_scalar_dtype()))
                    state["exp_avg"] = _zeros_state(p)
                    state["exp_avg_sq"] = _zeros_state(p)
                _check_capturable(group, "params, mu_products and state_steps")
                step = _bump_step(state["step"])
                bias_correction2 = 1 - beta2**step

                param, grad = _param_and_grad(
                    p, group["maximize"], 0 if decoupled else weight_decay
                )
                if decoupled and weight_decay != 0:
                    param *= 1 - lr * weight_decay

                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product_t = state["mu_product"]
                mu_product_t._data *= mu
                mu_product_t._bump()
                mu_product = float(mu_product_t._data)

                exp_avg = _real(state["exp_avg"]._data)
                exp_avg_sq = _real(state["exp_avg_sq"]._data)
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                denom = exp_avg_sq / bias_correction2
                np.sqrt(denom, out=denom)
                denom += eps

                mu_product_next = mu_product * mu_next
                _addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                _addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
                p._bump()
                state["exp_avg"]._bump()
                state["exp_avg_sq"]._bump()
        return loss
