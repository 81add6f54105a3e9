"""``torch.onnx``: importable, so programs that import it at the top run; exporting a model
is the compiler issue's work and until then says so.

Example:
    >>> import ember
    >>> ember.onnx.is_in_onnx_export()
    False
"""

from __future__ import annotations

__all__ = ["export", "is_in_onnx_export"]


def is_in_onnx_export() -> bool:
    """False: no export is running."""
    return False


def export(model, args=(), f=None, *, kwargs=None, **options):
    """Not available yet: raises ``NotImplementedError`` (nothing is written)."""
    raise NotImplementedError(
        "ember.onnx.export is not implemented yet: ember cannot write ONNX files in this version"
    )
