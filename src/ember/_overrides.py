"""torch's ``__torch_function__`` protocol: the check every public entry point makes, and
the dispatch to a mode or an overriding type when the check finds one.

Every public function (``ember.add``, ``F.linear``, ``linalg.solve``...), Tensor method,
operator and property is a *wrapper* made here with the implementation's own signature:

    def add(input, other, *, alpha=1, out=None):
        if _MODES[0] or type(input) not in _PLAIN or type(other) not in _PLAIN:
            return _dispatch(add, _impl, (input, other), {"alpha": alpha, "out": out})
        return _impl(input, other, alpha=alpha, out=out)

so when every argument is a plain Tensor or a Python number and no mode is active (any
thread's), the cost is a few type lookups. Otherwise ``dispatch`` does what torch does:
the innermost ``TorchFunctionMode`` of this thread first (popped while it runs, so the
calls it makes go to the next one), then each argument whose type overrides
``__torch_function__`` (subclasses before their bases; a Tensor subclass, ``fx.Proxy``),
then the implementation when nothing overrides. Lists and tuples of arguments are searched
too (``cat([proxy, proxy])``).

The implementations themselves (``ember._aten``'s functions) stay plain: ember's own calls
between ops pay nothing, as torch's C++ calls do not re-dispatch.
"""

from __future__ import annotations

import os
import sys
import threading
import types
import warnings

import numpy as np

from . import _dtype

__all__ = [
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "dispatch",
    "has_torch_function",
    "overloaded_args",
    "plain_type",
    "wrap_function",
    "wrap_method",
    "wrap_property",
]


class _State(threading.local):
    """Per thread: the mode stack (innermost last) and what is disabled."""

    def __init__(self) -> None:
        self.modes: list = []
        # 0: dispatch on; 1: no subclass dispatch (DisableTorchFunctionSubclass, inside
        # Tensor.__torch_function__); 2: none at all (DisableTorchFunction)
        self.disabled = 0


state = _State()
# How many modes are entered, in all threads: the wrappers test this first (a list index),
# so code outside any mode never reads the thread-local state.
MODES = [0]

# Types that never override: plain Tensor (added by _tensor), numbers, strings, dtypes...
PLAIN: set = {
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    slice,
    range,
    type(Ellipsis),
    np.dtype,
    np.ndarray,
    _dtype.dtype,
    *(type(np.dtype(c).type(0)) for c in "?bhilqBHILQefdgFDG"),
}


def plain_type(cls) -> None:
    """Mark ``cls`` as never overriding ``__torch_function__`` (Tensor, Parameter, Size)."""
    PLAIN.add(cls)


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """A ``__torch_function__`` that opts a Tensor subclass out (torch's
    ``torch._C._disabled_torch_function_impl``): its instances dispatch as plain Tensors."""
    return func(*args, **(kwargs or {}))


def _overrides(arg_type) -> bool:
    tf = getattr(arg_type, "__torch_function__", None)
    if tf is None:
        return False
    return getattr(tf, "__func__", tf) is not _disabled_torch_function_impl


def _collect(obj, found: list, seen: set) -> None:
    """Add ``obj`` (or what a list/tuple of it holds) to ``found`` if its type overrides."""
    kind = type(obj)
    if kind in PLAIN:
        return
    if kind is list or kind is tuple or isinstance(obj, (list, tuple)):  # named tuples too
        for item in obj:
            if type(item) not in PLAIN:
                _collect(item, found, seen)
        return
    if kind in seen or not _overrides(kind):
        return
    seen.add(kind)
    # subclasses before their bases, else in argument order (torch's rule)
    for i, other in enumerate(found):
        if issubclass(kind, type(other)):
            found.insert(i, obj)
            return
    found.append(obj)


def overloaded_args(args, kwargs=None) -> list:
    """The arguments (one per type) whose type overrides ``__torch_function__``."""
    found: list = []
    seen: set = set()
    for a in args:
        if type(a) not in PLAIN:
            _collect(a, found, seen)
    if kwargs:
        for a in kwargs.values():
            if type(a) not in PLAIN:
                _collect(a, found, seen)
    return found


def has_torch_function(relevant_args) -> bool:
    """Would a call with ``relevant_args`` dispatch (a mode, or an overriding argument)?"""
    if state.disabled == 2:
        return False
    if state.modes:
        return True
    return state.disabled == 0 and bool(overloaded_args(relevant_args))


def dispatch(public, impl, args: tuple, kwargs: dict):
    """``public(*args, **kwargs)`` when its check failed: to this thread's innermost mode,
    then to the overriding arguments, else ``impl`` (see the module docstring)."""
    st = state
    if st.disabled == 2:
        return impl(*args, **kwargs)
    found = overloaded_args(args, kwargs) if st.disabled == 0 else []
    modes = st.modes
    if not found and not modes:
        return impl(*args, **kwargs)
    kinds = tuple(type(a) for a in found)
    if modes:
        mode = modes.pop()  # while it runs, its own calls go to the next mode
        try:
            result = mode.__torch_function__(public, kinds, args, kwargs)
        finally:
            modes.append(mode)
        if result is not NotImplemented:
            return result
    for arg in found:
        result = arg.__torch_function__(public, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public, '__module__', '?')}.{getattr(public, '__name__', public)}"
    msg = (
        f"no implementation found for '{name}' on types that implement "
        f"__torch_function__: {list(kinds)}"
    )
    if modes:
        msg += f" nor in mode {modes[-1]}"
    raise TypeError(msg)


class DisableTorchFunctionSubclass:
    """No dispatch to overriding arguments in the block (modes still apply), as torch's
    ``torch._C.DisableTorchFunctionSubclass``: ``Tensor.__torch_function__`` runs the
    function on subclass instances with it."""

    _level = 1

    def __enter__(self):
        self._before = state.disabled
        state.disabled = max(state.disabled, self._level)
        return self

    def __exit__(self, *exc) -> None:
        state.disabled = self._before


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """No ``__torch_function__`` dispatch at all in the block: neither modes nor
    overriding arguments (torch's ``torch._C.DisableTorchFunction``)."""

    _level = 2


# -- the wrappers ---------------------------------------------------------------------------

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08
# The wrappers' globals: __name__ marks their frames as ember's (ember.compile's capture
# walks frames by module name to name the op that made a tensor).
_NAMESPACE = {"__name__": __name__, "_MODES": MODES, "_PLAIN": PLAIN, "_dispatch": dispatch}


def _parameters(fn) -> tuple | None:
    """(signature source, call source, checks, packing of args and kwargs) for a Python
    function, or None when it is not one (a builtin, a class)."""
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    names = code.co_varnames
    n_pos = code.co_argcount
    n_posonly = code.co_posonlyargcount
    n_kw = code.co_kwonlyargcount
    positional = list(names[:n_pos])
    keyword = list(names[n_pos : n_pos + n_kw])
    i = n_pos + n_kw
    star = names[i] if code.co_flags & _CO_VARARGS else None
    i += bool(star)
    starstar = names[i] if code.co_flags & _CO_VARKEYWORDS else None
    sig: list = []
    call: list = []
    for k, name in enumerate(positional):
        sig.append(name)
        if k + 1 == n_posonly:
            sig.append("/")
        call.append(name)
    if star:
        sig.append("*" + star)
        call.append("*" + star)
    elif keyword:
        sig.append("*")
    for name in keyword:
        sig.append(name)
        call.append(f"{name}={name}")
    if starstar:
        sig.append("**" + starstar)
        call.append("**" + starstar)
    # the check: every argument's type; a *args tuple's and a **kwargs dict's items
    checks = [f"type({name}) not in _PLAIN" for name in positional + keyword]
    if star:
        checks.append(f"(bool({star}) and _any_not_plain({star}))")
    if starstar:
        checks.append(f"(bool({starstar}) and _any_not_plain({starstar}.values()))")
    args = positional + ([f"*{star}"] if star else [])
    pack_args = "(" + "".join(f"{a}, " for a in args) + ")"
    pack_kwargs = "{" + ", ".join(f"{k!r}: {k}" for k in keyword) + "}"
    if starstar:
        pack_kwargs = "{" + (pack_kwargs[1:-1] + ", " if keyword else "") + f"**{starstar}}}"
    return ", ".join(sig), ", ".join(call), tuple(checks), pack_args, pack_kwargs


def _any_not_plain(items) -> bool:
    for x in items:
        if type(x) not in PLAIN:
            return True
    return False


_NAMESPACE["_any_not_plain"] = _any_not_plain
# A file name inside the package with no source behind it: tracebacks, anomaly detection's
# forward stack and ember.compile's user-line search skip the wrappers as ember's frames.
_WRAPPER_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "<public function>")
# Compiled wrapper bodies, one per distinct signature: 900 wrappers share ~300 of them,
# and compiling is most of what making a wrapper costs at import.
_TEMPLATES: dict = {}


def _generate(impl, name: str):
    """The wrapper of ``impl`` (see the module docstring); None if ``impl`` is not a Python
    function (the caller keeps it unwrapped)."""
    parts = _parameters(impl)
    if parts is None:
        return None
    code = _TEMPLATES.get(parts)
    if code is None:
        sig, call, checks, pack_args, pack_kwargs = parts
        test = " or ".join(["_MODES[0]", *checks])
        source = (
            f"def wrapper({sig}):\n"
            f"    if {test}:\n"
            f"        return _dispatch(_self[0], _impl, {pack_args}, {pack_kwargs})\n"
            f"    return _impl({call})\n"
        )
        namespace: dict = {}
        exec(compile(source, _WRAPPER_FILE, "exec"), namespace)  # noqa: S102
        code = _TEMPLATES[parts] = namespace["wrapper"].__code__
    holder: list = [None]
    namespace = dict(_NAMESPACE, _impl=impl, _self=holder)
    wrapper = types.FunctionType(code.replace(co_name=name), namespace, name)
    wrapper.__defaults__ = impl.__defaults__
    wrapper.__kwdefaults__ = impl.__kwdefaults__
    wrapper.__doc__ = impl.__doc__
    wrapper.__module__ = impl.__module__
    wrapper.__qualname__ = getattr(impl, "__qualname__", name)
    wrapper.__annotations__ = getattr(impl, "__annotations__", {})
    wrapper.__wrapped__ = impl
    wrapper._ember_impl = impl
    wrapper._ember_public = holder  # [what dispatch passes as func]: the wrapper itself
    holder[0] = wrapper
    return wrapper


def _valid_name(name: str) -> str:
    return name if name.isidentifier() else "_op"


def wrap_function(impl, name: str | None = None, module: str | None = None):
    """The public function for ``impl``: dispatching as the module docstring says. Already
    wrapped functions and non-Python callables come back unchanged."""
    if getattr(impl, "_ember_impl", None) is not None:
        return impl
    wrapper = _generate(impl, _valid_name(name or impl.__name__))
    if wrapper is None:
        return impl
    if name:
        wrapper.__name__ = name
    if module:
        wrapper.__module__ = module
    return wrapper


def wrap_method(impl, name: str, owner_name: str = "Tensor"):
    """A Tensor method for ``impl`` (``self`` first), dispatching with itself as ``func``
    (torch passes ``Tensor.add``, not ``torch.add``)."""
    wrapper = _generate(getattr(impl, "_ember_impl", impl), _valid_name(name))
    if wrapper is None:
        return impl
    wrapper.__name__ = name
    wrapper.__qualname__ = f"{owner_name}.{name}"
    return wrapper


class _DispatchingProperty(property):
    """A Tensor property whose getter dispatches (torch passes ``Tensor.<name>.__get__``)."""


def wrap_property(prop: property, name: str) -> property:
    """``prop`` with a getter that dispatches when a mode is active or ``self`` overrides."""
    fget = prop.fget
    if fget is None or isinstance(prop, _DispatchingProperty):
        return prop
    holder: list = [None]

    def get(self):
        if MODES[0] or type(self) not in PLAIN:
            return dispatch(holder[0], fget, (self,), {})
        return fget(self)

    get.__name__ = name
    get.__doc__ = fget.__doc__
    get._ember_impl = fget
    new = _DispatchingProperty(get, prop.fset, prop.fdel, prop.__doc__)
    holder[0] = new.__get__  # what a mode receives as func
    return new


# -- installing the wrappers ------------------------------------------------------------------

# Public names that are not torch functions a mode or an override sees: utilities, global
# settings, context managers and types (torch's functions without dispatch).
NOT_DISPATCHED = frozenset(
    """compile load save manual_seed seed initial_seed get_rng_state set_rng_state
    set_default_dtype get_default_dtype set_default_device get_default_device set_printoptions
    set_num_threads get_num_threads set_num_interop_threads get_num_interop_threads
    use_deterministic_algorithms are_deterministic_algorithms_enabled
    is_deterministic_algorithms_warn_only_enabled set_deterministic_debug_mode
    get_deterministic_debug_mode set_float32_matmul_precision get_float32_matmul_precision
    is_tensor is_storage typename is_grad_enabled set_grad_enabled no_grad enable_grad
    inference_mode is_inference_mode_enabled is_anomaly_enabled is_anomaly_check_nan_enabled
    set_anomaly_enabled autocast is_autocast_enabled set_autocast_enabled get_autocast_dtype
    set_autocast_dtype is_autocast_cache_enabled set_autocast_cache_enabled
    clear_autocast_cache promote_types can_cast broadcast_shapes iinfo finfo set_warn_always
    is_warn_always_enabled vmap cond get_device_module set_flush_denormal
    set_default_tensor_type from_numpy frombuffer is_nonzero_ok""".split()
)

# Tensor attributes that are not dispatched: construction, the protocol itself, hashing
# and pickling, and ember's own internals (a leading underscore).
NOT_DISPATCHED_METHODS = frozenset(
    """__init__ __new__ __init_subclass__ __torch_function__ __hash__ __reduce_ex__
    __reduce__ __getstate__ __setstate__ __class_getitem__ __subclasshook__ __dir__
    __sizeof__ __getattribute__ __getattr__ __setattr__ __delattr__ __eq_ptr__ as_subclass
    __array_priority__ __array_ufunc__""".split()
)

_WRAPPERS: dict = {}  # (id(implementation), public name) -> its wrapper
NAMESPACES: list = []  # (torch's module name, the namespace dict) as installed


def install_namespace(namespace: dict, names, module: str, skip=frozenset()) -> None:
    """Replace each of ``names`` in ``namespace`` (a module's globals) that is one of
    ember's Python functions by its dispatching wrapper (at import: nothing is replaced
    at run time afterwards)."""
    NAMESPACES.append((module, namespace))
    owner = namespace.get("__name__", module)  # pickle finds a function by module and name
    for name in names:
        fn = namespace.get(name)
        if name in skip or not isinstance(fn, types.FunctionType):
            continue
        if module == "torch" and name in NOT_DISPATCHED:  # (torch.cond, not linalg.cond)
            continue
        impl = getattr(fn, "_ember_impl", None) or fn
        if not (impl.__module__ or "").startswith("ember") or name.startswith("_"):
            continue
        if fn is not impl and fn.__name__ == name:
            continue  # the wrapper of this name already (the same function re-exported)
        # One wrapper per implementation and name: aliases (asin/arcsin, sigmoid/expit)
        # are distinct functions with their own names, as in torch.
        wrapper = _WRAPPERS.get((id(impl), name))
        if wrapper is None:
            wrapper = _generate(impl, _valid_name(name))
            if wrapper is None:
                continue
            wrapper.__name__ = wrapper.__qualname__ = name
            wrapper.__module__ = owner
            _WRAPPERS[(id(impl), name)] = wrapper
        namespace[name] = wrapper


# Operators whose call torch hands to __torch_function__ as the named method (``t + u``
# arrives as ``Tensor.add``, ``t / u`` as ``Tensor.div``); the others arrive as themselves.
OPERATOR_METHODS = {
    "__add__": "add",
    "__radd__": "add",
    "__sub__": "sub",
    "__mul__": "mul",
    "__rmul__": "mul",
    "__truediv__": "div",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__neg__": "neg",
    "__pos__": "positive",
    "__abs__": "abs",
    "__rand__": "bitwise_and",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
}


def install_tensor_methods(cls) -> None:
    """Wrap ``cls``'s (Tensor's) public methods, operators and properties."""
    for name, attr in list(vars(cls).items()):
        if name in NOT_DISPATCHED_METHODS:
            continue
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        if isinstance(attr, property):
            setattr(cls, name, wrap_property(attr, name))
        elif isinstance(attr, types.FunctionType) and getattr(attr, "_ember_impl", None) is None:
            setattr(cls, name, wrap_method(attr, name))
    for dunder, method in OPERATOR_METHODS.items():
        op, named = vars(cls).get(dunder), vars(cls).get(method)
        if getattr(op, "_ember_public", None) is not None and named is not None:
            op._ember_public[0] = named


def warn(message, category=UserWarning, stacklevel: int = 1) -> None:
    """``warnings.warn`` counting only frames that are not the public wrappers, so that a
    warning an op gives with ``stacklevel=2`` names the user's line (as torch's), not the
    wrapper the user's call went through."""
    frame = sys._getframe(1)  # warn's caller: stacklevel 1
    level = 1
    seen = 1
    while seen < stacklevel and frame.f_back is not None:
        frame = frame.f_back
        level += 1
        if frame.f_code.co_filename != _WRAPPER_FILE:
            seen += 1
    warnings.warn(message, category, stacklevel=level + 1)
