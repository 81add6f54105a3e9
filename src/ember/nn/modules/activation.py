"""Activation modules: ``ReLU``, ``LeakyReLU``, ``GELU``, ``Tanh``, ``Sigmoid``,
``Softmax``, ``LogSoftmax``."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "GELU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """``max(x, 0)`` elementwise.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReLU()(ember.tensor([-1.0, 1.0]))
        tensor([0., 1.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where positive, else ``negative_slope * x``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.LeakyReLU(0.1)(ember.tensor([-1.0, 1.0]))
        tensor([-0.1000,  1.0000])
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class GELU(Module):
    """Gaussian error linear unit (``approximate='none'`` exact erf form, or ``'tanh'``).

    Example:
        >>> from ember import nn
        >>> nn.GELU(approximate="tanh")
        GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={repr(self.approximate)}"


class Tanh(Module):
    """Elementwise ``tanh``."""

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Elementwise logistic sigmoid."""

    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    """Softmax along ``dim``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Softmax(dim=1)(ember.zeros(1, 4))
        tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log of the softmax along ``dim`` (computed stably)."""

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
