"""``torch.types``: the type aliases torch's signatures use.

Example:
    >>> import ember.types
    >>> isinstance(3, ember.types.Number)
    True
"""

from __future__ import annotations

import os
from typing import IO

from ._dtype import dtype as _dtype
from ._tensor import Size, Tensor
from ._tensor import device as _device

__all__ = ["Device", "FileLike", "Number", "Size", "Tensor"]

_int = int
_float = float
_bool = bool
_complex = complex
_str = str
_size = Size | list | tuple
_TensorOrTensors = Tensor | tuple
Number = int | float | bool
_Number = (int, float, bool)
Device = _device | str | int | None
FileLike = str | os.PathLike | IO[bytes]
dtype = _dtype
