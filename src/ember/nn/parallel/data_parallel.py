"""``torch.nn.parallel.data_parallel``: with no GPU the wrapped module runs as it is."""

from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module`` (reachable as ``.module``, state-dict keys ``module.*``) and calls
    it directly, as torch does when no CUDA device is available.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> model = nn.DataParallel(nn.Linear(2, 1))
        >>> model(ember.ones(3, 2)).shape, list(model.state_dict())
        (torch.Size([3, 1]), ['module.weight', 'module.bias'])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """``module(*inputs, **module_kwargs)``: there is one device, the CPU."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
