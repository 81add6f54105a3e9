"""``torch.backends.cudnn``: settable flags, as torch has them; cuDNN is never available.

Example:
    >>> import ember
    >>> ember.backends.cudnn.is_available(), ember.backends.cudnn.version()
    (False, None)
"""

from __future__ import annotations

import sys

from ._flags import set_flags

# torch's defaults on a CPU build; setting them changes nothing ember computes.
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    return None


def is_acceptable(tensor) -> bool:
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the flags for a ``with`` block (torch's ``cudnn.flags``)."""
    return set_flags(
        sys.modules[__name__],
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
