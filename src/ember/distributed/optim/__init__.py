"""``torch.distributed.optim``: optimizers for distributed training.

``ZeroRedundancyOptimizer`` shards an optimizer's state over the ranks of a process group
(each rank updates its share of the parameters, then broadcasts it);
``PostLocalSGDOptimizer`` steps a local optimizer and averages the parameters with a model
averager; ``_apply_optimizer_in_backward`` steps per-parameter optimizers during backward.
``DistributedOptimizer`` needs ``torch.distributed.rpc``, which ember does not have: it
raises torch's error for uninitialized RPC.

Example:
    >>> import ember, ember.distributed as dist
    >>> from ember.distributed.optim import ZeroRedundancyOptimizer
    >>> dist.init_process_group("mpi")  # alone: a group of one process
    >>> model = ember.nn.Linear(3, 2)
    >>> opt = ZeroRedundancyOptimizer(model.parameters(), ember.optim.SGD, lr=0.1)
    >>> [len(g["params"]) for g in opt.param_groups]
    [2]
    >>> dist.destroy_process_group()
"""

from .apply_optimizer_in_backward import _apply_optimizer_in_backward, _get_in_backward_optimizers
from .optimizer import DistributedOptimizer
from .post_localSGD_optimizer import PostLocalSGDOptimizer
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = [
    "DistributedOptimizer",
    "PostLocalSGDOptimizer",
    "ZeroRedundancyOptimizer",
]
