"""Layers' ops without a family of their own: distances (cosine_similarity,
pairwise_distance, cdist, pdist), bilinear (torch's ``TrilinearBackward0``), pixel and
channel shuffles, and the channel-wise and alpha dropouts.

cdist, pdist and the Euclidean ``_euclidean_dist`` have closed-form rules on arrays and a
``composite`` (``linalg.vector_norm`` of the differences) for higher orders and forward
mode; the shuffles are linear permutations whose rules are the inverse shuffle; trilinear
is multilinear. The rest composes ember ops as torch composes them.
"""

from __future__ import annotations

import numpy as np

from .. import _creation
from .._dtype import scalar_name
from .._overrides import warn as _warn
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.recording import untracked_call
from ._core import (
    BILINEAR,
    COMPOSITE,
    LINEAR,
    broadcast_shapes,
    defop,
    is_raw,
    quiet,
    record,
    require_tensor,
)
from .linalg import einsum, vector_norm

_wrap = Tensor._wrap

__all__ = [
    "alpha_dropout",
    "bilinear",
    "cdist",
    "channel_shuffle",
    "cosine_similarity",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
]


# -- cosine similarity / pairwise distance -----------------------------------------------------


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcasting), each norm
    clamped below at ``eps`` (without changing its gradient, as torch does).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    require_tensor(x1, "cosine_similarity", "x1")
    require_tensor(x2, "cosine_similarity", "x2", 2)
    dt = np.result_type(x1._data, x2._data)
    if dt.kind not in "fV":
        raise RuntimeError(
            f"expected common dtype to be floating point, yet common dtype is {scalar_name(dt)}"
        )
    shape = broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    n1 = vector_norm(x1, 2, dim, keepdim=True).clone()
    n2 = vector_norm(x2, 2, dim, keepdim=True).clone()
    with no_grad():  # the clamp does not change the norms' gradients
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """The ``p``-norm of ``x1 - x2 + eps`` over the last dim (broadcasting).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.pairwise_distance(ember.tensor([[3.0, 4.0]]), ember.zeros(1, 2), eps=0.0)
        tensor([5.])
    """
    require_tensor(x1, "pairwise_distance", "x1")
    require_tensor(x2, "pairwise_distance", "x2", 2)
    out_dim = max(x1.dim(), x2.dim())
    return (x1 - x2 + eps).norm(p, out_dim - 1, keepdim)


# -- cdist / pdist -----------------------------------------------------------------------------


def _pnorm_array(d: np.ndarray, p: float, axis: int = -1) -> np.ndarray:
    """``||d||_p`` along ``axis`` (p = 0 counts non-zeros, p = inf is the largest |d|)."""
    a = np.abs(d)
    if p == 0:
        return (a != 0).sum(axis=axis).astype(d.dtype)
    if p == np.inf:
        return a.max(axis=axis) if a.shape[axis] else a.sum(axis=axis)
    if p == 1:
        return a.sum(axis=axis)
    if p == 2:
        return np.sqrt((a * a).sum(axis=axis))
    return (a**p).sum(axis=axis) ** (1.0 / p)


def _pnorm_grad(d: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """d ||d||_p / d d (dist broadcast against ``d``; 0 where the distance is 0)."""
    if p == 0:
        return np.zeros_like(d)
    if p == 1:
        return np.sign(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2:
            r = d / dist
        elif p == np.inf:
            r = np.sign(d) * (np.abs(d) == dist)
        else:
            r = np.sign(d) * np.abs(d) ** (p - 1) / dist ** (p - 1)
    return np.where(dist == 0, 0, r)


def _cdist_forward(x1, x2, p):
    d = x1[..., :, None, :] - x2[..., None, :, :]
    return np.asarray(_pnorm_array(d, p), dtype=x1.dtype)


def _cdist_vjp(g, x1, x2, result, p, needs_input_grad):
    d = x1[..., :, None, :] - x2[..., None, :, :]
    w = g[..., None] * _pnorm_grad(d, result[..., None], p)
    g1 = w.sum(axis=-2) if needs_input_grad[0] else None
    g2 = -w.sum(axis=-3) if needs_input_grad[1] else None
    return g1, g2


def _cdist_composite(x1, x2, p):
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


CdistBackward0 = defop(
    "CdistBackward0",
    inputs=("x1", "x2"),
    params=("p",),
    forward=_cdist_forward,
    vjp=_cdist_vjp,
    composite=_cdist_composite,
    jvp=COMPOSITE,
)


def _euclid_forward(x1, x2):
    # torch's formulation: |x1|^2 - 2 x1.x2 + |x2|^2 by one matrix product, clamped at 0.
    n1 = (x1 * x1).sum(-1, keepdims=True)
    n2 = (x2 * x2).sum(-1, keepdims=True)
    a = np.concatenate([x1 * -2, n1, np.ones_like(n1)], -1)
    b = np.concatenate([x2, np.ones_like(n2), n2], -1)
    return np.sqrt(np.maximum(a @ np.swapaxes(b, -1, -2), 0)).astype(x1.dtype, copy=False)


def _euclid_vjp(g, x1, x2, result, needs_input_grad):
    """torch's ``_euclidean_dist_backward`` (arrays or Tensors)."""
    zero = result == 0
    if is_raw(g):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(zero, 0, g / result)
    else:
        ratio = (g / result).masked_fill(zero, 0)
    g1 = x1 * ratio.sum(-1, keepdims=True) - ratio @ x2 if needs_input_grad[0] else None
    g2 = None
    if needs_input_grad[1]:
        g2 = x2 * ratio.sum(-2)[..., None] - ratio.swapaxes(-1, -2) @ x1
    return g1, g2


def _euclid_jvp(t_x1, t_x2, x1, x2, result):
    # d|x1_i - x2_j| = <x1_i - x2_j, dx1_i - dx2_j> / dist (0 where the distance is 0).
    dot = 0
    if t_x1 is not None:
        dot = (x1 * t_x1).sum(-1, keepdim=True) - t_x1 @ x2.mT
    if t_x2 is not None:
        dot = dot + (x2 * t_x2).sum(-1).unsqueeze(-2) - x1 @ t_x2.mT
    return (dot / result).masked_fill(result == 0, 0)


EuclideanDistBackward0 = defop(
    "EuclideanDistBackward0",
    inputs=("x1", "x2"),
    forward=_euclid_forward,
    vjp=_euclid_vjp,
    jvp=_euclid_jvp,
)

_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": 0,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def cdist(x1, x2, p: float = 2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (B*, R1, M) and each row of ``x2``
    (B*, R2, M): a (B*, R1, R2) tensor (batch dims broadcast).

    With p = 2 and more than 25 rows (or ``compute_mode='use_mm_for_euclid_dist'``) the
    distances come from one matrix product, as in torch.

    Example:
        >>> import ember
        >>> ember.cdist(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0], [1.0, 0.0]]))
        tensor([[5., 1.]])
    """
    require_tensor(x1, "cdist", "x1")
    require_tensor(x2, "cdist", "x2", 2)
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for t, name in ((x1, "X1"), (x2, "X2")):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    for t, name in ((x1, "X1"), (x2, "X2")):
        if t._data.dtype.kind not in "fV":
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: "
                f"{scalar_name(t._data.dtype)}"
            )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = _CDIST_MODES[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    m = x1.shape[-1]
    euclid = p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))
    if euclid and x1.numel() and x2.numel() and m:
        nb = int(np.prod(batch))
        out_shape = (*batch, r1, r2)
        if nb == 1:
            a, b = x1, x2
        else:
            a = x1.expand(*batch, r1, m).reshape(nb, r1, m)
            b = x2.expand(*batch, r2, m).reshape(nb, r2, m)
        with quiet:
            out = _euclid_forward(a._data, b._data)
        return record(EuclideanDistBackward0, out, (a, b), ()).view(out_shape)
    with quiet:
        out = _cdist_forward(x1._data, x2._data, float(p))
    return record(CdistBackward0, out, (x1, x2), (float(p),))


def _pdist_pairs(n: int):
    return np.triu_indices(n, 1)


def _pdist_forward(x, p):
    i, j = _pdist_pairs(x.shape[0])
    return np.asarray(_pnorm_array(x[i] - x[j], p), dtype=x.dtype)


def _pdist_vjp(g, self, result, p):
    x = self
    n = x.shape[0]
    i, j = _pdist_pairs(n)
    w = g[:, None] * _pnorm_grad(x[i] - x[j], result[:, None], p)
    gx = np.zeros_like(x)
    np.add.at(gx, i, w)
    np.add.at(gx, j, -w)
    return gx


def _pdist_composite(self, p):
    i, j = (_wrap(a.astype(np.int64)) for a in _pdist_pairs(self.shape[0]))
    return vector_norm(self.index_select(0, i) - self.index_select(0, j), p, -1)


PdistBackward0 = defop(
    "PdistBackward0",
    params=("p",),
    forward=_pdist_forward,
    vjp={"self": _pdist_vjp},
    composite=_pdist_composite,
    jvp=COMPOSITE,
)


def pdist(input, p: float = 2):
    """The ``p``-norm distance between every pair of rows ``i < j`` of the 2-D ``input``
    (the upper triangle of ``cdist(input, input)``, row by row).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.pdist(ember.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    require_tensor(input, "pdist")
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input._data.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    with quiet:
        out = _pdist_forward(input._data, float(p))
    return record(PdistBackward0, out, (input,), (float(p),))


# -- bilinear ----------------------------------------------------------------------------------


def _trilinear_forward(x1, w, x2):
    return np.einsum("bi,oij,bj->bo", x1, w, x2)


def _ein(spec: str, *operands):
    return np.einsum(spec, *operands) if is_raw(operands[0]) else einsum(spec, *operands)


def _trilinear_vjp(g, i1, i2, i3, needs_input_grad):
    g1 = _ein("bo,oij,bj->bi", g, i2, i3) if needs_input_grad[0] else None
    g2 = _ein("bo,bi,bj->oij", g, i1, i3) if needs_input_grad[1] else None
    g3 = _ein("bo,oij,bi->bj", g, i2, i1) if needs_input_grad[2] else None
    return g1, g2, g3


TrilinearBackward0 = defop(
    "TrilinearBackward0",
    inputs=("i1", "i2", "i3"),
    forward=_trilinear_forward,
    vjp=_trilinear_vjp,
    jvp=BILINEAR,  # linear in each operand: the product rule
)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.bilinear(ember.ones(1, 2), ember.ones(1, 3), ember.ones(4, 2, 3)).shape
        torch.Size([1, 4])
    """
    require_tensor(input1, "bilinear", "input1")
    require_tensor(input2, "bilinear", "input2", 2)
    require_tensor(weight, "bilinear", "weight", 3)
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got "
                f"{input1.shape[i]} and {input2.shape[i]}"
            )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
            f"expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
            f"expected {weight.shape[2]}"
        )
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
            f"expected {weight.shape[0]}"
        )
    out_size = (*input1.shape[:-1], weight.shape[0])
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    with quiet:
        out = _trilinear_forward(a._data, weight._data, b._data)
    out = record(TrilinearBackward0, out, (a, weight, b), ()).reshape(out_size)
    if bias is not None:
        out = out + bias
    return out


# -- pixel / channel shuffle ------------------------------------------------------------------


def _shuffle_array(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    oc = c // (r * r)
    y = x.reshape(*lead, oc, r, r, h, w)
    k = len(lead)
    y = y.transpose(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return y.reshape(*lead, oc, h * r, w * r)


def _unshuffle_array(x: np.ndarray, r: int) -> np.ndarray:
    *lead, c, h, w = x.shape
    oh, ow = h // r, w // r
    y = x.reshape(*lead, c, oh, r, ow, r)
    k = len(lead)
    y = y.transpose(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return y.reshape(*lead, c * r * r, oh, ow)


PixelShuffleBackward0 = defop(
    "PixelShuffleBackward0",
    params=("upscale_factor",),
    forward=_shuffle_array,
    vjp={
        "self": lambda g, upscale_factor: (
            _unshuffle_array(g, upscale_factor) if is_raw(g) else pixel_unshuffle(g, upscale_factor)
        )
    },
    jvp=LINEAR,
)

PixelUnshuffleBackward0 = defop(
    "PixelUnshuffleBackward0",
    params=("downscale_factor",),
    forward=_unshuffle_array,
    vjp={
        "self": lambda g, downscale_factor: (
            _shuffle_array(g, downscale_factor) if is_raw(g) else pixel_shuffle(g, downscale_factor)
        )
    },
    jvp=LINEAR,
)


def _check_shuffle_input(input, fname: str, factor: int, what: str) -> None:
    require_tensor(input, fname)
    if input.dim() < 3:
        raise RuntimeError(
            f"{fname} expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{fname} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor: int):
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels spread over an
    r x r block.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.pixel_shuffle(ember.arange(4.0).view(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    r = int(upscale_factor)
    _check_shuffle_input(input, "pixel_shuffle", r, "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    return record(PixelShuffleBackward0, _shuffle_array(input._data, r).copy(), (input,), (r,))


def pixel_unshuffle(input, downscale_factor: int):
    """The inverse of ``pixel_shuffle``: (*, C, H r, W r) -> (*, C r^2, H, W).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.pixel_unshuffle(ember.arange(4.0).view(1, 1, 2, 2), 2).flatten()
        tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    _check_shuffle_input(input, "pixel_unshuffle", r, "downscale_factor")
    h, w = input.shape[-2], input.shape[-1]
    if h % r:
        raise RuntimeError(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but "
            f"input.size(-2)={h} is not divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but "
            f"input.size(-1)={w} is not divisible by {r}"
        )
    return record(PixelUnshuffleBackward0, _unshuffle_array(input._data, r).copy(), (input,), (r,))


def _channel_shuffle_array(x: np.ndarray, groups: int) -> np.ndarray:
    n, c = x.shape[:2]
    rest = x.shape[2:]
    y = x.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)
    return y.reshape(x.shape)


ChannelShuffleBackward0 = defop(
    "ChannelShuffleBackward0",
    params=("groups",),
    forward=_channel_shuffle_array,
    vjp={
        "self": lambda g, groups: (
            _channel_shuffle_array(g, g.shape[1] // groups)
            if is_raw(g)
            else channel_shuffle(g, g.shape[1] // groups)
        )
    },
    jvp=LINEAR,
)


def channel_shuffle(input, groups: int):
    """Split the channels (dim 1) into ``groups`` and interleave them.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.channel_shuffle(ember.arange(4.0).view(1, 4, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    require_tensor(input, "channel_shuffle")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    out = _channel_shuffle_array(input._data, groups).copy()
    return record(ChannelShuffleBackward0, out, (input,), (groups,))


native_channel_shuffle = channel_shuffle


# -- channel-wise and alpha dropout ------------------------------------------------------------

_ALPHA = 1.7580993408473766


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape: tuple, p: float, dt: np.dtype) -> np.ndarray:
    """1 with probability ``1 - p``, else 0 (drawn from ember's global generator)."""
    return (_creation._rng(None).random(shape) >= p).astype(dt)


def _dropout_noise(shape: tuple, p: float, dt: np.dtype) -> Tensor:
    """Dropout's multiplier: 0 with probability ``p``, else ``1 / (1 - p)``."""
    return _wrap(_keep_mask(shape, p, dt) * np.asarray(1.0 / (1.0 - p), dtype=dt))


def _dropout_impl(input: Tensor, p: float, train: bool, feature: bool, alpha: bool, inplace):
    """torch's ``_dropout_impl``: a Bernoulli(1 - p) mask over elements or (N, C) channels;
    alpha dropout keeps SELU's mean and variance (``a * x * mask + b``)."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    a = input._data
    dt = a.dtype if a.dtype.kind in "fV" else np.dtype(np.float32)
    if p == 1:
        zero = _wrap(np.zeros((), dtype=dt))
        return input.mul_(zero) if inplace else input * zero
    shape = tuple(a.shape[:2]) + (1,) * (a.ndim - 2) if feature else a.shape
    if not alpha:
        noise = untracked_call(_dropout_noise, shape, p, dt)
        return input.mul_(noise) if inplace else input * noise
    keep = _keep_mask(shape, p, dt)
    scale = 1.0 / np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    b = _wrap(((keep - 1) * (_ALPHA * scale) + _ALPHA * scale * p).astype(dt))
    noise = _wrap((keep * scale).astype(dt))
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


def _feature_dropout(input, p, training, inplace, fname):
    require_tensor(input, fname)
    _check_p(p)
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p`` (the rest
    scaled by 1 / (1 - p)).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.dropout1d(ember.ones(2, 3), 0.5, training=False)
        tensor([[1., 1., 1.],
                [1., 1., 1.]])
    """
    require_tensor(input, "dropout1d")
    _check_p(p)
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    if d == 2:
        x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
        out = _dropout_impl(x, p, training, True, False, inplace)
        return out.squeeze_(0) if inplace else out.squeeze(0)
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, H, W) or (C, H, W) input with probability ``p``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.dropout2d(ember.ones(1, 1, 2, 2), 1.0).sum()
        tensor(0.)
    """
    require_tensor(input, "dropout2d")
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        _warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if d == 3:
        _warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.dropout3d(ember.ones(1, 1, 1, 2), 0.0).sum()
        tensor(2.)
    """
    require_tensor(input, "dropout3d")
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        _warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if d != 5:
        x = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
        out = _dropout_impl(x, p, training, True, False, inplace)
        return out.squeeze_(0) if inplace else out.squeeze(0)
    return _dropout_impl(input, p, training, True, False, inplace)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks: dropped elements become SELU's negative saturation value
    and an affine map keeps the mean and variance (identity unless ``training``).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.alpha_dropout(ember.ones(2), 0.5)
        tensor([1., 1.])
    """
    require_tensor(input, "alpha_dropout")
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout of whole channels (dim 1).

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> F.feature_alpha_dropout(ember.ones(1, 2), 0.5)
        tensor([[1., 1.]])
    """
    require_tensor(input, "feature_alpha_dropout")
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)
