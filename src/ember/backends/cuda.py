"""``torch.backends.cuda`` as a CPU-only torch build answers it: CUDA is not built, its
flags keep torch's defaults and can be set (they change nothing ember computes), and the
attention-kernel switches are accepted.

Example:
    >>> import ember
    >>> ember.backends.cuda.is_built(), ember.backends.cuda.matmul.allow_tf32
    (False, False)
"""

from __future__ import annotations

import contextlib

from .._overrides import warn as _warn
from ..nn.attention import SDPBackend  # noqa: F401  (torch.backends.cuda.SDPBackend)

__all__ = [
    "SDPBackend",
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "preferred_linalg_library",
    "sdp_kernel",
]


def is_built() -> bool:
    """False: this is not a CUDA build."""
    return False


class cuBLASModule:
    """``torch.backends.cuda.matmul``: cuBLAS precision flags, with torch's defaults."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.allow_fp16_accumulation = False


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
):
    """Deprecated switch of attention kernels for a ``with`` block (ember has one kernel)."""
    _warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    old = dict(_sdp)
    _sdp.update(
        flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn
    )
    try:
        yield {}
    finally:
        _sdp.update(old)


_linalg_library = "default"


def preferred_linalg_library(backend=None):
    """Accepted and remembered; ember's linear algebra always runs on NumPy's LAPACK."""
    global _linalg_library
    if backend is not None:
        _linalg_library = backend if isinstance(backend, str) else str(backend)
    return _linalg_library
