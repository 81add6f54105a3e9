"""The Dirichlet distribution."""

from __future__ import annotations

from .. import _compat, _torch
from ..nn import functional as F
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma
from .utils import _size

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution over the simplex, with ``concentration`` (last dim = K).

    ``rsample`` normalises reparameterised standard-gamma draws, so gradients flow to
    ``concentration`` through the implicit gamma gradient and the normalisation.

    Example:
        >>> import ember
        >>> from ember.distributions import Dirichlet
        >>> Dirichlet(ember.tensor([0.5, 0.5])).sample().shape
        torch.Size([2])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = _size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        gammas = standard_gamma(self.concentration.expand(shape))
        x = gammas / gammas.sum(-1, True)
        finfo = _compat.finfo(x.dtype)
        return x.clamp(min=finfo.tiny, max=1 - finfo.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            _torch.xlogy(self.concentration - 1.0, value).sum(-1)
            + _torch.lgamma(self.concentration.sum(-1))
            - _torch.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # All concentrations < 1: the mode is the vertex of the largest one.
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = F.one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode.dtype)
        return _torch.where(mask, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            _torch.lgamma(self.concentration).sum(-1)
            - _torch.lgamma(a0)
            - (k - a0) * _torch.digamma(a0)
            - ((self.concentration - 1.0) * _torch.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - _torch.lgamma(x.sum(-1))
