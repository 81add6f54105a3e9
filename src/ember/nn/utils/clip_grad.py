"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_`` (torch.nn.utils)."""

from __future__ import annotations

import types

import numpy as np

from ..._overrides import warn as _warn
from ..._tensor import Tensor

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "get_total_norm",
    "clip_grads_with_norm_",
]


def _as_list(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _vector_norm(a: np.ndarray, p: float) -> np.ndarray:
    x = np.abs(a.reshape(-1))
    if p == np.inf:
        return x.max() if x.size else np.zeros((), a.dtype)
    if p == -np.inf:
        return x.min() if x.size else np.asarray(np.inf, a.dtype)
    if p == 0:
        return np.asarray(np.count_nonzero(x), dtype=a.dtype)
    if p == 1:
        return x.sum()
    if p == 2:
        return np.sqrt(np.dot(x, x))
    return np.sum(x**p) ** (1.0 / p)


def get_total_norm(
    tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None
) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (as if concatenated).

    Example:
        >>> import ember
        >>> from ember.nn.utils import get_total_norm
        >>> get_total_norm([ember.tensor([3.0]), ember.tensor([4.0])])
        tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._wrap(np.asarray(0.0, dtype=np.float32))
    dt = np.result_type(*[t._data.dtype for t in tensors])
    norms = np.array([_vector_norm(t._data, norm_type) for t in tensors], dtype=dt)
    total = np.asarray(_vector_norm(norms, norm_type), dtype=dt)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return Tensor._wrap(total)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``.

    ``total_norm`` is typically what :func:`get_total_norm` returned for these gradients.

    Example:
        >>> import ember
        >>> from ember.nn.utils import clip_grads_with_norm_
        >>> w = ember.zeros(2, requires_grad=True)
        >>> w.grad = ember.tensor([3.0, 4.0])
        >>> clip_grads_with_norm_([w], max_norm=1.0, total_norm=ember.tensor(5.0))
        >>> w.grad
        tensor([0.6000, 0.8000])
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    tn = total_norm._data
    coef = np.minimum(np.asarray(float(max_norm), tn.dtype) / (tn + tn.dtype.type(1e-6)), 1.0)
    for g in grads:
        g._data *= coef.astype(g._data.dtype)
        g._bump()


def clip_grad_norm_(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Rescale the gradients in place so their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm before clipping.

    Example:
        >>> import ember
        >>> from ember.nn.utils import clip_grad_norm_
        >>> w = ember.zeros(2, requires_grad=True)
        >>> w.grad = ember.tensor([3.0, 4.0])
        >>> clip_grad_norm_([w], max_norm=1.0)
        tensor(5.)
        >>> w.grad
        tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            _warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=2,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient in place to ``[-clip_value, clip_value]``.

    Example:
        >>> import ember
        >>> from ember.nn.utils import clip_grad_value_
        >>> w = ember.zeros(2, requires_grad=True)
        >>> w.grad = ember.tensor([-3.0, 0.5])
        >>> clip_grad_value_([w], 1.0)
        >>> w.grad
        tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p.grad
        if g is not None:
            np.clip(g._data, -clip_value, clip_value, out=g._data)
            g._bump()


def clip_grad_norm(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_`` (torch's ``FutureWarning``).

    Example:
        >>> import ember, warnings
        >>> from ember.nn.utils import clip_grad_norm
        >>> w = ember.zeros(2, requires_grad=True)
        >>> w.grad = ember.tensor([3.0, 4.0])
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     clip_grad_norm([w], max_norm=1.0)
        tensor(5.)
        >>> caught[0].category.__name__, w.grad
        ('FutureWarning', tensor([0.6000, 0.8000]))
    """
    _warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
