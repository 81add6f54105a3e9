"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math

from .. import _torch
from .._compat import finfo
from ..autograd.grad_mode import no_grad
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _size, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution over lower Cholesky factors of ``dim x dim`` correlation matrices.

    ``concentration`` 1 is uniform over correlation matrices; larger values concentrate
    near the identity. Sampled with the onion method (Ghosh & Henderson, 2003).

    Example:
        >>> import ember
        >>> from ember.distributions import LKJCholesky
        >>> _ = ember.manual_seed(0)
        >>> L = LKJCholesky(3, 0.5).sample()
        >>> L.shape, ember.allclose((L @ L.T).diagonal(), ember.ones(3))
        (torch.Size([3, 3]), True)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = (dim, dim)
        # This is used to draw vectorized samples from the beta distribution in Sec. 3.2 of [1].
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _torch.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = _torch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        # The onion method: row i is sqrt(y_i) times a uniform direction in i dimensions,
        # with y_i ~ Beta; the diagonal completes each row to unit norm.
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = _torch.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype).tril(
                -1
            )
            norm = u_normal.norm(dim=-1, keepdim=True)
            first_row = _torch.arange(self.dim).reshape(-1, 1) == 0
            # Row 0 is all zeros (0 / 0): it stays zero, as torch fills it.
            u_hypersphere = _torch.where(
                first_row,
                _torch.zeros_like(u_normal),
                u_normal / _torch.where(first_row, 1.0, norm),
            )
            w = _torch.sqrt(y) * u_hypersphere
            # Fill diagonal elements; clamp for numerical stability
            eps = finfo(w.dtype).tiny
            diag_elems = _torch.clamp(1 - _torch.sum(w**2, dim=-1), min=eps).sqrt()
            return w + _torch.diag_embed(diag_elems)

    def log_prob(self, value):
        # See Theorem 1 of [1] (Lewandowski, Kurowicka & Joe, 2009), in Cholesky form.
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _torch.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = _torch.sum(order * diag_elems.log(), dim=-1)
        # Compute normalization constant (page 1999 of [1])
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = _torch.lgamma(alpha) * dm1
        numerator = _torch.mvlgamma(alpha - 0.5, dm1)
        # pi_constant in [1] is D * (D - 1) / 4 * log(pi); here, D = self.dim - 1
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
