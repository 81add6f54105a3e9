"""In-place random fills (``Tensor.uniform_``, ``normal_``, ``random_``, ``bernoulli_``,
``exponential_``), drawing from ember's generator.

Like torch, they refuse a leaf that requires grad while grad mode is on (init code runs
them under no_grad), bump the version counter, and on a tensor in the graph record a node
whose gradient is zero.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import _rng
from .._tensor import Tensor
from ._core import defop, register
from .inplace import fill_with


def _random_node(name: str):
    """The node of a random fill: the filled values do not depend on the old ones."""
    return defop(name, vjp={"self": lambda g: g * 0}, jvp=lambda t_self: None)


UniformBackward0 = _random_node("UniformBackward0")
NormalBackward0 = _random_node("NormalBackward0")
RandomBackward0 = _random_node("RandomBackward0")  # random_(from, to)
RandomBackward2 = _random_node("RandomBackward2")  # random_() up to the dtype's maximum
BernoulliBackward1 = _random_node("BernoulliBackward1")  # bernoulli_(p tensor)
BernoulliBackward2 = _random_node("BernoulliBackward2")  # bernoulli_(p number)
ExponentialBackward0 = _random_node("ExponentialBackward0")


def _num(x) -> str:
    return f"{float(x):g}"


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


@register("uniform_", function=False, method=True)
def uniform_(self: Tensor, a=0.0, b=1.0, *, generator=None, **kwargs) -> Tensor:
    """Fill in place with samples uniform on ``[a, b)`` (``from``/``to`` keywords also work).

    Example:
        >>> import ember
        >>> x = ember.empty(3).uniform_(-1, 1)
        >>> bool(((x >= -1) & (x < 1)).all())
        True
    """
    a, b = _scalar(kwargs.pop("from", a)), _scalar(kwargs.pop("to", b))
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dt = self._data.dtype
    if dt.kind not in "fcV":
        raise NotImplementedError(
            f"\"check_uniform_bounds\" not implemented for '{_dtype.scalar_name(dt)}'"
        )
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_num(a)} > "
            f"to={_num(b)}"
        )
    values = a + (b - a) * _rng(generator).random(self._data.shape)
    return fill_with(self, values, UniformBackward0)


@register("normal_", function=False, method=True)
def normal_(self: Tensor, mean=0.0, std=1.0, *, generator=None) -> Tensor:
    """Fill in place with samples from N(``mean``, ``std``**2).

    Example:
        >>> import ember
        >>> ember.empty(2, 3).normal_(0, 0.02).shape
        torch.Size([2, 3])
    """
    mean, std = _scalar(mean), _scalar(std)
    dt = self._data.dtype
    if dt.kind not in "fcV":
        raise NotImplementedError(
            f"\"normal_kernel_cpu\" not implemented for '{_dtype.scalar_name(dt)}'"
        )
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    values = mean + std * _rng(generator).standard_normal(self._data.shape)
    return fill_with(self, values, NormalBackward0)


def _random_bounds(dt: np.dtype):
    """Inclusive upper bound of ``random_()`` without ``to``: the dtype's max, or
    2**mantissa for floats so that every value is representable."""
    if dt.kind == "b":
        return 1
    if dt.kind in "fcV":
        return 2 ** (np.finfo(dt).nmant + 1)
    return int(np.iinfo(dt).max)


@register("random_", function=False, method=True)
def random_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """Fill in place with integers uniform on ``[from, to - 1]``.

    ``random_(to)``, ``random_(from, to)``, ``random_(from=.., to=..)``; without ``to`` the
    range ends at the dtype's maximum (2**mantissa for floating dtypes).

    Example:
        >>> import ember
        >>> x = ember.zeros(4, dtype=ember.int64).random_(0, 3)
        >>> bool(((x >= 0) & (x < 3)).all())
        True
    """
    lo = kwargs.pop("from", None)
    hi = kwargs.pop("to", None)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) == 1:
        if lo is not None or hi is not None:
            raise TypeError("random_() received an invalid combination of arguments")
        hi = args[0]
    elif len(args) == 2:
        lo, hi = args
    elif len(args) > 2:
        raise TypeError("random_() received an invalid combination of arguments")
    for v in (lo, hi):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
            raise TypeError(
                f"random_() received an invalid combination of arguments - got "
                f"({type(v).__name__}), but expected one of:\n"
                " * (*, torch.Generator generator = None)\n"
                " * (int from, int to, *, torch.Generator generator = None)\n"
                " * (int to, *, torch.Generator generator = None)\n"
            )
    lo = 0 if lo is None else int(lo)
    if hi is None:
        top = _random_bounds(self._data.dtype)
    else:
        if lo >= hi:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}"
            )
        top = int(hi) - 1
    values = _rng(generator).integers(lo, top, size=self._data.shape, endpoint=True)
    return fill_with(self, values, RandomBackward0 if hi is not None else RandomBackward2)


@register("bernoulli_", function=False, method=True)
def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill in place with 0/1 samples, 1 with probability ``p`` (a number or a tensor).

    Example:
        >>> import ember
        >>> ember.empty(3).bernoulli_(1.0)
        tensor([1., 1., 1.])
    """
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p._data, self._data.shape)
        node = BernoulliBackward1
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
        probs = p
        node = BernoulliBackward2
    values = _rng(generator).random(self._data.shape) < probs
    return fill_with(self, values, node)


@register("exponential_", function=False, method=True)
def exponential_(self: Tensor, lambd=1.0, *, generator=None) -> Tensor:
    """Fill in place with samples from the exponential distribution of rate ``lambd``.

    Example:
        >>> import ember
        >>> bool((ember.empty(5).exponential_(2.0) >= 0).all())
        True
    """
    lambd = _scalar(lambd)
    dt = self._data.dtype
    if dt.kind not in "fcV":
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {_dtype.scalar_name(dt)}"
        )
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    values = _rng(generator).exponential(1.0 / lambd, size=self._data.shape)
    return fill_with(self, values, ExponentialBackward0)
