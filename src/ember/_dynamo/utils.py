"""``torch._dynamo.utils``: what libraries ask about compilation support. ``torch.compile``
(``ember.compile``) compiles CPU code; no other device exists in ember.

Example:
    >>> from ember._dynamo.utils import is_compile_supported
    >>> is_compile_supported("cpu"), is_compile_supported("cuda")
    (True, False)
"""

from __future__ import annotations

__all__ = ["is_compile_supported"]


def is_compile_supported(device_type) -> bool:
    """Whether ``torch.compile`` can compile code for ``device_type``: the CPU only (torch
    also needs Triton for GPUs, which a CPU build lacks).

    Example:
        >>> from ember._dynamo.utils import is_compile_supported
        >>> is_compile_supported("cpu")
        True
    """
    from .._tensor import device  # deferred: only when a library asks

    return device(device_type).type == "cpu"
