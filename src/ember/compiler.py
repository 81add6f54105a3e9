"""``torch.compiler``: what programs ask of the compiler around ``ember.compile``.

Example:
    >>> import ember
    >>> ember.compiler.is_compiling()
    False
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ._mode import state as _mode
from .autograd import recording as _recording

__all__ = [
    "allow_in_graph",
    "assume_constant_result",
    "cudagraph_mark_step_begin",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "reset",
]


def is_compiling() -> bool:
    """True inside a call of an ``ember.compile``'d function in this thread (its capture,
    its compiled runs and its eager fallbacks alike, so that every call takes the same
    branch), False in eager code.

    Example:
        >>> import ember
        >>> ember.compile(lambda x: x + ember.compiler.is_compiling())(ember.zeros(1))
        tensor([1.])
    """
    return _mode.compiling > 0 or _recording.active_capture() is not None


is_dynamo_compiling = is_compiling


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None):
    """``fn`` (a decorator too) never compiled: called inside a compiled function, it makes
    that function run eagerly (``explain()`` names it), and raises under ``fullgraph=True``.

    Example:
        >>> import ember
        >>> @ember.compiler.disable
        ... def debug(x):
        ...     return x.sum().item()
        >>> f = ember.compile(lambda x: x * debug(x))
        >>> f(ember.ones(2))
        tensor([2., 2.])
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        capture = _recording.active_capture()
        if capture is not None:
            what = f"a torch.compiler.disable'd function ({getattr(fn, '__name__', fn)})"
            capture.unsupported(what + (f": {reason}" if reason else ""))
        return fn(*args, **kwargs)

    return eager


def allow_in_graph(fn: Callable) -> Callable:
    """``fn`` itself: ember's capture already follows any function's ops."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """``fn`` itself (ember's guards check what the captured code read)."""
    return fn


def cudagraph_mark_step_begin() -> None:
    """Nothing to do: no CUDA graphs on a CPU."""


def reset() -> None:
    """Forget every compiled function's captures: each captures again on its next call."""
    from ._compile import reset as _reset  # deferred: the compiler loads on first use

    _reset()
