"""``torch._dynamo._trace_wrapped_higher_order_op``: ``TransformGetItemToIndex``, the mode
under which torch lets ``vmap`` index a tensor with a batched 0-d tensor (torch rewrites
``x[i]`` as ``aten.index`` there, which its batching rules take, where ``x[i]`` would
call ``i.item()``). ember's ``x[i]`` with a tensor index is already an indexing op that
``vmap`` batches, so the mode runs every function as it is.

Example:
    >>> import ember
    >>> from ember._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
    >>> x = ember.arange(5.0)
    >>> with TransformGetItemToIndex():
    ...     ember.vmap(lambda i: x[i])(ember.tensor([4, 0]))
    tensor([4., 0.])
"""

from __future__ import annotations

from ..overrides import TorchFunctionMode

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """A ``TorchFunctionMode`` whose functions run unchanged (see the module docstring)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
