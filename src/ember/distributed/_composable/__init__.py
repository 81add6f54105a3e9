"""``torch.distributed._composable``: composable parallelism APIs (``fsdp.fully_shard``)."""
