"""In-place random fills (``Tensor.uniform_``, ``normal_``, ``random_``, ``bernoulli_``,
``exponential_``) and ``torch.normal`` of tensors, drawing from ember's generator.

Like torch, they refuse a leaf that requires grad while grad mode is on (init code runs
them under no_grad), bump the version counter, and on a tensor in the graph record a node
whose gradient is zero.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._creation import _rng
from .._creation import multinomial as _multinomial
from .._creation import normal as _normal_float
from .._meta import META_RANDOM, MetaArray
from .._tensor import Tensor, broadcast_shapes
from ._core import defop, record, register, write_out
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


_MISSING = object()


def _rng_for(self: Tensor, generator):
    """The generator filling ``self`` in place: for a meta tensor, one that draws nothing."""
    return META_RANDOM if type(self._data) is MetaArray else _rng(generator)


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
    values = a + (b - a) * _rng_for(self, generator).random(self._data.shape)
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
    values = mean + std * _rng_for(self, generator).standard_normal(self._data.shape)
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
    values = _rng_for(self, generator).integers(lo, top, size=self._data.shape, endpoint=True)
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
    values = _rng_for(self, generator).random(self._data.shape) < probs
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
    values = _rng_for(self, generator).exponential(1.0 / lambd, size=self._data.shape)
    return fill_with(self, values, ExponentialBackward0)


# -- torch.normal with tensor arguments ------------------------------------------------------
# torch declares these non-reparameterized: the gradient to mean and std is zero.

NormalBackward1 = defop(  # normal(Tensor mean, float std)
    "NormalBackward1", inputs=("mean",), vjp={"mean": lambda g: g * 0}, jvp=lambda t_mean: None
)
NormalBackward2 = defop(  # normal(float mean, Tensor std)
    "NormalBackward2", inputs=("std",), vjp={"std": lambda g: g * 0}, jvp=lambda t_std: None
)
NormalBackward3 = defop(  # normal(Tensor mean, Tensor std)
    "NormalBackward3",
    inputs=("mean", "std"),
    vjp={"mean": lambda g: g * 0, "std": lambda g: g * 0},
    jvp=lambda t_mean, t_std: None,
)

_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
)


def _arg_type(x) -> str:
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, _dtype.dtype):
        return "torch.dtype"
    if type(x).__name__ == "Generator":
        return "torch.Generator"
    if isinstance(x, (tuple, list)):
        return "tuple of ints" if all(isinstance(v, int) for v in x) else type(x).__name__
    return type(x).__name__


def _normal_signature_error(args: tuple, kwargs: dict) -> TypeError:
    got = [_arg_type(a) for a in args] + [f"{k}={_arg_type(v)}" for k, v in kwargs.items()]
    return TypeError(
        f"normal() received an invalid combination of arguments - got ({', '.join(got)}), "
        f"but expected one of:\n{_NORMAL_SIGNATURES}"
    )


def _check_float(t: Tensor) -> None:
    if t._data.dtype.kind not in "fcV":
        raise NotImplementedError(
            f"\"normal_kernel_cpu\" not implemented for '{_dtype.scalar_name(t._data.dtype)}'"
        )


@register("normal")
def normal(
    mean: Tensor | float = _MISSING,
    std: Tensor | float = _MISSING,
    size: tuple = _MISSING,
    *,
    generator=None,
    out: Tensor | None = None,
    **kwargs,
) -> Tensor:
    """Samples from normal distributions: ``normal(mean, std)`` with a tensor mean and/or
    std (element by element, broadcast), or ``normal(mean, std, size)`` with numbers, which
    alone takes ``dtype``, ``requires_grad`` and the other factory keywords. The samples'
    gradient to a tensor mean or std is zero, as in torch.

    Example:
        >>> import ember
        >>> ember.normal(ember.zeros(3), ember.ones(3)).shape
        torch.Size([3])
        >>> ember.normal(0.0, 1.0, (2, 2), requires_grad=True).requires_grad
        True
    """
    given = tuple(a for a in (mean, std, size) if a is not _MISSING)
    shown = dict(kwargs, **({} if generator is None else {"generator": generator}))
    if out is not None:
        shown["out"] = out
    tensor_form = isinstance(mean, Tensor) or isinstance(std, Tensor)
    if not tensor_form:
        if size is _MISSING or mean is _MISSING or std is _MISSING:
            raise _normal_signature_error(given, shown)
        return _normal_float(mean, std, size, generator=generator, out=out, **kwargs)
    if kwargs or size is not _MISSING:
        raise _normal_signature_error(given, shown)
    if std is _MISSING:
        std = 1.0
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        _check_float(mean)
        _check_float(std)
        if (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = broadcast_shapes(mean._data.shape, std._data.shape)
        dt = mean._data.dtype  # (torch: the mean's dtype, whatever the std's)
        node, inputs = NormalBackward3, (mean, std)
        m, s = mean._data, std._data
    else:
        t, other = (mean, std) if isinstance(mean, Tensor) else (std, mean)
        if not isinstance(other, (int, float)) or isinstance(other, bool):
            raise _normal_signature_error(given, shown)
        _check_float(t)
        if isinstance(mean, Tensor):
            if std < 0:
                raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
            node = NormalBackward1
        else:
            if (std._data < 0).any():
                raise RuntimeError("normal expects all elements of std >= 0.0")
            node = NormalBackward2
        shape, dt, inputs = t._data.shape, t._data.dtype, (t,)
        m = mean._data if isinstance(mean, Tensor) else mean
        s = std._data if isinstance(std, Tensor) else std
    eps = _rng(generator).standard_normal(shape)
    with np.errstate(all="ignore"):
        values = np.asarray(m + s * eps).astype(dt, copy=False)
    return write_out("normal", record(node, values, inputs), out)


# -- torch.bernoulli, Tensor.bernoulli, Tensor.multinomial -----------------------------------

BernoulliBackward0 = _random_node("BernoulliBackward0")  # bernoulli(input): zero gradient


@register("bernoulli", method=True)
def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """0/1 samples, 1 with probability ``input`` elementwise (or ``p`` for every element),
    of ``input``'s dtype.

    Example:
        >>> import ember
        >>> ember.bernoulli(ember.tensor([0.0, 1.0]))
        tensor([0., 1.])
        >>> ember.ones(2).bernoulli(0.0)
        tensor([0., 0.])
    """
    dt = input._data.dtype
    if dt.kind not in "fcV":
        raise NotImplementedError(
            f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_dtype.scalar_name(dt)}'"
        )
    if p is None:
        probs = input._data
        if not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)"
            )
    else:
        probs = _scalar(p)
        if not 0 <= probs <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(probs)}")
    values = (_rng(generator).random(input._data.shape) < probs).astype(dt)
    if p is not None:
        return write_out("bernoulli", Tensor._wrap(values), out)
    return write_out("bernoulli", record(BernoulliBackward0, values, (input,)), out)


@register("multinomial", function=False, method=True)
def multinomial(
    self: Tensor, num_samples: int, replacement: bool = False, *, generator=None
) -> Tensor:
    """``torch.multinomial(self, ...)``: indices drawn from the rows of ``self``, weighted.

    Example:
        >>> import ember
        >>> ember.tensor([0.0, 1.0, 0.0]).multinomial(2, replacement=True)
        tensor([1, 1])
    """
    return _multinomial(self, num_samples, replacement, generator=generator)
