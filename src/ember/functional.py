"""``torch.functional``: the functions torch defines in Python, as ember has them.

Example:
    >>> import ember
    >>> ember.functional.broadcast_shapes((2, 1), (3,))
    torch.Size([2, 3])
"""

from __future__ import annotations

# The package root's own objects (torch.functional.einsum is torch.einsum): the public,
# dispatching functions, which only the root holds (it wraps its namespace when complete,
# before this module is imported); the one import of the root tests/test_structure.py allows
# here, until the wrapped namespace has a module of its own below the root.
from . import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_shapes,
    broadcast_tensors,
    einsum,
    meshgrid,
    norm,
    split,
    tensordot,
    unique,
)

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "broadcast_tensors",
    "einsum",
    "meshgrid",
    "norm",
    "split",
    "tensordot",
    "unique",
]
