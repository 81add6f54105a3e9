"""``torch.nn.attention``: choosing the scaled-dot-product-attention kernel.

ember has one attention kernel (the math one, on NumPy): ``sdpa_kernel`` checks its
arguments as torch does and records the choice for the ``with`` block.

Example:
    >>> import ember
    >>> from ember.nn.attention import SDPBackend, sdpa_kernel
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     pass
"""

from __future__ import annotations

import contextlib

from ..._aten.nn_attention import SDPBackend, _active

__all__ = ["SDPBackend", "sdpa_kernel"]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Allow only ``backends`` (one or a list of :class:`SDPBackend`) in the ``with`` block."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    if not all(isinstance(b, SDPBackend) for b in chosen):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances"
        )
    _active.append(chosen)
    try:
        yield {}
    finally:
        _active.pop()
