"""``torch.cpu.amp``: the deprecated CPU names of ``torch.amp``."""

from __future__ import annotations


from ..._overrides import warn as _warn
from ...amp import GradScaler as _GradScaler
from ...amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """``torch.cpu.amp.autocast``: deprecated spelling of ``torch.amp.autocast('cpu')``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        _warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``torch.cpu.amp.GradScaler``: deprecated spelling of ``torch.amp.GradScaler('cpu')``."""

    def __init__(self, *args, **kwargs) -> None:
        _warn(
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cpu", *args, **kwargs)
