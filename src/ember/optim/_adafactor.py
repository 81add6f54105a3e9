"""Adafactor: Adam-like steps with a factored second moment (row and column averages)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _bump_step, _lerp_, _new_step, _step_tensor, _to_float

__all__ = ["Adafactor"]


def _norm(a: np.ndarray, axis=None, keepdims=False):
    return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))


class Adafactor(Optimizer):
    """Adafactor, torch.optim.Adafactor's update rule.

    Matrices (and batches of them) keep only running row and column means of ``g * g``
    (vectors keep the full running mean), decayed with ``1 - beta2_t = t**beta2_decay``; the
    step ``g / sqrt(v_hat)`` is clipped to RMS ``d`` and scaled by
    ``max(eps2, RMS(p)) * min(lr, 1 / sqrt(t))``.

    Example:
        >>> import ember
        >>> w = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        >>> opt = ember.optim.Adafactor([w], lr=0.01)
        >>> w.grad = ember.ones(2, 2)
        >>> opt.step()
        >>> sorted(opt.state[w])
        ['col_var', 'row_var', 'step']
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(foreach=None)
        for p_state in self.state.values():
            if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                p_state["step"] = _step_tensor(p_state["step"])

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            eps1, eps2 = group["eps"]
            d = group["d"]
            beta2_decay = group["beta2_decay"]
            weight_decay = group["weight_decay"]
            params = []
            for p in self._params_with_grad(group):
                if p._data.dtype.kind == "c":
                    raise RuntimeError("Adafactor does not support complex parameters")
                params.append(p)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    grad = p._grad._data
                    if grad.ndim > 1:
                        state["row_var"] = Tensor._wrap(
                            np.zeros(grad.shape[:-1] + (1,), grad.dtype)
                        )
                        state["col_var"] = Tensor._wrap(
                            np.zeros(grad.shape[:-2] + (1,) + grad.shape[-1:], grad.dtype)
                        )
                    else:
                        state["variance"] = Tensor._wrap(np.zeros_like(grad))
            for p in params:
                state = self.state[p]
                param = p._data
                grad = -p._grad._data if group["maximize"] else p._grad._data
                if eps1 is None:
                    # as in torch: the first parameter's dtype sets it for the group
                    eps1 = float(np.finfo(param.dtype).eps)
                step = _bump_step(state["step"])
                one_minus_beta2_t = step**beta2_decay
                rho_t = min(lr, 1 / (step**0.5))
                alpha = max(eps2, float(_norm(param)) / (param.size**0.5)) * rho_t
                if weight_decay != 0:
                    param *= 1 - lr * weight_decay

                if grad.ndim > 1:
                    row_var = state["row_var"]._data
                    col_var = state["col_var"]._data
                    row_mean = np.square(_norm(grad, axis=-1, keepdims=True))
                    row_mean /= grad.shape[-1]
                    _lerp_(row_var, row_mean, one_minus_beta2_t)
                    col_mean = np.square(_norm(grad, axis=-2, keepdims=True))
                    col_mean /= grad.shape[-2]
                    _lerp_(col_var, col_mean, one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate /= np.maximum(np.mean(row_var, axis=-2, keepdims=True), eps1)
                    state["row_var"]._bump()
                    state["col_var"]._bump()
                else:
                    variance = state["variance"]._data
                    _lerp_(variance, grad * grad, one_minus_beta2_t)
                    var_estimate = variance.copy()
                    state["variance"]._bump()

                update = np.maximum(var_estimate, eps1 * eps1)
                np.sqrt(update, out=update)
                np.reciprocal(update, out=update)
                update *= grad
                denom = max(1.0, float(_norm(update)) / ((update.size**0.5) * d))
                param += (-alpha / denom) * update
                p._bump()
        return loss
