"""``torch.accelerator``: no accelerator on a CPU-only build.

Example:
    >>> import ember
    >>> ember.accelerator.is_available(), ember.accelerator.current_accelerator()
    (False, None)
"""

from __future__ import annotations

from . import memory
from .memory import (  # noqa: F401  (torch.accelerator re-exports the memory probes)
    _NONE,
    empty_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    raise RuntimeError(_NONE)


current_device_idx = current_device_index


def set_device_index(device) -> None:
    raise RuntimeError(_NONE)


set_device_idx = set_device_index


def synchronize(device=None) -> None:
    raise RuntimeError(_NONE)


def current_stream(device=None):
    raise RuntimeError(_NONE)


def set_stream(stream) -> None:
    raise RuntimeError(_NONE)
