"""``torch.__config__``: how this build was made, as text. ember is not compiled: the
report names ember, the NumPy it computes with, and NumPy's BLAS, where torch names its
compiler, BLAS and CPU kernels.

Example:
    >>> import ember
    >>> ember.__config__.show().splitlines()[0]
    'PyTorch built with:'
"""

from __future__ import annotations

import numpy as np

__all__ = ["parallel_info", "show"]


def _blas() -> str:
    """NumPy's BLAS as its build configuration names it ("unknown" where it cannot say)."""
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # an old NumPy or a build without the information (WebAssembly)
        return "unknown"
    return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()


def show() -> str:
    """What this build computes with, in the layout of torch's report.

    Example:
        >>> import ember
        >>> "NumPy" in ember.__config__.show()
        True
    """
    from .version import __version__  # deferred: the version module is only read here

    return (
        "PyTorch built with:\n"
        f"  - ember, as torch {__version__}: PyTorch's API computing on NumPy\n"
        f"  - NumPy {np.__version__}\n"
        f"  - BLAS: {_blas()}\n"
    )


def parallel_info() -> str:
    """The thread settings ops run with, as torch's ``parallel_info`` reports them.

    Example:
        >>> import ember
        >>> ember.__config__.parallel_info().splitlines()[0]
        'ATen/Parallel:'
    """
    from . import _compat  # deferred: the thread settings live with the torch namespace

    return (
        "ATen/Parallel:\n"
        f"\tat::get_num_threads() : {_compat.get_num_threads()}\n"
        f"\tat::get_num_interop_threads() : {_compat.get_num_interop_threads()}\n"
        f"NumPy {np.__version__} with BLAS {_blas()}\n"
    )
