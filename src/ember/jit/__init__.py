"""``torch.jit``: TorchScript is deprecated in torch 2.13, and ember has no TorchScript
compiler. ``script`` and ``trace`` give back what they were given (a module or function
that runs eagerly, with the same results), with torch's deprecation warning, so programs
that script a model for speed run unchanged; ``ember.compile`` is the compiler.

Example:
    >>> import warnings, ember
    >>> layer = ember.nn.Linear(2, 2)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.jit.script(layer) is layer
    True
"""

from __future__ import annotations

import warnings
from typing import Final  # noqa: F401  (torch.jit.Final)
from .._overrides import warn as _warn

__all__ = [
    "Final",
    "export",
    "ignore",
    "is_scripting",
    "is_tracing",
    "script",
    "trace",
    "unused",
]


def _deprecated(name: str) -> None:
    _warn(
        f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or `torch.export`.",
        DeprecationWarning,
        stacklevel=3,
    )


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Return ``obj`` unchanged: it runs eagerly (ember compiles with ``ember.compile``)."""
    _deprecated("script")
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    """Return ``func`` unchanged: it runs eagerly, on any input (not only the example's)."""
    _deprecated("trace")
    return func


def ignore(drop=False, **kwargs):
    """Decorator leaving the function as it is (nothing is compiled)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def _overload(func):
    """TorchScript's overload declaration: the function itself (no scripting here)."""
    return func


def _overload_method(func):
    """TorchScript's method overload declaration: the method itself."""
    return func


def _script_if_tracing(fn):
    """Script ``fn`` when called under ``torch.jit.trace``: ember's code never runs under
    TorchScript's tracer, so the function itself."""
    return fn


def is_scripting() -> bool:
    """False: code never runs under TorchScript in ember."""
    return False


def is_tracing() -> bool:
    return False


def __getattr__(name: str):
    # torch.jit.ScriptModule: a Module subclass, loaded with nn on first use
    if name == "ScriptModule":
        from ._script import ScriptModule  # deferred: it loads ember.nn

        return ScriptModule
    raise AttributeError(f"module 'torch.jit' has no attribute {name!r}")
