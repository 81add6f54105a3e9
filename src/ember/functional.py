"""``torch.functional``: the functions torch defines in Python, as ember has them.

Example:
    >>> import ember
    >>> ember.functional.broadcast_shapes((2, 1), (3,))
    torch.Size([2, 3])
"""

from __future__ import annotations

# The torch namespace's own objects (torch.functional.einsum is torch.einsum).
from ._torch import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_shapes,
    broadcast_tensors,
    einsum,
    istft,
    meshgrid,
    norm,
    split,
    stft,
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
    "istft",
    "meshgrid",
    "norm",
    "split",
    "stft",
    "tensordot",
    "unique",
]
