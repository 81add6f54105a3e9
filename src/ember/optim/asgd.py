"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._functional import _check_capturable, _check_lr, _check_non_negative, _param_and_grad
from .optimizer import (
    Optimizer,
    _bump_step,
    _new_step,
    _real,
    _scalar_dtype,
    _step_tensor,
    _to_float,
)

__all__ = ["ASGD"]


def _scalar_state(value: float) -> Tensor:
    """A 0-dim tensor of the optimizer scalar dtype holding ``value`` (rounded to it)."""
    return Tensor._wrap(np.array(value, dtype=_scalar_dtype()))


class ASGD(Optimizer):
    """Averaged SGD, torch.optim.ASGD's update rule.

    ``p = p * (1 - lambd * eta) - eta * g``; the average ``ax`` follows ``p`` (exactly until
    step ``t0``, then as a running mean); ``eta = lr / (1 + lambd * lr * t) ** alpha``.
    The averaged parameters are in ``optimizer.state[p]["ax"]``.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0], requires_grad=True)
        >>> opt = ember.optim.ASGD([w], lr=0.5, lambd=0.0)
        >>> w.grad = ember.tensor([1.0])
        >>> opt.step()
        >>> w
        tensor([0.5000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(weight_decay, "weight_decay value")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
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
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if len(p_state) != 0:
                    if not isinstance(p_state["step"], Tensor):
                        p_state["step"] = _step_tensor(p_state["step"])
                    for key in ("eta", "mu"):
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = _scalar_state(p_state[key])

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            lambd = group["lambd"]
            alpha = group["alpha"]
            t0 = group["t0"]
            for p in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _new_step()
                    state["eta"] = _scalar_state(lr)
                    state["mu"] = _scalar_state(1.0)
                    state["ax"] = Tensor._wrap(np.zeros_like(p._data))
                _check_capturable(group, "params, mus, etas, and state_steps")
                step = _bump_step(state["step"])
                param, grad = _param_and_grad(p, group["maximize"], group["weight_decay"])

                eta_t, mu_t = state["eta"], state["mu"]
                eta = float(eta_t._data)
                param *= 1 - lambd * eta
                param += -eta * grad

                ax = _real(state["ax"]._data)
                if float(mu_t._data) != 1:
                    diff = param - ax
                    diff *= mu_t._data
                    ax += diff
                else:
                    ax[...] = param
                # torch stores the new values through a default-dtype tensor (as_tensor)
                eta_t._data[...] = np.asarray(
                    lr / ((1 + lambd * lr * step) ** alpha), dtype=_default_float()
                )
                mu_t._data[...] = np.asarray(1 / max(1, step - t0), dtype=_default_float())
                p._bump()
                state["ax"]._bump()
                eta_t._bump()
                mu_t._bump()
        return loss


def _default_float() -> np.dtype:
    return _dtype._default[0].np
