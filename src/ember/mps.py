"""``torch.mps``: Apple's Metal backend, which a NumPy build does not have. ``is_available()``
is False and the calls that need the device raise torch's errors, as in torch's builds
without MPS.

Example:
    >>> import ember
    >>> ember.mps.is_available(), ember.mps.device_count()
    (False, 0)
"""

from __future__ import annotations

__all__ = [
    "current_allocated_memory",
    "device_count",
    "driver_allocated_memory",
    "empty_cache",
    "is_available",
    "manual_seed",
    "seed",
    "set_per_process_memory_fraction",
    "synchronize",
]


def _no_backend(what: str):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def synchronize() -> None:
    raise _no_backend("deviceSynchronize")


def empty_cache() -> None:
    raise _no_backend("emptyCache")


def current_allocated_memory() -> int:
    raise _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    raise _no_backend("getDriverAllocatedMemory")


def set_per_process_memory_fraction(fraction: float) -> None:
    raise _no_backend("setMemoryFraction")


def manual_seed(seed: int) -> None:
    """Nothing to seed without the device (torch's builds without MPS do the same)."""


def seed() -> None:
    """Nothing to seed without the device."""
