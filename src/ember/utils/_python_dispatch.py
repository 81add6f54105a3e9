"""torch's ``TorchDispatchMode``: a hook that sees every declared op (ember's equivalent of an
aten operator) as it runs, below autograd, in the forward and in the backward.

Where ``TorchFunctionMode`` sees public calls (``F.linear``), a dispatch mode sees the ops
they come down to (``aten.t.default``, ``aten.addmm.default``), including those the backward
pass runs. Each op reaches ``__torch_dispatch__(func, types, args, kwargs)`` with ``func``
its ``ember.ops.aten`` overload and the arguments in torch's schema order; what the mode
returns is the op's result (``func(*args, **kwargs)`` computes it). Inside, the mode is off
its thread's stack, so the ops ``func`` runs go to the next mode, or just run.

Example:
    >>> import ember
    >>> from ember.utils._python_dispatch import TorchDispatchMode
    >>> class Log(TorchDispatchMode):
    ...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
    ...         print(func)
    ...         return func(*args, **(kwargs or {}))
    >>> with Log():
    ...     y = ember.ones(2) * 2
    aten.mul.Tensor
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import _mode
from .._tensor import DATA_CLASSES, Tensor, wrap_data
from ..autograd import recording as _recording
from ..autograd.grad_mode import no_grad

__all__ = [
    "TorchDispatchMode",
    "is_traceable_wrapper_subclass",
]


class TorchDispatchMode:
    """A context whose ``__torch_dispatch__(func, types, args, kwargs)`` sees each declared
    op run in it (this thread's), forward and backward (see the module docstring)."""

    def __init__(self, _dispatch_key=None) -> None:
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
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


def _push_mode(mode: TorchDispatchMode) -> None:
    _mode.dispatch_state.modes.append(mode)
    _mode.dispatch_count[0] += 1
    _recording.refresh_on()


def _pop_mode() -> TorchDispatchMode:
    modes = _mode.dispatch_state.modes
    if not modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = modes.pop()
    _mode.dispatch_count[0] -= 1
    _recording.refresh_on()
    return mode


def _get_current_dispatch_mode():
    """The innermost dispatch mode of this thread, or None."""
    modes = _mode.dispatch_state.modes
    return modes[-1] if modes else None


def _get_current_dispatch_mode_stack() -> list:
    """This thread's dispatch modes, outermost first."""
    return list(_mode.dispatch_state.modes)


@contextlib.contextmanager
def _pop_mode_temporarily():
    """The innermost mode, off the stack for the block."""
    modes = _mode.dispatch_state.modes
    mode = modes.pop()
    try:
        yield mode
    finally:
        modes.append(mode)


@contextlib.contextmanager
def _disable_current_modes():
    """This thread's dispatch modes, all off the stack for the block."""
    modes = _mode.dispatch_state.modes
    saved, modes[:] = list(modes), []
    try:
        yield saved
    finally:
        modes[:] = saved


def is_traceable_wrapper_subclass(t) -> bool:
    """ember has no wrapper subclasses (``_make_wrapper_subclass``): always False."""
    return False


# -- the hook the recording path calls --------------------------------------------------------


def _dispatch_declared(cls, outs, inputs: tuple, params: tuple):
    """``recording.DISPATCH_HOOK``: hand the declared op ``cls`` (about to be recorded with
    the arrays ``outs``) to this thread's innermost dispatch mode; the arrays it returns."""
    from .. import ops  # deferred: torch.ops sits above utils in the layers

    op = ops.aten_op(cls)
    if op is None:  # ember-only nodes (CopySlices, fused RNN layers): nothing to show
        return outs
    func, args, kwargs = _call_for(op, cls, inputs, params, outs)
    modes = _mode.dispatch_state.modes
    mode = modes.pop()  # while it runs, the ops it calls go to the next mode
    try:
        with no_grad():  # below autograd: what func computes is not recorded again
            result = mode.__torch_dispatch__(func, (), args, kwargs)
    finally:
        modes.append(mode)
    # aten's op may return more than ember's node records (linalg_inv_ex: inverse, info)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    arrays = [r._data if isinstance(r, Tensor) else np.asarray(r) for r in results[: len(outs)]]
    return arrays if cls._multi_output else (arrays[0],)


# declaration -> True when torch's argument order, found by name, reproduces the op (the
# mode then gets the aten overload itself), False when a _DeclaredOp stands in for it
_SCHEMA_OK: dict = {}


def _call_for(op, cls, inputs: tuple, params: tuple, outs):
    """(func, args, kwargs) for the mode: the aten overload with torch's arguments when they
    can be found by name and reproduce the op (checked once per declaration), else a
    stand-in that prints and compares as the overload and runs the declaration."""
    key = _key(cls, params)  # checked per declaration and parameter values
    ok = _SCHEMA_OK.get(key) if key is not None else False
    if ok is not False:
        found = _aten_arguments(op, cls, inputs, params)
        if found is not None:
            args, kwargs = found
            if ok is None:
                ok = _SCHEMA_OK[key] = _reproduces(op, args, kwargs, cls, outs)
            if ok:
                return op, args, kwargs
        else:
            _SCHEMA_OK[key] = False
    plain = [_below_autograd(x) for x in inputs]
    shown = tuple(p for n, p in zip(cls._param_names, params) if not n.startswith("_"))
    args = (plain, *shown) if cls._variadic else (*plain, *shown)
    return _DeclaredOp(op, cls, params, outs, args), args, {}


def _key(cls, params: tuple):
    """(cls, params) as a dictionary key, or None when a parameter is not hashable (an
    array): such ops always get the stand-in."""
    try:
        key = (cls, params)
        hash(key)
    except TypeError:
        return None
    if len(_SCHEMA_OK) > 10_000:
        _SCHEMA_OK.clear()
    return key


def _aten_arguments(op, cls, inputs: tuple, params: tuple):
    """The op's arguments in torch's schema order, found by name among the declaration's
    inputs and parameters (ember names them as torch's derivatives do); an argument the
    declaration does not have takes its default, and the ones after it go by keyword.
    None when a required one is missing."""
    copy = op._schema.is_mutable  # an in-place overload must not write the real input
    if cls._variadic:
        values = {cls._inputs[0]: [_below_autograd(x, copy) for x in inputs]}
    else:
        values = {n: _below_autograd(x, copy) for n, x in zip(cls._inputs, inputs)}
    for name, value in zip(cls._param_names, params):
        if not name.startswith("_"):
            values[name] = value
    args: list = []
    kwargs: dict = {}
    by_keyword = False
    used = 0
    for arg in op._schema.arguments:
        if arg.name in values:
            used += 1
            if by_keyword or arg.kwarg_only:
                kwargs[arg.name] = values[arg.name]
            else:
                args.append(values[arg.name])
        elif arg.has_default:
            by_keyword = True
        else:
            return None
    if used != len(values):  # a value of the declaration torch's schema has no name for
        return None
    return tuple(args), kwargs


def _reproduces(op, args, kwargs, cls, outs) -> bool:
    """Does ``op(*args, **kwargs)`` give the arrays the declaration computed?"""
    from .._creation import default_generator  # deferred: see _dispatch_declared

    args = tuple(_below_autograd(a, True) for a in args)  # the check writes nothing real
    kwargs = {k: _below_autograd(v, True) for k, v in kwargs.items()}
    state = default_generator.get_state()  # and draws nothing: random ops draw again
    try:
        with _disable_current_modes(), no_grad():
            got = op(*args, **kwargs)
    except Exception:  # noqa: BLE001 (a mismatch of arguments: the stand-in is used)
        return False
    finally:
        default_generator.set_state(state)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(got) < len(outs):
        return False
    for g, want in zip(got, outs):
        g = g._data if isinstance(g, Tensor) else np.asarray(g)
        want = np.asarray(want)
        if g.shape != want.shape or g.dtype != want.dtype:
            return False
        if not np.array_equal(g, want, equal_nan=True):
            return False
    return True


class _DeclaredOp:
    """Stands in for an aten overload whose arguments ember's declaration orders otherwise:
    prints, hashes and compares as the overload (``func == aten.cat.default``); calling it
    runs the declaration's forward on the arguments the mode was given (the declaration's
    inputs, then its parameters)."""

    def __init__(self, op, cls, params: tuple, outs, args: tuple) -> None:
        self._op, self._cls, self._params, self._outs = op, cls, params, outs
        self._given = args

    def __call__(self, *args, **kwargs):
        from .._aten._core import run  # deferred: the ops layer sits above autograd's hooks

        cls = self._cls
        unchanged = len(args) == len(self._given) and all(a is b for a, b in zip(args, self._given))
        if unchanged or cls.forward is None:
            # the arguments the op ran on (or a node recorded by code of its own): its
            # result as computed (the forward also saw the operands cast as torch casts)
            outs = [wrap_data(o if type(o) in DATA_CLASSES else np.asarray(o)) for o in self._outs]
            return outs if cls._multi_output else outs[0]
        inputs = tuple(args[0]) if cls._variadic else args[: len(cls._inputs)]
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
        with no_grad():
            res = run(cls, tuple(inputs), tuple(arrays), self._params)
        return [_with_class(r) for r in res] if cls._multi_output else _with_class(res)

    def __eq__(self, other) -> bool:
        return other is self._op or (isinstance(other, _DeclaredOp) and other._op is self._op)

    def __hash__(self) -> int:
        return hash(self._op)

    def __str__(self) -> str:
        return str(self._op)

    def __repr__(self) -> str:
        return repr(self._op)

    def __getattr__(self, name: str):
        return getattr(self._op, name)


def _with_class(t):
    """A result holding sparse data gets the sparse tensors' class (``run`` makes Tensors)."""
    if isinstance(t, Tensor) and type(t._data) in DATA_CLASSES:
        t.__class__ = DATA_CLASSES[type(t._data)]
    return t


def _below_autograd(x, copy: bool = False):
    """A tensor argument as the op sees it: the same data (a copy for an in-place
    overload: ember writes the input itself), outside the graph."""
    if isinstance(x, Tensor):
        t = wrap_data(x._data.copy() if copy else x._data)
        if not copy:
            t._vc = x._vc
        return t
    if isinstance(x, list):
        return [_below_autograd(v, copy) for v in x]
    return x


_recording.DISPATCH_HOOK[0] = _dispatch_declared
