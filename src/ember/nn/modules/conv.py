"""``Conv2d``."""

from __future__ import annotations

import math

from ... import _creation
from .. import functional as F
from .. import init
from .._conv import _pair
from ..parameter import Parameter
from .linear import _factory, _init_bias_param, _reset_bias
from .module import Module

__all__ = ["Conv2d"]

_VALID_PADDING_STRINGS = {"same", "valid"}
_VALID_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class Conv2d(Module):
    """2-D convolution over (N, C_in, H, W) inputs with ``stride``, ``padding`` (int, pair,
    ``'valid'`` or ``'same'``), ``dilation``, ``groups``, ``bias`` and ``padding_mode``
    (``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``).

    Initialised like torch: ``kaiming_uniform_(a=sqrt(5))`` weight, U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) bias.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> conv = nn.Conv2d(1, 4, 3, padding=1)
        >>> conv
        Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        >>> conv(ember.ones(2, 1, 8, 8)).shape
        torch.Size([2, 4, 8, 8])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size = _pair(kernel_size, "kernel_size")
        stride = _pair(stride, "stride")
        dilation = _pair(dilation, "dilation")
        if isinstance(padding, str):
            if padding not in _VALID_PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {_VALID_PADDING_STRINGS}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _pair(padding, "padding")
        if padding_mode not in _VALID_PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_VALID_PADDING_MODES}, but got "
                f"padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = False
        self.output_padding = (0, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            rev = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i] = left
                    rev[2 * i + 1] = total - left
        else:
            rev = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        self.weight = Parameter(
            _creation.empty((out_channels, in_channels // groups, *kernel_size), **kw)
        )
        _init_bias_param(self, bias, out_channels, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights and bias with torch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _reset_bias(self.weight, self.bias, zero_without_fan_in=False)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return F.conv2d(
                F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                weight,
                bias,
                self.stride,
                (0, 0),
                self.dilation,
                self.groups,
            )
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)
