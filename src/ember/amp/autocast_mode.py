"""``torch.amp.autocast``: mixed-precision regions.

An enabled CPU region (``dtype`` bfloat16, torch's CPU default, or float16) runs the ops of
torch's CPU "lower precision" list (mm, bmm, matmul, addmm, baddbmm, addbmm, linear,
conv1d/2d/3d, conv_transpose1d/2d/3d, prelu, scaled_dot_product_attention) in that dtype and
the losses of its "fp32" list in float32: those ops call :func:`lower` / :func:`full` on their
tensor arguments, which cast floating tensors other than float64 (as torch's autocast does;
the casts are recorded, so gradients flow back in the parameters' own dtype). Every other op
runs on the dtypes it is given. CUDA regions are disabled with torch's warning, as on a
CPU-only torch build. The state (enabled, dtype per device) is kept per thread and nests like
torch's.

Example:
    >>> import ember
    >>> with ember.autocast("cpu"):
    ...     (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
    torch.bfloat16
"""

from __future__ import annotations

import functools

from .. import _dtype, _mode
from .._overrides import warn as _warn
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
_state = _mode.autocast
ACTIVE = _mode.autocast_active
lower = _mode.autocast_lower
full = _mode.autocast_full


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast accepts ``device_type`` (as torch answers it).

    Example:
        >>> import ember
        >>> ember.amp.is_autocast_available("cpu"), ember.amp.is_autocast_available("meta")
        (True, False)
    """
    return device_type in _AUTOCAST_DEVICES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an enabled autocast region is active for ``device_type`` (default: cuda).

    Example:
        >>> import ember
        >>> with ember.autocast("cpu"):
        ...     ember.is_autocast_enabled("cpu")
        True
    """
    return _state.enabled.get(device_type or "cuda", False)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Set the autocast-enabled flag of ``device_type`` (what ``autocast`` sets on entry).

    Example:
        >>> import ember
        >>> ember.set_autocast_enabled("cpu", True)
        >>> ember.is_autocast_enabled("cpu")
        True
        >>> ember.set_autocast_enabled("cpu", False)  # restore the default
    """
    _state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type: str):
    """The dtype an autocast region on ``device_type`` uses when none is given.

    Example:
        >>> import ember
        >>> ember.get_autocast_dtype("cpu")
        torch.bfloat16
    """
    return _mode.autocast_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast uses on ``device_type`` (what ``autocast(dtype=...)`` sets).

    Example:
        >>> import ember
        >>> ember.set_autocast_dtype("cpu", ember.float16)
        >>> ember.get_autocast_dtype("cpu")
        torch.float16
        >>> ember.set_autocast_dtype("cpu", ember.bfloat16)  # restore the default
    """
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    """Autocast's cast-cache flag (on by default; torch caches weight casts, ember only
    keeps the flag, which ``autocast`` saves and restores).

    Example:
        >>> import ember
        >>> ember.is_autocast_cache_enabled()
        True
    """
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Set autocast's cast-cache flag (what ``autocast(cache_enabled=...)`` sets on entry).

    Example:
        >>> import ember
        >>> ember.set_autocast_cache_enabled(False)
        >>> ember.is_autocast_cache_enabled()
        False
        >>> ember.set_autocast_cache_enabled(True)  # restore the default
    """
    _state.cache_enabled = bool(enabled)


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    Usable as a context manager and as a decorator. CPU regions cast the inputs of the ops of
    torch's CPU lists (see the module docstring); the arguments are checked as torch checks
    them.

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
                _warn(
                    "CUDA is not available or torch_xla is imported. Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif device_type != "cpu":
                _warn(
                    f"{device_type.upper()} is not available to ember, which computes on the "
                    "CPU. Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif self.fast_dtype not in (_dtype.float16, _dtype._bfloat16()):
                _warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling "
                    "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                    "torch.float16 currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self._prev = (
            is_autocast_enabled(self.device),
            get_autocast_dtype(self.device),
            is_autocast_cache_enabled(),
        )
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        set_autocast_cache_enabled(self._cache_enabled)
        if self.device == "cpu":
            ACTIVE[0] += 1
        return self

    def __exit__(self, *exc) -> bool:
        enabled, dtype, cache = self._prev
        set_autocast_enabled(self.device, enabled)
        set_autocast_dtype(self.device, dtype)
        set_autocast_cache_enabled(cache)
        if self.device == "cpu":
            ACTIVE[0] -= 1
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorated


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom ``Function.forward``: with ``cast_inputs`` and autocast enabled
    on ``device_type``, floating tensor arguments are cast to ``cast_inputs`` and the forward
    runs with autocast disabled (torch's rule); otherwise it runs unchanged.

    Example:
        >>> import ember
        >>> class Double(ember.autograd.Function):
        ...     @staticmethod
        ...     @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        ...     def forward(ctx, x):
        ...         return x * 2
        >>> with ember.autocast("cpu"):
        ...     Double.apply(ember.ones(2, dtype=ember.bfloat16)).dtype
        torch.float32
    """
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    if cast_inputs is None:
        return fwd

    @functools.wraps(fwd)
    def decorated(*args, **kwargs):
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        np_dtype = cast_inputs.np
        args = _mode._autocast_cast(args, np_dtype)
        kwargs = dict(zip(kwargs, _mode._autocast_cast(tuple(kwargs.values()), np_dtype)))
        with autocast(device_type, enabled=False):
            return fwd(*args, **kwargs)

    return decorated


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """Decorator for a custom ``Function.backward`` under autocast (runs it unchanged).

    Example:
        >>> import ember
        >>> class Double(ember.autograd.Function):
        ...     @staticmethod
        ...     @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        ...     def forward(ctx, x):
        ...         return x * 2
        ...     @staticmethod
        ...     @ember.amp.custom_bwd(device_type="cpu")
        ...     def backward(ctx, grad):
        ...         return grad * 2
        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.autocast("cpu"):
        ...     Double.apply(x).sum().backward()
        >>> x.grad
        tensor([2., 2.])
    """
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
