"""``torch.cpu``: the one device ember computes on.

Example:
    >>> import ember
    >>> ember.cpu.is_available(), ember.cpu.device_count()
    (True, 1)
"""

from __future__ import annotations

from . import amp  # noqa: F401  (torch.cpu.amp)


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU work is synchronous."""


def set_device(device) -> None:
    """Accepted and ignored, as in torch."""
