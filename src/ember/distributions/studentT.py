"""Student's t distribution."""

from __future__ import annotations

import math

from .. import _torch
from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import _size, _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with degrees of freedom ``df``, location ``loc`` and scale ``scale``.

    Example:
        >>> import ember
        >>> from ember.distributions import StudentT
        >>> StudentT(ember.tensor([2.0])).log_prob(ember.tensor([0.0]))
        tensor([-1.0397])
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return _torch.where(self.df <= 1, _torch.full_like(self.loc, math.nan), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = df > 2
        safe_df = _torch.where(big, df, _torch.full_like(df, 3.0))
        m = self.scale.pow(2) * safe_df / (safe_df - 2)
        m = _torch.where(big, m, _torch.full_like(m, math.inf))
        return _torch.where(df <= 1, _torch.full_like(m, math.nan), m)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = _size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df).
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype)
        Z = self._chi2.rsample(sample_shape)
        Y = X * _torch.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (
            self.scale.log()
            + 0.5 * self.df.log()
            + 0.5 * math.log(math.pi)
            + _torch.lgamma(0.5 * self.df)
            - _torch.lgamma(0.5 * (self.df + 1.0))
        )
        return -0.5 * (self.df + 1.0) * _torch.log1p(y**2.0 / self.df) - Z

    def entropy(self):
        lbeta = _torch.lgamma(0.5 * self.df) + math.lgamma(0.5) - _torch.lgamma(0.5 * (self.df + 1))
        return (
            self.scale.log()
            + 0.5
            * (self.df + 1)
            * (_torch.digamma(0.5 * (self.df + 1)) - _torch.digamma(0.5 * self.df))
            + 0.5 * self.df.log()
            + lbeta
        )
