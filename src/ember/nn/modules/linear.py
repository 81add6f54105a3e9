"""``Identity``, ``Linear`` and ``Bilinear``."""

from __future__ import annotations

import math

from ... import _creation
from ..._aten.nn_layers import bilinear
from ..._tensor import device as _device
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]


def _factory(device, dtype) -> dict:
    if device is not None:
        _device(device)
    return {"dtype": dtype}


def _init_bias_param(module: Module, bias: bool, size, kw: dict) -> None:
    """Give ``module`` an uninitialised ``bias`` parameter of ``size`` (``bias`` true) or
    register ``bias`` as None."""
    if bias:
        module.bias = Parameter(_creation.empty(size, **kw))
    else:
        module.register_parameter("bias", None)


def _reset_bias(weight, bias, zero_without_fan_in: bool) -> None:
    """torch's default bias init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with ``weight``'s fan-in;
    without fan-in the bias becomes 0 if ``zero_without_fan_in`` (``Linear``), else is left
    as it is (``Conv2d``). No-op for no bias."""
    if bias is None:
        return
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    if fan_in != 0:
        bound = 1 / math.sqrt(fan_in)
    elif zero_without_fan_in:
        bound = 0
    else:
        return
    init.uniform_(bias, -bound, bound)


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
        _init_bias_param(self, bias, out_features, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights and bias with torch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _reset_bias(self.weight, self.bias, zero_without_fan_in=True)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """``y = x1^T W x2 + b`` with ``weight`` (out_features, in1_features, in2_features);
    weight and bias start as U(-1/sqrt(in1_features), 1/sqrt(in1_features)) (torch).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> m = nn.Bilinear(2, 3, 4)
        >>> m
        Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)
        >>> m(ember.ones(5, 2), ember.ones(5, 3)).shape
        torch.Size([5, 4])
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features), **kw))
        _init_bias_param(self, bias, out_features, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A plain :class:`Linear` under another name (torch's type for ``out_proj``).

    Example:
        >>> from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
        >>> NonDynamicallyQuantizableLinear(4, 4)
        NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
