"""ExponentialFamily: entropy via the Bregman divergence of the log normaliser."""

from __future__ import annotations

from .. import autograd
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class for exponential-family distributions ``p(x) = exp(<t(x), θ> - F(θ) + k(x))``.

    Subclasses give ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``;
    ``entropy`` then follows from the gradient of the log normaliser.

    Example:
        >>> from ember.distributions import Normal
        >>> from ember.distributions.exp_family import ExponentialFamily
        >>> isinstance(Normal(0.0, 1.0), ExponentialFamily)
        True
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """Entropy from the Bregman divergence of the log normaliser."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
