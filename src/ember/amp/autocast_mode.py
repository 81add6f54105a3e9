"""``torch.amp.autocast``: mixed-precision regions.

ember has no bfloat16 yet (the mixed-precision issue decides it), so an enabled CPU region
runs every op in full precision and says so once per process; CUDA regions are disabled
with torch's warning, as on a CPU-only torch build. The state (enabled, dtype per device)
is kept per thread and nests like torch's, so ``is_autocast_enabled``/``get_autocast_dtype``
answer inside a region as torch does.

Example:
    >>> import ember
    >>> with ember.autocast("cpu", enabled=False):
    ...     ember.is_autocast_enabled("cpu")
    False
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype
from .._tensor import device as _device

__all__ = [
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]

# Device types torch 2.13 accepts for autocast (torch._C._is_autocast_available).
_AUTOCAST_DEVICES = frozenset(
    ("cpu", "cuda", "xpu", "hpu", "mps", "mtia", "xla", "ipu", "maia", "privateuseone")
)
_FULL_PRECISION_NOTE = (
    "ember autocast: bfloat16/float16 autocast is not implemented yet; the region runs in "
    "full precision (results are those of the same code without autocast)."
)


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled: dict = {}
        # torch's defaults are bfloat16 on the CPU, float16 elsewhere; ember has no bfloat16
        # and computes regions in full precision, so the CPU default names that precision.
        self.dtype: dict = {"cpu": _dtype.float32}
        self.cache_enabled = True
        self.noted = False


_state = _State()


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast accepts ``device_type`` (as torch answers it).

    Example:
        >>> import ember
        >>> ember.amp.is_autocast_available("cpu"), ember.amp.is_autocast_available("meta")
        (True, False)
    """
    return device_type in _AUTOCAST_DEVICES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast region is active for ``device_type`` (default: cuda)."""
    return _state.enabled.get(device_type or "cuda", False)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    _state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type: str):
    """The dtype an autocast region on ``device_type`` uses when none is given."""
    return _state.dtype.get(device_type, _dtype.float16)


def set_autocast_dtype(device_type: str, dtype) -> None:
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    Usable as a context manager and as a decorator. Regions compute in full precision (see
    the module docstring); the arguments are checked as torch checks them.

    Example:
        >>> import ember
        >>> with ember.autocast("cpu", enabled=False):
        ...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
        torch.float32
    """

    def __init__(
        self,
        device_type: str,
        dtype=None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            _device(device_type)  # torch's error for a string that is no device at all
            if dtype is None:  # torch looks up the device's default dtype first
                raise RuntimeError("unsupported scalarType")
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        if enabled:
            if device_type == "cuda":
                warnings.warn(
                    "CUDA is not available or torch_xla is imported. Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif device_type != "cpu":
                warnings.warn(
                    f"{device_type.upper()} is not available to ember, which computes on the "
                    "CPU. Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif dtype is not None and dtype not in (_dtype.float16, _dtype.float32):
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling "
                    "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                    "torch.float16 currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self._enabled and not _state.noted:
            _state.noted = True
            warnings.warn(_FULL_PRECISION_NOTE, UserWarning, stacklevel=2)
        self._prev = (
            is_autocast_enabled(self.device),
            get_autocast_dtype(self.device),
            is_autocast_cache_enabled(),
        )
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> bool:
        enabled, dtype, cache = self._prev
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dtype)
        set_autocast_cache_enabled(cache)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom ``Function.forward`` under autocast (runs it unchanged:
    regions compute in full precision)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom ``Function.backward`` under autocast (runs it unchanged)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
