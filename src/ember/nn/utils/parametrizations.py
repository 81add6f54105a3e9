"""Parametrizations built on ``parametrize`` (torch.nn.utils.parametrizations):
``weight_norm`` and ``spectral_norm``, and ``orthogonal`` through the Cayley map or the
matrix exponential."""

from __future__ import annotations

import numpy as np

from ... import _creation
from ..._aten.linalg import dot, mv
from ..._aten.shape import cat
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import solve
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _default_dim, power_iteration, random_unit
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """Parametrize ``module.<name>`` as ``g * v / ||v||``: ``original0`` is ``g``,
    ``original1`` is ``v`` (old ``<name>_g`` / ``<name>_v`` state dicts load too).

    Example:
        >>> from ember import nn
        >>> m = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4))
        >>> list(m.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(
        state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        g_key = f"{prefix}{name}_g"
        v_key = f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._load_state_dict_pre_hooks[id(_weight_norm_compat_hook)] = _weight_norm_compat_hook
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            dt = weight._data.dtype
            self.register_buffer("_u", random_unit(h, dt, eps))
            self.register_buffer("_v", random_unit(w, dt, eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if weight.ndim <= 1:
            raise AssertionError(
                f"Expected weight to have more than 1 dimension, got {weight.ndim}"
            )
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            power_iteration(
                weight_mat._data, self._u, self._v, n_power_iterations, self.eps, u_first=True
            )

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            norm = weight.norm().clamp_min(self.eps)
            return weight / norm
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = dot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Parametrize ``module.<name>`` as itself divided by its largest singular value,
    estimated by power iteration (one step per access in training mode).

    Example:
        >>> import ember
        >>> from ember import nn
        >>> m = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3)).eval()
        >>> s = ember.linalg.svdvals(m.weight.detach())[0]
        >>> bool(abs(s - 1) < 1e-3)
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


# -- orthogonal ----------------------------------------------------------------------------------


def _make_orthogonal(A: np.ndarray) -> np.ndarray:
    """The Q of A's QR with the signs of R's diagonal folded in (torch's geqrf +
    householder_product), on arrays (batches too)."""
    q, r = np.linalg.qr(A)
    d = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    return q * d[..., None, :]


def _is_orthogonal(Q: np.ndarray) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * np.finfo(Q.dtype).eps
    gram = np.swapaxes(Q, -1, -2) @ Q
    return bool(np.all(np.abs(gram - np.eye(k, dtype=Q.dtype)) <= eps + 1e-5 * np.eye(k)))


class _Orthogonal(Module):
    """``Q = cayley(A)`` with ``A`` the skew-symmetric matrix of ``original``'s lower
    triangle, times ``base`` (the orthogonal matrix it started from) with
    ``use_trivialization``; wide matrices are handled transposed, tall ones take the
    first columns."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        X = X.tril()
        if n != k:
            zeros = Tensor._wrap(np.zeros(tuple(X.shape[:-1]) + (n - k,), X._data.dtype))
            X = cat([X, zeros], -1)
        A = X - X.mT
        Id = Tensor._wrap(np.eye(n, dtype=A._data.dtype))
        Q = solve(Id + A * -0.5, Id + A * 0.5)
        if n != k:
            Q = Q[..., :k]
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        qa = Q._data
        if n < k:
            qa = np.swapaxes(qa, -1, -2)
            n, k = k, n
        if not hasattr(self, "base"):
            raise NotImplementedError(
                "It is not possible to assign to the matrix exponential "
                "or the Cayley parametrizations when use_trivialization=False."
            )
        if n == k:
            base = qa.copy() if _is_orthogonal(qa) else _make_orthogonal(qa)
        else:
            extra = _creation._rng(None).standard_normal(qa.shape[:-2] + (n, n - k))
            base = _make_orthogonal(np.concatenate([qa, extra.astype(qa.dtype)], axis=-1))
        self.base = Tensor._wrap(np.ascontiguousarray(base, dtype=qa.dtype))
        neg_id = np.zeros(Q_init.shape, dtype=qa.dtype)
        idx = np.arange(min(Q_init.shape[-2:]))
        neg_id[..., idx, idx] = -1.0
        return Tensor._wrap(neg_id)


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Parametrize ``module.<name>`` (a matrix or batch of matrices) as an orthogonal (or
    semi-orthogonal) matrix through the Cayley map of a skew-symmetric matrix.

    ember has no ``matrix_exp`` or ``householder_product``: torch's default map
    (``'matrix_exp'`` for square, ``'householder'`` for other matrices) is replaced by
    ``'cayley'``, which starts from the same matrix (the initial weight made orthogonal)
    and stays orthogonal; asking for those maps by name raises ``NotImplementedError``.

    Example:
        >>> import ember
        >>> from ember import nn
        >>> m = nn.utils.parametrizations.orthogonal(nn.Linear(5, 3))
        >>> w = m.weight.detach()
        >>> bool(ember.allclose(w @ w.T, ember.eye(3), atol=1e-5))
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "cayley"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    if orthogonal_map != "cayley":
        raise NotImplementedError(
            f"ember's orthogonal parametrization has no '{orthogonal_map}' map "
            "(no matrix_exp / householder_product): use orthogonal_map='cayley'"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
