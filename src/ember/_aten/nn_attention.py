"""Attention: ``scaled_dot_product_attention``, one op (``nn.functional``'s
``multi_head_attention_forward`` composes it with the projections).

``scaled_dot_product_attention`` is declared once with ``defop``, as torch's CPU flash kernel
is one node (``ScaledDotProductFlashAttentionForCpuBackward0``): its forward on arrays is a
max-subtracted softmax of the scaled scores (a fully masked row gives zeros, as torch's
kernels do) times the values, and it saves the attention probabilities for its one backward
rule. Its ``composite`` is the same computation with ember ops (matmul, masked_fill,
softmax), which gives exact double backward and forward mode.

Where torch 2.13 takes its "math" path instead (dropout, inputs that are not 4-D, a mask
that requires grad, heads that broadcast, value head size != query head size, ``sdpa_kernel``
without the flash backend), ember runs that composite directly, so the graph ends in the
node torch's does (``UnsafeViewBackward0``, ``MmBackward0``) and the mask gets a gradient.
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np

from .. import _creation, _dtype
from .._dtype import cpp_name, from_numpy_dtype, scalar_name
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._tensor import Tensor, broadcast_shapes
from ..autograd.recording import _capture, tangent_of
from ._core import (
    COMPOSITE,
    QUIET,
    defop,
    quiet_reset,
    quiet_set,
    record,
    require_tensor,
    with_eager_kernel,
)
from .elementwise import where
from .indexing import tril
from .nn_layers import _dropout_impl
from .reduction import softmax as _softmax

__all__ = ["scaled_dot_product_attention"]

_wrap = Tensor._wrap


class SDPBackend(IntEnum):
    """The attention kernels torch knows (values as torch numbers them)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# Kept here, read by the op: ``nn.attention.sdpa_kernel`` (their public home) sets them.
SDPBackend.__module__ = "ember.nn.attention"

_active: list = [list(SDPBackend)[1:]]  # every real kernel allowed


# -- the op on arrays -----------------------------------------------------------------------------


def _repeat_heads(a: np.ndarray, groups: int) -> np.ndarray:
    """Key/value heads repeated for grouped-query attention (``repeat_interleave`` on -3)."""
    return a if groups == 1 else np.repeat(a, groups, axis=-3)


def _fold_heads(g: np.ndarray, groups: int) -> np.ndarray:
    """The gradient of ``_repeat_heads``: each key/value head sums its query group."""
    if groups == 1:
        return g
    shape = g.shape
    return g.reshape(shape[:-3] + (shape[-3] // groups, groups) + shape[-2:]).sum(axis=-3)


def _sdpa_forward(query, key, value, attn_bias, scale, groups):
    """``softmax(q k^T * scale + bias) v`` and the probabilities (a fully masked row is 0):
    the compiler's C loop per head where a C compiler is present (checked against
    ``_sdpa_numpy`` on the first call per shape), else the NumPy code."""
    return with_eager_kernel("attention", _sdpa_numpy, query, key, value, attn_bias, scale, groups)


def _sdpa_numpy(query, key, value, attn_bias, scale, groups):
    """``_sdpa_forward`` in NumPy."""
    if query.dtype.kind == "V":  # bfloat16: computed in float32, rounded once
        f = np.float32
        bias = attn_bias if attn_bias is None else attn_bias.astype(f)
        out, probs = _sdpa_numpy(
            query.astype(f), key.astype(f), value.astype(f), bias, scale, groups
        )
        return out.astype(query.dtype), probs
    key = _repeat_heads(key, groups)
    value = _repeat_heads(value, groups)
    probs = np.matmul(query, np.swapaxes(key, -1, -2))
    probs *= scale
    if attn_bias is not None:
        probs += attn_bias
    peak = probs.max(axis=-1, keepdims=True)
    peak[np.isneginf(peak)] = 0.0  # a row masked everywhere: exp(-inf) = 0 below
    probs -= peak
    np.exp(probs, out=probs)
    total = probs.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    probs /= total
    return np.matmul(probs, value), probs


def _sdpa_vjp(g, query, key, value, probs, scale, groups, needs_input_grad):
    """The three gradients from the saved probabilities: the compiler's C loop per head
    where a C compiler is present (checked against ``_sdpa_vjp_numpy`` on first use), else
    the NumPy code."""
    return with_eager_kernel(
        "attention_grad", _sdpa_vjp_numpy, g, query, key, value, probs, scale, groups,
        needs_input_grad,
    )  # fmt: skip


def _sdpa_vjp_numpy(g, query, key, value, probs, scale, groups, needs_input_grad):
    """``_sdpa_vjp`` in NumPy (one softmax backward)."""
    gq = gk = gv = None
    if needs_input_grad[2]:
        gv = _fold_heads(np.matmul(np.swapaxes(probs, -1, -2), g), groups)
    if needs_input_grad[0] or needs_input_grad[1]:
        gp = np.matmul(g, np.swapaxes(_repeat_heads(value, groups), -1, -2))
        gp -= (gp * probs).sum(axis=-1, keepdims=True)
        gp *= probs
        gp *= scale
        if needs_input_grad[0]:
            gq = np.matmul(gp, _repeat_heads(key, groups))
        if needs_input_grad[1]:
            gk = _fold_heads(np.matmul(np.swapaxes(gp, -1, -2), query), groups)
    return gq, gk, gv


# -- the op with ember ops (torch's math path, and the composite) --------------------------------


def _safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim, with rows that are -inf everywhere giving 0 (not nan)."""
    if _capture:  # ember.compile: no branch on the values (other masks kill other rows)
        dead_t = scores.isneginf().all(-1, keepdim=True)
    else:
        dead = np.isneginf(scores._data).all(axis=-1, keepdims=True)
        if not dead.any():
            return _softmax(scores, -1)
        dead_t = _wrap(dead)
    return _softmax(scores.masked_fill(dead_t, 0.0), -1).masked_fill(dead_t, 0.0)


def _attention_math(query, key, value, mask, scale, groups, dropout_p=0.0):
    """torch's ``_scaled_dot_product_attention_math`` with ember ops: q and k each scaled by
    sqrt(scale), the additive ``mask`` (a Tensor or None), a safe softmax, dropout."""
    root = math.sqrt(abs(scale))
    if groups > 1:
        key = key.repeat_interleave(groups, dim=-3)
        value = value.repeat_interleave(groups, dim=-3)
    q = query * (-root if scale < 0 else root)
    scores = q.matmul(key.transpose(-2, -1) * root)
    if mask is not None:
        scores = scores + mask
    attn = _safe_softmax(scores)
    if dropout_p > 0.0:  # F.dropout's draw from ember's generator
        attn = _dropout_impl(attn, dropout_p, True, False, False, False)
    return attn.matmul(value)


def _sdpa_composite(query, key, value, attn_bias, scale, groups):
    mask = None if attn_bias is None else _wrap(attn_bias)
    return _attention_math(query, key, value, mask, scale, groups)


ScaledDotProductFlashAttentionForCpuBackward0 = defop(
    "ScaledDotProductFlashAttentionForCpuBackward0",
    inputs=("query", "key", "value"),
    params=("attn_bias", "scale", "groups"),
    saves=("probs",),
    forward=_sdpa_forward,
    vjp=_sdpa_vjp,
    composite=_sdpa_composite,
    jvp=COMPOSITE,
)


# -- the public function ----------------------------------------------------------------------


def _check_sdpa(query, key, value, attn_mask, dropout_p) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        require_tensor(t, "scaled_dot_product_attention", name)
    if attn_mask is not None:
        require_tensor(attn_mask, "scaled_dot_product_attention", "attn_mask")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    dt = query._data.dtype
    if key._data.dtype != dt or value._data.dtype != dt:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{cpp_name(dt)} key.dtype: {cpp_name(key._data.dtype)} and value.dtype: "
            f"{cpp_name(value._data.dtype)} instead."
        )
    if dt.kind not in "fV":
        raise RuntimeError(f"expected scalar type Float but found {scalar_name(dt)}")
    if attn_mask is not None:
        mdt = attn_mask._data.dtype
        if mdt != np.bool_ and mdt != np.float32 and mdt != dt:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {cpp_name(mdt)} and  query.dtype: {cpp_name(dt)} instead."
            )
        if attn_mask.dim() < 2:
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got -2)"
            )


def _takes_flash_path(query, key, value, attn_mask, dropout_p, groups) -> bool:
    """Whether torch 2.13 runs its CPU flash kernel (one node) rather than the math path."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4 or dropout_p > 0.0:
        return False
    if SDPBackend.FLASH_ATTENTION not in _active[-1]:
        return False
    qs, ks, vs = query.shape, key.shape, value.shape
    if qs[-1] != ks[-1] or qs[-1] != vs[-1] or ks[2] != vs[2] or min(qs[2], ks[2]) == 0:
        return False
    if not qs[0] == ks[0] == vs[0] or ks[1] != vs[1] or qs[1] != ks[1] * groups:
        return False
    if attn_mask is None:
        return True
    # A mask that takes a gradient (or carries a tangent) is an input of the math path.
    return (
        attn_mask.dim() in (2, 4) and not attn_mask.requires_grad and tangent_of(attn_mask) is None
    )


def _flash_bias(attn_mask, is_causal: bool, shape: tuple, dtype):
    """The additive mask (an array, or None) of ``attn_mask`` and ``is_causal`` together."""
    bias = None
    if attn_mask is not None:
        broadcast_shapes(shape, attn_mask.shape)  # torch's error for a mask of the wrong shape
        # (made by ops, so that ember.compile captures the mask as an input, not a constant)
        bias = _additive_mask(attn_mask, dtype)._data
    if is_causal:
        causal = np.where(
            np.tri(shape[-2], shape[-1], dtype=bool), dtype.type(0), dtype.type(-np.inf)
        )
        bias = causal if bias is None else bias + causal
    return bias


def _additive_mask(mask: Tensor, dtype: np.dtype, true_takes_part: bool = True) -> Tensor:
    """``mask`` as scores to add in ``dtype``: a bool mask as 0 where its elements take
    part (True, or False with ``true_takes_part=False``) and -inf elsewhere."""
    if mask._data.dtype != np.bool_:
        return mask if mask._data.dtype == dtype else mask.to(from_numpy_dtype(dtype))
    dt = from_numpy_dtype(dtype)
    zero, minus_inf = _creation.zeros((), dtype=dt), _creation.full((), -math.inf, dtype=dt)
    return where(mask, zero, minus_inf) if true_takes_part else where(mask, minus_inf, zero)


def _math_mask(attn_mask, is_causal: bool, query: Tensor, key: Tensor):
    """torch's math path mask: bool masks become 0 / -inf in the query's dtype."""
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                "is_causal=True"
            )
        ones = _creation.ones((query.shape[-2], key.shape[-2]), dtype=_dtype.bool)
        attn_mask = tril(ones)
    if attn_mask is None or attn_mask._data.dtype != np.bool_:
        return attn_mask
    return _additive_mask(attn_mask, query._data.dtype)


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale=None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dims.

    ``attn_mask`` is bool (True takes part) or float (added to the scores); ``is_causal``
    masks out the keys after each query (top-left aligned). ``scale`` defaults to
    ``1 / sqrt(E)``; ``enable_gqa`` repeats the key/value heads (dim -3) over groups of
    query heads. A row masked everywhere gives zeros. Dropout draws from ember's generator.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> q = ember.ones(1, 1, 2, 4)
        >>> v = ember.tensor([[[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]]]])
        >>> F.scaled_dot_product_attention(q, q, v, is_causal=True)
        tensor([[[[1.0000, 0.0000, 0.0000, 0.0000],
                  [0.5000, 1.0000, 0.0000, 0.0000]]]])
    """
    if _AUTOCAST[0]:  # CPU autocast: torch's lower-precision list
        query, key, value = autocast_lower(query, key, value)
    dropout_p = float(dropout_p)
    _check_sdpa(query, key, value, attn_mask, dropout_p)
    groups = 1
    if enable_gqa and query.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk != hv or hq % hk != 0:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
        groups = hq // hk
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    if not _takes_flash_path(query, key, value, attn_mask, dropout_p, groups):
        mask = _math_mask(attn_mask, is_causal, query, key)
        return _attention_math(query, key, value, mask, scale, groups, dropout_p)
    dt = query._data.dtype
    b, h, n = query.shape[:3]
    bias = _flash_bias(attn_mask, is_causal, (b, h, n, key.shape[2]), dt)
    token = quiet_set(QUIET)
    try:
        out, probs = _sdpa_forward(query._data, key._data, value._data, bias, scale, groups)
    finally:
        quiet_reset(token)
    return record(
        ScaledDotProductFlashAttentionForCpuBackward0,
        out,
        (query, key, value),
        (bias, scale, groups),
        (probs,),
    )
