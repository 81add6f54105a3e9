"""``torch.overrides``: the ``__torch_function__`` protocol's public API.

Every public ember function, Tensor method, operator and property checks its arguments
for a type that overrides ``__torch_function__`` (a Tensor subclass, or a foreign type such
as ``fx.Proxy``) and for an active ``TorchFunctionMode``, and hands the call over when it
finds one (``ember._overrides`` holds the check and the dispatch).

Example:
    >>> import ember
    >>> from ember.overrides import TorchFunctionMode
    >>> class Log(TorchFunctionMode):
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         print(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log():
    ...     y = ember.add(ember.ones(2), 1)
    add
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from . import _overrides
from ._overrides import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    overloaded_args,
    state,
)
from ._tensor import _NOWRAP, Tensor

__all__ = [
    "BaseTorchFunctionMode",
    "TorchFunctionMode",
    "enable_reentrant_dispatch",
    "get_default_nowrap_functions",
    "get_ignored_functions",
    "get_overridable_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
    "resolve_name",
    "wrap_torch_function",
]


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Would a call with ``relevant_args`` be handed to ``__torch_function__`` (an active
    mode, or an argument whose type overrides it)?

    Example:
        >>> import ember
        >>> from ember.overrides import has_torch_function
        >>> has_torch_function((ember.ones(1), 2))
        False
    """
    return _overrides.has_torch_function(tuple(relevant_args))


def has_torch_function_unary(arg) -> bool:
    """``has_torch_function((arg,))``."""
    return _overrides.has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    """``has_torch_function(args)``."""
    return _overrides.has_torch_function(args)


def handle_torch_function(
    public_api: Callable, relevant_args: Iterable[Any], *args, **kwargs
) -> Any:
    """Call the innermost active mode's, then the overriding arguments',
    ``__torch_function__`` for ``public_api(*args, **kwargs)``; the first result that is
    not ``NotImplemented`` is returned. For functions written outside ember that take part
    in the protocol (check ``has_torch_function`` first).

    Example:
        >>> import ember
        >>> from ember.overrides import handle_torch_function, has_torch_function
        >>> def scale(x):
        ...     if has_torch_function((x,)):
        ...         return handle_torch_function(scale, (x,), x)
        ...     return x * 2
    """
    found = [] if state.disabled else overloaded_args(tuple(relevant_args))
    kinds = tuple(type(a) for a in found)
    modes = state.modes if state.disabled < 2 else []
    if modes:
        mode = modes.pop()
        try:
            result = mode.__torch_function__(public_api, kinds, args, kwargs)
        finally:
            modes.append(mode)
        if result is not NotImplemented:
            return result
    for arg in found:
        result = arg.__torch_function__(public_api, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public_api, '__module__', '?')}.{getattr(public_api, '__name__', '?')}"
    msg = (
        f"no implementation found for '{name}' on types that implement "
        f"__torch_function__: {list(kinds)}"
    )
    if modes:
        msg += f" nor in mode {modes[-1]}"
    raise TypeError(msg)


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines ``__torch_function__``.

    Example:
        >>> import ember
        >>> from ember.overrides import is_tensor_like
        >>> is_tensor_like(ember.ones(1)), is_tensor_like(1.0)
        (True, False)
    """
    return type(inp) is Tensor or hasattr(type(inp), "__torch_function__")


def get_default_nowrap_functions() -> set:
    """Functions whose results ``Tensor.__torch_function__`` does not convert to the
    subclass: the getters of ``Tensor._base`` and ``Tensor.grad`` (as torch)."""
    return set(_NOWRAP)


def is_tensor_method_or_property(func: Callable) -> bool:
    """Is ``func`` one of Tensor's methods or property getters (not a function)?"""
    if getattr(func, "__self__", None) is not None and isinstance(func.__self__, property):
        return any(func.__self__ is v for v in vars(Tensor).values())
    name = getattr(func, "__name__", None)
    return name is not None and vars(Tensor).get(name) is func


def resolve_name(f) -> str | None:
    """The qualified name torch prints for a function it dispatches (``torch.add``,
    ``torch.Tensor.add``), or None."""
    if is_tensor_method_or_property(f):
        owner = getattr(f, "__self__", None)
        if isinstance(owner, property):
            name = next(k for k, v in vars(Tensor).items() if v is owner)
            return f"torch.Tensor.{name}.__get__"
        return f"torch.Tensor.{f.__name__}"
    module = getattr(f, "__module__", None)
    name = getattr(f, "__name__", None)
    if module is None or name is None:
        return None
    return module.replace("ember", "torch", 1) + "." + name


def get_ignored_functions() -> set:
    """The public functions that take part in no dispatch (utilities and settings)."""
    return {
        fn
        for _, namespace in _overrides.NAMESPACES
        for name, fn in namespace.items()
        if name in _overrides.NOT_DISPATCHED and callable(fn)
    }


def get_overridable_functions() -> dict:
    """{namespace name: [its dispatching functions]}: ``torch``, ``torch.nn.functional``,
    ``torch.linalg``, ``torch.special``, ``torch.fft`` and ``torch.Tensor``."""
    out: dict = {}
    for module, namespace in _overrides.NAMESPACES:
        out[module] = [
            v
            for k, v in namespace.items()
            if not k.startswith("_") and getattr(v, "_ember_impl", None) is not None
        ]
    out["torch.Tensor"] = [
        v for k, v in vars(Tensor).items() if getattr(v, "_ember_impl", None) is not None
    ]
    return out


def wrap_torch_function(dispatcher: Callable):
    """A decorator: the decorated function hands over to ``__torch_function__`` when
    ``dispatcher(*args, **kwargs)`` (its relevant arguments) has an overriding one."""

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


class TorchFunctionMode:
    """A context whose ``__torch_function__(func, types, args, kwargs)`` sees every public
    function, method, operator and property call made in it (in this thread). While it
    runs, it is off the stack: the calls it makes go to the next mode, or run.

    Example:
        >>> import ember
        >>> from ember.overrides import TorchFunctionMode
        >>> class Count(TorchFunctionMode):
        ...     n = 0
        ...     def __torch_function__(self, func, types, args=(), kwargs=None):
        ...         Count.n += 1
        ...         return func(*args, **(kwargs or {}))
        >>> with Count():
        ...     _ = ember.ones(2) * 3
        >>> Count.n
        2
    """

    inner: TorchFunctionMode

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        """Deprecated in torch: ``with cls(*args, **kwargs):`` instead."""
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call unchanged (a base for modes that only observe)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode: TorchFunctionMode) -> None:
    state.modes.append(mode)
    _overrides.count_modes(+1)


def _pop_mode() -> TorchFunctionMode:
    if not state.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = state.modes.pop()
    _overrides.count_modes(-1)
    return mode


def _get_current_function_mode():
    """The innermost active mode of this thread, or None."""
    return state.modes[-1] if state.modes else None


def _get_current_function_mode_stack() -> list:
    """This thread's active modes, outermost first."""
    return list(state.modes)


def _is_torch_function_mode_enabled() -> bool:
    return bool(state.modes) and state.disabled < 2


class enable_reentrant_dispatch:
    """torch's context for dispatch from inside ``__torch_dispatch__``: ember's dispatch is
    reentrant already, so it does nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


__all__ += ["DisableTorchFunction", "DisableTorchFunctionSubclass"]
