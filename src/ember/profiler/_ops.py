"""Timing wrappers for the public op functions, swapped in only while a profiler runs.

``install`` replaces each registered op (``ember.mul``, ``Tensor.__mul__``, ``Tensor.add_``,
``ember.linalg.*``, ``ember.special.*``) and each public ``ember.nn.functional`` function
with a wrapper that records an ``aten::<name>`` event; ``uninstall`` puts the originals
back. Swapping rather than checking a flag inside every op keeps the unprofiled path
exactly as fast as without a profiler.
"""

from __future__ import annotations

import functools
import inspect
import sys

from .. import _tensor
from .._aten import _core as _registry
from ..autograd import profiler as _core
from ..nn import functional as _F

# Tensor methods that print, convert or inspect rather than compute: not timed.
_SKIP = {
    "__repr__",
    "__str__",
    "__format__",
    "__len__",
    "__iter__",
    "__bool__",
    "__index__",
    "__int__",
    "__float__",
    "__hash__",
    "__array__",
    "size",
    "dim",
    "numel",
    "item",
    "tolist",
    "numpy",
}

# Dunder methods -> the aten op torch reports for them.
_DUNDER = {
    "truediv": "div",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "getitem": "index",
    "setitem": "index_put_",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "invert": "bitwise_not",
    "pos": "positive",
}

_saved: list = []  # (owner, name, original, was_in_owner_dict)


def aten_name(name: str) -> str:
    """The name torch's profiler gives the op behind a function or method name.

    Example:
        >>> from ember.profiler._ops import aten_name
        >>> aten_name("__radd__"), aten_name("__itruediv__"), aten_name("matmul")
        ('aten::add', 'aten::div_', 'aten::matmul')
    """
    if name.startswith("__") and name.endswith("__"):
        core = name[2:-2]
        suffix = ""
        if core.startswith("i") and core[1:] in _DUNDER_BASE:
            core, suffix = core[1:], "_"
        elif core.startswith("r") and core[1:] in _DUNDER_BASE:
            core = core[1:]
        name = _DUNDER.get(core, core) + suffix
    return "aten::" + name


_DUNDER_BASE = {
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
}


def _wrap(fn, opname: str):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        rec = _core._active[0] if _core._active else None
        if rec is None:
            return fn(*args, **kwargs)
        ev = rec.begin(opname, args)
        out = None
        try:
            out = fn(*args, **kwargs)
            return out
        finally:
            rec.end(ev, out)

    timed.__wrapped_op__ = fn
    return timed


def _swap(owner, name: str, opname: str) -> None:
    original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if original is None or not callable(original) or isinstance(original, (type, property)):
        return
    if not (inspect.isfunction(original) or inspect.isbuiltin(original)):
        return
    _saved.append((owner, name, original))
    setattr(owner, name, _wrap(original, opname))


def install() -> None:
    """Swap the timing wrappers in (idempotent)."""
    if _saved:
        return
    modules = {
        "torch": sys.modules["ember"],
        "linalg": sys.modules.get("ember.linalg"),
        "special": sys.modules.get("ember.special"),
    }
    for ns, module in modules.items():
        if module is None:
            continue
        for name, fn in _registry._NAMESPACES.get(ns, {}).items():
            if getattr(module, name, None) is fn:
                _swap(module, name, aten_name(name))
    for name in list(_registry._METHODS) + list(_registry._INPLACE):
        if name not in _SKIP:
            _swap(_tensor.Tensor, name, aten_name(name))
    for name in getattr(_F, "__all__", [n for n in vars(_F) if not n.startswith("_")]):
        fn = getattr(_F, name, None)
        if inspect.isfunction(fn) and fn.__module__.startswith("ember"):
            _swap(_F, name, aten_name(name))


def uninstall() -> None:
    """Put the original functions back."""
    while _saved:
        owner, name, original = _saved.pop()
        setattr(owner, name, original)


_core.register_op_hooks(install, uninstall)
