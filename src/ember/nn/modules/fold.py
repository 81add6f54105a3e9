"""``Fold`` and ``Unfold`` (col2im and im2col)."""

from __future__ import annotations

from ..._aten.nn_conv import fold, unfold
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum sliding blocks (N, C k, L) back into an (N, C, *output_size) image.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Fold((3, 3), 2)
        Fold(output_size=(3, 3), kernel_size=2, dilation=1, padding=0, stride=1)
        >>> nn.Fold((3, 3), 2)(ember.ones(1, 4, 4))
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            "output_size={output_size}, kernel_size={kernel_size}, "
            "dilation={dilation}, padding={padding}, stride={stride}".format(**self.__dict__)
        )


class Unfold(Module):
    """Extract sliding blocks of an (N, C, H, W) input as columns (N, C k, L).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Unfold(2)
        Unfold(kernel_size=2, dilation=1, padding=0, stride=1)
        >>> nn.Unfold(2)(ember.ones(1, 3, 4, 4)).shape
        torch.Size([1, 12, 9])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            "kernel_size={kernel_size}, dilation={dilation}, padding={padding},"
            " stride={stride}".format(**self.__dict__)
        )
