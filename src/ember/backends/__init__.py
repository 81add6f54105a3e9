"""``torch.backends``: which compute backends exist, and their flags.

ember computes on the CPU with NumPy: CUDA, cuDNN and MPS answer as on a CPU-only torch
build; the CPU libraries torch links (MKL, oneDNN, OpenMP) are not used, so they report
unavailable while their flags stay settable.

Example:
    >>> import ember
    >>> ember.backends.cudnn.is_available(), ember.backends.mps.is_available()
    (False, False)
"""

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
