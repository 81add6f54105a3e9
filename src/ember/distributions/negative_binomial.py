"""The NegativeBinomial distribution."""

from __future__ import annotations

from .. import _torch
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (
    _np_sample,
    _size,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes before ``total_count`` failures in Bernoulli(``probs``) trials.

    Sampled as a Gamma-Poisson mixture.

    Example:
        >>> import ember
        >>> from ember.distributions import NegativeBinomial
        >>> NegativeBinomial(3.0, ember.tensor([0.5])).mean
        tensor([3.])
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = _size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * _torch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _torch.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(
            concentration=self.total_count, rate=_torch.exp(-self.logits), validate_args=False
        )

    def sample(self, sample_shape=()):
        with no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _np_sample(lambda rng, r: rng.poisson(r), rate.dtype, rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = self.total_count * F.logsigmoid(
            -self.logits
        ) + value * F.logsigmoid(self.logits)
        log_normalization = (
            -_torch.lgamma(self.total_count + value)
            + _torch.lgamma(1.0 + value)
            + _torch.lgamma(self.total_count)
        )
        # lgamma(0) is inf: the (total_count + value == 0) term is defined as 0.
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
