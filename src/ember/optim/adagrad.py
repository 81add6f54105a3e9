"""Adagrad."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._functional import _check_fused, _check_lr, _check_non_negative, _param_and_grad
from .optimizer import Optimizer, _bump_step, _new_step, _real, _step_tensor, _to_float

__all__ = ["Adagrad"]


def _init_state(state: dict, p: Tensor, initial_accumulator_value: float) -> None:
    state["step"] = _new_step()
    init = initial_accumulator_value
    if p._data.dtype.kind == "c":
        init = complex(initial_accumulator_value, initial_accumulator_value)
    state["sum"] = Tensor._wrap(np.full_like(p._data, init))


class Adagrad(Optimizer):
    """Adagrad, torch.optim.Adagrad's update rule.

    ``s += g * g`` (``s`` starts at ``initial_accumulator_value``), then
    ``p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.Adagrad([w], lr=0.5)
        >>> w.grad = ember.tensor([3.0])
        >>> opt.step()
        >>> w
        tensor([0.5000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(lr_decay, "lr_decay value")
        _check_non_negative(weight_decay, "weight_decay value")
        _check_non_negative(initial_accumulator_value, "initial_accumulator_value value")
        _check_non_negative(eps, "epsilon value")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], p, group["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(foreach=None, maximize=False, differentiable=False, fused=None)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = _step_tensor(s["step"])

    def share_memory(self) -> None:
        """No-op: ember tensors live in ordinary process memory."""

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            lr_decay = group["lr_decay"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            maximize = group["maximize"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    _init_state(state, p, group["initial_accumulator_value"])
                step = _bump_step(state["step"])

                param, grad = _param_and_grad(p, maximize, weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)

                state_sum = _real(state["sum"]._data)
                state_sum += grad * grad
                state["sum"]._bump()
                std = np.sqrt(state_sum)
                std += eps
                update = grad / std
                update *= -clr
                param += update
                p._bump()
        return loss
