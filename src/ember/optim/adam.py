"""Adam (and, with ``decoupled_weight_decay=True``, AdamW)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._functional import (
    _check_capturable,
    _check_fused,
    _check_lr,
    _check_non_negative,
    _param_and_grad,
)
from .optimizer import Optimizer, _bump_step, _lerp_, _new_step, _real, _to_float

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam, torch.optim.Adam's update rule.

    ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g * g`` (``amsgrad`` keeps
    the running maximum of ``v``), then
    ``p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)``.
    ``weight_decay`` adds ``weight_decay * p`` to the gradient, or with
    ``decoupled_weight_decay=True`` (AdamW) scales ``p`` by ``1 - lr * weight_decay``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = ember.optim.Adam([w], lr=0.1)
        >>> w.grad = ember.tensor([0.5, -2.0])
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        _check_lr(lr)
        _check_non_negative(eps, "epsilon value")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check_non_negative(weight_decay, "weight_decay value")
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if not capturable and foreach:
                    raise ValueError(
                        f"betas[{i}] as a Tensor is not supported for capturable=False and "
                        "foreach=True"
                    )
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(
            amsgrad=False,
            maximize=False,
            foreach=None,
            capturable=False,
            differentiable=False,
            decoupled_weight_decay=False,
            fused=None,
        )
        self._restore_step_tensors()

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            eps = group["eps"]
            weight_decay = _to_float(group["weight_decay"])
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))
                    state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))
                    if amsgrad:
                        state["max_exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))
                _check_capturable(group)
                step = _bump_step(state["step"])

                # decoupled (AdamW) decay scales the parameter instead of adding to the gradient
                param, grad = _param_and_grad(p, maximize, 0 if decoupled else weight_decay)
                if decoupled and weight_decay != 0:
                    param *= 1 - lr * weight_decay

                exp_avg = _real(state["exp_avg"]._data)
                exp_avg_sq = _real(state["exp_avg_sq"]._data)
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad

                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5

                if amsgrad:
                    max_t = state["max_exp_avg_sq"]
                    max_sq = _real(max_t._data)
                    np.maximum(max_sq, exp_avg_sq, out=max_sq)
                    max_t._bump()
                    denom = np.sqrt(max_sq)
                else:
                    denom = np.sqrt(exp_avg_sq)
                denom /= bias_correction2_sqrt
                denom += eps
                update = exp_avg / denom
                update *= -step_size
                param += update

                p._bump()
                state["exp_avg"]._bump()
                state["exp_avg_sq"]._bump()
        return loss
