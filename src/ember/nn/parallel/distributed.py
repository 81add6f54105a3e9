"""``torch.nn.parallel.DistributedDataParallel``: needs an initialized process group, which
ember cannot start yet (see ``ember.distributed``)."""

from __future__ import annotations

from ...distributed import _NO_GROUP
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Raises torch's error for a program that has not called ``init_process_group``."""

    def __init__(self, module, *args, **kwargs) -> None:
        raise ValueError(_NO_GROUP)
