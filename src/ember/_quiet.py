"""NumPy's floating-point warnings off for a block, cheaply: torch computes 0/0, log(0) and
overflow silently, and no NumPy warning text may reach a user.

    token = quiet_set(QUIET)
    try:
        ...
    finally:
        quiet_reset(token)

Example:
    >>> import numpy as np
    >>> from ember._quiet import QUIET, quiet_reset, quiet_set
    >>> token = quiet_set(QUIET)
    >>> float(np.float64(1.0) / np.float64(0.0))
    inf
    >>> quiet_reset(token)
"""

from __future__ import annotations

import numpy as np

__all__ = ["QUIET", "quiet_reset", "quiet_set"]


def _errstate_var():
    """NumPy's error-state context variable and its all-ignore value. Setting it directly
    costs two C calls per op, where ``np.errstate`` costs a microsecond."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as var
    except ImportError:  # a NumPy without it: the documented (slower) way
        return _ErrstateVar(), None
    with np.errstate(all="ignore"):
        return var, var.get()


class _ErrstateVar:
    """``set``/``reset`` of a context variable, done with ``np.errstate``."""

    def set(self, _value):
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def reset(self, state) -> None:
        state.__exit__(None, None, None)


_QUIET_VAR, QUIET = _errstate_var()
# NumPy's floating-point warnings off for a block (torch computes 0/0, log(0) and overflow
# silently):  token = quiet_set(QUIET) ... finally: quiet_reset(token)
quiet_set = _QUIET_VAR.set
quiet_reset = _QUIET_VAR.reset
