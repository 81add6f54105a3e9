"""``torch.distributed.optim.optimizer``: ``DistributedOptimizer``, torch's optimizer over
remote parameters (``RRef`` s) stepped through RPC. ember has no ``torch.distributed.rpc``
(its distributed package is collectives over MPI), so RPC is never initialized and building
one raises torch's error for that case.

Example:
    >>> from ember.distributed.optim import DistributedOptimizer
    >>> try:
    ...     DistributedOptimizer(None, [])
    ... except RuntimeError as e:
    ...     print(str(e).splitlines()[0])
    RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DistributedOptimizer"]

_NO_RPC = (
    "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.\n"
    "(ember has no torch.distributed.rpc: DistributedOptimizer, which steps optimizers on "
    "remote workers through RPC, cannot run; ember.distributed offers collectives over MPI, "
    "with DistributedDataParallel and ZeroRedundancyOptimizer.)"
)


class DistributedOptimizer:
    """torch's ``DistributedOptimizer(optimizer_class, params_rref, *args, **kwargs)``: an
    optimizer over parameters living on RPC workers (given as ``RRef`` s), stepped with
    ``step(context_id)`` after ``torch.distributed.autograd.backward``. It needs RPC, which
    ember does not have: building one raises ``RuntimeError`` as torch does before
    ``init_rpc``.

    Example:
        >>> import ember
        >>> from ember.distributed.optim import DistributedOptimizer
        >>> try:
        ...     DistributedOptimizer(ember.optim.SGD, [], lr=0.05)
        ... except RuntimeError as e:
        ...     print(str(e).splitlines()[0])
        RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.
    """

    def __init__(self, optimizer_class: Any, params_rref: Any, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(_NO_RPC)

    def step(self, context_id: int) -> None:
        """Step every remote optimizer with the gradients of ``context_id`` (needs RPC)."""
        raise RuntimeError(_NO_RPC)
