"""``torch.distributed._composable.fsdp``: the old home of FSDP2's ``fully_shard``."""

from ...fsdp._fully_shard import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

__all__ = ["CPUOffloadPolicy", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard"]
