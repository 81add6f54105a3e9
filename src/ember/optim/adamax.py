"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

import numpy as np

from ._functional import (
    _addcdiv_,
    _check_betas,
    _check_capturable,
    _check_lr,
    _check_non_negative,
    _param_and_grad,
    _zeros_state,
)
from .optimizer import Optimizer, _bump_step, _lerp_, _new_step, _real, _to_float

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, torch.optim.Adamax's update rule.

    ``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u, |g| + eps)``, then
    ``p -= lr / (1 - beta1**t) * m / u``; ``weight_decay`` adds ``weight_decay * p`` to the
    gradient, ``maximize`` negates it.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = ember.optim.Adamax([w], lr=0.1)
        >>> w.grad = ember.tensor([0.5, -2.0])
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(eps, "epsilon value")
        _check_betas(betas)
        _check_non_negative(weight_decay, "weight_decay value")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(
            foreach=None, maximize=False, differentiable=False, capturable=False
        )
        self._restore_step_tensors()

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["exp_avg"] = _zeros_state(p)
                    state["exp_inf"] = _zeros_state(p)
                _check_capturable(group)
                step = _bump_step(state["step"])
                param, grad = _param_and_grad(p, group["maximize"], weight_decay)

                exp_avg = _real(state["exp_avg"]._data)
                exp_inf = _real(state["exp_inf"]._data)
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_inf *= beta2
                norm = np.abs(grad)
                norm += eps
                np.maximum(exp_inf, norm, out=exp_inf)

                clr = lr / (1 - beta1**step)
                _addcdiv_(param, exp_avg, exp_inf, -clr)
                p._bump()
                state["exp_avg"]._bump()
                state["exp_inf"]._bump()
        return loss
