"""``torch.accelerator.memory``: every probe needs an accelerator, and there is none."""

from __future__ import annotations

__all__ = [
    "empty_cache",
    "get_memory_info",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
]

_NONE = "Cannot access accelerator device when none is available."


def _no_accelerator(*args, **kwargs):
    raise RuntimeError(_NONE)


empty_cache = get_memory_info = max_memory_allocated = max_memory_reserved = _no_accelerator
memory_allocated = memory_reserved = memory_stats = _no_accelerator
reset_accumulated_memory_stats = reset_peak_memory_stats = _no_accelerator
