"""``ember.nn``: modules, layers, losses, functional ops and initialisation (torch.nn).

Example:
    >>> import ember
    >>> from ember import nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> loss = nn.CrossEntropyLoss()(model(ember.randn(3, 4)), ember.tensor([0, 1, 1]))
    >>> loss.backward()
    >>> model[0].weight.grad.shape
    torch.Size([8, 4])
"""

from . import attention, functional, init, modules, parallel, utils
from .modules import *  # noqa: F403  (every layer, listed once in modules.__all__)
from .modules.lazy import UninitializedBuffer, UninitializedParameter
from .parallel import DataParallel
from .parameter import Buffer, Parameter

__all__ = [
    "Buffer",
    "DataParallel",
    "UninitializedBuffer",
    "UninitializedParameter",
    "Parameter",
    "attention",
    "functional",
    "init",
    "parallel",
    "utils",
    *modules.__all__,
]
