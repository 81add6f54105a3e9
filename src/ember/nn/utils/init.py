"""``skip_init`` (torch.nn.utils.init)."""

from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls`` whose parameters are left uninitialised (``device``
    must be accepted by its constructor, as torch requires).

    Example:
        >>> from ember import nn
        >>> from ember.nn.utils import skip_init
        >>> skip_init(nn.Linear, 3, 4).weight.shape
        torch.Size([4, 3])
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.pop("device", None)
    # ember has no meta device: construct normally, then leave the values as they are
    # (torch leaves them uninitialised; any values are valid "uninitialised" ones).
    return module_cls(*args, **kwargs)
