"""``torch._custom_ops``: torch's older custom-op API, of which libraries still use
``get_ctx`` inside shape functions. ember has no fake tensors, so no shape function runs
under a fake-tensor context.

Example:
    >>> import ember._custom_ops
    >>> ember._custom_ops.get_ctx() is None
    True
"""

from __future__ import annotations

__all__ = ["get_ctx"]


def get_ctx():
    """The context of the fake-tensor shape function being run: None outside one, as in
    torch (ember never runs shape functions on fake tensors).

    Example:
        >>> from ember._custom_ops import get_ctx
        >>> get_ctx() is None
        True
    """
    return None
