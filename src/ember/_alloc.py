"""torch's errors for tensors that cannot be allocated.

NumPy refuses a size it cannot allocate with MemoryError ("Unable to allocate 3.64 TiB
...") or ValueError ("array is too big"); torch raises RuntimeError, with the byte count,
and code written for torch catches that. Callers allocate first and come here only when
NumPy refused, so ordinary allocations pay nothing.
"""

from __future__ import annotations

import os

import numpy as np

_INT64_MAX = 2**63 - 1
_UINT64_LIMIT = 2**64

# torch 2.x's CPU allocator message (c10/core/impl/alloc_cpu.cpp), errno 12 = ENOMEM
_CANT_ALLOCATE = (
    "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
    "memory: you tried to allocate {} bytes. Error code 12 (Cannot allocate memory)"
)


def alloc_error(shape, dtype, exc: BaseException) -> RuntimeError | None:
    """torch's error for a tensor of ``shape`` and ``dtype`` that NumPy refused with
    ``exc``, or None when the size is not why (the caller then re-raises ``exc``).

    The byte count is the tensor's (``dtype``), not that of a float64 array a factory
    samples into before casting, so the message is torch's.

    Example:
        >>> import numpy as np
        >>> from ember._alloc import alloc_error
        >>> str(alloc_error((2**62,), np.float32, ValueError("array is too big")))
        'Storage size calculation overflowed with sizes=[4611686018427387904]'
    """
    shape = [int(s) for s in shape]
    # torch's computeStorageNbytesContiguous: an unsigned 64-bit product of the sizes
    # whose overflow sticks (a later 0 does not clear it), times the item size, <= int64
    numel = 1
    for s in shape:
        numel *= s
        if numel >= _UINT64_LIMIT:
            return RuntimeError(f"Storage size calculation overflowed with sizes={shape}")
    nbytes = numel * np.dtype(dtype).itemsize
    if nbytes > _INT64_MAX:
        return RuntimeError(f"Storage size calculation overflowed with sizes={shape}")
    # then the contiguous strides (what overflows in an empty (0, 2**40, 2**40))
    stride = 1
    for s in reversed(shape[1:]):
        stride *= max(s, 1)
        if stride > _INT64_MAX:
            return RuntimeError("Stride calculation overflowed")
    # NumPy's ValueError is about a size only where torch's malloc would fail too: past the
    # machine's memory (Linux's default overcommit refuses more than RAM + swap at once)
    if isinstance(exc, MemoryError) or nbytes > _physical_memory():
        return RuntimeError(_CANT_ALLOCATE.format(nbytes))
    return None


def raise_alloc_error(shape, dtype, exc: BaseException):
    """Raise torch's error for ``exc`` (from allocating ``shape`` of ``dtype``), or ``exc``."""
    err = alloc_error(shape, dtype, exc)
    if err is None:
        raise exc
    raise err from None


def from_numpy_error(exc: MemoryError) -> RuntimeError:
    """torch's error for a MemoryError NumPy raised while an op allocated its result (its
    ``_ArrayMemoryError`` carries the shape and dtype it asked for)."""
    shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
    if shape is None or dtype is None:
        return RuntimeError(str(exc))
    return alloc_error(shape, dtype, exc) or RuntimeError(str(exc))


_memory: list = []


def _physical_memory() -> int:
    if not _memory:
        try:
            _memory.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):  # no sysconf: assume a large machine
            _memory.append(2**50)
    return _memory[0]
