"""ember: PyTorch's autograd API on NumPy.

Example:
    >>> import ember as torch
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = ((x + 2) * (x + 2) * 3).mean()
    >>> out.backward()
    >>> x.grad
    tensor([[4.5000, 4.5000],
            [4.5000, 4.5000]])
"""

# The torch namespace (ember._torch: what a first program needs), re-exported.
from . import _dtype
from ._torch import *  # noqa: F403
from ._torch import _assert  # torch._assert: private, and used by libraries (torchvision)

from .version import __version__  # torch 2.13's, ember's release as its local label


def _eager_kernel(name: str):
    """The compiler's checked C loop for an eager op (see ``_aten._core.eager_kernel``);
    deferred: the compiler loads when an op first asks for one."""
    from ._compile import lowerings  # deferred: the compiler loads on an op's first ask

    return lowerings.eager(name)


from ._aten import _core as _ops_core  # noqa: E402

_ops_core.set_kernel_loader(_eager_kernel)


def _first_backward() -> None:
    """What the first backward pass sets up: glibc malloc's thresholds for training's
    array churn (``_allocator``), and the compiled core (``_compile.core``) where gcc can
    build it."""
    import logging

    try:
        from . import _allocator  # deferred: ctypes loads on the first backward, not at import
        from ._compile import core  # deferred: gcc and the compiler load on the first backward

        _allocator.tune()
        core.install()
    except Exception as e:  # noqa: BLE001 (speed-ups only: the backward runs without them)
        logging.getLogger(__name__).warning("ember's first-backward set-up failed: %r", e)


from .autograd import engine as _engine  # noqa: E402

_engine.set_first_backward_hook(_first_backward)


# What ``import ember`` does not load: submodules and names a first program does not need,
# loaded on first use (as torch loads some of its submodules), so that importing costs the
# core, autograd and the ops alone.
_LAZY_MODULES = frozenset(
    """nn optim utils testing accelerator amp backends cpu cuda distributed hub jit
    distributions func multiprocessing onnx profiler quasirandom random viz ops fx
    overrides serialization functional compiler _dynamo _inductor mps sparse library _C
    __config__ ao""".split()
)
_LAZY_NAMES = {
    "as_torch": "._as_torch",
    "vmap": ".func",  # torch.vmap is torch.func.vmap
    "compile": "._compile",
    "get_device_module": "._device_module",
    "load": ".serialization",
    "save": ".serialization",
    "PyTorchFileReader": "._C",
    "ScriptModule": ".jit",
    **dict.fromkeys(
        """autocast get_autocast_dtype is_autocast_cache_enabled is_autocast_enabled
        set_autocast_cache_enabled set_autocast_dtype set_autocast_enabled""".split(),
        ".amp.autocast_mode",
    ),
}


def __getattr__(name: str):
    # torch.bfloat16 and the float8 types are made on first use so that ``import ember``
    # never imports ml_dtypes.
    if name in _dtype.ML_NAMES:
        return _dtype.ml_dtype(name)
    import importlib  # (a first use only: later lookups find the global)

    if name in _LAZY_MODULES:
        value = importlib.import_module("." + name, __name__)
    elif name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name], __name__), name)
    else:
        raise AttributeError(f"module 'ember' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted({*globals(), *_LAZY_MODULES, *_LAZY_NAMES, *_dtype.ML_NAMES})
