"""FSDP1's ``FullyShardedDataParallel`` wrapper, its enums, and torch's CPU-build refusal."""

from __future__ import annotations

import enum

from ...nn.modules.module import Module

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "StateDictType"]


class ShardingStrategy(enum.Enum):
    """How FSDP shards parameters, gradients and optimizer state."""

    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class StateDictType(enum.Enum):
    """Which state dict an FSDP module gives: full, local or sharded.

    Example:
        >>> from ember.distributed.fsdp import StateDictType
        >>> StateDictType.FULL_STATE_DICT.name
        'FULL_STATE_DICT'
    """

    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


class FullyShardedDataParallel(Module):
    """Wrap ``module`` to shard it across processes (FSDP1). Like torch's CPU build, ember
    has no accelerator for it: building one raises torch's error.

    Example:
        >>> import ember
        >>> from ember.distributed.fsdp import FullyShardedDataParallel
        >>> try:
        ...     FullyShardedDataParallel(ember.nn.Linear(2, 2))
        ... except RuntimeError as e:
        ...     print(e)
        FSDP needs a non-CPU accelerator device, but no accelerator device is detected.
    """

    def __init__(
        self,
        module,
        process_group=None,
        sharding_strategy=None,
        cpu_offload=None,
        auto_wrap_policy=None,
        backward_prefetch=None,
        mixed_precision=None,
        ignored_modules=None,
        param_init_fn=None,
        device_id=None,
        **kwargs,
    ) -> None:
        if device_id is None:
            raise RuntimeError(
                "FSDP needs a non-CPU accelerator device, but no accelerator device is detected."
            )
        raise NotImplementedError("ember does not implement FullyShardedDataParallel")
