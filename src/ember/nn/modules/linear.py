"""``Identity`` and ``Linear``."""

from __future__ import annotations

import math

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear"]


def _factory(device, dtype) -> dict:
    if device is not None:
        from ..._tensor import device as _device

        _device(device)
    return {"dtype": dtype}


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Identity(54, unused="x")(ember.ones(2))
        tensor([1., 1.])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` (out_features, in_features).

    Weights start as ``kaiming_uniform_(a=sqrt(5))`` and the bias as U(-1/sqrt(fan_in),
    1/sqrt(fan_in)), drawn from ember's global generator (torch's defaults).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> fc = nn.Linear(3, 2)
        >>> fc
        Linear(in_features=3, out_features=2, bias=True)
        >>> fc(ember.ones(5, 3)).shape
        torch.Size([5, 2])
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in_features), **kw))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights and bias with torch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )
