"""Bijective (and a few non-bijective) transforms with log-abs-det-Jacobians.

Example:
    >>> import ember
    >>> from ember.distributions.transforms import AffineTransform, ExpTransform
    >>> t = ExpTransform()
    >>> t(ember.tensor([0.0]))
    tensor([1.])
    >>> t.inv(ember.tensor([1.0]))
    tensor([0.])
    >>> AffineTransform(1.0, 2.0).log_abs_det_jacobian(ember.tensor(0.0), ember.tensor(1.0))
    tensor(0.6931)
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
import weakref

from .. import _compat, _torch, linalg
from .._compat import broadcast_shapes
from ..nn import functional as F
from . import constraints
from .utils import (
    _size,
    _sum_rightmost,
    broadcast_all,
    tril_matrix_to_vec,
    vec_to_tril_matrix,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "CumulativeDistributionTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "identity_transform",
]


class Transform:
    """Abstract invertible transform ``y = t(x)`` with ``log_abs_det_jacobian``.

    Args:
        cache_size (int): 0 (no caching) or 1 (remember the latest ``x, y`` pair so the
            inverse of a just-computed output is exact).

    Example:
        >>> import ember
        >>> from ember.distributions import ExpTransform
        >>> t = ExpTransform(cache_size=1)
        >>> x = ember.tensor([0.0, 1.0])
        >>> y = t(x)
        >>> t.inv(y) is x, t.log_abs_det_jacobian(x, y)
        (True, tensor([0., 1.]))
    """

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (``t.inv(t(x)) == x``)."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """The sign of the Jacobian determinant, if applicable."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |dy/dx|`` given input and output."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The output shape for an input of shape ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output of shape ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (built by ``Transform.inv``)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self) -> bool:
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size: int = 1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other) -> bool:
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({repr(self._inv)})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Apply ``parts`` in order; the Jacobian terms are summed over the right event dims.

    Example:
        >>> import ember
        >>> from ember.distributions.transforms import ComposeTransform, ExpTransform
        >>> ComposeTransform([ExpTransform(), ExpTransform()])(ember.tensor(0.0))
        tensor(2.7183)
    """

    def __init__(self, parts, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other) -> bool:
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _torch.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_, y_ in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(
                _sum_rightmost(part.log_abs_det_jacobian(x_, y_), event_dim - part.domain.event_dim)
            )
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self) -> str:
        fmt_string = self.__class__.__name__ + "(\n    "
        fmt_string += ",\n    ".join([p.__repr__() for p in self.parts])
        fmt_string += "\n)"
        return fmt_string


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """Wrap ``base_transform`` so ``reinterpreted_batch_ndims`` extra dims count as event.

    Example:
        >>> import ember
        >>> from ember.distributions import ExpTransform, IndependentTransform
        >>> t = IndependentTransform(ExpTransform(), 1)
        >>> x = ember.tensor([[0.0, 1.0], [2.0, 3.0]])
        >>> t.log_abs_det_jacobian(x, t(x))  # summed over the last dim
        tensor([1., 5.])
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({repr(self.base_transform)}, "
            f"{self.reinterpreted_batch_ndims})"
        )

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dims to ``out_shape`` (same number of elements).

    Example:
        >>> import ember
        >>> from ember.distributions import ReshapeTransform
        >>> t = ReshapeTransform((4,), (2, 2))
        >>> t(ember.arange(4.0)), t.forward_shape((3, 4))
        (tensor([[0., 1.],
                [2., 3.]]), torch.Size([3, 2, 2]))
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = _size(in_shape)
        self.out_shape = _size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[: y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return _size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return _size(tuple(shape[:cut]) + tuple(self.in_shape))


class ExpTransform(Transform):
    """``y = exp(x)``.

    Example:
        >>> import ember
        >>> from ember.distributions import ExpTransform
        >>> ExpTransform()(ember.tensor([0.0, 1.0])), ExpTransform().inv(ember.tensor([1.0]))
        (tensor([1.0000, 2.7183]), tensor([0.]))
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    Example:
        >>> import ember
        >>> from ember.distributions import PowerTransform
        >>> t = PowerTransform(2.0)
        >>> t(ember.tensor([1.0, 3.0])), t.inv(ember.tensor([4.0, 9.0]))
        (tensor([1., 9.]), tensor([2., 3.]))
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other) -> bool:
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all().item())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _clipped_sigmoid(x):
    finfo = _compat.finfo(x.dtype)
    return _torch.clamp(_torch.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(Transform):
    """``y = sigmoid(x)`` (clipped into the open unit interval).

    Example:
        >>> import ember
        >>> from ember.distributions import SigmoidTransform
        >>> SigmoidTransform()(ember.tensor([0.0])), SigmoidTransform().inv(ember.tensor([0.5]))
        (tensor([0.5000]), tensor([0.]))
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = _compat.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))`` (linear for ``x > 20``).

    Example:
        >>> import ember
        >>> from ember.distributions import SoftplusTransform
        >>> SoftplusTransform()(ember.tensor([0.0, 30.0]))
        tensor([ 0.6931, 30.0000])
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``.

    Example:
        >>> import ember
        >>> from ember.distributions import TanhTransform
        >>> TanhTransform()(ember.tensor([0.0, 1.0]))
        tensor([0.0000, 0.7616])
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other) -> bool:
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return _torch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2), in a form that is stable for large |x|.
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective).

    Example:
        >>> import ember
        >>> from ember.distributions import AbsTransform
        >>> AbsTransform()(ember.tensor([-2.0, 3.0])), AbsTransform().bijective
        (tensor([2., 3.]), False)
    """

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other) -> bool:
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``, elementwise; ``event_dim`` event dims share one Jacobian.

    Example:
        >>> import ember
        >>> from ember.distributions.transforms import AffineTransform
        >>> AffineTransform(1.0, 2.0)(ember.tensor([0.0, 1.0]))
        tensor([1., 3.])
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((_torch.as_tensor(a) == _torch.as_tensor(b)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = _torch.full_like(x, math.log(abs(scale)))
        else:
            result = _torch.abs(scale).log()
        if self.event_dim:
            result_size = tuple(result.size()[: -self.event_dim]) + (-1,)
            result = result.view(result_size).sum(-1)
            shape = shape[: -self.event_dim]
        return result.expand(tuple(shape))

    def forward_shape(self, shape):
        return broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    def inverse_shape(self, shape):
        return broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )


class SoftmaxTransform(Transform):
    """``y = softmax(x)`` over the last dim (not bijective; the inverse is ``log``).

    Example:
        >>> import ember
        >>> from ember.distributions import SoftmaxTransform
        >>> SoftmaxTransform()(ember.zeros(3))
        tensor([0.3333, 0.3333, 0.3333])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """Real vectors of length K-1 to the K-simplex by stick breaking (bijective).

    Example:
        >>> import ember
        >>> from ember.distributions import StickBreakingTransform
        >>> y = StickBreakingTransform()(ember.zeros(2))
        >>> y, y.shape
        (tensor([0.3333, 0.3333, 0.3333]), torch.Size([3]))
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other) -> bool:
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        sf = _torch.clamp(sf, min=_compat.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return _size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return _size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal.

    Example:
        >>> import ember
        >>> from ember.distributions import LowerCholeskyTransform
        >>> LowerCholeskyTransform()(ember.tensor([[0.0, 5.0], [2.0, 0.0]]))  # exp on the diagonal
        tensor([[1., 0.],
                [2., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other) -> bool:
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones: ``L L^T`` with
    ``L = LowerCholeskyTransform()(x)``.

    Example:
        >>> import ember
        >>> from ember.distributions import PositiveDefiniteTransform
        >>> PositiveDefiniteTransform()(ember.tensor([[0.0, 5.0], [2.0, 0.0]]))
        tensor([[1., 2.],
                [2., 5.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other) -> bool:
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        y = linalg.cholesky(y)
        return LowerCholeskyTransform().inv(y)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``, e.g. to build a copula from a multivariate base.

    Example:
        >>> import ember
        >>> from ember.distributions import Normal
        >>> from ember.distributions.transforms import CumulativeDistributionTransform
        >>> CumulativeDistributionTransform(Normal(0.0, 1.0))(ember.tensor(0.0))
        tensor(0.5000)
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


def _check_dim(t, dim: int, size: int, what: str, label: str) -> None:
    if not (-t.dim() <= dim < t.dim()):
        raise AssertionError(f"dim {dim} out of range for {what} with {t.dim()} dimensions")
    if t.size(dim) != size:
        raise AssertionError(f"{what[0]}.size({dim}) = {t.size(dim)} must equal {label} {size}")


class CatTransform(Transform):
    """Apply ``tseq[i]`` to the slice of length ``lengths[i]`` along ``dim`` and concatenate.

    Example:
        >>> import ember
        >>> from ember.distributions.transforms import CatTransform, ExpTransform
        >>> from ember.distributions.transforms import identity_transform
        >>> t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[1, 2])
        >>> t(ember.zeros(3))
        tensor([1., 0., 0.])
    """

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _map(self, z, fn):
        out = []
        start = 0
        for trans, length in zip(self.transforms, self.lengths):
            out.append(fn(trans, z.narrow(self.dim, start, length)))
            start = start + length
        return _torch.cat(out, dim=self.dim)

    def _call(self, x):
        _check_dim(x, self.dim, self.length, "tensor", "length")
        return self._map(x, lambda t, s: t(s))

    def _inverse(self, y):
        _check_dim(y, self.dim, self.length, "tensor", "length")
        return self._map(y, lambda t, s: t.inv(s))

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, self.length, "x", "length")
        _check_dim(y, self.dim, self.length, "y", "length")
        logdetjacs = []
        start = 0
        for trans, length in zip(self.transforms, self.lengths):
            xslice = x.narrow(self.dim, start, length)
            yslice = y.narrow(self.dim, start, length)
            logdetjac = trans.log_abs_det_jacobian(xslice, yslice)
            if trans.event_dim < self.event_dim:
                logdetjac = _sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
            start = start + length
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return _torch.cat(logdetjacs, dim=dim)
        return sum(logdetjacs)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Apply ``tseq[i]`` to the i-th slice along ``dim`` and stack the results.

    Example:
        >>> import ember
        >>> from ember.distributions.transforms import ExpTransform, StackTransform
        >>> from ember.distributions.transforms import identity_transform
        >>> StackTransform([ExpTransform(), identity_transform], dim=0)(ember.zeros(2))
        tensor([1., 0.])
    """

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        _check_dim(x, self.dim, len(self.transforms), "tensor", "len(transforms)")
        ys = [t(s) for s, t in zip(self._slice(x), self.transforms)]
        return _torch.stack(ys, dim=self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, len(self.transforms), "tensor", "len(transforms)")
        xs = [t.inv(s) for s, t in zip(self._slice(y), self.transforms)]
        return _torch.stack(xs, dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, len(self.transforms), "x", "len(transforms)")
        _check_dim(y, self.dim, len(self.transforms), "y", "len(transforms)")
        logdetjacs = [
            t.log_abs_det_jacobian(xs, ys)
            for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)
        ]
        return _torch.stack(logdetjacs, dim=self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length ``D(D-1)/2`` to Cholesky factors of D x D correlation
    matrices (lower triangular, positive diagonal, unit-norm rows).

    ``tanh`` maps each entry to ``(-1, 1)``; stick breaking then fills each row so that its
    squared entries sum to one.

    Example:
        >>> import ember
        >>> from ember.distributions.transforms import CorrCholeskyTransform
        >>> L = CorrCholeskyTransform()(ember.tensor([0.5, -0.2, 0.3]))
        >>> (L @ L.T).diagonal()
        tensor([1.0000, 1.0000, 1.0000])
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):

        x = _torch.tanh(x)
        eps = _compat.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # apply stick-breaking on the squared values
        z = r**2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        r = r + _torch.eye(r.shape[-1], dtype=r.dtype)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):

        y_cumsum = 1 - _torch.cumsum(y * y, dim=-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / y_cumsum_vec.sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):

        # Jacobian of stick breaking times that of tanh (see StickBreakingTransform).
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return _size(tuple(shape[:-1]) + (D, D))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        N = D * (D - 1) // 2
        return _size(tuple(shape[:-2]) + (N,))
