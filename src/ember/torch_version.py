"""``torch.torch_version``: a version string that compares with strings and tuples.

Example:
    >>> from ember.torch_version import TorchVersion
    >>> TorchVersion("2.13.0+cpu") >= "2.0", TorchVersion("0.1.0") < (1, 0)
    (True, True)
"""

from __future__ import annotations

import re

__all__ = ["TorchVersion"]


def _release(v) -> tuple:
    """The numeric release of a version (``"2.13.0+cpu"`` -> ``(2, 13, 0)``)."""
    if isinstance(v, (tuple, list)):
        return tuple(int(x) for x in v)
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(v))
    if match is None:
        raise ValueError(f"Invalid version: '{v}'")
    return tuple(int(x) for x in match.group(1).split("."))


def _padded(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


class TorchVersion(str):
    """A ``str`` whose comparisons are by release number (local tags such as ``+cpu``
    are ignored), against strings, tuples or other versions."""

    def _cmp(self, other, op) -> bool:
        a, b = _padded(_release(self), _release(other))
        return op(a, b)

    def __lt__(self, other):
        return self._cmp(other, tuple.__lt__)

    def __le__(self, other):
        return self._cmp(other, tuple.__le__)

    def __gt__(self, other):
        return self._cmp(other, tuple.__gt__)

    def __ge__(self, other):
        return self._cmp(other, tuple.__ge__)

    def __eq__(self, other):
        if isinstance(other, str) and str.__eq__(self, other):
            return True
        try:
            return self._cmp(other, tuple.__eq__)
        except (ValueError, TypeError):
            return False

    __hash__ = str.__hash__
