"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` in 1, 2 and 3 dims, each ``F.pad`` with its mode."""

from __future__ import annotations

from ..._aten.nn_conv import pad
from .module import Module
from .utils import _tuple_of as _ntuple

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


class _CircularPadNd(Module):
    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        return pad(input, self.padding, "circular")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(Module):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ReflectionPadNd(Module):
    def forward(self, input):
        return pad(input, self.padding, "reflect")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReplicationPadNd(Module):
    def forward(self, input):
        return pad(input, self.padding, "replicate")

    def extra_repr(self) -> str:
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """Pad the last 1 dim(s) with circular (wrap-around) (``padding``: an int or 2 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.CircularPad1d(1)
        CircularPad1d((1, 1))
        >>> nn.CircularPad1d((1, 2) * 1)(ember.ones(1, 2, 3)).shape
        torch.Size([1, 2, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dim(s) with circular (wrap-around) (``padding``: an int or 4 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.CircularPad2d(1)
        CircularPad2d((1, 1, 1, 1))
        >>> nn.CircularPad2d((1, 2) * 2)(ember.ones(1, 1, 3, 3)).shape
        torch.Size([1, 1, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 4)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 3 and input.dim() != 4:
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dim(s) with circular (wrap-around) (``padding``: an int or 6 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.CircularPad3d(1)
        CircularPad3d((1, 1, 1, 1, 1, 1))
        >>> nn.CircularPad3d((1, 2) * 3)(ember.ones(1, 1, 3, 3, 3)).shape
        torch.Size([1, 1, 6, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 6)

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4 and input.dim() != 5:
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class ConstantPad1d(_ConstantPadNd):
    """Pad the last 1 dim(s) with a constant ``value`` (``padding``: an int or 2 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ConstantPad1d(1, 0.5)
        ConstantPad1d(padding=(1, 1), value=0.5)
        >>> nn.ConstantPad1d((1, 2) * 1, 0.5)(ember.ones(1, 2, 3)).shape
        torch.Size([1, 2, 6])
    """

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _ntuple(padding, 2)


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dim(s) with a constant ``value`` (``padding``: an int or 4 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ConstantPad2d(1, 0.5)
        ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)
        >>> nn.ConstantPad2d((1, 2) * 2, 0.5)(ember.ones(1, 1, 3, 3)).shape
        torch.Size([1, 1, 6, 6])
    """

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _ntuple(padding, 4)


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dim(s) with a constant ``value`` (``padding``: an int or 6 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ConstantPad3d(1, 0.5)
        ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0.5)
        >>> nn.ConstantPad3d((1, 2) * 3, 0.5)(ember.ones(1, 1, 3, 3, 3)).shape
        torch.Size([1, 1, 6, 6, 6])
    """

    def __init__(self, padding, value: float) -> None:
        super().__init__(value)
        self.padding = _ntuple(padding, 6)


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last 1 dim(s) with their reflection (``padding``: an int or 2 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReflectionPad1d(1)
        ReflectionPad1d((1, 1))
        >>> nn.ReflectionPad1d((1, 2) * 1)(ember.ones(1, 2, 3)).shape
        torch.Size([1, 2, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last 2 dim(s) with their reflection (``padding``: an int or 4 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReflectionPad2d(1)
        ReflectionPad2d((1, 1, 1, 1))
        >>> nn.ReflectionPad2d((1, 2) * 2)(ember.ones(1, 1, 3, 3)).shape
        torch.Size([1, 1, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last 3 dim(s) with their reflection (``padding``: an int or 6 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReflectionPad3d(1)
        ReflectionPad3d((1, 1, 1, 1, 1, 1))
        >>> nn.ReflectionPad3d((1, 2) * 3)(ember.ones(1, 1, 3, 3, 3)).shape
        torch.Size([1, 1, 6, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 6)


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last 1 dim(s) with the edge value (``padding``: an int or 2 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReplicationPad1d(1)
        ReplicationPad1d((1, 1))
        >>> nn.ReplicationPad1d((1, 2) * 1)(ember.ones(1, 2, 3)).shape
        torch.Size([1, 2, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last 2 dim(s) with the edge value (``padding``: an int or 4 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReplicationPad2d(1)
        ReplicationPad2d((1, 1, 1, 1))
        >>> nn.ReplicationPad2d((1, 2) * 2)(ember.ones(1, 1, 3, 3)).shape
        torch.Size([1, 1, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last 3 dim(s) with the edge value (``padding``: an int or 6 ints, last dim
    first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReplicationPad3d(1)
        ReplicationPad3d((1, 1, 1, 1, 1, 1))
        >>> nn.ReplicationPad3d((1, 2) * 3)(ember.ones(1, 1, 3, 3, 3)).shape
        torch.Size([1, 1, 6, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 6)


class ZeroPad1d(ConstantPad1d):
    """Pad the last 1 dim(s) with zeros (``padding``: an int or 2 ints, last dim first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ZeroPad1d(1)
        ZeroPad1d((1, 1))
        >>> nn.ZeroPad1d((1, 2) * 1)(ember.ones(1, 2, 3)).shape
        torch.Size([1, 2, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dim(s) with zeros (``padding``: an int or 4 ints, last dim first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ZeroPad2d(1)
        ZeroPad2d((1, 1, 1, 1))
        >>> nn.ZeroPad2d((1, 2) * 2)(ember.ones(1, 1, 3, 3)).shape
        torch.Size([1, 1, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dim(s) with zeros (``padding``: an int or 6 ints, last dim first).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ZeroPad3d(1)
        ZeroPad3d((1, 1, 1, 1, 1, 1))
        >>> nn.ZeroPad3d((1, 2) * 3)(ember.ones(1, 1, 3, 3, 3)).shape
        torch.Size([1, 1, 6, 6, 6])
    """

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"
