"""Grad mode: whether operations are recorded for backward. Thread-local, like torch."""

from __future__ import annotations

import functools

from .._mode import state


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are recorded.

    Example:
        >>> import ember
        >>> with ember.no_grad():
        ...     ember.is_grad_enabled()
        False
    """
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``.

    Example:
        >>> import ember
        >>> with ember.inference_mode():
        ...     ember.is_inference_mode_enabled()
        True
    """
    return state.inference


class _GradModeContext:
    """Base for context managers that can also decorate functions (with or without ``()``)."""

    def __new__(cls, *args, **kwargs):
        # ``@no_grad`` without parentheses: the class is called with the function itself.
        if cls is not set_grad_enabled and len(args) == 1 and callable(args[0]) and not kwargs:
            if not isinstance(args[0], bool):
                return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, func):
        if isinstance(func, type):
            raise TypeError("grad-mode decorators apply to functions, not classes")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = self._mode()

    def __exit__(self, *exc) -> None:
        state.enabled = self._prev

    def _mode(self) -> bool:
        raise NotImplementedError


class no_grad(_GradModeContext):
    """Context manager and decorator that disables gradient recording.

    Example:
        >>> import ember
        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self) -> None:
        pass

    def _mode(self) -> bool:
        return False


class enable_grad(_GradModeContext):
    """Context manager and decorator that enables gradient recording (e.g. inside no_grad).

    Example:
        >>> import ember
        >>> x = ember.tensor([1.0], requires_grad=True)
        >>> with ember.no_grad(), ember.enable_grad():
        ...     (x * 2).requires_grad
        True
    """

    def _mode(self) -> bool:
        return True


class set_grad_enabled(_GradModeContext):
    """Set grad mode on or off; works as a function call, context manager and decorator.

    Example:
        >>> import ember
        >>> with ember.set_grad_enabled(False):
        ...     ember.is_grad_enabled()
        False
    """

    def __init__(self, mode: bool) -> None:
        self.prev = state.enabled
        self.mode = bool(mode)
        # Like torch, calling it as a function takes effect immediately.
        state.enabled = self.mode

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        state.enabled = self.prev


class inference_mode(_GradModeContext):
    """Like no_grad, for code that will never need gradients (``inference_mode(False)`` is a no-op).

    Example:
        >>> import ember
        >>> with ember.inference_mode():
        ...     ember.ones(2).requires_grad_(False).requires_grad
        False
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        self._prev = state.enabled
        self._prev_inf = state.inference
        if self.mode:
            state.enabled = False
            state.inference = True

    def __exit__(self, *exc) -> None:
        state.enabled = self._prev
        state.inference = self._prev_inf
