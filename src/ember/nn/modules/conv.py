"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d`` and ``ConvTranspose1d/2d/3d``."""

from __future__ import annotations

import math

from ... import _creation
from ..._aten import nn_conv as _conv
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _factory, _init_bias_param, _reset_bias
from .module import Module
from .utils import _tuple_of as _ntuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_VALID_PADDING_STRINGS = {"same", "valid"}
_VALID_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """The state every convolution shares (torch's ``_ConvNd``): sizes as tuples, weight
    (out, in / groups, *k) or, transposed, (in, out / groups, *k), optional bias.

    Initialised like torch: ``kaiming_uniform_(a=sqrt(5))`` weight, U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) bias.
    """

    _nd = 2

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
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
        if isinstance(padding, str):
            if padding not in _VALID_PADDING_STRINGS:
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {_VALID_PADDING_STRINGS}"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
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
        self.transposed = transposed
        self.output_padding = output_padding
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
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_creation.empty(shape, **kw))
        _init_bias_param(self, bias, out_channels, kw)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw the weights and bias with torch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _reset_bias(self.weight, self.bias, zero_without_fan_in=True)

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


class _Conv(_ConvNd):
    _fn = None  # the functional convolution, set per class

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
        n = self._nd
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, n),
            _ntuple(stride, n),
            padding if isinstance(padding, str) else _ntuple(padding, n),
            _ntuple(dilation, n),
            False,
            _ntuple(0, n),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._fn
        if self.padding_mode != "zeros":
            return conv(
                F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                weight,
                bias,
                self.stride,
                (0,) * self._nd,
                self.dilation,
                self.groups,
            )
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) inputs with ``stride``, ``padding`` (int,
    ``'valid'`` or ``'same'``), ``dilation``, ``groups``, ``bias`` and ``padding_mode``
    (``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> conv = nn.Conv1d(2, 4, 3, padding=1, padding_mode="reflect")
        >>> conv
        Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,), padding_mode=reflect)
        >>> conv(ember.ones(5, 2, 8)).shape
        torch.Size([5, 4, 8])
    """

    _nd = 1
    _fn = staticmethod(_conv.conv1d)


class Conv2d(_Conv):
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

    _nd = 2
    _fn = staticmethod(_conv.conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) inputs (options as ``Conv2d``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Conv3d(1, 2, 3)(ember.ones(1, 1, 4, 4, 4)).shape
        torch.Size([1, 2, 2, 2, 2])
    """

    _nd = 3
    _fn = staticmethod(_conv.conv3d)


class _ConvTranspose(_ConvNd):
    _fn = None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}'
            )
        n = self._nd
        super().__init__(
            in_channels,
            out_channels,
            _ntuple(kernel_size, n),
            _ntuple(stride, n),
            _ntuple(padding, n),
            _ntuple(dilation, n),
            True,
            _ntuple(output_padding, n),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(
        self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None
    ) -> list:
        """The output padding giving ``output_size`` (torch's rule and messages)."""
        if output_size is None:
            return list(_ntuple(self.output_padding, 1))
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                f"(got {len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = (
                (input.size(d + num_non_spatial_dims) - 1) * stride[d]
                - 2 * padding[d]
                + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                + 1
            )
            min_sizes.append(dim_size)
            max_sizes.append(dim_size + stride[d] - 1)
        spatial = type(input.shape)(tuple(input.shape)[num_non_spatial_dims:])
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of {spatial})"
                )
        return [size - lo for size, lo in zip(output_size, min_sizes)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(
                f"Only `zeros` padding mode is supported for {self.__class__.__name__}"
            )
        output_padding = self._output_padding(
            input,
            output_size,
            self.stride,
            self.padding,
            self.kernel_size,
            self._nd,
            self.dilation,
        )
        return type(self)._fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution over (N, C_in, L) inputs (the adjoint of ``Conv1d``), with
    ``stride``, ``padding``, ``output_padding``, ``groups``, ``bias`` and ``dilation``;
    ``forward(input, output_size=None)``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> up = nn.ConvTranspose1d(2, 3, 4, stride=2, padding=1)
        >>> up
        ConvTranspose1d(2, 3, kernel_size=(4,), stride=(2,), padding=(1,))
        >>> up(ember.ones(1, 2, 5)).shape
        torch.Size([1, 3, 10])
    """

    _nd = 1
    _fn = staticmethod(_conv.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution over (N, C_in, H, W) inputs (the adjoint of ``Conv2d``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> up = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
        >>> up(ember.ones(1, 2, 4, 4), output_size=(8, 8)).shape
        torch.Size([1, 3, 8, 8])
    """

    _nd = 2
    _fn = staticmethod(_conv.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution over (N, C_in, D, H, W) inputs (the adjoint of ``Conv3d``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ConvTranspose3d(1, 1, 2, stride=2)(ember.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 4, 4, 4])
    """

    _nd = 3
    _fn = staticmethod(_conv.conv_transpose3d)
