"""The optional compiled core: ``recording.record`` and the engine's loops in C.

Every op records its result through ``record`` and every backward pass runs ``_execute``'s
loop; in Python they cost about 1.5 and 1.2 µs per op, most of a tiny op's time. Where
kernels can be built (gcc and Python's headers, ``kernels.available()``), ``install()``
builds ``c/core.c`` (once, then from the kernel cache) and puts its functions in the
Python functions' places (``record``, ``engine._execute`` and ``engine._dependencies``).
They are the same algorithms on the same objects, and hand everything off their common
path back to the Python code, which stays and runs wherever C cannot (WebAssembly, no
compiler, ``EMBER_COMPILE_KERNELS=0``, ``EMBER_COMPILED_CORE=0``).

The package installs it on the first backward pass (``engine.set_first_backward_hook``),
so ``import ember`` stays free of the compiler and of gcc.

Example:
    >>> import ember
    >>> from ember._compile import core
    >>> x = ember.ones(2, requires_grad=True)
    >>> (x * 3).sum().backward()  # the first backward pass installs it where it can
    >>> x.grad
    tensor([3., 3.])
    >>> core.installed() in (True, False)
    True
"""

from __future__ import annotations

import logging
import os
import sys

from .. import _meta
from .._mode import state as mode_state
from .._tensor import Tensor
from ..autograd import engine, graph, recording
from . import kernels

_log = logging.getLogger(__name__)

# The Python functions the C ones replace, kept to hand work back to and to uninstall.
_PYTHON = {
    "record": recording.record,
    "execute": engine._execute,
    "dependencies": engine._dependencies,
}
_module: list = []  # [the built module] once install() succeeded


def why_not() -> str:
    """Why the compiled core cannot be used here, or "" when it can."""
    if os.environ.get("EMBER_COMPILED_CORE", "1") == "0":
        return "EMBER_COMPILED_CORE=0"
    return kernels.available()


def installed() -> bool:
    """Whether ``record`` and the engine's loop are the C ones now."""
    return engine._execute is not _PYTHON["execute"]


def _build():
    if not _module:
        module = kernels.build(
            {"core_init": '#include "core.c"\n', "record": "", "execute": "", "dependencies": ""}
        )
        module.core_init(
            {
                "Tensor": Tensor,
                "Node": graph.Node,
                "SavedOutput": graph.SavedOutput,
                "record": _PYTHON["record"],
                "execute": _PYTHON["execute"],
                "run_special": engine._run_special,
                "raise_modified": graph._raise_modified,
                "fit": engine._fit,
                "add": engine._add,
                "grad_accumulator": graph.grad_accumulator,
                "current_view_fn": graph.current_view_fn,
                "saved_value": recording._saved_value,
                "as_view": recording.as_view,
                "meta_made": _meta.MADE,
                "fw_on": recording._on,
                "observe": recording._observe,
                "mode_state": mode_state,
                "freed": graph._FREED,
                "unsaved": graph.UNSAVED,
                "no_edge": recording._NO_EDGE,
            }
        )
        _module.append(module)
    return _module[0]


def _rebind(old, new) -> None:
    """Point every loaded ember module's global ``old`` function at ``new`` (the ops import
    ``record`` by name; a module loaded later keeps the Python one, which is as correct)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("ember.") or name == "ember":
            namespace = getattr(module, "__dict__", {})
            for key, value in list(namespace.items()):
                if value is old:
                    namespace[key] = new


def install() -> bool:
    """Put the C ``record`` and engine loop in place of the Python ones, if they can be
    built here; returns whether they are in place. A build failure is logged, not raised:
    the Python code keeps running."""
    if installed():
        return True
    why = why_not()
    if why:
        _log.debug("the compiled core is off: %s", why)
        return False
    try:
        module = _build()
    except (RuntimeError, OSError, TypeError, KeyError) as e:  # KernelCacheError included
        _log.warning("the compiled core could not be built, the Python code runs: %s", e)
        return False
    _rebind(_PYTHON["record"], module.record)
    engine._execute = module.execute
    engine._dependencies = module.dependencies
    return True


def uninstall() -> None:
    """Put the Python ``record`` and engine loop back (tests compare the two)."""
    if _module:
        _rebind(_module[0].record, _PYTHON["record"])
    engine._execute = _PYTHON["execute"]
    engine._dependencies = _PYTHON["dependencies"]
