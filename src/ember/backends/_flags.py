"""Settable backend flags, restored by a ``flags(...)`` context manager as torch's are."""

from __future__ import annotations

import contextlib
import types


@contextlib.contextmanager
def set_flags(module: types.ModuleType, **values):
    """Set the given module attributes (None: leave unchanged) for the ``with`` block."""
    old = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        if value is not None:
            setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(module, name, value)
