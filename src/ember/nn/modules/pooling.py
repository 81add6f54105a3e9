"""Pooling layers: max and average (1-d, 2-d) and adaptive average and max (1-d, 2-d)."""

from __future__ import annotations

from ..._aten import nn_conv as _conv
from .. import functional as F
from .module import Module
from .utils import _tuple_of as _ntuple

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
]


class MaxPool2d(Module):
    """2-D max pooling (``stride`` defaults to ``kernel_size``; padding counts as -inf).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> pool = nn.MaxPool2d(2)
        >>> pool
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
        >>> pool(ember.ones(1, 1, 4, 4)).shape
        torch.Size([1, 1, 2, 2])
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            "kernel_size={kernel_size}, stride={stride}, padding={padding}"
            ", dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__)
        )


class AvgPool2d(Module):
    """2-D average pooling (``count_include_pad``, ``ceil_mode``, ``divisor_override``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AvgPool2d(2)(ember.ones(1, 1, 4, 4))
        tensor([[[[1., 1.],
                  [1., 1.]]]])
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(MaxPool2d):
    """1-D max pooling over (N, C, L) or (C, L) inputs (``stride`` defaults to
    ``kernel_size``; padding counts as -inf; ``return_indices``, ``ceil_mode``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.MaxPool1d(2)(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
        tensor([[[3., 2.]]])
    """

    def forward(self, input):
        return _conv.max_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class AvgPool1d(Module):
    """1-D average pooling over (N, C, L) or (C, L) inputs (``ceil_mode``,
    ``count_include_pad``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AvgPool1d(3, stride=2)
        AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return _conv.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class _AdaptivePool(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """1-D adaptive average pooling to ``output_size`` positions.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AdaptiveAvgPool1d(2)(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
        tensor([[[2., 1.]]])
    """

    def forward(self, input):
        return _conv.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """2-D adaptive average pooling to ``output_size`` (int or pair; None keeps a size).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AdaptiveAvgPool2d((1, None))(ember.ones(2, 3, 4, 5)).shape
        torch.Size([2, 3, 1, 5])
    """

    def forward(self, input):
        return _conv.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """1-D adaptive max pooling to ``output_size`` positions (``return_indices``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AdaptiveMaxPool1d(2)(ember.tensor([[[1.0, 3.0, 2.0, 0.0]]]))
        tensor([[[3., 2.]]])
    """

    def forward(self, input):
        return _conv.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """2-D adaptive max pooling to ``output_size`` (``return_indices``: also the flat
    ``h * W + w`` index of each maximum).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AdaptiveMaxPool2d(1)(ember.arange(4.0).reshape(1, 1, 2, 2))
        tensor([[[[3.]]]])
    """

    def forward(self, input):
        return _conv.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class MaxPool3d(MaxPool2d):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) inputs (``stride`` defaults to
    ``kernel_size``; padding counts as -inf; ``return_indices``, ``ceil_mode``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.MaxPool3d(2)
        MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def forward(self, input):
        return _conv.max_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )


class AvgPool3d(AvgPool2d):
    """3-D average pooling (``count_include_pad``, ``ceil_mode``, ``divisor_override``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AvgPool3d(2)(ember.ones(1, 1, 2, 2, 2))
        tensor([[[[[1.]]]]])
    """

    def forward(self, input):
        return _conv.avg_pool3d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if (stride is not None) else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """A partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``.

    Example:
        >>> from ember import nn
        >>> nn.MaxUnpool1d(2)
        MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    _n = 1

    def forward(self, input, indices, output_size=None):
        return _conv.max_unpool1d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool2d(_MaxUnpoolNd):
    """A partial inverse of ``MaxPool2d``: ``forward(input, indices, output_size=None)``.

    Example:
        >>> from ember import nn
        >>> nn.MaxUnpool2d(2)
        MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _n = 2

    def forward(self, input, indices, output_size=None):
        return _conv.max_unpool2d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class MaxUnpool3d(_MaxUnpoolNd):
    """A partial inverse of ``MaxPool3d``: ``forward(input, indices, output_size=None)``.

    Example:
        >>> from ember import nn
        >>> nn.MaxUnpool3d(2)
        MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    _n = 3

    def forward(self, input, indices, output_size=None):
        return _conv.max_unpool3d(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
            "ceil_mode={ceil_mode}".format(**self.__dict__)
        )


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling: ``(sum over each window of x**p) ** (1/p)``.

    Example:
        >>> from ember import nn
        >>> nn.LPPool1d(2, 3)
        LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    """

    def forward(self, input):
        return _conv.lp_pool1d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling: ``(sum over each window of x**p) ** (1/p)``.

    Example:
        >>> from ember import nn
        >>> nn.LPPool2d(2, 3)
        LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    """

    def forward(self, input):
        return _conv.lp_pool2d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling: ``(sum over each window of x**p) ** (1/p)``.

    Example:
        >>> from ember import nn
        >>> nn.LPPool3d(2, 3)
        LPPool3d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    """

    def forward(self, input):
        return _conv.lp_pool3d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class AdaptiveAvgPool3d(_AdaptivePool):
    """3-D adaptive average pooling to ``output_size`` (int or triple; None keeps a size).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AdaptiveAvgPool3d((1, None, 2))(ember.ones(2, 3, 4, 5, 6)).shape
        torch.Size([2, 3, 1, 5, 2])
    """

    def forward(self, input):
        return _conv.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """3-D adaptive max pooling to ``output_size`` (``return_indices``: also the flat
    ``(d * H + h) * W + w`` index of each maximum).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.AdaptiveMaxPool3d(1)(ember.arange(8.0).reshape(1, 1, 2, 2, 2))
        tensor([[[[[7.]]]]])
    """

    def forward(self, input):
        return _conv.adaptive_max_pool3d(input, self.output_size, self.return_indices)


__all__ += [
    "MaxPool3d",
    "AvgPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool3d",
]
