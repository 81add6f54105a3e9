"""The Kumaraswamy distribution on ``(0, 1)``."""

from __future__ import annotations

import math

from .. import _torch
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import _size, broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The n-th moment ``E[X^n]`` of Kumaraswamy(a, b)."""
    arg1 = 1 + n / a
    log_value = _torch.lgamma(arg1) + _torch.lgamma(b) - _torch.lgamma(arg1 + b)
    return b * _torch.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distribution: ``(1 - U^(1/concentration0))^(1/concentration1)``.

    Example:
        >>> import ember
        >>> from ember.distributions import Kumaraswamy
        >>> Kumaraswamy(ember.tensor([1.0]), ember.tensor([1.0])).mean
        tensor([0.5000])
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            _torch.full_like(self.concentration0, 0),
            _torch.full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(_size(batch_shape))
        new.concentration0 = self.concentration0.expand(_size(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # Evaluate in log space for stability; undefined when either concentration < 1.
        log_mode = (
            self.concentration0.reciprocal() * (-self.concentration0).log1p()
            - (-self.concentration0 * self.concentration1).log1p()
        )
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return _torch.where(undefined, _torch.full_like(log_mode, math.nan), log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - _torch.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        H0 = _torch.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * H0 - _torch.log(self.concentration1) - _torch.log(self.concentration0)
