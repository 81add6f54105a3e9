"""``torch.onnx.errors``: the exceptions ``ember.onnx.export`` raises.

Example:
    >>> from ember.onnx.errors import UnsupportedOperatorError
    >>> str(UnsupportedOperatorError("aten::erfinv", 20, None))
    "Exporting the operator 'aten::erfinv' to ONNX opset version 20 is not supported"
"""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings from the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (a ``RuntimeError``).

    Example:
        >>> from ember.onnx import OnnxExporterError
        >>> from ember.onnx.errors import UnsupportedOperatorError
        >>> try:
        ...     raise UnsupportedOperatorError("aten::erfinv", 20, None)
        ... except OnnxExporterError as e:
        ...     print(type(e).__name__, isinstance(e, RuntimeError))
        UnsupportedOperatorError True
    """


class UnsupportedOperatorError(OnnxExporterError):
    """Raised when an operator (an ember function, tensor method or nn module) has no ONNX
    translation. The message is torch's: ``name`` is ``aten::<op>`` for functions and
    methods and ``ember::nn.<Module>`` for modules.

    Example:
        >>> from ember.onnx.errors import UnsupportedOperatorError
        >>> str(UnsupportedOperatorError("ember::nn.GRU", 17, None))
        "Exporting the operator 'ember::nn.GRU' to ONNX opset version 17 is not supported"
    """

    def __init__(self, name: str, version: int, supported_version: int | None) -> None:
        if supported_version is not None:
            msg = (
                f"Exporting the operator '{name}' to ONNX opset version {version} "
                "is not supported. Support for this operator was added in version "
                f"{supported_version}, try exporting with this version"
            )
        elif name.startswith(("aten::", "prim::", "quantized::", "ember::")):
            msg = (
                f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
            )
        else:
            msg = (
                f"ONNX export failed on an operator with unrecognized namespace {name}. "
                "If you are trying to export a custom operator, make sure you registered it with "
                "the right domain and version."
            )
        super().__init__(msg)
        self.name = name
        self.version = version
        self.supported_version = supported_version
