"""Activation modules (torch.nn.modules.activation): each holds its options and calls its
``ember.nn.functional`` form; ``extra_repr`` prints what torch's prints."""

from __future__ import annotations

from ... import _creation
from ..._overrides import warn as _warn
from ..._tensor import device as _device
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Threshold",
    "ReLU",
    "RReLU",
    "Hardtanh",
    "ReLU6",
    "Sigmoid",
    "Hardsigmoid",
    "Tanh",
    "SiLU",
    "Mish",
    "Hardswish",
    "ELU",
    "CELU",
    "SELU",
    "GLU",
    "GELU",
    "Hardshrink",
    "LeakyReLU",
    "LogSigmoid",
    "Softplus",
    "Softshrink",
    "PReLU",
    "Softsign",
    "Tanhshrink",
    "Softmin",
    "Softmax",
    "Softmax2d",
    "LogSoftmax",
]


def _inplace_repr(inplace: bool, sep: str = "") -> str:
    return f"{sep}inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


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
    """Elementwise ``tanh``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Tanh()(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([-0.7616,  0.0000,  0.7616])
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Elementwise logistic sigmoid.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Sigmoid()(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([0.2689, 0.5000, 0.7311])
    """

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
    """Log of the softmax along ``dim`` (computed stably).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.LogSoftmax(dim=1)(ember.zeros(1, 4))
        tensor([[-1.3863, -1.3863, -1.3863, -1.3863]])
    """

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Threshold(Module):
    """``value`` where the input is ``<= threshold``, else the input.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Threshold(0.5, -1.0)(ember.tensor([0.0, 2.0]))
        tensor([-1.,  2.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_repr(self.inplace, ', ')}"


class RReLU(Module):
    """Randomised leaky ReLU: slopes drawn from U(lower, upper) in training, their mean in
    evaluation.

    Example:
        >>> from ember import nn
        >>> nn.RReLU(0.1, 0.3)
        RReLU(lower=0.1, upper=0.3)
    """

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_repr(self.inplace, ', ')}"


class Hardtanh(Module):
    """The input clamped to ``[min_val, max_val]``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Hardtanh(-2.0, 2.0)(ember.tensor([-3.0, 1.0]))
        tensor([-2.,  1.])
    """

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            _warn(
                "keyword argument `min_value` is deprecated and renamed to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            _warn(
                "keyword argument `max_value` is deprecated and renamed to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"
            )

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace = _inplace_repr(self.inplace, ", ")
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.ReLU6()(ember.tensor([-1.0, 8.0]))
        tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Hardsigmoid()(ember.tensor([-3.0, 0.0, 3.0]))
        tensor([0.0000, 0.5000, 1.0000])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class SiLU(_Inplace):
    """``x * sigmoid(x)``.

    Example:
        >>> from ember import nn
        >>> nn.SiLU(inplace=True)
        SiLU(inplace=True)
    """

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Mish()(ember.tensor([0.0, 1.0]))
        tensor([0.0000, 0.8651])
    """

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Hardswish()(ember.tensor([-1.5, 0.0, 3.0]))
        tensor([-0.3750,  0.0000,  3.0000])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class ELU(Module):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Example:
        >>> from ember import nn
        >>> nn.ELU(0.5)
        ELU(alpha=0.5)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.CELU(alpha=2.0)(ember.tensor([-2.0, 0.0, 1.0]))
        tensor([-1.2642,  0.0000,  1.0000])
    """

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """Scaled ELU with the self-normalising constants.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.SELU()(ember.tensor([-1.0, 0.0, 1.0]))
        tensor([-1.1113,  0.0000,  1.0507])
    """

    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    """Gated linear unit along ``dim``: ``a * sigmoid(b)`` for the input's two halves.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.GLU()(ember.ones(2, 4)).shape
        torch.Size([2, 2])
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardshrink(Module):
    """The input where ``|x| > lambd``, else 0.

    Example:
        >>> from ember import nn
        >>> nn.Hardshrink()
        Hardshrink(0.5)
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Softshrink(0.5)(ember.tensor([-1.0, 0.25, 2.0]))
        tensor([-0.5000,  0.0000,  1.5000])
    """

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class LogSigmoid(Module):
    """``log(sigmoid(x))``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.LogSigmoid()(ember.tensor([0.0]))
        tensor([-0.6931])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Example:
        >>> from ember import nn
        >>> nn.Softplus(beta=2)
        Softplus(beta=2, threshold=20.0)
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Leaky ReLU with a learnt slope (one, or one per channel: ``num_parameters``).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> m = nn.PReLU(3, init=0.1)
        >>> m
        PReLU(num_parameters=3)
        >>> m(-ember.ones(1, 3))
        tensor([[-0.1000, -0.1000, -0.1000]], grad_fn=<PreluKernelBackward0>)
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        if device is not None:
            _device(device)
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """``x / (1 + |x|)``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Softsign()(ember.tensor([-1.0, 0.0, 3.0]))
        tensor([-0.5000,  0.0000,  0.7500])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Tanhshrink()(ember.tensor([0.0, 1.0]))
        tensor([0.0000, 0.2384])
    """

    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(Module):
    """Softmax of ``-x`` along ``dim``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Softmin(dim=1)(ember.tensor([[1.0, 2.0]]))
        tensor([[0.7311, 0.2689]])
    """

    def __init__(self, dim=None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of each location of a 3-D ``(C, H, W)`` or 4-D
    ``(N, C, H, W)`` input.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> nn.Softmax2d()(ember.zeros(1, 2, 1, 1)).flatten()
        tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)


from .multihead import MultiheadAttention  # noqa: E402, F401  (torch keeps it in this module)
