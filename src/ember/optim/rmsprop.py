"""RMSprop."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._functional import _check_capturable, _check_lr, _check_non_negative, _param_and_grad
from .optimizer import Optimizer, _bump_step, _lerp_, _new_step, _real, _to_float

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, torch.optim.RMSprop's update rule.

    ``v = alpha * v + (1 - alpha) * g * g``; the denominator is ``sqrt(v) + eps`` (with
    ``centered``, ``sqrt(v - gbar**2) + eps`` where ``gbar`` averages the gradients).
    Without momentum ``p -= lr * g / denom``; with momentum ``b = momentum * b + g / denom``
    and ``p -= lr * b``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.RMSprop([w], lr=0.01, alpha=0.75)
        >>> w.grad = ember.tensor([2.0])
        >>> opt.step()
        >>> w
        tensor([0.9800], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(eps, "epsilon value")
        _check_non_negative(momentum, "momentum value")
        _check_non_negative(weight_decay, "weight_decay value")
        _check_non_negative(alpha, "alpha value")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(
            momentum=0,
            centered=False,
            foreach=None,
            maximize=False,
            differentiable=False,
            capturable=False,
        )
        self._restore_step_tensors()

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            alpha = group["alpha"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            centered = group["centered"]
            maximize = group["maximize"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["square_avg"] = Tensor._wrap(np.zeros_like(p._data))
                    if momentum > 0:
                        state["momentum_buffer"] = Tensor._wrap(np.zeros_like(p._data))
                    if centered:
                        state["grad_avg"] = Tensor._wrap(np.zeros_like(p._data))
                _check_capturable(group)
                _bump_step(state["step"])

                param, grad = _param_and_grad(p, maximize, weight_decay)

                square_avg = _real(state["square_avg"]._data)
                square_avg *= alpha
                square_avg += (1 - alpha) * grad * grad
                state["square_avg"]._bump()

                if centered:
                    grad_avg = _real(state["grad_avg"]._data)
                    _lerp_(grad_avg, grad, 1 - alpha)
                    state["grad_avg"]._bump()
                    avg = square_avg + (-1) * grad_avg * grad_avg
                    np.sqrt(avg, out=avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps

                if momentum > 0:
                    buf = _real(state["momentum_buffer"]._data)
                    buf *= momentum
                    buf += grad / avg
                    state["momentum_buffer"]._bump()
                    param += -lr * buf
                else:
                    update = grad / avg
                    update *= -lr
                    param += update
                p._bump()
        return loss
