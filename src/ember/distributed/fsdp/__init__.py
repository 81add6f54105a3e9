"""``torch.distributed.fsdp``: fully sharded data parallelism. ember runs on the CPU only,
and torch's CPU build refuses FSDP without an accelerator; the policy classes are values.

Example:
    >>> from ember.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy
    >>> CPUOffloadPolicy(), MixedPrecisionPolicy().cast_forward_inputs
    (CPUOffloadPolicy(pin_memory=True), True)
"""

from ._fully_shard import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard
from .fully_sharded_data_parallel import FullyShardedDataParallel, ShardingStrategy, StateDictType

__all__ = [
    "CPUOffloadPolicy",
    "FullyShardedDataParallel",
    "MixedPrecisionPolicy",
    "OffloadPolicy",
    "ShardingStrategy",
    "StateDictType",
    "fully_shard",
]
