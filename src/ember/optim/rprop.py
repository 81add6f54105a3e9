"""Rprop: resilient backpropagation."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._functional import _check_capturable, _check_lr, _param_and_grad, _zeros_state
from .optimizer import Optimizer, _bump_step, _new_step, _real, _to_float

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, torch.optim.Rprop's update rule.

    Each element keeps its own step size (starting at ``lr``): it is multiplied by
    ``etaplus`` when the gradient keeps its sign, by ``etaminus`` when it flips (and that
    element is then not moved), clamped to ``step_sizes``; then ``p -= step * sign(g)``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0, 1.0], requires_grad=True)
        >>> opt = ember.optim.Rprop([w], lr=0.5)
        >>> w.grad = ember.tensor([3.0, -0.1])
        >>> opt.step()
        >>> w
        tensor([0.5000, 1.5000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["prev"] = _zeros_state(p)
                    lr = _to_float(group["lr"])
                    fill = complex(lr, lr) if p._data.dtype.kind == "c" else lr
                    state["step_size"] = Tensor._wrap(np.full_like(p._grad._data, fill))
                _check_capturable(group)
                _bump_step(state["step"])
                param, grad = _param_and_grad(p, group["maximize"], 0)

                prev = _real(state["prev"]._data)
                step_size = _real(state["step_size"]._data)
                sign = np.sign(grad * prev)
                sign[sign > 0] = etaplus
                sign[sign < 0] = etaminus
                sign[sign == 0] = 1
                step_size *= sign
                np.clip(step_size, step_size_min, step_size_max, out=step_size)

                grad = grad.copy()
                grad[sign == etaminus] = 0
                param += -1 * np.sign(grad) * step_size
                prev[...] = grad
                p._bump()
                state["prev"]._bump()
                state["step_size"]._bump()
        return loss
