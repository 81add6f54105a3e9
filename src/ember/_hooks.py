"""Handles of registered hooks (``torch.utils.hooks.RemovableHandle``)."""

from __future__ import annotations

import itertools

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> h.remove()
        >>> (x * 1).sum().backward()
        >>> x.grad
        tensor([1., 1.])
    """

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self.id = next(_handle_ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_hook(table: dict, value) -> RemovableHandle:
    """Store ``value`` in ``table`` under a fresh handle's id and return the handle."""
    handle = RemovableHandle(table)
    table[handle.id] = value
    return handle
