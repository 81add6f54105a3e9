"""Helpers shared by the distributions: broadcasting, logits/probs conversion, sampling noise."""

from __future__ import annotations

import functools
from numbers import Number

import numpy as np

from .. import _creation, _dtype, _torch
from .._compat import finfo
from .._tensor import Size, Tensor
from ..autograd.grad_mode import enable_grad

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


def broadcast_all(*values):
    """Broadcast numbers and tensors to one shape, as tensors.

    Numbers take the default dtype (or the dtype of the first tensor argument).

    Example:
        >>> import ember
        >>> from ember.distributions.utils import broadcast_all
        >>> a, b = broadcast_all(ember.zeros(2), 1.0)
        >>> b
        tensor([1., 1.])
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        dtype = _dtype.get_default_dtype()
        for v in values:
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
        values = [v if isinstance(v, Tensor) else _torch.tensor(v, dtype=dtype) for v in values]
    return _torch.broadcast_tensors(*values)


def _size(shape) -> Size:
    return Size(tuple(shape))


def _standard_normal(shape, dtype) -> Tensor:
    return _torch.randn(tuple(shape), dtype=dtype)


def _rng() -> np.random.Generator:
    """The NumPy generator behind ember's default generator (seeded by ember.manual_seed).

    Used by the samplers that have no tensor op (gamma, poisson, binomial): their draws
    come from the same stream as ember.rand/randn, so one manual_seed reproduces them.
    """
    return _creation.default_generator._rng


def _np_sample(fn, dtype, *params) -> Tensor:
    """Draw ``fn(rng, *numpy_params)`` and wrap it as a tensor of ``dtype`` (no grad)."""
    arrays = [np.asarray(p.detach().numpy(), dtype=np.float64) for p in params]
    out = fn(_rng(), *arrays)
    return _torch.tensor(np.asarray(out, dtype=np.float64), dtype=dtype)


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` right-most dimensions of ``value``."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[:-dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Logits to probabilities: sigmoid if ``is_binary`` else softmax over the last dim."""
    if is_binary:
        return _torch.sigmoid(logits)
    return _torch.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp probabilities into the open interval ``(eps, 1 - eps)`` of their dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Probabilities to logits (log-odds if ``is_binary``, else log-probabilities)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _torch.log(ps_clamped) - _torch.log1p(-ps_clamped)
    return _torch.log(ps_clamped)


class lazy_property:
    """A property computed once on first access and then stored on the instance.

    Used for the parameter a distribution was not given (``probs`` when built from
    ``logits`` and vice versa).
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Class-level view of a lazy_property that is also a property (for introspection)."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries (offset ``diag``) of the trailing matrices, row-major."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, k=diag)
    idx = _torch.tensor(rows * n + cols)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., idx]


def vec_to_tril_matrix(vec, diag: int = 0):
    """Inverse of ``tril_matrix_to_vec``: the vectors as lower-triangular matrices."""
    # the size D x D of the matrix satisfies vec.shape[-1] == D * (D + 1) / 2 + D * diag
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = finfo(vec.dtype).eps
    if abs(round(n) - n) > eps:  # (torch checks one side and fails later on the other)
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            + "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    rows, cols = np.tril_indices(n, k=diag)
    # Gather from the vector padded with one zero: entries outside the triangle read it.
    index = np.full(n * n, vec.shape[-1], dtype=np.int64)
    index[rows * n + cols] = np.arange(len(rows))
    padded = _torch.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], dim=-1)
    return padded[..., _torch.tensor(index)].reshape(tuple(vec.shape[:-1]) + (n, n))
