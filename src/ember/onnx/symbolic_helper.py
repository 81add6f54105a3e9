"""``torch.onnx.symbolic_helper``: helpers for writing the TorchScript exporter's symbolic
functions. ember's exporter does not run symbolic functions
(``ember.onnx.register_custom_op_symbolic``); ``parse_args`` keeps a function's argument
descriptors so that such functions can be defined.

Example:
    >>> from ember.onnx.symbolic_helper import parse_args
    >>> @parse_args("v", "f")
    ... def symbolic(g, x, alpha):
    ...     return x
    >>> symbolic._arg_descriptors
    ('v', 'f')
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["parse_args"]


def parse_args(*arg_descriptors: str) -> Callable[[Callable], Callable]:
    """Describe a symbolic function's arguments (``"v"`` a graph value, ``"i"`` an int,
    ``"f"`` a float...). The function is returned with its descriptors attached.

    Example:
        >>> from ember.onnx.symbolic_helper import parse_args
        >>> parse_args("v")(lambda g, x: x)._arg_descriptors
        ('v',)
    """

    def decorate(fn: Callable) -> Callable:
        fn._arg_descriptors = arg_descriptors
        return fn

    return decorate
