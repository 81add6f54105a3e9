"""glibc malloc settings for eager training's array churn, set once by the first backward.

A training step allocates and frees the same array sizes every step. With glibc's
defaults, blocks over 128 KB are mapped fresh from the kernel for each allocation (the
threshold adapts upwards only as such blocks are freed) and the heap returns free memory
at its top past a few MB: each step then touches new pages again, one page fault per 4 KB.
Measured on a 2-vCPU VM (about 3 µs a fault): 1000-4500 faults a step for a tiny GPT, an
LSTM and a small conv net, a quarter to a third of their step time.

``tune()`` raises the two thresholds (``mallopt``): blocks up to 32 MB (glibc's maximum)
come from the heap, and the heap keeps up to 128 MB free at its top. A loop then reuses
the same memory, with no page faults after its first steps; peak memory is unchanged (the
blocks are the same; they are kept rather than returned and mapped again).

Process-wide, so it is skipped where the user chose: ``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_`` or ``GLIBC_TUNABLES`` set, or ``EMBER_MALLOC_TUNING=0``; and
off glibc (macOS, musl, WebAssembly), where nothing is changed.

Example:
    >>> from ember import _allocator
    >>> _allocator.tune() in (True, False)
    True
"""

from __future__ import annotations

import ctypes
import os
import platform

# mallopt's parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 128 * 1024 * 1024

_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
_tuned: list = []  # [whether tune() changed the settings] after its first call


def why_not() -> str:
    """Why ``tune()`` leaves malloc as it is here, or "" when it changes it."""
    if os.environ.get("EMBER_MALLOC_TUNING", "1") == "0":
        return "EMBER_MALLOC_TUNING=0"
    chosen = [v for v in _USER_SETTINGS if v in os.environ]
    if chosen:
        return f"the user's own settings ({', '.join(chosen)})"
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return "not glibc"
    return ""


def tune() -> bool:
    """Raise glibc's mmap and trim thresholds once per process (see the module's text);
    returns whether they are ember's now."""
    if not _tuned:
        done = False
        if not why_not():
            try:
                libc = ctypes.CDLL(None)  # the process's own C library
                done = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
                    libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
                )
            except (OSError, AttributeError):  # no mallopt to call: nothing changed
                done = False
        _tuned.append(done)
    return _tuned[0]
