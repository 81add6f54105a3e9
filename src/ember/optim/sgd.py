"""Stochastic gradient descent (optionally with momentum, Nesterov, weight decay)."""

from __future__ import annotations

from .._tensor import Tensor
from ._functional import _check_fused, _param_and_grad
from .optimizer import Optimizer, _real, _to_float

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, torch.optim.SGD's update rule.

    With momentum ``mu`` and dampening ``tau``: ``b = mu * b + (1 - tau) * g`` (``b = g`` on
    the first step), then ``p -= lr * (g + mu * b if nesterov else b)``; ``weight_decay``
    adds ``weight_decay * p`` to the gradient first, ``maximize`` negates it.

    Example:
        >>> import ember
        >>> w = ember.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = ember.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ember.tensor([1.0, 1.0])
        >>> opt.step()
        >>> w
        tensor([0.9000, 1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, differentiable, foreach)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._setdefault_groups(
            nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False
        )

    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates and returns the loss."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _to_float(group["lr"])
            weight_decay = _to_float(group["weight_decay"])
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            for p in self._params_with_grad(group):
                param, grad = _param_and_grad(p, maximize, weight_decay)
                # whether ``grad`` is a temporary we may modify
                owned = bool(maximize) or weight_decay != 0
                if momentum != 0:
                    state = self.state[p]
                    buf_t = state.get("momentum_buffer")
                    if buf_t is None:
                        buf_t = Tensor._wrap(p._grad._data.copy())
                        if owned:
                            _real(buf_t._data)[...] = grad
                        state["momentum_buffer"] = buf_t
                    else:
                        buf = _real(buf_t._data)
                        buf *= momentum
                        buf += (1 - dampening) * grad
                        buf_t._bump()
                    buf = _real(buf_t._data)
                    if nesterov:
                        grad = grad + momentum * buf
                    else:
                        grad = buf
                step = -lr * grad
                param += step
                p._bump()
        return loss
