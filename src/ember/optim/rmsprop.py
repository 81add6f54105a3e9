"""RMSprop."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
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
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
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
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    step = _new_step()
                    step._data[...] = float(p_state["step"])
                    p_state["step"] = step

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
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["square_avg"] = Tensor._wrap(np.zeros_like(p._data))
                    if momentum > 0:
                        state["momentum_buffer"] = Tensor._wrap(np.zeros_like(p._data))
                    if centered:
                        state["grad_avg"] = Tensor._wrap(np.zeros_like(p._data))
                _bump_step(state["step"])

                param = _real(p._data)
                grad = _real(p._grad._data)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + weight_decay * param

                square_avg = _real(state["square_avg"]._data)
                square_avg *= alpha
                square_avg += (1 - alpha) * grad * grad
                state["square_avg"]._version[0] += 1

                if centered:
                    grad_avg = _real(state["grad_avg"]._data)
                    _lerp_(grad_avg, grad, 1 - alpha)
                    state["grad_avg"]._version[0] += 1
                    avg = square_avg + (-1) * grad_avg * grad_avg
                    np.sqrt(avg, out=avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps

                if momentum > 0:
                    buf = _real(state["momentum_buffer"]._data)
                    buf *= momentum
                    buf += grad / avg
                    state["momentum_buffer"]._version[0] += 1
                    param += -lr * buf
                else:
                    update = grad / avg
                    update *= -lr
                    param += update
                p._version[0] += 1
        return loss
