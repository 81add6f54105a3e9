"""``torch.distributed.optim.apply_optimizer_in_backward``: run an optimizer on each parameter
as soon as its gradient is accumulated during ``backward()`` (the gradient is then freed),
instead of in a separate ``step()``.

Example:
    >>> import ember
    >>> from ember.distributed.optim import _apply_optimizer_in_backward
    >>> w = ember.nn.Parameter(ember.ones(2))
    >>> _apply_optimizer_in_backward(ember.optim.SGD, [w], {"lr": 0.5})
    >>> (w * 2).sum().backward()
    >>> w, w.grad
    (Parameter containing:
    tensor([0., 0.], requires_grad=True), None)
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from ..._tensor import Tensor
from ...optim.optimizer import Optimizer

__all__: list[str] = []


class _TensorKeyMap:
    """A map keyed by tensor identity that does not keep its keys alive (torch's
    ``WeakTensorKeyDictionary``, as far as this module uses it)."""

    def __init__(self) -> None:
        self._data: dict[int, tuple[weakref.ref, Any]] = {}

    def _drop(self, key: int) -> None:
        self._data.pop(key, None)

    def __contains__(self, tensor: Tensor) -> bool:
        entry = self._data.get(id(tensor))
        return entry is not None and entry[0]() is tensor

    def __getitem__(self, tensor: Tensor) -> Any:
        if tensor not in self:
            raise KeyError(tensor)
        return self._data[id(tensor)][1]

    def __setitem__(self, tensor: Tensor, value: Any) -> None:
        key = id(tensor)
        self._data[key] = (weakref.ref(tensor, lambda _, key=key: self._drop(key)), value)

    def __len__(self) -> int:
        return len(self._data)


param_to_optim_hook_handle_map = _TensorKeyMap()


def _apply_optimizer_in_backward(
    optimizer_class: type[Optimizer],
    params: Iterable[Tensor],
    optimizer_kwargs: dict[str, Any],
    register_hook: bool = True,
) -> None:
    """Give each of ``params`` its own ``optimizer_class([param], **optimizer_kwargs)``,
    stepped during ``backward()`` right after the parameter's gradient is accumulated, after
    which ``param.grad`` is set to None. The optimizers are listed in
    ``param._in_backward_optimizers`` (several calls add several). ``register_hook=False``
    only creates them (for code that steps them itself).

    Example:
        >>> import ember
        >>> from ember.distributed.optim import _apply_optimizer_in_backward
        >>> w = ember.nn.Parameter(ember.ones(1))
        >>> _apply_optimizer_in_backward(ember.optim.SGD, [w], {"lr": 0.1})
        >>> (3 * w).sum().backward()
        >>> round(w.item(), 4), len(w._in_backward_optimizers)
        (0.7, 1)
    """

    def apply_to_param(param: Tensor) -> None:
        optimizer = optimizer_class([param], **optimizer_kwargs)
        if not hasattr(param, "_in_backward_optimizers"):
            param._in_backward_optimizers = []
            param._optimizer_classes = []
            param._optimizer_kwargs = []
        param._in_backward_optimizers.append(optimizer)
        param._optimizer_classes.append(optimizer_class)
        param._optimizer_kwargs.append(optimizer_kwargs)
        if not register_hook:
            return

        def optimizer_hook(*_unused) -> None:
            for opt in param._in_backward_optimizers:
                opt.step()
            param.grad = None

        # torch hooks the parameter's AccumulateGrad node: the same moment as this hook
        handle = param.register_post_accumulate_grad_hook(optimizer_hook)
        if param not in param_to_optim_hook_handle_map:
            param_to_optim_hook_handle_map[param] = []
        param_to_optim_hook_handle_map[param].append(handle)

    for param in params:
        apply_to_param(param)


def _get_in_backward_optimizers(module: Any) -> list[Optimizer]:
    """The optimizers ``_apply_optimizer_in_backward`` gave ``module``'s parameters (for
    checkpointing; they are not meant to be stepped by hand).

    Example:
        >>> import ember
        >>> from ember.distributed.optim import (
        ...     _apply_optimizer_in_backward, _get_in_backward_optimizers)
        >>> model = ember.nn.Linear(2, 1)
        >>> _apply_optimizer_in_backward(ember.optim.SGD, model.parameters(), {"lr": 0.1})
        >>> len(_get_in_backward_optimizers(model))
        2
    """
    optims: list[Optimizer] = []
    for param in module.parameters():
        optims.extend(getattr(param, "_in_backward_optimizers", []))
    return optims
