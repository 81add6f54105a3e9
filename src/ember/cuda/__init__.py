"""``torch.cuda`` as a CPU-only build of torch answers it: nothing is available.

Probes answer as that build does (``is_available()`` is False, memory statistics are 0,
seeding is a no-op); what needs a device raises torch's ``AssertionError: Torch not
compiled with CUDA enabled``.

Example:
    >>> import ember
    >>> ember.cuda.is_available(), ember.cuda.device_count(), ember.cuda.max_memory_allocated()
    (False, 0, 0)
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict

from .._overrides import warn as _warn
from . import amp  # noqa: F401  (torch.cuda.amp)
from . import graphs  # noqa: F401  (torch.cuda.graphs)
from .graphs import (  # noqa: F401  (torch.cuda's names for them)
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)

_NO_CUDA = "Torch not compiled with CUDA enabled"


def _lazy_init() -> None:
    raise AssertionError(_NO_CUDA)


def is_available() -> bool:
    """False: ember computes on the CPU."""
    return False


def is_initialized() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def get_arch_list() -> list:
    return []


def init() -> None:
    _lazy_init()


def current_device() -> int:
    _lazy_init()


def get_device_name(device=None) -> str:
    _lazy_init()


def get_device_capability(device=None):
    _lazy_init()


def get_device_properties(device=None):
    _lazy_init()


def _missing_binding(name: str):
    # A CPU build of torch lacks the C binding these call: its error names the binding.
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def set_device(device) -> None:
    raise _missing_binding("_cuda_setDevice")


def synchronize(device=None) -> None:
    _lazy_init()


def current_stream(device=None):
    _lazy_init()


def default_stream(device=None):
    _lazy_init()


def mem_get_info(device=None):
    _lazy_init()


def get_rng_state(device="cuda"):
    _lazy_init()


def set_rng_state(new_state, device="cuda") -> None:
    _lazy_init()


def get_rng_state_all() -> list:
    """Every CUDA device's generator state: an empty list, there being no CUDA device.

    Example:
        >>> import ember
        >>> ember.cuda.get_rng_state_all()
        []
    """
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Set each CUDA device's generator state from ``new_states`` (one per device; an
    empty list without CUDA).

    Example:
        >>> import ember
        >>> ember.cuda.set_rng_state_all([])
    """
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """A no-op without CUDA (torch seeds lazily, when a device appears)."""


def manual_seed_all(seed: int) -> None:
    """A no-op without CUDA."""


def seed() -> None:
    """A no-op without CUDA."""


def seed_all() -> None:
    """A no-op without CUDA."""


def empty_cache() -> None:
    """A no-op without CUDA."""


def _zero(device=None) -> int:
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero


def memory_cached(device=None) -> int:
    _warn(
        "`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return 0


def max_memory_cached(device=None) -> int:
    _warn(
        "`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return 0


def reset_peak_memory_stats(device=None) -> None:
    raise _missing_binding("_cuda_resetPeakMemoryStats")


def reset_max_memory_allocated(device=None) -> None:
    _warn(
        "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    raise _missing_binding("_cuda_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device=None) -> None:
    raise _missing_binding("_cuda_resetAccumulatedMemoryStats")


def memory_stats(device=None) -> OrderedDict:
    return OrderedDict()


class Event:
    """``torch.cuda.Event``: a CPU build cannot make one."""

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Tried to instantiate dummy base class Event")


class Stream:
    """``torch.cuda.Stream``: a CPU build cannot make one."""

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class device:
    """``torch.cuda.device(i)``: selecting a device is deferred until it is used."""

    def __init__(self, device) -> None:
        self.idx = device

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


class StreamContext:
    """``torch.cuda.StreamContext(s)``: selects ``s`` for its block; only ``None`` can be
    selected without CUDA (a no-op, as in torch).

    Example:
        >>> import ember
        >>> with ember.cuda.StreamContext(None):
        ...     pass
    """

    def __init__(self, stream) -> None:
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _lazy_init()
        return self.stream

    def __exit__(self, *exc) -> None:
        return None


def stream(stream) -> StreamContext:
    """``torch.cuda.stream(s)``: a ``StreamContext``; only ``None`` can be selected."""
    return StreamContext(stream)
