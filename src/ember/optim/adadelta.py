"""Adadelta."""

from __future__ import annotations

import numpy as np

from ._functional import (
    _check_capturable,
    _check_lr,
    _check_non_negative,
    _param_and_grad,
    _zeros_state,
)
from .optimizer import Optimizer, _bump_step, _new_step, _real, _to_float

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, torch.optim.Adadelta's update rule.

    ``v = rho * v + (1 - rho) * g * g``,
    ``delta = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho * u + (1 - rho) * delta**2``,
    then ``p -= lr * delta``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.Adadelta([w], lr=1.0, rho=0.0, eps=1.0)
        >>> w.grad = ember.tensor([0.0])
        >>> opt.step()
        >>> w
        tensor([1.], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_non_negative(eps, "epsilon value")
        _check_non_negative(weight_decay, "weight_decay value")
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
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
            rho = group["rho"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["square_avg"] = _zeros_state(p)
                    state["acc_delta"] = _zeros_state(p)
                _check_capturable(group, devices="['cuda', 'xpu', 'hpu', 'privateuseone']")
                _bump_step(state["step"])
                param, grad = _param_and_grad(p, group["maximize"], weight_decay)

                square_avg = _real(state["square_avg"]._data)
                acc_delta = _real(state["acc_delta"]._data)
                square_avg *= rho
                square_avg += (1 - rho) * grad * grad
                std = square_avg + eps
                np.sqrt(std, out=std)
                delta = acc_delta + eps
                np.sqrt(delta, out=delta)
                delta /= std
                delta *= grad
                acc_delta *= rho
                acc_delta += (1 - rho) * delta * delta
                delta *= -lr
                param += delta
                p._bump()
                state["square_avg"]._bump()
                state["acc_delta"]._bump()
        return loss
