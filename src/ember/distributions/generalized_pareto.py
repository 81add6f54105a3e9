"""The Generalized Pareto distribution."""

from __future__ import annotations

import math
from numbers import Number

from .. import _torch
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _size, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution with ``loc``, ``scale`` and ``concentration`` (shape).

    ``concentration == 0`` is the exponential limit; negative concentrations have bounded
    support ``[loc, loc - scale / concentration]``.

    Example:
        >>> import ember
        >>> from ember.distributions import GeneralizedPareto
        >>> GeneralizedPareto(0.0, 1.0, 0.0).cdf(ember.tensor(1.0))
        tensor(0.6321)
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = _size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        u = _torch.rand(shape, dtype=self.loc.dtype)
        return self.icdf(u)

    def _safe_concentration(self):
        eq_zero = _torch.isclose(self.concentration, _torch.zeros_like(self.concentration))
        return eq_zero, _torch.where(
            eq_zero, _torch.ones_like(self.concentration), self.concentration
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + _torch.ones_like(z)
        where_nonzero = _torch.where(y == 0, y, y * _torch.log1p(safe_conc * z))
        return -self.scale.log() - _torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -_torch.log1p(safe_conc * z) / safe_conc
        return _torch.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        """``log P(X <= value)``."""
        return _torch.log1p(-_torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return _torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, safe_conc = self._safe_concentration()
        logu = _torch.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * _torch.expm1(-safe_conc * logu)
        where_zero = self.loc - self.scale * logu
        return _torch.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = _torch.where(
            valid, self.concentration, _torch.full_like(self.concentration, 0.5)
        )
        result = self.loc + self.scale / (1 - safe_conc)
        return _torch.where(valid, result, _torch.full_like(result, math.nan))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = _torch.where(
            valid, self.concentration, _torch.full_like(self.concentration, 0.25)
        )
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return _torch.where(valid, result, _torch.full_like(result, math.nan))

    def entropy(self):
        ans = _torch.log(self.scale) + self.concentration + 1
        return ans.expand(tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = _torch.where(
            self.concentration < 0,
            lower - self.scale / self.concentration,
            _torch.full_like(lower, math.inf),
        )
        return constraints.interval(lower, upper)
