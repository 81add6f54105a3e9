"""``torch.distributed.tensor``: ``DTensor``, its placements (``Shard``, ``Replicate``,
``Partial``) and the functions that lay tensors on a ``DeviceMesh``.

Libraries import these at import time and test ``isinstance(x, DTensor)``; the placements
are complete values, and making a DTensor needs a mesh (see ``_api``).

Example:
    >>> import ember
    >>> from ember.distributed.tensor import DTensor, Shard
    >>> isinstance(ember.ones(2), DTensor), Shard(0)
    (False, Shard(dim=0))
"""

from ..device_mesh import DeviceMesh, init_device_mesh
from ._api import (
    DTensor,
    distribute_module,
    distribute_tensor,
    empty,
    full,
    ones,
    rand,
    randn,
    zeros,
)
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard

__all__ = [
    "DTensor",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_module",
    "distribute_tensor",
    "empty",
    "full",
    "ones",
    "rand",
    "randn",
    "zeros",
]
