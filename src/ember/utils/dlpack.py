"""``torch.utils.dlpack``: exchange tensors with other libraries without copying.

Example:
    >>> import numpy as np, ember
    >>> from ember.utils.dlpack import from_dlpack
    >>> from_dlpack(np.arange(3.0))
    tensor([0., 1., 2.], dtype=torch.float64)
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with ``ext_tensor`` (any object with ``__dlpack__``, or a
    DLPack capsule-producing object on the CPU)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    return Tensor._wrap(np.from_dlpack(ext_tensor))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor``'s memory (shared, not copied)."""
    return tensor._data.__dlpack__()
