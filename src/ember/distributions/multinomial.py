"""The Multinomial distribution."""

from __future__ import annotations

import math

from .. import _torch
from .._tensor import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import _size, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a Categorical(``probs`` or ``logits``).

    Example:
        >>> import ember
        >>> from ember.distributions import Multinomial
        >>> m = Multinomial(100, ember.tensor([1.0, 1.0, 1.0, 1.0]))
        >>> m.sample().sum()
        tensor(100.)
    """

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = _size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = _size(sample_shape)
        samples = self._categorical.sample(_size((self.total_count,) + tuple(sample_shape)))
        # (total_count, sample, batch) -> (sample, batch, total_count)
        shifted_idx = list(range(samples.dim()))
        shifted_idx.append(shifted_idx.pop(0))
        samples = samples.permute(*shifted_idx)
        counts = _torch.zeros(tuple(self._extended_shape(sample_shape)), dtype=samples.dtype)
        counts.scatter_add_(-1, samples, _torch.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        n = _torch.tensor(float(self.total_count), dtype=self.probs.dtype)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - _torch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = _torch.exp(self._binomial.log_prob(support))
        weights = _torch.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = _torch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = _torch.lgamma(value + 1).sum(-1)
        # 0 * (-inf) = 0: a zero count of an impossible category contributes nothing.
        logits = _torch.where(
            (value == 0) & (logits == -math.inf), _torch.zeros_like(logits), logits
        )
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
