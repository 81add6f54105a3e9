"""RAdam: rectified Adam."""

from __future__ import annotations

import numpy as np

from ._functional import (
    _check_betas,
    _check_capturable,
    _check_lr,
    _check_non_negative,
    _param_and_grad,
    _zeros_state,
)
from .optimizer import Optimizer, _bump_step, _lerp_, _new_step, _real, _to_float

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, torch.optim.RAdam's update rule.

    While the variance of the adaptive learning rate is intractable (``rho_t <= 5``, the
    first steps) the step is SGD with bias-corrected momentum; afterwards it is Adam's
    step scaled by the rectification term. ``decoupled_weight_decay=True`` gives RAdamW.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.RAdam([w], lr=0.1)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()      # first steps: momentum SGD, p -= lr * m / (1 - beta1)
        >>> w
        tensor([0.8000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
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
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(
            foreach=None,
            maximize=False,
            differentiable=False,
            capturable=False,
            decoupled_weight_decay=False,
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
            decoupled = group["decoupled_weight_decay"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["exp_avg"] = _zeros_state(p)
                    state["exp_avg_sq"] = _zeros_state(p)
                _check_capturable(group)
                step = _bump_step(state["step"])

                param, grad = _param_and_grad(
                    p, group["maximize"], 0 if decoupled else weight_decay
                )
                if decoupled and weight_decay != 0:
                    param *= 1 - lr * weight_decay

                exp_avg = _real(state["exp_avg"]._data)
                exp_avg_sq = _real(state["exp_avg_sq"]._data)
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad

                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                update = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                update *= lr
                if rho_t > 5.0:
                    rect = (
                        (rho_t - 4)
                        * (rho_t - 2)
                        * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
                    ) ** 0.5
                    # ``c / t`` on a tensor is ``t.reciprocal() * c`` in torch
                    adaptive = np.sqrt(exp_avg_sq)
                    adaptive += eps
                    np.reciprocal(adaptive, out=adaptive)
                    adaptive *= bias_correction2**0.5
                    update *= adaptive
                    update *= rect
                param -= update
                p._bump()
                state["exp_avg"]._bump()
                state["exp_avg_sq"]._bump()
        return loss
