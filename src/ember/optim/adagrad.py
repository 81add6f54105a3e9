"""Adagrad."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _bump_step, _new_step, _real, _to_float

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
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
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
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], p, group["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                step = _new_step()
                step._data[...] = float(s["step"])
                s["step"] = step

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
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    _init_state(state, p, group["initial_accumulator_value"])
                step = _bump_step(state["step"])

                param = _real(p._data)
                grad = _real(p._grad._data)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                clr = lr / (1 + (step - 1) * lr_decay)

                state_sum = _real(state["sum"]._data)
                state_sum += grad * grad
                state["sum"]._version[0] += 1
                std = np.sqrt(state_sum)
                std += eps
                update = grad / std
                update *= -clr
                param += update
                p._version[0] += 1
        return loss
