"""Attention: ``scaled_dot_product_attention`` (one op) and ``multi_head_attention_forward``.

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

import numpy as np

from .. import _creation, _dtype
from .._aten._core import COMPOSITE, QUIET, defop, quiet_reset, quiet_set, record, require_tensor
from .._aten.elementwise import where
from .._aten.indexing import tril
from .._aten.linalg import baddbmm, bmm
from .._aten.reduction import softmax as _softmax
from .._aten.shape import cat
from .._dtype import cpp_name, from_numpy_dtype, scalar_name, to_numpy_dtype
from .._mode import autocast_active as _AUTOCAST
from .._mode import autocast_lower
from .._overrides import warn as _warn
from .._tensor import Tensor, broadcast_shapes
from ..autograd.recording import _capture, tangent_of
from ._conv import pad
from ._layers import _dropout_impl
from .attention import SDPBackend, _active

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_wrap = Tensor._wrap


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
    """``softmax(q k^T * scale + bias) v`` and the probabilities (a fully masked row is 0)."""
    if query.dtype.kind == "V":  # bfloat16: computed in float32, rounded once
        f = np.float32
        bias = attn_bias if attn_bias is None else attn_bias.astype(f)
        out, probs = _sdpa_forward(
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
    """The three gradients from the saved probabilities (one softmax backward)."""
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


# -- multi-head attention -----------------------------------------------------------------------


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as a float mask of 0 / -inf; float masks pass."""
    if mask is None:
        return None
    is_float = mask.dtype.is_floating_point
    if mask._data.dtype != np.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        _warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            stacklevel=3,
        )
    if not is_float:  # True = masked out here: the other way round from sdpa's masks
        mask = _additive_mask(mask, to_numpy_dtype(target_type), true_takes_part=False)
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                    )
        return False
    raise AssertionError(
        "query should be unbatched 2D or batched 3D tensor but received "
        f"{query.dim()}-D query tensor"
    )


def _in_projection_packed(q, k, v, w, b, linear):
    e = q.shape[-1]
    if k is v:
        if q is k:  # self-attention: one projection
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v, linear):
    eq, ek, ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, w, want in (
        ("query", w_q, (eq, eq)),
        ("key", w_k, (eq, ek)),
        ("value", w_v, (eq, ev)),
    ):
        if tuple(w.shape) != want:
            raise AssertionError(f"expecting {name} weights shape of {want}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and tuple(b.shape) != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight,
    out_proj_bias,
    training: bool = True,
    key_padding_mask=None,
    need_weights: bool = True,
    attn_mask=None,
    use_separate_proj_weight: bool = False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
):
    """The forward of :class:`nn.MultiheadAttention` on (L, N, E) / (L, E) inputs.

    Returns ``(attn_output, attn_weights)``; ``attn_weights`` is None unless
    ``need_weights`` (then averaged over heads unless ``average_attn_weights=False``).
    Bool masks are True where attention is *not* allowed.

    Example:
        >>> import ember
        >>> import ember.nn.functional as F
        >>> x = ember.ones(3, 1, 4)
        >>> w, b = ember.eye(4).repeat(3, 1), ember.zeros(12)
        >>> out, weights = F.multi_head_attention_forward(
        ...     x, x, x, 4, 2, w, b, None, None, False, 0.0, ember.eye(4), ember.zeros(4)
        ... )
        >>> out.shape, weights.shape
        (torch.Size([3, 1, 4]), torch.Size([1, 3, 3]))
    """
    # Deferred: nn.functional re-exports this function, so it cannot be imported at load.
    from . import functional as F

    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # sdpa applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias, F.linear)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(
            query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v,
            F.linear,
        )  # fmt: skip

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static(static_k, "static_k", bsz * num_heads, head_dim)
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static(static_v, "static_v", bsz * num_heads, head_dim)
        v = static_v

    if add_zero_attn:
        zeros = _wrap(np.zeros((bsz * num_heads, 1, head_dim), dtype=k._data.dtype))
        k = cat([k, zeros], dim=1)
        v = cat([v, zeros.to(v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        key_padding_mask = (
            key_padding_mask.view(bsz, 1, 1, src_len)
            .expand(-1, num_heads, -1, -1)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        e = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(e))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = bmm(q_scaled, k.transpose(-2, -1))
        weights = _softmax(weights, -1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[1])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[1])
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _check_static(t, name: str, n: int, head_dim: int) -> None:
    if t.shape[0] != n:
        raise AssertionError(f"expecting {name}.size(0) of {n}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
