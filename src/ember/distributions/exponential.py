"""The Exponential distribution."""

from __future__ import annotations

from numbers import Number

from .. import _torch
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _size, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential distribution with ``rate`` (density ``rate * exp(-rate * x)``).

    Example:
        >>> import ember
        >>> from ember.distributions import Exponential
        >>> Exponential(ember.tensor([2.0])).mean
        tensor([0.5000])
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return _torch.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = _size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _torch.empty(tuple(shape), dtype=self.rate.dtype).exponential_()
        return eps / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _torch.exp(-self.rate * value)

    def icdf(self, value):
        return -_torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - _torch.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -_torch.log(-x)
