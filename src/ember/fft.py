"""``torch.fft``: discrete Fourier transforms, with torch's names, signatures, dtypes,
errors, graphs and gradients.

Every transform is one of torch's three ops, declared with ``defop`` under torch's node
names: ``FftC2CBackward0`` (complex to complex), ``FftR2CBackward0`` (real to complex, the
full or the one-sided spectrum) and ``FftC2RBackward0`` (a one-sided Hermitian spectrum to a
real signal). As in torch, the public functions resize their input first (``n=``/``s=``: a
slice ``SliceBackward0`` and/or a zero pad ``ConstantPadNdBackward0``), promote integers to
the default float dtype and real inputs of the complex transforms to complex
(``ToCopyBackward0``), and conjugate around the ops where torch does (``ihfft``, ``hfft``,
``ifft`` of a real input).

``norm`` is ``"backward"`` (the default: the inverse transforms are scaled by ``1/n``),
``"ortho"`` (both by ``1/sqrt(n)``) or ``"forward"`` (the forward ones by ``1/n``).

Gradients follow torch's convention for complex tensors (the gradient of a real loss with
respect to ``z = x + iy`` is ``dL/dx + i dL/dy``): a linear map's rule is its adjoint, so
each op's backward is the transform in the other direction with the same scale (for the
one-sided ops torch's padding and doubling of the spectrum). The ops are linear, so forward
mode is the op applied to the tangents.

Example:
    >>> import ember
    >>> import ember.fft
    >>> ember.fft.fft(ember.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    >>> ember.fft.irfft(ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0])))
    tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

from . import _overrides
from ._aten.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]


# The public functions dispatch through __torch_function__ (ember._overrides), from here
# on: every module importing them gets the dispatching ones.
_overrides.install_namespace(globals(), __all__, "torch.fft")
