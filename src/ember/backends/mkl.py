"""``torch.backends.mkl``: ember computes with NumPy (its own BLAS), not mkl."""

from __future__ import annotations

import sys

from ._flags import set_flags

enabled = True  # settable, as in torch; it changes nothing ember computes


def is_available() -> bool:
    """False: ember does not use mkl (torch's CPU build answers True for its own)."""
    return False


def flags(enabled=False):
    """Set ``enabled`` for a ``with`` block."""
    return set_flags(sys.modules[__name__], enabled=enabled)
