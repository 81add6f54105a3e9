"""The thread-local modes that every layer consults: grad mode and inference mode.

They live at the bottom of the package (below ``_tensor`` and ``autograd``) because tensor
creation reads them too; ``ember.autograd.grad_mode`` holds the public context managers.
"""

from __future__ import annotations

import threading

from . import _dtype


class ModeState(threading.local):
    """Per-thread flags; the class attributes are the defaults every new thread sees."""

    enabled = True  # grad mode: operations on tensors that require grad are recorded
    inference = False  # inside inference_mode(): new tensors are inference tensors
    compiling = 0  # ember.compile'd calls running (torch.compiler.is_compiling())


state = ModeState()


class DispatchState(threading.local):
    """This thread's TorchDispatchModes (``utils._python_dispatch``), innermost last."""

    def __init__(self) -> None:
        self.modes: list = []


dispatch_state = DispatchState()
# How many dispatch modes are entered, in all threads: while any is, ``record`` takes its
# slow path (``recording._on``) and the engine runs rules on Tensors.
dispatch_count = [0]


class AutocastState(threading.local):
    """Per-thread autocast regions (``ember.amp.autocast_mode`` holds the public API)."""

    def __init__(self) -> None:
        self.enabled: dict = {}  # device type -> an enabled region is active
        # device type -> dtype; torch's CPU default, bfloat16, is made on first use
        self.dtype: dict = {}
        self.cache_enabled = True


autocast = AutocastState()
# Enabled-or-not CPU regions alive in any thread: the hooked ops test this first (a list
# index), so code outside autocast never reads the thread-local state.
autocast_active = [0]


def autocast_dtype(device_type: str):
    d = autocast.dtype.get(device_type)
    if d is None:
        return _dtype._bfloat16() if device_type == "cpu" else _dtype.float16
    return d


def _autocast_cast(args: tuple, np_dtype) -> tuple:
    out = []
    for a in args:
        data = getattr(a, "_data", None)  # a Tensor (not imported here: _tensor imports us)
        if data is not None:
            k = data.dtype
            if k != np_dtype and k.kind in "fV" and k.itemsize < 8:  # float64 is left alone
                a = a.to(np_dtype)
        out.append(a)
    return tuple(out)


def autocast_lower(*args) -> tuple:
    """``args`` with their floating tensors (not float64) cast to the CPU region's dtype, for
    the ops of torch's CPU lower-precision autocast list (mm, matmul, linear, conv, ...);
    unchanged outside an enabled CPU region. Callers test ``autocast_active[0]`` first."""
    if not autocast.enabled.get("cpu", False):
        return args
    return _autocast_cast(args, autocast_dtype("cpu").np)


def autocast_full(*args) -> tuple:
    """``args`` with their floating tensors cast to float32 inside an enabled CPU region, for
    the ops of torch's CPU fp32 autocast list (the losses)."""
    if not autocast.enabled.get("cpu", False):
        return args
    return _autocast_cast(args, _dtype.float32.np)
