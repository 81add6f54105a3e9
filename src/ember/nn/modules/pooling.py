"""``MaxPool2d`` and ``AvgPool2d``."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool2d", "AvgPool2d"]


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
