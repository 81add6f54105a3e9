"""Shared pieces of the optimizers' ``__init__`` checks and ``step`` updates."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import _real


def _check_non_negative(value, what: str) -> None:
    """Raise ``ValueError("Invalid <what>: <value>")`` unless ``0 <= value``."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}")


def _check_lr(lr) -> None:
    """A learning rate must be non-negative and, as a tensor, have one element."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check_non_negative(lr, "learning rate")


def _check_fused(fused, differentiable, foreach) -> None:
    """The option combinations torch rejects for ``fused=True``."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _param_and_grad(p: Tensor, maximize, weight_decay) -> tuple[np.ndarray, np.ndarray]:
    """``p``'s data and its gradient as real arrays, the gradient negated for ``maximize``
    and with ``weight_decay * param`` added (L2 penalty); ``p._grad`` itself is never
    modified (either step that applies makes a new array)."""
    param = _real(p._data)
    grad = _real(p._grad._data)
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param
    return param, grad


_CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"


def _check_capturable(group: dict, what: str = "params and state_steps", devices=None) -> None:
    """torch's step-time check for ``capturable=True``: graph capture needs an accelerator,
    so on a CPU-only build every step raises the same ``AssertionError`` torch does."""
    if group.get("capturable"):
        raise AssertionError(
            f"If capturable=True, {what} must be on supported devices: "
            f"{devices or _CAPTURABLE_DEVICES}."
        )


def _check_betas(betas) -> None:
    """Both Adam-style betas must lie in ``[0, 1)``."""
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _zeros_state(p: Tensor) -> Tensor:
    """``torch.zeros_like(p)`` as a state tensor."""
    return Tensor._wrap(np.zeros_like(p._data))


def _addcdiv_(param: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: float) -> None:
    """``param.addcdiv_(t1, t2, value=value)``: ``param += value * (t1 / t2)``."""
    q = t1 / t2
    q *= value
    param += q
