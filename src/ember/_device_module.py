"""``torch.get_device_module``: the ``torch.<device type>`` module of a device (``torch.cpu``
for the CPU, ``torch.cuda`` ...), which libraries use to reach a backend's functions
(``empty_cache``, ``synchronize``, ``manual_seed``) without naming it.
"""

from __future__ import annotations

import sys
import types

from ._tensor import device as _device

__all__ = ["get_device_module"]


def get_device_module(device: _device | str | None = None) -> types.ModuleType:
    """The module ``torch.<type>`` of ``device`` (a ``torch.device`` or a string such as
    ``"cuda:0"``); ``None``: the current accelerator's, which on ember (CPU only) is
    ``torch.cpu``. A device type without such a module raises torch's RuntimeError.

    Example:
        >>> import ember
        >>> ember.get_device_module("cpu") is ember.cpu
        True
        >>> ember.get_device_module(ember.device("cuda:0")) is ember.cuda
        True
    """
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        name = "cpu"  # no accelerator: torch's current accelerator is then the CPU
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = getattr(sys.modules[__package__], name, None)  # (lazy modules load here)
    if module is None:
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'."
        )
    return module
