"""The Laplace distribution."""

from __future__ import annotations

from numbers import Number

from .. import _compat, _torch
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _size, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace distribution with location ``loc`` and scale ``scale``.

    Example:
        >>> import ember
        >>> from ember.distributions import Laplace
        >>> Laplace(0.0, 1.0).log_prob(ember.tensor(0.0))
        tensor(-0.6931)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = _size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        finfo = _compat.finfo(self.loc.dtype)
        uniform = _torch.empty(tuple(shape), dtype=self.loc.dtype).uniform_(finfo.eps - 1, 1)
        return self.loc - self.scale * uniform.sign() * _torch.log1p(-uniform.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_torch.log(2 * self.scale) - _torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * _torch.expm1(
            -(value - self.loc).abs() / self.scale
        )

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _torch.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + _torch.log(2 * self.scale)
