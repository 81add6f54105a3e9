"""The Tensor methods that belong to autograd (hooks, retain_grad, backward), attached to
``Tensor`` when ``ember.autograd`` is imported, as the op families attach theirs."""

from __future__ import annotations

import weakref
from collections import OrderedDict

from .._hooks import RemovableHandle, add_hook
from .._tensor import Tensor
from . import api


def retain_grad(self) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> y = x * 3
        >>> y.retain_grad()
        >>> y.sum().backward()
        >>> y.grad
        tensor([1., 1.])
    """
    if not self._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:
        return
    aux = self._aux_()
    if aux.retains_grad:
        return
    aux.retains_grad = True
    self.grad_fn._hook_table().retain[self._output_nr] = weakref.ref(self)


def register_hook(self, hook) -> RemovableHandle:
    """Register ``hook(grad) -> Tensor | None`` called with this tensor's gradient.

    A returned tensor replaces the gradient. Returns a handle with ``remove()``.

    Example:
        >>> import ember
        >>> x = ember.ones(3, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> x.sum().backward()
        >>> x.grad
        tensor([2., 2., 2.])
    """
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        return self.grad_fn._register_tensor_hook(self._output_nr, hook)
    aux = self._aux_()
    if aux.hooks is None:
        aux.hooks = OrderedDict()
    return add_hook(aux.hooks, hook)


def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
    """Register ``hook(tensor)`` run after the gradient was accumulated into a leaf.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> seen = []
        >>> h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum().item()))
        >>> (x * 2).sum().backward()
        >>> seen
        [4.0]
    """
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    aux = self._aux_()
    if aux.post_accumulate_hooks is None:
        aux.post_accumulate_hooks = OrderedDict()
    return add_hook(aux.post_accumulate_hooks, hook)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Compute the gradient of this tensor w.r.t. graph leaves, accumulating into ``.grad``.

    Example:
        >>> import ember
        >>> x = ember.tensor([2.0, 3.0], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([4., 6.])
    """
    api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


for _fn in (retain_grad, register_hook, register_post_accumulate_grad_hook, backward):
    setattr(Tensor, _fn.__name__, _fn)
