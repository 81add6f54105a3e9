"""torch's ``__torch_function__`` protocol: the check every public entry point makes, and
the dispatch to a mode or an overriding type when the check finds one.

Every public function (``ember.add``, ``F.linear``, ``linalg.solve``...), Tensor method,
operator and property is a *wrapper* made here with the implementation's own signature:

    def add(input, other, *, alpha=1, out=None):
        if type(input) not in _PLAIN or type(other) not in _PLAIN:
            return _dispatch(add, _impl, (input, other), {"alpha": alpha, "out": out})
        if alpha is _DEFAULT_alpha and out is _DEFAULT_out:
            return _impl(input, other)
        if type(alpha) not in _PLAIN or type(out) not in _PLAIN:
            return _dispatch(add, _impl, (input, other), {"alpha": alpha, "out": out})
        return _impl(input, other, alpha=alpha, out=out)

so when every argument is a plain Tensor or a Python number and no mode is active (any
thread's), the cost is a set lookup per argument: ``_PLAIN`` (UNCHECKED) is emptied while
a mode is entered, which sends every call to ``dispatch``. The hottest functions (FUSED)
are not wrappers but the implementation's own body with the test in front. Otherwise
``dispatch`` does what torch does: the innermost ``TorchFunctionMode`` of this thread
first (popped while it runs, so the calls it makes go to the next one), then each argument
whose type overrides ``__torch_function__`` (subclasses before their bases; a Tensor
subclass, ``fx.Proxy``), then the implementation when nothing overrides. Lists and tuples
of arguments are searched too (``cat([proxy, proxy])``).

The implementations themselves (``ember._aten``'s functions) stay plain: ember's own calls
between ops pay nothing, as torch's C++ calls do not re-dispatch.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import textwrap
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


# The types the public functions' check lets through: PLAIN while no mode is entered in
# any thread, nothing while one is. So the check is one set lookup per argument, with no
# separate test for modes (a function without positional parameters still tests MODES).
UNCHECKED: set = set(PLAIN)
_modes_lock = threading.Lock()


def count_modes(change: int) -> None:
    """A mode was entered (+1) or left (-1) in some thread: update MODES and UNCHECKED."""
    with _modes_lock:
        MODES[0] += change
        if MODES[0]:
            UNCHECKED.clear()
        else:
            UNCHECKED.update(PLAIN)


def plain_type(cls) -> None:
    """Mark ``cls`` as never overriding ``__torch_function__`` (Tensor, Parameter, Size)."""
    with _modes_lock:
        PLAIN.add(cls)
        if not MODES[0]:
            UNCHECKED.add(cls)


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
_NAMESPACE = {"__name__": __name__, "_MODES": MODES, "_PLAIN": UNCHECKED, "_dispatch": dispatch}


# NumPy's names that torch's argument parser accepts for its own (``torch.cat(ts, axis=0)``,
# ``x.sum(axis=1, keepdims=True)``), for the torch namespace and Tensor methods.
NUMPY_ALIASES = (("dim", "axis"), ("keepdim", "keepdims"))


def _numpy_aliases(fn, names: list) -> tuple:
    """(alias, parameter) for each of ``fn``'s parameters with a default that torch also
    accepts under NumPy's name, where ``fn`` has no parameter of that name."""
    code = fn.__code__
    positional = code.co_varnames[: code.co_argcount]
    with_default = set(positional[len(positional) - len(fn.__defaults__ or ()) :])
    with_default |= set(fn.__kwdefaults__ or {})
    if code.co_flags & _CO_VARKEYWORDS:
        return ()
    return tuple((a, p) for p, a in NUMPY_ALIASES if p in with_default and a not in names)


def _default_of(fn, name: str):
    code = fn.__code__
    positional = code.co_varnames[: code.co_argcount]
    if name in (fn.__kwdefaults__ or {}):
        return fn.__kwdefaults__[name]
    return fn.__defaults__[positional.index(name) - (len(positional) - len(fn.__defaults__))]


def _alias(public, value, alias_value, default, name: str, alias: str):
    """``alias_value`` for a parameter also given by its NumPy name (torch's rule)."""
    if value is not default:
        raise TypeError(f"{public.__name__}() got an unexpected keyword argument '{alias}'")
    return alias_value


_ALIAS_UNSET = object()  # an alias parameter not given


def _parameters(fn, aliases: bool = False) -> tuple | None:
    """How ``fn``'s wrapper is written, or None when ``fn`` is not a Python function (a
    builtin, a class): (signature, the checks and the call with every argument, the keyword-
    only parameters that have defaults, the checks and the call without them, packing of
    args and kwargs, whether it has positional parameters, the NumPy aliases it accepts)."""
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
    # keyword-only parameters with a default: left out of the call when at it (a call
    # passing keywords costs more than the wrapper's check)
    optional = tuple(k for k in keyword if k in (fn.__kwdefaults__ or {}))
    sig: list = []
    for k, name in enumerate(positional):
        sig.append(name)
        if k + 1 == n_posonly:
            sig.append("/")
    if star:
        sig.append("*" + star)
    elif keyword:
        sig.append("*")
    sig += keyword
    numpy = _numpy_aliases(fn, list(names[: i + bool(starstar)])) if aliases else ()
    if numpy and not (star or keyword):
        sig.append("*")
    sig += [f"{a}=_ALIAS_UNSET" for a, _ in numpy]
    if starstar:
        sig.append("**" + starstar)

    def call_and_checks(kw: list) -> tuple:
        call = positional + ([f"*{star}"] if star else []) + [f"{k}={k}" for k in kw]
        checks = [f"type({name}) not in _PLAIN" for name in positional + kw]
        if star:
            checks.append(f"(bool({star}) and _any_not_plain({star}))")
        if starstar:
            call.append("**" + starstar)
            checks.append(f"(bool({starstar}) and _any_not_plain({starstar}.values()))")
        return ", ".join(call), tuple(checks)

    required = [k for k in keyword if k not in optional]
    full_call, full_checks = call_and_checks(keyword)
    short_call, short_checks = call_and_checks(required)
    args = positional + ([f"*{star}"] if star else [])
    pack_args = "(" + "".join(f"{a}, " for a in args) + ")"
    pack_kwargs = "{" + ", ".join(f"{k!r}: {k}" for k in keyword) + "}"
    if starstar:
        pack_kwargs = "{" + (pack_kwargs[1:-1] + ", " if keyword else "") + f"**{starstar}}}"
    return (
        ", ".join(sig),
        full_call,
        full_checks,
        optional,
        short_call,
        short_checks,
        pack_args,
        pack_kwargs,
        bool(positional),  # its first check tests for modes too (see UNCHECKED)
        numpy,
    )


def _any_not_plain(items) -> bool:
    for x in items:
        if type(x) not in UNCHECKED:
            return True
    return False


_NAMESPACE["_any_not_plain"] = _any_not_plain
_NAMESPACE["_alias"] = _alias
_NAMESPACE["_ALIAS_UNSET"] = _ALIAS_UNSET
# A file name inside the package with no source behind it: tracebacks, anomaly detection's
# forward stack and ember.compile's user-line search skip the wrappers as ember's frames.
_WRAPPER_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "<public function>")
# Compiled wrapper bodies, one per distinct signature: 900 wrappers share ~300 of them,
# and compiling is most of what making a wrapper costs at import.
_TEMPLATES: dict = {}


# Implementations whose public function is their own body with the check in front (one
# frame instead of a wrapper calling the implementation): the operators and methods that
# run once per op in eager code, where a wrapper's frame is a measurable share of the op
# (BENCHMARKS.md, issue 25). The body is recompiled from the implementation's source; a
# function whose source is not available keeps the wrapper.
FUSED = frozenset(
    """add sub mul div true_divide neg pow matmul _radd _rsub _rmul _rtruediv _rpow
    sum mean exp log tanh sigmoid relu sin cos sqrt abs""".split()
)
_FUSED_NAMES = ("_tf_MODES", "_tf_PLAIN", "_tf_dispatch", "_tf_self", "_tf_impl", "_tf_any")


def _function_tree(code):
    """The syntax tree of the function whose code is ``code``, read from its source file
    (its first decorator line to its last statement's line, and the lines that statement
    continues on); None when it cannot be read."""
    lines = linecache.getlines(code.co_filename)
    first = code.co_firstlineno - 1
    last = max((line for _, _, line in code.co_lines() if line is not None), default=0)
    if not lines or not first < last <= len(lines):
        return None
    indent = len(lines[first]) - len(lines[first].lstrip())
    for end in range(last, min(last + 8, len(lines)) + 1):
        following = next((line for line in lines[end:] if line.strip()), "")
        if following and len(following) - len(following.lstrip()) > indent:
            continue  # the block goes on (a statement continued, a nested function's body)
        try:  # (blank lines first: the tree has the file's line numbers)
            tree = ast.parse("\n" * first + textwrap.dedent("".join(lines[first:end])))
        except SyntaxError:
            continue
        if tree.body and isinstance(tree.body[0], ast.FunctionDef):
            return tree.body[0]
        return None
    return None


_FUSED_CODE: dict = {}  # implementation -> the code of its fused public function, or None


def _fuse(impl, name: str, parts: tuple):
    """``impl``'s public function as one function: the check, then ``impl``'s own body
    (see FUSED); None when that cannot be made."""
    if impl not in _FUSED_CODE:
        _FUSED_CODE[impl] = _fused_code(impl, parts)
    inner = _FUSED_CODE[impl]
    if inner is None:
        return None
    optional = parts[3]
    holder: list = [None]
    values = {
        "_tf_MODES": MODES,
        "_tf_PLAIN": UNCHECKED,
        "_tf_dispatch": dispatch,
        "_tf_self": holder,
        "_tf_impl": impl,
        "_tf_any": _any_not_plain,
        **{f"_tf_DEFAULT_{k}": impl.__kwdefaults__[k] for k in optional},
    }
    own = dict(zip(impl.__code__.co_freevars, impl.__closure__ or ()))
    closure = tuple(own[n] if n in own else types.CellType(values[n]) for n in inner.co_freevars)
    code = inner.replace(co_name=name)
    public = types.FunctionType(code, impl.__globals__, name, impl.__defaults__, closure)
    public.__kwdefaults__ = impl.__kwdefaults__
    public._ember_public = holder  # [what dispatch passes as func]: the function itself
    holder[0] = public
    return public


def _fused_code(impl, parts: tuple):
    """The code of ``impl``'s fused public function (its parameters' check, then its body)
    or None when its source cannot be read or recompiled."""
    code = impl.__code__
    if code.co_flags & (0x20 | 0x80 | 0x100 | 0x200) or "__class__" in code.co_freevars:
        return None  # generators, coroutines, zero-argument super()
    fn = _function_tree(code)
    if fn is None or fn.name != code.co_name:
        return None
    sig, call, checks, optional, short_call, short_checks, pack_args, pack_kwargs = parts[:8]
    # the keyword-only parameters with defaults: checked only when not at them
    rest = [
        f"({k} is not _tf_DEFAULT_{k} and {c})"
        for k, c in zip(optional, [c for c in checks if c not in short_checks])
    ]
    modes = [] if parts[8] else ["_tf_MODES[0]"]
    test = " or ".join([*modes, *short_checks, *rest])
    test = test.replace("_PLAIN", "_tf_PLAIN").replace("_any_not_plain", "_tf_any")
    send = f"_tf_dispatch(_tf_self[0], _tf_impl, {pack_args}, {pack_kwargs})"
    # the check, and an enclosing function whose parameters are the body's free variables
    # and the check's names, each parsed at the function's first line
    pad = "\n" * (code.co_firstlineno - 1)
    prologue = ast.parse(f"{pad}if {test}:\n    return {send}\n").body
    fn.decorator_list = []
    fn.body[0:0] = prologue
    names = (*code.co_freevars, *_FUSED_NAMES, *(f"_tf_DEFAULT_{k}" for k in optional))
    module = ast.parse(f"{pad}def _outer({', '.join(names)}):\n    pass\n")
    module.body[0].body = [fn]
    try:
        compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    outer_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    fused = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType))

    def lines(c) -> set:
        return {line for _, _, line in c.co_lines() if line is not None}

    # every line of the implementation is in the recompiled body (none was cut off)
    return fused if lines(code) <= lines(fused) else None


def _generate(impl, name: str, aliases: bool = False):
    """The wrapper of ``impl`` (see the module docstring); None if ``impl`` is not a Python
    function (the caller keeps it unwrapped). aliases: it also accepts NumPy's names for
    ``dim`` and ``keepdim`` as torch's parser does (NUMPY_ALIASES)."""
    parts = _parameters(impl, aliases)
    if parts is None:
        return None
    fusable = impl.__name__ in FUSED and (impl.__module__ or "").startswith("ember._aten")
    if fusable and not parts[9]:  # (the fused functions take axis= themselves)
        public = _fuse(impl, name, parts)
        if public is not None:
            return _describe(public, impl, name)
    code = _TEMPLATES.get(parts)
    if code is None:
        sig, call, checks, optional, short_call, short_checks, pack_args, pack_kwargs = parts[:8]
        modes = [] if parts[8] else ["_MODES[0]"]
        dispatch = f"        return _dispatch(_self[0], _impl, {pack_args}, {pack_kwargs})\n"
        resolve = "".join(
            f"    if {a} is not _ALIAS_UNSET:\n"
            f"        {p} = _alias(_self[0], {p}, {a}, _DEFAULT_{p}, {p!r}, {a!r})\n"
            for a, p in parts[9]
        )
        if optional:
            # at their defaults (the usual call), the keyword-only parameters are neither
            # checked nor passed; otherwise the full check and call
            at_defaults = " and ".join(f"{k} is _DEFAULT_{k}" for k in optional)
            rest = [c for c in checks if c not in short_checks]
            source = (
                f"def wrapper({sig}):\n{resolve}"
                f"    if {' or '.join([*modes, *short_checks])}:\n{dispatch}"
                f"    if {at_defaults}:\n"
                f"        return _impl({short_call})\n"
                f"    if {' or '.join(rest)}:\n{dispatch}"
                f"    return _impl({call})\n"
            )
        else:
            source = (
                f"def wrapper({sig}):\n{resolve}"
                f"    if {' or '.join([*modes, *checks])}:\n{dispatch}"
                f"    return _impl({call})\n"
            )
        namespace: dict = {"_ALIAS_UNSET": _ALIAS_UNSET}
        exec(compile(source, _WRAPPER_FILE, "exec"), namespace)  # noqa: S102
        code = _TEMPLATES[parts] = namespace["wrapper"].__code__
    holder: list = [None]
    namespace = dict(_NAMESPACE, _impl=impl, _self=holder)
    for k in parts[3]:
        namespace[f"_DEFAULT_{k}"] = impl.__kwdefaults__[k]
    for _, p in parts[9]:
        namespace[f"_DEFAULT_{p}"] = _default_of(impl, p)
    wrapper = types.FunctionType(code.replace(co_name=name), namespace, name)
    wrapper.__defaults__ = impl.__defaults__
    wrapper.__kwdefaults__ = impl.__kwdefaults__
    if parts[9]:
        wrapper.__kwdefaults__ = {**(impl.__kwdefaults__ or {})}
        wrapper.__kwdefaults__.update((a, _ALIAS_UNSET) for a, _ in parts[9])
    wrapper._ember_public = holder  # [what dispatch passes as func]: the wrapper itself
    holder[0] = wrapper
    return _describe(wrapper, impl, name)


def _describe(wrapper, impl, name: str):
    """``wrapper`` with ``impl``'s documentation and the links back to it."""
    wrapper.__doc__ = impl.__doc__
    wrapper.__module__ = impl.__module__
    wrapper.__qualname__ = getattr(impl, "__qualname__", name)
    wrapper.__annotations__ = getattr(impl, "__annotations__", {})
    wrapper.__wrapped__ = impl
    wrapper._ember_impl = impl
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
    wrapper = _generate(getattr(impl, "_ember_impl", impl), _valid_name(name), aliases=True)
    if wrapper is None:
        return impl
    wrapper.__name__ = name
    wrapper.__qualname__ = f"{owner_name}.{name}"
    return wrapper


class _DispatchingProperty(property):
    # A Tensor property whose getter dispatches (torch passes ``Tensor.<name>.__get__``).
    # No class docstring: it would hide each property's own ``__doc__``.
    pass


def wrap_property(prop: property, name: str) -> property:
    """``prop`` with a getter that dispatches when a mode is active or ``self`` overrides."""
    fget = prop.fget
    if fget is None or isinstance(prop, _DispatchingProperty):
        return prop
    holder: list = [None]

    def get(self):
        if type(self) not in UNCHECKED:
            return dispatch(holder[0], fget, (self,), {})
        return fget(self)

    get.__name__ = name
    get.__doc__ = fget.__doc__
    get._ember_impl = fget
    new = _DispatchingProperty(get, prop.fset, prop.fdel, prop.__doc__)
    new.__doc__ = prop.__doc__ or fget.__doc__  # what help() and the docs show
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
# The namespaces whose functions torch's C argument parser reads (NumPy's aliases apply)
_PARSED = frozenset({"torch", "torch.linalg", "torch.special", "torch.fft"})
NAMESPACES: list = []  # (torch's module name, the namespace dict) as installed


def install_namespace(
    namespace: dict, names, module: str, skip=frozenset(), owner: str | None = None
) -> None:
    """Replace each of ``names`` in ``namespace`` (a module's globals) that is one of
    ember's Python functions by its dispatching wrapper (at import: nothing is replaced
    at run time afterwards). ``owner``: the wrappers' ``__module__`` (default: the
    namespace's module), where pickle finds them by name."""
    NAMESPACES.append((module, namespace))
    owner = owner or namespace.get("__name__", module)
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
            wrapper = _generate(impl, _valid_name(name), aliases=module in _PARSED)
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
    "__rtruediv__": "__rdiv__",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__neg__": "neg",
    "__pos__": "positive",
    "__abs__": "abs",
    "__rand__": "bitwise_and",
    "__ror__": "bitwise_or",
    "__rxor__": "bitwise_xor",
    "__ne__": "ne",
    "__lt__": "lt",
    "__le__": "le",
    "__gt__": "gt",
    "__ge__": "ge",
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
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
