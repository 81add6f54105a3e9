"""The two-parameter Weibull distribution."""

from __future__ import annotations

from .. import _torch
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import _size, broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull distribution with ``scale`` and ``concentration`` (shape).

    Example:
        >>> import ember
        >>> from ember.distributions import Weibull
        >>> Weibull(ember.tensor([1.0]), ember.tensor([1.0])).mean
        tensor([1.])
    """

    arg_constraints = {
        "scale": constraints.positive,
        "concentration": constraints.positive,
    }
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(_torch.ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = _size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * _torch.exp(_torch.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return (
            self.scale
            * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()
        )

    @property
    def variance(self):
        return self.scale.pow(2) * (
            _torch.exp(_torch.lgamma(1 + 2 * self.concentration_reciprocal))
            - _torch.exp(2 * _torch.lgamma(1 + self.concentration_reciprocal))
        )

    def entropy(self):
        return (
            euler_constant * (1 - self.concentration_reciprocal)
            + _torch.log(self.scale * self.concentration_reciprocal)
            + 1
        )
