"""Adam (and, with ``decoupled_weight_decay=True``, AdamW)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
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
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True"
                )
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
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
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
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
            beta1, beta2 = (_to_float(b) for b in group["betas"])
            eps = group["eps"]
            weight_decay = _to_float(group["weight_decay"])
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))
                    state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))
                    if amsgrad:
                        state["max_exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))
                step = _bump_step(state["step"])

                param = _real(p._data)
                grad = _real(p._grad._data)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    if decoupled:
                        param *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * param

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
                    max_t._version[0] += 1
                    denom = np.sqrt(max_sq)
                else:
                    denom = np.sqrt(exp_avg_sq)
                denom /= bias_correction2_sqrt
                denom += eps
                update = exp_avg / denom
                update *= -step_size
                param += update

                p._version[0] += 1
                state["exp_avg"]._version[0] += 1
                state["exp_avg_sq"]._version[0] += 1
        return loss
