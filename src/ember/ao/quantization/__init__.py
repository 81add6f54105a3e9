"""``torch.ao.quantization``: ember has no quantized tensors, so nothing here quantizes.
``QuantStub`` and ``DeQuantStub`` mark where a model's quantized region starts and ends;
before a model is converted they pass their input through, which is all they ever do in
ember. The rest of torch's quantization API (observers, ``prepare``, ``convert``...) is
missing: asking for it raises AttributeError naming what ember lacks.

Example:
    >>> import ember
    >>> from ember.ao.quantization import DeQuantStub, QuantStub
    >>> x = ember.ones(2)
    >>> DeQuantStub()(QuantStub()(x)) is x
    True
"""

from __future__ import annotations

from ...nn.modules.module import Module

__all__ = ["DeQuantStub", "QuantStub"]


class _Stub(Module):
    """A marker module: the identity until a model is converted (which ember cannot do)."""

    def __init__(self, qconfig=None) -> None:
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Where a model's quantized region starts: the identity until a model is converted.

    Example:
        >>> import ember
        >>> from ember.ao.quantization import QuantStub
        >>> QuantStub()(ember.tensor([1.5]))
        tensor([1.5000])
    """


class DeQuantStub(_Stub):
    """Where a model's quantized region ends: the identity until a model is converted.

    Example:
        >>> import ember
        >>> from ember.ao.quantization import DeQuantStub
        >>> DeQuantStub()(ember.tensor([1.5]))
        tensor([1.5000])
    """


def __getattr__(name: str):
    raise AttributeError(
        f"module 'torch.ao.quantization' has no attribute {name!r}: ember has no quantized "
        "tensors (only QuantStub and DeQuantStub, the identity in float models)"
    )
