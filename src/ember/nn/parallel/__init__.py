"""``torch.nn.parallel``: ``DataParallel`` runs the module in this process (no GPUs, as
torch does with an empty ``device_ids``); ``DistributedDataParallel`` needs a process group.

Example:
    >>> import ember
    >>> model = ember.nn.DataParallel(ember.nn.Linear(2, 2))
    >>> sorted(model.state_dict())
    ['module.bias', 'module.weight']
"""

from __future__ import annotations

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
